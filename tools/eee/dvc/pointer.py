"""Reading DVC pointer files (``<uuid>_samples.jsonl.dvc``) without starting DVC.

A pointer is a small YAML file that DVC writes in one fixed shape::

    outs:
    - md5: 3be938950a0f1d56156f58c5110c7df7
      size: 806
      hash: md5
      path: <uuid>_samples.jsonl

The hooks and the validator read it here (no DVC import: ~0.55 s), and check that it
names its sidecar and, when the sidecar is present, that the file still matches it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_FIELD = re.compile(r"^\s*(?:-\s+)?(md5|size|hash|path):\s*(.*?)\s*$")


class Pointer(NamedTuple):
    path: str | None
    md5: str | None
    size: int | None
    hash: str | None


class PointerError(ValueError):
    pass


# The shape DVC writes, byte for byte: one match gives what the general reading below would.
_AS_WRITTEN = re.compile(r"outs:\n- md5: ([0-9a-f]{32})\n  size: ([0-9]{1,20})\n  hash: md5\n  path: ([^\s'\"]+)\n")


def parse(text: str) -> Pointer:
    """The single output of a DVC pointer; PointerError when it is not one."""
    plain = _AS_WRITTEN.fullmatch(text)
    if plain is not None:
        return Pointer(plain.group(3), plain.group(1), int(plain.group(2)), "md5")
    if not text.lstrip().startswith("outs:"):
        raise PointerError("not a DVC pointer: it does not start with 'outs:'")
    fields: dict[str, str] = {}
    outs = 0
    for line in text.splitlines():
        if line.lstrip().startswith("- "):
            outs += 1
        m = _FIELD.match(line)
        if m and m.group(1) not in fields:
            fields[m.group(1)] = m.group(2).strip("'\"")
    if outs != 1:
        raise PointerError(f"a sidecar pointer tracks exactly one file, this one tracks {outs}")
    size = fields.get("size")
    try:
        size_int = int(size) if size is not None else None
    except ValueError:
        raise PointerError(f"size {size!r} is not a number") from None
    return Pointer(fields.get("path"), fields.get("md5"), size_int, fields.get("hash"))
