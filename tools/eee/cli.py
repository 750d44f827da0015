"""The ``eee`` command line. Every subcommand is ``main(argv) -> int``.

Imports stay inside the subcommands so that a hook pays only for what it uses.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _governance_commands() -> dict[str, tuple[str, str]]:
    from eee.governance import ACTIONS

    return {a.command: (f"eee.commands.{a.command.replace('-', '_')}", a.summary) for a in ACTIONS}


COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module, help)
    "validate": ("eee.commands.validate", "validate records, sidecars and events"),
    "pipeline": ("eee.commands.pipeline", "run the datastore pipeline (the main job)"),
    "audit": ("eee.commands.audit", "check every commit of a range against the store's rules"),
    "gate": ("eee.commands.gate", "the commit hooks without pre-commit's work-tree scans (large stores)"),
    "migrate": ("eee.commands.migrate", "write copies of records migrated to a schema version"),
    "samples": ("eee.commands.samples", "add, push and pull per-sample sidecars (DVC)"),
    "convert": ("eee.commands.convert", "convert HELM, lm-eval or Inspect AI logs into records"),
    "catalog": ("eee.commands.catalog", "write the Parquet catalogue of every result"),
    "stats": ("eee.commands.stats", "field fill rates across the store (active records; --all for every one)"),
    "compare": ("eee.commands.compare", "compare two runs of a benchmark sample by sample"),
    "irt": ("eee.commands.irt", "fit a Rasch (IRT) model over a benchmark's per-sample rows"),
    "analysis": ("eee.commands.analysis", "write the analysis pages (IRT, comparisons, plots) for the site"),
    "status": ("eee.commands.status", "a record's path, status, relations and history"),
    "dedup": ("eee.commands.dedup", "list groups of duplicate records, with the evidence"),
}
# the governance actions, declared once (eee.governance.ACTIONS)
COMMANDS.update(_governance_commands())


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="eee",
        description="Tools of the Every Eval Ever datastore.",
        epilog="Run `eee COMMAND --help` for a command's options.",
    )
    parser.add_argument("command", choices=sorted(COMMANDS), metavar="COMMAND", help=", ".join(sorted(COMMANDS)))
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        parser.print_usage(sys.stderr)
        print(f"eee: unknown command {argv[0]!r}; commands: {', '.join(sorted(COMMANDS))}", file=sys.stderr)
        return 2
    import importlib

    module = importlib.import_module(COMMANDS[argv[0]][0])
    return int(module.main(argv[1:]))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
