"""What the store's ledger settles in ``eee validate`` (the pipeline's validate stage).

A warning on a record that no longer counts (retracted, superseded, marked a duplicate),
and a flag that accepts nothing once it is resolved, are settled (:mod:`eee.rules.settle`):
left out of the run, so the pipeline exits 0 once every warning is settled. The findings of
a record already committed (in HEAD) get the hints of a committed record: the exact
command of an action that immutability allows, not "rename" or "move". Files not committed
yet keep the hints that fix them before the commit.

The ledger is the store's as it is (:func:`eee.rules.ledger.read_ledger`: committed events,
then the ones not committed yet): what ``eee status`` and the catalogue read. It is read once,
and only when a batch holds a finding it could settle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from eee.reporting.findings import WARNING, FileResult, Finding
from eee.rules.registry import FLAGGABLE
from eee.rules.settle import Settled, record_rel, unsettled, with_committed_hints


def _candidate(f: Finding) -> bool:
    return f.severity == WARNING or f.check in FLAGGABLE or f.check == "flag-unmatched"


class LedgerSettled:
    """A validator run's results, a batch at a time (:class:`eee.reporting.reporters.Streamed`):
    settled findings left out, committed records' hints replaced. ``cwd``: the store (default:
    the git work tree of the current folder); outside git nothing is settled."""

    def __init__(self, cwd: str | Path | None = None) -> None:
        self.cwd = cwd
        self._ready = False
        self.root: Path | None = None
        self.tree: Any = None
        self.settled: Settled | None = None

    def _start(self) -> None:
        self._ready = True
        from eee.git.cli import GitError, toplevel
        from eee.rules.ledger import read_ledger
        from eee.store.tree import WorkTree

        try:
            self.root = toplevel(self.cwd)
        except GitError:
            return
        self.tree = WorkTree(self.root)
        self.settled = Settled(read_ledger(self.root))

    def _rel(self, f: Finding) -> str | None:
        return self.tree.rel(os.path.abspath(f.file)) if self.tree is not None else None

    def __call__(self, results: Iterable[FileResult]) -> None:
        results = [r for r in results if any(_candidate(f) for f in r.findings)]
        if not results:
            return
        if not self._ready:
            self._start()
        if self.settled is None:
            return
        from eee.git.cli import batch_check

        for result in results:
            result.findings = unsettled(result.findings, self.settled, self._rel)
        rels = {rel for r in results for f in r.findings if _candidate(f) and (rel := self._rel(f)) is not None}
        if not rels:
            return
        at_head = batch_check(sorted({f"HEAD:{record_rel(rel)}" for rel in rels}), self.root)

        def committed(f: Finding) -> str | None:  # a record committed, or the sidecar of one
            rel = self._rel(f)
            return rel if rel is not None and f"HEAD:{record_rel(rel)}" in at_head else None

        for result in results:
            with_committed_hints(result.findings, committed, self.root)
