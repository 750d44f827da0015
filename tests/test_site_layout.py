"""Pages that read at both widths (issue 25): every page type of a site built from a store
whose names are as long as real ones (``sitebrowser.make_layout_store``: long model ids and
evaluation names, three results of one metric, analysis plots of models with long ids,
shared record pages), measured in Debian's chromium at 1,400 px and at 390 px with the
measurements ``benchmarks/site_layout.py`` prints (``sitebrowser.LAYOUT_JS``, ``SVG_JS``).

At 1,400 px no column of any table is cut (every column fully visible without scrolling);
at 390 px a table may scroll inside its own box, but no column is hidden; at both no cell's
content is wider than its cell, no row repeats another word for word, the page never
scrolls sideways. Every text of every plot lies inside the plot, and a shortened label
carries its whole text as its tooltip. The figures are saved to
``build/test-artifacts/site-layout.json``. Skipped when ``/usr/bin/chromium`` is absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from conftest import PROJECT
from sitebrowser import (
    CHROMIUM,
    LONG,
    LONG_MODEL,
    REPEATED,
    WIDTHS,
    chromium,
    make_layout_store,
    measure,
    page_types,
    serve,
    summary,
    svg_clipping,
    svgs_of,
)
from test_site import build_site

pytestmark = pytest.mark.slow

ARTIFACT = PROJECT / "build" / "test-artifacts" / "site-layout.json"


@pytest.fixture(scope="module")
def layout_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, Any]]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (Debian: apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    tmp = tmp_path_factory.mktemp("layout")
    store = make_layout_store(tmp)
    site = tmp / "site"
    proc = build_site(store, site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with serve(site) as base, chromium() as browser:
        yield site, base, browser


@pytest.fixture(scope="module")
def measured(layout_site: Any) -> dict[str, Any]:
    site, base, browser = layout_site
    pages = page_types(
        site, record=f"catalogue/records/{LONG}/", **{"record-repeated": f"catalogue/records/{REPEATED}/"}
    )
    out: dict[str, Any] = {"pages": {}, "svgs": {}}
    for name, path in pages.items():
        for width in WIDTHS.values():
            found = measure(browser, base + quote(path), width)
            out["pages"][f"{name} {width}"] = {"path": path, **summary(found, width), "detail": found}
        for svg in svgs_of(site, path):
            out["svgs"][svg] = svg_clipping(browser, base + quote(svg))
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    ARTIFACT.write_text(json.dumps(out, indent=1))
    return out


def test_every_page_type_is_measured(measured: dict[str, Any]) -> None:
    names = {key.rsplit(" ", 1)[0] for key in measured["pages"]}
    assert {
        "home",
        "catalogue",
        "benchmark",
        "record",
        "record-repeated",
        "shared-records",
        "reference",
        "reference-aggregate",
        "reference-instance",
        "what-changed",
        "governance",
        "contributing",
        "analysis",
        "analysis-benchmark",
    } <= names
    assert len(measured["svgs"]) == 2  # the abilities and the difficulty plots
    tables = sum(row["tables"] for row in measured["pages"].values())
    assert tables > 50  # the measurement sees the tables


def _bad(measured: dict[str, Any], width: int, keys: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    for key, row in measured["pages"].items():
        if row["width"] != width:
            continue
        wrong = {k: row[k] for k in keys if row[k]}
        if wrong:
            tables = [t for t in row["detail"]["tables"] if any(t.get(k) for k in ("cut", "hidden", "cells", "same"))]
            out[key] = {**wrong, "tables": tables[:3], "outside": row["detail"]["outside"]}
    return out


def test_no_column_is_cut_at_1400(measured: dict[str, Any]) -> None:
    assert not _bad(measured, 1400, ("cut", "hidden", "cells", "page", "outside"))


def test_every_column_is_reachable_at_390(measured: dict[str, Any]) -> None:
    """A wide table scrolls inside its own box on a phone (``cut`` is allowed), never hidden
    behind an edge that does not scroll; the page itself never scrolls sideways."""
    assert not _bad(measured, 390, ("hidden", "cells", "page", "outside"))
    reference = measured["pages"]["reference-aggregate 390"]
    assert reference["tables"] and reference["cut"] == 0  # the field tables stack: nothing to scroll


def test_results_of_one_metric_are_told_apart(measured: dict[str, Any], layout_site: Any) -> None:
    assert not _bad(measured, 1400, ("same",))
    _site, base, browser = layout_site
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        tab = context.new_page()
        tab.goto(base + f"catalogue/records/{REPEATED}/")
        rows = tab.evaluate(
            "() => [...document.getElementById('results').nextElementSibling.querySelectorAll('tbody tr')]"
            ".map(r => r.innerText)"
        )
        assert len(rows) == 3 and len(set(rows)) == 3
        for split in ("word_perplexity:test", "word_perplexity:valid", "word_perplexity:test:robustness"):
            assert sum(split in r for r in rows) >= 1, rows
        tab.goto(base + "catalogue/benchmarks/wikitext/")
        results = tab.evaluate(  # the results table (the leaderboards above it list the model again)
            "() => [...document.getElementById('results').nextElementSibling.querySelectorAll('tbody tr')]"
            ".map(r => r.innerText)"
        )
        benchmark = [r for r in results if "openai/gpt2" in r]
        assert len(benchmark) == 3 and len(set(benchmark)) == 3
    finally:
        context.close()


def test_plot_labels_are_never_clipped(measured: dict[str, Any], layout_site: Any) -> None:
    for svg, found in measured["svgs"].items():
        assert found["texts"] > 5, svg
        assert not found["clipped"], (svg, found["clipped"])
    site, _base, _browser = layout_site
    abilities = next(site.glob("analysis/*-abilities.svg")).read_text()
    # the labels are longer than the plot gives room for: shortened, whole in the tooltip
    assert re.search(r"<text [^>]*>[^<]*…[^<]*\(lm_eval, 00000002\)</text>", abilities)  # the end stays
    assert f"<title>{LONG_MODEL.split('/')[0]}/model-0-with" in abilities
