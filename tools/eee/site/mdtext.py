"""Small Markdown helpers: inline code, table cells, links, anchors, fences."""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any
from urllib.parse import quote

_ANCHOR_BAD = re.compile(r"[^A-Za-z0-9_.-]+")
_SLUG_BAD = re.compile(r"[^A-Za-z0-9._-]+")


def code(text: Any) -> str:
    """``text`` as an inline code span, whatever backticks it holds."""
    text = str(text)
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


def relative(target: str, page: str) -> str:
    """A link from the page at ``page`` (a docs path) to the docs path ``target``."""
    target_path, _, frag = target.partition("#")
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


_MD_SPECIAL = re.compile(r"([\\`*_\[\]{}()#+!~>])")


def text(value: Any) -> str:
    """Plain text from the data (a reason, a name) that Markdown shows as it is."""
    if value is None:
        return ""
    escaped = str(value).replace("&", "&amp;").replace("<", "&lt;")
    return _MD_SPECIAL.sub(r"\\\1", " ".join(escaped.split()))
