"""What a check reports: one finding per problem, with file, location, message and hint."""

from __future__ import annotations

from typing import Any, Literal

# Plain classes rather than dataclasses: hooks import this module, and importing
# dataclasses (with inspect) costs more than a hook's checks.

Severity = Literal["error", "warning"]
ERROR: Severity = "error"
WARNING: Severity = "warning"


class Finding:
    """One problem: where (file, JSON path, line), what, how to fix it, how bad, which check."""

    __slots__ = ("check", "file", "hint", "line", "message", "pointer", "severity")

    def __init__(
        self,
        file: str,
        pointer: str,
        message: str,
        hint: str | None = None,
        line: int | None = None,
        severity: Severity = ERROR,
        check: str = "schema",
    ) -> None:
        self.file = file
        self.pointer = pointer
        self.message = message
        self.hint = hint
        self.line = line
        self.severity = severity
        self.check = check

    def __repr__(self) -> str:
        return f"Finding({self.one_line()!r}, severity={self.severity!r}, check={self.check!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and self.to_dict() == other.to_dict()

    def location(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}::{self.pointer}"

    def one_line(self) -> str:
        return f"{self.location()}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "pointer": self.pointer,
            "message": self.message,
            "hint": self.hint,
            "line": self.line,
            "severity": self.severity,
            "check": self.check,
        }


class FileResult:
    """Everything found in one file (kind: record, sidecar, dvc-pointer, event, commit, ...)."""

    __slots__ = ("file", "findings", "kind", "rows", "schema_version", "suppressed")

    def __init__(
        self,
        file: str,
        kind: str,
        schema_version: str | None = None,
        rows: int | None = None,
        findings: list[Finding] | None = None,
        suppressed: int = 0,
    ) -> None:
        self.file = file
        self.kind = kind
        self.schema_version = schema_version
        self.rows = rows
        self.findings: list[Finding] = findings if findings is not None else []
        self.suppressed = suppressed  # errors beyond the per-file cap

    def __repr__(self) -> str:
        return f"FileResult({self.file!r}, {self.kind!r}, errors={self.errors}, warnings={self.warnings})"

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == ERROR) + self.suppressed

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == WARNING)


class Summary:
    """The results of one run; ``fatal`` is a problem that stopped it (e.g. a pin mismatch)."""

    def __init__(self, results: list[FileResult], fatal: str | None = None) -> None:
        self.results = results
        self.fatal = fatal

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
            "files": sum(1 for r in self.results if r.kind != "input"),  # input problems are not files checked
            "records": by_kind.get("record", 0),
            "sidecars": by_kind.get("sidecar", 0),
            "sidecar_rows": sum(r.rows or 0 for r in self.results if r.kind == "sidecar"),
            "files_with_errors": sum(1 for r in self.results if r.errors),
            "errors": self.errors,
            "warnings": self.warnings,
            "by_kind": dict(sorted(by_kind.items())),
            "records_by_schema_version": dict(sorted(by_version.items())),
        }


class Refused(Exception):
    """An action refused, with the findings that say why (the one refusal exception).

    Tools raise it instead of a message-and-hint exception of their own; commands print
    the findings to stderr (one line each, plus the hint) and exit 1.
    """

    def __init__(self, findings: Finding | list[Finding]) -> None:
        self.findings = [findings] if isinstance(findings, Finding) else list(findings)
        super().__init__("; ".join(f.one_line() if f.file else f.message for f in self.findings))


def refusal(
    message: str, hint: str | None = None, *, file: str = "", pointer: str = "$", check: str = "refused"
) -> Refused:
    """A :class:`Refused` with one finding; ``file`` empty when the refusal names no file
    (commands then name themselves: ``eee retract: message``)."""
    return Refused(Finding(file, pointer, message, hint, check=check))
