"""The governance tools: ``eee retract|supersede|dispute|resolve|reinstate|flag|mark-duplicate``
(``eee status`` reads what they write: :mod:`eee.commands.status`).

Each is also a thin executable in tools/ (tools/retract, ...); the actions and their
commands are declared once in :data:`eee.governance.ACTIONS`, and each parser is built from
its action: the description, ``--reference`` as the action takes one, the other record it
names, and the options common to all actions: ``--reason``, ``--dry-run`` (check and show,
write nothing), ``--commit`` (commit through the hooks, atomically), ``--format rich|json``,
``--store``. A record is named by its uuid or a unique prefix of at least eight hex digits.
Exit 0 done, 1 refused (nothing written), 2 done with warnings (a flag that accepts no
finding of its record), 64 usage error (``eee flag --rule`` naming no registered rule).
"""

from __future__ import annotations

import argparse
import inspect
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eee.commands import (
    EXIT_OK,
    EXIT_WARNINGS,
    OUTPUT_FORMATS,
    UsageError,
    add_dry_run,
    add_format,
    add_store,
    add_uuid,
    checked_uuids,
    exact_command,
    parser,
)
from eee.git.cli import GitError
from eee.governance import BY_COMMAND
from eee.reporting.findings import Refused, refusal
from eee.reporting.reporters import reporter
from eee.reporting.shown import command as eee_command
from eee.store.paths import POINTER_SUFFIX, UUID4_RE

if TYPE_CHECKING:
    from eee.write.actions import Corrected

UUID_HELP = "the record's uuid, or a unique prefix of at least 8 hex digits"


def _parser(command: str) -> argparse.ArgumentParser:
    """The parser of one action's command, from its declaration in :data:`eee.governance.ACTIONS`."""
    action = BY_COMMAND[command]
    p = parser(f"eee {command}", action.description)
    p.add_argument("record", metavar="UUID", help=UUID_HELP)
    if command == "supersede":
        p.add_argument(
            "replacement",
            metavar="NEW",
            help="the corrected record: a JSON file, the uuid (or unique prefix) of a record in the store, or "
            "with --convert a harness log",
        )
    p.add_argument("--reason", required=True, help="why (never empty; printable text, line breaks allowed)")
    if action.reference != "no":
        p.add_argument(
            "--reference",
            required=action.reference == "required",
            metavar="URL",
            help="the discussion or evidence (http or https URL)",
        )
    for option in action.options:  # its own options, as declared
        p.add_argument(
            option.flag,
            dest=option.dest,
            required=option.required,
            metavar=option.metavar,
            choices=option.choices or None,
            help=option.help,
        )
    if command in ("supersede", "resolve"):
        _corrected_options(p)
    if command in ("supersede", "resolve"):
        add_dry_run(
            p,
            help="check and show what would be written, and for a corrected record given as a file the exact "
            "command (its uuid included) that writes exactly that; write nothing",
        )
    else:
        add_dry_run(p)
    p.add_argument(
        "--commit",
        action="store_true",
        help="commit the event (and a corrected record) through the hooks; it exists exactly when its commit does",
    )
    add_format(p, OUTPUT_FORMATS)
    add_store(p)
    return p


def _corrected_options(p: argparse.ArgumentParser) -> None:
    """The options of a corrected record given as a file (or a log): its sidecar, its uuid,
    its benchmark folder, a harness log to convert."""
    from eee.commands.convert import HARNESSES

    p.add_argument(
        "--sidecar",
        type=Path,
        metavar="FILE",
        help="the corrected record's per-sample results (JSON Lines): placed beside it as <uuid>_samples.jsonl and "
        "added by the store's rule; the record's detailed_evaluation_results (file_path, checksum, total_rows) "
        "is written for it",
    )
    add_uuid(p, "the uuid of the corrected record (default: a fresh one; --dry-run prints the command with it)")
    p.add_argument(
        "--benchmark",
        metavar="FOLDER",
        help="the benchmark folder of the corrected record (default: the one of the record it corrects; with "
        "--convert, the converter's)",
    )
    p.add_argument(
        "--convert",
        choices=list(HARNESSES)[:-1],
        metavar="HARNESS",
        help="the replacement is a harness log: convert it (with its per-sample results) into the corrected "
        "record, with the model id, source organisation and evaluator relationship of the record it corrects "
        f"({', '.join(list(HARNESSES)[:-1])})",
    )


def _refused(command: str, exc: Refused, fmt: str) -> int:
    return reporter(fmt).refusal(f"eee {command}", exc.findings)  # json: one document on stdout, the refusal


