"""JSON locations written the way messages show them: ``$.evaluation_results[0].score``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STEP = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]')


def format_path(parts: Iterable[str | int]) -> str:
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN.match(part):
            out.append(f".{part}")
        else:
            escaped = part.replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'["{escaped}"]')
    return "".join(out)


def parse_path(pointer: str) -> tuple[str | int, ...] | None:
    """The parts of a location written by :func:`format_path`; None if it is not one."""
    if not pointer.startswith("$"):
        return None
    parts: list[str | int] = []
    pos = 1
    while pos < len(pointer):
        m = _STEP.match(pointer, pos)
        if m is None:
            return None
        name, index, quoted = m.groups()
        if name is not None:
            parts.append(name)
        elif index is not None:
            parts.append(int(index))
        else:
            parts.append(re.sub(r"\\(.)", r"\1", quoted))
        pos = m.end()
    return tuple(parts)


def well_formed(pointer: str) -> bool:
    """Whether ``pointer`` is a JSON path exactly as findings write it (:func:`format_path`):
    ``$``, ``.name``, ``[0]`` and ``["other key"]`` steps, nothing else, each in its one spelling."""
    parts = parse_path(pointer)
    return parts is not None and format_path(parts) == pointer


def json_type(value: Any) -> str:
    """What kind of JSON value this is, for messages: "null", "a boolean", "a number", ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
