"""The progress bar (eee.reporting.progress.bar) draws on stderr when stderr is a terminal, never on stdout."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from conftest import PROJECT

SCRIPT = """
import sys, time
sys.path.insert(0, sys.argv[1])
from eee.reporting.progress import bar
with bar("checking", min_total=1) as update:
    for done in range(1, 4):
        update(done, 3)
        time.sleep(0.15)
print("report")
"""


def test_the_bar_draws_on_the_terminal_stderr_and_leaves_stdout_to_the_report() -> None:
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(PROJECT / "tools")],
            stdout=subprocess.PIPE,
            stderr=follower,
            env=dict(os.environ, TERM="xterm", COLUMNS="80"),
        )
        os.close(follower)
        follower = -1
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all of it read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert proc.returncode == 0
    assert proc.stdout == b"report\n"
    assert b"checking" in drawn


def test_progress_lines_when_the_pipeline_asks_and_none_otherwise(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Under DVC a stage's stderr is no terminal: when the pipeline asks (EEE_PROGRESS_LINES),
    a long run prints plain lines, at most one every few seconds and always the last; else
    nothing."""
    from eee.reporting import progress

    monkeypatch.setenv(progress.ENV, "1")
    with progress.shown("checking", tty=False) as update:
        assert update is not None
        for done in range(1, 1001):
            update(done, 1000)
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "[progress] checking: 1,000/1,000"
    assert len(err) <= 3  # throttled: not one line per update
    monkeypatch.delenv(progress.ENV)
    with progress.shown("checking", tty=False) as update:
        assert update is None
    assert capsys.readouterr().err == ""


def test_the_audit_shows_its_progress(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from conftest import git, make_store

    repo = make_store(tmp_path, hooks=False)
    for i in range(3):
        (repo / f"note-{i}.txt").write_text(str(i))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--no-verify", "-m", f"commit {i}")
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "audit", "--store", str(repo)],
        capture_output=True,
        text=True,
        env=dict(os.environ, EEE_PROGRESS_LINES="1"),
    )
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[progress] auditing commits: ")]
    assert lines, proc.stderr
    done, total = lines[-1].rsplit(" ", 1)[1].split("/")
    assert done == total and int(total) >= 3  # every commit, the last line says so
