"""eee compare, eee irt and the analysis pages: statistics on hand-checkable data, a
simulated Rasch data set, and real sidecars (the store's when pulled, the reference's)."""

from __future__ import annotations

import json
import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import numpy as np
import pytest
from scipy.stats import spearmanr

from analysis_store import place, uuid_of
from conftest import PROJECT, reference
from eee.analysis.compare import bootstrap_mean_ci, compare_samples, mcnemar_exact
from eee.analysis.irt import fit_rasch, simulate
from eee.analysis.samples import ResultSamples

# -- statistics by hand ---------------------------------------------------------------------


def _hand_mcnemar(b: int, c: int) -> float:
    n = b + c
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def test_exact_mcnemar_on_a_2x2_table() -> None:
    # 2x2 table: both right 40, only A right 10, only B right 2, both wrong 48
    # p = 2 * P(X <= 2), X ~ Bin(12, 1/2) = 2 * (1 + 12 + 66) / 4096
    assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096, abs=1e-12)
    assert mcnemar_exact(2, 10) == pytest.approx(158 / 4096, abs=1e-12)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    for b, c in ((0, 2), (3, 7), (1, 9), (25, 40)):
        assert mcnemar_exact(b, c) == pytest.approx(_hand_mcnemar(b, c), rel=1e-9)
    from scipy.stats import binomtest

    for b, c in ((600, 500), (5000, 5200), (20000, 20400)):  # the log-space sum beyond n = 1,000
        assert mcnemar_exact(b, c) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-6)


def _samples(key: str, ids: list[str], scores: list[float]) -> ResultSamples:
    rs = ResultSamples(key)
    rs.ids = ids
    rs.hashes = [None] * len(ids)
    rs.score = np.asarray(scores, dtype=float)
    rs.correct = np.asarray(scores, dtype=float)
    return rs


def test_compare_samples_matches_by_id_and_counts_the_table() -> None:
    a = _samples("r", ["q1", "q2", "q3", "q4", "q5", "only-a"], [1, 1, 0, 0, 1, 1])
    b = _samples("r", ["q5", "q4", "q3", "q2", "q1", "only-b"], [1, 0, 1, 0, 1, 0])
    # matched: q1 (1,1) q2 (1,0) q3 (0,1) q4 (0,0) q5 (1,1)
    r = compare_samples(a, b)
    assert (r["overlap"], r["only_a"], r["only_b"], r["matched_by"]) == (5, 1, 1, "sample_id")
    t = r["binary"]
    assert (t["both_correct"], t["only_a_correct"], t["only_b_correct"], t["both_wrong"]) == (2, 1, 1, 1)
    assert t["agreement"] == pytest.approx(3 / 5)
    assert t["mcnemar_exact_p"] == 1.0
    assert r["mean_a"] == pytest.approx(0.6) and r["mean_b"] == pytest.approx(0.6)
    assert r["difference"] == pytest.approx(0.0)
    assert {s["sample_id"] for s in r["disagreeing_samples"]} == {"q2", "q3"}
    lo, hi = r["difference_ci"]
    assert lo <= 0.0 <= hi


def test_compare_samples_continuous_and_by_hash() -> None:
    a = _samples("r", ["x1", "x2", "x3"], [0.2, 0.5, 0.9])
    b = _samples("s", ["y1", "y2", "y3"], [0.2, 0.4, 0.9])
    b.hashes, a.hashes = ["h1", "h2", "h3"], ["h1", "h2", "h3"]
    r = compare_samples(a, b)
    assert r["matched_by"] == "sample_hash" and r["overlap"] == 3
    assert "binary" not in r and r["continuous"]["agreement"] == pytest.approx(2 / 3)
    assert r["continuous"]["mean_absolute_difference"] == pytest.approx(0.1 / 3)
    assert [s["sample_id"] for s in r["disagreeing_samples"]] == ["x2"]


def test_bootstrap_is_reproducible_and_the_fast_path_agrees_with_resampling() -> None:
    rng = np.random.default_rng(1)
    a = (rng.random(4000) < 0.7).astype(float)
    b = (rng.random(4000) < 0.6).astype(float)
    d = a - b
    fast = bootstrap_mean_ci(d)
    assert fast == bootstrap_mean_ci(d)  # fixed seed
    slow = bootstrap_mean_ci(d, max_values=0)  # plain resampling of indices
    assert fast[0] == pytest.approx(slow[0], abs=0.006) and fast[1] == pytest.approx(slow[1], abs=0.006)
    # the normal approximation's interval, for scale
    se = d.std(ddof=1) / math.sqrt(len(d))
    assert fast[0] == pytest.approx(d.mean() - 1.96 * se, abs=0.006)
    assert fast[1] == pytest.approx(d.mean() + 1.96 * se, abs=0.006)


