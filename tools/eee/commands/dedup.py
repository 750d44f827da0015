"""``eee dedup``: the groups of duplicate records in the store, with the evidence.

Duplicates are defined in :mod:`eee.governance.duplicates` (the same evaluation, or
identical content apart from evaluation_id and retrieved_timestamp). A group whose records
are all linked in the ledger (a supersession chain, or `duplicate` events) is settled;
any other group is open and is a warning (exit 2). The committed records (HEAD) are read
through the duplicate index in the git directory.

``eee dedup --index`` only brings that index to HEAD (the first time: every committed
record, streamed, in a minute or two at 230,000 records) and reports on stderr: what
``tools/dev.py setup`` and the post-checkout and post-merge hooks run, so that the commit
hook finds it ready (it never builds it itself beyond a few hundred records).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any

from eee.commands import EXIT_OK, EXIT_WARNINGS, OUTPUT_FORMATS, add_format, add_jobs, add_store, parser
from eee.reporting.reporters import reporter


def groups(root: Any) -> list[dict[str, Any]]:
    from eee.governance.duplicates import DuplicateIndex, compare, evidence  # lazy: after the arguments
    from eee.rules.ledger import read_ledger  # lazy: after the arguments

    index = DuplicateIndex(root)
    try:
        index.sync(jobs=min(2, os.cpu_count() or 1))
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


def _lock(root: Any, wait: bool) -> Any:
    """One build at a time: a lock file in the git directory, held for the block (yields
    False when another build holds it and ``wait`` is false; outside git, no lock)."""
    from eee.git.cli import GitError, git_dir
    from eee.store.fsutil import locked

    try:
        path = git_dir(root) / "eee-duplicates.lock"
    except GitError:
        return contextlib.nullcontext(True)
    return locked(path, None if wait else 0)


def build_index(root: Any, jobs: int, quiet: bool) -> int:
    """``--index``: the duplicates index brought to HEAD; one line on stderr."""
    from eee.governance.duplicates import DuplicateIndex  # lazy: after the arguments

    start = time.perf_counter()
    tty = sys.stderr.isatty() and not quiet

    def progress(n: int) -> None:
        if tty and n % 10_000 == 0:
            print(f"\reee dedup: indexing records: {n:,}", end="", file=sys.stderr, flush=True)

    with _lock(root, wait=not quiet) as held:
        if not held:
            return EXIT_OK  # --quiet (a background build): another build is already under way
        index = DuplicateIndex(root)
        try:
            n = index.sync(jobs=jobs, progress=progress)
        finally:
            index.close()
    if tty:
        print("\r", end="", file=sys.stderr)
    if not quiet:
        print(
            f"eee dedup: the duplicates index follows HEAD ({n:,} records read, {time.perf_counter() - start:.1f} s)",
            file=sys.stderr,
        )
    return EXIT_OK


def main(argv: list[str]) -> int:
    p = parser(
        "eee dedup",
        "List groups of duplicate records (the same evaluation, or identical content apart from "
        "evaluation_id and retrieved_timestamp) with the evidence, and whether the ledger settles "
        "them (supersession or duplicate events). Open groups are warnings (exit 2).",
    )
    add_format(p, OUTPUT_FORMATS)
    p.add_argument("--open", action="store_true", help="list only the groups the ledger does not settle")
    p.add_argument(
        "--index",
        action="store_true",
        help="only bring the duplicates index (in the git directory) to HEAD, which the commit hook reads",
    )
    add_jobs(p, help="worker processes for --index (default: 2)", default=min(2, os.cpu_count() or 1))
    p.add_argument("--quiet", action="store_true", help="with --index: print nothing")
    add_store(p)
    args = p.parse_args(argv)
    root = args.store
    if args.index:
        return build_index(root, args.jobs, args.quiet)
    found = groups(root)
    shown = [g for g in found if not (args.open and g["settled"])]
    open_groups = sum(1 for g in found if not g["settled"])

    def text() -> None:
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
                "    hint: a maintainer settles a group with tools/mark-duplicate <uuid> --of <uuid> (the same result "
                "twice) or tools/supersede (a correction); anyone may point it out with tools/dispute",
                file=sys.stderr,
            )

    reporter(args.format).result({"groups": shown, "open": open_groups, "total": len(found)}, text, ensure_ascii=True)
    return EXIT_WARNINGS if open_groups else EXIT_OK
