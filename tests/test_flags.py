"""Flags accept a fact, not a file (issue 24, item 1): a registered rule a flag may accept,
at one JSON path of one record's path and bytes. Attacks with real git and the installed
hooks: a flag for a record that is not JSON or not valid under its version, a second file
carrying a flagged record's uuid, more schema errors than the cap, flags written before
event schema 1.2.0, and flags that accept nothing."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXED_UUID, commit, git, load_example, make_store, place_record
from eee.reporting.findings import Finding
from eee.rules.flags import Flag, accept_flagged, content_ids

pytestmark = pytest.mark.slow

SCORE = "$.evaluation_results[0].score_details.score"
RECORD = "v0.3.0_perplexity_unbounded.json"
OTHER = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"
WHEN = "2026-01-01T00:00:00.000000Z"


def _low(score: float = 0.5) -> dict[str, Any]:
    doc = load_example("aggregate", "valid", RECORD)
    doc["evaluation_results"][0]["score_details"]["score"] = score  # below min_score 1
    return doc


def _event(repo: Path, record: str, n: int, *, rule: str = "score", path: str = SCORE, **bound: str) -> str:
    """A flag event written by hand (as a contributor could), declaring now."""
    import datetime as dt

    now = dt.datetime.now(dt.UTC)
    event_id = f"{now.strftime('%Y%m%dT%H%M%S.%fZ')}-flag-{record[:8]}-{n:06x}"
    lines = [
        f'event_schema: "{"1.2.0" if bound else "1.1.0"}"',
        f"id: {event_id}",
        "action: flag",
        f"record: {record}",
        f"rule: {json.dumps(rule)}",
        f"path: {json.dumps(path)}",
        *(f"{k}: {json.dumps(v)}" for k, v in bound.items()),
        "reason: a contributor's flag",
        "actor:",
        "  name: Test Contributor",
        "  email: contributor@example.org",
        f'timestamp: "{now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}"',
    ]
    rel = f"governance/events/{event_id}.yaml"
    (repo / "governance" / "events").mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rel


def _bound(repo: Path, rel: str) -> dict[str, str]:
    return {"record_path": rel, "sha256": hashlib.sha256((repo / rel).read_bytes()).hexdigest()}


def _rel(repo: Path, path: Path) -> str:
    return path.relative_to(repo).as_posix()


def _out(proc: Any) -> str:
    return proc.stdout + proc.stderr


def _audit(repo: Path) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "audit", "--store", str(repo), "--format", "json"],
        capture_output=True,
        text=True,
    )
    return proc.returncode, json.loads(proc.stdout)


def _sneak(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "--short=10", "HEAD").stdout.strip()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return make_store(tmp_path)


# --- the rule of acceptance, on findings in hand ---------------------------------------------------


def test_a_flag_covers_one_rule_at_one_path_of_one_file_s_bytes() -> None:
    rel = f"data/bench/acme/widget-7b/{FIXED_UUID}.json"
    data = b'{"a": 1}'
    sha256, blob = content_ids(data)
    flag = Flag("score", SCORE, FIXED_UUID, rel, sha256, None, "e1")
    here = Finding(rel, SCORE, "out", check="score")
    copy = Finding(f"data/other/acme/widget-7b/{FIXED_UUID}.json", SCORE, "out", check="score")
    other_path = Finding(rel, "$.evaluation_results[1].score_details.score", "out", check="score")
    other_rule = Finding(rel, SCORE, "x", check="results")
    located = {rel: (rel, (sha256, blob)), copy.file: (copy.file, (sha256, blob))}
    kept, accepted = accept_flagged([here, copy, other_path, other_rule], lambda u: [flag], located.get)
    assert accepted == [here] and kept == [copy, other_path, other_rule]
    # the same path with other bytes is not covered
    changed = {rel: (rel, content_ids(b'{"a": 2}'))}
    assert accept_flagged([here], lambda u: [flag], changed.get)[1] == []
    # a flag bound at its commit compares the git blob
    legacy = flag._replace(sha256=None, blob=blob)
    assert accept_flagged([here], lambda u: [legacy], located.get)[1] == [here]
    # a rule no flag may accept is never accepted, whatever a flag says
    schema = Finding(rel, SCORE, "not a number", check="schema")
    assert accept_flagged([schema], lambda u: [flag._replace(rule="schema")], located.get)[1] == []
    # an unbound flag (not committed, or no single record at its commit) accepts nothing
    assert accept_flagged([here], lambda u: [flag._replace(record_path=None)], located.get)[1] == []


def test_content_ids_are_sha256_and_git_s_blob_id(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "x").write_bytes(b"some bytes\n")
    blob = git(repo, "hash-object", "x").stdout.strip()
    assert content_ids(b"some bytes\n") == (hashlib.sha256(b"some bytes\n").hexdigest(), blob)


# --- the attacks of issue 24 --------------------------------------------------------------------


def test_a_record_that_is_not_json_with_a_flag_for_it_is_refused(store: Path) -> None:
    rel = f"data/bench/acme/broken/{FIXED_UUID}.json"
    (store / rel).parent.mkdir(parents=True)
    (store / rel).write_bytes(b'{"schema_version": "0.3.0", "evaluation_id": ')
    _event(store, FIXED_UUID, 1, rule="json", path="$", **_bound(store, rel))
    git(store, "add", "-A")
    proc = commit(store, "a broken record, flagged")
    assert proc.returncode == 1
    assert f"{rel}:1::$: [json] not valid JSON" in _out(proc)
    assert "[ledger] a flag never accepts a finding of rule 'json'" in _out(proc)
    bad = _sneak(store, "the same, without the hooks")
    code, report = _audit(store)
    assert code == 1
    found = {(f["file"].split(":", 1)[0], f["check"]) for f in report["findings"] if f["severity"] == "error"}
    assert {(bad, "json"), (bad, "ledger")} <= found


def test_a_record_invalid_under_its_version_with_flags_for_its_findings_is_refused(store: Path) -> None:
    doc = load_example("aggregate", "valid", RECORD)
    doc["evaluation_results"][0]["score_details"]["score"] = "high"
    rel = _rel(store, place_record(store, doc))
    _event(store, FIXED_UUID, 1, rule="schema", path=SCORE, **_bound(store, rel))
    git(store, "add", "-A")
    proc = commit(store, "invalid under 0.3.0, flagged")
    assert proc.returncode == 1
    assert f'::{SCORE}: [schema] "high" is not of type "number"' in _out(proc)
    assert "[ledger] a flag never accepts a finding of rule 'schema'" in _out(proc)
    bad = _sneak(store, "the same, without the hooks")
    code, report = _audit(store)
    assert code == 1
    checks = {f["check"] for f in report["findings"] if f["file"].startswith(bad)}
    assert {"schema", "ledger"} <= checks


def test_more_schema_errors_than_the_cap_are_counted_never_hidden(store: Path) -> None:
    """25 string scores: the validator shows 20 and counts 5 more; flagging the 20 shown (a
    rule no flag may accept anyway) leaves the record refused, by the gate and the audit."""
    doc = load_example("aggregate", "valid", RECORD)
    first = doc["evaluation_results"][0]
    doc["evaluation_results"] = []
    for i in range(25):
        result = json.loads(json.dumps(first))
        result["evaluation_result_id"] = f"r{i}"
        result["score_details"]["score"] = "high"
        doc["evaluation_results"].append(result)
    rel = _rel(store, place_record(store, doc))
    from eee.validation.validate import run

    summary = run([str(store / rel)])
    (result,) = [r for r in summary.results if r.kind == "record"]
    assert len([f for f in result.findings if f.check == "schema"]) == 20
    assert result.suppressed == 5 and result.errors == 25
    for i in range(20):
        _event(
            store,
            FIXED_UUID,
            i,
            rule="schema",
            path=f"$.evaluation_results[{i}].score_details.score",
            **_bound(store, rel),
        )
    git(store, "add", "-A")
    proc = commit(store, "the shown findings flagged")
    assert proc.returncode == 1
    assert f"{rel}: ... 5 more errors not shown" in _out(proc)
    bad = _sneak(store, "the same, without the hooks")
    code, report = _audit(store)
    assert code == 1
    (entry,) = [f for f in report["files"] if f["file"].startswith(bad)]
    assert entry["suppressed"] == 5 and entry["errors"] >= 25


def test_a_second_file_carrying_a_flagged_uuid_does_not_inherit_its_flag(store: Path) -> None:
    rel = _rel(store, place_record(store, _low()))
    _event(store, FIXED_UUID, 1, **_bound(store, rel))
    git(store, "add", "-A")
    proc = commit(store, "an out-of-bounds score, flagged")
    assert proc.returncode == 0, _out(proc)
    # the same bytes under the same uuid in another folder
    copy = _rel(store, place_record(store, _low(), benchmark="other-bench"))
    git(store, "add", "-A")
    proc = commit(store, "a copy carrying the flagged uuid")
    assert proc.returncode == 1
    assert f"{copy}:42::{SCORE}: [score] score 0.5 is outside" in _out(proc)
    assert f"{copy}::$: [uuid] uuid {FIXED_UUID} is already used by {rel}" in _out(proc)  # and it is an impostor
    assert not any(line.startswith(f"{rel}:") for line in _out(proc).splitlines())
    bad = _sneak(store, "the copy, without the hooks")
    code, report = _audit(store)
    assert code == 1
    errors = [(f["file"], f["check"]) for f in report["findings"] if f["severity"] == "error"]
    assert sorted(errors) == [(f"{bad}:{copy}", "score"), (f"{bad}:{copy}", "uuid")]


def test_the_same_path_with_other_bytes_is_not_covered(store: Path) -> None:
    rel = _rel(store, place_record(store, _low()))
    bound = _bound(store, rel)
    place_record(store, _low(0.25))  # the flag names the bytes of the 0.5 version
    _event(store, FIXED_UUID, 1, **bound)
    git(store, "add", "-A")
    proc = commit(store, "a flag for other bytes")
    assert proc.returncode == 1
    assert f"{rel}:42::{SCORE}: [score] score 0.25 is outside" in _out(proc)
    assert "[flag-unmatched] warning: the flag accepts nothing" in _out(proc)


def test_a_flag_of_a_rule_no_check_reports_or_a_path_no_finding_writes_is_refused(store: Path) -> None:
    rel = _rel(store, place_record(store, _low()))
    for n, (rule, path) in enumerate([("bounds", SCORE), ("score", "evaluation_results[0]")]):
        event = _event(store, FIXED_UUID, n, rule=rule, path=path, **_bound(store, rel))
        git(store, "add", "-A")
        proc = commit(store, "an odd flag")
        assert proc.returncode == 1
        assert "[ledger]" in _out(proc)
        assert ("did you mean 'score'?" if rule == "bounds" else "is not one a finding writes") in _out(proc)
        (store / event).unlink()
        git(store, "add", "-A")


def test_a_flag_names_the_record_s_own_path(store: Path) -> None:
    rel = _rel(store, place_record(store, _low()))
    other = place_record(store, _low(), benchmark="b2", record_uuid=OTHER)
    _event(store, FIXED_UUID, 1, record_path=_rel(store, other), sha256=_bound(store, rel)["sha256"])
    git(store, "add", "-A")
    proc = commit(store, "a flag naming another record's path")
    assert proc.returncode == 1
    assert "a path that is not that record's" in _out(proc)


def test_a_flag_that_accepts_nothing_is_reported(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rel = _rel(store, place_record(store, load_example("aggregate", "valid", RECORD)))
    _event(store, FIXED_UUID, 1, **_bound(store, rel))
    git(store, "add", "-A")
    proc = commit(store, "a flag of a record that breaks nothing")
    assert proc.returncode == 0, _out(proc)  # a warning
    assert f"[flag-unmatched] warning: the flag accepts nothing: {rel} has no [score] finding at {SCORE}" in _out(proc)
    # eee validate reports it too, on the event, for every flag of the store
    from eee.validation.validate import run

    monkeypatch.chdir(store)
    summary = run(["governance"])
    warnings = [f for r in summary.results for f in r.findings if f.check == "flag-unmatched"]
    assert len(warnings) == 1 and summary.exit_code() == 2


# --- flags written before event schema 1.2.0 ---------------------------------------------------------


def test_a_flag_of_1_1_0_is_bound_to_the_blob_at_the_commit_that_added_it(store: Path) -> None:
    place_record(store, _low())
    _event(store, FIXED_UUID, 1)  # no record_path, no sha256: as the import of the reference records wrote them
    first = _sneak(store, "a record and its flag, as an import committed them")
    code, report = _audit(store)
    assert code == 0, report["findings"]
    # a copy added later is not covered: at the flag's commit, the uuid named the first file only
    copy = _rel(store, place_record(store, _low(), benchmark="other-bench"))
    later = _sneak(store, "a copy")
    code, report = _audit(store)
    assert code == 1
    assert sorted((f["file"], f["check"]) for f in report["findings"] if f["severity"] == "error") == [
        (f"{later}:{copy}", "score"),
        (f"{later}:{copy}", "uuid"),  # the copy is an impostor, too
    ]
    assert not any(f["file"].startswith(first) for f in report["findings"])
    # eee validate in the store: the flag accepts the first file's finding only
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "validate", "--format", "json", "data"], cwd=store, capture_output=True, text=True
    )
    found = [(f["file"], f["check"]) for f in json.loads(proc.stdout)["findings"] if f["severity"] == "error"]
    assert found == [(copy, "score")]


def test_a_new_flag_without_path_and_sha256_is_refused_by_the_hooks(store: Path) -> None:
    rel = _rel(store, place_record(store, _low()))
    _event(store, FIXED_UUID, 1)
    git(store, "add", "-A")
    proc = commit(store, "a hand-written flag of 1.1.0")
    assert proc.returncode == 1
    assert "[ledger] a new flag names the record's path (record_path) and the sha256" in _out(proc)
    assert f"{rel}:42::{SCORE}: [score]" in _out(proc)  # and binds nothing


def test_a_flag_of_1_1_0_binds_nothing_when_its_commit_holds_two_files_of_its_uuid(store: Path) -> None:
    place_record(store, _low())
    place_record(store, _low(), benchmark="other-bench")
    _event(store, FIXED_UUID, 1)
    bad = _sneak(store, "two files of one uuid and a flag, without the hooks")
    code, report = _audit(store)
    assert code == 1
    scores = [f for f in report["findings"] if f["check"] == "score" and f["file"].startswith(bad)]
    assert len(scores) == 2
    unmatched = [f for f in report["findings"] if f["check"] == "flag-unmatched"]
    assert unmatched and "no single record carries the uuid" in unmatched[0]["message"]


# --- eee flag -----------------------------------------------------------------------------------


def test_eee_flag_names_the_record_s_path_and_bytes_and_the_gate_accepts_exactly_that(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from eee.cli import main

    rel = _rel(store, place_record(store, _low()))
    _sneak(store, "an out-of-bounds record, without the hooks")
    monkeypatch.setenv("EEE_PYTHON", sys.executable)
    argv = ["flag", FIXED_UUID[:8], "--rule", "score", "--json-path", SCORE, "--reason", "HELM's -1", "--commit"]
    assert main([*argv, "--store", str(store)]) == 0, capsys.readouterr()
    event = next((store / "governance" / "events").glob("*.yaml")).read_text()
    assert 'event_schema: "1.2.0"' in event and f"record_path: {rel}" in event
    assert f"sha256: {hashlib.sha256((store / rel).read_bytes()).hexdigest()}" in event
    code, report = _audit(store)
    assert code == 0, report["findings"]  # the record's commit: flagged afterwards
    # a rule no flag may accept: refused, nothing written
    capsys.readouterr()
    argv = ["flag", FIXED_UUID[:8], "--rule", "schema", "--json-path", SCORE, "--reason", "x", "--store", str(store)]
    assert main(argv) == 1
    assert "a flag never accepts a finding of rule 'schema'" in capsys.readouterr().err
    assert len(list((store / "governance" / "events").glob("*.yaml"))) == 1
    # a flag that accepts nothing is written with a warning (exit 2)
    argv = ["flag", FIXED_UUID[:8], "--rule", "near-miss", "--json-path", "$.model_info", "--reason", "x"]
    assert main([*argv, "--store", str(store)]) == 2
    assert "[flag-unmatched] warning: the flag accepts nothing" in capsys.readouterr().err
