"""Duplicates (issue 16 item 3) with real git and hooks: the equivalence, the index, the
hook's warnings and hints, eee dedup, tools/mark-duplicate, and no warning for linked pairs
(so the audit of a correct supersession exits 0)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import FIXED_UUID, commit, git, load_example, make_store, place_record
from eee.commands.audit import main as audit
from eee.commands.dedup import main as dedup
from eee.commands.governance import run
from eee.governance.duplicates import DuplicateIndex, facts

pytestmark = pytest.mark.slow

A = FIXED_UUID
B = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"
C = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d"


def _doc(evaluator: str = "Lab A", eid: str = "run-1", retrieved: str = "1700000000") -> dict:
    doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
    doc["model_info"]["id"] = "acme/widget-7b"
    doc["source_metadata"]["source_organization_name"] = evaluator
    doc["evaluation_id"] = eid
    doc["retrieved_timestamp"] = retrieved
    return doc


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_store(tmp_path)
    place_record(repo, _doc(), record_uuid=A)
    git(repo, "add", "-A")
    assert commit(repo, "a record").returncode == 0
    monkeypatch.chdir(repo)
    monkeypatch.setenv("EEE_PYTHON", sys.executable)
    return repo


def _add(repo: Path, doc: dict, uuid: str, message: str) -> str:
    place_record(repo, doc, record_uuid=uuid)
    git(repo, "add", "-A")
    proc = commit(repo, message)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_equivalence() -> None:
    base = facts(A, _doc())
    assert facts(B, _doc(eid="run-2", retrieved="1800000000")).content == base.content  # identical content
    assert facts(B, _doc(evaluator="Lab B")).results == base.results  # same evaluation, another evaluator
    assert facts(B, _doc(eid="run-2", evaluator="Lab B")).results != base.results  # a re-run: another id


def test_identical_content_is_a_duplicate_not_a_re_run(store: Path) -> None:
    out = _add(store, _doc(eid="run-1b", retrieved="1800000000"), B, "the same result again")
    assert "warning: duplicates data/" in out and A in out
    assert "identical content apart from evaluation_id and retrieved_timestamp" in out
    assert "not a re-run" in out and f" mark-duplicate {B} --of {A} " in out


def test_a_differing_evaluator_is_still_warned_about(store: Path) -> None:
    out = _add(store, _doc(evaluator="unknown"), B, "converted again without --source-organization")
    assert "repeats the evaluation of" in out and "evaluation_id run-1" in out
    assert "the evaluator differs (unknown here, Lab A there)" in out


def test_a_re_run_is_not_a_duplicate(store: Path) -> None:
    doc = _doc(eid="run-2")
    doc["evaluation_results"][0]["score_details"]["score"] = 9.5
    out = _add(store, doc, B, "a new run")
    assert "warning" not in out


def test_a_record_in_another_folder_is_found_through_the_index(store: Path) -> None:
    path = place_record(store, _doc(eid="run-1c"), benchmark="other-bench", record_uuid=B)
    git(store, "add", "-A")
    proc = commit(store, "the same content under another benchmark folder")
    assert "warning: duplicates" in proc.stdout + proc.stderr and path.name in proc.stdout + proc.stderr


def test_correct_supersession_audits_clean(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corrected = _doc()
    corrected["evaluation_results"][0]["score_details"]["score"] = 12.25
    source = tmp_path / "corrected.json"
    source.write_text(json.dumps(corrected))
    assert run("supersede", [A[:8], str(source), "--reason", "fourth decimal was wrong", "--commit"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.out + captured.err
    assert audit(["--store", str(store)]) == 0  # was 2: the pair is linked by supersession


def test_mark_duplicate_settles_the_group(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _add(store, _doc(eid="run-1b"), B, "the same result again")
    assert audit(["--store", str(store)]) == 2
    capsys.readouterr()
    assert dedup(["--format", "json"]) == 2
    report = json.loads(capsys.readouterr().out)
    (group,) = report["groups"]
    assert not group["settled"] and {r["record"] for r in group["records"]} == {A, B}
    assert group["pairs"][0]["kind"] == "identical content"
    assert run("mark-duplicate", [B[:8], "--of", A[:8], "--reason", "uploaded twice", "--commit"]) == 0
    capsys.readouterr()
    assert dedup([]) == 0
    out = capsys.readouterr().out
    assert "settled by the ledger" in out and f"duplicate of {A[:8]}" in out
    assert audit(["--store", str(store)]) == 0  # never warned about again
    # a third copy is still warned about against the one that stands
    out = _add(store, _doc(eid="run-1c"), C, "a third copy")
    assert "warning: duplicates" in out


def test_index_follows_head(store: Path) -> None:
    index = DuplicateIndex(store)
    assert index.sync() == 1 and index.sync() == 0
    _add(store, _doc(eid="run-9", evaluator="Lab Z"), B, "another record")
    assert index.sync() == 1  # only the new record is read
    assert len(index.matches("x", facts(C, _doc()))) == 1
    index.close()


def test_a_damaged_index_is_rebuilt(store: Path) -> None:
    (store / ".git" / "eee-duplicates.sqlite").write_bytes(b"not a database at all" * 100)
    out = _add(store, _doc(eid="run-1b"), B, "the same result again")
    assert "warning: duplicates" in out and "Traceback" not in out
