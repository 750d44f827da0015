"""Pre-commit hooks: one module per hook, each ``main(argv) -> int``.

They run from ``tools/hook`` in the project's own environment (see .pre-commit-config.yaml)
and look only at what is staged and the few paths they must compare with.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import IO

from eee.findings import ERROR, Finding

HOOKS = ("validate", "naming", "immutable", "samples", "duplicates", "events")


def emit(findings: Iterable[Finding], stream: IO[str] | None = None) -> int:
    """Print findings one per line with their hints; 1 when any is an error, else 0."""
    stream = stream or sys.stdout
    code = 0
    for f in findings:
        label = "" if f.severity == ERROR else "warning: "
        stream.write(f"{f.location()}: {label}{f.message}\n")
        if f.hint:
            stream.write(f"    hint: {f.hint}\n")
        if f.severity == ERROR:
            code = 1
    return code


def data_paths(argv: Iterable[str]) -> list[str]:
    """Repository-relative paths under data/ (pre-commit passes them relative to the root)."""
    return [p.replace("\\", "/") for p in argv if p.replace("\\", "/").startswith("data/")]
