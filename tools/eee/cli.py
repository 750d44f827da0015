"""The ``eee`` command line. Every subcommand is ``main(argv) -> int``.

Imports stay inside the subcommands so that a hook pays only for what it uses.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

GOVERNANCE = "eee.commands.governance"  # runs any declared action's command: run(command, argv)


def _governance_commands() -> dict[str, tuple[str, str]]:
    """The declared actions' commands, read when asked (an action declared in
    :data:`eee.governance.ACTIONS` is a command): each its own module where it has one, else
    the governance commands' :func:`eee.commands.governance.run`."""
    import importlib.util

    from eee.governance import ACTIONS

    out = {}
    for a in ACTIONS:
        own = f"eee.commands.{a.command.replace('-', '_')}"
        out[a.command] = (own if importlib.util.find_spec(own) is not None else GOVERNANCE, a.summary)
    return out


def commands() -> dict[str, tuple[str, str]]:
    """Every command: the table below and the declared actions' commands, as they are now."""
    return {**COMMANDS, **_governance_commands()}


COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module, one-line summary shown by `eee --help`)
    "validate": ("eee.commands.validate", "validate records, sidecars and events"),
    "pipeline": ("eee.commands.pipeline", "run the datastore pipeline (dvc repro; the main job)"),
    "manifest": ("eee.commands.manifest", "write the store manifest the pipeline's stages depend on"),
    "audit": ("eee.commands.audit", "check every commit of a range against the store's rules"),
    "gate": ("eee.commands.gate", "the default commit gate: the hooks on what is staged, without a runner's scans"),
    "server": (
        "eee.commands.server",
        "the server gate: pre-receive and post-receive hooks that audit every push into a bare repository",
    ),
    "migrate": ("eee.commands.migrate", "write copies of records migrated to a schema version"),
    "samples": ("eee.commands.samples", "add, push and pull per-sample sidecars (DVC)"),
    "convert": (
        "eee.commands.convert",
        "convert HELM, lm-eval, Inspect AI, lighteval or AlpacaEval logs, or a results table, into records",
    ),
    "import": (
        "eee.commands.importer",
        "import a datastore snapshot (folder or git revision), every file accounted for",
    ),
    "catalog": ("eee.commands.catalog", "write the Parquet catalogue of every result"),
    "stats": ("eee.commands.stats", "field fill rates across the store (active records; --all for every one)"),
    "compare": ("eee.commands.compare", "compare two runs of a benchmark sample by sample"),
    "experiment": (
        "eee.commands.experiment",
        "experiment cards: register (new), show, check and report a declared comparison",
    ),
    "irt": ("eee.commands.irt", "fit a Rasch (IRT) model over a benchmark's per-sample rows"),
    "leaderboard": (
        "eee.commands.leaderboard",
        "rank a benchmark's results within each protocol, with intervals and Holm-corrected rank ranges",
    ),
    "agree": (
        "eee.commands.agree",
        "results of one model under one protocol from different sources that disagree beyond their uncertainty",
    ),
    "analysis": ("eee.commands.analysis", "write the analysis pages (IRT, comparisons, plots) for the site"),
    "site": ("eee.commands.site", "write the published site's pages as Markdown (build/docs)"),
    "status": ("eee.commands.status", "a record's path, status, relations and history"),
    "dedup": ("eee.commands.dedup", "list groups of duplicate records, with the evidence"),
    "export": (
        "eee.commands.export",
        "write results for the Hugging Face Hub: a model's .eval_results files, the catalogue as a dataset",
    ),
    "identity": (
        "eee.commands.identity",
        "the identity registry: groups of likely aliases across the store; alias OLD --to NEW",
    ),
    "rules": ("eee.commands.rules", "list the rules the store checks, or explain one (eee rules ID)"),
    "roles": ("eee.commands.roles", "who holds which role and may take which act; add or remove a signer"),
}
# the governance actions, declared once (eee.governance.ACTIONS)
COMMANDS.update(_governance_commands())


def help_text() -> str:
    from eee.commands import EXIT_CODES_TABLE

    listed = commands()
    width = max(map(len, listed))
    lines = [
        "usage: eee [--version] [--help] COMMAND [OPTIONS]",
        "",
        "Tools of the Every Eval Ever datastore.",
        "",
        "commands:",
        *(f"  {name:<{width}}  {summary}" for name, (_module, summary) in listed.items()),
        "",
        "options:",
        "  -h, --help  show this message and exit",
        "  --version   show the version and exit",
        "",
        "Every command takes --store DIR (default: the git work tree that contains the current",
        "folder; validate and migrate find it from each path); --format rich|json|github for",
        "findings, rich|json for other output; --out, --dry-run, --jobs N mean the same everywhere.",
        "Reports go to stdout; errors, hints and progress to stderr. Run `eee COMMAND --help`",
        "for a command's options.",
        "",
        EXIT_CODES_TABLE,
    ]
    return "\n".join(lines) + "\n"


EXIT_CLOSED_PIPE = 141  # what a shell reports for a process ended by SIGPIPE (128 + 13)


def _unknown(command: str) -> str:
    import difflib

    known = commands()
    close = difflib.get_close_matches(command, known, n=3, cutoff=0.6)
    if close:
        guess = " or ".join(repr(c) for c in close)
        return f"unknown command {command!r}; did you mean {guess}? (`eee --help` lists the commands)"
    return f"unknown command {command!r}; commands: {', '.join(known)}"


def _stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone (then a BrokenPipeError came from it,
    not from a pipe of a child process)."""
    try:
        import select

        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _fd, events in poll.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll() (Windows), or stdout has no file descriptor
        return True


def _quietly_closed() -> int:
    """The reader of stdout has gone (``eee validate ... | head -1``): end quietly, as a
    process ended by SIGPIPE would, without Python's complaint when it flushes stdout at exit."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass
    return EXIT_CLOSED_PIPE


def main(argv: Sequence[str] | None = None) -> int:
    """``eee COMMAND ...``: run one command, with the conventions every command shares:
    usage errors exit 64 (argparse's SystemExit, see :class:`eee.commands.Parser`), and a
    closed stdout ends the run quietly with 141."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _run(argv)
        sys.stdout.flush()  # what is still buffered meets a closed pipe here, not at exit
        return code
    except BrokenPipeError:
        if not _stdout_closed():
            raise
        return _quietly_closed()


def _run(argv: list[str]) -> int:
    from eee.commands import EXIT_USAGE

    if argv and argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(help_text())
        return 0
    if argv and argv[0] == "--version":
        from eee import __version__

        print(f"eee {__version__}")
        return 0
    known = commands()
    if not argv or argv[0] not in known:
        sys.stderr.write("usage: eee [--version] [--help] COMMAND [OPTIONS]\n")
        if not argv:
            print("eee: error: a command is required; `eee --help` lists them", file=sys.stderr)
        else:
            print(f"eee: error: {_unknown(argv[0])}", file=sys.stderr)
        return EXIT_USAGE
    import importlib

    name = known[argv[0]][0]
    module = importlib.import_module(name)
    try:
        if name == GOVERNANCE:  # a declared action without a module of its own
            return int(module.run(argv[0], argv[1:]))
        return int(module.main(argv[1:]))
    except SystemExit as exc:  # argparse's --help (0) and usage errors (64, see eee.commands.Parser)
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_USAGE)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
