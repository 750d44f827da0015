"""The site's escaping, one filter at a time (``eee.site.mdtext``): whatever text a record
holds, ``text`` is Markdown that renders it verbatim in every place a template puts it,
``html`` is HTML that shows it verbatim inside the raw blocks, ``code`` is one code span,
``url`` is an http(s) address or nothing, ``meta`` is a page title MkDocs writes safely.
Rendered with the Markdown extensions of the project's mkdocs.yml (attribute lists and
HTML-in-Markdown included); checked with the corpus's oracle (``injection.scan``) and by
reading the text back. Property tests over text made of Markdown and HTML syntax and the
injection corpus's pieces."""

from __future__ import annotations

import html as htmllib
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import injection
from eee.site.mdraw import END, START
from eee.site.mdtext import code, html, meta, plain, text, url

MD = injection.markdown_renderer()
SYNTAX = [*"\\`*_{}[]()#+-.!|<>&~:=^\"'/;?@%$ \n\t", "\u2028", "\u202e", "\x00", "\x02", "\x03", "\x1b", "\ud800"]
PIECES = [
    *injection.TEXTS,
    *injection.NAMES,
    *injection.URLS,
    START,
    END,
    "{: .x }",
    "&lt;",
    "&#60;",
    "1. ",
    "- ",
    "    ",
]
hostile = st.lists(st.one_of(st.sampled_from(SYNTAX), st.sampled_from(PIECES), st.text(max_size=4)), max_size=12).map(
    "".join
)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _render(source: str) -> str:
    MD.reset()
    return MD.convert(source)


def _shown(page: str) -> str:
    """The text a reader sees in rendered HTML, white space collapsed."""
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", "", page)).split())


# where the templates put text: the Markdown around it, and what a reader then sees ({} the value)
PLACES = {
    "paragraph": ("before {} after", "before {} after"),
    "list item": ("- **Label:** {}", "Label: {}"),
    "heading": ("## Name {} {{ #fixed }}", "Name {}"),
    "table cell": ("| a | b |\n|---|---|\n| {} | x |", "a b {} x"),
    "link text": ("[{}](page.md)", "{}"),
    "line start": ("{}", "{}"),
}


@pytest.mark.parametrize("place", sorted(PLACES))
@SETTINGS
@given(value=hostile)
@example(value="???0")  # pymdownx.details: "???" at a line's start opened a <details> block
def test_text_renders_verbatim_wherever_a_template_puts_it(place: str, value: str) -> None:
    markdown, seen = PLACES[place]
    source = markdown.format(text(value))
    out = _render(source)
    assert not injection.scan(out), (source, out)
    shown = _shown(re.sub(r'<a class="headerlink"[^>]*>[^<]*</a>', "", out))  # a heading's permalink
    assert shown == " ".join(seen.format(plain(value)).split()), (source, out)
    if place == "heading":
        assert 'id="fixed"' in out
    if place == "link text":
        assert out.count("<a ") == 1


@SETTINGS
@given(value=hostile)
def test_html_shows_verbatim_in_a_raw_block_and_in_an_attribute(value: str) -> None:
    source = f'{START}\n<p title="{html(value)}">{html(value)}</p>\n{END}\n'
    out = _render(source)
    assert not injection.scan(out), (source, out)
    assert _shown(out) == plain(value)
    (title,) = re.findall(r'title="([^"]*)"', out)
    assert htmllib.unescape(title) == plain(value)
    assert "\n" not in html(value) and START not in html(value) and END not in html(value)


@SETTINGS
@given(value=hostile)
def test_code_is_one_code_span(value: str) -> None:
    out = _render(f"x {code(value)} y")
    assert not injection.scan(out), out
    spans = re.findall(r"<code>(.*?)</code>", out, re.S)
    if plain(value):
        assert len(spans) == 1 and htmllib.unescape(spans[0]).strip() == plain(value).strip(), out


@SETTINGS
@given(value=st.one_of(hostile, st.sampled_from(injection.URLS), st.just("https://example.org/a?b=1&c='d'\"")))
def test_url_is_http_or_nothing(value: str) -> None:
    target = url(value)
    if not target:
        return
    assert target == value and re.match(r"(?i)^https?://\S+$", target)
    out = _render(f'{START}\n<a href="{html(target)}">x</a>\n{END}')
    assert not injection.scan(out)
    (href,) = re.findall(r'href="([^"]*)"', out)
    assert htmllib.unescape(href) == target


def test_url_refuses_what_is_not_an_http_address() -> None:
    for value in [*injection.URLS[:6], "//evil.example/x", "https://", "http:///x", "ftp://x", "https://[::1", None, 3]:
        assert url(value) == "", value
    assert url("https://example.org/discussions/42") == "https://example.org/discussions/42"
    assert url("HTTP://EXAMPLE.ORG") == "HTTP://EXAMPLE.ORG"


@SETTINGS
@given(value=hostile)
def test_meta_is_a_title_mkdocs_can_write_as_it_is(value: str) -> None:
    import yaml

    title = yaml.safe_load(f"title: {meta(value)}\n")["title"]
    assert title == html(value) and "<" not in title and '"' not in title
    assert json.loads(meta(value)) == title


def test_text_keeps_ordinary_names_readable() -> None:
    """Only what Markdown could read is written as a character reference: ids and names stay
    legible in the generated Markdown."""
    assert text("meta-llama/Llama-2-7b-hf") == "meta-llama/Llama-2-7b-hf"
    assert text("qa-bench: instance-level analysis") == "qa-bench: instance-level analysis"
    assert text("- a list? no") == "&#45; a list? no"
    assert text("a{: .x}") == "a&#123;: .x&#125;"
    assert text("line\nbreak\x02") == "line break\ufffd"
    assert text("exact_match (proportion), 'test'") == "exact_match (proportion), 'test'"
    for value in ("a_b_c", "_em_", "a _b_ c", "__init__", "x__y__z", "é_ü_ß"):
        out = _render(f"before {text(value)} after")
        assert "<em>" not in out and "<strong>" not in out and _shown(out) == f"before {value} after", out
    assert html("evil\u202egnp.exe") == "evil\ufffdgnp.exe"  # a bidirectional override never reorders what is shown


def _page_problems(source: str) -> list[str]:
    meta_, out = injection.render_page(MD, source)
    found = injection.scan(out)
    if "<" in str(meta_.get("title", "")):
        found.append(f"a title with markup: {meta_['title']!r}")
    return found


def test_the_corpus_in_every_template_field(tmp_path: Any) -> None:
    """The catalogue's pages rendered from a store holding the corpus (in process, without a
    browser: the browser test builds the whole site), every page scanned."""
    from conftest import load_example, make_pipeline_store
    from eee.site.generate import generate

    store = make_pipeline_store(tmp_path)
    injection.seed(store, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"))
    gen = generate(store, "https://example.org/repo", {"catalogue": {"record_pages": 16}})
    problems = {p.src_uri: _page_problems(p.content) for p in gen.pages}
    assert not {k: v for k, v in problems.items() if v}
    analysis = store / "build" / "analysis" / "pages"
    pages = sorted(analysis.glob("*.md"))
    assert pages
    for page in pages:
        assert not _page_problems(page.read_text()), page
    import xml.etree.ElementTree as ET

    for svg in analysis.glob("*.svg"):
        ET.fromstring(svg.read_text())  # well-formed whatever the labels held
