"""Hook ``eee-validate``: every staged record, sidecar and pointer through the validator.

Errors block the commit; warnings are shown and let it through.
"""

from __future__ import annotations

from eee.hooks import data_paths, emit
from eee.validate import run


def main(argv: list[str]) -> int:
    paths = data_paths(argv)
    if not paths:
        return 0
    summary = run(paths)
    if summary.fatal:
        print(summary.fatal)
        return 1
    code = emit(f for r in summary.results for f in r.findings)
    for r in summary.results:
        if r.suppressed:
            print(f"{r.file}: ... {r.suppressed} more errors not shown (run `eee validate {r.file}`)")
            code = 1
    return code
