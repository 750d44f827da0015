"""Pre-commit hooks: one module per hook, each ``main(argv) -> int``.

They run from ``tools/hook`` in the project's own environment (see .pre-commit-config.yaml)
and look only at what is staged and the few paths they must compare with.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import IO

from eee.reporting.findings import ERROR, Finding, Summary
from eee.reporting.reporters import text_lines
from eee.reporting.shown import command

HOOKS = (
    "validate",
    "naming",
    "immutable",
    "samples",
    "duplicates",
    "events",
    "imports",
    "experiments",
    "authority",
    "index",
    "push",
)

# (location, message) of what this process has printed, when several hooks share it
# (python -m eee.hooks): naming and validate both see a bad path, the reader once.
shown: set[tuple[str, str]] | None = None


def emit(findings: Iterable[Finding], stream: IO[str] | None = None) -> int:
    """Print findings one per line with their hints; 1 when any is an error, else 0.

    A finding another hook of this process already printed (same place, same message) is
    not printed again; it still counts for the exit code."""

    stream = stream or sys.stdout
    code = 0
    for f in findings:
        if f.severity == ERROR:
            code = 1
        if shown is not None:
            key = (f"{f.file}::{f.pointer}", f.message)  # with or without a line: the same place
            if key in shown:
                continue
            shown.add(key)
        stream.write("\n".join(text_lines(f)) + "\n")
    return code


def emit_summary(summary: Summary) -> int:
    """Print a validator run the way the hooks do: its fatal problem, or its findings and
    the per-file counts the error cap left out; 1 when anything is an error."""
    if summary.fatal:
        print(summary.fatal)
        return 1
    code = emit(f for r in summary.results for f in r.findings)
    for r in summary.results:
        if r.suppressed:
            print(f"{r.file}: ... {r.suppressed} more errors not shown (run `{command('validate', r.file)}`)")
            code = 1
    return code


def data_paths(argv: Iterable[str]) -> list[str]:
    """Repository-relative paths under data/ (pre-commit passes them relative to the root)."""
    return [p.replace("\\", "/") for p in argv if p.replace("\\", "/").startswith("data/")]
