"""The published site renders data, never code (issue 24): a store seeded with the injection
corpus (``tests/injection.py``: script tags, event-handler attributes, ``javascript:`` and
``data:`` links, attribute lists, Jinja, HTML entities and Markdown tricks in every text field a
page shows: record fields, model ids and benchmark names, event reasons, actors and
references, import manifest fields, sample ids) is built with ``eee site pages`` and a real
``mkdocs build --strict``, served on ``http://127.0.0.1`` and opened in Debian's chromium.

Every page type is loaded (home, catalogue, benchmark pages, record pages, shared record
pages, the schema reference, governance pages, analysis pages, the search results of a
query), twice: as built, under the Content-Security-Policy every page carries, and once
more with that policy cut out of every page, so that the escaping is tested on its own and
not hidden behind the policy. A page fails on any dialog, any call of the corpus's
``alert``, any script error, any policy violation, and on its DOM: no element, class or id
of the corpus, no event-handler attribute, no link that is not http(s), no inline script.
Skipped when ``/usr/bin/chromium`` is absent; never downloads a browser.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

import injection
from conftest import PROJECT, load_example, make_pipeline_store
from sitebrowser import CHROMIUM, chromium, page_types, serve
from test_site import build_site

pytestmark = pytest.mark.slow

CSP_META = re.compile(r'\s*<meta http-equiv="Content-Security-Policy" content="[^"]*">')

# before any script of the page: dialogs and the corpus's calls are recorded, not shown,
# and every policy violation is kept
INIT_JS = """
window.__eeeFired = [];
for (const name of ["alert", "confirm", "prompt", "print"]) {
  window[name] = (...args) => { window.__eeeFired.push(name + "(" + args.join(",") + ")"); };
}
window.__eeeViolations = [];
document.addEventListener("securitypolicyviolation",
  e => window.__eeeViolations.push(e.violatedDirective + " " + e.blockedURI + " " + (e.sample || "")));
