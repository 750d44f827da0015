"""``eee status UUID``: one record's path, status, relations and history.
``eee status --list [--status S ...]``: the store's records by status.

Both read the one status fold (:mod:`eee.governance.status`). A record's status is a
lifecycle value (active, superseded, retracted, duplicate) plus markers (disputed,
flagged): the ledger's state machine (:mod:`eee.governance.lifecycle`). A record is
*active* (it stands) unless it is retracted, superseded or marked a duplicate
(:func:`eee.catalog.table.exclusion`, the same test the statistics, the comparison and the
IRT fit use); a flagged or disputed record is active and carries its marker. A superseded
record or a duplicate names the record that stands for it (``stands_on``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from eee.commands import EXIT_OK, OUTPUT_FORMATS, add_format, add_store, parser
from eee.commands.governance import UUID_HELP
from eee.commands.governance import _refused as governance_refusal
from eee.git.cli import GitError
from eee.reporting.findings import Refused, refusal
from eee.reporting.reporters import reporter

DESCRIPTION = (
    "Show a record's path, status (active, flagged, disputed, retracted, superseded, duplicate), its last "
    "resolution, its relations (DataCite: IsNewVersionOf, IsPreviousVersionOf, IsIdenticalTo), its "
    "version chain and its full history in the order events entered history; uncommitted events "
    "are marked. With --list: every record of the store with its status (active: not retracted, "
    "superseded or marked duplicate; flagged and disputed records are active)."
)
# what --list shows and --status selects: the fold's statuses, and duplicate (a record
# marked a duplicate of another, unless it was withdrawn)
LISTED = ("active", "flagged", "disputed", "retracted", "superseded", "duplicate")
ACTIVE = ("active", "flagged", "disputed")  # what --status active selects


def build_parser() -> argparse.ArgumentParser:
    p = parser("eee status", DESCRIPTION)
    p.add_argument("record", metavar="UUID", nargs="?", help=UUID_HELP + " (not with --list)")
    p.add_argument("--list", action="store_true", help="list the store's records with their status")
    p.add_argument(
        "--status",
        dest="statuses",
        nargs="+",
        action="extend",
        choices=LISTED,
        metavar="S",
        help="with --list: only records of these statuses, among "
        f"{', '.join(LISTED)} (active includes flagged and disputed)",
    )
    add_format(p, OUTPUT_FORMATS)
    add_store(p)
    return p


def main(argv: list[str]) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.list and args.record:
        p.error("give a record (UUID) or --list, not both")
    if args.statuses and not args.list:
        p.error("--status selects what --list shows: add --list")
    if not args.list and not args.record:
        p.error("give a record (UUID), or --list to list the records")
    if args.list:
        return _list(args.store, args.statuses or [], args.format)
    from eee.write.actions import status  # lazy: the tools' layer, only once the arguments are read

    try:
        info = status(args.store, args.record)
    except (Refused, GitError) as error:
        exc = error if isinstance(error, Refused) else refusal(str(error), check="git")  # git's own refusal
        return governance_refusal("status", exc, args.format)
    reporter(args.format).result(info, lambda: _print_status(info))
    return EXIT_OK


def listing(root: Path, statuses: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """Every record of the store (``data/``) with its listed status, those of ``statuses``
    only when some are given (``active`` stands for every active one), and the counts of all."""
    from eee.catalog.table import record_paths  # lazy: after the arguments
    from eee.rules.ledger import read_ledger

    wanted = {s for want in statuses for s in (ACTIVE if want == "active" else (want,))}
    ledger = read_ledger(root)
    counts: Counter[str] = Counter()
    records = []
    for uuid, rel in record_paths(root):
        state = ledger.state(uuid)
        listed = state.status
        counts[listed] += 1
        if wanted and listed not in wanted:
            continue
        records.append(
            {
                "record": uuid,
                "path": rel,
                "status": listed,
                "active": listed in ACTIVE,
                "lifecycle": state.lifecycle,
                "stands_on": ledger.stands_on(uuid),
                "superseded_by": state.superseded_by,
                "duplicate_of": state.duplicate_of,
                "dispute_reference": state.dispute.get("reference") if state.dispute else None,
                "flags": [{"rule": f.get("rule"), "path": f.get("path")} for f in state.open_flags],
            }
        )
    return {
        "statuses": sorted(wanted, key=LISTED.index) if wanted else list(LISTED),
        "records": records,
        "counts": {s: counts[s] for s in LISTED},
        "total": sum(counts.values()),
    }


def _marker(r: dict[str, Any]) -> str:
    if r["status"] == "superseded" and r["superseded_by"]:
        return f" (by {r['superseded_by']})"
    if r["status"] == "duplicate":
        return f" (of {r['duplicate_of']}{_standing(r['duplicate_of'], r.get('stands_on')).replace(' (', ', ', 1)}"
    if r["status"] == "disputed" and r["dispute_reference"]:
        return f" ({r['dispute_reference']})"
    if r["flags"]:
        more = f", +{len(r['flags']) - 2} more" if len(r["flags"]) > 2 else ""
        return " (" + ", ".join(f"{f['rule']} at {f['path']}" for f in r["flags"][:2]) + more + ")"
    return ""


def _list(root: Path, statuses: list[str], fmt: str) -> int:
    found = listing(root, statuses)

    def text() -> None:
        width = max(map(len, LISTED))
        for r in found["records"]:
            print(f"{r['record']}  {r['status']:<{width}}  {r['path']}{_marker(r)}")
        counts = ", ".join(f"{n} {s}" for s, n in found["counts"].items() if n) or "none"
        print(f"{len(found['records'])} of {found['total']} records listed; the store: {counts}", file=sys.stderr)

    reporter(fmt).result(found, text)
    return EXIT_OK


def _standing(original: str, head: str | None) -> str:
    """What a duplicate's original is to it: the record that stands, or one it moved along from."""
    if head == original:
        return " (which stands)"
    if head is None:
        return " (which no longer stands)"
    return f" (which no longer stands: it stands on {head}, which does)"


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
        print(f"duplicate of {info['duplicate_of']}{_standing(info['duplicate_of'], info.get('stands_on'))}")
    elif info["lifecycle"] == "superseded" and info.get("stands_on") not in (None, info["superseded_by"]):
        print(f"stands on    {info['stands_on']} (the head of its chain, which stands)")
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
        if event.get("uncommitted"):
            mark = "  (uncommitted)"
        elif event.get("signed_by"):
            mark = f"  (signed: {event['signed_by']})"
        else:
            mark = "  (unverified)"  # no signature of the store's roles: the actor is only the commit's author
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
