"""``eee site pages``: write the site's pages (hand-written, published and generated) as
Markdown into ``build/docs/``, which ``mkdocs build`` and ``zensical build`` read."""

from __future__ import annotations

import sys
from pathlib import Path

from eee.commands import EXIT_ERRORS, EXIT_OK, add_out, add_store, parser


def main(argv: list[str]) -> int:
    p = parser("eee site", "The published site's sources.")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True, help="pages: write the pages")
    pages = sub.add_parser(
        "pages",
        help="write every page as Markdown into build/docs (what MkDocs and Zensical build from)",
        description="Write the site's pages into one folder: docs/, the governance documents and the CHANGELOG "
        "as they are, the generated schema reference and catalogue, the catalogue's Parquet files and the "
        "analysis pages; and the navigation into build/site-nav.yml.",
    )
    add_store(pages)
    add_out(pages, "DIR", help="the folder to write (default: build/docs in the store)")
    pages.add_argument(
        "--nav", type=Path, metavar="FILE", help="the navigation file to write (default: build/site-nav.yml)"
    )
    args = p.parse_args(argv)
    store = args.store
    from eee.reporting.findings import Refused
    from eee.site.docstree import write

    try:
        done = write(store, args.out, args.nav)
    except Refused as exc:
        for f in exc.findings:
            print(f.one_line(), file=sys.stderr)
            if f.hint:
                print(f"    hint: {f.hint}", file=sys.stderr)
        return EXIT_ERRORS
    print(
        f"{done.pages} pages ({done.files} files, {done.changed} written) -> {done.out} in {done.seconds:.1f} s; "
        f"navigation -> {done.nav_file}"
    )
    return EXIT_OK