def _replacement_kwargs(value: str, args: argparse.Namespace, root: Path) -> dict[str, Any]:
    """``replacement`` (a record of the store) or ``new_record`` (a corrected record to place,
    from a file or a converted log) for :func:`eee.write.actions.perform`."""
    from eee.write.actions import Corrected

    candidate = Path(value)
    looks_like_uuid = UUID4_RE.match(value) or (
        len(value) >= 8 and all(c in "0123456789abcdef-" for c in value) and not value.endswith(".json")
    )
    placing = any(getattr(args, k, None) is not None for k in ("sidecar", "uuid", "benchmark", "convert"))
    if looks_like_uuid and not candidate.exists():
        if placing:
            raise refusal(
                f"{value} names a record of the store: --sidecar, --uuid, --benchmark and --convert place a "
                "corrected record given as a file",
                "give the corrected record as a JSON file (or a log with --convert)",
            )
        return {"replacement": value}
    uuid = checked_uuids(args.uuid)
    new = Corrected(
        str(candidate),
        path=candidate,
        sidecar=args.sidecar,
        uuid=uuid[0] if uuid else None,
        benchmark=args.benchmark,
    )
    if args.convert is not None:
        if args.sidecar is not None:
            raise refusal("--convert takes the per-sample results from the log: leave out --sidecar")
        new = _converted(new, args.convert, args.record, root)
    return {"new_record": new}


def _converted(new: Corrected, harness: str, record: str, root: Path) -> Corrected:
    """The corrected record (and its rows) converted from the log ``new.path``, as the record
    ``record`` it corrects would have been: its model id, source organisation and evaluator
    relationship. Refused unless the log gives exactly one record."""
    import importlib

    from eee.commands.convert import HARNESSES
    from eee.convert.common import Settings
    from eee.governance.index import PrefixProblem, RecordIndex, resolve_uuid
    from eee.store.jsonlite import load_object
    from eee.store.strictjson import canonical_row
    from eee.write.actions import Corrected

    index = RecordIndex(root)
    try:
        old = resolve_uuid(index, record, "record")
    except PrefixProblem as exc:
        raise refusal(exc.message, exc.hint) from None
    rel = index.path(old)
    doc = load_object(str(root / rel)) if rel else None
    if doc is None:
        raise refusal(f"cannot read the record {old} to take its model id from", file=rel)
    info, source = doc.get("model_info"), doc.get("source_metadata")
    info, source = info if isinstance(info, dict) else {}, source if isinstance(source, dict) else {}
    settings = Settings(
        source_organization=str(source.get("source_organization_name") or "unknown"),
        evaluator_relationship=str(source.get("evaluator_relationship") or "third_party"),
        include_samples=True,
        model_id=info.get("id") if isinstance(info.get("id"), str) else None,
    )
    batch = importlib.import_module(HARNESSES[harness]).convert(Path(new.source), settings)
    if batch.warnings:  # what the converter left out, said as eee convert says it
        from eee.reporting.reporters import text_lines

        for warning in batch.warnings:
            print("\n".join(text_lines(warning)), file=sys.stderr)
    if len(batch.outputs) != 1:
        raise refusal(
            f"the log gives {len(batch.outputs)} records; a correction replaces one record by one",
            f"convert it with `{eee_command('convert', harness, new.source, '--include-samples', '--dry-run')}` to see "
            "them, then supersede with the one that corrects this record",
            file=new.source,
        )
    output = batch.outputs[0]
    rows = output.rows or []
    return Corrected(
        new.source,
        doc=output.record,
        rows=b"".join(canonical_row(row) for row in rows) if rows else None,
        count=len(rows),
        uuid=new.uuid,
        benchmark=new.benchmark or output.benchmark,
    )


