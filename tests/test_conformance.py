"""Conformance: the project's schemas give the reference schemas' verdict on every document.

For every released version and both record kinds, the project's schema (run by
jsonschema-rs, the validator's engine, and by the ``jsonschema`` library) and the reference
schema (run by ``jsonschema``) must agree on every real record and on a generated set of
mutations. Where ../shared/reference is absent the project's schema is still run by both
engines on the store's own records (data/) and the examples, and the reference schema's
verdict is left out (a failure instead when the run requires the material:
EEE_REQUIRE_REFERENCE).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest

from conftest import EXAMPLES, PROJECT, real_records, reference, reference_or_none
from mutations import mutations

VERSIONS = ["0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.3.0"]
KINDS = ["eval", "instance_level_eval"]
MUTATIONS_PER_VERSION = 600


@cache
def _engines(version: str, kind: str) -> tuple[Any, ...]:
    """The reference schema run by ``jsonschema`` (where the material is present), then the
    project's schema run by ``jsonschema`` and by jsonschema-rs."""
    mine = json.loads((PROJECT / "schemas" / version / f"{kind}.schema.json").read_text())
    engines: tuple[Any, ...] = (jsonschema.Draft7Validator(mine), jsonschema_rs.Draft7Validator(mine))
    ref = reference_or_none("schemas", version, f"{kind}.schema.json")
    if ref is not None:
        engines = (jsonschema.Draft7Validator(json.loads(ref.read_text())), *engines)
    return engines


def _verdicts(version: str, kind: str, doc: Any) -> tuple[bool, ...]:
    return tuple(engine.is_valid(doc) for engine in _engines(version, kind))


@cache
def _real_aggregates() -> list[tuple[str, Any]]:
    """The reference's records and converter outputs, else the store's own records."""
    root = reference_or_none()
    if root is None:
        return [(str(p.relative_to(PROJECT)), json.loads(p.read_text())) for p in real_records().files()]
    out = []
    for sub in ("records", "records-with-samples", "converter-outputs"):
        for path in sorted((root / sub).rglob("*.json")):
            if path.is_file() and "adapter_reports" not in path.parts:
                out.append((str(path.relative_to(root)), json.loads(path.read_text())))
    return out


@cache
def _real_rows() -> list[tuple[str, Any]]:
    """The reference's sidecar rows, else those of the store's pulled sidecars (if any)."""
    root = reference_or_none() or PROJECT / "data"
    out = []
    for path in sorted(root.rglob("*_samples.jsonl")):
        for i, line in enumerate(path.read_text().splitlines(), start=1):
            out.append((f"{path.relative_to(root)}:{i}", json.loads(line)))
    return out


def _example_aggregates() -> list[tuple[str, Any]]:
    return [(p.name, json.loads(p.read_text())) for p in sorted((EXAMPLES / "aggregate" / "valid").glob("*.json"))]


def _example_rows() -> list[tuple[str, Any]]:
    out = []
    for p in sorted((EXAMPLES / "instance" / "valid").glob("*.jsonl")):
        out.extend((f"{p.name}:{i}", json.loads(line)) for i, line in enumerate(p.read_text().splitlines(), 1))
    return out


def _documents(kind: str) -> list[tuple[str, Any]]:
    return (_real_aggregates() + _example_aggregates()) if kind == "eval" else (_real_rows() + _example_rows())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", VERSIONS)
def test_same_verdict_on_every_real_document(version: str, kind: str) -> None:
    docs = _documents(kind)
    disagreements = [name for name, doc in docs if len(set(_verdicts(version, kind, doc))) != 1]
    assert not disagreements, disagreements[:10]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", VERSIONS)
def test_same_verdict_on_mutations(version: str, kind: str) -> None:
    ref = _engines(version, kind)[0]
    docs = _documents(kind)

    # mutate documents that the version accepts (they exercise its constraints), small ones first
    def size(nd: tuple[str, Any]) -> int:
        return len(json.dumps(nd[1]))

    valid = sorted(((n, d) for n, d in docs if ref.is_valid(d)), key=size)
    invalid = sorted(((n, d) for n, d in docs if not ref.is_valid(d)), key=size)
    bases = (valid[:40] + invalid)[:40]
    per_base = MUTATIONS_PER_VERSION // len(bases) + 1
    checked = rejected = 0
    disagreements = []
    for i, (name, doc) in enumerate(bases):
        for label, mutated in mutations(doc, per_base, seed=i):
            verdicts = _verdicts(version, kind, mutated)
            checked += 1
            rejected += not verdicts[0]
            if len(set(verdicts)) != 1:
                disagreements.append(f"{name} {label}: verdicts {verdicts} (see _engines for the order)")
    assert checked >= 500
    assert rejected >= 100, "the mutations should break the documents"
    assert not disagreements, disagreements[:10]


def test_every_real_record_passes_its_declared_version() -> None:
    from eee.store.schemas import Registry

    reg = Registry.load()
    corpus = real_records()
    files = corpus.files()
    corpus.assert_count(len(files))
    failing = []
    for path in files:
        doc = json.loads(path.read_text())
        version = reg.resolve(doc.get("schema_version"), "eval")
        if version is None or not reg.validator(version, "eval").is_valid(doc):
            failing.append(str(path))
    assert failing == []


def test_reference_schemas_exist_for_every_project_version() -> None:
    for version in VERSIONS:
        for kind in KINDS:
            assert reference("schemas", version, f"{kind}.schema.json").is_file()
            assert Path(PROJECT / "schemas" / version / f"{kind}.schema.json").is_file()
