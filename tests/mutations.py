"""Deterministic mutations of JSON documents, for schema conformance tests.

Each mutation is one small change: a key removed (so every required field is removed
somewhere), an unexpected key added (top level and nested), a value replaced by one of
another JSON type, a string replaced by a value no enum holds, a number made negative or
huge, an array emptied or given an item of the wrong type, an object replaced by a string.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

Path = tuple[Any, ...]

_SAMPLES: list[Any] = ["text", 7, 2.5, True, None, [], {}, ["a"], {"k": "v"}]


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return type(value).__name__


def walk(node: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, (*path, i))


def _operations(doc: Any) -> list[tuple[str, Path]]:
    ops: list[tuple[str, Path]] = []
    for path, node in walk(doc):
        if isinstance(node, dict):
            ops.extend(("delete", (*path, key)) for key in node)
            ops.append(("extra_key", path))
        if path:
            ops.append(("retype", path))
        if isinstance(node, str):
            ops.append(("not_in_enum", path))
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            ops.append(("negative", path))
            ops.append(("fractional", path))
        if isinstance(node, list):
            ops.append(("empty_list", path))
            ops.append(("bad_item", path))
        if isinstance(node, dict) and path:
            ops.append(("object_to_string", path))
    return ops


def _parent(doc: Any, path: Path) -> tuple[Any, Any]:
    node = doc
    for part in path[:-1]:
        node = node[part]
    return node, path[-1]


def apply(doc: Any, op: str, path: Path, rng: random.Random) -> Any:
    out = copy.deepcopy(doc)
    if op == "extra_key":
        target = out
        for part in path:
            target = target[part]
        target["x_unexpected_field"] = "surprise"
        return out
    parent, key = _parent(out, path)
    value = parent[key]
    if op == "delete":
        del parent[key]
    elif op == "retype":
        choices = [s for s in _SAMPLES if _json_type(s) != _json_type(value)]
        parent[key] = copy.deepcopy(rng.choice(choices))
    elif op == "not_in_enum":
        parent[key] = "__no_such_value__"
    elif op == "negative":
        parent[key] = -abs(value) - 1
    elif op == "fractional":
        parent[key] = value + 0.5
    elif op == "empty_list":
        parent[key] = []
    elif op == "bad_item":
        parent[key] = [*value, {"unexpected": [1, 2]}]
    elif op == "object_to_string":
        parent[key] = "not an object"
    return out


def mutations(doc: Any, count: int, seed: int) -> Iterator[tuple[str, Any]]:
    """``count`` mutations of ``doc`` (fewer when it offers fewer), named op@path."""
    rng = random.Random(seed)
    ops = _operations(doc)
    # every deletion of a top-level key and every top-level extra key first, then a sample
    first = [o for o in ops if len(o[1]) <= 1]
    rest = [o for o in ops if len(o[1]) > 1]
    chosen = first + rng.sample(rest, max(0, min(len(rest), count - len(first))))
    for op, path in chosen[:count] if len(first) < count else first:
        yield f"{op}@{'/'.join(map(str, path))}", apply(doc, op, path, rng)
