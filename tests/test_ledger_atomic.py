"""--commit is atomic (issue 13 item 9): the event exists exactly when its commit does, even
when the tool is killed mid-commit; the commit holds exactly the governance files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXED_UUID, PROJECT, commit, git, hook_env, load_example, make_store, place_record
from eee.write.commit import JOURNAL

pytestmark = pytest.mark.slow


@pytest.fixture
def store(tmp_path: Path) -> Path:
    repo = make_store(tmp_path)
    place_record(repo, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"))
    git(repo, "add", "-A")
    assert commit(repo, "a record").returncode == 0
    return repo


def _tool(repo: Path, *argv: str, **kw: object) -> subprocess.Popen[str]:
    env = {**hook_env(), "EEE_PYTHON": sys.executable}
    return subprocess.Popen(
        [sys.executable, str(PROJECT / "tools" / argv[0]), *argv[1:]],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kw,  # type: ignore[arg-type]
    )


def _hang_in(repo: Path, hook: str) -> Path:
    """Make the git hook ``hook`` touch a marker, then sleep (the original hook runs after)."""
    marker = repo.parent / f"{hook}-started"
    path = repo / ".git" / "hooks" / hook
    original = path.with_name(hook + ".orig")
    if path.exists():
        path.rename(original)
    path.write_text(
        f"#!/bin/sh\ntouch {marker}\nsleep 60\n" + (f'exec "{original}" "$@"\n' if original.exists() else "")
    )
    path.chmod(0o755)
    return marker


def _kill_when(proc: subprocess.Popen[str], marker: Path) -> None:
    while not marker.exists():
        assert proc.poll() is None, ("the tool ended before the hook started", proc.communicate())
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _events(repo: Path) -> list[Path]:
    return sorted((repo / "governance" / "events").glob("*.yaml"))


def _status(repo: Path) -> str:
    proc = _tool(repo, "status", FIXED_UUID)
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    return out


def test_killed_during_the_pre_commit_hook_leaves_no_event(store: Path) -> None:
    head = git(store, "rev-parse", "HEAD").stdout
    marker = _hang_in(store, "pre-commit")
    _kill_when(_tool(store, "retract", FIXED_UUID, "--reason", "killed mid-commit", "--commit"), marker)
    assert git(store, "rev-parse", "HEAD").stdout == head  # no commit
    # the next governance tool undoes what the dead run left
    out = _status(store)
    assert "status       active" in out and "(no events)" in out
    assert _events(store) == []
    assert git(store, "status", "--porcelain").stdout == ""
    assert not (store / ".git" / JOURNAL).exists()


def test_killed_after_the_commit_finishes_the_job(store: Path) -> None:
    marker = _hang_in(store, "post-commit")
    _kill_when(_tool(store, "retract", FIXED_UUID, "--reason", "killed after the commit", "--commit"), marker)
    (event,) = _events(store)
    assert git(store, "show", "--name-only", "--format=", "HEAD").stdout.split() == [
        event.relative_to(store).as_posix()
    ]
    out = _status(store)
    assert "status       retracted: killed after the commit" in out and "(uncommitted)" not in out
    assert git(store, "status", "--porcelain").stdout == ""


def test_the_commit_holds_only_the_event_whatever_else_is_staged(store: Path) -> None:
    (store / "notes.txt").write_text("work in progress\n")
    git(store, "add", "notes.txt")
    proc = _tool(store, "retract", FIXED_UUID, "--reason", "only the event", "--commit")
    _, err = proc.communicate()
    assert proc.returncode == 0, err
    changed = git(store, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert len(changed) == 1 and changed[0].startswith("governance/events/")
    assert git(store, "status", "--porcelain").stdout == "A  notes.txt\n"


def test_a_refused_commit_leaves_nothing(store: Path) -> None:
    hook = store / ".git" / "hooks" / "pre-commit"
    hook.rename(hook.with_name("pre-commit.orig"))
    hook.write_text("#!/bin/sh\necho 'refused by a hook' >&2\nexit 1\n")
    hook.chmod(0o755)
    head = git(store, "rev-parse", "HEAD").stdout
    proc = _tool(store, "retract", FIXED_UUID, "--reason", "refused", "--commit")
    _, err = proc.communicate()
    assert proc.returncode == 1 and "refused by a hook" in err
    assert git(store, "rev-parse", "HEAD").stdout == head and _events(store) == []
    assert git(store, "status", "--porcelain").stdout == ""
