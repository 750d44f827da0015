"""The report of an export (``OUT/migration-report.json``): one outcome per record, and the counts.

Format ``eee-migration-report/1``::

    {"format", "target", "output", "exit_code",
     "summary": {"records", "migrated", "unchanged", "refused", "sidecars", "sidecar_rows",
                 "warnings", "by_source_version", "refused_by_check", "refused_by_reason"},
     "records": [{"file", "kind", "status", "from", "to", "output", "reason", "filled",
                  "converted" (a count), "moved", "derived", "sidecar", "findings"}]}

``refused_by_reason`` counts refusals by their first message with numbers and quoted values
masked, so alike reasons count together.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from eee.findings import ERROR, WARNING, Finding
from eee.migrate.changes import Changes

REPORT_NAME = "migration-report.json"
REPORT_FORMAT = "eee-migration-report/1"
MIGRATED, UNCHANGED, REFUSED = "migrated", "unchanged", "refused"


class Outcome:
    """What happened to one record (with its sidecar), or to a sidecar that has no record."""

    __slots__ = ("changes", "file", "findings", "kind", "output", "sidecar", "source", "status", "target")

    def __init__(self, file: str, kind: str, target: str) -> None:
        self.file = file
        self.kind = kind
        self.target = target
        self.output: str | None = None  # path of the copy, relative to the output folder
        self.status = REFUSED
        self.source: str | None = None
        self.changes = Changes()
        self.findings: list[Finding] = []
        self.sidecar: dict[str, Any] | None = None

    @property
    def reason(self) -> str | None:
        errors = [f for f in self.findings if f.severity == ERROR]
        return errors[0].message if self.status == REFUSED and errors else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "kind": self.kind,
            "status": self.status,
            "from": self.source,
            "to": self.target,
            "output": self.output if self.status != REFUSED else None,
            "reason": self.reason,
            "filled": self.changes.filled,
            "converted": len(self.changes.converted),
            "moved": self.changes.moved,
            "derived": self.changes.derived,
            "sidecar": self.sidecar,
            "findings": [f.to_dict() for f in self.findings],
        }


def reason_class(message: str) -> str:
    """A refusal message with its numbers and quoted values masked, to count alike reasons together."""
    masked = re.sub(r"'[^']*'", "'…'", message)
    return re.sub(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", "N", masked)


class ExportReport:
    """Every outcome of one export, and where the copies went."""

    def __init__(self, out: Path, target: str) -> None:
        self.out = out
        self.target = target
        self.outcomes: list[Outcome] = []

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    def exit_code(self) -> int:
        """0 when every unit migrated (or was already at the target), 1 when any was refused."""
        return 1 if self.count(REFUSED) else 0

    def summary(self) -> dict[str, Any]:
        by_source: dict[str, int] = {}
        by_check: dict[str, int] = {}
        by_reason: dict[str, int] = {}
        for o in self.outcomes:
            if o.source:
                by_source[o.source] = by_source.get(o.source, 0) + 1
            if o.status == REFUSED and o.reason:
                first = next(f for f in o.findings if f.severity == ERROR)
                by_check[first.check] = by_check.get(first.check, 0) + 1
                key = reason_class(o.reason)
                by_reason[key] = by_reason.get(key, 0) + 1
        sidecars = [o.sidecar for o in self.outcomes if o.sidecar]
        return {
            "records": sum(1 for o in self.outcomes if o.kind == "record"),
            MIGRATED: self.count(MIGRATED),
            UNCHANGED: self.count(UNCHANGED),
            REFUSED: self.count(REFUSED),
            "sidecars": len(sidecars),
            "sidecar_rows": sum(s.get("rows") or 0 for s in sidecars),
            "warnings": sum(1 for o in self.outcomes for f in o.findings if f.severity == WARNING),
            "by_source_version": dict(sorted(by_source.items())),
            "refused_by_check": dict(sorted(by_check.items())),
            "refused_by_reason": dict(sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "format": REPORT_FORMAT,
            "target": self.target,
            "output": str(self.out),
            "summary": self.summary(),
            "exit_code": self.exit_code(),
            "records": [o.to_dict() for o in self.outcomes],
        }
