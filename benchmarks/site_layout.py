#!/usr/bin/env python3
"""Clipping and overflow of the published site's pages, at 1,400 px and at 390 px.

    python benchmarks/site_layout.py [--site DIR | --store DIR] [--json FILE]

Without an argument, builds the site of a small store whose pages are as wide as real ones
(``tests/sitebrowser.py``: long model ids, three results of one metric, analysis plots, shared
record pages) in a temporary folder; ``--store DIR`` builds that store's site (``eee site
pages`` and ``mkdocs build``) and ``--site DIR`` measures a site already built. Serves it on
127.0.0.1 and opens one page of every type in Debian's chromium (``/usr/bin/chromium``),
at both widths. Prints per page and width: the tables, their columns not fully visible
without scrolling (``cut``), those no scrolling reaches (``hidden``), the cells whose content
is wider than the cell (``cells``), the rows that repeat another row of their table word for
word (``same``: results that cannot be told apart), the page's own sideways overflow in px
and the elements past the right edge outside a scroll container (``outside``); then every
plot's text labels that leave the plot or are shortened without their whole text as tooltip. The browser test (``tests/test_site_layout.py``) asserts the
same figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT / "tools"))
sys.path.insert(0, str(PROJECT / "tests"))


def build(store: Path, site: Path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    for cmd in (
        [sys.executable, "-m", "eee", "site", "pages", "--store", str(store)],
        [sys.executable, "-m", "mkdocs", "build", "--site-dir", str(site)],
    ):
        proc = subprocess.run(cmd, cwd=store, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd[:4])} failed:\n{proc.stdout}{proc.stderr}")


def measure_site(site: Path, **given: str) -> dict[str, object]:
    from sitebrowser import WIDTHS, chromium, measure, page_types, serve, summary, svg_clipping, svgs_of

    out: dict[str, object] = {"pages": {}, "svgs": {}}
    types = page_types(site, **given)
    with serve(site) as base, chromium() as browser:
        for name, path in types.items():
            for width in sorted(WIDTHS.values(), reverse=True):
                found = measure(browser, base + quote(path), width)
                out["pages"][f"{name} {width}"] = {"path": path, **summary(found, width), "detail": found}  # type: ignore[index]
            for svg in svgs_of(site, path):
                out["svgs"][svg] = svg_clipping(browser, base + quote(svg))  # type: ignore[index]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--site", type=Path, help="a built site to measure")
    g.add_argument("--store", type=Path, help="a store whose site to build and measure")
    p.add_argument(
        "--page",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="measure this page (a path from the site root) as NAME too, e.g. record-repeated=catalogue/records/<uuid>/",
    )
    p.add_argument("--json", type=Path, help="also write every figure (with the cut columns named) to FILE")
    args = p.parse_args(argv)
    from sitebrowser import CHROMIUM

    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is not installed (Debian: apt-get install -y chromium)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="eee-site-layout-") as tmp:
        if args.site:
            site = args.site
        else:
            if args.store:
                store = args.store.resolve()
            else:
                from sitebrowser import make_layout_store

                store = make_layout_store(Path(tmp))
            site = Path(tmp) / "site"
            build(store, site)
        given = {}
        if not args.site and not args.store:
            from sitebrowser import LONG, REPEATED

            given = {"record": f"catalogue/records/{LONG}/", "record-repeated": f"catalogue/records/{REPEATED}/"}
        for item in args.page:
            key, sep, value = item.partition("=")
            if not sep:
                p.error(f"--page {item}: NAME=PATH")
            given[key] = value
        result = measure_site(site, **given)
    pages = result["pages"]
    print(
        f"{'page':<34} {'width':>5} {'tables':>6} {'cut':>4} {'hidden':>6} {'cells':>5} {'same':>4} {'page px':>7} {'outside':>7}"
    )
    totals = {1400: [0] * 6, 390: [0] * 6}
    for key, row in pages.items():  # type: ignore[union-attr]
        name = key.rsplit(" ", 1)[0]
        print(
            f"{name:<34} {row['width']:>5} {row['tables']:>6} {row['cut']:>4} {row['hidden']:>6} "
            f"{row['cells']:>5} {row['same']:>4} {row['page']:>7} {row['outside']:>7}"
        )
        t = totals[row["width"]]
        for i, k in enumerate(("cut", "hidden", "cells", "same", "page", "outside")):
            t[i] += row[k] if k != "page" else (1 if row[k] else 0)
    for width, (cut, hidden, cells, same, page, outside) in totals.items():
        print(
            f"total at {width} px: {cut} cut columns, {hidden} hidden, {cells} overflowing cells, "
            f"{same} rows that repeat another, "
            f"{page} pages scrolling sideways, {outside} elements past the edge"
        )
    clipped = 0
    for svg, found in result["svgs"].items():  # type: ignore[union-attr]
        clipped += len(found["clipped"])
        print(f"plot {svg}: {len(found['clipped'])} of {found['texts']} labels cut (outside the plot or shortened)")
        for c in found["clipped"][:3]:
            print(f"    {c['text']!r}: x {c['left']}..{c['right']} of {c['width']}")
    print(f"plot labels clipped: {clipped}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
