"""``eee site serve``: the built site as a reader opens it, in a real browser (Debian's
``chromium``, headless, through Playwright). Opened from disk (``file://``) the site's links
name folders, which a browser shows as listings; served, every link opens its page and the
search (a web worker that fetches its index) works."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitebrowser import CHROMIUM, chromium
from test_site import FIXED_UUID, make_site_store, write_pages

pytestmark = pytest.mark.slow


def _serve(store: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "eee", "site", "serve", "--store", str(store), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"on (http://127\.0\.0\.1:\d+/)", line)
    assert found, line + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
    return proc, found.group(1)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    repo = make_site_store(tmp_path_factory.mktemp("serve"))
    assert write_pages(repo).returncode == 0
    built = subprocess.run(
        [sys.executable, "-m", "eee", "site", "build", "--store", str(repo)], capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    yield repo


def test_serve_without_a_built_site_says_how_to_build_it(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()  # a store, never built
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "site", "serve", "--store", str(tmp_path), "--port", "0"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "no built site here" in proc.stderr and "tools/dev.py run" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_served_site_opens_pages_and_searches(store: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (Debian: apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    proc, base = _serve(store)
    try:
        with chromium() as browser:
            tab = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            tab.set_default_timeout(15_000)
            tab.goto(base)
            assert "Every Eval Ever datastore" in tab.title()
            tab.locator(".md-tabs__link", has_text="Catalogue").first.click()
            tab.wait_for_load_state()
            assert tab.url.startswith(base + "catalogue/")
            assert "Index of" not in tab.content()  # a page, not a folder listing
            assert tab.locator("article h1").inner_text().strip().startswith("Catalogue")
            search = tab.locator("input.md-search__input")
            search.click()
            tab.wait_for_function(
                "() => !document.querySelector('.md-search-result__meta').textContent.includes('Initializing')",
            )
            search.press_sequentially(FIXED_UUID)
            result = tab.locator(f".md-search-result__item a[href*='catalogue/records/{FIXED_UUID}']").first
            result.wait_for()
            result.click()
            tab.wait_for_load_state()
            assert FIXED_UUID in tab.url and "Index of" not in tab.content()
            # the same page opened from disk: its links name folders, which is why the site is served
            site = store / "build" / "site"
            tab.goto((site / "index.html").as_uri())
            href = tab.locator(".md-tabs__link", has_text="Catalogue").first.get_attribute("href")
            assert href is not None and href.endswith("/") and not href.endswith(".html")
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
