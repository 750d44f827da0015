"""``eee convert HARNESS PATH``: harness logs and published tables into records of the store.

Reads the harness's own output files (no harness package needed): HELM run directories,
lm-evaluation-harness results, Inspect AI logs, lighteval results (and details), AlpacaEval
leaderboards and annotations, or any results table with a YAML mapping (``eee convert table
--mapping FILE results.csv``). Writes schema-valid records (and, with ``--include-samples``,
their per-sample sidecars) at their canonical paths under ``data/``, places the sidecars by
the store's rule (git up to ``sidecar_git_max_bytes``, DVC above it) and stages everything,
ready for ``git commit``.

All or nothing: the outputs are validated in a temporary store first; an invalid output,
an existing target, a uuid already in use or a missing DVC set-up (for a sidecar DVC would
keep) leaves ``data/``
untouched. ``--dry-run`` prints what the real run will write and the exact command (its
uuids fixed with ``--uuid``) that writes exactly that. Exit codes (the table of
:mod:`eee.commands`): 0 converted, 2 converted with warnings (something was skipped), 1
nothing converted, 64 usage error. What was written goes to stdout; findings (errors,
warnings, hints) and notes to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from eee.commands import (
    EXIT_CODES_TEXT,
    Parser,
    UsageError,
    add_dry_run,
    add_store,
    add_uuid,
    checked_uuids,
    exact_command,
    refused,
)
from eee.reporting.findings import Finding, Refused

if TYPE_CHECKING:
    from eee.convert.common import Planned

HARNESSES = {
    "helm": "eee.convert.helm",
    "lm_eval": "eee.convert.lm_eval",
    "inspect": "eee.convert.inspect",
    "lighteval": "eee.convert.lighteval",
    "alpaca_eval": "eee.convert.alpaca_eval",
    "table": "eee.convert.table",
}


def build_parser() -> argparse.ArgumentParser:
    from eee.convert.common import RELATIONSHIPS

    p = Parser(
        "eee convert",
        "Convert HELM run directories, lm-evaluation-harness results, Inspect AI logs (.json, .eval), "
        "lighteval results, AlpacaEval leaderboards or annotations, or a results table described by a YAML "
        "mapping into records at data/<benchmark>/<developer>/<model>/<uuid>.json, validated, sidecars in git (up to the store's sidecar_git_max_bytes) or DVC, "
        "staged.",
        epilog=EXIT_CODES_TEXT + " (2 here: converted, but something was skipped; 1: nothing converted)",
    )
    p.add_argument("harness", choices=list(HARNESSES), help="the harness that wrote the logs, or `table`")
    p.add_argument(
        "path",
        nargs="?",
        type=Path,
        metavar="PATH",
        help="what to convert (the same as --log-path): helm: a run directory or a folder of them; lm_eval: "
        "results_*.json or its folder; inspect: a .json/.eval log or a folder of them; lighteval: "
        "results_*.json or lighteval's output folder; alpaca_eval: a leaderboard .csv, the folder of one "
        "run (annotations.json, leaderboard.csv) or its results/ folder (<model>/<annotator>/annotations.json); table: the .csv or .json table",
    )
    p.add_argument("--log-path", type=Path, metavar="PATH", help="the same as PATH")
    p.add_argument("--mapping", type=Path, metavar="FILE", help="table: the YAML mapping that describes the table")
    p.add_argument(
        "--models",
        type=Path,
        metavar="FILE",
        help="a YAML file mapping the log's model names to developer/model ids (name: developer/model per line)",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="NAME",
        help="alpaca_eval: leave out the model of this name (a leaderboard row, a results folder); repeatable",
    )
    p.add_argument(
        "--model-configs",
        type=Path,
        metavar="DIR",
        help="alpaca_eval: its models_configs folder (DIR/<name>/configs.yaml), read for the developers of "
        "model names no --models file names",
    )
    p.add_argument(
        "--include-samples",
        action="store_true",
        help="also write the per-sample sidecars (in git up to the store's threshold, else DVC)",
    )
    p.add_argument(
        "--source-organization",
        default="unknown",
        metavar="NAME",
        help="organisation that provides the results (default: unknown; a table's mapping names its own)",
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
    add_uuid(
        p,
        "the uuid of the record to write (default: a fresh one); once per record, in the order "
        "--dry-run lists them; refused when a record already has it",
        many=True,
    )
    add_store(
        p,
        help="the store (default: the git work tree that contains the current folder; a plain folder only with --no-stage)",
        find=False,
    )
    p.add_argument(
        "--experiment",
        metavar="ID",
        help="the experiment card the results are for (committed before them): recorded in each record's "
        "source_metadata.additional_details.eee_experiment",
    )
    p.add_argument("--no-stage", action="store_true", help="write (a large sidecar into DVC), but do not `git add`")
    add_dry_run(
        p, help="print what would be written, and the command (with its uuids) that writes exactly that; write nothing"
    )
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


def _cite(root: Path, card_id: str, batch: object) -> None:
    """Record the card ``card_id`` in every output's record; Refused unless the card is a
    valid id and committed at HEAD (the gate refuses results that come with their card)."""
    from eee.git.cli import has_commit
    from eee.governance.experiments import CITES, ID_RE, path_for
    from eee.reporting.findings import refusal
    from eee.store.tree import GitTree

    if not ID_RE.match(card_id):
        raise refusal(
            f"--experiment {card_id[:80]!r} is no card id (lowercase letters, digits and hyphens)",
            "give the id of a card of governance/experiments/",
            check="experiment-order",
        )
    rel = path_for(card_id)
    if not (has_commit("HEAD", root) and GitTree(root, "HEAD").exists(rel)):
        said = "is not committed yet" if (root / rel).is_file() else "is not in the store"
        raise refusal(
            f"the experiment card {card_id} ({rel}) {said}: a card is committed before the results that cite it",
            f"`eee experiment new {card_id} ... --commit` first (or commit {rel} on its own), then convert",
            file=rel,
            check="experiment-order",
        )
    for out in batch.outputs:  # type: ignore[attr-defined]
        source = out.record.setdefault("source_metadata", {})
        details = source.setdefault("additional_details", {})
        details[CITES] = card_id


def main(argv: list[str]) -> int:
    p = build_parser()
    args = p.parse_intermixed_args(argv)  # PATH may follow the options
    from eee.convert.common import Settings, place, preflight
    from eee.convert.mapping import MappingError, load_models

    if args.path is not None and args.log_path is not None:
        p.error("give the path once: PATH or --log-path, not both")
    path = args.path if args.path is not None else args.log_path
    if path is None:
        p.error("what to convert is missing: give PATH (or --log-path PATH)")
    if args.harness == "table" and args.mapping is None:
        p.error("table needs --mapping FILE: the YAML mapping that says which column is what")
    if args.harness != "table" and args.mapping is not None:
        p.error(f"--mapping is for `eee convert table`, not {args.harness}")
    if args.harness != "alpaca_eval" and (args.exclude or args.model_configs is not None):
        p.error(f"--exclude and --model-configs are for `eee convert alpaca_eval`, not {args.harness}")
    if args.model_configs is not None and not args.model_configs.is_dir():
        p.error(f"--model-configs {args.model_configs}: not a folder (give alpaca_eval's models_configs folder)")
    try:
        uuids = checked_uuids(args.uuid)
    except UsageError as exc:
        p.error(str(exc))
    try:
        root = _store_root(args.store, stage=not args.no_stage)
    except UsageError as exc:
        p.store_error(str(exc))
    try:
        model_ids = load_models(args.models) if args.models is not None else {}
    except MappingError as exc:
        return refused("eee convert", exc)
    settings = Settings(
        source_organization=args.source_organization,
        evaluator_relationship=args.evaluator_relationship,
        eval_library_version=args.eval_library_version,
        include_samples=args.include_samples,
        model_id=args.model_id,
        model_ids=model_ids,
        mapping=args.mapping,
        exclude=tuple(args.exclude),
        model_configs=args.model_configs,
    )
    converter = importlib.import_module(HARNESSES[args.harness])
    try:
        batch = converter.convert(path, settings)
    except Refused as exc:
        from eee.convert.common import display
        from eee.convert.sniff import hint_for
        from eee.reporting.findings import Finding

        other = hint_for(path, args.harness)
        if other is not None:  # another converter reads it: said first, with the command
            exc = Refused([Finding(display(path), "$", other[0], other[1], check="input"), *exc.findings])
        refused("eee convert", exc)
        print("nothing was written", file=sys.stderr)
        return 1
    if args.experiment is not None:
        try:
            _cite(root, args.experiment, batch)
        except Refused as exc:
            refused("eee convert", exc)
            print("nothing was written", file=sys.stderr)
            return 1
    _print(batch.warnings)
    for note in batch.notes:
        print(f"note: {note}", file=sys.stderr)
    if uuids is not None and len(uuids) != len(batch.outputs):
        p.error(
            f"--uuid is given {_plural(len(uuids), 'time')} for {_plural(len(batch.outputs), 'record')}; "
            "give one per record, in the order --dry-run lists them"
        )
    if args.dry_run:
        planned, errors, warnings = preflight(batch, root, check_dvc=False, uuids=uuids)
        _print(errors + warnings)
        for item in planned:
            print(_describe(item, "would write"))
        if errors:
            print("dry run: these outputs could not be placed; nothing would be written", file=sys.stderr)
            return 1
        uuids = [item.record_rel.rsplit("/", 1)[1].removesuffix(".json") for item in planned]
        command = exact_command("convert", argv, uuids)
        print(f"to write exactly these (the same uuids), run: {command}")
        return 2 if batch.warnings or warnings else 0
    try:
        planned, warnings = place(batch, root, stage=not args.no_stage, uuids=uuids)
    except Refused as exc:
        refused("eee convert", exc)
        print("nothing was written", file=sys.stderr)
        return 1
    _print(warnings)
    from eee.store.paths import POINTER_SUFFIX

    in_dvc = {
        item.sidecar_rel
        for item in planned
        if item.sidecar_rel and (root / (item.sidecar_rel + POINTER_SUFFIX)).exists()
    }
    for item in planned:
        where = (
            ""
            if not item.sidecar_rel
            else ", the sidecar in DVC"
            if item.sidecar_rel in in_dvc
            else ", the sidecar in git"
        )
        print(_describe(item, "wrote") + where)
    staged = "staged" if not args.no_stage else "not staged (--no-stage)"
    source = "the table" if args.harness == "table" else f"{args.harness} logs"
    print(f"{_plural(len(planned), 'record')} from {source}, {staged}; review them, then `git commit`")
    sidecars = [root / rel for rel in sorted(in_dvc)]
    if sidecars:
        from eee.write.samples import push_command

        print(f"the sidecars are in DVC's cache only: after the commit, upload them with `{push_command(sidecars)}`")
    return 2 if batch.warnings or warnings else 0
