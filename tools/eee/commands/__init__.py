"""One module per ``eee`` subcommand, each with ``main(argv) -> int``, and the one
command-line convention they share.

Exit codes (the same for every ``eee`` command and ``tools/*``):

    0   clean: done, nothing to report
    1   errors: something was refused or invalid (nothing half-written)
    2   warnings only: done, with warnings to read
    64  usage error: the command line itself is wrong (EX_USAGE of sysexits.h)

Reports go to stdout; errors, hints and progress go to stderr. The store is named by
``--store DIR``; by default it is the git work tree that contains the current folder
(never the installed package's own checkout); a missing folder, or one that is not a store
(:func:`is_store`), is one line on stderr and exit 64. A refusal is
:class:`eee.reporting.findings.Refused` (it carries findings); :func:`refused` prints one the
same way in every command.

Every command builds its parser with :class:`Parser` and the shared option helpers below
(``add_store``, ``add_format``, ``add_out``, ``add_dry_run``, ``add_jobs``, ...), so an
option has one name and one meaning everywhere; usage errors go through argparse's own
error path (``Parser.error``, exit 64).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NoReturn

from eee.reporting.findings import Refused
from eee.reporting.reporters import FORMATS

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
    """argparse with the project's usage exit code, the exit-code table in --help, and the
    store of :func:`add_store` checked as the arguments are read.

    Every usage error goes through argparse's own path: :meth:`error` (the usage line and
    ``prog: error: message`` on stderr) or, for the store, :meth:`exit` with one line; both
    raise ``SystemExit(64)``, which :func:`eee.cli.main` returns as the exit code."""

    def __init__(self, prog: str | None = None, description: str | None = None, **kw: object) -> None:
        kw.setdefault("epilog", EXIT_CODES_TEXT)
        super().__init__(prog=prog, description=description, **kw)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def _print_message(self, message: str, file: IO[str] | None = None) -> None:
        """As argparse's, but a closed stdout is not silently dropped: :func:`eee.cli.main`
        ends the run quietly, with the same exit code as every other output meeting one."""
        if message:
            try:
                (file or sys.stderr).write(message)
            except BrokenPipeError:
                raise
            except (AttributeError, OSError):  # what argparse ignores
                pass

    def store_error(self, message: str) -> NoReturn:
        """A store that cannot be used: one line on stderr, exit 64 (no usage line: the
        command line is right but for the store it names)."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extras = super().parse_known_args(args, namespace)
        for action in self._actions:
            if isinstance(action, _StoreOption):
                given = getattr(parsed, action.dest, None)
                try:
                    setattr(parsed, action.dest, store_of(given) if action.find else checked_store(given))
                except UsageError as exc:
                    self.store_error(str(exc))
        return parsed, extras


def parser(prog: str, description: str, **kw: object) -> Parser:
    return Parser(prog, description, **kw)


# --- the shared options: every command builds its parser from these -----------------------
# One name, one meaning: --store DIR, --format (the findings' rich|json|github, or a subset
# with the same names), --out, --dry-run, --jobs N, --manifest FILE, --all, --no-progress.

FINDINGS_FORMATS = FORMATS  # rich text, JSON, GitHub annotations: what a report of findings can be
OUTPUT_FORMATS = ("rich", "json")  # the same names, for output that is not findings

STORE_HELP = "the store (default: the git work tree that contains the current folder)"
STORE_MARKERS = ("data", "governance", "schemas/registry.json", ".git")


class _StoreOption(argparse.Action):
    """``--store DIR``; the parser checks it once the arguments are read (:meth:`Parser.parse_known_args`)."""

    def __init__(self, *args: Any, find: bool = True, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.find = find  # when not given: the git work tree of the current folder (else None)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, values)


def add_store(p: argparse.ArgumentParser, help: str = STORE_HELP, find: bool = True) -> None:
    """``--store DIR``: after parsing, ``args.store`` is the store's resolved folder. A folder
    that is missing or not a store is a usage error (one line, exit 64). ``find``: when
    ``--store`` is not given, the git work tree of the current folder (outside one: a usage
    error); with ``find=False`` it stays None (the command finds the store itself)."""
    p.add_argument("--store", type=Path, metavar="DIR", help=help, action=_StoreOption, find=find)


def add_format(p: argparse.ArgumentParser, formats: tuple[str, ...] = FINDINGS_FORMATS, help: str = "") -> None:
    """``--format``: the findings' formats, or a subset of them with the same names."""
    assert set(formats) <= set(FINDINGS_FORMATS), formats
    names = {"rich": "rich text", "json": "JSON", "github": "GitHub annotations"}
    shown = [names[f] for f in formats]
    listed = " or ".join(shown) if len(shown) < 3 else f"{', '.join(shown[:-1])} or {shown[-1]}"
    p.add_argument(
        "--format", choices=formats, default="rich", help=f"{help or 'output format'}: {listed} (default: rich)"
    )


def add_out(p: argparse.ArgumentParser, metavar: str, help: str, **kw: Any) -> None:
    """``--out FILE|DIR``: where the command writes its output."""
    p.add_argument("--out", type=Path, metavar=metavar, help=help, **kw)


def add_dry_run(p: argparse.ArgumentParser, help: str = "check and show what would be written; write nothing") -> None:
    p.add_argument("--dry-run", action="store_true", help=help)


def add_jobs(p: argparse.ArgumentParser, help: str, default: int | None = None) -> None:
    p.add_argument("--jobs", type=count(1), default=default, metavar="N", help=help)


def add_manifest(p: argparse.ArgumentParser, help: str) -> None:
    """``--manifest FILE``: the store manifest (``eee manifest``) the pipeline's stages read."""
    p.add_argument("--manifest", type=Path, metavar="FILE", help=help)


def add_all(p: argparse.ArgumentParser, help: str = "include retracted, superseded and duplicate records") -> None:
    p.add_argument("--all", action="store_true", help=help)


def add_no_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="never show progress (a bar on a terminal; the lines `eee pipeline` asks its stages for)",
    )


