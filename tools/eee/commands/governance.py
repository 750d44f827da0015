"""The governance tools: ``eee retract|supersede|dispute|resolve|reinstate|flag|mark-duplicate|status``.

Each is also a thin executable in tools/ (tools/retract, ...); the actions and their
commands are declared once in :data:`eee.governance.ACTIONS`. Options common to all
actions: ``--dry-run`` (check and show, write nothing), ``--commit`` (commit through the
hooks, atomically), ``--format json``. A record is named by its uuid or a unique prefix of
at least eight hex digits. Exit 0 done, 1 refused (nothing written), 64 usage error.
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
    UsageError,
    add_store,
    parser,
    refused,
    store_of,
    usage_error,
)
from eee.git.cli import GitError
from eee.governance import BY_COMMAND, OUTCOMES
from eee.reporting.findings import Refused, refusal
from eee.store.paths import UUID4_RE

STATUS_DESCRIPTION = (
    "Show a record's path, status (active, flagged, disputed, retracted, superseded), its last "
    "resolution, its relations (DataCite: IsNewVersionOf, IsPreviousVersionOf, IsIdenticalTo), its "
    "version chain and its full history in the order events entered history; uncommitted events "
    "are marked."
)
UUID_HELP = "the record's uuid, or a unique prefix of at least 8 hex digits"


def _parser(command: str) -> argparse.ArgumentParser:
    if command == "status":
        p = parser("eee status", STATUS_DESCRIPTION)
    else:
        p = parser(f"eee {command}", BY_COMMAND[command].description)
    p.add_argument("record", metavar="UUID", help=UUID_HELP)
    if command == "supersede":
        p.add_argument(
            "replacement",
            metavar="NEW",
            help="the corrected record: a JSON file, or the uuid (or unique prefix) of a record in the store",
        )
    if command != "status":
        action = BY_COMMAND[command]
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
        p.add_argument("--dry-run", action="store_true", help="check and show what would be written; write nothing")
        p.add_argument(
            "--commit",
            action="store_true",
            help="commit the event (and a corrected record) through the hooks; it exists exactly when its commit does",
        )
    p.add_argument("--format", choices=("rich", "json"), default="rich", help="output format (default: rich)")
    add_store(p)
    return p


def _print_status(info: dict[str, Any]) -> None:
    line = info["status"]
    if info["superseded_by"]:
        line += f" (by {info['superseded_by']})"
    if info["retraction_reason"]:
        line += f": {info['retraction_reason']}"
    if info["status"] == "disputed":
        line += f" ({info['dispute_reference']})"
    print(f"record       {info['record']}")
    print(f"path         {info['path']}")
    print(f"status       {line}")
    for flag in info["flags"]:
        print(f"flag         {flag['rule']} at {flag['path']}: {flag['reason']}")
    if info["last_resolution"]:
        res = info["last_resolution"]
        print(f"resolution   {res['outcome']}: {res['reason']} ({res['timestamp']})")
    if info["preceded_by"]:
        print(f"preceded by  {info['preceded_by']}")
    if info["duplicate_of"]:
        print(f"duplicate of {info['duplicate_of']} (which stands)")
    if len(info["chain"]) > 1:
        print(f"chain        {' -> '.join(info['chain'])}")
    for rel in info["relations"]:
        other = rel.get("record") or f"{rel.get('source')} ({rel.get('identifier')})"
        print(f"relation     {rel['relation']} {other}")
    print("history:" if info["history"] else "history:     (no events)")
    for event in info["history"]:
        actor = event.get("actor", {})
        extra = ""
        if event.get("replacement"):
            extra = f" -> {event['replacement']}"
        if event.get("of"):
            extra = f" of {event['of']}"
        if event.get("outcome"):
            extra += f" ({event['outcome']})"
        if event.get("rule"):
            extra += f" {event['rule']} at {event['path']}"
        if event.get("reference"):
            extra += f" [{event['reference']}]"
        mark = "  (uncommitted)" if event.get("uncommitted") else ""
        reason = str(event.get("reason", "")).replace("\n", "\n      ")
        print(
            f"  {event.get('timestamp')}  {event.get('action')}{extra} by {actor.get('name')} <{actor.get('email')}>{mark}: {reason}"
        )
    for problem in info.get("ignored_events") or []:
        print(f"  ignored: {problem['event']}: {problem['message']}")
    if info.get("uncommitted"):
        print(
            f"note: {info['uncommitted']} event(s) are not committed yet: they count once committed",
            file=sys.stderr,
        )


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
    from eee.write.actions import perform, status  # lazy: the tools' layer, only once the arguments are read

    args = _parser(command).parse_args(argv)
    try:
        if command == "flag":
            _check_flag_arguments(args.rule, args.path)
        root = store_of(args.store)
    except UsageError as exc:
        return usage_error(f"eee {command}", exc)
    try:
        if command == "status":
            info = status(root, args.record)
            if args.format == "json":
                print(json.dumps(info, indent=2, ensure_ascii=False))
            else:
                _print_status(info)
            return EXIT_OK
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
    code = EXIT_WARNINGS if result.get("warnings") else EXIT_OK
    if not result["dry_run"] and not result["committed"]:
        paths = " ".join(result["event_paths"] + ([result["replacement_path"]] if args_new_file(kwargs) else []))
        print(
            f"eee {command}: not committed yet: the event counts once it is committed "
            f"(git add {paths} && git commit, or run the tool with --commit)",
            file=sys.stderr,
        )
    return code


def _check_flag_arguments(rule: str, path: str) -> None:
    """``--rule`` names a registered rule (a word for one gets the did-you-mean, never
    accepted) and ``--json-path`` is a JSON path as findings write it; else UsageError."""
    from eee.rules.registry import IDS, unknown_text
    from eee.store.jsonpath import well_formed

    if rule not in IDS:
        raise UsageError(f"--rule {rule}: {unknown_text(rule)}")
    if not well_formed(path):
        raise UsageError(
            f"--json-path {path!r} is not a JSON path as findings write it "
            '($, then .name, [0] or ["other key"] steps): copy it from the finding'
        )


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
