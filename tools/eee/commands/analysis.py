"""``eee analysis [--out DIR]``: the pipeline's analysis step. For each benchmark with
instance data, ``DIR/pages/<benchmark>.md`` (IRT fit and comparisons, with SVG plots beside
it, for the site) and ``DIR/irt/<benchmark>/*.parquet``."""

from __future__ import annotations

import sys

from eee.commands import EXIT_ERRORS, EXIT_OK, add_all, add_manifest, add_out, add_store, parser, refused


def main(argv: list[str]) -> int:
    from eee.analysis.pages import ANALYSIS_DIR

    p = parser(
        "eee analysis",
        "Write the analysis pages: per benchmark with instance data, a Markdown page with the Rasch fit, "
        "the comparisons of one model's records and SVG plots, and the fit as Parquet.",
    )
    add_store(p)
    add_out(p, "DIR", help=f"the folder to write, replaced whole (default: {ANALYSIS_DIR} in the store)")
    add_all(p)
    add_manifest(
        p,
        help="the store manifest (eee manifest) of the store as it is now: only the benchmarks whose records, "
        "sidecars or governance changed since the last run are analysed again (what the pipeline does)",
    )
    args = p.parse_args(argv)
    root = args.store
    from eee.analysis.pages import update_pages, write_pages
    from eee.reporting.findings import Refused
    from eee.store.manifest import read_manifest

    out = args.out if args.out is not None else root / ANALYSIS_DIR
    redone: list[str] | None = None
    try:
        manifest = read_manifest(root / args.manifest) if args.manifest is not None else None
    except ValueError as exc:
        p.error(f"--manifest: {exc}")
    try:
        if manifest is not None:
            summaries, redone = update_pages(root, out, manifest, args.all)
        else:
            summaries = write_pages(root, out, args.all)
    except Refused as exc:
        return refused("eee analysis", exc)
    except OSError as exc:
        print(f"{out}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERRORS
    fitted = sum(1 for s in summaries if s["fit"])
    print(f"{len(summaries)} benchmark pages with instance data ({fitted} with an IRT fit) -> {out / 'pages'}")
    if redone is not None:
        print(
            f"benchmarks analysed again: {len(redone)} ({', '.join(redone[:5]) or 'none'}{', ...' if len(redone) > 5 else ''})"
        )
    return EXIT_OK
