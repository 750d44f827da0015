"""Hook ``eee-samples``: a ``*_samples.jsonl`` is never committed to git, only its DVC pointer."""

from __future__ import annotations

from eee.hooks import data_paths, emit
from eee.rules.commit import sample_findings


def main(argv: list[str]) -> int:
    return emit(sample_findings(data_paths(argv)))
