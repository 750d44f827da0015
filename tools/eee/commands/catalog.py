"""``eee catalog [--out DIR]``: the typed, hive-partitioned Parquet catalogue of every result."""

from __future__ import annotations

import sys

from eee.catalog.table import CATALOG_DIR
from eee.commands import EXIT_ERRORS, EXIT_OK, EXIT_WARNINGS, add_manifest, add_out, add_store, parser, refused
from eee.store.manifest import read_manifest


def main(argv: list[str]) -> int:
    p = parser(
        "eee catalog",
        "Write the catalogue: one Parquet row per evaluation result, partitioned by benchmark "
        "(DIR/benchmark=<name>/part-0.parquet), typed timestamps, a normalised score, its protocol, its "
        "uncertainty with its source and governance status; and the items table, one row per sidecar row of "
        "every active record (DIR/items/benchmark=<name>/part-0.parquet).",
    )
    add_store(p)
    add_out(p, "DIR", help=f"the folder to write (default: {CATALOG_DIR} in the store); it is replaced whole")
    add_manifest(
        p,
        help="the store manifest (eee manifest) of the store as it is now: only the partitions whose records "
        "or governance changed since the last run are written (what the pipeline does)",
    )
    args = p.parse_args(argv)
    root = args.store
    from eee.catalog.table import update_catalog, write_catalog
    from eee.reporting.findings import Refused

    out = args.out if args.out is not None else root / CATALOG_DIR
    try:
        manifest = read_manifest(root / args.manifest) if args.manifest is not None else None
    except ValueError as exc:
        p.error(f"--manifest: {exc}")
    try:
        done = update_catalog(root, out, manifest) if manifest is not None else write_catalog(root, out)
    except Refused as exc:
        return refused("eee catalog", exc)
    except OSError as exc:
        print(f"{out}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERRORS
    for line in done.skipped:
        print(f"skipped {line}", file=sys.stderr)
    print(f"{done.rows} results from {done.records} records in {done.benchmarks} benchmarks -> {out}")
    print(f"{done.items} item rows -> {out / 'items'}")
    if args.manifest is not None:
        print(
            f"partitions written: {len(done.rewritten)} ({', '.join(done.rewritten[:5]) or 'none'}"
            f"{', ...' if len(done.rewritten) > 5 else ''}), removed: {len(done.removed)}"
        )
    return EXIT_WARNINGS if done.skipped else EXIT_OK
