"""Reading a few small JSON documents with the standard library, for hooks.

The validator parses with orjson (fast per byte, ~40 ms to import); a hook that only
needs ``model_info.id`` from one or two records is quicker with the standard library.
Still strict: duplicate keys and NaN/Infinity make the document unreadable (None), and
the validate hook reports why.
"""

from __future__ import annotations

import json
from typing import Any


class _Reject(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc = dict(pairs)
    if len(doc) != len(pairs):
        raise _Reject("duplicate key")
    return doc


def _constant(name: str) -> Any:
    raise _Reject(name)


def load_object(path: str) -> dict[str, Any] | None:
    """The JSON object in ``path``, or None when it is unreadable or not strict JSON."""
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read().decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_constant)
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None
