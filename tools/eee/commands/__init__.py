"""One module per ``eee`` subcommand, each with ``main(argv) -> int``, and the one
command-line convention they share.

Exit codes (the same for every ``eee`` command and ``tools/*``):

    0   clean: done, nothing to report
    1   errors: something was refused or invalid (nothing half-written)
    2   warnings only: done, with warnings to read
    64  usage error: the command line itself is wrong (EX_USAGE of sysexits.h)

Reports go to stdout; errors, hints and progress go to stderr. The store is named by
``--store DIR``; by default it is the git work tree that contains the current folder
(never the installed package's own checkout). A refusal is :class:`eee.reporting.findings.Refused`
(it carries findings); :func:`refused` prints one the same way in every command.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO, NoReturn

from eee.reporting.findings import Refused

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_WARNINGS = 2
EXIT_USAGE = 64

EXIT_CODES_TEXT = "exit codes: 0 clean, 1 errors (nothing written), 2 warnings only, 64 usage error"

EXIT_CODES_TABLE = """exit codes (every eee command and tools/*):
  0   clean: done, nothing to report
  1   errors: refused or invalid; nothing was written
  2   warnings only: done, with warnings to read
  64  usage error: the command line is wrong (unknown option, missing argument, no store)"""


class UsageError(Exception):
    """The command line is wrong (exit 64)."""


class Parser(argparse.ArgumentParser):
    """argparse with the project's usage exit code and the exit-code table in --help."""

    def __init__(self, prog: str | None = None, description: str | None = None, **kw: object) -> None:
        kw.setdefault("epilog", EXIT_CODES_TEXT)
        super().__init__(prog=prog, description=description, **kw)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def parser(prog: str, description: str, **kw: object) -> Parser:
    return Parser(prog, description, **kw)


STORE_HELP = "the store (default: the git work tree that contains the current folder)"


def add_store(p: argparse.ArgumentParser, help: str = STORE_HELP) -> None:
    p.add_argument("--store", type=Path, metavar="DIR", help=help)


def store_of(given: Path | None) -> Path:
    """The store a command works on: ``--store`` if given, else the git work tree of the
    current folder. Raises :class:`UsageError` outside a work tree."""
    if given is not None:
        if not given.is_dir():
            raise UsageError(f"--store {given}: no such folder")
        return given.resolve()
    from eee.git.cli import GitError, toplevel

    try:
        return toplevel(Path.cwd()).resolve()
    except GitError:
        raise UsageError("not inside a git work tree: run it inside the store, or pass --store DIR") from None


def usage_error(prog: str, exc: UsageError, stream: IO[str] | None = None) -> int:
    """Print a usage error the way argparse does; returns 64."""
    print(f"{prog}: error: {exc}", file=stream or sys.stderr)
    return EXIT_USAGE


def refused(prog: str, exc: Refused, stream: IO[str] | None = None) -> int:
    """Print a refusal's findings (``location: message`` and ``    hint: ...``; a finding
    without a file is named by the command); returns 1."""
    out = stream or sys.stderr
    for f in exc.findings:
        where = f.location() if f.file else prog
        label = "warning: " if f.severity == "warning" else ""
        print(f"{where}: {label}{f.message}", file=out)
        if f.hint:
            print(f"    hint: {f.hint}", file=out)
    return EXIT_ERRORS
