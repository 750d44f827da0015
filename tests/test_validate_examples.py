"""Example-driven validator tests: every file under tests/examples/ is one case.

Valid examples must pass with every check on; each invalid example must fail with the
check, location and message that ``_expected.json`` names for it (and its line, where
given); each warning example must pass with exactly the warning its ``_expected.json``
names (``folder``: the benchmark folder it is placed in).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, FIXED_UUID, sha256, write_json
from eee.reporting.findings import Summary
from eee.rules.record import main_folder
from eee.store.jsonpath import parse_path
from eee.store.paths import canonical_folders
from eee.validation.validate import Options, run

AGG_VALID = sorted((EXAMPLES / "aggregate" / "valid").glob("*.json"))
AGG_INVALID = json.loads((EXAMPLES / "aggregate" / "invalid" / "_expected.json").read_text())
INST_VALID = sorted((EXAMPLES / "instance" / "valid").glob("*.jsonl"))
INST_INVALID = json.loads((EXAMPLES / "instance" / "invalid" / "_expected.json").read_text())
AGG_WARNING = json.loads((EXAMPLES / "aggregate" / "warning" / "_expected.json").read_text())
INST_WARNING = json.loads((EXAMPLES / "instance" / "warning" / "_expected.json").read_text())


def _place(store: Path, raw: bytes, folder: str | None = None) -> Path:
    """Put a record where the store's layout says it belongs (or in the benchmark folder given)."""
    folders = ("meta-llama", "Llama-2-7b-hf")
    benchmark = "bench"
    try:
        doc = json.loads(raw)
        folders = canonical_folders(doc["model_info"]["id"]) or folders
        benchmark = main_folder(doc) or benchmark
    except Exception:
        pass
    path = store / "data" / (folder or benchmark) / folders[0] / folders[1] / f"{FIXED_UUID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return path


def _findings(summary: Summary) -> list[Any]:
    return [f for r in summary.results for f in r.findings]


@pytest.mark.parametrize("example", AGG_VALID, ids=lambda p: p.stem)
def test_valid_aggregate_examples_pass_every_check(tmp_path: Path, example: Path) -> None:
    path = _place(tmp_path, example.read_bytes())
    summary = run([str(path)])
    assert _findings(summary) == []
    assert summary.exit_code() == 0
    assert summary.results[0].schema_version == json.loads(example.read_text())["schema_version"]


@pytest.mark.parametrize("name", sorted(AGG_INVALID), ids=lambda n: n.removesuffix(".json"))
def test_invalid_aggregate_examples_fail_with_a_clear_message(tmp_path: Path, name: str) -> None:
    expected = AGG_INVALID[name]
    path = _place(tmp_path, (EXAMPLES / "aggregate" / "invalid" / name).read_bytes())
    summary = run([str(path)])
    assert summary.exit_code() == 1
    matching = [
        f
        for f in _findings(summary)
        if f.severity == "error"
        and f.check == expected["check"]
        and f.pointer == expected["pointer"]
        and expected["message"] in f.message
    ]
    assert matching, f"expected {expected}, got {[f.one_line() for f in _findings(summary)]}"
    finding = matching[0]
    assert "\n" not in finding.one_line()
    assert finding.one_line().startswith(f"{finding.file}")
    if "hint" in expected:
        assert finding.hint and expected["hint"] in finding.hint
    if "line" in expected:
        assert finding.line == expected["line"]
        assert f":{expected['line']}::" in finding.one_line()
    if expected.get("one_finding"):  # a misspelt field is one finding, not "required" plus "unexpected"
        assert [f.one_line() for f in _findings(summary)] == [finding.one_line()]


@pytest.mark.parametrize("name", sorted(AGG_INVALID), ids=lambda n: n.removesuffix(".json"))
def test_every_finding_of_an_invalid_example_names_its_line(tmp_path: Path, name: str) -> None:
    """A finding at a JSON location the file has carries that location's line (the file's
    own line numbers, counted from 1); only ``$`` (the whole file) has none."""
    path = _place(tmp_path, (EXAMPLES / "aggregate" / "invalid" / name).read_bytes())
    findings = _findings(run([str(path)]))
    assert findings
    try:
        doc = json.loads(path.read_bytes(), object_pairs_hook=dict)
    except ValueError:
        doc = None
    for f in findings:
        parts = parse_path(f.pointer)
        absent = isinstance(doc, dict) and bool(parts) and parts[0] not in doc  # e.g. a missing schema_version
        if f.pointer != "$" and not absent:
            assert f.line is not None, f.one_line()
            assert 1 <= f.line <= path.read_bytes().count(b"\n") + 1


