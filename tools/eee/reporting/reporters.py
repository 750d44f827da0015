"""Reporters: one summary, three formats (``rich``, ``json``, ``github``), chosen by name
(:data:`REPORTERS`, :func:`reporter`): a command's result, a refusal and a validation summary.

The checks never print; they return findings. Reporters only print.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, NamedTuple

from eee.reporting.findings import WARNING, FileResult, Finding, Summary, Tally

FORMATS = ("rich", "json", "github")


def text_lines(f: Finding) -> list[str]:
    """One finding as text: ``location: [rule] [warning: ]message`` and an indented hint line
    (``eee rules RULE`` explains the rule)."""
    label = "warning: " if f.severity == WARNING else ""
    lines = [f"{f.location()}: [{f.check}] {label}{f.message}"]
    if f.hint:
        lines.append(f"    hint: {f.hint}")
    return lines


def summary_line(summary: Summary, what: str = "file") -> str:
    c = summary.counts()
    n = c["files"]
    parts = [f"{n} {what}{'' if n == 1 else 's'} checked"]
    errors, warnings = summary.errors, summary.warnings
    parts.append(f"{errors} error{'' if errors == 1 else 's'}")
    parts.append(f"{warnings} warning{'' if warnings == 1 else 's'}")
    return ", ".join(parts)


def render_rich(summary: Summary, stream: IO[str], what: str = "file") -> None:
    color = stream.isatty()
    if not color:
        for line in _plain(summary, what):
            stream.write(line + "\n")
        return
    from rich.console import Console  # lazy: rich costs ~90 ms; only the rich format needs it
    from rich.markup import escape  # lazy: with rich above

    console = Console(file=stream, highlight=False, soft_wrap=True)
    if summary.fatal:
        console.print(f"[bold red]{escape(summary.fatal)}[/]")
    for result in summary.results:
        for f in result.findings:
            style = "yellow" if f.severity == WARNING else "red"
            label = "warning: " if f.severity == WARNING else ""
            console.print(
                f"[bold]{escape(f.location())}[/]: {escape(f'[{f.check}]')} [{style}]{escape(label + f.message)}[/]"
            )
            if f.hint:
                console.print(f"    [dim]hint: {escape(f.hint)}[/]")
        if result.suppressed:
            console.print(f"[bold]{escape(result.file)}[/]: [red]... {result.suppressed} more errors not shown[/]")
    style = "red" if summary.errors else "yellow" if summary.warnings else "green"
    console.print(f"[{style}]{escape(summary_line(summary, what))}[/]")


def _plain(summary: Summary, what: str) -> list[str]:
    out = []
    if summary.fatal:
        out.append(summary.fatal)
    for result in summary.results:
        for f in result.findings:
            out.extend(text_lines(f))
        if result.suppressed:
            out.append(f"{result.file}: ... {result.suppressed} more errors not shown")
    out.append(summary_line(summary, what))
    return out


def _file_entry(r: Any) -> dict[str, Any]:
    return {
        "file": r.file,
        "kind": r.kind,
        "schema_version": r.schema_version,
        "rows": r.rows,
        "errors": r.errors,
        "warnings": r.warnings,
        "suppressed": r.suppressed,
    }


def _head(summary: Summary) -> dict[str, Any]:
    return {
        "format": "eee-validation-report/1",
        "summary": summary.counts(),
        "exit_code": summary.exit_code(),
        "fatal": summary.fatal,
    }


def to_json(summary: Summary) -> dict[str, Any]:
    return {
        **_head(summary),
        "files": [_file_entry(r) for r in summary.results],
        "findings": [f.to_dict() for r in summary.results for f in r.findings],
    }


SEP = b",\n    "  # what comes before each entry of the report's lists (the first one drops its comma)


def entry_bytes(entry: dict[str, Any]) -> bytes:
    """One entry of the report's lists as it is written there, after its :data:`SEP`."""
    import orjson

    return orjson.dumps(entry, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n    ")


def file_bytes(result: FileResult) -> bytes:
    """``SEP`` and the entry of ``result`` in the report's "files" list: what
    ``entry_bytes(_file_entry(result))`` writes (a test holds them equal), put together
    from its values (one per file of a whole store)."""
    import orjson

    dumps = orjson.dumps
    return b"".join(
        (
            _FILE_PARTS[0],
            dumps(result.file),
            _FILE_PARTS[1],
            dumps(result.kind),
            _FILE_PARTS[2],
            dumps(result.schema_version),
            _FILE_PARTS[3],
            dumps(result.rows),
            _FILE_PARTS[4],
            dumps(result.errors),
            _FILE_PARTS[5],
            dumps(result.warnings),
            _FILE_PARTS[6],
            dumps(result.suppressed),
            _FILE_PARTS[7],
        )
    )


_FILE_PARTS = (
    SEP + b'{\n      "file": ',
    b',\n      "kind": ',
    b',\n      "schema_version": ',
    b',\n      "rows": ',
    b',\n      "errors": ',
    b',\n      "warnings": ',
    b',\n      "suppressed": ',
    b"\n    }",
)


def findings_bytes(result: FileResult) -> bytes:
    """``SEP`` and the entry of each finding of ``result`` in the report's "findings" list."""
    return b"".join(SEP + entry_bytes(f.to_dict()) for f in result.findings)


def _write_report(out: IO[bytes], summary: Summary, files: Iterable[bytes], findings: Iterable[bytes]) -> None:
    """The JSON report (``to_json``, indented as orjson's OPT_INDENT_2 writes it): the head,
    then the two lists from pieces that each hold whole entries, each entry after ``SEP``."""
    import orjson

    head = orjson.dumps(_head(summary), option=orjson.OPT_INDENT_2)
    out.write(head[:-2] + b",\n")  # the head object without its closing "\n}"
    for n, (key, pieces) in enumerate((("files", files), ("findings", findings))):
        out.write(b'  "' + key.encode() + b'": [')
        first = True
        for piece in pieces:
            if not piece:
                continue
            out.write(piece[1:] if first else piece)  # the first entry without its comma
            first = False
        out.write(b"]" if first else b"\n  ]")
        out.write(b",\n" if n == 0 else b"\n}\n")


def write_json(summary: Summary, out: IO[bytes]) -> None:
    """The JSON report, written entry by entry: a report of 100,000 files never exists in
    memory as one document."""
    _write_report(out, summary, (file_bytes(r) for r in summary.results), (findings_bytes(r) for r in summary.results))


def json_bytes(summary: Summary) -> bytes:
    """The JSON report, indented, UTF-8 (orjson: ~20x the standard library's speed at 100,000 files)."""
    import io

    buffer = io.BytesIO()
    write_json(summary, buffer)
    return buffer.getvalue()


class Streamed:
    """A run's report built as its results arrive, in sections (the validator's input
    problems, records, sidecars, ...), each arriving in order: the counts are added up, each
    file's entries are written to the section's spools (in memory up to a megabyte, then on
    disk), and only the results with findings are kept, for the text formats. Memory stays
    flat in the size of the store; :meth:`write_json` writes the head (the counts), then the
    spools in order.

    A section may also receive ``Clean`` pieces: the entries of files without findings,
    already written by a worker process, with their tally."""

    clean = True  # workers may send the entries of files without findings ready-made

    def __init__(self, sections: int, accepted: Callable[[list[FileResult]], None] | None = None) -> None:
        self.tally = Tally()
        self.fatal: str | None = None
        self.accepted = accepted  # leaves out of a batch's findings those accepted (the flags'), before it counts
        self._files: list[Any] = [None] * sections
        self._findings: list[Any] = [None] * sections
        self._found: list[list[FileResult]] = [[] for _ in range(sections)]

    def _spool(self, spools: list[Any], section: int) -> Any:
        if spools[section] is None:
            import tempfile

            spools[section] = tempfile.SpooledTemporaryFile(max_size=SPOOL_MAX)  # noqa: SIM115 - closed by close()
        return spools[section]

    def add(self, section: int, batch: Iterable[FileResult | Clean]) -> None:
        results: list[FileResult] = []
        pieces: list[bytes | FileResult] = []
        for item in batch:
            if isinstance(item, Clean):
                self.tally.merge(item.tally)
                pieces.append(item.files)
            elif item.findings or item.suppressed:
                results.append(item)
                pieces.append(item)
            else:
                self.tally.add(item)
                pieces.append(file_bytes(item))
        if not pieces:
            return
        if results and self.accepted is not None:
            self.accepted(results)
        files = self._spool(self._files, section)
        findings = None
        for piece in pieces:
            if isinstance(piece, bytes):
                files.write(piece)
                continue
            self.tally.add(piece)
            files.write(file_bytes(piece))
            if piece.findings:
                if findings is None:
                    findings = self._spool(self._findings, section)
                findings.write(findings_bytes(piece))
            if piece.findings or piece.suppressed:
                self._found[section].append(piece)

    def summary(self) -> Summary:
        """The run as the text formats and the exit code see it: the results with findings
        (those without print nothing), and the counts of all."""
        return Summary([r for found in self._found for r in found], self.fatal, self.tally)

    def write_json(self, out: IO[bytes]) -> None:
        _write_report(out, self.summary(), self._pieces(self._files), self._pieces(self._findings))

    @staticmethod
    def _pieces(spools: list[Any]) -> Iterator[bytes]:
        for spool in spools:
            if spool is None:
                continue
            spool.seek(0)
            while piece := spool.read(SPOOL_READ):
                yield piece

    def close(self) -> None:
        for spool in [*self._files, *self._findings]:
            if spool is not None:
                spool.close()


SPOOL_MAX = 1024 * 1024  # bytes of a section's entries kept in memory before they go to disk
SPOOL_READ = 1024 * 1024


class Clean:
    """Consecutive files without findings, as a worker sends them: their entries (each
    after ``SEP``) and their counts."""

    __slots__ = ("files", "tally")

    def __init__(self, files: bytes, tally: Tally) -> None:
        self.files = files
        self.tally = tally

    def __getstate__(self) -> tuple[bytes, Tally]:
        return self.files, self.tally

    def __setstate__(self, state: tuple[bytes, Tally]) -> None:
        self.files, self.tally = state


def render_json(summary: Summary | Streamed, stream: IO[str]) -> None:
    write = summary.write_json if isinstance(summary, Streamed) else lambda out: write_json(summary, out)
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        stream.flush()
        write(buffer)
        buffer.flush()
    else:
        import io

        out = io.BytesIO()
        write(out)
        stream.write(out.getvalue().decode("utf-8"))


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render_github(summary: Summary, stream: IO[str], what: str = "file") -> None:
    if summary.fatal:
        stream.write(f"::error title=eee::{_gh_escape(summary.fatal)}\n")
    for result in summary.results:
        for f in result.findings:
            level = "warning" if f.severity == WARNING else "error"
            props = f"file={_gh_escape(f.file, True)}"
            if f.line is not None:
                props += f",line={f.line}"
            props += f",title={_gh_escape('eee ' + f.check, True)}"
            body = f"{f.pointer}: {f.message}" + (f" (hint: {f.hint})" if f.hint else "")
            stream.write(f"::{level} {props}::{_gh_escape(body)}\n")
        if result.suppressed:
            stream.write(f"::error file={_gh_escape(result.file, True)}::{result.suppressed} more errors not shown\n")
    stream.write(summary_line(summary, what) + "\n")


def render(summary: Summary | Streamed, fmt: str, stream: IO[str] | None = None, what: str = "file") -> None:
    """A validation summary in the format named ``fmt`` (:data:`REPORTERS`)."""
    reporter(fmt).findings(summary, stream or sys.stdout, what)


# --- reporters chosen by name ------------------------------------------------------------------
# What `--format NAME` means, for every command: a command hands its result (the data, and
# how to say it as text) to the reporter its --format names, and never branches on the name.


def _as_text(summary: Summary | Streamed) -> Summary:
    return summary.summary() if isinstance(summary, Streamed) else summary


def _json_document(data: Any, ensure_ascii: bool) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=ensure_ascii))


