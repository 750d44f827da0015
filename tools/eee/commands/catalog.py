"""``eee catalog [--out DIR]``: the typed, hive-partitioned Parquet catalogue of every result."""

from __future__ import annotations

import sys
from pathlib import Path

from eee.catalog import CATALOG_DIR
from eee.commands import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_WARNINGS,
    UsageError,
    add_store,
    parser,
    refused,
    store_of,
)


def main(argv: list[str]) -> int:
    p = parser(
        "eee catalog",
        "Write the catalogue: one Parquet row per evaluation result, partitioned by benchmark "
        "(DIR/benchmark=<name>/part-0.parquet), typed timestamps, a normalised score and governance status.",
    )
    add_store(p)
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"the folder to write (default: {CATALOG_DIR} in the store); it is replaced whole",
    )
    args = p.parse_args(argv)
    try:
        root = store_of(args.store)
    except UsageError as exc:
        print(f"eee catalog: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from eee.catalog import write_catalog
    from eee.findings import Refused

    out = args.out if args.out is not None else root / CATALOG_DIR
    try:
        done = write_catalog(root, out)
    except Refused as exc:
        return refused("eee catalog", exc)
    except OSError as exc:
        print(f"{out}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERRORS
    for line in done.skipped:
        print(f"skipped {line}", file=sys.stderr)
    print(f"{done.rows} results from {done.records} records in {done.benchmarks} benchmarks -> {out}")
    return EXIT_WARNINGS if done.skipped else EXIT_OK
