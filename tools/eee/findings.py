"""What a check reports: one finding per problem, with file, location, message and hint."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning"]
ERROR: Severity = "error"
WARNING: Severity = "warning"


@dataclass(slots=True)
class Finding:
    file: str
    pointer: str
    message: str
    hint: str | None = None
    line: int | None = None
    severity: Severity = ERROR
    check: str = "schema"

    def location(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}::{self.pointer}"

    def one_line(self) -> str:
        return f"{self.location()}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FileResult:
    """Everything found in one file."""

    file: str
    kind: str  # record, sidecar, pointer, event, other
    schema_version: str | None = None
    rows: int | None = None
    findings: list[Finding] = field(default_factory=list)
    suppressed: int = 0  # findings beyond the per-file cap

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == ERROR) + self.suppressed

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == WARNING)


@dataclass
class Summary:
    results: list[FileResult]
    fatal: str | None = None  # a problem that stopped the run (e.g. a schema pin mismatch)

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.results) + (1 if self.fatal else 0)

    @property
    def warnings(self) -> int:
        return sum(r.warnings for r in self.results)

    def exit_code(self) -> int:
        """0 clean, 1 any error, 2 warnings only."""
        if self.errors:
            return 1
        if self.warnings:
            return 2
        return 0

    def counts(self) -> dict[str, Any]:
        by_version: dict[str, int] = {}
        by_kind: dict[str, int] = {}
        for r in self.results:
            by_kind[r.kind] = by_kind.get(r.kind, 0) + 1
            if r.kind == "record":
                key = r.schema_version or "unknown"
                by_version[key] = by_version.get(key, 0) + 1
        return {
            "files": len(self.results),
            "records": by_kind.get("record", 0),
            "sidecars": by_kind.get("sidecar", 0),
            "sidecar_rows": sum(r.rows or 0 for r in self.results if r.kind == "sidecar"),
            "files_with_errors": sum(1 for r in self.results if r.errors),
            "errors": self.errors,
            "warnings": self.warnings,
            "by_kind": dict(sorted(by_kind.items())),
            "records_by_schema_version": dict(sorted(by_version.items())),
        }
