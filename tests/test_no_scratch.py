"""Validation never needs a temporary file or folder: validate, audit, convert and
supersede read the store, a commit or planned files through a tree (issue 12).

The tempfile module is made to fail for the whole test; the one file a run may create
beside its target (the atomic write of :func:`eee.store.fsutil.write_new`) does not use it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from conftest import FIXED_UUID, PROJECT, commit, git, load_example, make_store, place_record
from eee.commands.convert import main as convert
from eee.commands.governance import run as governance
from eee.validation.audit import audit
from eee.validation.validate import run as validate

INSPECT_LOG = PROJECT / "tests" / "examples" / "harness" / "inspect" / "tiny_qa.json"


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("a temporary file or folder was asked for")


def test_validate_audit_convert_and_supersede_need_no_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_store(tmp_path)
    doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
    doc["model_info"]["id"] = "meta-llama/Llama-2-7b-hf"
    place_record(repo, doc, record_uuid=FIXED_UUID)
    git(repo, "add", "-A")
    assert commit(repo, "a record").returncode == 0
    monkeypatch.chdir(repo)
    corrected = dict(doc, evaluation_results=[dict(doc["evaluation_results"][0])])
    corrected["evaluation_results"][0]["score_details"] = dict(
        doc["evaluation_results"][0]["score_details"], score=8.7941
    )
    source = tmp_path / "corrected.json"
    source.write_text(json.dumps(corrected))

    with monkeypatch.context() as patched:
        for name in ("mkdtemp", "TemporaryDirectory", "mkstemp", "NamedTemporaryFile", "TemporaryFile"):
            patched.setattr(tempfile, name, _refuse)
        assert validate([str(repo)]).exit_code() == 0
        assert convert(["inspect", "--log-path", str(INSPECT_LOG), "--no-stage"]) == 0
        written = sorted(p.relative_to(repo).as_posix() for p in (repo / "data").rglob("*.json"))
        assert len(written) == 2  # the record placed by the converter beside the first
        capsys.readouterr()
        assert governance("supersede", [FIXED_UUID, str(source), "--reason", "fourth decimal", "--format", "json"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert (repo / result["replacement_path"]).is_file()
        assert (repo / result["event_path"]).is_file()
        git(repo, "add", "-A")
        assert commit(repo, "converted and superseded").returncode == 0
        summary = audit(None, "HEAD", repo)
        assert summary.fatal is None
        assert summary.exit_code() == 0, [f.one_line() for r in summary.results for f in r.findings]
        assert len(summary.results) == 3  # three commits audited
    # nothing was left beside the targets
    assert not [p for p in repo.rglob("*.tmp")]
