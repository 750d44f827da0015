"""JSON locations written the way messages show them: ``$.evaluation_results[0].score``."""

from __future__ import annotations

import re
from collections.abc import Iterable

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