# -- Rasch ------------------------------------------------------------------------------------


def test_rasch_recovers_simulated_parameters() -> None:
    y, theta, b = simulate(50, 500, seed=7)
    fit = fit_rasch(y)
    assert fit.converged
    assert spearmanr(fit.ability, theta)[0] >= 0.95
    assert spearmanr(fit.difficulty, b)[0] >= 0.9
    assert abs(fit.difficulty.mean()) < 1e-9  # centred
    # standard errors: about 1 / sqrt(items * p(1-p)) for abilities, about 1/sqrt(50/5) for items
    assert 0.08 < float(np.median(fit.ability_se)) < 0.15
    assert 0.25 < float(np.median(fit.difficulty_se)) < 0.5
    # most estimates within 2 standard errors of the truth (after aligning the origin)
    err = (fit.ability - fit.ability.mean()) - (theta - theta.mean())
    assert np.mean(np.abs(err) < 2 * fit.ability_se) > 0.85


def test_rasch_flags_an_item_answered_against_the_grain_and_copes_with_extremes() -> None:
    y, theta, _ = simulate(60, 200, seed=3)
    order = np.argsort(theta)
    y[:, 0] = 0.0
    y[order[:20], 0] = 1.0  # the 20 weakest models solve it, no one else does
    y[:, 1] = 1.0  # every model solves item 1
    y[:, 2] = 0.0  # no model solves item 2
    y[5, 3:50] = np.nan  # missing responses
    fit = fit_rasch(y)
    assert fit.converged and np.isfinite(fit.difficulty).all()
    assert int(np.nanargmax(fit.item_outfit)) == 0 and fit.item_outfit[0] > 2
    assert fit.difficulty[1] < fit.difficulty.min() + 1e-9 or fit.difficulty[1] < -3
    assert fit.difficulty[2] > 3
    assert fit.person_n[5] == 200 - 47


# -- the commands on a store ---------------------------------------------------------------


def _sim_store(tmp_path: Path, models: int = 6, items: int = 80, seed: int = 0) -> tuple[Path, np.ndarray]:
    y, theta, _ = simulate(models, items, seed=seed)
    store = tmp_path / "store"
    for m in range(models):
        place(store, uuid_of(m + 1), f"lab{m}/model-{m}", "lm_eval" if m % 2 else "helm", list(y[m]))
    return store, theta


