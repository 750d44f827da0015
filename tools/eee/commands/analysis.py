"""``eee analysis [--out DIR]``: the pipeline's analysis step. For each benchmark with
instance data, ``DIR/pages/<benchmark>.md`` (IRT fit and comparisons, with SVG plots beside
it, for the site) and ``DIR/irt/<benchmark>/*.parquet``."""

from __future__ import annotations

import sys
from pathlib import Path

from eee.commands import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, UsageError, add_store, parser, refused, store_of


def main(argv: list[str]) -> int:
    from eee.analysis.pages import ANALYSIS_DIR

    p = parser(
        "eee analysis",
        "Write the analysis pages: per benchmark with instance data, a Markdown page with the Rasch fit, "
        "the comparisons of one model's records and SVG plots, and the fit as Parquet.",
    )
    add_store(p)
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help=f"the folder to write, replaced whole (default: {ANALYSIS_DIR} in the store)",
    )
    p.add_argument("--all", action="store_true", help="include retracted, superseded and duplicate records")
    args = p.parse_args(argv)
    try:
        root = store_of(args.store)
    except UsageError as exc:
        print(f"eee analysis: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from eee.analysis.pages import write_pages
    from eee.findings import Refused

    out = args.out if args.out is not None else root / ANALYSIS_DIR
    try:
        summaries = write_pages(root, out, args.all)
    except Refused as exc:
        return refused("eee analysis", exc)
    except OSError as exc:
        print(f"{out}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERRORS
    fitted = sum(1 for s in summaries if s["fit"])
    print(f"{len(summaries)} benchmark pages with instance data ({fitted} with an IRT fit) -> {out / 'pages'}")
    return EXIT_OK
