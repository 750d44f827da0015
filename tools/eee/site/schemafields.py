"""A JSON Schema as a tree of documented fields.

Every field gets its full path (``model_info.inference_engine.version``; array items as
``evaluation_results[].metric_config.metric_id``), its type, whether it is required (always,
never, or under a condition of an ``if``/``then``/``else`` rule), its constraints (enum,
const, pattern, bounds, item counts, whether other fields are allowed), its default and its
description. ``$ref`` targets are expanded in place; ``oneOf``/``anyOf`` alternatives that
are objects become *variants* (the URL, Hugging Face and other sources of ``source_data``),
each with its own fields; alternatives that are plain values become a union type.

Each field also has a *key*: its path with the variant in braces
(``evaluation_results[].source_data{hf_dataset}.hf_repo``), unique within a schema and
stable across versions, which the what-changed pages compare.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from eee.site.conditions import Condition, parse_if
from eee.site.mdtext import code, value

MISSING: Any = object()

# display names of the source variants, by the value of their discriminating constant
VARIANT_LABELS = {"url": "URL", "hf_dataset": "Hugging Face dataset", "other": "Other"}
_SCALAR_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_SAID = {
    "minimum": "minimum",
    "maximum": "maximum",
    "exclusiveMinimum": "greater than",
    "exclusiveMaximum": "less than",
    "multipleOf": "multiple of",
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "minItems": "at least {} item(s)",
    "maxItems": "at most {} item(s)",
    "minProperties": "at least {} field(s)",
    "maxProperties": "at most {} field(s)",
}


@dataclass
class Effect:
    """What a rule's ``then`` does to a field below the object that declares the rule."""

    rel: tuple[str, ...]
    kind: str  # "required" or "constraint"
    text: str
    condition: Condition


@dataclass
class Rule:
    """One ``if``/``then`` (or ``else``) rule of an object, in words."""

    condition: Condition
    effects: list[str]


@dataclass
class Variant:
    """One object alternative of a ``oneOf``/``anyOf``."""

    key: str
    label: str
    discriminator: tuple[str, Any] | None
    description: str
    children: list[Node] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    closed: bool = False


@dataclass
class Node:
    """One field of a schema (the root node is the record itself, with an empty path)."""

    name: str
    path: str
    key: str
    depth: int
    type: str = "any"
    required: str = "no"
    constraints: list[str] = field(default_factory=list)
    default: Any = MISSING
    description: str = ""
    variant: str | None = None
    children: list[Node] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    closed: bool = False  # additionalProperties: false

    @property
    def is_required(self) -> bool:
        return self.required == "yes"

    def constraint_text(self) -> str:
        """The field's constraints and default as one line ("" when it has none)."""
        parts = list(self.constraints)
        if self.default is not MISSING:
            parts.append(f"default {value(self.default)}")
        return "; ".join(parts)


class SchemaDoc:
    """Resolves ``$ref`` pointers within one schema document."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    def pointer(self, ref: str) -> dict[str, Any]:
        if not ref.startswith("#"):
            return {"description": f"(external reference {ref})"}
        node: Any = self.doc
        for part in ref[1:].split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node.get(part, {})
        return node if isinstance(node, dict) else {}

    def resolve(self, schema: Any) -> tuple[dict[str, Any], list[str]]:
        """The schema with its ``$ref`` chain merged in (local keywords win), and the refs."""
        if not isinstance(schema, dict):
            return ({} if schema is True else {"not": {}}), []
        refs: list[str] = []
        out = dict(schema)
        while "$ref" in out and out["$ref"] not in refs:
            ref = out.pop("$ref")
            refs.append(ref)
            out = {**self.pointer(ref), **out}
        out.pop("$ref", None)
        return out, refs


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def _is_object_variant(s: dict[str, Any]) -> bool:
    return bool(s.get("properties")) or s.get("type") == "object"


def object_rules(
    sd: SchemaDoc, obj: dict[str, Any], required: frozenset[str] | None = None
) -> list[tuple[Condition, dict[str, Any]]]:
    """(condition, then-schema) pairs of an object's if/then/else and allOf rules."""
    if required is None:
        required = frozenset(obj.get("required") or [])
    out: list[tuple[Condition, dict[str, Any]]] = []

    def add(s: dict[str, Any], base: Condition | None) -> None:
        if "if" not in s:
            return
        cond = parse_if(sd.resolve(s["if"])[0], required)
        full = base.both(cond) if base else cond
        then = sd.resolve(s.get("then", {}))[0]
        if then:
            out.append((full, then))
        other = sd.resolve(s["else"])[0] if "else" in s else None
        if other is not None:
            neg = cond.negate()
            neg = base.both(neg) if base else neg
            if "if" in other:
                add(other, neg)
            rest = {k: v for k, v in other.items() if k not in ("if", "then", "else")}
            if rest:
                out.append((neg, rest))

    add(obj, None)
    for sub in obj.get("allOf") or []:
        s, _ = sd.resolve(sub)
        if "if" in s:
            add(s, None)
        elif s:
            out.append((Condition(), s))
    return out


