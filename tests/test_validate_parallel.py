"""Whole-store validation on several cores: the same report as in one process."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

import eee.validation.pool as pool
import eee.validation.validate as validate
from conftest import PROJECT, load_example, place_record, place_with_sidecar
from eee.reporting.reporters import json_bytes, to_json
from eee.store.tree import WorkTree
from eee.validation.collect import Item


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(PROJECT / "schemas", root / "schemas")
    for i in range(24):
        doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
        doc["model_info"]["id"] = f"org{i % 5}/model-{i % 3}"
        if i % 7 == 3:
            del doc["eval_library"]  # a schema error
        if i % 9 == 4:
            doc["evaluation_results"][0]["score_details"]["score"] = 0.5  # out of bounds
        place_record(root, doc, benchmark="bench", record_uuid=str(uuid.UUID(int=i + 1, version=4)))
    _record, sidecar = place_with_sidecar(root, b'{"not": "a row"}\n')
    broken = root / "data" / "bench" / "org1" / "model-1" / f"{uuid.UUID(int=99, version=4)}.json"
    broken.write_text('{"a": 1, "a": 2}')  # a duplicate key
    (sidecar.parent / f"{uuid.UUID(int=98, version=4)}_samples.jsonl").write_text("{}\n")  # no record
    (root / "data" / "bench" / "notes.txt").write_text("x")  # not a store file
    return root


def test_workers_give_the_one_process_report(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "CHUNK", 3)  # many chunks of whole folders
    one = validate.validate_tree(WorkTree(store), options=validate.Options(jobs=1))
    many = validate.validate_tree(WorkTree(store), options=validate.Options(jobs=3))
    assert one.errors > 5 and one.exit_code() == 1
    assert to_json(many) == to_json(one)
    assert json_bytes(many) == json_bytes(one)
    # and the command line's files, some named alone (a record whose sidecar is not named)
    named = [str(p) for p in sorted((store / "data").rglob("*.json"))]
    assert to_json(validate.run(named, validate.Options(jobs=2))) == to_json(
        validate.run(named, validate.Options(jobs=1))
    )


def test_the_report_is_the_documents_json(store: Path) -> None:
    summary = validate.validate_tree(WorkTree(store))
    assert json.loads(json_bytes(summary)) == json.loads(json.dumps(to_json(summary)))


def test_a_few_files_stay_in_one_process(store: Path) -> None:
    items = [Item(WorkTree(store), f"data/x/{i}.json") for i in range(10)]
    assert pool.jobs_for(None, items) == 1
    assert pool.jobs_for(1, items) == 1
    assert pool.jobs_for(None, items * pool.PARALLEL_MIN) > 1 or os.cpu_count() == 1
