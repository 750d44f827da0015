"""The public datastore's own folder conventions, known to the identity registry (issue 26):
HAL's benchmark folders ``hal-<benchmark>`` and model folders that write the dots of a
model id as dashes raise no benchmark-folder or folder-naming warning, while a record
really placed in another benchmark's folder, or under another model, is still caught.

Built from the real records (the reference's 746, else the store's own): each at its
canonical path, and variants of them under the conventions, in a temporary store with the
project's registry; checked by the validator as `eee validate` runs it."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import uuid as uuidlib
from pathlib import Path
from typing import Any

import pytest

from conftest import PROJECT, real_records, write_json
from eee.store.paths import canonical_folders, canonical_record_path
from eee.validation.validate import run

FOLDER_RULES = ("benchmark", "naming")


def _variant(doc: dict[str, Any], n: int, tag: str) -> tuple[dict[str, Any], str]:
    """A copy of a record under its own uuid and evaluation id (the same record twice is a duplicate, not this test)."""
    doc = copy.deepcopy(doc)
    doc["evaluation_id"] = f"{doc.get('evaluation_id')}#{tag}"
    digest = hashlib.sha256(f"{tag}/{n}".encode()).digest()[:16]
    return doc, str(uuidlib.UUID(bytes=digest, version=4))


def _dotted(doc: dict[str, Any]) -> bool:
    folders = canonical_folders(doc["model_info"]["id"])
    return folders is not None and "." in doc["model_info"]["id"].split("/", 1)[1]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], dict[str, list[str]]]:
    """A store of the real records and their variants; returns it, the planted mistakes
    (path -> the rule that must catch it) and the validator's folder findings (path -> rules)."""
    real = real_records()
    root = tmp_path_factory.mktemp("conventions") / "store"
    shutil.copytree(PROJECT / "governance" / "identity", root / "governance" / "identity")
    records = []
    for path in real.files():
        doc = json.loads(path.read_bytes())
        model_id = doc.get("model_info", {}).get("id")
        if not isinstance(model_id, str) or canonical_folders(model_id) is None:
            continue  # no developer part: a naming finding of its own, not a convention's
        records.append((path.parts[-4], doc))
    real.assert_count(len(records) + sum(1 for p in real.files() if _no_developer(p)))
    mistakes: dict[str, str] = {}
    dotted = 0
    benchmarks = sorted({b for b, _ in records})
    for n, (benchmark, doc) in enumerate(records):
        write_json(
            root / canonical_record_path(benchmark, doc["model_info"]["id"], str(uuidlib.UUID(int=n + 1, version=4))),
            doc,
        )
        hal, rid = _variant(doc, n, "hal")  # HAL's folder of this benchmark
        developer, model = canonical_folders(doc["model_info"]["id"])  # type: ignore[misc]
        write_json(root / "data" / f"hal-{benchmark}" / developer / model / f"{rid}.json", hal)
        if _dotted(doc):  # the model folder written with dashes for dots
            dashed, rid = _variant(doc, n, "dashes")
            write_json(root / "data" / benchmark / developer / model.replace(".", "-") / f"{rid}.json", dashed)
            dotted += 1
    assert dotted >= 10, dotted  # the real records hold dotted model ids (gpt-3.5, qwen1.5, jamba-1.5, ...)
    # mistakes the conventions must not hide
    b1, doc1 = next((b, d) for b, d in records if b != "helm_mmlu")
    misplaced, rid = _variant(doc1, 0, "misplaced")
    developer, model = canonical_folders(doc1["model_info"]["id"])  # type: ignore[misc]
    other = next(b for b in benchmarks if b != b1 and {b, b1} != {"helm_mmlu", "mmlu"})
    rel = f"data/hal-{other}/{developer}/{model}/{rid}.json"
    write_json(root / rel, misplaced)
    mistakes[rel] = "benchmark"
    benchmark, doc = next((b, d) for b, d in records if _dotted(d))
    wrong, rid = _variant(doc, 0, "another-model")
    developer, model = canonical_folders(doc["model_info"]["id"])  # type: ignore[misc]
    rel = f"data/{benchmark}/{developer}/{model.replace('.', '-')}-pro/{rid}.json"  # dashes, but another model
    write_json(root / rel, wrong)
    mistakes[rel] = "naming"
    return root, mistakes, _folder_findings(root)


def _no_developer(path: Path) -> bool:
    model_id = json.loads(path.read_bytes()).get("model_info", {}).get("id")
    return not isinstance(model_id, str) or canonical_folders(model_id) is None


def _folder_findings(root: Path) -> dict[str, list[str]]:
    summary = run([str(root)])
    found: dict[str, list[str]] = {}
    for result in summary.results:
        for f in result.findings:
            if f.check in FOLDER_RULES:
                rel = Path(f.file).resolve().relative_to(root.resolve()).as_posix()
                found.setdefault(rel, []).append(f.check)
    return found


def test_the_public_datastore_s_conventions_raise_no_folder_warning(store: tuple[Path, dict, dict]) -> None:
    root, mistakes, found = store
    hal = [p for p in root.glob("data/hal-*/*/*/*.json")]
    dashes = [p for p in root.glob("data/*/*/*/*.json") if "-" in p.parts[-2] and not p.parts[-4].startswith("hal-")]
    assert len(hal) > 700 and dashes
    unexpected = {rel: rules for rel, rules in found.items() if rel not in mistakes}
    assert unexpected == {}


def test_a_record_really_misplaced_is_still_caught(store: tuple[Path, dict, dict]) -> None:
    _root, mistakes, found = store
    assert {rel: found.get(rel) for rel in mistakes} == {rel: [rule] for rel, rule in mistakes.items()}


def test_without_the_registry_the_conventions_are_warned(store: tuple[Path, dict, dict], tmp_path: Path) -> None:
    """The registry is what knows them: the same records without it are warned."""
    root, _, _ = store
    bare = tmp_path / "bare"
    shutil.copytree(root / "data", bare / "data")
    found = _folder_findings(bare)
    assert any(rel.startswith("data/hal-") and rules == ["benchmark"] for rel, rules in found.items())
    assert any("naming" in rules for rel, rules in found.items() if not rel.startswith("data/hal-"))


def test_eee_validate_of_a_snapshot_folder_uses_the_store_s_registry(
    store: tuple[Path, dict, dict], tmp_path: Path
) -> None:
    """A snapshot in a folder of its own (no registry) checked with `eee validate` from the
    store: the store's registry knows the conventions; the planted mistakes are still caught."""
    import subprocess
    import sys

    root, mistakes, _ = store
    snapshot = tmp_path / "snapshot"
    shutil.copytree(root / "data", snapshot / "data")
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "validate", str(snapshot), "--format", "json", "--no-progress"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    report = json.loads(proc.stdout)
    found = {
        Path(f["file"]).resolve().relative_to(snapshot.resolve()).as_posix(): f["check"]
        for f in report["findings"]
        if f["check"] in FOLDER_RULES
    }
    assert found == mistakes
