"""``eee audit``: the commit rules over a range, catching what ``--no-verify`` let through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import COMMITTER, EXAMPLES, FIXED_UUID, git, load_example, make_store, place_record
from eee.commands.audit import main as audit_main

RECORD = "v0.3.0_perplexity_unbounded.json"


def _sneak(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "--short=10", "HEAD").stdout.strip()


def _report(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_store(tmp_path, hooks=False)


def test_clean_history_passes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    place_record(repo, load_example("aggregate", "valid", RECORD))
    _sneak(repo, "add a valid record")
    assert audit_main(["--store", str(repo), "--format", "json"]) == 0
    report = _report(capsys)
    assert report["summary"]["files"] == 2  # two commits
    assert report["findings"] == []


def test_invalid_record_sidecar_and_deletion_are_reported_with_their_commit(repo: Path, capsys) -> None:
    doc = load_example("aggregate", "valid", RECORD)
    doc["schema_version"] = "9.9.9"
    path = place_record(repo, doc)
    bad = _sneak(repo, "unknown version")
    (repo / "governance").mkdir()
    (repo / "governance" / "settings.yaml").write_text("sidecar_git_max_bytes: 100\n")
    _sneak(repo, "git keeps sidecars up to 100 bytes")
    sidecar = path.with_name(f"{FIXED_UUID}_samples.jsonl")
    sidecar.write_bytes((EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes())
    with_sidecar = _sneak(repo, "a sidecar above the threshold in git")
    path.unlink()
    gone = _sneak(repo, "delete the record")
    rel = path.relative_to(repo).as_posix()
    assert audit_main(["--store", str(repo), "--format", "json"]) == 1
    findings = {(f["file"], f["check"]) for f in _report(capsys)["findings"]}
    assert (f"{bad}:{rel}", "version") in findings
    assert (f"{with_sidecar}:{rel[:-5]}_samples.jsonl", "samples") in findings
    assert (f"{gone}:{rel}", "immutable") in findings


def test_range_limits_what_is_checked(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = load_example("aggregate", "valid", RECORD)
    doc["evaluation_results"][0]["score_details"]["score"] = 0.1
    place_record(repo, doc)
    _sneak(repo, "out of range")
    assert audit_main(["--store", str(repo), "--to", "HEAD~1"]) == 0
    assert audit_main(["--store", str(repo), "--from", "HEAD~1", "--format", "github"]) == 1
    out = capsys.readouterr().out
    assert "::error file=" in out and "outside the declared range" in out


def test_unknown_revision_is_an_error_not_a_traceback(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert audit_main(["--store", str(repo), "--from", "no-such-rev"]) == 1
    assert "cannot list commits" in capsys.readouterr().out


def test_outside_a_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:  # not a store at all: a usage error
        audit_main(["--store", str(tmp_path)])
    assert exc.value.code == 64 and "not a store" in capsys.readouterr().err
    (tmp_path / "data").mkdir()  # a store copied out of git: nothing to audit
    assert audit_main(["--store", str(tmp_path)]) == 1
    assert "not a git repository" in capsys.readouterr().out


def test_events_are_audited_and_the_ledger_readme_is_not(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import datetime as dt

    from eee.governance.events import make_event, write

    place_record(repo, load_example("aggregate", "valid", RECORD))
    readme = repo / "governance" / "events" / "README.md"
    readme.parent.mkdir(parents=True)
    readme.write_text("# the ledger\n")
    _sneak(repo, "a record and the ledger's readme")
    me = COMMITTER  # an event's actor is who commits it
    now = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)  # within a day of its commit
    write(repo, make_event("retract", FIXED_UUID, "first", me, now=now))
    _sneak(repo, "retract")
    assert audit_main(["--store", str(repo)]) == 0
    capsys.readouterr()
    write(repo, make_event("retract", FIXED_UUID, "again", me, now=now + dt.timedelta(hours=1)))
    second = _sneak(repo, "retract again, without the hooks")
    assert audit_main(["--store", str(repo), "--format", "json"]) == 1
    findings = _report(capsys)["findings"]
    assert [f["check"] for f in findings] == ["ledger"]
    assert findings[0]["file"].startswith(f"{second}:governance/events/")
    assert "already retracted" in findings[0]["message"]


def test_an_event_naming_a_record_absent_at_its_commit_is_reported(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from eee.governance.events import make_event, write

    place_record(repo, load_example("aggregate", "valid", RECORD))
    _sneak(repo, "a record")
    missing = "99999999-9999-4999-8999-999999999999"
    write(repo, make_event("retract", missing, "never there", COMMITTER))
    commit = _sneak(repo, "retract a record that does not exist")
    assert audit_main(["--store", str(repo), "--format", "json"]) == 1
    (finding,) = _report(capsys)["findings"]
    assert finding["check"] == "ledger" and finding["file"].startswith(f"{commit}:governance/events/")
    assert f"no record {missing[:8]}" in finding["message"]


def test_a_commit_is_read_from_the_object_store_not_the_work_tree(repo: Path, capsys) -> None:
    """The audit reads blobs of each commit: a work tree that differs (or a case-only clash
    with the rest of the commit's tree) is seen as the commit has it, each problem once."""
    doc = load_example("aggregate", "valid", RECORD)
    path = place_record(repo, doc, benchmark="bench")
    _sneak(repo, "a valid record")
    other = FIXED_UUID[:-1] + "1"  # another uuid ("...0" was the same one: an impostor, rule uuid)
    assert other != FIXED_UUID
    clash = repo / "data" / "Bench" / path.parent.parent.name / path.parent.name / f"{other}.json"
    clash.parent.mkdir(parents=True)
    clash.write_bytes(path.read_bytes())
    bad = _sneak(repo, "a folder differing only in case")
    path.write_text("not json")  # the work tree changes after the commits; the audit does not see it
    assert audit_main(["--store", str(repo), "--format", "json"]) == 1
    findings = [f for f in _report(capsys)["findings"] if f["severity"] == "error"]
    expected = [(f"{bad}:{clash.relative_to(repo).as_posix()}", "layout")]
    assert [(f["file"], f["check"]) for f in findings] == expected, findings
