"""Sources checked against each other (issue 35, items 2 and 3): ``eee agree --benchmark B``
lists the pairs of results of one model under one protocol, from different sources, whose
difference is larger than their standard errors allow; pairs of different protocols are
never compared, and counted. The AlpacaEval leaderboard converted from its table and the
store's per-item AlpacaEval records of the same models and protocol agree; a test changes
one number of the table and the pair is found."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import PROJECT, hook_env, make_store, reference_or_none
from eee.catalog.agreement import compare

P1, P2 = "a" * 16, "b" * 16


def _row(uuid: str, score: float, se: float | None, protocol: str = P1, source: str = "board", **over: Any) -> dict:
    row = {
        "record_uuid": uuid,
        "record_path": f"data/bench/acme/m/{uuid}.json",
        "model_id": "acme/m",
        "metric_id": "accuracy",
        "evaluation_result_id": "acc",
        "score": score,
        "se": se,
        "uncertainty_source": "record" if se is not None else "none",
        "protocol_id": protocol,
        "lifecycle": "active",
        "source_type": "documentation",
        "source_name": source,
        "eval_library": "lm_eval",
        "eval_library_version": "0.4.0",
    }
    row.update(over)
    return row


def test_a_difference_beyond_the_standard_errors_disagrees_and_one_within_them_does_not() -> None:
    rows = [_row("r1", 0.70, 0.01), _row("r2", 0.75, 0.01, source="harness log"), _row("r3", 0.71, 0.01, source="x")]
    report = compare(rows, "bench")
    assert report["pairs_tested"] == 3
    pairs = {(t["a"]["record_uuid"], t["b"]["record_uuid"]) for t in report["disagreeing"]}
    # 0.70 vs 0.75: z = 3.5 (Holm p 0.001); 0.75 vs 0.71: z = 2.8 (p 0.005, x2 = 0.01); 0.70 vs 0.71: z = 0.7
    assert pairs == {("r1", "r2"), ("r2", "r3")}
    t = next(t for t in report["disagreeing"] if t["a"]["record_uuid"] == "r1")
    assert t["difference"] == pytest.approx(-0.05) and t["z"] == pytest.approx(-0.05 / (0.01 * 2**0.5))
    assert t["a"]["source"]["source_name"] == "board" and t["b"]["source"]["source_name"] == "harness log"
    assert "independent" in report["test"] and "Holm" in report["test"]


def test_pairs_of_different_protocols_are_never_compared_and_counted() -> None:
    rows = [
        _row("r1", 0.10, 0.01),
        _row("r2", 0.90, 0.01, protocol=P2, source="other", protocol_harness="lm_eval 1"),  # far apart, not comparable
        _row("r3", 0.90, 0.01, source="board"),  # one source with r1: not what this checks
        _row("r4", 0.90, None, source="no se"),  # no standard error: not tested
    ]
    rows[0]["protocol_harness"] = "lm_eval 0.4"
    report = compare(rows, "bench")
    assert report["disagreeing"] == [] and report["pairs_tested"] == 0
    assert report["skipped"] == {"different_protocols": 3, "same_source": 1, "no_uncertainty": 2}
    assert report["protocol_fields_apart"]["harness"] >= 1


def test_a_retracted_result_and_another_model_are_left_out() -> None:
    rows = [_row("r1", 0.1, 0.01), _row("r2", 0.9, 0.01, source="x", lifecycle="retracted")]
    rows.append(_row("r3", 0.9, 0.01, source="y", model_id="acme/other"))
    assert compare(rows, "bench")["pairs_tested"] == 0


# --- the AlpacaEval leaderboard table against the store's per-item records ------------------------


def _eee(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eee", *args], cwd=cwd, capture_output=True, text=True, env=hook_env())


def _store_with_board(
    tmp: Path, change: dict[str, float] | None = None, version: str | None = None
) -> tuple[Path, int]:
    """A store holding the project's per-item AlpacaEval 2 records and the leaderboard table's
    rows of the same models, converted by `eee convert alpaca_eval` (one ``change``d number:
    model -> its win_rate; ``version``: the harness version the conversion says)."""
    board = reference_or_none("per-item", "alpaca_eval", "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv")
    if board is None:
        pytest.skip("the AlpacaEval leaderboard table is not in ../shared/reference")
    repo = make_store(tmp, hooks=False)
    shutil.copytree(PROJECT / "data" / "alpaca_eval_2", repo / "data" / "alpaca_eval_2")
    models = {p.name for p in (repo / "data" / "alpaca_eval_2").glob("*/*")}
    rows = list(csv.reader(io.StringIO(board.read_text())))
    header, body = rows[0], [r for r in rows[1:] if r and r[0] in models]
    for r in body:
        if change and r[0] in change:
            r[header.index("win_rate")] = repr(change[r[0]])
    table = tmp / board.name
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *body])
    table.write_text(out.getvalue())
    args = ["convert", "alpaca_eval", str(table), "--store", str(repo), "--no-stage"]
    if version:
        args += ["--eval-library-version", version]
    proc = _eee(repo, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the models in both (the table's baseline row, against itself, is not converted)
    both = sum(1 for folder in (repo / "data" / "alpaca_eval_2").glob("*/*") if len(list(folder.glob("*.json"))) == 2)
    return repo, both


def _agree(repo: Path) -> tuple[int, dict[str, Any]]:
    proc = _eee(repo, "agree", "--benchmark", "alpaca_eval_2", "--format", "json")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.slow
def test_the_alpaca_eval_table_and_its_per_item_records_agree_today(tmp_path: Path) -> None:
    repo, both = _store_with_board(tmp_path)
    code, report = _agree(repo)
    assert code == 0 and report["disagreeing"] == []
    # every model in both has its win rate tested, under one protocol (the discrete win rate has
    # no standard error on either side)
    assert both > 0 and report["pairs_tested"] == both
    assert report["skipped"]["different_protocols"] == 0 and report["skipped"]["no_uncertainty"] == both


@pytest.mark.slow
def test_one_number_of_the_table_changed_is_found_with_both_records_and_sources(tmp_path: Path) -> None:
    repo, _both = _store_with_board(tmp_path, {"claude-2.1": 25.733506736409938})
    code, report = _agree(repo)
    assert code == 1
    assert len(report["disagreeing"]) == 1
    t = report["disagreeing"][0]
    assert t["model_id"] == "anthropic/claude-2.1" and abs(t["difference"]) == pytest.approx(10.0, abs=1e-6)
    kinds = {t["a"]["source"]["source_type"], t["b"]["source"]["source_type"]}
    assert kinds == {"documentation", "evaluation_run"}  # the table and the per-item run
    assert all(side["record_path"].startswith("data/alpaca_eval_2/anthropic/claude-2.1/") for side in (t["a"], t["b"]))
    text = _eee(repo, "agree", "--benchmark", "alpaca_eval_2")
    assert text.returncode == 1 and "anthropic/claude-2.1" in text.stdout and "leaderboard" in text.stdout


@pytest.mark.slow
def test_the_same_change_under_another_harness_version_is_never_compared(tmp_path: Path) -> None:
    repo, _both = _store_with_board(tmp_path, {"claude-2.1": 25.733506736409938}, version="1.0.0")
    code, report = _agree(repo)
    assert code == 0 and report["disagreeing"] == [] and report["pairs_tested"] == 0
    assert report["skipped"]["different_protocols"] > 0 and report["protocol_fields_apart"] == {
        "harness": report["skipped"]["different_protocols"]
    }


def test_the_benchmark_page_s_section_escapes_what_records_say() -> None:
    """The site's "Sources that disagree" section: every value from records is data."""
    from eee.site.render import render

    hostile = "<script>alert(1)</script>"
    rows = [_row("r1", 0.1, 0.01, model_id=hostile), _row("r2", 0.9, 0.01, source=hostile, model_id=hostile)]
    report = compare(rows, "bench")
    assert len(report["disagreeing"]) == 1
    t = report["disagreeing"][0]
    side = {"uuid": "r1", "href": None, "result": "acc", "score": "0.1", "se": "0.01", "source": hostile}
    pair = {"model": t["model_id"], "metric": "m", "protocol": P1, "difference": "-0.8", "z": "-56", "p": "0"}
    html = render("catalogue/agreement.html.j2", report=report, pairs=[{**pair, "sides": [side, side]}])
    assert hostile not in html and "&lt;script&gt;" in html
    assert "tested; 1 disagree." in html