@pytest.mark.parametrize("name", sorted(AGG_WARNING), ids=lambda n: n.removesuffix(".json"))
def test_warning_examples_pass_with_the_warning_they_name(tmp_path: Path, name: str) -> None:
    expected = AGG_WARNING[name]
    path = _place(tmp_path, (EXAMPLES / "aggregate" / "warning" / name).read_bytes(), expected.get("folder"))
    summary = run([str(path)])
    findings = _findings(summary)
    assert summary.exit_code() == 2, [f.one_line() for f in findings]
    assert [(f.severity, f.check, f.pointer, f.line) for f in findings] == [
        ("warning", expected["check"], expected["pointer"], expected["line"])
    ]
    assert expected["message"] in findings[0].message
    assert findings[0].hint and expected.get("hint", "") in findings[0].hint


def _sidecar_store(tmp: Path, rows: bytes, overrides: dict[str, Any] | None = None) -> tuple[Path, Path]:
    agg = json.loads((EXAMPLES / "instance" / "aggregate.json").read_text())
    folder = tmp / "data" / "qa-bench" / "acme" / "widget-7b"
    folder.mkdir(parents=True)
    sidecar = folder / f"{FIXED_UUID}_samples.jsonl"
    sidecar.write_bytes(rows)
    der = agg["detailed_evaluation_results"]
    der["file_path"] = f"data/qa-bench/acme/widget-7b/{FIXED_UUID}_samples.jsonl"
    der["checksum"] = sha256(sidecar)
    der["total_rows"] = sum(1 for line in rows.splitlines() if line.strip())
    der.update(overrides or {})
    record = write_json(folder / f"{FIXED_UUID}.json", agg)
    return record, sidecar


@pytest.mark.parametrize("example", INST_VALID, ids=lambda p: p.stem)
def test_valid_sidecar_examples_pass(tmp_path: Path, example: Path) -> None:
    record, sidecar = _sidecar_store(tmp_path, example.read_bytes())
    summary = run([str(record), str(sidecar)])
    assert _findings(summary) == []
    side = next(r for r in summary.results if r.kind == "sidecar")
    assert side.rows == len(example.read_text().splitlines())


@pytest.mark.parametrize("name", sorted(INST_INVALID), ids=lambda n: n.removesuffix(".jsonl"))
def test_invalid_sidecar_examples_fail_with_line_numbers(tmp_path: Path, name: str) -> None:
    expected = INST_INVALID[name]
    rows = (EXAMPLES / "instance" / "invalid" / name).read_bytes()
    record, _sidecar = _sidecar_store(tmp_path, rows, expected.get("aggregate"))
    # validating the record alone validates its sidecar too: they are one unit
    summary = run([str(record)])
    assert summary.exit_code() == 1
    matching = [
        f
        for f in _findings(summary)
        if f.check == expected["check"]
        and f.pointer == expected["pointer"]
        and f.line == expected["line"]
        and expected["message"] in f.message
        and f.file.endswith("_samples.jsonl")
    ]
    assert matching, f"expected {expected}, got {[f.one_line() for f in _findings(summary)]}"
    if expected["line"] is not None:
        assert f":{expected['line']}::" in matching[0].one_line()
    if expected.get("suppressed"):
        side = next(r for r in summary.results if r.kind == "sidecar")
        assert side.suppressed > 0
        assert len(side.findings) == Options().cap


@pytest.mark.parametrize("name", sorted(INST_WARNING), ids=lambda n: n.removesuffix(".jsonl"))
def test_sidecar_warning_examples_say_it_once_per_file(tmp_path: Path, name: str) -> None:
    expected = INST_WARNING[name]
    record, _sidecar = _sidecar_store(tmp_path, (EXAMPLES / "instance" / "warning" / name).read_bytes())
    summary = run([str(record)])
    findings = _findings(summary)
    assert summary.exit_code() == 2, [f.one_line() for f in findings]
    assert [(f.severity, f.check, f.pointer, f.line) for f in findings] == [
        ("warning", expected["check"], expected["pointer"], expected["line"])
    ]
    assert expected["message"] in findings[0].message
    assert findings[0].file.endswith("_samples.jsonl")


def test_sidecar_copied_unchanged_still_validates(tmp_path: Path) -> None:
    """The example sidecar, moved with its record into another store, keeps passing (paths are store-relative)."""
    _record, _sidecar = _sidecar_store(tmp_path / "a", (INST_VALID[0]).read_bytes())
    other = tmp_path / "b"
    shutil.copytree(tmp_path / "a", other)
    summary = run([str(other / "data")])
    assert summary.exit_code() == 0, [f.one_line() for f in _findings(summary)]
    assert {r.kind for r in summary.results} == {"record", "sidecar"}
