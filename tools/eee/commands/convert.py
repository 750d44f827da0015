"""``eee convert {helm,lm_eval,inspect} --log-path PATH``: harness logs into records of the store.

Reads the harness's own log files (no harness package needed), writes schema-valid records
(and, with ``--include-samples``, their per-sample sidecars) at their canonical paths under
``data/``, adds the sidecars to DVC and stages everything, ready for ``git commit``.

All or nothing: the outputs are validated in a temporary store first; an invalid output,
an existing target or a missing DVC set-up leaves ``data/`` untouched. Exit codes (the
table of :mod:`eee.commands`): 0 converted, 2 converted with warnings (something was
skipped), 1 nothing converted, 64 usage error. What was written goes to stdout; findings
(errors, warnings, hints) to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from eee.commands import EXIT_CODES_TEXT, Parser, UsageError, add_dry_run, add_store, refused
from eee.reporting.findings import Finding, Refused

if TYPE_CHECKING:
    from eee.convert.common import Planned

HARNESSES = {"helm": "eee.convert.helm", "lm_eval": "eee.convert.lm_eval", "inspect": "eee.convert.inspect"}


def build_parser() -> argparse.ArgumentParser:
    from eee.convert.common import RELATIONSHIPS

    p = Parser(
        "eee convert",
        "Convert HELM run directories, lm-evaluation-harness results or Inspect AI logs (.json, .eval) into "
        "records at data/<benchmark>/<developer>/<model>/<uuid>.json, validated, sidecars in DVC, staged.",
        epilog=EXIT_CODES_TEXT + " (2 here: converted, but something was skipped; 1: nothing converted)",
    )
    p.add_argument("harness", choices=sorted(HARNESSES), help="the harness that wrote the logs")
    p.add_argument(
        "--log-path",
        required=True,
        type=Path,
        metavar="PATH",
        help="helm: a run directory or a folder of them; lm_eval: results_*.json or its folder; "
        "inspect: a .json/.eval log or a folder of them",
    )
    p.add_argument("--include-samples", action="store_true", help="also write the per-sample sidecars (into DVC)")
    p.add_argument(
        "--source-organization",
        default="unknown",
        metavar="NAME",
        help="organisation that provides the results (default: unknown)",
    )
    p.add_argument(
        "--evaluator-relationship",
        choices=RELATIONSHIPS,
        default="third_party",
        help="how the evaluator relates to the model's developer (default: third_party)",
    )
    p.add_argument("--eval-library-version", metavar="VERSION", help="harness version, when the log does not say")
    p.add_argument(
        "--model-id",
        type=_model_id,
        metavar="DEVELOPER/MODEL",
        help="the model's id, when the log's name has no developer",
    )
    add_store(
        p,
        help="the store (default: the git work tree that contains the current folder; a plain folder only with --no-stage)",
        find=False,
    )
    p.add_argument("--no-stage", action="store_true", help="write and add to DVC, but do not `git add`")
    add_dry_run(p, help="print what would be written; write nothing")
    return p


def _model_id(text: str) -> str:
    """``--model-id``: DEVELOPER/MODEL (else argparse's usage error)."""
    if "/" not in text.strip("/"):
        raise argparse.ArgumentTypeError(f"{text!r}: expected DEVELOPER/MODEL")
    return text


def _print(findings: list[Finding]) -> None:
    from eee.reporting.reporters import text_lines

    for f in findings:
        print("\n".join(text_lines(f)), file=sys.stderr)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _describe(item: Planned, verb: str) -> str:
    line = f"{verb} {item.record_rel} ({_plural(len(item.output.record['evaluation_results']), 'result')})"
    if item.sidecar_rel:
        line += f" and {item.sidecar_rel} ({_plural(len(item.output.rows or []), 'row')})"
    return line


def _store_root(store: Path | None, stage: bool) -> Path:
    """The store: the git work tree of ``store`` (or of the cwd); a plain folder only without
    staging. Raises :class:`~eee.commands.UsageError` when there is none."""
    from eee.git.cli import GitError, toplevel

    where = store if store is not None else Path.cwd()
    try:
        return toplevel(where)
    except GitError:
        if store is not None and not stage:
            return where.resolve()
        raise UsageError(
            f"{where}: not a store (no git work tree here); run inside the store's git work tree, "
            "or pass --store DIR (outside git only with --no-stage)"
        ) from None


def main(argv: list[str]) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    from eee.convert.common import Settings, place, preflight

    try:
        root = _store_root(args.store, stage=not args.no_stage)
    except UsageError as exc:
        p.store_error(str(exc))
    settings = Settings(
        source_organization=args.source_organization,
        evaluator_relationship=args.evaluator_relationship,
        eval_library_version=args.eval_library_version,
        include_samples=args.include_samples,
        model_id=args.model_id,
    )
    converter = importlib.import_module(HARNESSES[args.harness])
    try:
        batch = converter.convert(args.log_path, settings)
    except Refused as exc:
        return refused("eee convert", exc)
    _print(batch.warnings)
    if args.dry_run:
        planned, errors, warnings = preflight(batch, root, check_dvc=False)
        _print(errors + warnings)
        for item in planned:
            print(_describe(item, "would write"))
        if errors:
            print("dry run: these outputs could not be placed; nothing would be written", file=sys.stderr)
            return 1
        return 2 if batch.warnings or warnings else 0
    try:
        planned, warnings = place(batch, root, stage=not args.no_stage)
    except Refused as exc:
        refused("eee convert", exc)
        print("nothing was written", file=sys.stderr)
        return 1
    _print(warnings)
    for item in planned:
        print(_describe(item, "wrote") + (", the sidecar in DVC" if item.sidecar_rel else ""))
    staged = "staged" if not args.no_stage else "not staged (--no-stage)"
    print(f"{_plural(len(planned), 'record')} from {args.harness} logs, {staged}; review them, then `git commit`")
    sidecars = [root / item.sidecar_rel for item in planned if item.sidecar_rel]
    if sidecars:
        from eee.write.samples import push_command

        print(f"the sidecars are in DVC's cache only: after the commit, upload them with `{push_command(sidecars)}`")
    return 2 if batch.warnings or warnings else 0
