"""The code base stays clean under the project's ruff configuration."""

from __future__ import annotations

import subprocess
import sys

from conftest import PROJECT


def test_ruff_check_passes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "tools", "tests", "benchmarks"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_applied() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "tools", "tests", "benchmarks"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
