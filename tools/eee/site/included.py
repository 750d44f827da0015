"""Repository documents published as they are: the governance folder and the CHANGELOG.

They are read from where they live at build time (one source of truth, never copied into
``docs/``) and keep their repository paths on the site (``governance/README.md`` is the
governance card), so links between them work unchanged. A relative link that leaves the
published set is rewritten: to a record's catalogue page when it names a record, otherwise
to the file in the repository. A link to a file that does not exist is left alone, so
``mkdocs build --strict`` reports it; only a record path under ``data/`` that this checkout
does not hold (a partial or test store) goes to the repository all the same.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from pathlib import Path

from eee.governance import card
from eee.site.context import SiteContext
from eee.site.mdtext import relative

ROOT_FILES = ("CHANGELOG.md",)
FOLDERS = ("governance",)
_RECORD = re.compile(
    r"^data/[^/]+/[^/]+/[^/]+/([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\.json$"
)
_INLINE = re.compile(r"(!?\[(?:[^\[\]]|\[[^\]]*\])*\]\()(<[^>]+>|[^)\s]+)((?:\s+\"[^\"]*\")?\))")
_REFDEF = re.compile(r"^(\s{0,3}\[[^\]]+\]:\s*)(\S+)(.*)$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


def sources(root: Path) -> list[str]:
    """Repository paths of the Markdown documents the site publishes as they are."""
    found = [name for name in ROOT_FILES if (root / name).is_file()]
    for folder in FOLDERS:
        base = root / folder
        if base.is_dir():
            found += sorted(p.relative_to(root).as_posix() for p in base.rglob("*.md") if p.is_file())
    return found


def page(ctx: SiteContext, rel: str, published: set[str]) -> str:
    """The Markdown the site publishes for the repository document ``rel``: its links
    resolved (:func:`rewrite_links`); the governance card with its generated blocks rendered
    from the declarations at build time (:func:`eee.governance.card.render`)."""
    text = (ctx.root / rel).read_text(encoding="utf-8")
    if rel == card.CARD:
        text = card.render(text)
    return rewrite_links(text, rel, resolver(ctx, rel, published))


def rewrite_links(text: str, rel: str, resolve: Callable[[str], str | None]) -> str:
    """``text`` (Markdown of the repository file ``rel``) with its relative links resolved.

    ``resolve(target)`` returns the new link for a relative target, or None to keep it.
    Links inside fenced code blocks and inline code are left alone.
    """
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if m:
            fence = m.group(1)
            out.append(line)
            continue
        ref = _REFDEF.match(line)
        if ref:
            new = resolve(ref.group(2))
            out.append(line if new is None else f"{ref.group(1)}{new}{ref.group(3)}")
            continue
        out.append(_links_outside_code(line, resolve))
    return "\n".join(out)


def _links_outside_code(line: str, resolve: Callable[[str], str | None]) -> str:
    spans = [m.span() for m in _CODE.finditer(line)]

    def swap(m: re.Match[str]) -> str:
        return m.group(0) if any(a <= m.start() < b for a, b in spans) else _swap(m, resolve)

    return _INLINE.sub(swap, line)


def _swap(m: re.Match[str], resolve: Callable[[str], str | None]) -> str:
    target = m.group(2)
    bare = target[1:-1] if target.startswith("<") else target
    new = resolve(bare)
    return m.group(0) if new is None else f"{m.group(1)}{new}{m.group(3)}"


def resolver(ctx: SiteContext, rel: str, published: set[str]) -> Callable[[str], str | None]:
    """How links of the repository file ``rel`` are rewritten for the site."""

    def resolve(target: str) -> str | None:
        if not target or target.startswith(("#", "/")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            return None
        path, _, frag = target.partition("#")
        repo = posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))
        if repo.startswith("..") or repo in published:
            return None
        record = _RECORD.match(repo)
        page = ctx.record_page(record.group(1)) if record else None
        if page:
            return relative(page, rel) if "#" in page else relative(page, rel) + (f"#{frag}" if frag else "")
        exists = (ctx.root / repo).exists()
        if not exists and not repo.startswith("data/"):
            return None  # a broken link: leave it for --strict to report
        link = ctx.repo_link(repo, folder=exists and (ctx.root / repo).is_dir())
        return (link + (f"#{frag}" if frag else "")) if link else None

    return resolve
