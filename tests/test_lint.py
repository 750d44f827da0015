"""The code base stays clean under the project's ruff configuration."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_the_floors_hold() -> None:
    """tools/eee reads top-down: `lint-imports` checks the layers contract of pyproject.toml
    (docs/guide/architecture.md draws it), imports inside functions included."""
    lint_imports = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run([str(lint_imports), "--no-cache"], cwd=PROJECT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Contracts: 1 kept, 0 broken." in proc.stdout
