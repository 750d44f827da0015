"""Reporters: one summary, three formats (``rich``, ``json``, ``github``).

The checks never print; they return findings. Reporters only print.
"""

from __future__ import annotations

import sys
from typing import IO, Any

from eee.findings import WARNING, Finding, Summary

FORMATS = ("rich", "json", "github")


def text_lines(f: Finding) -> list[str]:
    """One finding as text: ``location: [warning: ]message`` and an indented hint line."""
    label = "warning: " if f.severity == WARNING else ""
    lines = [f"{f.location()}: {label}{f.message}"]
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
            console.print(f"[bold]{escape(f.location())}[/]: [{style}]{escape(label + f.message)}[/]")
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


def write_json(summary: Summary, out: IO[bytes]) -> None:
    """The JSON report (``to_json``, indented as orjson's OPT_INDENT_2 writes it), written entry
    by entry: a report of 100,000 files never exists in memory as one document."""
    import orjson

    head = orjson.dumps(_head(summary), option=orjson.OPT_INDENT_2)
    out.write(head[:-2] + b",\n")  # the head object without its closing "\n}"
    lists = (
        ("files", (_file_entry(r) for r in summary.results)),
        ("findings", (f.to_dict() for r in summary.results for f in r.findings)),
    )
    for n, (key, entries) in enumerate(lists):
        out.write(b'  "' + key.encode() + b'": [')
        first = True
        for entry in entries:
            out.write(b"\n    " if first else b",\n    ")
            out.write(orjson.dumps(entry, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n    "))
            first = False
        out.write(b"]" if first else b"\n  ]")
        out.write(b",\n" if n == 0 else b"\n}\n")


def json_bytes(summary: Summary) -> bytes:
    """The JSON report, indented, UTF-8 (orjson: ~20x the standard library's speed at 100,000 files)."""
    import io

    buffer = io.BytesIO()
    write_json(summary, buffer)
    return buffer.getvalue()


def render_json(summary: Summary, stream: IO[str]) -> None:
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        stream.flush()
        write_json(summary, buffer)
        buffer.flush()
    else:
        stream.write(json_bytes(summary).decode("utf-8"))


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


def render(summary: Summary, fmt: str, stream: IO[str] | None = None, what: str = "file") -> None:
    stream = stream or sys.stdout
    if fmt == "json":
        render_json(summary, stream)
    elif fmt == "github":
        render_github(summary, stream, what)
    else:
        render_rich(summary, stream, what)
