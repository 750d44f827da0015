"""The built site in a real browser (Debian's ``chromium``, driven by Playwright): serving a
built site on ``http://127.0.0.1``, the page types a reader lands on, and the measurements
the site's browser tests share (clipping and overflow at two widths, plot labels inside
their plot). ``benchmarks/site_layout.py`` prints the same measurements for any built site.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

CHROMIUM = Path("/usr/bin/chromium")
WIDTHS = {"desktop": 1400, "phone": 390}
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".svg": "image/svg+xml",
    }

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """``directory`` served on ``http://127.0.0.1:<free port>/`` while the block runs."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(directory))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def _first(site: Path, pattern: str, exclude: str = "") -> str | None:
    for path in sorted(site.glob(pattern)):
        rel = path.relative_to(site).as_posix()
        if exclude and exclude in rel:
            continue
        return rel[: -len("index.html")]
    return None


def page_types(site: Path, **given: str) -> dict[str, str]:
    """One page of every type the built ``site`` has: name -> path from the site root (the
    first of its kind, or the path ``given`` for that name; other given names are added)."""
    found: dict[str, str | None] = {
        "home": "",
        "catalogue": "catalogue/",
        "benchmark": _first(site, "catalogue/benchmarks/*/index.html"),
        "record": _first(site, "catalogue/records/*/index.html", exclude="/group-"),
        "shared-records": _first(site, "catalogue/records/group-*/index.html"),
        "reference": "reference/",
        "reference-version": _first(site, "reference/[0-9]*/index.html"),
        "reference-aggregate": _first(site, "reference/[0-9]*/aggregate/index.html"),
        "reference-instance": _first(site, "reference/[0-9]*/instance-level/index.html"),
        "what-changed": _first(site, "reference/changes/*/index.html"),
        "migrations": "reference/migrations/",
        "governance": "governance/",
        "contributing": "governance/CONTRIBUTING/",
        "governance-example": _first(site, "governance/examples/*/index.html"),
        "changelog": "CHANGELOG/",
        "analysis": "analysis/",
        "analysis-benchmark": _first(site, "analysis/*/index.html"),
    }
    for reference in ("reference-aggregate", "reference-instance", "reference-version"):
        current = sorted(site.glob(f"reference/[0-9]*/{'' if reference == 'reference-version' else '*/'}index.html"))
        if current:  # the newest version: the longest descriptions
            found[reference] = current[-1].relative_to(site).as_posix()[: -len("index.html")]
    found.update(given)
    return {k: v for k, v in found.items() if v is not None and (site / v / "index.html").is_file()}


