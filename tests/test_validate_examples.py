"""Example-driven validator tests: every file under tests/examples/ is one case.

Valid examples must pass with every check on; each invalid example must fail with the
check, location and message that ``_expected.json`` names for it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, FIXED_UUID, sha256, write_json
from eee.findings import Summary
from eee.paths import canonical_folders
from eee.validate import Options, run

AGG_VALID = sorted((EXAMPLES / "aggregate" / "valid").glob("*.json"))
AGG_INVALID = json.loads((EXAMPLES / "aggregate" / "invalid" / "_expected.json").read_text())
INST_VALID = sorted((EXAMPLES / "instance" / "valid").glob("*.jsonl"))
INST_INVALID = json.loads((EXAMPLES / "instance" / "invalid" / "_expected.json").read_text())


def _place(store: Path, raw: bytes) -> Path:
    """Put a record where the store's layout says it belongs."""
    folders = ("meta-llama", "Llama-2-7b-hf")
    try:
        doc = json.loads(raw)
        folders = canonical_folders(doc["model_info"]["id"]) or folders
    except Exception:
        pass
    path = store / "data" / "bench" / folders[0] / folders[1] / f"{FIXED_UUID}.json"
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


def test_sidecar_copied_unchanged_still_validates(tmp_path: Path) -> None:
    """The example sidecar, moved with its record into another store, keeps passing (paths are store-relative)."""
    _record, _sidecar = _sidecar_store(tmp_path / "a", (INST_VALID[0]).read_bytes())
    other = tmp_path / "b"
    shutil.copytree(tmp_path / "a", other)
    summary = run([str(other / "data")])
    assert summary.exit_code() == 0, [f.one_line() for f in _findings(summary)]
    assert {r.kind for r in summary.results} == {"record", "sidecar"}
