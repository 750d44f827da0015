"""``eee dedup``: the groups of duplicate records in the store, with the evidence.

Duplicates are defined in :mod:`eee.governance.duplicates` (the same evaluation, or
identical content apart from evaluation_id and retrieved_timestamp). A group whose records
are all linked in the ledger (a supersession chain, or `duplicate` events) is settled;
any other group is open and is a warning (exit 2). The committed records (HEAD) are read
through the duplicate index in the git directory.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from eee.commands import EXIT_OK, EXIT_USAGE, EXIT_WARNINGS, UsageError, add_store, parser, store_of


def groups(root: Any) -> list[dict[str, Any]]:
    from eee.governance.duplicates import DuplicateIndex, compare, evidence  # lazy: after the arguments
    from eee.governance.status import read_ledger  # lazy: after the arguments

    index = DuplicateIndex(root)
    try:
        index.sync()
        ledger = read_ledger(root)
        out = []
        for paths in index.groups():
            facts = {p: index.facts_of(p) for p in paths}
            pairs = []
            settled = True
            for i, a in enumerate(paths):
                for b in paths[i + 1 :]:
                    fa, fb = facts[a], facts[b]
                    if fa is None or fb is None:
                        continue
                    m = compare(fa, fb, b)
                    if m is None:
                        continue
                    linked = ledger.linked(fa.uuid, fb.uuid)
                    settled = settled and linked
                    pairs.append(
                        {
                            "records": [fa.uuid, fb.uuid],
                            "kind": "identical content" if m.identical else "same evaluation",
                            "evidence": evidence(fa, m),
                            "linked": linked,
                        }
                    )
            records = []
            for p in paths:
                f = facts[p]
                st = ledger.state(f.uuid) if f else None
                records.append(
                    {
                        "record": f.uuid if f else None,
                        "path": p,
                        "status": st.status if st else None,
                        "duplicate_of": st.duplicate_of if st else None,
                        "evaluator": f.evaluator if f else None,
                    }
                )
            out.append({"settled": settled, "records": records, "pairs": pairs})
        return out
    finally:
        index.close()


def main(argv: list[str]) -> int:
    p = parser(
        "eee dedup",
        "List groups of duplicate records (the same evaluation, or identical content apart from "
        "evaluation_id and retrieved_timestamp) with the evidence, and whether the ledger settles "
        "them (supersession or duplicate events). Open groups are warnings (exit 2).",
    )
    p.add_argument("--format", choices=("rich", "json"), default="rich", help="output format (default: rich)")
    p.add_argument("--open", action="store_true", help="list only the groups the ledger does not settle")
    add_store(p)
    args = p.parse_args(argv)
    try:
        root = store_of(args.store)
    except UsageError as exc:
        print(f"eee dedup: {exc}", file=sys.stderr)
        return EXIT_USAGE
    found = groups(root)
    shown = [g for g in found if not (args.open and g["settled"])]
    open_groups = sum(1 for g in found if not g["settled"])
    if args.format == "json":
        print(json.dumps({"groups": shown, "open": open_groups, "total": len(found)}, indent=2))
    else:
        for n, g in enumerate(shown, 1):
            print(f"group {n} ({'settled by the ledger' if g['settled'] else 'open'}):")
            for r in g["records"]:
                mark = f", duplicate of {r['duplicate_of'][:8]}" if r["duplicate_of"] else ""
                print(f"  {r['record']}  {r['status']}{mark}  {r['path']}")
            for pair in g["pairs"]:
                a, b = (u[:8] for u in pair["records"])
                link = " (linked)" if pair["linked"] else ""
                print(f"    {a} ~ {b}: {pair['evidence']}{link}")
        print(f"{len(found)} duplicate group(s), {open_groups} open", file=sys.stderr)
        if open_groups:
            print(
                "    hint: settle a group with tools/mark-duplicate <uuid> --of <uuid> (the same result twice) "
                "or tools/supersede (a correction)",
                file=sys.stderr,
            )
    return EXIT_WARNINGS if open_groups else EXIT_OK
