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

from eee.schemas import EVAL, INSTANCE, KINDS
from eee.site.context import KIND_TITLES, SiteContext, changes_page, reference_page
from eee.site.mdtext import anchor, breakable, code, fence, relative, table, value
from eee.site.schemafields import Node, Variant, build, walk
from eee.site.skeleton import skeleton

HEADERS = ["Field", "Type", "Required", "Since", "Constraints", "Description"]
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


def _field_cell(node: Node, self_anchor: bool) -> str:
    target = anchor(node.key)
    shown = breakable(node.path)
    if self_anchor:
        return f"[{shown}](#{target}){{ #{target} }}"
    return f"[{shown}](#{target}) (section)"


def _required(node: Node) -> str:
    return "**yes**" if node.required == "yes" else node.required


def _row(node: Node, kind: str, since: dict[tuple[str, str], str], self_anchor: bool) -> list[str]:
    return [
        _field_cell(node, self_anchor),
        code(node.type),
        _required(node),
        since.get((kind, node.key), ""),
        node.constraint_text(),
        node.description,
    ]


def _rows(nodes: Iterable[Node], kind: str, since: dict[tuple[str, str], str]) -> list[list[str]]:
    """Rows of ``nodes`` and everything below them that is not a section of its own."""
    rows: list[list[str]] = []
    for node in nodes:
        section = _is_section(node)
        rows.append(_row(node, kind, since, self_anchor=not section))
        if section:
            continue
        rows += _rows(node.children, kind, since)
        for v in node.variants:
            rows += _rows(v.children, kind, since)
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


def _variant_tab(v: Variant, kind: str, since: dict[tuple[str, str], str]) -> str:
    lines = [v.description] if v.description else []
    if v.discriminator:
        lines.append(f"Chosen when {code(v.discriminator[0])} is {value(v.discriminator[1])}.")
    if v.closed:
        lines.append("No other fields are allowed.")
    body = "\n\n".join(lines) + "\n\n" + table(HEADERS, _rows(v.children, kind, since))
    indented = "\n".join(("    " + line) if line else "" for line in body.splitlines())
    return f'=== "{v.label}"\n\n{indented}\n'


def _section(node: Node, kind: str, since: dict[tuple[str, str], str]) -> str:
    level = "#" * min(node.depth + 1, 4)
    out = [f"{level} {code(node.path)} {{ #{anchor(node.key)} }}\n"]
    facts = [f"Type {code(node.type)}", f"required: {_required(node)}"]
    if since.get((kind, node.key)):
        facts.append(f"since {since[(kind, node.key)]}")
    if node.constraint_text():
        facts.append(node.constraint_text())
    out.append(" · ".join(facts) + "\n")
    if node.description:
        out.append(node.description + "\n")
    if node.children:
        out.append(table(HEADERS, _rows(node.children, kind, since)))
    if node.variants:
        out.append(f"{code(node.path)} is one of {len(node.variants)} variants:\n")
        out += [_variant_tab(v, kind, since) for v in node.variants]
    return "\n".join(out)


def _rules(root: Node) -> list[str]:
    out: list[str] = []

    def visit(where: str, rules: list[Any]) -> None:
        for rule in rules:
            said = "; ".join(rule.effects) or "no further requirement"
            out.append(f"- On {where}: when {rule.condition.text()}, {said}.")

    visit("the top level", root.rules)
    for node in walk(root):
        visit(code(node.path), node.rules)
        for v in node.variants:
            visit(f"{code(node.path)} ({v.label})", v.rules)
    return out


