"""Flags: the gate accepts exactly the findings a record's flags name, nothing else.

A ``flag`` event (an expression of concern) names a record, a rule (the check of a
finding) and a JSON path. A finding on that record with the same check and the same JSON
path is *accepted*: the hooks and the audit do not count it. Every other finding, on the
same record or elsewhere, counts as before. The flag must be in the tree the gate checks
(committed with the record, or before it).

:func:`accept_flagged` is pure: the findings and the flags in, (kept, accepted) out. The
validate and naming hooks and ``eee audit`` call it with the flags of the tree they check
(:mod:`eee.validation.flagged` reads them).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from eee.reporting.findings import Finding
from eee.store.paths import RECORD_SUFFIX, UUID4_RE

Flags = Callable[[str], Collection[tuple[str, str]]]  # record uuid -> its flagged (rule, JSON path) pairs


def record_of(file: str) -> str | None:
    """The uuid of the record a finding's file names (``.../<uuid>.json``, any prefix)."""
    name = file.rsplit("/", 1)[-1]
    if not name.endswith(RECORD_SUFFIX):
        return None
    stem = name[: -len(RECORD_SUFFIX)]
    return stem if UUID4_RE.match(stem) else None


def records_of(findings: Iterable[Finding]) -> set[str]:
    """The uuids of the records the findings are about (whose flags are worth reading)."""
    return {u for u in (record_of(f.file) for f in findings) if u is not None}


def accept_flagged(findings: Iterable[Finding], flags: Flags) -> tuple[list[Finding], list[Finding]]:
    """(kept, accepted): a finding is accepted when it is on a record and a flag of that
    record names exactly its check and its JSON path."""
    kept: list[Finding] = []
    accepted: list[Finding] = []
    for f in findings:
        uuid = record_of(f.file)
        if uuid is not None and (f.check, f.pointer) in flags(uuid):
            accepted.append(f)
        else:
            kept.append(f)
    return kept, accepted
