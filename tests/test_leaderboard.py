"""eee leaderboard: per protocol, intervals with their source, Holm rank ranges, pass@k, and
AlpacaEval's published numbers from the store's per-item records; eee compare across judges."""

from __future__ import annotations

import copy
import csv
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from analysis_store import place, uuid_of
from conftest import EXAMPLES, PROJECT, make_store, reference_or_none
from eee.commands import compare, leaderboard
from eee.commands.convert import main as convert
from eee.stats.passk import pass_at_k

ALPACA_KEYS = ("win_rate", "standard_error", "n_wins", "n_wins_base", "n_draws", "n_total", "discrete_win_rate")
METRIC = "alpaca_eval.win_rate.weighted_alpaca_eval_gpt4_turbo"


def _json(capsys: pytest.CaptureFixture[str], args: list[str], code: int = 0) -> dict[str, Any]:
    capsys.readouterr()  # what came before
    assert leaderboard.main(args) == code, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def alpaca_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the 18 shared AlpacaEval 2.0 runs, converted with their per-instruction
    sidecars (in git: the store's threshold raised as the project's own store does)."""
    results = reference_or_none("per-item", "alpaca_eval", "results")
    if results is None:
        pytest.skip("the AlpacaEval reference judgments are not available")
    store = make_store(tmp_path_factory.mktemp("alpaca"), hooks=False, sidecar_git_max_bytes=8 * 1024 * 1024)
    assert convert(["alpaca_eval", str(results), "--include-samples", "--no-stage", "--store", str(store)]) == 2
    return store


def test_the_leaderboard_reproduces_alpaca_eval_s_published_numbers(
    alpaca_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    board_csv = reference_or_none("per-item", "alpaca_eval", "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv")
    assert board_csv is not None
    published = {row[""]: row for row in csv.DictReader(board_csv.open())}
    args = ["--store", str(alpaca_store), "--benchmark", "alpaca_eval_2", "--metric", METRIC, "--format", "json"]
    report = _json(capsys, args)
    (board,) = report["leaderboards"]
    assert len(board["entries"]) == 18 and board["protocol"]["judge"].startswith("weighted_alpaca_eval_gpt4_turbo")
    checked = 0
    for entry in board["entries"]:
        name = entry["model_id"].split("/", 1)[1]
        if name not in published:  # text_davinci_003: in the results, not on this leaderboard
            continue
        ours, theirs = entry["alpaca_eval"], published[name]
        for key in ALPACA_KEYS:
            assert ours[key] == pytest.approx(float(theirs[key]), abs=1e-6), (name, key)
        assert entry["uncertainty_source"] == "record" and entry["items_agree"] is True
        checked += 1
    assert checked == 17
    # the same from the catalogue the pipeline writes
    assert leaderboard.main(["--store", str(alpaca_store), "--benchmark", "alpaca_eval_2"]) == 0  # rich text
    text = capsys.readouterr().out
    assert "sail-sg/NullModel" in text and "win rate" in text and "clusters" in text
    from eee.catalog.table import CATALOG_DIR, write_catalog

    write_catalog(alpaca_store, alpaca_store / CATALOG_DIR)
    again = _json(capsys, [*args, "--catalog", str(alpaca_store / CATALOG_DIR)])
    assert [e["alpaca_eval"] for e in again["leaderboards"][0]["entries"]] == [
        e["alpaca_eval"] for e in board["entries"]
    ]
    # every leaderboard entry has its rank range, in the board's own order
    ranks = [e["rank"] for e in board["entries"]]
    assert ranks == sorted(ranks) and all(
        e["rank_range"][0] <= e["rank"] <= e["rank_range"][1] for e in board["entries"]
    )
    assert board["entries"][0]["model_id"] == "sail-sg/NullModel" and board["entries"][0]["rank_text"] == "1"
    assert "cluster-robust over 5 clusters (4 df)" in board["pairs"]["method"]


def _matches_the_published_csv(board: dict[str, Any]) -> int:
    board_csv = reference_or_none("per-item", "alpaca_eval", "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv")
    if board_csv is None:
        pytest.skip("the published AlpacaEval leaderboard is not available")
    published = {row[""]: row for row in csv.DictReader(board_csv.open())}
    checked = 0
    for entry in board["entries"]:
        theirs = published.get(entry["model_id"].split("/", 1)[1])
        if theirs is None:
            continue
        for key in ALPACA_KEYS:
            assert entry["alpaca_eval"][key] == pytest.approx(float(theirs[key]), abs=1e-6), (entry["model_id"], key)
        checked += 1
    return checked


def test_the_store_s_own_alpaca_eval_records_reproduce_the_published_leaderboard(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What a fresh clone holds: the 18 records and their sidecars in git, nothing else needed."""
    if not (PROJECT / "data" / "alpaca_eval_2").is_dir():
        pytest.skip("this checkout holds no AlpacaEval records")
    report = _json(
        capsys, ["--store", str(PROJECT), "--benchmark", "alpaca_eval_2", "--metric", METRIC, "--format", "json"]
    )
    (board,) = report["leaderboards"]
    assert len(board["entries"]) == 18 and _matches_the_published_csv(board) == 17


