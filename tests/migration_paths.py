"""Test helpers for migration: resolve the JSON paths provenance names, and undo a migration.

:func:`undo` takes a migrated copy back to its source using only what the copy reports
(converted, moved, filled, derived). When that gives back the source exactly, nothing was
lost and nothing changed without being reported.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

_TOKEN = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+|\*)\]|\["((?:[^"\\]|\\.)*)"\]')
_MISSING = object()  # returned by get() for an absent path
_RAISE = object()


def parse(path: str) -> list[str | int]:
    """``$.a.b[0]["x y"]`` -> ``["a", "b", 0, "x y"]`` (``[*]`` -> ``"*"``)."""
    assert path.startswith("$"), path
    out: list[str | int] = []
    pos = 1
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        assert m, f"cannot parse {path!r} at {pos}"
        name, index, quoted = m.groups()
        if name is not None:
            out.append(name)
        elif index is not None:
            out.append("*" if index == "*" else int(index))
        else:
            out.append(quoted.replace('\\"', '"').replace("\\\\", "\\"))
        pos = m.end()
    return out


def get(doc: Any, path: str | list[str | int], default: Any = _RAISE) -> Any:
    node = doc
    try:
        for part in parse(path) if isinstance(path, str) else path:
            if part == "*":
                return node
            node = node[part]
    except (KeyError, IndexError, TypeError):
        if default is _RAISE:
            raise
        return default
    return node


def _revert(new: Any) -> Any:
    if isinstance(new, str):
        return json.loads(new)
    if isinstance(new, list):
        assert len(new) == 1 and isinstance(new[0], str), new
        return new[0]
    assert new in (0.0, 1.0), new
    return new == 1.0


def _remove(doc: Any, parts: list[str | int], source: Any) -> None:
    """Remove ``parts`` from ``doc``, then each enclosing object left empty that ``source`` lacks."""
    get(doc, parts[:-1]).pop(parts[-1])
    parts = parts[:-1]
    while parts and get(doc, parts) == {} and get(source, parts, _MISSING) is _MISSING:
        get(doc, parts[:-1]).pop(parts[-1])
        parts = parts[:-1]


def undo(before: Any, after: Any, changes: dict[str, Any], holder: str | None = None) -> Any:
    """``after`` taken back to ``before``'s version with only what ``changes`` reports.

    ``holder`` is the JSON path of the provenance map to drop (the chain writes one; a bare
    step does not).
    """
    out = copy.deepcopy(after)
    for path in changes["converted"]:
        parts = parse(path)
        if parts[-1] == "*":
            array = get(out, parts[:-1])
            array[:] = [json.loads(v) for v in array]
        else:
            get(out, parts[:-1])[parts[-1]] = _revert(get(out, parts))
    for old, new in reversed(list(changes["moved"].items())):
        value = get(out, new)
        _remove(out, parse(new), before)
        old_parts = parse(old)
        get(out, old_parts[:-1])[old_parts[-1]] = value
    for path in [*changes["filled"], *changes["derived"]]:
        if get(before, path, _MISSING) is _MISSING:
            _remove(out, parse(path), before)
    if holder is not None:
        node = get(out, holder)
        for key in [k for k in node if k.startswith("eee_migrat")]:
            node.pop(key)
        if node == {} and get(before, holder, _MISSING) is _MISSING:
            parts = parse(holder)
            get(out, parts[:-1]).pop(parts[-1])
    out["schema_version"] = before["schema_version"]
    return out


def assert_lossless(before: Any, after: Any, changes: dict[str, Any], holder: str | None = None) -> None:
    restored = undo(before, after, changes, holder)
    assert restored == before, "undoing the reported changes does not give back the source"
    for path in changes["filled"]:
        assert get(after, path) == "unknown", f"{path} is listed as filled but holds {get(after, path)!r}"
