"""Conditions of ``if``/``then``/``else`` rules, said in words.

A JSON Schema ``if`` such as ``{"properties": {"score_type": {"const": "levels"}}}`` holds
when the property has that value *or is absent* (``properties`` only looks at what is
there), unless the ``if`` or the object requires the property. The reference says exactly
that, because the difference matters: before 0.2.3 a metric without ``score_type`` had to
carry ``level_names``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from eee.site.mdtext import code


def _text(v: str) -> str:
    """A value (kept as JSON text) for display."""
    loaded = json.loads(v)
    return code(loaded if isinstance(loaded, str) else v)


def _meet(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(v for v in a if v in b)


def _join(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a + tuple(v for v in b if v not in a)


def _drop(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(v for v in a if v not in b)


@dataclass(frozen=True)
class PropTest:
    """What one property must be: within ``allowed`` (None: any value), not in
    ``excluded``, and may be absent when ``absent_ok``. Values are JSON texts, in the
    schema's order. ``present`` says the object requires the property anyway."""

    prop: str
    allowed: tuple[str, ...] | None
    excluded: tuple[str, ...]
    absent_ok: bool
    present: bool = False

    def negate(self) -> PropTest:
        absent_ok = not self.absent_ok and not self.present
        if self.allowed is None:
            return PropTest(self.prop, self.excluded, (), absent_ok, self.present)
        return PropTest(self.prop, None, self.allowed, absent_ok, self.present)

    def both(self, other: PropTest) -> PropTest:
        if self.allowed is None:
            allowed = other.allowed
        elif other.allowed is None:
            allowed = self.allowed
        else:
            allowed = _meet(self.allowed, other.allowed)
        excluded = _join(self.excluded, other.excluded)
        if allowed is not None:
            allowed, excluded = _drop(allowed, excluded), ()
        return PropTest(self.prop, allowed, excluded, self.absent_ok and other.absent_ok, self.present or other.present)

    def holds(self, doc: dict[str, Any]) -> bool:
        """Whether ``doc`` (an object) satisfies the test."""
        if self.prop not in doc:
            return self.absent_ok
        v = json.dumps(doc[self.prop], sort_keys=True)
        return (self.allowed is None or v in self.allowed) and v not in self.excluded

    def text(self) -> str | None:
        name = code(self.prop)
        if self.allowed is not None:
            vals = self.allowed
            if not vals:
                return f"{name} is absent" if self.absent_ok else "never"
            said = (
                f"{name} is {_text(vals[0])}" if len(vals) == 1 else f"{name} is one of {', '.join(map(_text, vals))}"
            )
            return said + (" or absent" if self.absent_ok else "")
        if self.excluded:
            vals = self.excluded
            said = f"not {_text(vals[0])}" if len(vals) == 1 else f"none of {', '.join(map(_text, vals))}"
            return f"{name} is absent or {said}" if self.absent_ok else f"{name} is {said}"
        return None if self.absent_ok else f"{name} is present"


@dataclass(frozen=True)
class Condition:
    """A conjunction of property tests, or (when the ``if`` says more than this module
    reads) the raw schema text."""

    tests: tuple[PropTest, ...] = ()
    raw: tuple[str, ...] = ()

    def both(self, other: Condition) -> Condition:
        merged: dict[str, PropTest] = {t.prop: t for t in self.tests}
        for t in other.tests:
            merged[t.prop] = merged[t.prop].both(t) if t.prop in merged else t
        return Condition(tuple(merged.values()), self.raw + other.raw)

    def negate(self) -> Condition:
        if len(self.tests) == 1 and not self.raw:
            return Condition((self.tests[0].negate(),))
        return Condition((), (f"not ({self.text()})",))

    def holds(self, doc: dict[str, Any]) -> bool | None:
        """Whether ``doc`` satisfies the condition (None when it cannot be told)."""
        if self.raw:
            return None
        return all(t.holds(doc) for t in self.tests)

    def text(self) -> str:
        parts = [t for t in (t.text() for t in self.tests) if t]
        parts += [code(r) if not r.startswith("not (") else r for r in self.raw]
        return " and ".join(parts) if parts else "always"


def parse_if(schema: Any, required: frozenset[str] = frozenset()) -> Condition:
    """The condition an ``if`` schema states, for an object that itself requires ``required``."""
    if not isinstance(schema, dict):
        return Condition((), (json.dumps(schema),))
    need = set(schema.get("required") or []) | set(required)
    tests: list[PropTest] = []
    raw: list[str] = []
    for prop, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict) and "const" in sub and set(sub) <= {"const", "type", "description"}:
            allowed: tuple[str, ...] = (json.dumps(sub["const"], sort_keys=True),)
        elif isinstance(sub, dict) and "enum" in sub and set(sub) <= {"enum", "type", "description"}:
            allowed = tuple(json.dumps(v, sort_keys=True) for v in sub["enum"])
        else:
            raw.append(json.dumps({"properties": {prop: sub}}))
            continue
        tests.append(PropTest(prop, allowed, (), prop not in need, prop in required))
    for prop in schema.get("required") or []:
        if prop not in (schema.get("properties") or {}):
            tests.append(PropTest(prop, None, (), False, prop in required))
    for key, sub in schema.items():
        if key not in ("properties", "required", "description", "type"):
            raw.append(json.dumps({key: sub}))
    return Condition(tuple(tests), tuple(raw))
