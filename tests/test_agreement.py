"""Numbers that agree with their evidence (issue 35, item 1): a result's stated score is
checked against its own items, the way its metric declares, by the gate, ``eee validate``
and ``eee audit`` (rule ``items-agree``); the catalogue gives no interval where they
disagree. Real git and the real gate in temporary stores."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, PROJECT, commit, git, hook_env, load_example, make_store, sha256
from eee.store import aggregation as agg
from eee.store.strictjson import canonical

UUID = "8e6f3a4e-4b7a-4d3e-9c1a-2b3c4d5e6f70"
FOLDER = "data/qa-bench/acme/widget-7b"
SCORE = "$.evaluation_results[0].score_details.score"


def _result(score: Any, kind: str | None = "accuracy", **config: Any) -> dict[str, Any]:
    metric: dict[str, Any] = {"metric_id": config.pop("metric_id", "exact_match"), "min_score": 0, "max_score": 1}
    if kind is not None:
        metric["metric_kind"] = kind
    metric.update(config)
    return {"evaluation_result_id": "r", "metric_config": metric, "score_details": {"score": score}}


def _items(values: list[float], keys: list[str] | None = None) -> agg.Items | None:
    doc = {"evaluation_results": [_result(0.5)]}
    tally = agg.Tally(doc)
    for key, value in zip(keys or [f"s{i}" for i in range(len(values))], values, strict=True):
        tally.add({"evaluation_result_id": "r", "sample_id": key, "evaluation": {"score": value}})
    return tally.items(0)


# --- the aggregation, declared once per metric kind ------------------------------------------


def test_a_proportion_agrees_within_one_item_and_its_rounding_and_not_beyond() -> None:
    items = _items([1.0] * 30 + [0.0] * 10)  # 30 of 40: 0.75
    assert agg.check(_result(0.75), items).status == agg.AGREES
    assert agg.check(_result(0.77), items).status == agg.AGREES  # within one item (0.025) and rounding (0.005)
    far = agg.check(_result(0.9), items)
    assert far.status == agg.DISAGREES and far.agrees is False
    assert far.stated == 0.9 and far.recomputed == pytest.approx(0.75) and far.n == 40
    assert "0.9" in far.message() and "0.75" in far.message() and "40 items" in far.message()
    # the stated score's rounding counts: 0.8 (one decimal) may stand for 0.75 .. 0.85, plus one item
    assert agg.check(_result(0.8), items).status == agg.AGREES
    assert agg.check(_result(0.80001), items).status == agg.DISAGREES


def test_repeated_samples_are_averaged_within_their_item_first() -> None:
    # item a: 1, 1, 1, 1 (four epochs); item b: 0 -> 0.5 over items (0.8 over rows)
    items = _items([1.0, 1.0, 1.0, 1.0, 0.0], ["a", "a", "a", "a", "b"])
    assert items is not None and (items.n, items.rows) == (2, 5)
    assert agg.check(_result(0.5), items).status == agg.AGREES
    assert agg.check(_result(0.5), items).recomputed == pytest.approx(0.5)


def test_a_percent_score_and_a_win_rate_from_preferences() -> None:
    # AlpacaEval: a row's score is its preference - 1 (1 a win, 0 a loss, 0.5 a draw); the win rate in percent
    prefs = [1.0] * 6 + [0.0] * 3 + [0.5]  # 6 wins, 3 losses, 1 draw: 65%
    items = _items(prefs)
    win = _result(65.0, "win_rate", max_score=100, metric_unit="percent", metric_id="win_rate")
    assert agg.check(win, items).status == agg.AGREES and agg.check(win, items).recomputed == pytest.approx(65.0)
    assert agg.check({**win, "score_details": {"score": 80.0}}, items).status == agg.DISAGREES
    assert agg.AGGREGATIONS["win_rate"] is agg.WIN_RATE and agg.AGGREGATIONS["accuracy"] is agg.PROPORTION


def test_a_mean_of_scores_within_the_metric_s_bounds() -> None:
    items = _items([2.0, 4.0, 9.0])  # mean 5 on [0, 10]: one item's worth 10 / 3
    mean = _result(5.0, "mean", max_score=10, metric_id="rating")
    assert agg.check(mean, items).status == agg.AGREES
    assert agg.check({**mean, "score_details": {"score": 9.0}}, items).status == agg.DISAGREES


@pytest.mark.parametrize(
    ("result", "values", "skip"),
    [
        (_result(0.5, "f1", metric_id="f1"), [1.0, 0.0], "not-a-mean"),
        (_result(0.5, "text_overlap", metric_id="bleu"), [1.0, 0.0], "not-a-mean"),
        (_result(0.5, "accuracy", metric_id="pass@5"), [1.0, 0.0], "pass-at-k"),
        (_result(0.5, None, metric_id="bespoke"), [1.0, 0.0], "unknown"),
        (_result(0.5, "something_new"), [1.0, 0.0], "unknown"),
        (_result(None), [1.0, 0.0], "no-score"),
        (_result(0.5), None, "no-items"),
        (_result(0.5), [3.0, 0.0], "scale"),  # items on another scale than a share
    ],
)
def test_what_cannot_be_recomputed_is_skipped_with_its_reason(
    result: dict[str, Any], values: list[float] | None, skip: str
) -> None:
    verdict = agg.check(result, _items(values) if values is not None else None)
    assert verdict.status == agg.SKIPPED and verdict.skip == skip and verdict.agrees is None
    assert verdict.reason and verdict.note() == f"not checked: {verdict.reason}"


def test_a_partial_sidecar_is_not_checked() -> None:
    result = _result(0.9)
    result["score_details"]["uncertainty"] = {"num_samples": 500}
    verdict = agg.check(result, _items([1.0, 0.0]))
    assert verdict.skip == "partial" and "2 items" in verdict.reason and "500" in verdict.reason


def test_the_catalogue_and_the_rule_call_the_one_check() -> None:
    """The catalogue's uncertainty columns come from the same function as the rule."""
    from eee.catalog import uncertainty

    assert uncertainty.check is agg.check and uncertainty.PROPORTIONS is agg.PROPORTIONS


