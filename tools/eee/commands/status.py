"""``eee status UUID``: one record's path, status, relations and history, from the one
status fold (:mod:`eee.governance.status`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from eee.commands import EXIT_OK, OUTPUT_FORMATS, add_format, add_store, parser
from eee.commands.governance import UUID_HELP
from eee.commands.governance import _refused as governance_refusal
from eee.git.cli import GitError
from eee.reporting.findings import Refused, refusal

DESCRIPTION = (
    "Show a record's path, status (active, flagged, disputed, retracted, superseded), its last "
    "resolution, its relations (DataCite: IsNewVersionOf, IsPreviousVersionOf, IsIdenticalTo), its "
    "version chain and its full history in the order events entered history; uncommitted events "
    "are marked."
)


def build_parser() -> argparse.ArgumentParser:
    p = parser("eee status", DESCRIPTION)
    p.add_argument("record", metavar="UUID", help=UUID_HELP)
    add_format(p, OUTPUT_FORMATS)
    add_store(p)
    return p


def main(argv: list[str]) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    from eee.write.actions import status  # lazy: the tools' layer, only once the arguments are read

    try:
        info = status(args.store, args.record)
    except (Refused, GitError) as error:
        exc = error if isinstance(error, Refused) else refusal(str(error), check="git")  # git's own refusal
        return governance_refusal("status", exc, args.format)
    if args.format == "json":
        print(json.dumps(info, indent=2, ensure_ascii=False))
    else:
        _print_status(info)
    return EXIT_OK


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