def run(command: str, argv: list[str]) -> int:
    from eee.write.actions import perform  # lazy: the tools' layer, only once the arguments are read

    p = _parser(command)
    args = p.parse_args(argv)
    if command == "flag":
        problem = _flag_arguments_problem(args.rule, args.path)
        if problem:
            p.error(problem)  # exit 64
    root = args.store
    try:
        action = BY_COMMAND[command].name
        kwargs: dict[str, Any] = {"dry_run": args.dry_run, "commit": args.commit}
        if command == "supersede":
            kwargs.update(_replacement_kwargs(args.replacement, args, root))
        if hasattr(args, "reference"):
            kwargs["reference"] = args.reference
        declared = BY_COMMAND[command]
        performed = inspect.signature(perform).parameters  # an option an action declared since may name no parameter
        own = {o.dest: getattr(args, o.dest) for o in declared.options if o.passed}
        kwargs.update({k: v for k, v in own.items() if k in performed})
        fields = {k: v for k, v in own.items() if k not in performed and v is not None}  # an action declared since
        if fields:
            kwargs["fields"] = fields
        if command == "resolve":
            if args.replacement:
                kwargs.update(_replacement_kwargs(args.replacement, args, root))
            elif any(getattr(args, k) is not None for k in ("sidecar", "uuid", "benchmark", "convert")):
                p.error("--sidecar, --uuid, --benchmark and --convert go with --replacement FILE")
        result = perform(root, action, args.record, _argv_text(args.reason), **kwargs)
    except UsageError as exc:
        p.error(str(exc))
    except (Refused, GitError) as error:
        exc = error if isinstance(error, Refused) else refusal(str(error), check="git")  # git's own refusal
        return _refused(command, exc, args.format)
    if result["dry_run"] and kwargs.get("new_record") is not None:  # the real run, the same uuid drawn
        result["command"] = exact_command(command, argv, [result["replacement"]])

    def text() -> None:
        verb = "would write" if result["dry_run"] else "wrote"
        print(f"{command} {result['record']} ({result['record_path']})")
        if result["replacement"]:
            print(f"  replacement {result['replacement']} ({result['replacement_path']})")
        if kwargs.get("new_record") is not None:
            print(f"  {verb} {result['replacement_path']}")
            if result["replacement_sidecar"]:
                print(
                    f"  {verb} {result['replacement_sidecar']} ({result['replacement_rows']} rows; by the store's rule)"
                )
        if result.get("of"):
            print(f"  duplicate of {result['of']} (which stands)")
        for path in result["event_paths"]:
            print(f"  {verb} {path}")
        if result.get("signing") and (result["dry_run"] or result["signing"]["needs_signature"]):
            print(f"  {result['signing']['said']}")
        if result["committed"]:
            print(f"  committed {result['commit'][:10]}")
        for warning in result.get("warnings") or []:
            print(
                f"{warning['file']}::{warning['pointer']}: [{warning['check']}] warning: {warning['message']}\n"
                f"    hint: {warning['hint']}",
                file=sys.stderr,
            )
        if result.get("command"):
            print(f"to write exactly this (the same uuid), run: {result['command']}")

    reporter(args.format).result(result, text)
    side = result.get("replacement_sidecar")
    if not result["dry_run"] and side and (root / (side + POINTER_SUFFIX)).exists():
        from eee.write.samples import push_command

        print(
            f"the sidecar is in DVC's cache only: after the commit, upload it with `{push_command([root / side])}`",
            file=sys.stderr,
        )
    if not result["dry_run"] and not result["committed"]:
        paths = " ".join(result["event_paths"] + _placed(root, result, kwargs))
        print(
            f"eee {command}: not committed yet: the event counts once it is committed "
            f"(git add {paths} && git commit, or run the tool with --commit)",
            file=sys.stderr,
        )
    return EXIT_WARNINGS if result.get("warnings") else EXIT_OK


def _flag_arguments_problem(rule: str, path: str) -> str | None:
    """Why ``--rule``/``--json-path`` cannot name a flag: a rule that is not registered (a
    word for one gets the did-you-mean, never accepted), or a JSON path no finding writes."""
    from eee.rules.registry import IDS, unknown_text
    from eee.store.jsonpath import well_formed

    if rule not in IDS:
        return f"--rule {rule}: {unknown_text(rule)}"
    if not well_formed(path):
        return (
            f"--json-path {path!r} is not a JSON path as findings write it "
            '($, then .name, [0] or ["other key"] steps): copy it from the finding'
        )
    return None


def _placed(root: Path, result: dict[str, Any], kwargs: dict[str, Any]) -> list[str]:
    """The files a corrected record placed without --commit: to stage with the events."""
    if kwargs.get("new_record") is None:
        return []
    out = [result["replacement_path"]]
    side = result.get("replacement_sidecar")
    if side:
        pointer = side + POINTER_SUFFIX
        if (root / pointer).exists():  # in DVC: its pointer, and the folder's .gitignore that names it
            out += [pointer, f"{side.rpartition('/')[0]}/.gitignore"]
        else:
            out.append(side)
    return [shlex.quote(p) for p in out]


def _argv_text(value: str) -> str | bytes:
    """A command-line argument as text; one that was not UTF-8 is passed on as its bytes
    (so the refusal can name the byte), never as a string with lone surrogates."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return value  # a lone surrogate not from a byte: the reason check names it
    return value
