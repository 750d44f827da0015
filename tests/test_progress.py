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
