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
import json
import sys
from pathlib import Path
from typing import Any

from eee.commands import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_WARNINGS,
    OUTPUT_FORMATS,
    add_dry_run,
    add_format,
    add_store,
    parser,
    refused,
)
from eee.git.cli import GitError
from eee.governance import BY_COMMAND, OUTCOMES
from eee.reporting.findings import Refused, refusal
from eee.store.paths import UUID4_RE

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
            help="the corrected record: a JSON file, or the uuid (or unique prefix) of a record in the store",
        )
    p.add_argument("--reason", required=True, help="why (never empty; printable text, line breaks allowed)")
    if action.reference != "no":
        p.add_argument(
            "--reference",
            required=action.reference == "required",
            metavar="URL",
            help="the discussion or evidence (http or https URL)",
        )
    if command == "resolve":
        p.add_argument(
            "--outcome",
            required=True,
            choices=OUTCOMES,
            help="upheld: the record stays; retracted: the retraction is written in the same commit; "
            "corrected: the supersession by --replacement is written in the same commit",
        )
        p.add_argument(
            "--replacement",
            metavar="NEW",
            help="with --outcome corrected: the corrected record (a JSON file, or a uuid or prefix in the store)",
        )
        p.add_argument(
            "--event",
            metavar="ID",
            help="the one open dispute or flag event to close (default: every open one)",
        )
    if command == "flag":
        p.add_argument(
            "--rule",
            required=True,
            metavar="ID",
            help="the rule the record breaks: the [id] its finding shows (`eee rules` lists them)",
        )
        p.add_argument(
            "--json-path",
            dest="path",
            required=True,
            metavar="JSONPATH",
            help="the JSON path of the finding, as the finding writes it, e.g. '$.a.b[0]'",
        )
    if command == "mark-duplicate":
        p.add_argument("--of", required=True, metavar="UUID", help="the record that stands (uuid or unique prefix)")
    add_dry_run(p)
    p.add_argument(
        "--commit",
        action="store_true",
        help="commit the event (and a corrected record) through the hooks; it exists exactly when its commit does",
    )
    add_format(p, OUTPUT_FORMATS)
    add_store(p)
    return p


def _refused(command: str, exc: Refused, fmt: str) -> int:
    if fmt == "json":  # one JSON document on stdout, the refusal included
        print(json.dumps({"refused": [f.to_dict() for f in exc.findings]}, indent=2, ensure_ascii=False))
        return EXIT_ERRORS
    return refused(f"eee {command}", exc)


def _replacement_kwargs(value: str) -> dict[str, Any]:
    candidate = Path(value)
    looks_like_uuid = UUID4_RE.match(value) or (
        len(value) >= 8 and all(c in "0123456789abcdef-" for c in value) and not value.endswith(".json")
    )
    if looks_like_uuid and not candidate.exists():
        return {"replacement": value}
    return {"new_record": candidate}


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
            kwargs.update(_replacement_kwargs(args.replacement))
        if hasattr(args, "reference"):
            kwargs["reference"] = args.reference
        if command == "resolve":
            kwargs["outcome"] = args.outcome
            kwargs["resolves"] = args.event
            if args.replacement:
                kwargs.update(_replacement_kwargs(args.replacement))
        if command == "flag":
            kwargs["rule"], kwargs["path"] = args.rule, args.path
        if command == "mark-duplicate":
            kwargs["of"] = args.of
        result = perform(root, action, args.record, _argv_text(args.reason), **kwargs)
    except (Refused, GitError) as error:
        exc = error if isinstance(error, Refused) else refusal(str(error), check="git")  # git's own refusal
        return _refused(command, exc, args.format)
    if args.format == "json":
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        verb = "would write" if result["dry_run"] else "wrote"
        print(f"{command} {result['record']} ({result['record_path']})")
        if result["replacement"]:
            print(f"  replacement {result['replacement']} ({result['replacement_path']})")
        if result.get("of"):
            print(f"  duplicate of {result['of']} (which stands)")
        for path in result["event_paths"]:
            print(f"  {verb} {path}")
        if result["committed"]:
            print(f"  committed {result['commit'][:10]}")
        for warning in result.get("warnings") or []:
            print(
                f"{warning['file']}::{warning['pointer']}: [{warning['check']}] warning: {warning['message']}\n"
                f"    hint: {warning['hint']}",
                file=sys.stderr,
            )
    if not result["dry_run"] and not result["committed"]:
        paths = " ".join(result["event_paths"] + ([result["replacement_path"]] if args_new_file(kwargs) else []))
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


def args_new_file(kwargs: dict[str, Any]) -> bool:
    return kwargs.get("new_record") is not None


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