def _example(ctx: SiteContext, version: str, kind: str, examples: dict[str, list[str]], page: str) -> str:
    doc = ctx.registry.schema(version, kind)
    example = skeleton(doc, str(doc.get("version", version)))
    errors = [e.message for e in ctx.registry.validator(version, kind).iter_errors(example)]
    lines = [
        "## Example { #example-record }\n",
        "A minimal example, made from the schema at build time: every required field and "
        "nothing else, with the field's constant, default or first allowed value, or a "
        "placeholder in angle brackets.\n",
    ]
    if errors:
        lines.append(f'!!! failure "The example does not validate"\n    {errors[0]}\n')
    else:
        lines.append(f"It validates under schema {version}.\n")
    lines.append(fence(json.dumps(example, indent=2, ensure_ascii=False), "json"))
    if kind == EVAL:
        real = examples.get(version) or []
        links = [f"[{code(u[:8])}]({relative(p, page)})" for u in real if (p := ctx.record_page(u))]
        if links:
            lines.append(f"Records of the store written under {version}: {', '.join(links)}.\n")
    return "\n".join(lines)


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
    rel = f"schemas/{version}/{kind}.schema.json"
    link = ctx.repo_link(rel)
    facts = [
        ["Schema file", f"[{code(rel)}]({link})" if link else code(rel)],
        ["Title", str(doc.get("title", ""))],
        ["A document declares", f"`schema_version`: {code(doc.get('version', version))}"],
        ["Fields", f"{len(fields)} ({sum(1 for n in fields if n.is_required)} always required)"],
        ["Status", "the current version" if version == ctx.registry.current else "released"],
    ]
    if i > 0:
        facts.append(
            [
                "What changed",
                f"[from {ordered[i - 1]}]({relative(changes_page(ordered[i - 1], version) + '#' + kind, page)})",
            ]
        )
    if i + 1 < len(ordered):
        facts.append(
            [
                "Next version",
                f"[{ordered[i + 1]}]({relative(reference_page(ordered[i + 1], kind), page)}) "
                f"([what changes]({relative(changes_page(version, ordered[i + 1]) + '#' + kind, page)}))",
            ]
        )
    out = [
        f"# {KIND_TITLES[kind]}, schema {version}\n",
        (doc.get("description") or "") + "\n",
        "".join(f"- **{k}:** {v}\n" for k, v in facts),
        '!!! tip "Reading this page"\n'
        "    `a.b` is field `b` of object `a`; `a[]` is each item of array `a`. *Required* says "
        "whether the field must be there when its parent is (some fields are required only "
        "under a condition, spelled out). *Since* is the first released version that has the "
        "field. Click a field to link to it.\n",
        "## Top-level fields { #top-level-fields }\n",
    ]
    if root.closed:
        out.append("No other top-level fields are allowed.\n")
    out.append(table(HEADERS, _rows(root.children, kind, since)))
    out += [_section(node, kind, since) for node in _sections(root.children)]
    if root.variants:
        out.append(_section(root, kind, since))
    rules = _rules(root)
    if rules:
        out.append("## Conditional rules { #conditional-rules }\n")
        out.append("\n".join(rules) + "\n")
    out.append(_example(ctx, version, kind, examples, page))
    return "\n".join(out)


def version_page(ctx: SiteContext, version: str, all_trees: dict[tuple[str, str], Node], records: int) -> str:
    """The overview of one released version."""
    page = f"reference/{version}/index.md"
    ordered = ctx.registry.ordered
    i = ordered.index(version)
    current = " (current)" if version == ctx.registry.current else ""
    out = [f"# Schema {version}{current}\n"]
    rows = []
    for kind in (EVAL, INSTANCE):
        n = sum(1 for _ in walk(all_trees[(version, kind)]))
        rows.append([f"[{KIND_TITLES[kind]}]({relative(reference_page(version, kind), page)})", str(n)])
    out.append(table(["Record kind", "Fields"], rows))
    if i > 0:
        out.append(
            f"- What changed from {ordered[i - 1]}: [{ordered[i - 1]} → {version}]"
            f"({relative(changes_page(ordered[i - 1], version), page)})"
        )
    if i + 1 < len(ordered):
        out.append(
            f"- What changes in {ordered[i + 1]}: [{version} → {ordered[i + 1]}]"
            f"({relative(changes_page(version, ordered[i + 1]), page)})"
        )
    out.append(f"- Records in the store that declare {version}: {records:,}\n")
    return "\n".join(out) + "\n"


def index_page(ctx: SiteContext, all_trees: dict[tuple[str, str], Node], records: dict[str, int]) -> str:
    """The schema reference's front page."""
    page = "reference/index.md"
    ordered = ctx.registry.ordered
    rows = []
    for i, version in enumerate(reversed(ordered)):
        j = len(ordered) - 1 - i
        prev = ordered[j - 1] if j > 0 else None
        rows.append(
            [
                f"[{version}]({relative(f'reference/{version}/index.md', page)})"
                + (" (current)" if version == ctx.registry.current else ""),
                f"[{sum(1 for _ in walk(all_trees[(version, EVAL)]))} fields]"
                f"({relative(reference_page(version, EVAL), page)})",
                f"[{sum(1 for _ in walk(all_trees[(version, INSTANCE)]))} fields]"
                f"({relative(reference_page(version, INSTANCE), page)})",
                f"[from {prev}]({relative(changes_page(prev, version), page)})" if prev else "first release",
                f"{records.get(version, 0):,}",
            ]
        )
    return "\n".join(
        [
            "# Schema reference\n",
            "Every released version of the two record kinds, generated from the schema files "
            "in `schemas/` each time the site is built: the **aggregate record** (one JSON "
            "file per evaluation run, `eval.schema.json`) and the **instance-level row** (one "
            "line of a per-sample sidecar, `instance_level_eval.schema.json`).\n",
            "A record is validated under the version it declares in `schema_version`, and stays "
            "valid under it forever: released schema files never change (their sha256 is pinned "
            "in `schemas/registry.json`). Readers who want one shape load any record as the "
            f"current version ({ctx.registry.current}) through the "
            f"[migration steps]({relative('reference/migrations.md', page)}).\n",
            table(["Version", "Aggregate record", "Instance-level row", "What changed", "Records in the store"], rows),
            "How a new version is proposed, decided and released: the "
            f"[governance card]({relative('governance/README.md', page)}#schema-changes-three-stages).\n",
        ]
    )