def _text_refusal(prog: str, findings: Iterable[Finding], stream: IO[str] | None = None) -> int:
    """A refusal's findings as text (``location: message`` and ``    hint: ...``; a finding
    without a file is named by the command) on stderr; returns 1."""
    out = stream or sys.stderr
    for f in findings:
        where = f.location() if f.file else prog
        label = "warning: " if f.severity == WARNING else ""
        print(f"{where}: {label}{f.message}", file=out)
        if f.hint:
            print(f"    hint: {f.hint}", file=out)
    return 1


def _json_refusal(prog: str, findings: Iterable[Finding], stream: IO[str] | None = None) -> int:
    """A refusal as the one JSON document on stdout (``{"refused": [finding, ...]}``); returns 1."""
    print(json.dumps({"refused": [f.to_dict() for f in findings]}, indent=2, ensure_ascii=False), file=stream)
    return 1


class Reporter(NamedTuple):
    """One output format: how a command's result, a refusal and a validation summary are shown."""

    name: str
    machine: bool  # one machine-readable document on stdout: no progress, nothing cut from lists
    findings: Callable[[Summary | Streamed, IO[str], str], None]  # a validation summary
    refusal: Callable[..., int]  # (prog, findings, stream=None) -> exit code 1
    document: Callable[[Any, bool], None] | None = None  # a result as one document; None: the command's text

    def result(self, data: Any, text: Callable[[], object], *, ensure_ascii: bool = False) -> None:
        """Show a command's result: ``data`` as this format's document, or, for a text format,
        what ``text()`` prints."""
        if self.document is not None:
            self.document(data, ensure_ascii)
        else:
            text()

    def result_file(self, path: Any, text: Callable[[], object]) -> None:
        """Show a result a command has written as this format's document to ``path`` (a
        machine format copies its bytes to stdout), or, for a text format, what ``text()`` prints."""
        if self.document is None:
            text()
            return
        with open(path, "rb") as fh:
            buffer = getattr(sys.stdout, "buffer", None)
            if buffer is not None:
                sys.stdout.flush()
                shutil.copyfileobj(fh, buffer)
                buffer.flush()
            else:
                sys.stdout.write(fh.read().decode("utf-8"))


REPORTERS: dict[str, Reporter] = {
    "rich": Reporter("rich", False, lambda s, out, what: render_rich(_as_text(s), out, what), _text_refusal),
    "json": Reporter("json", True, lambda s, out, what: render_json(s, out), _json_refusal, _json_document),
    "github": Reporter("github", False, lambda s, out, what: render_github(_as_text(s), out, what), _text_refusal),
}
assert tuple(REPORTERS) == FORMATS


def reporter(name: str) -> Reporter:
    """The reporter ``--format NAME`` chooses (an unknown name: rich, as the parsers' default)."""
    return REPORTERS.get(name, REPORTERS["rich"])