# What is cut or overflows on the page as laid out: for every table of the article, the
# columns that are not fully visible at the table's scroll position 0 (``cut``), those of
# them that no scrolling brings into view because an ancestor clips them (``hidden``), and
# the cells whose content is wider than the cell (``cells``), the rows that repeat another
# row of their table word for word (``same``); the page's own sideways
# scroll and every element of the article past the viewport's right edge outside a
# scroll container (``outside``).
LAYOUT_JS = """() => {
  const vw = document.documentElement.clientWidth;
  const style = el => getComputedStyle(el);
  const clips = el => { const o = style(el).overflowX; return o !== 'visible'; };
  const scrolls = el => { const o = style(el).overflowX; return o === 'auto' || o === 'scroll'; };
  const out = {page: Math.max(0, document.scrollingElement.scrollWidth - vw), tables: [], outside: []};
  const article = document.querySelector('article') || document.body;
  for (const table of article.querySelectorAll('table')) {
    if (!table.offsetParent) continue;  // not shown (a closed tab)
    // cut: past the nearest edge that clips (or the viewport); hidden: past an edge that
    // clips without scrolling, with no scroll container between it and the table
    let right = vw, hiddenRight = Infinity, scroller = null;
    for (let el = table; el && el !== document.documentElement; el = el.parentElement) {
      if (!clips(el)) continue;
      const r = el.getBoundingClientRect().left + el.clientLeft + el.clientWidth;
      right = Math.min(right, r);
      if (scrolls(el)) { scroller = scroller || el; } else if (!scroller) { hiddenRight = Math.min(hiddenRight, r); }
    }
    const row = [...table.rows].reduce((a, b) => (b.cells.length > a.cells.length ? b : a), table.rows[0]);
    if (!row) continue;
    const cols = row.cells.length;
    let cut = 0, hidden = 0;
    const names = [];
    [...row.cells].forEach((cell, i) => {
      const r = cell.getBoundingClientRect().right;
      if (r > right + 1) { cut += 1; names.push(i); }
      if (r > hiddenRight + 1) hidden += 1;
    });
    let cells = 0;
    const wide = [];
    for (const cell of table.querySelectorAll('td, th')) {
      if (cell.scrollWidth > cell.clientWidth + 1) { cells += 1; if (wide.length < 3) wide.push(cell.innerText.slice(0, 50)); }
    }
    const seen = new Set();
    let same = 0;
    for (const tr of table.tBodies.length ? table.tBodies[0].rows : []) {
      const key = tr.innerText.trim();
      if (seen.has(key)) same += 1; else seen.add(key);
    }
    const head = [...(table.tHead ? table.tHead.rows[0].cells : row.cells)].map(c => c.innerText.trim().slice(0, 20));
    out.tables.push({head: head.join(' | ').slice(0, 80), cols, cut, hidden, cells, wide, cutColumns: names.map(i => head[i] || i),
                     same, scrolls: !!scroller, width: Math.round(table.scrollWidth), room: Math.round(right - table.getBoundingClientRect().left)});
  }
  for (const el of article.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= vw + 1) continue;
    let inside = false;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (scrolls(a) || (a.tagName === 'TABLE' && scrolls(a))) { inside = true; break; }
    }
    if (!inside && out.outside.length < 5) out.outside.push(el.tagName.toLowerCase() + ': ' + (el.innerText || '').slice(0, 50));
  }
  return out;
}"""

# Every <text> of an SVG document (opened on its own) whose box leaves the SVG's box, or
# that is shortened (an ellipsis in it) without its whole, longer text as a tooltip.
SVG_JS = """() => {
  const svg = document.documentElement;
  const box = svg.getBoundingClientRect();
  const out = {texts: 0, clipped: []};
  for (const t of svg.querySelectorAll('text')) {
    out.texts += 1;
    const r = t.getBoundingClientRect();
    const outside = r.left < box.left - 0.5 || r.top < box.top - 0.5 || r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5;
    // a shortened label (ending in an ellipsis) must carry the whole text as its tooltip
    const holders = t.parentElement === svg ? [t] : [t, t.parentElement];
    const tip = holders.map(e => e.querySelector(':scope > title')).find(e => e);
    const label = t.textContent;
    const shortened = label.includes('\u2026') && !(tip && tip.textContent.length > label.length);
    if (outside || shortened) {
      out.clipped.push({text: t.textContent.slice(0, 60), left: Math.round(r.left - box.left), right: Math.round(r.right - box.left), width: Math.round(box.width), shortened});
    }
  }
  return out;
}"""


def measure(browser: Any, url: str, width: int) -> dict[str, Any]:
    """:data:`LAYOUT_JS` on the page at ``url`` in a viewport ``width`` px wide."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        tab = context.new_page()
        tab.goto(url)
        tab.wait_for_load_state("networkidle")
        return tab.evaluate(LAYOUT_JS)
    finally:
        context.close()


def svg_clipping(browser: Any, url: str) -> dict[str, Any]:
    """:data:`SVG_JS` on the SVG at ``url``."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        tab = context.new_page()
        tab.goto(url)
        return tab.evaluate(SVG_JS)
    finally:
        context.close()


def svgs_of(site: Path, path: str) -> list[str]:
    """The site paths of the SVG images the page ``path`` shows."""
    import re
    from posixpath import join, normpath

    html = (site / path / "index.html").read_text(encoding="utf-8")
    return [normpath(join(path, src)) for src in re.findall(r'<img [^>]*src="([^"]+\.svg)"', html)]


