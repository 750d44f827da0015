"""What researchers get out of instance-level data: sample-by-sample comparison of two
runs (:mod:`eee.analysis.compare`), a Rasch fit over a benchmark's records
(:mod:`eee.analysis.irt`), and the pages with plots the pipeline writes for the site
(:mod:`eee.analysis.pages`, :mod:`eee.analysis.svg`).

numpy and scipy are imported inside the functions: nothing here is on the hook path.
"""

from __future__ import annotations

import sys

from eee.findings import Refused


def print_refused(exc: Refused, stream: object = None) -> None:
    """A refusal on stderr: one line per finding, plus its hint."""
    from eee.report import text_lines

    out = stream if stream is not None else sys.stderr
    for f in exc.findings:
        for line in text_lines(f):
            print(line, file=out)  # type: ignore[call-overload]
