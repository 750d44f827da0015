"""The migration chain: every example reaches the current version, losslessly, once; refusals say why."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

import eee
from conftest import EXAMPLES, PROJECT
from eee.migrate import MigrationRefused, migrate, migrate_record, migrate_row, plan
from eee.migrate import steps as steps_module
from eee.migrate.provenance import holder_path, read
from eee.store.schemas import EVAL, INSTANCE, Registry
from eee.store.strictjson import canonical
from migration_paths import assert_lossless

REFUSED = EXAMPLES / "migration" / "refused"
REFUSED_EXPECTED = json.loads((REFUSED / "_expected.json").read_text())


def _aggregates() -> list[tuple[str, dict[str, Any]]]:
    out = [(p.name, json.loads(p.read_text())) for p in sorted((EXAMPLES / "aggregate" / "valid").glob("*.json"))]
    for p in sorted((EXAMPLES / "migration" / "steps").glob("eval_*/*/before.json")):
        out.append((f"{p.parent.parent.name}/{p.parent.name}", json.loads(p.read_text())))
    return out


def _rows() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for p in sorted((EXAMPLES / "instance" / "valid").glob("*.jsonl")):
        out.extend((f"{p.name}:{i}", json.loads(line)) for i, line in enumerate(p.read_text().splitlines(), 1))
    for p in sorted((EXAMPLES / "migration" / "steps").glob("instance_level_eval_*/*/before.json")):
        out.append((f"{p.parent.parent.name}/{p.parent.name}", json.loads(p.read_text())))
    return out


DOCUMENTS = [(EVAL, name, doc) for name, doc in _aggregates()] + [(INSTANCE, name, doc) for name, doc in _rows()]


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.load()


@pytest.mark.parametrize(("kind", "name", "doc"), DOCUMENTS, ids=[f"{k}:{n}" for k, n, _ in DOCUMENTS])
def test_every_example_migrates_to_the_current_version(
    kind: str, name: str, doc: dict[str, Any], registry: Registry
) -> None:
    untouched = copy.deepcopy(doc)
    result = migrate(doc, kind, registry=registry)
    assert doc == untouched, "migration must not modify the document it reads"
    assert result.target == registry.current
    errors = [e.message for e in registry.validator(registry.current, kind).iter_errors(result.doc)]
    assert errors == []
    source = registry.resolve(doc["schema_version"], kind)
    assert result.source == source
    provenance = read(result.doc, kind)
    if source == registry.current:
        assert result.doc is doc and not result.changed and provenance == {}
    else:
        assert provenance["eee_migrated_from"] == source
        assert provenance.get("eee_migration_filled", []) == result.changes.filled
        assert provenance.get("eee_migration_converted", []) == result.changes.converted
        assert_lossless(doc, result.doc, result.changes.to_dict(), holder=holder_path(kind))


@pytest.mark.parametrize(("kind", "name", "doc"), DOCUMENTS, ids=[f"{k}:{n}" for k, n, _ in DOCUMENTS])
def test_migrating_a_migrated_copy_again_is_a_no_op(kind: str, name: str, doc: dict[str, Any]) -> None:
    once = migrate(doc, kind)
    twice = migrate(once.doc, kind)
    assert not twice.changed and twice.doc is once.doc
    assert canonical(twice.doc) == canonical(once.doc)


@pytest.mark.parametrize(("kind", "name", "doc"), DOCUMENTS, ids=[f"{k}:{n}" for k, n, _ in DOCUMENTS])
def test_stepping_through_every_version_equals_migrating_at_once(
    kind: str, name: str, doc: dict[str, Any], registry: Registry
) -> None:
    """Provenance merges: a copy migrated to an older version and then on carries the same record."""
    direct = migrate(doc, kind).doc
    source = registry.resolve(doc["schema_version"], kind)
    assert source is not None
    current = doc
    for version in registry.ordered[registry.ordered.index(source) + 1 :]:
        current = migrate(current, kind, to=version).doc
        assert registry.validator(version, kind).is_valid(current)
    assert orjson.dumps(current) == orjson.dumps(direct)


def test_a_current_record_passes_through_unchanged() -> None:
    doc = json.loads((EXAMPLES / "aggregate" / "valid" / "v0.3.0_agentic_and_judge.json").read_text())
    result = migrate_record(doc)
    assert result.doc is doc and not result.changed and not result.changes


@pytest.mark.parametrize("target", ["0.2.0", "0.2.1", "0.2.2", "0.2.3"])
def test_downgrades_are_refused_with_a_clear_message(target: str) -> None:
    doc = json.loads((EXAMPLES / "aggregate" / "valid" / "v0.3.0_agentic_and_judge.json").read_text())
    with pytest.raises(MigrationRefused) as refused:
        migrate_record(doc, to=target, file="rec.json")
    finding = refused.value.findings[0]
    assert finding.check == "version" and finding.pointer == "$.schema_version"
    assert f"cannot migrate from 0.3.0 down to {target}: migrations only go forward" in finding.message
    assert finding.one_line().startswith("rec.json::$.schema_version: ")
    assert finding.hint


def test_an_unknown_target_version_is_an_error() -> None:
    doc = json.loads((EXAMPLES / "aggregate" / "valid" / "v0.2.0_helm_leaderboard.json").read_text())
    with pytest.raises(ValueError, match=re.escape("unknown schema version '0.4.0'")):
        migrate_record(doc, to="0.4.0")


@pytest.mark.parametrize("name", sorted(REFUSED_EXPECTED), ids=lambda n: n.rsplit(".", 1)[0])
def test_documents_that_cannot_be_migrated_are_refused_with_the_reason(name: str) -> None:
    expected = REFUSED_EXPECTED[name]
    doc = json.loads((REFUSED / name).read_text())
    with pytest.raises(MigrationRefused) as refused:
        migrate(doc, expected["kind"], file=name)
    finding = refused.value.findings[0]
    assert (finding.check, finding.pointer) == (expected["check"], expected["pointer"]), finding
    assert expected["message"] in finding.message
    assert finding.hint, "a refusal says what to do"
    assert finding.file == name and "\n" not in finding.one_line()


def test_every_refusal_example_is_listed() -> None:
    files = {p.name for p in REFUSED.iterdir() if not p.name.startswith("_")}
    assert files == set(REFUSED_EXPECTED)


def test_a_gap_in_the_chain_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(steps_module, "STEPS", tuple(s for s in steps_module.STEPS if s.source != "0.2.2"))
    with pytest.raises(MigrationRefused, match=re.escape("no migration step leads from 0.2.2 towards 0.3.0")):
        plan(EVAL, "0.2.0", "0.3.0")
    assert [s.target for s in plan(EVAL, "0.2.0", "0.2.2")] == ["0.2.1", "0.2.2"]


def test_filled_converted_and_moved_are_recorded_in_the_copy() -> None:
    before = json.loads(
        (
            EXAMPLES / "migration" / "steps" / "eval_0.2.0_to_0.2.1" / "agentic_judges_extra_args" / "before.json"
        ).read_text()
    )
    copy_ = migrate_record(before).doc
    details = copy_["source_metadata"]["additional_details"]
    assert details["contact"] == "evals@acme.example", "existing details are kept"
    assert details["eee_migrated_from"] == "0.2.0"
    filled = json.loads(details["eee_migration_filled"])
    assert filled == [
        "$.eval_library.name",
        "$.eval_library.version",
        "$.model_info.additional_details.deployment_type",
        "$.model_info.additional_details.model_availability",
        "$.evaluation_results[0].metric_config.llm_scoring.judges[0].model_info.additional_details.deployment_type",
        "$.evaluation_results[0].metric_config.llm_scoring.judges[0].model_info.additional_details.model_availability",
    ]
    assert copy_["eval_library"] == {"name": "unknown", "version": "unknown"}
    moved = json.loads(details["eee_migration_moved"])
    assert moved["$.evaluation_results[0].generation_config.generation_args.seed"] == (
        '$.evaluation_results[0].generation_config.additional_details["generation_args.seed"]'
    )
    assert copy_["evaluation_results"][0]["generation_config"]["additional_details"]["generation_args.seed"] == "42"
    assert "$.source_metadata.additional_details.run_number" in json.loads(details["eee_migration_converted"])


def test_rows_record_provenance_in_metadata() -> None:
    row = json.loads((EXAMPLES / "instance" / "valid" / "v0.2.0_interactions.jsonl").read_text().splitlines()[0])
    migrated = migrate_row(row).doc
    assert migrated["schema_version"] == "0.3.0"
    assert "interactions" not in migrated and migrated["messages"][1]["tool_call_id"] == ["x"]
    assert migrated["metadata"]["difficulty"] == "3"
    assert migrated["metadata"]["eee_migrated_from"] == "0.2.0"
    assert json.loads(migrated["metadata"]["eee_migration_moved"]) == {"$.interactions": "$.messages"}
    assert "$.sample_id" in json.loads(migrated["metadata"]["eee_migration_converted"])


def test_a_prefixed_row_version_is_read_as_the_released_version() -> None:
    row = json.loads((EXAMPLES / "instance" / "valid" / "v0.2.2_prefixed_version.jsonl").read_text().splitlines()[0])
    result = migrate_row(row)
    assert result.source == "0.2.2" and result.doc["metadata"]["eee_migrated_from"] == "0.2.2"
    assert migrate_row(row, to="0.2.2").doc is row


# --- reading as a version: eee.load_record / eee.load_rows ------------------------------


def test_load_record_reads_any_version_as_the_current_one(tmp_path: Path) -> None:
    path = tmp_path / "rec.json"
    path.write_bytes((EXAMPLES / "aggregate" / "valid" / "v0.2.0_helm_leaderboard.json").read_bytes())
    doc = eee.load_record(path)
    assert doc["schema_version"] == "0.3.0"
    assert doc["source_metadata"]["additional_details"]["eee_migrated_from"] == "0.2.0"
    assert eee.load_record(path, as_version="0.2.2")["schema_version"] == "0.2.2"
    assert path.read_bytes() == (EXAMPLES / "aggregate" / "valid" / "v0.2.0_helm_leaderboard.json").read_bytes()


def test_load_record_refuses_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "rec.json"
    path.write_bytes((REFUSED / "score_below_min.json").read_bytes())
    with pytest.raises(MigrationRefused) as refused:
        eee.load_record(path)
    assert refused.value.findings[0].one_line() == (
        f"{path}::$.evaluation_results[0].score_details.score: score -0.01 is outside the declared range [0, 1]"
    )
    path.write_bytes(b'{"schema_version": "0.2.0", "schema_version": "0.3.0"}')
    with pytest.raises(MigrationRefused, match="duplicate key"):
        eee.load_record(path)


def test_load_rows_migrates_each_row_and_names_the_bad_line(tmp_path: Path) -> None:
    lines = (EXAMPLES / "instance" / "valid" / "v0.2.0_interactions.jsonl").read_text().splitlines()
    lines += (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_text().splitlines()
    path = tmp_path / "rows_samples.jsonl"
    path.write_text("\n".join(lines) + "\n")
    rows = list(eee.load_rows(path))
    assert len(rows) == len(lines) and {r["schema_version"] for r in rows} == {"0.3.0"}
    bad = (REFUSED / "row_moved_key_taken.jsonl").read_text()
    path.write_text(lines[0] + "\n" + bad)
    with pytest.raises(MigrationRefused) as refused:
        list(eee.load_rows(path))
    assert refused.value.findings[0].line == 2
    assert f"{path}:2::$.metadata" in refused.value.findings[0].one_line()


def test_import_eee_stays_cheap() -> None:
    code = (
        "import sys, eee; heavy = [m for m in ('eee.migrate', 'orjson', 'jsonschema_rs') if m in sys.modules]; "
        "print(heavy); print(callable(eee.load_record), callable(eee.load_rows)); print('eee.migrate' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, check=True).stdout
    assert out.splitlines() == ["[]", "True True", "True"]
    with pytest.raises(AttributeError):
        eee.no_such_thing  # noqa: B018
