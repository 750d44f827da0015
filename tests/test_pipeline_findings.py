"""The pipeline ends with the validation's findings grouped by rule (``Finding.check``): the
first few of each rule, then the counts, read from the validate stage's report. Real
reports (``eee validate --out``) and one real pipeline run (DVC, MkDocs)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, make_pipeline_store, place_record, record_of
from eee.commands.pipeline import SHOWN_PER_RULE, by_rule, report_findings
from eee.commands.validate import main as validate_main

MISPLACED = "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"
GOOD = "1b2c3d4e-5f6a-4b7c-9d8e-9f0a1b2c3d4e"
BAD = [f"2c3d4e5f-6a7b-4c8d-ae9f-0a1b2c3d4e{n:02d}" for n in range(5)]  # a score that is not a number


def _fill(store: Path) -> None:
    place_record(store, record_of("acme/misplaced-7b", 8.0), benchmark="elsewhere", record_uuid=MISPLACED)
    place_record(store, record_of("acme/good-7b", 8.0), record_uuid=GOOD)
    for n, uuid in enumerate(BAD):
        doc = record_of(f"acme/bad-{n}", 8.0)
        doc["evaluation_results"][0]["score_details"]["score"] = "x"
        place_record(store, doc, record_uuid=uuid)


@pytest.fixture
def report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    store = tmp_path / "store"
    (store / "data").mkdir(parents=True)
    _fill(store)
    out = tmp_path / "report.json"
    assert validate_main([str(store), "--format", "json", "--no-progress", "--out", str(out)]) == 1
    capsys.readouterr()
    return out


def test_the_findings_part_of_the_report_is_the_whole_reports(report: Path) -> None:
    whole = json.loads(report.read_text())["findings"]
    assert len(whole) == 6
    assert [f.to_dict() for f in report_findings(report)] == whole


def test_grouped_by_rule_the_first_few_then_the_counts(report: Path) -> None:
    lines = by_rule(report, errors=5)
    assert lines[0] == f"[pipeline] findings by rule (6 findings; all of them in {report}):"
    assert lines[1] == "  [schema] 5 errors"  # rules with errors first
    shown = [line for line in lines[2 : 2 + 2 * SHOWN_PER_RULE] if not line.startswith("        hint:")]
    assert len(shown) == SHOWN_PER_RULE and all('"x" is not of type "number"' in line for line in shown)
    assert [BAD[n] in line for n, line in enumerate(shown)] == [True] * SHOWN_PER_RULE  # in the report's order
    assert f"    ... {5 - SHOWN_PER_RULE} more [schema]" in lines
    at = lines.index("  [benchmark] 1 warning")
    assert "warning: the benchmark folder 'elsewhere'" in lines[at + 1] and lines[at + 2].startswith("        hint:")
    assert lines[-1] == "[pipeline] by rule: schema 5 errors; benchmark 1 warning"
    assert not any("more [benchmark]" in line for line in lines)


def test_errors_past_the_per_file_cap_are_counted(report: Path) -> None:
    lines = by_rule(report, errors=9)
    assert lines[-1] == "[pipeline] and 4 more errors past the per-file cap (counted, not listed)"


def test_a_missing_or_broken_report_is_said(tmp_path: Path) -> None:
    assert "no validation report" in by_rule(tmp_path / "none.json")[0]
    (tmp_path / "broken.json").write_text('{"findings": [')
    assert "cannot be read" in by_rule(tmp_path / "broken.json")[0]


@pytest.mark.slow
def test_the_pipeline_ends_with_the_findings_by_rule(tmp_path: Path) -> None:
    store = make_pipeline_store(tmp_path)
    place_record(store, record_of("acme/misplaced-7b", 8.0), benchmark="elsewhere", record_uuid=MISPLACED)
    place_record(store, record_of("acme/good-7b", 8.0), record_uuid=GOOD)
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "store")
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "pipeline", "--store", str(store), "--no-pull"], capture_output=True, text=True
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr  # warnings only
    assert "0 errors, 1 warning;" in proc.stdout  # counted as said: "1 warning"
    tail = proc.stdout[proc.stdout.index("[pipeline] findings by rule") :].splitlines()
    assert tail[1] == "  [benchmark] 1 warning"
    assert re.match(rf"    data/elsewhere/acme/misplaced-7b/{MISPLACED}\.json:\d+::\$\.", tail[2]), tail[2]
    assert tail[-1] == "[pipeline] by rule: benchmark 1 warning"
