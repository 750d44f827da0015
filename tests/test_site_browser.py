"""The published site in a real browser: Debian's ``chromium``, headless, driven by Playwright.

The site is built from a temporary store (one retracted record) and served on localhost,
because the search runs in a web worker that fetches its index over HTTP. A screenshot of
the schema reference is saved to ``tests/artifacts/``. Skipped when ``/usr/bin/chromium``
is absent (CI installs it with ``apt-get install -y chromium``); never downloads a browser.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import PROJECT
from test_site import REASON, RETRACTED, build_site, make_site_store

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = PROJECT / "tests" / "artifacts"
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
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (Debian: apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    tmp = tmp_path_factory.mktemp("browser")
    store = make_site_store(tmp)
    site = tmp / "site"
    proc = build_site(store, site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(base_url: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


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
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "site-reference-0.3.0-aggregate.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000


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
