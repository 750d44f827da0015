"""``eee catalog [--out FILE]``: the Parquet catalogue of every result in the store."""

from __future__ import annotations

import argparse
from pathlib import Path

from eee.catalog import CATALOG_FILE
from eee.commands import store_root


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="eee catalog", description="Write the catalogue: one Parquet row per evaluation result."
    )
    p.add_argument(
        "--root",
        type=Path,
        default=None,
        help="the store (default: the current folder if it has data/, else this checkout)",
    )
    p.add_argument("--out", type=Path, default=Path(CATALOG_FILE))
    args = p.parse_args(argv)
    root = store_root(args.root)
    from eee.catalog import build, write

    table, skipped = build(root)
    write(table, args.out)
    for line in skipped:
        print(f"skipped {line}")
    print(f"{table.num_rows} results from {len(set(table.column('record_uuid').to_pylist()))} records -> {args.out}")
    return 0
