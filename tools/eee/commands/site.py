"""``eee site pages|build|serve``: the published site. ``pages`` writes the site's pages
(hand-written, published and generated) as Markdown into ``build/docs/``, which ``mkdocs
build`` and ``zensical build`` read; ``build`` builds them into ``build/site/`` with MkDocs,
rebuilding only the pages that changed (:mod:`eee.site.build`); ``serve`` serves the built
site on this machine, where a browser reads it as it reads the published one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import ClassVar

from eee.commands import EXIT_ERRORS, EXIT_OK, add_out, add_store, parser


def main(argv: list[str]) -> int:
    p = parser("eee site", "The published site: its sources, its build, a local server for it.")
    sub = p.add_subparsers(
        dest="action",
        metavar="ACTION",
        required=True,
        help="pages: write the pages; build: build the site; serve: serve the built site",
    )
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
    build = sub.add_parser(
        "build",
        help="build the site from build/docs with MkDocs (strict), only the pages that changed when it can",
        description="Build the site with MkDocs (--strict: a warning fails the build) from what `eee site pages` "
        "wrote. After a full build, the next one renders only the pages whose source changed, the site and its "
        "search index the same as a full build's; anything else that changed (mkdocs.yml, the navigation, the "
        "theme, the site's code) builds it in full.",
    )
    add_store(build)
    add_out(build, "DIR", help="the site folder (default: build/site in the store)")
    build.add_argument("--full", action="store_true", help="build every page (MkDocs' own full build)")
    serve = sub.add_parser(
        "serve",
        help="serve the built site (build/site) on http://127.0.0.1:PORT/ until interrupted",
        description="Serve the built site on this machine: links, search and the catalogue work as on the "
        "published site. Build it first (`python3 tools/dev.py run`, or `eee site pages` and `eee site build`).",
    )
    add_store(serve)
    serve.add_argument("--port", type=int, default=8000, help="the port (default: 8000; 0: any free port)")
    serve.add_argument("--site", type=Path, metavar="DIR", help="the site folder (default: build/site in the store)")
    args = p.parse_args(argv)
    if args.action == "build":
        return _build(args.store, args.out, args.full)
    if args.action == "serve":
        return _serve(args.store, args.site, args.port)
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


def _build(store: Path, out: Path | None, full: bool) -> int:
    from eee.reporting.progress import note, shown
    from eee.site.build import SiteBuildError, build

    if not (store / "mkdocs.yml").is_file():
        print(f"eee site build: {store / 'mkdocs.yml'}: no site configuration here", file=sys.stderr)
        print("    hint: run it in the store's checkout, or pass --store DIR", file=sys.stderr)
        return EXIT_ERRORS
    _source_date(store)
    try:
        with shown("building pages", min_total=50) as update:
            note("MkDocs reads the pages")
            done = build(store, out, full=full, progress=update)
    except SiteBuildError as exc:
        for line in exc.warnings:
            print(f"mkdocs.yml::$: [site] MkDocs {line}", file=sys.stderr)
        print(f"mkdocs.yml::$: [site] the site was not built: {exc.message}", file=sys.stderr)
        print(
            "    hint: fix what MkDocs names (it builds with --strict: a warning fails), then build again",
            file=sys.stderr,
        )
        return EXIT_ERRORS
    for line in done.warnings:
        print(line, file=sys.stderr)
    how = "in full" if done.full else "incrementally"
    print(
        f"site built {how} ({done.reason}): {done.rebuilt} of {done.pages} pages rendered, "
        f"{done.copied} files copied -> {done.site} in {done.seconds:.1f} s"
    )
    return EXIT_OK


def _source_date(store: Path) -> None:
    """The build date MkDocs writes (the sitemap) is the last commit's, so that a build of the
    same commit gives the same bytes (``SOURCE_DATE_EPOCH``, unless set already)."""
    import os

    if os.environ.get("SOURCE_DATE_EPOCH"):
        return
    from eee.git.cli import GitError, last_commit_time

    try:
        stamp = last_commit_time(store)
    except (GitError, OSError):
        stamp = ""
    os.environ["SOURCE_DATE_EPOCH"] = stamp if stamp.isdigit() else "0"


def _serve(store: Path, folder: Path | None, port: int) -> int:
    import functools
    import http.server

    site = (folder or store / "build" / "site").resolve()
    if not (site / "index.html").is_file():
        print(f"eee site serve: {site}: no built site here (no index.html)", file=sys.stderr)
        print(
            "    hint: build it first: `python3 tools/dev.py run` (or `eee site pages` and `eee site build`)",
            file=sys.stderr,
        )
        return EXIT_ERRORS

    class Handler(http.server.SimpleHTTPRequestHandler):
        extensions_map: ClassVar[dict[str, str]] = {
            **http.server.SimpleHTTPRequestHandler.extensions_map,
            ".svg": "image/svg+xml",
        }

        def log_message(self, format: str, *args: object) -> None:  # one line per request is noise here
            pass

    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Handler, directory=str(site)))
    except OSError as exc:
        print(f"eee site serve: port {port}: {exc.strerror}", file=sys.stderr)
        print("    hint: choose another port with --port N (0: any free port)", file=sys.stderr)
        return EXIT_ERRORS
    address = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"serving {site} on {address} (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return EXIT_OK
