"""Small helpers for the site's pages: data escaped for where it lands, inline code, table
cells, links, anchors, fences.

Data (anything read from a record, an event, an import manifest or a sidecar) is written
by someone else: it reaches a page only through :func:`text` (Markdown text),
:func:`html` (HTML text and attribute values, in the raw HTML blocks of
:mod:`eee.site.mdraw`), :func:`code` (inline code) or :func:`url` (a link target, http(s)
only). None of them lets the value form HTML, Markdown syntax, an attribute list
(``{: onclick=...}``) or a raw-block marker: the page shows what was written, as text.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any
from urllib.parse import quote, urlsplit

from markupsafe import escape

_ANCHOR_BAD = re.compile(r"[^A-Za-z0-9_.-]+")
_SLUG_BAD = re.compile(r"[^A-Za-z0-9._-]+")
# C0 and C1 controls (Python-Markdown's own placeholders are STX and ETX) other than the
# white space that :func:`plain` collapses, the bidirectional embeddings, overrides and
# isolates (they would make a value read as another), lone surrogates and the two
# non-characters XML refuses: shown as U+FFFD, never passed on
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
# what Markdown, its extensions (attribute lists, tables, abbreviations) or HTML read as
# syntax anywhere in a line (a link needs its brackets, so parentheses and quotes may stay),
# and what they read as syntax at the start of a line (lists, headings, definitions,
# quotes, fences, setext underlines) or at a heading's end (#)
_MD_INLINE = frozenset("\\`*_{}[]<>&|!#~^=")
_MD_LINE_START = re.compile(r"^(?:[-+.:>?]|\d+\.)")  # "?": pymdownx.details opens a block with "???"
_URL = re.compile(r"^https?://[^\s\x00-\x1f\x7f]+$", re.IGNORECASE)


def plain(value: Any) -> str:
    """``value`` as one line of text: control characters (and what XML cannot hold) shown
    as U+FFFD, every run of white space (line breaks included) one space."""
    s = str(value)
    if s.isprintable() and "  " not in s and s[:1] != " " and s[-1:] != " ":
        return s  # the common case, at C speed: nothing to change (a page has 100,000s of values)
    return " ".join(_CONTROL.sub("\ufffd", s).split())


def text(value: Any) -> str:
    """Data as Markdown text that shows exactly as written: one line, every character that
    Markdown or HTML could read as syntax there written as a numeric character reference.
    Safe anywhere in a Markdown line: a paragraph, a list item, a heading, a table cell, a
    link's text (``{: .x }`` stays text, so no attribute list can form)."""
    if value is None:
        return ""
    line = plain(value)
    lead = _MD_LINE_START.match(line)
    start = 0
    out = []
    if lead:  # "- x", "1. x", ": x", "??? x" first on a line would start a list, a definition, details, ...
        out.append("".join(f"&#{ord(c)};" for c in lead.group(0)))
        start = lead.end()
    for i in range(start, len(line)):
        c = line[i]
        if c in _MD_INLINE and not (c == "_" and _inside_word(line, i)):
            out.append(f"&#{ord(c)};")
        else:
            out.append(c)
    return "".join(out)


def _inside_word(line: str, i: int) -> bool:
    """An underscore between two letters or digits (``exact_match``), which Markdown never
    reads as emphasis."""
    return 0 < i < len(line) - 1 and line[i - 1].isalnum() and line[i + 1].isalnum()


def html(value: Any) -> str:
    """Data as HTML text or as a (double-quoted) attribute value: one line, ``& < > " '``
    escaped. For the raw HTML blocks that Markdown passes through untouched."""
    if value is None:
        return ""
    return str(escape(plain(value)))


def url(value: Any) -> str:
    """``value`` when it is an absolute http(s) URL (no white space or control characters,
    a host), else ``""``: a link target from the data is shown as a link only then (and
    escaped with :func:`html` in the attribute), anything else as text."""
    if not isinstance(value, str) or not _URL.match(value) or _CONTROL.search(value):
        return ""
    try:
        return value if urlsplit(value).hostname else ""
    except ValueError:
        return ""


def meta(value: Any) -> str:
    """Data as a YAML front-matter value of a page (its ``title``): a JSON string (JSON is
    YAML) of the text escaped with :func:`html`, because MkDocs and the theme write a page
    title into the HTML as it is (the tab title, the navigation)."""
    return json.dumps(html(value), ensure_ascii=False)  # YAML reads no surrogate pair back


def code(text: Any) -> str:
    """``text`` as an inline code span, whatever backticks it holds (one line)."""
    text = plain(text)
    if not text:
        return "` `"
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def value(v: Any) -> str:
    """A JSON value as inline code: strings without quotes, everything else as JSON."""
    return code(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))


def cell(text: Any) -> str:
    """Text safe inside a Markdown table cell (one line, pipes escaped outside code)."""
    if text is None:
        return ""
    out = []
    for i, part in enumerate(re.split(r"(`+[^`]*`+)", str(text))):
        out.append(part if i % 2 else part.replace("|", "\\|"))
    return " ".join("".join(out).split())


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (cells are made safe)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def fence(text: str, lang: str = "") -> str:
    """A fenced code block around ``text`` that no run of backticks inside can close."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    marks = "`" * (longest + 1)
    return f"{marks}{lang}\n{text.rstrip()}\n{marks}\n"


def anchor(key: str) -> str:
    """An HTML id for a field key such as ``evaluation_results[].source_data{url}.url``."""
    key = key.replace("[]", "").replace("{", "-").replace("}", "")
    return _ANCHOR_BAD.sub("-", key).strip("-") or "field"


def relative(target: str, page: str, fragment: bool = True) -> str:
    """A link from the page at ``page`` (a docs path) to the docs path ``target``, which may
    end in a ``#fragment`` unless ``fragment`` is false (a path made of data: a ``#`` in it
    is part of the name)."""
    target_path, _, frag = target.partition("#") if fragment else (target, "", "")
    rel = posixpath.relpath(target_path, posixpath.dirname(page) or ".") if target_path else ""
    rel = quote(rel, safe="/._-~")
    return rel + (f"#{frag}" if frag else "")


def slug(name: str) -> str:
    """A file-name-safe, stable slug of a store name (benchmark folders may hold any portable text)."""
    safe = _SLUG_BAD.sub("-", name).strip("-.") or "x"
    if safe != name:
        import hashlib

        safe += "-" + hashlib.sha1(name.encode("utf-8")).hexdigest()[:6]
    return safe


def number(v: float | None) -> str:
    """A score for display: at most 6 significant digits, infinities as symbols."""
    if v is None:
        return ""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "∞" if v > 0 else "-∞"
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


def breakable(path: str) -> str:
    """A field path as inline HTML code that may wrap after its dots."""
    import html

    return "<code>" + "<wbr>".join(html.escape(part) for part in re.split(r"(?<=\.)", path)) + "</code>"
