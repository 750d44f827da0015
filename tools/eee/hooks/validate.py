"""Hook ``eee-validate``: every staged record, sidecar and pointer through the validator.

Errors block the commit; warnings are shown and let it through.
"""

from __future__ import annotations

from eee.hooks import data_paths, emit_summary
from eee.validate import run


def main(argv: list[str]) -> int:
    paths = data_paths(argv)
    if not paths:
        return 0
    from eee.flagged import summary_without_flagged

    return emit_summary(summary_without_flagged(run(paths)))
