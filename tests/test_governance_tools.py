"""The governance tools with real git and the real hooks: each success, each refusal,
concurrency, and a commit from a fresh clone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXED_UUID, PROJECT, commit, git, hook_env, make_store, place_record, record_of
from eee.commands.governance import run
from eee.commands.status import main as status_main
from eee.validation.validate import run as validate

pytestmark = pytest.mark.slow

A = FIXED_UUID
B = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"
MISSING = "99999999-9999-4999-8999-999999999999"


_doc = record_of  # the example record for another model (and score)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_store(tmp_path)
    place_record(repo, _doc("meta-llama/Llama-2-7b-hf"), record_uuid=A)
    place_record(repo, _doc("facebook/opt-6.7b"), record_uuid=B)
    git(repo, "add", "-A")
    assert commit(repo, "two records").returncode == 0
    monkeypatch.chdir(repo)
    monkeypatch.setenv("EEE_PYTHON", sys.executable)
    return repo


def _events(repo: Path) -> list[Path]:
    folder = repo / "governance" / "events"
    return sorted(folder.glob("*.yaml")) if folder.exists() else []


def _status(record: str, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert status_main([record, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_retract_writes_one_valid_event(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run("retract", [A, "--reason", "built on the wrong split", "--reference", "https://example.org/issue/1"]) == 0
    )
    (event,) = _events(store)
    assert validate([str(event)]).exit_code() == 0
    info = _status(A, capsys)
    assert info["status"] == "retracted"
    assert info["retraction_reason"] == "built on the wrong split"
    assert info["history"][0]["actor"] == {"name": "Test Contributor", "email": "contributor@example.org"}
    assert info["path"] == f"data/wikitext-2/meta-llama/Llama-2-7b-hf/{A}.json"


def test_retract_with_commit_passes_the_hooks(store: Path) -> None:
    assert run("retract", [A, "--reason", "duplicate of a later upload", "--commit"]) == 0
    changed = git(store, "show", "--name-status", "--format=%s", "HEAD").stdout.splitlines()
    assert changed[0] == f"Retract {A[:8]}: duplicate of a later upload"
    assert [line.split("\t")[0] for line in changed[2:] if line] == ["A"]
    assert git(store, "status", "--porcelain").stdout == ""


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([MISSING, "--reason", "x"], "no record 99999999"),
        ([A.upper(), "--reason", "x"], "has uppercase letters"),
        ([A, "--reason", "   "], "--reason is empty"),
    ],
    ids=["unknown_uuid", "uppercase_uuid", "empty_reason"],
)
def test_refusals_write_nothing(store: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert run("retract", argv) == 1
    assert message in capsys.readouterr().err
    assert _events(store) == []


def test_retracting_twice_is_refused(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("retract", [A, "--reason", "first"]) == 0
    assert run("retract", [A, "--reason", "second"]) == 1
    assert "is already retracted" in capsys.readouterr().err
    assert len(_events(store)) == 1


def test_reinstate_then_retract_again(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("reinstate", [A, "--reason", "not retracted"]) == 1
    assert run("retract", [A, "--reason", "looked wrong"]) == 0
    assert run("reinstate", [A, "--reason", "the numbers were right after all"]) == 0
    assert _status(A, capsys)["status"] == "active"
    assert run("retract", [A, "--reason", "now really wrong"]) == 0
    info = _status(A, capsys)
    assert [e["action"] for e in info["history"]] == ["retract", "reinstate", "retract"]


def test_supersede_with_a_file_places_the_corrected_record(store: Path, tmp_path: Path, capsys) -> None:
    corrected = _doc("meta-llama/Llama-2-7b-hf")
    corrected["evaluation_results"][0]["score_details"]["score"] = 8.7941
    source = tmp_path / "corrected.json"
    source.write_text(json.dumps(corrected))
    capsys.readouterr()
    assert (
        run("supersede", [A, str(source), "--reason", "fourth decimal was wrong", "--format", "json", "--commit"]) == 0
    )
    result = json.loads(capsys.readouterr().out)
    new = result["replacement"]
    assert new not in (A, B)
    assert result["replacement_path"] == f"data/wikitext-2/meta-llama/Llama-2-7b-hf/{new}.json"
    assert (
        json.loads((store / result["replacement_path"]).read_text())["evaluation_results"][0]["score_details"]["score"]
        == 8.7941
    )
    assert _status(A, capsys)["superseded_by"] == new
    assert _status(new, capsys)["preceded_by"] == A
    assert len(git(store, "show", "--name-only", "--format=", "HEAD").stdout.split()) == 2


def test_supersede_with_an_invalid_file_places_nothing(store: Path, tmp_path: Path, capsys) -> None:
    broken = _doc("meta-llama/Llama-2-7b-hf")
    del broken["eval_library"]
    source = tmp_path / "broken.json"
    source.write_text(json.dumps(broken))
    assert run("supersede", [A, str(source), "--reason", "fix"]) == 1
    assert "does not validate" in capsys.readouterr().err
    assert len(list((store / "data").rglob("*.json"))) == 2
    assert _events(store) == []


def test_supersede_cycle_and_retracted_replacement_are_refused(store: Path, capsys) -> None:
    assert run("supersede", [A, B, "--reason", "B is the corrected run"]) == 0
    assert run("supersede", [B, A, "--reason", "back again"]) == 1  # a cycle: A no longer stands
    assert f"the replacement {A} is superseded: it does not stand" in capsys.readouterr().err
    assert run("retract", [B, "--reason", "B was wrong too"]) == 0
    third = place_record(store, _doc("mistralai/Mistral-7B-v0.1"), record_uuid="2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d")
    assert third.exists()
    assert run("supersede", ["2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d", B, "--reason", "use B"]) == 1
    assert f"the replacement {B} is retracted: it does not stand" in capsys.readouterr().err
    assert run("supersede", [A, MISSING, "--reason", "x"]) == 1
    assert len(_events(store)) == 2


def test_dispute_and_resolve(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        run("dispute", [A, "--reason", "the harness version is wrong"])  # no --reference
    assert exc.value.code == 64
    assert (
        run("dispute", [A, "--reason", "the harness version is wrong", "--reference", "https://example.org/d/7"]) == 0
    )
    info = _status(A, capsys)
    assert info["status"] == "disputed" and info["dispute_reference"] == "https://example.org/d/7"
    assert run("resolve", [A, "--reason", "checked: the version is right", "--outcome", "upheld"]) == 0
    assert _status(A, capsys)["status"] == "active"
    assert run("resolve", [A, "--reason", "again", "--outcome", "upheld"]) == 1


def test_dry_run_writes_nothing(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("retract", [A, "--reason", "maybe", "--dry-run"]) == 0
    assert "would write governance/events/" in capsys.readouterr().out
    source = tmp_path / "c.json"
    source.write_text(json.dumps(_doc("meta-llama/Llama-2-7b-hf")))
    assert run("supersede", [A, str(source), "--reason", "maybe", "--dry-run"]) == 0
    assert _events(store) == []
    assert len(list((store / "data").rglob("*.json"))) == 2


def test_actor_must_be_configured(store: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    git(store, "config", "--unset", "user.name")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    assert run("retract", [A, "--reason", "x"]) == 1
    assert "user.name and user.email must be set" in capsys.readouterr().err
    assert _events(store) == []


def _tool(store: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(PROJECT / "tools" / args[0]), *args[1:]],
        cwd=store,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=hook_env(),
    )


def test_twenty_tools_at_once_on_different_records(store: Path) -> None:
    uuids = [f"{i:08x}-0000-4000-8000-{i:012x}" for i in range(1, 21)]
    for i, u in enumerate(uuids):
        place_record(store, _doc(f"org{i}/model{i}"), record_uuid=u)
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "twenty more")
    procs = [_tool(store, "retract", u, "--reason", f"batch {u[:8]}") for u in uuids]
    errors = [p.communicate()[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 20, errors
    events = _events(store)
    assert len(events) == 20
    assert validate([str(store / "governance")]).exit_code() == 0


def test_two_tools_at_once_on_the_same_record(store: Path) -> None:
    procs = [_tool(store, "retract", A, "--reason", f"attempt {i}") for i in range(2)]
    errors = [p.communicate()[1] for p in procs]
    results = [(p.returncode, err) for p, err in zip(procs, errors, strict=True)]
    assert sorted(code for code, _ in results) == [0, 1]
    assert any("is already retracted" in err for _, err in results)
    assert len(_events(store)) == 1


def test_retract_commit_in_a_fresh_clone(store: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    git(clone, "config", "user.name", "Maintainer")
    git(clone, "config", "user.email", "maintainer@example.org")
    subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"], cwd=clone, check=True, capture_output=True, env=hook_env()
    )
    before = git(clone, "rev-parse", "HEAD").stdout.strip()
    proc = subprocess.run(
        [str(PROJECT / "tools" / "retract"), A, "--reason", "scored against the wrong references", "--commit"],
        cwd=clone,
        capture_output=True,
        text=True,
        env=hook_env(),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(clone, "rev-list", "--count", f"{before}..HEAD").stdout.strip() == "1"
    added = git(clone, "show", "--name-status", "--format=", "HEAD").stdout.split()
    assert added[0] == "A" and added[1].startswith("governance/events/") and len(added) == 2


def test_hook_refuses_an_illegal_event_written_by_hand(store: Path) -> None:
    assert run("retract", [A, "--reason", "first", "--commit"]) == 0
    (first,) = _events(store)
    copy = first.with_name(first.stem[:-6] + "ffffff.yaml")
    text = first.read_text().replace(first.stem, copy.stem)
    copy.write_text(text)
    git(store, "add", "-A")
    proc = commit(store, "retract again by hand")
    assert proc.returncode == 1
    assert "is already retracted" in proc.stdout + proc.stderr


def test_an_event_for_a_record_outside_the_commit_is_refused(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The events hook looks records up in git's index, never among untracked files: a record
    that is only in the work tree is not in the commit (and finding it walked 230,000 files)."""
    C = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d"
    place_record(store, _doc("mistralai/Mistral-7B-v0.1"), record_uuid=C)  # written, never added
    assert run("retract", [C, "--reason", "never committed"]) == 0  # the tool reads the work tree
    capsys.readouterr()
    git(store, "add", "governance")
    proc = commit(store, "a retraction of a record outside the commit")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert C in proc.stdout + proc.stderr
