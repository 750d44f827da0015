"""A minimal example document of a schema: every required field, nothing else.

Values are the field's constant, its default, its first allowed value, or a placeholder of
its type (``"<evaluation_id>"``, 0, false); an array holds one item. Rules of ``if``/``then``
are applied, so the example of an instance-level row carries ``output`` because its
``interaction_type`` is ``single_turn``. The site validates the example against the schema
and says whether it passes.
"""

from __future__ import annotations

from typing import Any

from eee.site.schemafields import SchemaDoc, object_rules


def skeleton(doc: dict[str, Any], version_value: str) -> Any:
    """The minimal example of ``doc``; ``schema_version`` is set to ``version_value``."""
    sd = SchemaDoc(doc)

    def make(schema: Any, name: str, depth: int) -> Any:
        s, _ = sd.resolve(schema)
        if depth > 12:
            return None
        if name == "schema_version" and depth == 1:
            return version_value
        if "const" in s:
            return s["const"]
        if "default" in s:
            return s["default"]
        if s.get("enum"):
            return s["enum"][0]
        alts = s.get("oneOf") or s.get("anyOf")
        types = s.get("type")
        if isinstance(types, list):
            types = next((t for t in types if t != "null"), types[0] if types else None)
        if not types and alts:
            return make(alts[0], name, depth)
        if types == "object" or (types is None and s.get("properties")):
            return make_object(s, depth)
        if types == "array":
            items = s.get("items") if isinstance(s.get("items"), dict) else {}
            return [make(items, name, depth + 1) for _ in range(max(int(s.get("minItems", 1)), 1))]
        if types in ("integer", "number"):
            low = s.get("minimum", s.get("exclusiveMinimum", 0))
            return low + (1 if "exclusiveMinimum" in s and "minimum" not in s else 0)
        if types == "boolean":
            return False
        if types == "null":
            return None
        return f"<{name or 'value'}>"

    def make_object(s: dict[str, Any], depth: int) -> dict[str, Any]:
        props = s.get("properties") or {}
        required = [p for p in s.get("required") or [] if p in props]
        out: dict[str, Any] = {}
        for p in props:
            if p in required:
                out[p] = make(props[p], p, depth + 1)
        for _ in range(3):  # rules may require fields that make other rules hold
            for cond, then in object_rules(sd, s):
                if cond.holds(out):
                    for p in then.get("required") or []:
                        if p in props and p not in out:
                            out[p] = make(props[p], p, depth + 1)
        return {p: out[p] for p in props if p in out}

    return make(doc, "", 0)
