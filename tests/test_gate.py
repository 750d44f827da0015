"""The lean gate: the same hooks as pre-commit, on what is staged, with real git commits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import commit, git, hook_env, load_example, make_store, place_record

pytestmark = pytest.mark.slow

RECORD = "v0.3.0_perplexity_unbounded.json"
OTHER = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"


def _eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    repo = make_store(tmp_path)
    proc = _eee(repo, "gate", "install")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "eee lean gate" in (repo / ".git" / "hooks" / "pre-commit").read_text()
    return repo


def _out(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


def test_valid_commits_and_invalid_is_blocked(store: Path) -> None:
    good = place_record(store, load_example("aggregate", "valid", RECORD))
    git(store, "add", "-A")
    proc = commit(store, "a record")
    assert proc.returncode == 0, _out(proc)
    assert "eee: sidecars outside git, naming, validation, duplicates" in _out(proc)
    assert "Passed" in _out(proc)
    bad = load_example("aggregate", "valid", RECORD)
    del bad["eval_library"]
    place_record(store, bad, record_uuid=OTHER)
    git(store, "add", "-A")
    proc = commit(store, "a broken record")
    assert proc.returncode != 0
    assert '"eval_library" is a required property' in _out(proc)
    # and an accepted record may not change
    git(store, "reset", "-q", "--hard")
    good.write_text(good.read_text().replace("8.7939", "8.8"))
    git(store, "add", "-A")
    proc = commit(store, "edit")
    assert proc.returncode != 0
    assert "modifies an accepted record" in _out(proc)


def test_unstaged_changes_hand_over_to_pre_commit(store: Path) -> None:
    """The hooks read the work tree; when it differs from what is staged, pre-commit checks the staged content."""
    doc = load_example("aggregate", "valid", RECORD)
    path = place_record(store, doc)
    git(store, "add", "-A")
    broken = dict(doc)
    del broken["eval_library"]
    path.write_text(json.dumps(broken))  # the work tree is broken, the index is fine
    proc = commit(store, "the staged record is valid")
    assert "running pre-commit instead" in _out(proc)
    assert proc.returncode == 0, _out(proc)
    assert json.loads(git(store, "show", f"HEAD:{path.relative_to(store).as_posix()}").stdout)["eval_library"]


def test_skip_is_honoured(store: Path) -> None:
    place_record(store, load_example("aggregate", "valid", RECORD))
    place_record(store, load_example("aggregate", "valid", RECORD), record_uuid=OTHER)
    git(store, "add", "-A")
    env = dict(hook_env(), SKIP="eee-records")
    proc = git(store, "commit", "-m", "two", check=False, env=env)
    assert proc.returncode == 0
    assert "sidecars outside git, naming, validation, duplicates" in proc.stdout + proc.stderr
    assert "Skipped" in proc.stdout + proc.stderr


def test_uninstall_restores_pre_commit(store: Path) -> None:
    assert _eee(store, "gate", "uninstall").returncode == 0
    hook = (store / ".git" / "hooks" / "pre-commit").read_text()
    assert "eee lean gate" not in hook and "pre-commit" in hook