"""

# what the corpus managed to put into the page as it is now (scripts have run)
DOM_JS = """(mark) => {
  const out = [];
  const ok = new Set(["http:", "https:", "mailto:"]);
  for (const el of document.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    if (tag.includes(mark)) out.push("element <" + tag + ">");
    for (const attr of el.attributes) {
      const name = attr.name.toLowerCase(), value = attr.value;
      if (name.startsWith("on")) out.push("handler " + name + " on <" + tag + ">");
      if ((name === "id" || name === "class" || name === "name") && value.includes(mark))
        out.push(name + "=" + value.slice(0, 50) + " on <" + tag + ">");
      if (["href", "src", "action", "formaction", "data", "xlink:href", "srcdoc"].includes(name)) {
        let scheme = "";
        try { scheme = new URL(value, location.href).protocol; } catch (e) { scheme = "unparsable:"; }
        if (name === "srcdoc" || !ok.has(scheme)) out.push(name + "=" + value.slice(0, 60) + " on <" + tag + ">");
      }
    }
    if (tag === "script" && !el.src && el.type !== "application/json") out.push("inline script " + el.textContent.slice(0, 60));
    if (["iframe", "object", "embed", "base", "frame"].includes(tag)) out.push("element <" + tag + ">");
  }
  return {found: out, fired: window.__eeeFired, violations: window.__eeeViolations,
          text: document.body.innerText.replace(/\\s+/g, " ")};
}"""


def _no_csp_copy(site: Path, target: Path) -> Path:
    """The built site with the Content-Security-Policy cut out of every page."""
    shutil.copytree(site, target)
    for page in target.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        page.write_text(CSP_META.sub("", text, count=1), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def corpus_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, injection.Seeded]:
    """The corpus store and its built site (records past the page limit on shared pages)."""
    tmp = tmp_path_factory.mktemp("corpus")
    store = make_pipeline_store(tmp)
    seeded = injection.seed(store, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"))
    config = store / "mkdocs.yml"
    config.write_text(config.read_text().replace("record_pages: 2000", "record_pages: 16"))
    site = tmp / "site"
    proc = build_site(store, site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    return store, site, seeded


def _policy() -> str:
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return yaml.load((PROJECT / "mkdocs.yml").read_text(), Loader=_Loader)["extra"]["content_security_policy"]


def test_every_page_starts_with_the_policy_and_shows_the_corpus_as_text(corpus_site: Any) -> None:
    """Every built page, read as HTML: the policy is the first element of <head>, and
    nothing of the corpus is an element, an attribute, a link or a script."""
    _store, site, seeded = corpus_site
    policy = _policy()
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy.split("script-src", 1)[1].split(";")[0]
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 40
    problems = {}
    for page in pages:
        text = page.read_text(encoding="utf-8")
        head = re.search(r'<head>\s*<meta http-equiv="Content-Security-Policy" content="([^"]*)">', text)
        assert head and html.unescape(head.group(1)) == policy, page
        found = injection.scan(text)
        if found:
            problems[page.relative_to(site).as_posix()] = found[:3]
    assert not problems, problems
    # the corpus did reach the pages, as text
    record = (site / "catalogue" / "records" / seeded.visible_uuid / "index.html").read_text()
    assert "&lt;script&gt;alert(&#34;eeepwn visible&#34;)&lt;/script&gt;" in record


def _pages(site: Path, seeded: injection.Seeded) -> dict[str, str]:
    """Every page type, and the pages where each kind of corpus text lands."""
    from eee.site.mdtext import slug

    pages = page_types(site)
    for i, bench in enumerate(seeded.benchmarks):
        pages[f"benchmark-{i}"] = f"catalogue/benchmarks/{slug(bench)}/"
    for i, uuid in enumerate(sorted(seeded.records)):
        if (site / "catalogue" / "records" / uuid / "index.html").is_file():
            pages[f"record-{i}"] = f"catalogue/records/{uuid}/"
    groups = sorted(p.parent.name for p in (site / "catalogue" / "records").glob("group-*/index.html"))
    assert groups, "no shared records page"
    pages["shared-records"] = f"catalogue/records/{groups[0]}/"
    analysis = [p.parent.name for p in (site / "analysis").glob("*/index.html")]
    assert analysis, "no analysis page"
    for i, name in enumerate(sorted(analysis)):
        pages[f"analysis-{i}"] = f"analysis/{name}/"
    pages["not-found"] = "404.html"
    return pages


SEARCHES = {"search-eeepwn": "?q=eeepwn", "search-script": "?q=script+alert"}


def _browser_or_skip() -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (Debian: apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    _browser_or_skip()
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="module", params=["with the policy", "without the policy"])
def served(
    request: pytest.FixtureRequest, corpus_site: Any, browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """The corpus site served as built, and served with the policy cut out of every page."""
    _store, site, seeded = corpus_site
    if request.param == "without the policy":
        site = _no_csp_copy(site, tmp_path_factory.mktemp("nocsp") / "site")
        assert "Content-Security-Policy" not in (site / "index.html").read_text()
    with serve(site) as base:
        yield request.param, site, seeded, base, browser


def _load(browser: Any, url: str, search: bool) -> tuple[dict[str, Any], list[str], list[str]]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    dialogs: list[str] = []
    errors: list[str] = []
    try:
        tab = context.new_page()
        tab.set_default_timeout(30_000)
        tab.add_init_script(INIT_JS)
        tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        tab.on("pageerror", lambda e: errors.append(str(e)))
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        tab.goto(url)
        tab.wait_for_load_state("networkidle")
        if search:  # the query in the address opens the search: wait for its results
            tab.wait_for_function(
                "() => document.querySelectorAll('.md-search-result__item').length > 0", timeout=30_000
            )
        found = tab.evaluate(DOM_JS, injection.MARK)
        return found, dialogs, errors
    finally:
        context.close()


def test_no_page_runs_or_injects_anything(served: Any) -> None:
    variant, site, seeded, base, browser = served
    pages = _pages(site, seeded)
    assert {"home", "catalogue", "benchmark", "record", "shared-records", "reference-aggregate", "governance"} <= set(
        pages
    ) and {"analysis", "analysis-benchmark", "changelog"} <= set(pages)
    urls = {name: base + quote(path) for name, path in pages.items()} | {n: base + q for n, q in SEARCHES.items()}
    failures: dict[str, Any] = {}
    texts: dict[str, str] = {}
    for name, url in urls.items():
        found, dialogs, errors = _load(browser, url, search=name in SEARCHES)
        texts[name] = found["text"]
        bad = {
            k: v
            for k, v in {
                "dom": found["found"],
                "fired": found["fired"],
                "dialogs": dialogs,
                "violations": found["violations"],
                "errors": [e for e in errors if "favicon" not in e],
            }.items()
            if v
        }
        if bad:
            failures[f"{name} ({url})"] = bad
    assert not failures, f"{variant}: {failures}"
    # the data is shown as written, neither run nor escaped twice
    visible = texts[next(n for n, p in pages.items() if seeded.visible_uuid in p)]
    assert " ".join(injection.VISIBLE.split()) in visible
    assert "matching document" in texts["search-eeepwn"]


def test_theme_scripts_work_under_the_policy(corpus_site: Any, browser: Any) -> None:
    """Material's own scripts, moved to files: the colour scheme a reader picks is stored and
    restored on the next page (base.js, palette.js), search answers (its worker), the share
    link of a search gets the search's own address, Enter opens the first result; nothing
    the policy refuses on the way."""
    with serve(corpus_site[1]) as base:
        _theme_scripts(base, browser)


def _theme_scripts(base: str, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    try:
        tab = context.new_page()
        tab.add_init_script(INIT_JS)
        tab.on("pageerror", lambda e: errors.append(str(e)))
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        tab.goto(base)
        assert tab.evaluate("document.head.firstElementChild.getAttribute('http-equiv')") == "Content-Security-Policy"
        assert tab.evaluate("typeof __md_get") == "function"
        tab.locator("label.md-header__button[for^='__palette']:visible").first.click()
        assert tab.locator("body").get_attribute("data-md-color-scheme") == "slate"
        tab.goto(base + "catalogue/")
        assert tab.locator("body").get_attribute("data-md-color-scheme") == "slate"  # restored by palette.js
        search = tab.locator("input.md-search__input")
        search.click()
        tab.wait_for_function(
            "() => !document.querySelector('.md-search-result__meta').textContent.includes('Initializing')",
            timeout=30_000,
        )
        search.press_sequentially("catalogue")
        tab.locator(".md-search-result__item").first.wait_for(state="visible", timeout=30_000)
        share = tab.locator("[data-md-component=search-share]")
        tab.wait_for_function(
            "() => (document.querySelector('[data-md-component=search-share]').href || '').includes('q=catalogue')"
        )
        assert share.get_attribute("href").startswith(base)
        with tab.expect_navigation():  # Enter opens the first result (the form never submits)
            search.press("Enter")
        assert tab.url.startswith(base) and "query=" not in tab.url
        assert tab.evaluate("window.__eeeViolations") == []
    finally:
        context.close()
    assert not errors, errors


def test_the_corpus_passes_the_validator_where_a_field_is_free_text(tmp_path: Path) -> None:
    """The hostile records are records a contributor can commit: the validator finds no error
    in them (warnings at most, for the odd benchmark folders), so the site is their only
    defence; events the schema refuses stay in the corpus as commits made with --no-verify."""
    store = make_pipeline_store(tmp_path)
    injection.seed(store, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"), with_analysis=False)
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "validate", "--store", str(store), "data", "--format", "json"],
        cwd=store,
        capture_output=True,
        text=True,
    )
    import json

    report = json.loads(proc.stdout)
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert not errors, errors[:3]
    assert proc.returncode == 2, proc.stderr  # warnings only (the benchmark folders' names)
