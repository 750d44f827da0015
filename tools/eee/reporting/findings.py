"""What a check reports: one finding per problem, with file, location, message and hint."""

from __future__ import annotations

from typing import Any, Literal

# Plain classes rather than dataclasses: hooks import this module, and importing
# dataclasses (with inspect) costs more than a hook's checks.

Severity = Literal["error", "warning"]
ERROR: Severity = "error"
WARNING: Severity = "warning"


class Finding:
    """One problem: where (file, JSON path, line), what, how to fix it, how bad, which check.

    ``check`` is the id of a registered rule (:mod:`eee.rules.registry`); every finding
    names one (a test holds every id the package emits registered)."""

    __slots__ = ("check", "file", "hint", "line", "message", "pointer", "severity")

    def __init__(
        self,
        file: str,
        pointer: str,
        message: str,
        hint: str | None = None,
        line: int | None = None,
        severity: Severity = ERROR,
        *,
        check: str,
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


class Tally:
    """The counts of a run (:meth:`Summary.counts`), added up one result at a time: a run
    streamed to its report keeps these instead of its results."""

    __slots__ = ("by_kind", "by_version", "errors", "files", "files_with_errors", "sidecar_rows", "warnings")

    def __init__(self) -> None:
        self.files = self.sidecar_rows = self.files_with_errors = self.errors = self.warnings = 0
        self.by_kind: dict[str, int] = {}
        self.by_version: dict[str, int] = {}

    def add(self, r: FileResult) -> None:
        kind = r.kind
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        if kind != "input":  # input problems are not files checked
            self.files += 1
        if kind == "record":
            key = r.schema_version or "unknown"
            self.by_version[key] = self.by_version.get(key, 0) + 1
        elif kind == "sidecar":
            self.sidecar_rows += r.rows or 0
        if r.findings or r.suppressed:
            errors = r.errors
            self.errors += errors
            self.warnings += r.warnings
            if errors:
                self.files_with_errors += 1

    def merge(self, other: Tally) -> None:
        self.files += other.files
        self.sidecar_rows += other.sidecar_rows
        self.files_with_errors += other.files_with_errors
        self.errors += other.errors
        self.warnings += other.warnings
        for mine, theirs in ((self.by_kind, other.by_kind), (self.by_version, other.by_version)):
            for key, n in theirs.items():
                mine[key] = mine.get(key, 0) + n

    def counts(self, fatal: str | None = None) -> dict[str, Any]:
        return {
            "files": self.files,
            "records": self.by_kind.get("record", 0),
            "sidecars": self.by_kind.get("sidecar", 0),
            "sidecar_rows": self.sidecar_rows,
            "files_with_errors": self.files_with_errors,
            "errors": self.errors + (1 if fatal else 0),
            "warnings": self.warnings,
            "by_kind": dict(sorted(self.by_kind.items())),
            "records_by_schema_version": dict(sorted(self.by_version.items())),
        }


class Summary:
    """The results of one run; ``fatal`` is a problem that stopped it (e.g. a pin mismatch).

    A run streamed to its report (``eee validate``) keeps only the results with findings;
    ``tally`` then carries the counts of all of them."""

    def __init__(self, results: list[FileResult], fatal: str | None = None, tally: Tally | None = None) -> None:
        self.results = results
        self.fatal = fatal
        self.tally = tally

    def _tally(self) -> Tally:
        if self.tally is not None:
            return self.tally
        tally = Tally()
        for r in self.results:
            tally.add(r)
        return tally

    @property
    def errors(self) -> int:
        if self.tally is not None:
            return self.tally.errors + (1 if self.fatal else 0)
        return sum(r.errors for r in self.results) + (1 if self.fatal else 0)

    @property
    def warnings(self) -> int:
        if self.tally is not None:
            return self.tally.warnings
        return sum(r.warnings for r in self.results)

    def exit_code(self) -> int:
        """0 clean, 1 any error, 2 warnings only."""
        if self.errors:
            return 1
        if self.warnings:
            return 2
        return 0

    def counts(self) -> dict[str, Any]:
        return self._tally().counts(self.fatal)


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
