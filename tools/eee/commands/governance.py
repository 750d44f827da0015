"""The governance tools: ``eee retract|supersede|dispute|resolve|reinstate|status``.

Each is also a thin executable in tools/ (tools/retract, ...). Options common to all
actions: ``--dry-run`` (check and show, write nothing), ``--commit`` (stage and commit
through the hooks), ``--format json``, ``--store DIR``. Exit 0 done, 1 refused (nothing
written), 64 usage error (see :mod:`eee.commands`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from eee.actions import perform, status
from eee.commands import Parser, UsageError, add_store, refused, store_of, usage_error
from eee.findings import Refused, refusal
from eee.gitutil import GitError
from eee.paths import UUID4_RE

DESCRIPTIONS = {
    "retract": "Mark a record retracted: submitted in error or built on faulty source data. The record stays.",
    "supersede": "Replace a record by a corrected one (a file, placed under a fresh uuid, or an existing uuid).",
    "dispute": "Mark a record's metadata as contested, pointing at the discussion.",
    "resolve": "Close a dispute, saying how it ended.",
    "reinstate": "Undo a retraction made in error (the retraction stays in the history).",
    "status": "Show a record's path, its status and its full history.",
}


def _parser(action: str) -> argparse.ArgumentParser:
    p = Parser(f"eee {action}", DESCRIPTIONS[action])
    p.add_argument("record", metavar="UUID", help="the record's uuid")
    if action == "supersede":
        p.add_argument(
            "replacement", metavar="NEW", help="the corrected record: a JSON file, or the uuid of a record in the store"
        )
    if action != "status":
        p.add_argument("--reason", required=True, help="why (never empty)")
        if action in ("retract", "dispute", "resolve"):
            p.add_argument(
                "--reference", required=action == "dispute", metavar="URL", help="the discussion or evidence"
            )
        if action == "resolve":
            p.add_argument("--outcome", choices=("upheld", "corrected", "retracted"), help="how the dispute ended")
        p.add_argument("--dry-run", action="store_true", help="check and show what would be written; write nothing")
        p.add_argument("--commit", action="store_true", help="stage and commit the change (through the hooks)")
    p.add_argument(
        "--format",
        choices=("rich", "json"),
        default="rich",
        help="rich: text (refusals on stderr); json: one JSON document on stdout, refusals included (default: rich)",
    )
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
    if info["preceded_by"]:
        print(f"preceded by  {info['preceded_by']}")
    if len(info["chain"]) > 1:
        print(f"chain        {' -> '.join(info['chain'])}")
    print("history:" if info["history"] else "history:     (no events)")
    for event in info["history"]:
        actor = event.get("actor", {})
        extra = ""
        if event.get("replacement"):
            extra = f" -> {event['replacement']}"
        if event.get("reference"):
            extra += f" [{event['reference']}]"
        print(
            f"  {event['timestamp']}  {event['action']}{extra} by {actor.get('name')} <{actor.get('email')}>: {event['reason']}"
        )


def run(action: str, argv: list[str]) -> int:
    args = _parser(action).parse_args(argv)
    try:
        root = store_of(args.store)
    except UsageError as exc:
        return usage_error(f"eee {action}", exc)
    try:
        if action == "status":
            info = status(root, args.record)
            if args.format == "json":
                print(json.dumps(info, indent=2))
            else:
                _print_status(info)
            return 0
        kwargs: dict[str, Any] = {"dry_run": args.dry_run, "commit": args.commit}
        if action == "supersede":
            candidate = Path(args.replacement)
            if UUID4_RE.match(args.replacement) and not candidate.exists():
                kwargs["replacement"] = args.replacement
            else:
                kwargs["new_record"] = candidate
        if action in ("retract", "dispute", "resolve"):
            kwargs["reference"] = args.reference
        if action == "resolve":
            kwargs["outcome"] = args.outcome
        result = perform(root, action, args.record, args.reason, **kwargs)
    except (Refused, GitError) as error:
        exc = error if isinstance(error, Refused) else refusal(str(error), check="git")  # git's own refusal
        if args.format == "json":
            print(json.dumps({"refused": [f.to_dict() for f in exc.findings]}, indent=2))
            return 1
        return refused(f"eee {action}", exc)
    if args.format == "json":
        print(json.dumps(result, indent=2))
        return 0
    verb = "would write" if result["dry_run"] else "wrote"
    print(f"{action} {result['record']} ({result['record_path']})")
    if result["replacement"]:
        print(f"  replacement {result['replacement']} ({result['replacement_path']})")
    print(f"  {verb} {result['event_path']}")
    if result["committed"]:
        print("  committed")
    return 0