def summary(found: dict[str, Any], width: int) -> dict[str, int]:
    """The figures of one measured page: tables, cut columns (hidden ones), cells whose
    content overflows, the page's sideways overflow in px and elements past the edge."""
    tables = found["tables"]
    return {
        "tables": len(tables),
        "cut": sum(t["cut"] for t in tables),
        "hidden": sum(t["hidden"] for t in tables),
        "cells": sum(t["cells"] for t in tables),
        "same": sum(t["same"] for t in tables),
        "page": found["page"],
        "outside": len(found["outside"]),
        "width": width,
    }


# --- a store whose pages are as wide as real ones ------------------------------------------------

LONG = "4d5e6f7a-8b9c-4d0e-9f1a-2b3c4d5e6f7a"
REPEATED = "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b"
LONG_MODEL = "an-organisation-with-a-long-name/an-instruction-tuned-model-with-a-very-long-name-v2.5"


def long_record() -> dict[str, Any]:
    """A record whose names are as long as real leaderboard records' (they made tables overflow)."""
    from conftest import load_example

    doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
    doc["model_info"]["id"] = LONG_MODEL
    doc["model_info"]["name"] = "An Instruction-Tuned Model With A Very Long Display Name (preview, 2026-05-01)"
    doc["source_metadata"]["source_organization_name"] = "The Holistic Evaluation Consortium of Language Models"
    result = doc["evaluation_results"][0]
    result["evaluation_name"] = "wikitext_document_level_perplexity_on_the_test_split_with_rolling_windows"
    result["score_details"]["uncertainty"] = {"standard_error": {"value": 0.0123456}, "num_samples": 62}
    return doc


def repeated_metric_record() -> dict[str, Any]:
    """Three results of one metric under one evaluation name, told apart only by their
    result ids (as HELM's test, valid and robustness splits are in the real store)."""
    import copy

    from conftest import load_example

    doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
    doc["model_info"]["id"] = "openai/gpt2"
    first = doc["evaluation_results"][0]
    results = []
    for split, score in (("test", 9.5), ("valid", 9.5), ("test:robustness", 11.25)):
        result = copy.deepcopy(first)
        result["evaluation_result_id"] = f"word_perplexity:{split}"
        result["score_details"]["score"] = score
        results.append(result)
    doc["evaluation_results"] = results
    return doc


def make_layout_store(tmp: Path) -> Path:
    """The browser test's store (retracted, superseded and disputed records), a record with
    long names, one with three results of one metric, records with sidecars whose model ids
    are long (the analysis pages and plots), and a record limit that puts the records
    without a history on shared pages."""
    import datetime as dt

    from analysis_store import place
    from conftest import place_record
    from eee.governance.events import make_event, write
    from test_site import ME, make_site_store

    store = make_site_store(tmp)
    place_record(store, long_record(), benchmark="wikitext", record_uuid=LONG)
    place_record(store, repeated_metric_record(), benchmark="wikitext", record_uuid=REPEATED)
    now = dt.datetime(2026, 6, 3, tzinfo=dt.UTC)
    # a history gives these two a page of their own past the record limit
    write(store, make_event("dispute", LONG, "the long names", ME, reference="https://example.org/d/1", now=now))
    write(store, make_event("dispute", REPEATED, "which split", ME, reference="https://example.org/d/2", now=now))
    import random

    rng = random.Random(3)
    for m in range(7):
        model = f"an-organisation-with-a-long-name/model-{m}-with-a-long-name-instruct-2026-05-preview"
        ability = m / 7 - 0.4
        scores = [1.0 if rng.random() < 1 / (1 + 2.718 ** -(ability + (i % 9 - 4) / 3)) else 0.0 for i in range(60)]
        place(store, f"{m + 1:08x}-1111-4111-8111-{m + 1:012x}", model, "lm_eval" if m % 2 else "inspect_ai", scores)
    from eee.commands import analysis

    assert analysis.main(["--store", str(store)]) == 0
    config = store / "mkdocs.yml"
    config.write_text(config.read_text().replace("record_pages: 2000", "record_pages: 8"))
    return store
