"""``eee identity``: the identity registry (governance/identity/).

- ``eee identity [--kind K] [--open] [--format rich|json]``: the groups of likely aliases
  across the store (spellings of one developer, model, benchmark or metric that differ by
  case, punctuation or one letter), with the evidence (records under each spelling, one
  example), whether the registry already settles each group, and the exact command that
  would. Open groups are warnings (exit 2).
- ``eee identity alias OLD --to NEW [--kind K] [--commit]``: ``OLD`` becomes an alias of
  ``NEW``; the records already under ``OLD`` (at HEAD) are settled, those added later warned.
- ``eee identity canonical NAME --kind K [--commit]``: ``NAME`` is a canonical id of its own.

Both changes are written through the one commit stack (staged; ``--commit`` commits them
through the hooks); ``--dry-run`` prints the file as it would be.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from eee.commands import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_WARNINGS,
    OUTPUT_FORMATS,
    Parser,
    add_dry_run,
    add_format,
    add_jobs,
    add_store,
    refused,
)
from eee.reporting.findings import Refused
from eee.reporting.reporters import reporter

KIND_CHOICES = ("developer", "model", "benchmark", "metric")


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("alias", "canonical"):
        return _change(argv[0], argv[1:])
    p = Parser(
        "eee identity",
        "List the groups of likely aliases across the store (developers, models, benchmarks and metrics "
        "spelt differently: by case, punctuation or one letter), with the evidence and whether the identity "
        "registry (governance/identity/) settles each; open groups are warnings (exit 2). "
        "`eee identity alias OLD --to NEW` and `eee identity canonical NAME` change the registry.",
        epilog="actions: alias OLD --to NEW [--kind K] [--commit]; canonical NAME --kind K [--commit] "
        "(`eee identity alias --help`). exit codes: 0 clean, 1 errors (nothing written), 2 warnings only, "
        "64 usage error",
    )
    p.add_argument("--kind", choices=KIND_CHOICES, action="append", help="only this kind (repeatable)")
    p.add_argument("--open", action="store_true", help="list only the groups the registry does not settle")
    add_format(p, OUTPUT_FORMATS)
    add_jobs(p, help="worker processes reading the records (default: the machine's cores)", default=os.cpu_count() or 1)
    add_store(p)
    args = p.parse_args(argv)
    return _list(args.store, tuple(args.kind or KIND_CHOICES), args.open, args.format, args.jobs)


def _list(root: Path, kinds: tuple[str, ...], only_open: bool, fmt: str, jobs: int = 1) -> int:
    from eee.catalog.names import groups, scan, summary
    from eee.store import identity
    from eee.store.tree import WorkTree

    reg = identity.read(WorkTree(root))
    for problem in reg.problems:
        print(f"{problem.file}: {problem.message} (this file is left out of the registry)", file=sys.stderr)
    tty = sys.stderr.isatty()
    start = time.perf_counter()

    shown = [0]

    def progress(n: int) -> None:
        if tty and n - shown[0] >= 10_000:
            shown[0] = n
            print(f"\reee identity: records read: {n:,}", end="", file=sys.stderr, flush=True)

    found = scan(root, progress, jobs)
    if tty:
        print("\r", end="", file=sys.stderr)
    listed = groups(found, reg, kinds)
    shown = [g for g in listed if g["open"] or not only_open]
    report = summary(found, shown)
    report["open"] = sum(1 for g in listed if g["open"])
    report["total"] = len(listed)

    def text() -> None:
        _render(shown)
        print(
            f"{found.records:,} records read in {time.perf_counter() - start:.1f} s: {len(listed)} group(s) of "
            f"likely aliases, {report['open']} open",
            file=sys.stderr,
        )
        if report["open"]:
            print(
                "    hint: settle a group with the command it shows (a maintainer's act: it changes governance/identity/)",
                file=sys.stderr,
            )

    reporter(fmt).result(report, text)
    for line in found.unreadable[:5]:
        print(f"eee identity: cannot read {line}", file=sys.stderr)
    if found.unreadable:
        print(f"eee identity: {len(found.unreadable)} record(s) could not be read: run `eee validate`", file=sys.stderr)
        return EXIT_ERRORS
    return EXIT_WARNINGS if report["open"] else EXIT_OK


def _render(shown: list[dict[str, Any]]) -> None:
    from eee.store.paths import escaped

    for g in shown:
        state = "settled by the registry" if g["aliased"] else "open"
        print(f"{g['kind']} {escaped(g['canonical'])} ({g['how']}, {g['records']} record(s); {state}):")
        for r in g["spellings"]:
            registry = f"  [{r['registry']}]" if r["registry"] else ""
            example = f"  e.g. {escaped(r['example'], quote=False)}" if r["example"] else ""
            print(f"  {escaped(r['id'])}: {r['records']} record(s){registry}{example}")
        for cmd in g["commands"]:
            print(f"    settle: {cmd}")


def _change(action: str, argv: list[str]) -> int:
    p = Parser(
        f"eee identity {action}",
        "Make OLD an alias of NEW in the identity registry: records keep their paths, readers group them under "
        "NEW; the records already under OLD (at HEAD) are settled, a record added under it later is warned. "
        "Making an alias again settles what was added since. A canonical id that becomes an alias brings its "
        "aliases along."
        if action == "alias"
        else "Declare NAME a canonical id of its own in the identity registry (a spelling that looks like "
        "another id but is another thing: its near miss is settled).",
    )
    if action == "alias":
        p.add_argument("old", metavar="OLD", help="the other spelling")
        p.add_argument("--to", required=True, metavar="NEW", help="the canonical id it stands for")
        p.add_argument("--kind", choices=KIND_CHOICES, help="what it names (default: found in the store)")
    else:
        p.add_argument("old", metavar="NAME", help="the canonical id")
        p.add_argument("--kind", choices=KIND_CHOICES, required=True, help="what it names")
    p.add_argument("--why", metavar="TEXT", help="why (kept in the registry)")
    p.add_argument("--commit", action="store_true", help="commit the change through the hooks (default: stage it)")
    add_dry_run(p, help="print the registry file as it would be; write nothing")
    add_store(p)
    args = p.parse_args(argv)
    root = args.store
    for name in (args.old, getattr(args, "to", None)):
        if name is not None and (not name.strip() or name != name.strip() or any(ord(c) < 32 for c in name)):
            p.error(f"{name!r} is not an id: no leading or trailing space, no control character")
    from eee.write import identity as write

    try:
        if action == "alias":
            kind = args.kind or _kind_of(root, args.old, args.to)
            if kind is None:
                p.error(
                    f"cannot tell what {args.old!r} names (no developer or benchmark folder, no model or metric id "
                    "of the store is spelt so): give --kind developer|model|benchmark|metric"
                )
            change = write.alias(root, args.old, args.to, kind, args.why)
        else:
            change = write.canonical(root, args.old, args.kind, args.why)
        if args.dry_run:
            sys.stdout.write(change.data.decode("utf-8"))
            for line in change.said:
                print(f"would write {change.rel}: {line}", file=sys.stderr)
            return EXIT_OK
        change = write.write(root, change, args.commit)
    except Refused as exc:
        return refused(f"eee identity {action}", exc)
    for line in change.said:
        print(line)
    print(f"{'committed ' + change.commit[:10] if change.commit else 'staged'}: {change.rel}")
    if (
        change.commit
    ):  # the duplicates index keys canonical ids: it follows the new registry (in the background if large)
        from eee.hooks.index import follow

        follow(root)
    return EXIT_OK


def _kind_of(root: Path, old: str, new: str) -> str | None:
    """What ``old`` (or ``new``) names in the store: a model id (it has a ``/``), a benchmark
    folder, a developer folder, else a metric id of the registry; None when nothing says."""
    from eee.store import identity
    from eee.store.tree import WorkTree

    if "/" in old or "/" in new:
        return "model"
    data = root / "data"
    benchmarks = {p.name for p in data.iterdir() if p.is_dir()} if data.is_dir() else set()
    if old in benchmarks or new in benchmarks:
        return "benchmark"
    for b in benchmarks:
        if any(n not in (".", "..") and (data / b / n).is_dir() for n in (old, new)):
            return "developer"
    reg = identity.read(WorkTree(root))
    for kind in KIND_CHOICES:
        table = reg[kind]
        if old in table.entries or new in table.entries or old in table.aliases or new in table.aliases:
            return kind
    return None
