"""The schema reference: one page per released version and record kind, and the indexes.

Each page lists every field with its full path, type, whether it is required, the version
that added it, its constraints and default, and its description; objects with many fields
get a section of their own, and ``oneOf`` variants (the sources of ``source_data``) are
shown side by side as tabs. Conditional rules are spelled out, and a minimal example,
checked against the schema at build time, closes the page.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from eee.site.context import KIND_TITLES, SiteContext, changes_page, reference_page
from eee.site.mdtext import code
from eee.site.render import render
from eee.site.schemafields import Node, build, walk
from eee.site.skeleton import skeleton
from eee.store.schemas import EVAL, INSTANCE, KINDS

SECTION_MIN = 5  # an object below the top level gets its own section from this many fields


def trees(ctx: SiteContext) -> dict[tuple[str, str], Node]:
    """The field tree of every released version and kind."""
    return {(v, k): build(ctx.registry.schema(v, k)) for v in ctx.registry.ordered for k in KINDS}


def since_map(ctx: SiteContext, all_trees: dict[tuple[str, str], Node]) -> dict[tuple[str, str], str]:
    """(kind, field key) -> the first released version that has the field."""
    out: dict[tuple[str, str], str] = {}
    for version in ctx.registry.ordered:
        for kind in KINDS:
            for node in walk(all_trees[(version, kind)]):
                out.setdefault((kind, node.key), version)
    return out


def _is_section(node: Node) -> bool:
    if node.variants:
        return True
    if node.depth == 1:
        return bool(node.children)
    return node.depth == 2 and sum(1 for _ in walk(node)) >= SECTION_MIN


def _rows(nodes: Iterable[Node]) -> list[tuple[Node, bool]]:
    """Rows of ``nodes`` and everything below them that is not a section of its own: each
    node and whether its row carries the field's anchor (a section has its own)."""
    rows: list[tuple[Node, bool]] = []
    for node in nodes:
        section = _is_section(node)
        rows.append((node, not section))
        if section:
            continue
        rows += _rows(node.children)
        for v in node.variants:
            rows += _rows(v.children)
    return rows


def _sections(nodes: Iterable[Node]) -> list[Node]:
    """The section nodes among ``nodes`` and their descendants, in document order."""
    out: list[Node] = []
    for node in nodes:
        if _is_section(node):
            out.append(node)
        out += _sections(node.children)
        for v in node.variants:
            out += _sections(v.children)
    return out


def _section_view(node: Node) -> dict[str, Any]:
    return {"node": node, "rows": _rows(node.children), "variants": [(v, _rows(v.children)) for v in node.variants]}


def _rules(root: Node) -> list[tuple[str, Any]]:
    """(where, rule) of every conditional rule, in document order."""
    out: list[tuple[str, Any]] = [("the top level", r) for r in root.rules]
    for node in walk(root):
        out += [(code(node.path), r) for r in node.rules]
        for v in node.variants:
            out += [(f"{code(node.path)} ({v.label})", r) for r in v.rules]
    return out


def kind_page(
    ctx: SiteContext,
    version: str,
    kind: str,
    root: Node,
    since: dict[tuple[str, str], str],
    examples: dict[str, list[str]],
) -> str:
    """The reference page of one version and kind."""
    doc = ctx.registry.schema(version, kind)
    page = reference_page(version, kind)
    ordered = ctx.registry.ordered
    i = ordered.index(version)
    fields = list(walk(root))
    previous = ordered[i - 1] if i > 0 else None
    following = ordered[i + 1] if i + 1 < len(ordered) else None
    example = skeleton(doc, str(doc.get("version", version)))
    real = (examples.get(version) or []) if kind == EVAL else []
    sections = [_section_view(n) for n in _sections(root.children)]
    if root.variants:
        sections.append(_section_view(root))
    return render(
        "reference/kind.md.j2",
        page=page,
        title=KIND_TITLES[kind],
        version=version,
        kind=kind,
        doc=doc,
        schema_link=ctx.repo_link(f"schemas/{version}/{kind}.schema.json"),
        fields=len(fields),
        required=sum(1 for n in fields if n.is_required),
        current=version == ctx.registry.current,
        previous=previous,
        changes_from=changes_page(previous, version) if previous else "",
        next=following,
        next_page=reference_page(following, kind) if following else "",
        changes_to=changes_page(version, following) if following else "",
        closed=root.closed,
        top_rows=_rows(root.children),
        since=since,
        sections=sections,
        rules=_rules(root),
        errors=[e.message for e in ctx.registry.validator(version, kind).iter_errors(example)],
        example=json.dumps(example, indent=2, ensure_ascii=False),
        examples=[(u, p) for u in real if (p := ctx.record_page(u))],
    )


def version_page(ctx: SiteContext, version: str, all_trees: dict[tuple[str, str], Node], records: int) -> str:
    """The overview of one released version."""
    ordered = ctx.registry.ordered
    i = ordered.index(version)
    previous = ordered[i - 1] if i > 0 else None
    following = ordered[i + 1] if i + 1 < len(ordered) else None
    return render(
        "reference/version.md.j2",
        page=f"reference/{version}/index.md",
        version=version,
        current=version == ctx.registry.current,
        kinds=[
            (KIND_TITLES[k], reference_page(version, k), sum(1 for _ in walk(all_trees[(version, k)])))
            for k in (EVAL, INSTANCE)
        ],
        previous=previous,
        changes_from=changes_page(previous, version) if previous else "",
        next=following,
        changes_to=changes_page(version, following) if following else "",
        records=records,
    )


def index_page(ctx: SiteContext, all_trees: dict[tuple[str, str], Node], records: dict[str, int]) -> str:
    """The schema reference's front page."""
    ordered = ctx.registry.ordered
    versions = []
    for j in reversed(range(len(ordered))):
        version = ordered[j]
        prev = ordered[j - 1] if j > 0 else None
        versions.append(
            {
                "version": version,
                "page": f"reference/{version}/index.md",
                "eval_fields": sum(1 for _ in walk(all_trees[(version, EVAL)])),
                "eval_page": reference_page(version, EVAL),
                "instance_fields": sum(1 for _ in walk(all_trees[(version, INSTANCE)])),
                "instance_page": reference_page(version, INSTANCE),
                "previous": prev,
                "changes": changes_page(prev, version) if prev else "",
                "records": records.get(version, 0),
            }
        )
    return render("reference/index.md.j2", page="reference/index.md", current=ctx.registry.current, versions=versions)