def add_uuid(p: argparse.ArgumentParser, help: str, many: bool = False) -> None:
    """``--uuid UUID``: the uuid of the record a command writes (``many``: once per record);
    the dry run prints the command with the uuids it drew (:func:`exact_command`)."""
    p.add_argument("--uuid", action="append" if many else "store", metavar="UUID", help=help)


def checked_uuids(given: list[str] | str | None) -> list[str] | None:
    """The ``--uuid`` values, each a lowercase canonical uuid v4, none twice; raises
    :class:`UsageError` naming the first that is not."""
    from eee.store.paths import uuid_problem

    if not given:
        return None
    given = [given] if isinstance(given, str) else given
    for text in given:
        problem = uuid_problem(text)
        if problem:
            raise UsageError(f"--uuid {text}: {problem}")
    twice = sorted({u for u in given if given.count(u) > 1})
    if twice:
        raise UsageError(f"--uuid {twice[0]} is given twice; a uuid names one record")
    return given


def exact_command(command: str, argv: list[str], uuids: list[str]) -> str:
    """The command that writes exactly what a dry run of ``eee COMMAND ARGV`` showed:
    ``argv`` without ``--dry-run`` and earlier ``--uuid`` options, with one ``--uuid`` per
    record the run draws a uuid for, runnable as printed (:mod:`eee.reporting.shown`)."""
    import shlex

    from eee.reporting.shown import shown_command

    kept: list[str] = []
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        name = token.split("=", 1)[0]
        if len(name) > 2 and "--dry-run".startswith(name):
            continue
        if len(name) > 2 and "--uuid".startswith(name):
            skip = "=" not in token
            continue
        kept.append(token)
    for uuid in uuids:
        kept += ["--uuid", uuid]
    return f"{shown_command()} {command} {shlex.join(kept)}"


def count(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer of at least ``minimum`` (else argparse's usage error)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value

    parse.__name__ = "count"  # argparse names the type in its messages
    return parse


def is_store(folder: Path) -> bool:
    """Whether ``folder`` is a store's top folder: it holds data/, governance/ or
    schemas/registry.json, or it is the top of a git work tree (a store not yet begun: the
    first convert or import creates data/)."""
    return any((folder / marker).exists() for marker in STORE_MARKERS)


def checked_store(given: Path | None) -> Path | None:
    """``--store`` as given, resolved, when it is a store; None when not given. Raises
    :class:`UsageError` for a missing folder or one that is not a store."""
    if given is None:
        return None
    if not given.is_dir():
        raise UsageError(f"--store {given}: no such folder")
    if not is_store(given):
        raise UsageError(
            f"--store {given}: not a store (no data/, governance/ or schemas/registry.json, not a git work tree)"
        )
    return given.resolve()


def store_of(given: Path | None) -> Path:
    """The store a command works on: ``--store`` if given (checked), else the git work tree
    of the current folder. Raises :class:`UsageError` outside a work tree."""
    if given is not None:
        return checked_store(given)  # type: ignore[return-value]
    from eee.git.cli import GitError, toplevel

    try:
        return toplevel(Path.cwd()).resolve()
    except GitError:
        raise UsageError("not inside a git work tree: run it inside the store, or pass --store DIR") from None


def refused(prog: str, exc: Refused, stream: IO[str] | None = None) -> int:
    """Print a refusal's findings (``location: message`` and ``    hint: ...``; a finding
    without a file is named by the command); returns 1."""
    from eee.reporting.reporters import REPORTERS

    return REPORTERS["rich"].refusal(prog, exc.findings, stream)