def test_every_catalogue_row_of_the_store_has_a_protocol_and_a_labelled_uncertainty(tmp_path: Path) -> None:
    import duckdb

    from eee.catalog.table import write_catalog
    from eee.catalog.uncertainty import SOURCES

    write_catalog(PROJECT, tmp_path / "catalog")
    rows, missing, sources = duckdb.sql(
        f"SELECT count(*), count(*) FILTER (WHERE protocol_id IS NULL OR uncertainty_source IS NULL), "
        f"list(DISTINCT uncertainty_source) FROM read_parquet('{tmp_path}/catalog/benchmark=*/*.parquet')"
    ).fetchall()[0]
    assert rows > 8000 and missing == 0 and set(sources) <= set(SOURCES)
    # an interval only where a source gives one, and never one without its source
    bad = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{tmp_path}/catalog/benchmark=*/*.parquet') "
        "WHERE (uncertainty_source = 'none') <> (se IS NULL AND ci_low IS NULL)"
    ).fetchall()[0][0]
    assert bad == 0


def test_compare_pairs_by_instruction_clustered_by_source(
    alpaca_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from eee.catalog.table import record_paths

    uuid = {rel.split("/")[3]: u for u, rel in record_paths(alpaca_store)}
    args = ["--store", str(alpaca_store), uuid["gpt-3.5-turbo-1106_concise"], uuid["gpt-3.5-turbo-1106"]]
    assert compare.main([*args, "--margin", "2", "--format", "json"]) == 0
    (res,) = json.loads(capsys.readouterr().out)["samples"]["results"]
    den = res["denominators"]
    assert (den["shared"], den["valid_shared"], den["only_a"], den["only_b"]) == (805, 805, 0, 0)
    assert res["bootstrap"]["clusters"] == 5 and "cluster bootstrap" in res["bootstrap"]["method"]
    assert res["score_scale"] == 100.0 and res["difference"] == pytest.approx(
        (7.41586497762733 - 9.177964561962735) / 100
    )
    verdict = res["non_inferiority"]
    low, high = verdict["difference_better_is_positive"]
    assert low == pytest.approx(res["difference_ci"][0] * 100) and verdict["margin"] == 2.0
    assert verdict["verdict"] == ("non-inferior" if low > -2 else "inconclusive" if high > -2 else "inferior")
    # alpaca-7b_concise skipped an instruction: paired by the instruction, never by position
    assert (
        compare.main(["--store", str(alpaca_store), uuid["alpaca-7b_concise"], uuid["alpaca-7b"], "--format", "json"])
        == 0
    )
    (res,) = json.loads(capsys.readouterr().out)["samples"]["results"]
    assert (res["denominators"]["shared"], res["only_b"]) == (804, 1)


def _two_judges(tmp_path: Path) -> Path:
    """The example leaderboard converted twice: as judged by the weighted GPT-4 Turbo annotator
    and, the same file named after another annotator, by alpaca_eval_gpt4_turbo_fn."""
    store = make_store(tmp_path, hooks=False)
    board = EXAMPLES / "harness" / "alpaca_eval" / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
    other = tmp_path / "alpaca_eval_gpt4_turbo_fn_leaderboard.csv"
    shutil.copyfile(board, other)
    for path in (board, other):
        assert (
            convert(["alpaca_eval", str(path), "--exclude", "acme-chat-7b", "--no-stage", "--store", str(store)]) == 0
        )
    return store


def test_different_judges_never_share_a_protocol_and_compare_names_the_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _two_judges(tmp_path)
    from eee.catalog.table import record_paths

    claude = sorted(u for u, rel in record_paths(store) if "claude-3-opus" in rel)
    assert len(claude) == 2
    capsys.readouterr()
    assert compare.main(["--store", str(store), *claude]) == 1
    err = capsys.readouterr().err
    assert "different protocols" in err and "judge: " in err  # the judge named, with both values
    assert "alpaca_eval_gpt4_turbo_fn (openai/gpt-4-1106-preview, temperature 0)" in err
    assert "weighted_alpaca_eval_gpt4_turbo (openai/gpt-4-1106-preview, temperature 1)" in err
    assert compare.main(["--store", str(store), *claude, "--across-protocols", "--format", "json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert {d["field"] for c in report["protocols"] for d in c["differing"]} == {"metric", "judge"}
    boards = _json(
        capsys, ["--store", str(store), "--benchmark", "alpaca_eval_2", "--metric", "win_rate", "--format", "json"]
    )
    assert len(boards["leaderboards"]) == 2  # one per judge, never mixed
    assert len({b["protocol_id"] for b in boards["leaderboards"]}) == 2
    assert all(len(b["entries"]) == 3 for b in boards["leaderboards"])
    # one protocol picked by the start of its id
    pid = boards["leaderboards"][0]["protocol_id"]
    one = _json(
        capsys, ["--store", str(store), "--benchmark", "alpaca_eval_2", "--protocol", pid[:6], "--format", "json"]
    )
    assert [b["protocol_id"] for b in one["leaderboards"]] == [pid]
    assert leaderboard.main(["--store", str(store), "--benchmark", "alpaca_eval_2", "--protocol", "ffffffffff"]) == 1
    assert "no active result of alpaca_eval_2 with protocol ffffffffff" in capsys.readouterr().err
    assert leaderboard.main(["--store", str(store), "--benchmark", "nope"]) == 1
    assert "no benchmark 'nope'" in capsys.readouterr().err


def test_rank_ranges_order_what_the_items_order_and_no_more(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(4)
    store = tmp_path / "store"
    p = {"lab/best": 0.9, "lab/tie-a": 0.6, "lab/tie-b": 0.6, "lab/worst": 0.2}
    base = rng.random(600)
    for n, (model, rate) in enumerate(p.items(), start=1):
        place(store, uuid_of(n), model, "helm", (base < rate).astype(float).tolist())
    place(store, uuid_of(9), "lab/retracted", "helm", [1.0] * 600)
    from eee.governance.events import make_event, write

    write(store, make_event("retract", uuid_of(9), "bad run", {"name": "M", "email": "m@example.org"}))
    report = _json(capsys, ["--store", str(store), "--benchmark", "qa-bench", "--format", "json"])
    (board,) = report["leaderboards"]
    got = {e["model_id"]: e["rank_text"] for e in board["entries"]}
    # tie-a and tie-b answer the very same items: nothing tells them apart
    assert got == {"lab/best": "1", "lab/tie-a": "2-3", "lab/tie-b": "2-3", "lab/worst": "4"}
    assert board["pairs"]["tested"] == 6 and board["pairs"]["paired"] == 6
    assert report["left_out"] == [{"record_uuid": uuid_of(9), "lifecycle": "retracted"}]  # not active: not ranked
    assert all(e["uncertainty_source"] == "items" and e["ci_low"] < e["score"] < e["ci_high"] for e in board["entries"])


def _epochs_log(tmp_path: Path) -> tuple[Path, dict[int, list[int]]]:
    """A real Inspect log (the reference's ARC run of Claude Sonnet) rerun as five epochs: each
    sample five times, passing as the pattern says."""
    source = reference_or_none("harness-logs", "inspect", "data_arc_sonnet.json")
    if source is None:
        pytest.skip("the reference Inspect logs are not available")
    log = json.loads(source.read_text())
    pattern = {1: [1, 0, 1, 0, 0], 2: [1, 1, 1, 1, 1], 3: [0, 0, 0, 0, 0], 4: [1, 0, 0, 0, 0], 5: [0, 1, 1, 1, 0]}
    samples = []
    for epoch in range(1, 6):
        for sample in log["samples"]:
            again = copy.deepcopy(sample)
            again["epoch"] = epoch
            again["scores"]["choice"]["value"] = "C" if pattern[sample["id"]][epoch - 1] else "I"
            samples.append(again)
    log["samples"] = samples
    log["eval"]["config"]["epochs"] = 5
    path = tmp_path / "arc_five_epochs.json"
    path.write_text(json.dumps(log))
    return path, pattern


def test_pass_at_k_per_item_on_repeated_samples_of_a_real_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, pattern = _epochs_log(tmp_path)
    store = make_store(tmp_path, hooks=False)
    assert convert(["inspect", str(log), "--include-samples", "--no-stage", "--store", str(store)]) == 0
    from eee.catalog.items import read_items
    from eee.catalog.table import CATALOG_DIR, write_catalog

    write_catalog(store, store / CATALOG_DIR)
    items = read_items(store / CATALOG_DIR / "items").to_pylist()
    assert sorted({r["sample_index"] for r in items}) == [0, 1, 2, 3, 4] and len(items) == 25
    for k in (1, 2, 3):
        report = _json(
            capsys, ["--store", str(store), "--benchmark", "ai2_arc", "--pass-at", str(k), "--format", "json"]
        )
        (entry,) = report["leaderboards"][0]["entries"]
        expected = [pass_at_k(5, sum(p), k) for p in pattern.values()]
        assert entry["score"] == pytest.approx(sum(expected) / 5), k
        assert entry["n_items"] == 5 and entry["uncertainty_method"].startswith(f"pass@{k} per item")
        assert 0 <= entry["ci_low"] <= entry["score"] <= entry["ci_high"] <= 1
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)  # the first sample: 2 correct of 5
    one = _json(capsys, ["--store", str(store), "--benchmark", "ai2_arc", "--pass-at", "1", "--format", "json"])
    assert one["leaderboards"][0]["entries"][0]["score"] == pytest.approx(sum(map(sum, pattern.values())) / 25)  # c/n
    assert leaderboard.main(["--store", str(store), "--benchmark", "ai2_arc", "--pass-at", "6"]) == 1
    assert "no active result of ai2_arc" in capsys.readouterr().err  # five samples cannot give pass@6


def test_the_analysis_stage_writes_leaderboards_and_the_site_shows_them_escaped(tmp_path: Path) -> None:
    from eee.analysis.pages import write_pages
    from eee.site.cataloguepages import leaderboard_file, leaderboards_html
    from eee.site.context import SiteContext

    store = tmp_path / "store"
    place(store, uuid_of(1), "lab/a", "helm", [1, 0, 1, 1] * 10)
    place(store, uuid_of(2), "lab/b", "helm", [0, 0, 1, 0] * 10)
    doc_path = store / "data" / "qa-bench" / "lab" / "b" / f"{uuid_of(2)}.json"
    write_pages(store, store / "build" / "analysis")
    saved = json.loads((store / leaderboard_file("qa-bench")).read_text())
    assert [e["model_id"] for e in saved["leaderboards"][0]["entries"]] == ["lab/a", "lab/b"]
    # what the site writes of it is data: a hostile value is escaped
    saved["leaderboards"][0]["entries"][0]["model_id"] = "<script>alert(1)</script>"
    saved["leaderboards"][0]["protocol"]["evaluation"] = '"><img src=x onerror=alert(1)>'
    (store / leaderboard_file("qa-bench")).write_text(json.dumps(saved))
    from eee.store.identity import Registry

    ctx = SiteContext(store, Registry(), record_pages={uuid_of(1)})
    html = leaderboards_html(ctx, "qa-bench", "catalogue/benchmarks/qa-bench/index.md")
    assert f'<a href="../../records/{uuid_of(1)}/"><code>{uuid_of(1)[:8]}</code></a>' in html  # a page the site made
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img" not in html and "&lt;img src=x" in html
    assert "paired t tests on the shared items" in html and doc_path.exists()
    assert "<td>40</td>" in html and "built-in method" not in html  # each entry's items, as a number
