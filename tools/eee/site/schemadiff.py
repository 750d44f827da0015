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
from eee.site.context import KIND_TITLES, SiteContext, changes_page, reference_page, step_name
from eee.site.mdtext import code
from eee.site.render import render
from eee.site.schemafields import Node, by_key
from eee.store.schemas import KINDS

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


def changes_markdown(ctx: SiteContext, source: str, target: str, trees: dict[tuple[str, str], Node]) -> str:
    """The what-changed page of one version step, both kinds."""
    kinds = []
    for kind in KINDS:
        kinds.append(
            {
                "kind": kind,
                "title": KIND_TITLES[kind],
                "changes": compare(trees[(source, kind)], trees[(target, kind)]),
                "declared_before": ctx.registry.schema(source, kind).get("version", source),
                "declared_after": ctx.registry.schema(target, kind).get("version", target),
                "step": step_name(kind, source, target),
                "doc": step_doc(kind, source, target),
            }
        )
    return render(
        "reference/changes.md.j2",
        page=changes_page(source, target),
        source=source,
        target=target,
        kinds=kinds,
        ref_page=reference_page,
    )


def migrations_markdown(ctx: SiteContext) -> str:
    """The overview of every migration step, linking to each step's description."""
    intro = inspect.getdoc(eee.migrate)
    steps = [
        {
            "name": step_name(kind, source, target),
            "title": KIND_TITLES[kind],
            "source": source,
            "target": target,
            "page": changes_page(source, target),
            "found": step_doc(kind, source, target) is not None,
        }
        for source, target in pairwise(ctx.registry.ordered)
        for kind in KINDS
    ]
    return render(
        "reference/migrations.md.j2",
        page="reference/migrations.md",
        intro=rst_to_md(intro) if intro else "",
        steps=steps,
    )
