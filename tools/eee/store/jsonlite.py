"""Reading a few small JSON documents with the standard library, for hooks.

The validator parses with orjson (fast per byte, ~40 ms to import); a hook that only
needs ``model_info.id`` from one or two records is quicker with the standard library.
Still strict: duplicate keys and NaN/Infinity make the document unreadable (None), and
the validate hook reports why.
"""

from __future__ import annotations

import json
from typing import Any

from eee.store.limits import INT_MAX_DIGITS, JSON_MAX_DEPTH, RECORD_MAX_BYTES, read_regular
from eee.store.tree import Unreadable


class _Reject(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc = dict(pairs)
    if len(doc) != len(pairs):
        raise _Reject("duplicate key")
    return doc


def _constant(name: str) -> Any:
    raise _Reject(name)


def loads_object(data: bytes) -> dict[str, Any] | None:
    """The JSON object in ``data`` (a staged blob), or None when it is not strict JSON."""

    def _int(text: str) -> int:
        if len(text) > INT_MAX_DIGITS + 1:
            raise _Reject("integer too long")
        return int(text)

    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_constant, parse_int=_int)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    if data.count(b"[") + data.count(b"{") > JSON_MAX_DEPTH and _deeper_than(doc, JSON_MAX_DEPTH):
        return None
    return doc


def tree_object(tree: Any, path: str) -> dict[str, Any] | None:
    """The record at ``path`` of a tree (the index, for the hooks), or None when unreadable."""
    try:
        return loads_object(tree.read(path, RECORD_MAX_BYTES))
    except (Unreadable, OSError, ValueError):
        return None


def load_object(path: str) -> dict[str, Any] | None:
    """The JSON object in the file ``path`` (a regular file, never a link, within the record
    cap), or None when it is unreadable or not strict JSON."""
    try:
        data = read_regular(path, RECORD_MAX_BYTES, "record")
    except OSError:
        return None
    return loads_object(data)


def _deeper_than(doc: Any, limit: int) -> bool:
    """Whether ``doc`` nests more than ``limit`` arrays/objects (iterative: no recursion)."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False
