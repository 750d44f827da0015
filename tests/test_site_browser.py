"""The published site in a real browser: Debian's ``chromium``, headless, driven by Playwright.

The site is built from a temporary store (records retracted, superseded and disputed) and
served on localhost, because the search runs in a web worker that fetches its index over
HTTP. Screenshots of a benchmark page, a record page and the 0.3.0 reference, at 1,400 px
and at 390 px (a phone), are saved to ``build/test-artifacts/`` (gitignored), and each of
those pages is checked for horizontal overflow. Skipped when ``/usr/bin/chromium`` is absent
(CI installs it with ``apt-get install -y chromium``); never downloads a browser.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conftest import PROJECT, place_record
from sitebrowser import CHROMIUM, LONG, WIDTHS, chromium, long_record, serve
from test_site import FIXED_UUID, REASON, REPLACEMENT, RETRACTED, build_site, make_site_store

pytestmark = pytest.mark.slow

ARTIFACTS = PROJECT / "build" / "test-artifacts"
# pages a reader lands on: (name, path from the site root)
SHOTS = [
    ("benchmark", "catalogue/benchmarks/wikitext/"),
    ("record", f"catalogue/records/{REPLACEMENT}/"),
    ("record-long", f"catalogue/records/{LONG}/"),
    ("reference-0.3.0", "reference/0.3.0/aggregate/"),
    ("guide-architecture", "guide/architecture/"),  # the guide's widest tables (every module)
]
# what overflows horizontally: the page itself, and any table wider than its container that
# has no scrolling ancestor (Material wraps plain tables in one) or, with ``fit``, any table
# wider than its container at all (tests/test_site_layout.py measures every page type)
OVERFLOW_JS = """(fit) => {
  const out = {page: [document.scrollingElement.scrollWidth, window.innerWidth], tables: []};
  for (const table of document.querySelectorAll("article table")) {
    let box = table, scrolls = false;
    while (box && box.tagName !== "ARTICLE") {
      const o = getComputedStyle(box).overflowX;
      if (o === "auto" || o === "scroll") { scrolls = true; break; }
      box = box.parentElement;
    }
    const room = table.parentElement.clientWidth;
    const wide = table.getBoundingClientRect().width > room + 1;
    const cut = table.scrollWidth > table.clientWidth + 1;  // Material's tables scroll themselves
    if (fit ? wide || cut : wide && !scrolls) {
      out.tables.push({text: table.innerText.slice(0, 60), width: table.scrollWidth, room, scrolls});
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (Debian: apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    tmp = tmp_path_factory.mktemp("browser")
    store = make_site_store(tmp)
    place_record(store, long_record(), benchmark="wikitext", record_uuid=LONG)
    site = tmp / "site"
    proc = build_site(store, site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with serve(site) as base:
        yield base


@pytest.fixture(scope="module")
def browser(base_url: str) -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    try:
        yield tab
    finally:
        context.close()


def _heading(page: Any) -> str:
    """The page's title heading, without its permalink mark."""
    return page.locator("article h1").inner_text().rstrip("¶").strip()


def test_home_page_renders(page: Any, base_url: str) -> None:
    page.goto(base_url)
    assert "Every Eval Ever datastore" in page.title()
    assert _heading(page) == "Every Eval Ever datastore"
    tabs = page.locator(".md-tabs__link").all_inner_texts()
    assert {"Home", "Contributing", "Governance", "Schema reference", "Catalogue", "Changelog"} <= set(tabs)
    # the palette toggle switches to the dark scheme
    page.locator("label.md-header__button[for^='__palette']:visible").first.click()
    assert page.locator("body").get_attribute("data-md-color-scheme") == "slate"


def test_schema_reference_lists_inference_engine_version(page: Any, base_url: str) -> None:
    page.goto(base_url + "reference/0.3.0/aggregate/")
    assert _heading(page) == "Aggregate record, schema 0.3.0"
    field = page.locator("td code", has_text="model_info.inference_engine.version").first
    field.scroll_into_view_if_needed()
    assert field.is_visible()
    assert field.inner_text() == "model_info.inference_engine.version"


@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize(("name", "path"), SHOTS, ids=[n for n, _ in SHOTS])
def test_pages_fit_the_screen_and_are_saved_as_screenshots(
    browser: Any, base_url: str, name: str, path: str, width: str
) -> None:
    context = browser.new_context(viewport={"width": WIDTHS[width], "height": 900})
    try:
        tab = context.new_page()
        tab.goto(base_url + path)
        tab.wait_for_load_state("networkidle")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / f"site-{name}-{WIDTHS[width]}.png"
        height = min(tab.evaluate("document.scrollingElement.scrollHeight"), 3000)
        tab.screenshot(path=str(shot), full_page=True, clip={"x": 0, "y": 0, "width": WIDTHS[width], "height": height})
        assert shot.stat().st_size > 10_000
        # on a desktop every table fits; on a phone a wide table scrolls inside its own box
        found = tab.evaluate(OVERFLOW_JS, width == "desktop")
        scroll_width, inner_width = found["page"]
        assert scroll_width <= inner_width, f"{path} at {WIDTHS[width]} px: the page scrolls sideways"
        assert not found["tables"], f"{path} at {WIDTHS[width]} px: {found['tables']}"
    finally:
        context.close()


def test_status_rows_look_different(page: Any, base_url: str) -> None:
    page.goto(base_url + "catalogue/benchmarks/wikitext/")
    styles = {}
    for status in ("active", "retracted", "superseded"):
        row = page.locator(f"tr.eee-status-{status}").first
        assert row.is_visible(), status
        styles[status] = row.evaluate(
            "r => [getComputedStyle(r.cells[0]).backgroundColor, getComputedStyle(r.cells[0]).boxShadow]"
        )
    assert styles["retracted"] != styles["active"] and styles["superseded"] != styles["active"]
    assert styles["retracted"] != styles["superseded"]


def test_search_finds_a_record_page_by_its_uuid(page: Any, base_url: str) -> None:
    page.goto(base_url)
    search = page.locator("input.md-search__input")
    search.click()
    page.wait_for_function(
        "() => !document.querySelector('.md-search-result__meta').textContent.includes('Initializing')",
        timeout=30_000,
    )
    search.press_sequentially(FIXED_UUID)
    result = page.locator(f".md-search-result__item a[href*='catalogue/records/{FIXED_UUID}']").first
    result.wait_for(state="attached", timeout=30_000)


def test_search_finds_evaluator_relationship(page: Any, base_url: str) -> None:
    page.goto(base_url)
    search = page.locator("input.md-search__input")
    search.click()
    # the index loads in a web worker: wait for it, then type key by key (the search
    # listens to key events, which a bare fill() does not send)
    page.wait_for_function(
        "() => !document.querySelector('.md-search-result__meta').textContent.includes('Initializing')",
        timeout=30_000,
    )
    search.press_sequentially("evaluator_relationship")
    result = page.locator(".md-search-result__item", has_text="evaluator_relationship").first
    result.wait_for(state="visible", timeout=30_000)
    assert "evaluator_relationship" in result.inner_text()
    assert "matching document" in page.locator(".md-search-result__meta").inner_text()


def test_retracted_record_page_shows_its_reason(page: Any, base_url: str) -> None:
    page.goto(base_url + f"catalogue/records/{RETRACTED}/")
    warning = page.locator(".admonition.danger")
    assert warning.is_visible()
    assert "Retracted" in warning.inner_text() and REASON in warning.inner_text()
    history = page.locator("table", has_text="retract").first
    assert REASON in history.inner_text()