class _Builder:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.sd = SchemaDoc(doc)

    # --- types and constraints ---------------------------------------------------------

    def type_text(self, schema: Any, depth: int = 0) -> str:
        s, _ = self.sd.resolve(schema)
        if depth > 4:
            return "any"
        types = s.get("type")
        if isinstance(types, str):
            types = [types]
        alts = s.get("oneOf") or s.get("anyOf")
        if types:
            parts = [self._single(t, s, depth) for t in types]
        elif alts:
            resolved = [self.sd.resolve(a)[0] for a in alts]
            if any(_is_object_variant(r) for r in resolved):
                parts = ["object"]
            else:
                parts = []
                for r in resolved:
                    t = self.type_text(r, depth + 1)
                    if t not in parts:
                        parts.append(t)
        elif "const" in s:
            parts = [_json_type(s["const"])]
        elif "enum" in s:
            parts = list(dict.fromkeys(_json_type(v) for v in s["enum"]))
        elif s.get("properties"):
            parts = ["object"]
        else:
            parts = ["any"]
        return " | ".join(parts)

    def _single(self, t: str, s: dict[str, Any], depth: int) -> str:
        if t == "array":
            items = s.get("items")
            return f"array of {self.type_text(items, depth + 1)}" if isinstance(items, dict) else "array"
        if t == "object":
            extra = s.get("additionalProperties")
            if isinstance(extra, dict):
                return f"object ({self.type_text(extra, depth + 1)} values)"
        return t

    def constraints(self, s: dict[str, Any]) -> list[str]:
        out: list[str] = []
        if "const" in s:
            out.append(f"always {value(s['const'])}")
        if "enum" in s:
            out.append("one of " + ", ".join(value(v) for v in s["enum"]))
        if "pattern" in s:
            out.append(f"pattern {code(s['pattern'])}")
        if "format" in s:
            out.append(f"format {code(s['format'])}")
        for key in _SCALAR_KEYS:
            if key in s:
                out.append(f"{_SAID[key]} {value(s[key])}")
        for key in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
            if key in s:
                out.append(_SAID[key].format(s[key]))
        if s.get("uniqueItems"):
            out.append("items are unique")
        if s.get("additionalProperties") is False:
            out.append("no other fields")
        if "propertyNames" in s:
            out.append(f"keys: {code(json.dumps(s['propertyNames']))}")
        if "patternProperties" in s:
            out.append(f"keys matching {', '.join(code(p) for p in s['patternProperties'])}")
        if "not" in s:
            out.append(f"must not match {code(json.dumps(s['not']))}")
        items = s.get("items")
        if isinstance(items, dict):
            item, _ = self.sd.resolve(items)
            if not item.get("properties"):
                out += [f"each item: {c}" for c in self.constraints(item)]
        alts = s.get("oneOf") or s.get("anyOf")
        if alts:
            resolved = [self.sd.resolve(a)[0] for a in alts]
            if not any(_is_object_variant(r) for r in resolved):
                for r in resolved:
                    inner = self.constraints(r)
                    if inner:
                        out.append(f"as {self.type_text(r)}: {'; '.join(inner)}")
        return out

    # --- rules -------------------------------------------------------------------------

    def effects(self, then: dict[str, Any], cond: Condition, prefix: tuple[str, ...] = ()) -> list[Effect]:
        out: list[Effect] = []
        for name in then.get("required") or []:
            out.append(Effect((*prefix, name), "required", f"{code('.'.join((*prefix, name)))} is required", cond))
        for name, sub in (then.get("properties") or {}).items():
            s, _ = self.sd.resolve(sub)
            rel = (*prefix, name)
            shown = code(".".join(rel))
            if "type" in s:
                out.append(Effect(rel, "constraint", f"{shown} must be {self.type_text({'type': s['type']})}", cond))
            for c in self.constraints({k: v for k, v in s.items() if k not in ("type", "required", "properties")}):
                out.append(Effect(rel, "constraint", f"{shown}: {c}", cond))
            if s.get("required") or s.get("properties"):
                out += self.effects(s, cond, rel)
        for key, sub in then.items():
            if key not in ("required", "properties", "description"):
                out.append(Effect(prefix, "constraint", f"{code(json.dumps({key: sub}))}", cond))
        return out

    # --- the tree ----------------------------------------------------------------------

    def node(
        self,
        name: str,
        schema: Any,
        path: str,
        key: str,
        depth: int,
        required: str,
        variant: str | None,
        inherited: list[Effect],
        refs: tuple[str, ...],
    ) -> Node:
        s, new_refs = self.sd.resolve(schema)
        node = Node(
            name=name,
            path=path,
            key=key,
            depth=depth,
            type=self.type_text(s),
            required=required,
            constraints=self.constraints(s),
            default=s.get("default", MISSING),
            description=str(s.get("description", "")),
            variant=variant,
        )
        for e in inherited:
            if e.rel == () and e.kind == "constraint":
                node.constraints.append(f"when {e.condition.text()}: {e.text}")
        if any(r in refs for r in new_refs):
            node.constraints.append("recursive: see the enclosing field")
            return node
        refs = refs + tuple(new_refs)
        obj, prefix_path, prefix_key = s, path, key
        items = s.get("items")
        if isinstance(items, dict):
            obj, more = self.sd.resolve(items)
            refs += tuple(new for new in more if new not in refs)
            prefix_path, prefix_key = f"{path}[]", f"{key}[]"
        deeper = [Effect(e.rel, e.kind, e.text, e.condition) for e in inherited if e.rel]
        node.children, node.rules, node.closed = self.fields(obj, prefix_path, prefix_key, depth, variant, deeper, refs)
        alts = obj.get("oneOf") or obj.get("anyOf")
        if alts:
            resolved = [self.sd.resolve(a) for a in alts]
            if any(_is_object_variant(r) for r, _ in resolved):
                node.variants = [
                    self.variant(i, r, rr, prefix_path, prefix_key, depth, refs) for i, (r, rr) in enumerate(resolved)
                ]
                labels = ", ".join(v.label for v in node.variants)
                node.type = node.type.replace("object", f"object, one of: {labels}", 1)
        return node

    def variant(
        self,
        i: int,
        s: dict[str, Any],
        refs: list[str],
        path: str,
        key: str,
        depth: int,
        outer: tuple[str, ...],
    ) -> Variant:
        disc = next(
            (
                (p, sub["const"])
                for p, sub in (s.get("properties") or {}).items()
                if isinstance(sub, dict) and "const" in sub
            ),
            None,
        )
        ref_name = refs[-1].rsplit("/", 1)[-1] if refs else None
        vkey = str(disc[1]) if disc else (ref_name or str(i + 1))
        label = VARIANT_LABELS.get(vkey) or s.get("title") or vkey
        v = Variant(vkey, str(label), disc, str(s.get("description", "")))
        v.children, v.rules, v.closed = self.fields(
            s, path, f"{key}{{{vkey}}}", depth, v.label, [], outer + tuple(refs)
        )
        return v

    def fields(
        self,
        obj: dict[str, Any],
        path: str,
        key: str,
        depth: int,
        variant: str | None,
        inherited: list[Effect],
        refs: tuple[str, ...],
    ) -> tuple[list[Node], list[Rule], bool]:
        props = obj.get("properties") or {}
        required = frozenset(obj.get("required") or [])
        effects = list(inherited)
        rules: list[Rule] = []
        for cond, then in object_rules(self.sd, obj, required):
            found = self.effects(then, cond)
            effects += found
            rules.append(Rule(cond, [e.text for e in found]))
        children = []
        for name, sub in props.items():
            conds = [e.condition.text() for e in effects if e.rel == (name,) and e.kind == "required"]
            req = "yes" if name in required else ("when " + ", or when ".join(dict.fromkeys(conds)) if conds else "no")
            mine = [Effect(e.rel[1:], e.kind, e.text, e.condition) for e in effects if e.rel and e.rel[0] == name]
            children.append(
                self.node(
                    name,
                    sub,
                    f"{path}.{name}" if path else name,
                    f"{key}.{name}" if key else name,
                    depth + 1,
                    req,
                    variant,
                    mine,
                    refs,
                )
            )
        return children, rules, obj.get("additionalProperties") is False


def build(doc: dict[str, Any]) -> Node:
    """The field tree of a schema document (the root stands for the whole record)."""
    b = _Builder(doc)
    root = Node(name="", path="", key="", depth=0, type="object", description=str(doc.get("description", "")))
    root.children, root.rules, root.closed = b.fields(doc, "", "", 0, None, [], ())
    root.constraints = b.constraints({k: v for k, v in doc.items() if k == "additionalProperties"})
    return root


def walk(node: Node) -> Iterator[Node]:
    """Every field below ``node`` in document order (variants' fields after the field)."""
    for child in node.children:
        yield child
        yield from walk(child)
    for v in node.variants:
        for grand in v.children:
            yield grand
            yield from walk(grand)


def by_key(root: Node) -> dict[str, Node]:
    return {n.key: n for n in walk(root)}
