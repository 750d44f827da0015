"""JSON locations written the way messages show them: ``$.evaluation_results[0].score``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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
