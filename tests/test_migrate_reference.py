"""The real records migrate to 0.3.0: those of ../shared/reference, or where the material is
absent the store's own (data/: the same public records, imported, and later ones; a failure
instead when the run requires the material: EEE_REQUIRE_REFERENCE).

Every record either migrates to a copy valid under the project's 0.3.0 schema *and* the
reference 0.3.0 schema, losslessly, or is refused with a reason; the refused ones are exactly
the records the validator rejects for a score outside its declared bounds.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jsonschema_rs
import pytest

from conftest import EXAMPLES, place_with_sidecar, real_records, reference_or_none
from eee.commands.migrate import main
from eee.migrate import MigrationRefused, Result, migrate_record
from eee.migrate.files import migrate_file
from eee.migrate.provenance import holder_path
from eee.migrate.report import REPORT_NAME
from eee.store.schemas import EVAL, default_registry
from eee.validation.validate import Options, run
from migration_paths import assert_lossless


@cache
def _outcomes() -> tuple[dict[Path, Result], dict[Path, MigrationRefused]]:
    migrated: dict[Path, Result] = {}
    refused: dict[Path, MigrationRefused] = {}
    for path in real_records().files():
        try:
            migrated[path] = migrate_file(path, "0.3.0")
        except MigrationRefused as exc:
            refused[path] = exc
    return migrated, refused


def test_all_real_records_migrate_or_are_refused_with_a_reason() -> None:
    migrated, refused = _outcomes()
    real_records().assert_count(len(migrated) + len(refused))
    assert len(migrated) > len(refused), "most real records migrate"
    for path, exc in refused.items():
        first = exc.findings[0]
        assert first.check == "score" and "is outside the declared range" in first.message, (path, first)
        assert first.file == str(path) and first.pointer.endswith(".score_details.score")


def test_refused_records_are_exactly_those_the_validator_rejects_for_their_scores() -> None:
    _migrated, refused = _outcomes()
    summary = run([str(real_records().data)], Options())
    rejected = {Path(r.file).resolve() for r in summary.results for f in r.findings if f.check == "score"}
    assert {p.resolve() for p in refused} == rejected


def test_every_migrated_copy_is_valid_under_both_0_3_0_schemas() -> None:
    migrated, _refused = _outcomes()
    schema = reference_or_none("schemas", "0.3.0", "eval.schema.json")  # else the project's alone
    ref = jsonschema_rs.Draft7Validator(json.loads(schema.read_text())) if schema else None
    mine = default_registry().validator("0.3.0", EVAL)
    registry = default_registry()
    for path, result in migrated.items():
        declared = json.loads(path.read_text())["schema_version"]
        assert result.source == registry.resolve(declared, EVAL) and result.doc["schema_version"] == "0.3.0"
        assert mine.is_valid(result.doc), (path, [e.message for e in mine.iter_errors(result.doc)][:3])
        assert ref is None or ref.is_valid(result.doc), (path, [e.message for e in ref.iter_errors(result.doc)][:3])
    if real_records().from_reference:
        assert {r.source for r in migrated.values()} == {"0.2.0"}  # the public records are all 0.2.0


def test_real_migrations_are_lossless_and_idempotent() -> None:
    migrated, _refused = _outcomes()
    for path, result in migrated.items():
        source = json.loads(path.read_text())
        if result.changed:
            assert_lossless(source, result.doc, result.changes.to_dict(), holder=holder_path(EVAL))
        else:  # already 0.3.0 (the store's own records): the record itself, untouched
            assert result.source == "0.3.0" and result.doc == source and not result.changes
        again = migrate_record(result.doc)
        assert not again.changed and again.doc is result.doc


def test_the_export_writes_every_migrated_record_and_names_the_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main([str(real_records().data), "--out", str(out), "--format", "json"]) == 1
    report = json.loads((out / REPORT_NAME).read_text())
    migrated, refused = _outcomes()
    summary = report["summary"]
    unchanged = sum(not r.changed for r in migrated.values())  # 0 in the reference (all 0.2.0)
    assert (summary["migrated"], summary["refused"], summary["unchanged"]) == (
        len(migrated) - unchanged,
        len(refused),
        unchanged,
    )
    assert summary["refused_by_check"] == {"score": len(refused)}
    assert all(r["reason"] for r in report["records"] if r["status"] == "refused")
    assert len([p for p in (out / "data").rglob("*.json") if p.is_file()]) == len(migrated)


def test_a_current_record_with_its_sidecar_is_copied_byte_for_byte(tmp_path: Path) -> None:
    source = reference_or_none("records-with-samples")
    if source is None:  # the held example of a record with its sidecar
        source = tmp_path / "example"
        place_with_sidecar(source, (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes())
    out = tmp_path / "out"
    assert main([str(source), "--out", str(out)]) == 0
    files = sorted(p for p in source.rglob("*") if p.is_file())
    assert files
    for path in files:
        assert (out / path.relative_to(source)).read_bytes() == path.read_bytes()


@pytest.mark.parametrize("version", ["0.2.1", "0.2.2", "0.2.3"])
def test_real_records_migrate_to_every_intermediate_version(version: str) -> None:
    validator = default_registry().validator(version, EVAL)
    migrated, _refused = _outcomes()
    for path in [p for p, r in migrated.items() if r.changed][::25]:  # those older than 0.3.0
        doc = migrate_record(json.loads(path.read_text()), to=version).doc
        assert validator.is_valid(doc), path