def test_compare_two_records_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.commands import compare

    store = tmp_path / "store"
    place(store, uuid_of(1), "acme/widget-7b", "helm", [1, 1, 0, 0, 1, 1], ids=["a", "b", "c", "d", "e", "f"])
    place(store, uuid_of(2), "acme/widget-7b", "lm_eval", [1, 0, 1, 0, 1], ids=["a", "b", "c", "d", "e"])
    assert compare.main(["--store", str(store), uuid_of(1)[:8], uuid_of(2)]) == 0
    out = capsys.readouterr().out
    assert "6 and 5 samples, 5 in common (by sample_id), 1 only in A, 0 only in B" in out
    assert "both right 2, only A 1, only B 1, both wrong 1; exact McNemar p = 1" in out
    assert "2 samples disagree" in out and "b: A 1, B 0" in out
    assert compare.main(["--store", str(store), uuid_of(1), uuid_of(2), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    (res,) = rep["samples"]["results"]
    assert res["binary"]["only_a_correct"] == 1 and res["overlap"] == 5
    assert rep["samples"]["paired"] == "same result id"
    assert rep["aggregates"][0]["paired_by"] == "evaluation_result_id"
    assert rep["a"]["eval_library"] == "helm" and rep["b"]["sidecar"] == "present"


def test_compare_refuses_what_it_cannot_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.commands import compare

    store = tmp_path / "store"
    place(store, "abcdef01-0000-4000-8000-000000000001", "acme/a", "helm", [1, 0])
    place(store, "abcdef01-1111-4000-8000-000000000002", "acme/b", "helm", [1, 0])
    place(store, uuid_of(9), "acme/c", "helm", [1, 0], benchmark="other")
    assert compare.main(["--store", str(store), "abcdef01", uuid_of(9)]) == 1
    err = capsys.readouterr().err
    assert "abcdef01 is the start of 2 records" in err and "hint: give more characters" in err
    assert compare.main(["--store", str(store), "abc", uuid_of(9)]) == 1
    assert "prefix of at least 8 hex digits" in capsys.readouterr().err
    assert compare.main(["--store", str(store), "abcdef01-0", uuid_of(9)]) == 1
    assert "different benchmarks" in capsys.readouterr().err
    assert compare.main(["--store", str(store), "ffffffff", uuid_of(9)]) == 1
    assert "no record in the store starts with ffffffff" in capsys.readouterr().err
    for usage in ([uuid_of(9)], ["--model", "acme/a"], ["--model", "acme/a", "--benchmark", "b", uuid_of(9)]):
        with pytest.raises(SystemExit) as exit_:
            compare.main(["--store", str(store), *usage])
        assert exit_.value.code == 64


def test_compare_without_sidecars_says_so_and_compares_aggregates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from eee.commands import compare

    store = tmp_path / "store"
    place(store, uuid_of(1), "acme/widget-7b", "helm", [1, 1, 0, 1])
    place(store, uuid_of(2), "acme/widget-7b", "lm_eval", None)
    place(store, uuid_of(3), "acme/widget-7b", "inspect_ai", [1, 0, 0, 0], pulled=False)
    assert compare.main(["--store", str(store), uuid_of(1), uuid_of(2)]) == 2
    out = capsys.readouterr().out
    assert "the record has no per-sample sidecar" in out and "compared on the aggregate scores only" in out
    assert "qa:exact_match: 0.7500 vs 0.5000  (normalised difference +0.2500)" in out
    assert compare.main(["--store", str(store), uuid_of(1), uuid_of(3), "--format", "json"]) == 2
    rep = json.loads(capsys.readouterr().out)
    assert rep["samples"] is None and rep["b"]["sidecar"] == "not pulled"
    assert any("not pulled" in n for n in rep["notes"])


def test_compare_every_record_of_a_model_on_a_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.commands import compare
    from eee.governance.events import make_event, write

    store = tmp_path / "store"
    place(store, uuid_of(1), "acme/widget-7b", "helm", [1, 1, 0, 1])
    place(store, uuid_of(2), "acme/widget-7b", "lm_eval", [1, 0, 0, 1])
    place(store, uuid_of(3), "acme/widget-7b", "inspect_ai", [0, 0, 0, 1])
    place(store, uuid_of(4), "zeta/other", "helm", [0, 0, 0, 1])
    args = ["--store", str(store), "--model", "acme/widget-7b", "--benchmark", "qa-bench", "--format", "json"]
    assert compare.main(args) == 0
    rep = json.loads(capsys.readouterr().out)
    assert len(rep["records"]) == 3 and len(rep["comparisons"]) == 3
    write(store, make_event("retract", uuid_of(3), "bad run", {"name": "M", "email": "m@example.org"}))
    assert compare.main(args) == 0
    assert len(json.loads(capsys.readouterr().out)["comparisons"]) == 1  # active records only
    assert compare.main([*args, "--all"]) == 0
    assert len(json.loads(capsys.readouterr().out)["comparisons"]) == 3
    assert compare.main(["--store", str(store), "--model", "zeta/other", "--benchmark", "qa-bench"]) == 1
    assert "nothing to compare" in capsys.readouterr().err


def test_irt_command_writes_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.commands import irt

    store, theta = _sim_store(tmp_path, models=8, items=150, seed=2)
    assert irt.main(["--store", str(store), "--benchmark", "qa-bench", "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["records"] == 8 and s["items"] == 150 and s["fit"]["converged"]
    folder = store / "build" / "analysis" / "irt" / "qa-bench"
    abilities = duckdb.sql(f"SELECT record_uuid, ability, se FROM '{folder}/abilities.parquet'").fetchall()
    est = {u: a for u, a, _ in abilities}
    truth = {uuid_of(m + 1): theta[m] for m in range(8)}
    assert spearmanr([est[u] for u in truth], list(truth.values()))[0] > 0.8
    ((n, worst),) = duckdb.sql(f"SELECT count(*), max(outfit) FROM '{folder}/items.parquet'").fetchall()
    assert n == 150 and worst >= 1
    assert irt.main(["--store", str(store), "--benchmark", "qa-bench", "--dry-run"]) == 0
    assert "worst-fitting items" in capsys.readouterr().out
    assert irt.main(["--store", str(store), "--benchmark", "missing"]) == 1
    assert "no benchmark 'missing'" in capsys.readouterr().err


def test_irt_needs_two_records_with_binary_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.commands import irt

    store = tmp_path / "store"
    place(store, uuid_of(1), "acme/a", "helm", [1, 0, 1])
    place(store, uuid_of(2), "acme/b", "helm", [1, 0, 1], pulled=False)
    assert irt.main(["--store", str(store), "--benchmark", "qa-bench"]) == 1
    err = capsys.readouterr().err
    assert "not pulled" in err and "needs at least two records" in err


def test_analysis_pages_with_svg_plots(tmp_path: Path) -> None:
    from eee.commands import analysis

    store, _ = _sim_store(tmp_path, models=5, items=60)
    place(store, uuid_of(20), "lab0/model-0", "inspect_ai", [1.0] * 30 + [0.0] * 30)  # a second run of one model
    place(store, uuid_of(30), "solo/one", "helm", None, benchmark="no-samples")
    assert analysis.main(["--store", str(store)]) == 0
    pages = store / "build" / "analysis" / "pages"
    assert sorted(p.name for p in pages.iterdir()) == [
        "qa-bench-abilities.svg",
        "qa-bench-difficulty.svg",
        "qa-bench.md",
    ]
    md = (pages / "qa-bench.md").read_text()
    assert md.startswith('---\ntitle: "qa-bench: instance-level analysis"\n---\n')  # the title MkDocs shows, escaped
    assert "\n# qa-bench: instance-level analysis { #analysis }\n" in md
    assert "![Model abilities with 95% intervals](qa-bench-abilities.svg)" in md
    assert "## Comparisons of one model's records" in md and f"`{uuid_of(1)[:8]}` vs `{uuid_of(20)[:8]}`" in md
    for svg in pages.glob("*.svg"):
        root = ET.fromstring(svg.read_text())
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
    abilities = ET.fromstring((pages / "qa-bench-abilities.svg").read_text())
    assert len(abilities.findall(".//{http://www.w3.org/2000/svg}circle")) == 6
    assert (store / "build" / "analysis" / "irt" / "qa-bench" / "items.parquet").exists()
    first = (pages / "qa-bench-difficulty.svg").read_bytes()
    assert analysis.main(["--store", str(store)]) == 0
    assert (pages / "qa-bench-difficulty.svg").read_bytes() == first  # deterministic


# -- real sidecars ----------------------------------------------------------------------------


def _copy_record(src_record: Path, store: Path, benchmark: str) -> str:
    """A reference record and its sidecar into a temporary store (read, never into the project)."""
    uuid = src_record.stem
    dev, model = src_record.parent.parent.name, src_record.parent.name
    folder = store / "data" / benchmark / dev / model
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src_record, folder / src_record.name)
    shutil.copyfile(src_record.with_name(uuid + "_samples.jsonl"), folder / (uuid + "_samples.jsonl"))
    return uuid


def test_real_inspect_sidecars_compare_and_fit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.commands import compare, irt

    base = reference("converter-outputs", "inspect")
    store = tmp_path / "store"
    qwen = _copy_record(next((base / "data_arc_qwen").rglob("*-*-*-*-*[0-9a-f].json")), store, "ai2_arc")
    sonnet = _copy_record(next((base / "data_arc_sonnet").rglob("*-*-*-*-*[0-9a-f].json")), store, "ai2_arc")
    assert compare.main(["--store", str(store), qwen, sonnet, "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    (res,) = rep["samples"]["results"]
    # qwen answers 3 ARC samples (right on 1), sonnet 5 (right on all): 3 in common
    assert (res["overlap"], res["only_a"], res["only_b"]) == (3, 0, 2)
    t = res["binary"]
    assert (t["both_correct"], t["only_a_correct"], t["only_b_correct"], t["both_wrong"]) == (1, 0, 2, 0)
    assert t["mcnemar_exact_p"] == pytest.approx(0.5)
    assert res["difference"] == pytest.approx(-2 / 3)
    assert irt.main(["--store", str(store), "--benchmark", "ai2_arc", "--dry-run", "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["records"] == 2 and s["items"] == 5
    assert s["abilities"][0]["model_id"].startswith("anthropic/")


def test_reference_record_with_samples_is_read(tmp_path: Path) -> None:
    from eee.analysis.samples import read_samples, resolve

    src = reference("records-with-samples", "data")
    store = tmp_path / "store"
    shutil.copytree(src, store / "data")
    (record,) = [p for p in (store / "data").rglob("*.json")]
    rec = resolve(store, record.stem[:8])
    assert rec.sidecar_state() is None
    groups = read_samples(rec.sidecar)
    (g,) = groups.values()
    assert len(g) == 1 and g.binary and g.score[0] == 1.0


def test_the_stores_own_sidecars_when_pulled(capsys: pytest.CaptureFixture[str]) -> None:
    from eee.analysis.samples import read_samples
    from eee.catalog.table import record_paths
    from eee.commands import irt

    pulled = [
        (PROJECT / rel)
        for _, rel in record_paths(PROJECT)
        if (PROJECT / rel).with_name(Path(rel).stem + "_samples.jsonl").exists()
    ]
    if not pulled:
        pytest.skip("the store's sidecars are not pulled (eee samples pull)")
    for record in pulled:
        groups = read_samples(record.with_name(record.stem + "_samples.jsonl"))
        assert groups and all(len(g) > 0 for g in groups.values())
    bench = pulled[0].parts[-4]
    assert irt.main(["--store", str(PROJECT), "--benchmark", bench, "--dry-run"]) in (0, 1, 2)


@pytest.mark.slow
def test_the_stores_ai2_arc_sidecars_rebuilt_from_the_reference_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The store's two ai2_arc records keep their sidecars in DVC. Converting the reference
    Inspect logs again gives the same bytes (the records' sha256 says so), so the analyses
    run here on the store's own records and sidecars, whether or not they were pulled."""
    import hashlib

    from conftest import dvc, git
    from eee.commands import analysis, compare, convert, irt

    logs = reference("harness-logs", "inspect")
    conv = tmp_path / "conv"
    conv.mkdir()
    git(conv, "init", "-q")
    dvc(conv, "init", "-q")
    for name in ("data_arc_qwen.json", "data_arc_sonnet.json"):
        assert (
            convert.main(
                ["inspect", "--log-path", str(logs / name), "--include-samples", "--store", str(conv), "--no-stage"]
            )
            == 0
        )
    rebuilt = {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in conv.rglob("*_samples.jsonl")}
    store = tmp_path / "store"
    used = []
    for record in sorted((PROJECT / "data" / "ai2_arc").rglob("*.json")):
        doc = json.loads(record.read_text())
        side = rebuilt.get((doc.get("detailed_evaluation_results") or {}).get("checksum"))
        if side is None:
            continue
        target = store / record.relative_to(PROJECT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(record, target)
        shutil.copyfile(side, target.with_name(record.stem + "_samples.jsonl"))
        used.append(record.stem)
    if len(used) < 2:
        pytest.skip("the store's ai2_arc records are not the ones the reference logs convert to")
    capsys.readouterr()
    assert compare.main(["--store", str(store), *used, "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    (res,) = rep["samples"]["results"]
    assert res["overlap"] == 3 and res["binary"]["agreement"] == pytest.approx(1 / 3)
    assert res["binary"]["mcnemar_exact_p"] == pytest.approx(0.5)
    assert rep["aggregates"] and rep["aggregates"][0]["paired_by"] == "evaluation_result_id"
    assert irt.main(["--store", str(store), "--benchmark", "ai2_arc", "--format", "json"]) == 0
    fit = json.loads(capsys.readouterr().out)
    assert fit["records"] == 2 and fit["items"] == 5 and fit["fit"]["converged"]
    assert analysis.main(["--store", str(store)]) == 0
    page = (store / "build" / "analysis" / "pages" / "ai2_arc.md").read_text()
    assert "![Model abilities with 95% intervals](ai2_arc-abilities.svg)" in page


def test_a_long_table_is_html_the_site_passes_through_and_does_not_search() -> None:
    """Up to RAW_ROWS rows a Markdown table; beyond, the same cells as an HTML table between
    the raw markers (Python-Markdown does not read it cell by cell), out of the search index."""
    import markdown

    from eee.analysis.pages import RAW_ROWS, Code, _table

    head = ["Record", "Model"]
    rows = [[Code(f"{i:08x}"), f"org/model<{i}>|x"] for i in range(RAW_ROWS + 1)]
    short = _table(head, rows[:RAW_ROWS])
    assert short.startswith("| Record | Model |") and "<table>" not in short
    long = _table(head, rows)
    assert long.startswith("<!-- eee:raw -->\n<div data-search-exclude>\n<table>")
    assert long.rstrip().endswith("<!-- /eee:raw -->")
    assert long.count("<tr>") == RAW_ROWS + 2  # the head and every row
    html = markdown.markdown(long, extensions=["eee.site.mdraw"])
    assert "<td><code>000000c8</code></td><td>org/model&lt;200&gt;|x</td>" in html
    assert markdown.markdown(short, extensions=["tables"]).count("<tr>") == RAW_ROWS + 1
