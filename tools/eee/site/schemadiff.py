"""What changed between two released versions, from the two schema files, and the
migration step that bridges them (its own docstring, from the released steps)."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import eee.migrate
from eee.migrate.steps import step_from
from eee.schemas import KINDS
from eee.site.context import KIND_TITLES, SiteContext, changes_page, reference_page, step_name
from eee.site.mdtext import anchor, code, relative, table
from eee.site.schemafields import Node, by_key

_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")
_DOUBLE = re.compile(r"``(.+?)``", re.S)


@dataclass
class KindChanges:
    """The field differences of one record kind between two versions."""

    added: list[Node] = field(default_factory=list)
    removed: list[Node] = field(default_factory=list)
    retyped: list[tuple[Node, Node]] = field(default_factory=list)
    newly_required: list[tuple[Node | None, Node]] = field(default_factory=list)
    no_longer_required: list[tuple[Node, Node]] = field(default_factory=list)
    requirement_changed: list[tuple[Node, Node]] = field(default_factory=list)
    constrained: list[tuple[Node, Node]] = field(default_factory=list)


def _parent_key(key: str) -> str:
    head = key.rsplit(".", 1)[0] if "." in key else ""
    return re.sub(r"(\{[^}]*\}|\[\])+$", "", head)


def _limits(node: Node) -> tuple[list[str], Any]:
    return node.constraints, node.default


def compare(old: Node, new: Node) -> KindChanges:
    """The differences between two field trees of the same kind."""
    before, after = by_key(old), by_key(new)
    out = KindChanges()
    for key, node in after.items():
        was = before.get(key)
        if was is None:
            out.added.append(node)
            if node.is_required and (_parent_key(key) == "" or _parent_key(key) in before):
                out.newly_required.append((None, node))
            continue
        if was.type != node.type:
            out.retyped.append((was, node))
        if was.required != node.required:
            if was.required == "no":
                out.newly_required.append((was, node))
            elif node.required == "no":
                out.no_longer_required.append((was, node))
            else:
                out.requirement_changed.append((was, node))
        if _limits(was) != _limits(node):
            out.constrained.append((was, node))
    out.removed = [node for key, node in before.items() if key not in after]
    return out


def _field(node: Node, version: str, kind: str, page: str) -> str:
    suffix = f" ({node.variant})" if node.variant else ""
    target = relative(f"{reference_page(version, kind)}#{anchor(node.key)}", page)
    return f"[{code(node.path)}]({target}){suffix}"


def _req(node: Node | None) -> str:
    if node is None:
        return "absent"
    return "required" if node.required == "yes" else ("optional" if node.required == "no" else node.required)


def step_doc(kind: str, source: str, target: str) -> str | None:
    """The docstring of the released migration step ``source`` -> ``target`` for ``kind``,
    as Markdown, or None when :data:`eee.migrate.steps.STEPS` has no such step."""
    step = step_from(kind, source)
    if step is None or step.target != target:
        return None
    doc = inspect.getdoc(step.func)
    return rst_to_md(doc) if doc else None


def rst_to_md(text: str) -> str:
    """The docstring conventions of this code base (``code``, :role:`x`) as Markdown."""
    text = _ROLE.sub(lambda m: code(m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2)), text)
    return _DOUBLE.sub(lambda m: code(" ".join(m.group(1).split())), text)


def _kind_section(ctx: SiteContext, source: str, target: str, kind: str, ch: KindChanges, page: str) -> str:
    old_doc, new_doc = ctx.registry.schema(source, kind), ctx.registry.schema(target, kind)
    out = [f"## {KIND_TITLES[kind]} {{ #{kind} }}\n"]
    out.append(
        f"[{source} reference]({relative(reference_page(source, kind), page)}) → "
        f"[{target} reference]({relative(reference_page(target, kind), page)}). "
        f"Documents declare {code(old_doc.get('version', source))} before and "
        f"{code(new_doc.get('version', target))} after.\n"
    )
    counts = [
        f"{len(ch.added)} added",
        f"{len(ch.removed)} removed",
        f"{len(ch.retyped)} retyped",
        f"{len(ch.newly_required)} newly required",
        f"{len(ch.no_longer_required)} no longer required",
        f"{len(ch.requirement_changed)} with another condition",
        f"{len(ch.constrained)} with other constraints",
    ]
    said = [c for c in counts if not c.startswith("0 ")]
    out.append(("Fields: " + ", ".join(said) + "." if said else "No field changed.") + "\n")
    sid = kind.replace("_", "-")

    def part(title: str, suffix: str, headers: list[str], rows: list[list[str]]) -> None:
        if rows:
            out.append(f"### {title} {{ #{sid}-{suffix} }}\n")
            out.append(table(headers, rows))

    part(
        "Fields added",
        "added",
        ["Field", "Type", "Required", "Description"],
        [[_field(n, target, kind, page), code(n.type), _req(n), n.description] for n in ch.added],
    )
    part(
        "Fields removed",
        "removed",
        ["Field", "Type", "Required"],
        [[_field(n, source, kind, page), code(n.type), _req(n)] for n in ch.removed],
    )
    part(
        "Fields retyped",
        "retyped",
        ["Field", f"Type in {source}", f"Type in {target}"],
        [[_field(b, target, kind, page), code(a.type), code(b.type)] for a, b in ch.retyped],
    )
    for title, suffix, pairs in (
        ("Newly required", "newly-required", ch.newly_required),
        ("No longer required", "no-longer-required", ch.no_longer_required),
        ("Required under another condition", "condition-changed", ch.requirement_changed),
    ):
        part(
            title,
            suffix,
            ["Field", f"In {source}", f"In {target}"],
            [[_field(b, target, kind, page), _req(a), _req(b)] for a, b in pairs],
        )
    part(
        "Other constraints changed",
        "constraints",
        ["Field", f"In {source}", f"In {target}"],
        [
            [_field(b, target, kind, page), a.constraint_text() or "none", b.constraint_text() or "none"]
            for a, b in ch.constrained
        ],
    )
    name = step_name(kind, source, target)
    out.append(f"### Migration step {code(name)} {{ #{name} }}\n")
    doc = step_doc(kind, source, target)
    if doc:
        out.append(
            f"What `eee migrate` and `eee.load_record(..., as_version=...)` do to a {source} "
            f"document (the step's own description, from {code('tools/eee/migrate/steps.py')}):\n"
        )
        out.append(doc + "\n")
    else:
        out.append(
            f'!!! warning "No migration step found"\n    This checkout has no released step {code(name)} in '
            f"{code('eee.migrate.steps.STEPS')}; documents of {source} cannot be read as {target} until it exists "
            "(see the schema-change checklist).\n"
        )
    return "\n".join(out)


def changes_markdown(ctx: SiteContext, source: str, target: str, trees: dict[tuple[str, str], Node]) -> str:
    """The what-changed page of one version step, both kinds."""
    page = changes_page(source, target)
    out = [
        f"# What changed: {source} → {target}\n",
        f"Generated from `schemas/{source}/` and `schemas/{target}/` when the site was built: "
        "fields added, removed, retyped, newly required or otherwise constrained, compared by "
        "full path (descriptions are not compared). Each part ends with the migration step "
        f"that reads a {source} document as {target}.\n",
    ]
    for kind in KINDS:
        ch = compare(trees[(source, kind)], trees[(target, kind)])
        out.append(_kind_section(ctx, source, target, kind, ch, page))
    return "\n".join(out)


def migrations_markdown(ctx: SiteContext) -> str:
    """The overview of every migration step, linking to each step's description."""
    page = "reference/migrations.md"
    ordered = ctx.registry.ordered
    out = ["# Migration steps\n"]
    intro = inspect.getdoc(eee.migrate)
    if intro:
        out.append("From the package's own description (`eee.migrate`):\n")
        out.append(rst_to_md(intro) + "\n")
    rows = []
    for source, target in pairwise(ordered):
        for kind in KINDS:
            name = step_name(kind, source, target)
            found = step_doc(kind, source, target) is not None
            link = relative(f"{changes_page(source, target)}#{name}", page)
            rows.append(
                [
                    f"[{code(name)}]({link})",
                    KIND_TITLES[kind],
                    source,
                    target,
                    "yes" if found else "**missing**",
                ]
            )
    out.append("## Steps { #steps }\n")
    out.append(table(["Step", "Record kind", "From", "To", "In this checkout"], rows))
    return "\n".join(out)