# --- the rule in the validator, the gate and the audit ------------------------------------------


def pair(repo: Path, stated: float, scores: list[float], uuid: str = UUID) -> tuple[Path, Path]:
    """A record of one proportion result with ``scores`` as its sidecar's items, stating ``stated``."""
    doc = load_example("instance", "aggregate.json")
    doc["evaluation_results"] = doc["evaluation_results"][:1]
    doc["evaluation_results"][0]["score_details"]["score"] = stated
    template = json.loads(
        (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_text().split("\n")[0]
    )
    lines = []
    for i, score in enumerate(scores):
        row = dict(template, sample_id=f"q{i}", evaluation={"score": score, "is_correct": score == 1.0})
        lines.append(json.dumps(row))
    folder = repo / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    sidecar = folder / f"{uuid}_samples.jsonl"
    sidecar.write_text("\n".join(lines) + "\n")
    doc["detailed_evaluation_results"].update(
        file_path=f"{FOLDER}/{uuid}_samples.jsonl", checksum=sha256(sidecar), total_rows=len(lines)
    )
    record = folder / f"{uuid}.json"
    record.write_bytes(canonical(doc))
    return record, sidecar


SCORES = [1.0] * 15 + [0.0] * 5  # 15 of 20: 0.75


def eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


def test_validate_reports_a_score_its_items_do_not_give_with_both_numbers(tmp_path: Path) -> None:
    pair(tmp_path, 0.95, SCORES)
    proc = eee(tmp_path, "validate", "data", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = [f for f in json.loads(proc.stdout)["findings"] if f["check"] == "items-agree"]
    assert len(found) == 1
    f = found[0]
    assert f["file"].endswith(f"{FOLDER}/{UUID}.json") and f["pointer"] == SCORE and f["line"]
    assert "0.95" in f["message"] and "0.75" in f["message"] and "20 items" in f["message"] and f["hint"]
    text = eee(tmp_path, "validate", "data").stdout
    assert f"{UUID}.json:{f['line']}::{SCORE}: [items-agree] the stated score 0.95" in text


def test_a_sidecar_with_an_invalid_row_is_reported_as_such_and_not_recomputed(tmp_path: Path) -> None:
    """Rows that fail their schema (or do not parse) cannot recompute a score: the schema error is
    the finding, never a comparison with what the rows that remain would give."""
    record, sidecar = pair(tmp_path, 0.95, SCORES)
    rows = sidecar.read_text().splitlines()
    bad = json.loads(rows[0])
    bad["sample_id"] = 5  # not a string: fails the instance schema
    sidecar.write_text("\n".join([json.dumps(bad), *rows[1:]]) + "\n")
    doc = json.loads(record.read_bytes())
    doc["detailed_evaluation_results"]["checksum"] = sha256(sidecar)
    record.write_bytes(canonical(doc))
    proc = eee(tmp_path, "validate", "data", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    checks = {f["check"] for f in json.loads(proc.stdout)["findings"]}
    assert "schema" in checks and "items-agree" not in checks
    sidecar.write_text("\n".join(rows) + "\n")  # the same rows, all valid: the disagreement is found again
    doc["detailed_evaluation_results"]["checksum"] = sha256(sidecar)
    record.write_bytes(canonical(doc))
    proc = eee(tmp_path, "validate", "data", "--format", "json")
    assert "items-agree" in {f["check"] for f in json.loads(proc.stdout)["findings"]}


def test_the_right_score_raises_nothing(tmp_path: Path) -> None:
    pair(tmp_path, 0.75, SCORES)
    proc = eee(tmp_path, "validate", "data")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "items-agree" not in proc.stdout


@pytest.mark.slow
def test_the_gate_refuses_it_the_audit_finds_it_and_a_flag_accepts_it(tmp_path: Path) -> None:
    from eee.rules.flags import record_findings
    from eee.store.tree import GitTree, WorkTree

    repo = make_store(tmp_path)
    record, _sidecar = pair(repo, 0.95, SCORES)
    git(repo, "add", "-A")
    proc = commit(repo, "a score its items contradict")
    assert proc.returncode == 1
    assert "[items-agree]" in proc.stdout + proc.stderr and "0.95" in proc.stdout + proc.stderr
    # what a flag of it would accept: that rule at that path of that record
    rel = record.relative_to(repo).as_posix()
    assert record_findings(WorkTree(repo), rel, "items-agree") == {("items-agree", SCORE)}
    git(repo, "commit", "-q", "--no-verify", "-m", "past the hooks")
    proc = eee(repo, "audit", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = [f for f in json.loads(proc.stdout)["findings"] if f["check"] == "items-agree"]
    assert len(found) == 1 and found[0]["pointer"] == SCORE and "20 items" in found[0]["message"]
    assert record_findings(GitTree(repo, "HEAD"), rel, "items-agree") == {("items-agree", SCORE)}
    # a maintainer accepts the record as its source published it: the audit accepts exactly that finding
    reason = "the leaderboard published this number beside these items"
    proc = eee(repo, "flag", UUID[:8], "--rule", "items-agree", "--json-path", SCORE, "--reason", reason, "--commit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = eee(repo, "audit", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # a flag at another result's path accepts nothing there
    other = "$.evaluation_results[1].score_details.score"
    proc = eee(repo, "flag", UUID[:8], "--rule", "items-agree", "--json-path", other, "--reason", "x", "--dry-run")
    assert proc.returncode == 2 and "the flag accepts nothing" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_the_gate_accepts_the_right_score(tmp_path: Path) -> None:
    repo = make_store(tmp_path)
    pair(repo, 0.75, SCORES)
    git(repo, "add", "-A")
    proc = commit(repo, "a score its items give")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_site_shows_no_interval_where_the_items_disagree() -> None:
    from eee.site.cataloguepages import uncertainty

    row = {"ci_low": 0.7, "ci_high": 0.8, "ci_level": 0.95, "se": 0.02, "uncertainty_source": "record"}
    assert uncertainty(row) == "[0.7, 0.8] (record)"
    said = uncertainty({**row, "items_agree": False, "items_score": 0.75})
    assert said.startswith("no interval") and "0.75" in said and "[" not in said
    assert uncertainty({**row, "items_agree": None}) == "[0.7, 0.8] (record)"  # not checked: as before


def test_the_store_s_own_records_raise_no_false_finding_and_most_are_checked() -> None:
    """Every record of the store with a sidecar: no items-agree finding; the results checked
    and skipped, by reason, as the report gives them (numbers from this same function)."""
    from collections import Counter

    from eee.rules.sidecar import iter_lines
    from eee.store.strictjson import loads_row

    checked: Counter[str] = Counter()
    for sidecar in sorted((PROJECT / "data").rglob("*_samples.jsonl")):
        record = sidecar.with_name(sidecar.name[: -len("_samples.jsonl")] + ".json")
        doc = json.loads(record.read_text())
        tally = agg.Tally(doc)
        for line in iter_lines(sidecar):
            if line.strip():
                tally.add(loads_row(line))
        for _index, verdict in tally.checks(doc):
            assert verdict.status != agg.DISAGREES, f"{record}: {verdict.message()}"
            checked[verdict.skip or verdict.status] += 1
    if not checked:
        pytest.skip("no sidecar in the store's data/")
    assert checked[agg.AGREES] > 0
