"""``eee stats [--out FILE]``: field fill rates across the store, as a metrics file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eee.commands import store_root


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="eee stats", description="Field fill rates (share of records that fill each field)."
    )
    p.add_argument(
        "--root",
        type=Path,
        default=None,
        help="the store (default: the current folder if it has data/, else this checkout)",
    )
    p.add_argument("--out", type=Path, default=None, help="write the JSON here (default: print it)")
    args = p.parse_args(argv)
    root = store_root(args.root)
    from eee.stats import fill_rates

    text = json.dumps(fill_rates(root), indent=2) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"fill rates -> {args.out}")
    else:
        print(text, end="")
    return 0
