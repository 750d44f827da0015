"""The report of an export (``OUT/migration-report.json``): one outcome per record, and the counts.

Format ``eee-migration-report/1``::

    {"format", "target", "output", "exit_code",
     "summary": {"records", "migrated", "unchanged", "refused", "sidecars", "sidecar_rows",
                 "warnings", "by_source_version", "refused_by_check", "refused_by_reason"},
     "records": [{"file", "kind", "status", "from", "to", "output", "reason", "filled",
                  "converted" (a count), "moved", "derived", "sidecar", "findings",
                  "flags", "flags_resolved"}]}

``flags``: the flags of the store that the record was accepted through and that its copy
carries (event, rule, JSON path in the copy); ``flags_resolved``: those whose finding the
migration itself resolved (the copy no longer breaks the rule there).

``refused_by_reason`` counts refusals by their first message with numbers and quoted values
masked, so alike reasons count together.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

import orjson

from eee.migrate.changes import Changes
from eee.reporting.findings import ERROR, WARNING, FileResult, Finding

REPORT_NAME = "migration-report.json"
REPORT_FORMAT = "eee-migration-report/1"
MIGRATED, UNCHANGED, REFUSED = "migrated", "unchanged", "refused"


class Outcome:
    """What happened to one record (with its sidecar), or to a sidecar that has no record."""

    __slots__ = (
        "changes",
        "file",
        "findings",
        "flags",
        "flags_resolved",
        "kind",
        "output",
        "sidecar",
        "source",
        "status",
        "target",
    )

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
        self.flags: list[dict[str, str]] = []  # carried by the copy
        self.flags_resolved: list[dict[str, str]] = []  # their finding resolved by the migration

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
            "flags": self.flags,
            "flags_resolved": self.flags_resolved,
        }


def reason_class(message: str) -> str:
    """A refusal message with its numbers and quoted values masked, to count alike reasons together."""
    masked = re.sub(r"'[^']*'", "'…'", message)
    return re.sub(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", "N", masked)


class ExportReport:
    """The counts of one export, and its report written as it goes.

    Each outcome is counted and written to a spool file (:meth:`add`), then dropped; only the
    findings of outcomes that have some are kept (:attr:`problems`, for the command's text output).
    :meth:`finish` writes ``OUT/migration-report.json``: the head with the counts, then the
    spooled entries. The report holds the same bytes as the whole document written at once
    would (orjson, OPT_INDENT_2), without a store's worth of entries in memory.
    """

    def __init__(self, out: Path, target: str) -> None:
        self.out = out
        self.target = target
        self.units = 0  # outcomes added: records, and sidecars without a record
        self.problems: list[FileResult] = []  # the outcomes with findings, in order
        self._records = 0
        self._status = {MIGRATED: 0, UNCHANGED: 0, REFUSED: 0}
        self._sidecars = 0
        self._sidecar_rows = 0
        self._warnings = 0
        self._by_source: dict[str, int] = {}
        self._by_check: dict[str, int] = {}
        self._by_reason: dict[str, int] = {}
        self._spool: IO[bytes] | None = None

    def add(self, o: Outcome) -> None:
        """Count one outcome and write its entry; the outcome is kept only when it has findings."""
        self.units += 1
        if o.kind == "record":
            self._records += 1
        self._status[o.status] = self._status.get(o.status, 0) + 1
        if o.source:
            self._by_source[o.source] = self._by_source.get(o.source, 0) + 1
        reason = o.reason
        if o.status == REFUSED and reason:
            first = next(f for f in o.findings if f.severity == ERROR)
            self._by_check[first.check] = self._by_check.get(first.check, 0) + 1
            key = reason_class(reason)
            self._by_reason[key] = self._by_reason.get(key, 0) + 1
        if o.sidecar:
            self._sidecars += 1
            self._sidecar_rows += o.sidecar.get("rows") or 0
        if o.findings:
            self._warnings += sum(1 for f in o.findings if f.severity == WARNING)
            self.problems.append(FileResult(o.file, o.kind, o.source, findings=o.findings))
        if self._spool is None:
            self._spool = tempfile.TemporaryFile(dir=self.out)  # noqa: SIM115 (closed by close()); unnamed where the OS allows it
            self._spool.write(b"\n    ")
        else:
            self._spool.write(b",\n    ")
        self._spool.write(orjson.dumps(o.to_dict(), option=orjson.OPT_INDENT_2).replace(b"\n", b"\n    "))

    def count(self, status: str) -> int:
        return self._status.get(status, 0)

    def exit_code(self) -> int:
        """0 when every unit migrated (or was already at the target), 1 when any was refused."""
        return 1 if self.count(REFUSED) else 0

    def summary(self) -> dict[str, Any]:
        return {
            "records": self._records,
            MIGRATED: self.count(MIGRATED),
            UNCHANGED: self.count(UNCHANGED),
            REFUSED: self.count(REFUSED),
            "sidecars": self._sidecars,
            "sidecar_rows": self._sidecar_rows,
            "warnings": self._warnings,
            "by_source_version": dict(sorted(self._by_source.items())),
            "refused_by_check": dict(sorted(self._by_check.items())),
            "refused_by_reason": dict(sorted(self._by_reason.items(), key=lambda kv: (-kv[1], kv[0]))),
        }

    def head(self) -> dict[str, Any]:
        """The report without its ``records`` list."""
        return {
            "format": REPORT_FORMAT,
            "target": self.target,
            "output": str(self.out),
            "summary": self.summary(),
            "exit_code": self.exit_code(),
        }

    def write(self, fh: IO[bytes]) -> None:
        """The whole report: the head, then every entry spooled (read back in blocks)."""
        head = orjson.dumps(self.head(), option=orjson.OPT_INDENT_2)
        fh.write(head[:-2] + b',\n  "records": [')  # the head object without its closing "\n}"
        if self._spool is None:
            fh.write(b"]\n}\n")
            return
        self._spool.seek(0)
        shutil.copyfileobj(self._spool, fh)
        self._spool.seek(0, os.SEEK_END)
        fh.write(b"\n  ]\n}\n")

    def close(self) -> None:
        """Drop the spool (the report written, or the run abandoned)."""
        if self._spool is not None:
            self._spool.close()
            self._spool = None
