"""The rules of a DVC pointer (``<uuid>_samples.jsonl.dvc``): it is one, it tracks its own
sidecar (the one beside it, by name), that sidecar is not empty, and its record is beside it."""

from __future__ import annotations

import re
from typing import Any

from eee.dvc.pointer import Pointer, PointerError
from eee.dvc.pointer import parse as parse_dvc_pointer
from eee.reporting.findings import Finding
from eee.reporting.shown import command
from eee.store.limits import POINTER_MAX_BYTES
from eee.store.paths import POINTER_SUFFIX
from eee.store.tree import Tree, Unreadable

_EMPTY_MD5 = "d41d8cd98f00b204e9800998ecf8427e"
_MD5 = re.compile(r"[0-9a-f]{32}")


def read_pointer(tree: Tree, rel: str) -> Pointer | Unreadable | UnicodeDecodeError | PointerError:
    """The DVC pointer file ``rel`` of ``tree`` parsed, or why it cannot be (the exception)."""
    try:
        return parse_dvc_pointer(tree.read(rel, POINTER_MAX_BYTES).decode("utf-8"))
    except (Unreadable, UnicodeDecodeError, PointerError) as exc:
        return exc


def pointer_findings(pointer: Any, rel: str, file: str) -> list[Finding]:
    """A DVC pointer (as :func:`read_pointer` read it) must be one, and name its own sidecar."""
    sidecar_name = rel.rsplit("/", 1)[-1][: -len(POINTER_SUFFIX)]
    if isinstance(pointer, Exception):
        problem = pointer.finding.message if isinstance(pointer, Unreadable) else str(pointer)
        return [
            Finding(
                file,
                "$",
                f"unreadable DVC pointer: {problem}",
                f"re-create it with `{command('samples', 'add', file[: -len(POINTER_SUFFIX)])}`",
                check="sidecar",
            )
        ]
    if pointer.size == 0 or pointer.md5 == _EMPTY_MD5:
        return [
            Finding(
                file,
                "$.outs[0].size",
                "the pointer tracks an empty sidecar (0 bytes)",
                "a sidecar holds at least one row; a record without per-sample results has no sidecar and no pointer",
                check="sidecar",
            )
        ]
    if not isinstance(pointer.md5, str) or not _MD5.fullmatch(pointer.md5):
        return [
            Finding(
                file,
                "$.outs[0].md5",
                f"the pointer's md5 {pointer.md5!r} is not 32 lowercase hex digits",
                f"re-create it with `{command('samples', 'add', file[: -len(POINTER_SUFFIX)])}`",
                check="sidecar",
            )
        ]
    if pointer.path != sidecar_name:
        return [
            Finding(
                file,
                "$.outs[0].path",
                f"the pointer tracks {pointer.path!r}, not {sidecar_name!r}",
                f"a pointer sits beside its sidecar and names it; re-create it with `{command('samples', 'add', file[: -len(POINTER_SUFFIX)])}`",
                check="sidecar",
            )
        ]
    return []


def orphan_pointer_finding(file: str, record_name: str) -> Finding:
    """A pointer whose record ``record_name`` is not beside it."""
    return Finding(
        file,
        "$",
        f"DVC pointer without aggregate: {record_name} does not exist beside it",
        "add the record or remove the pointer",
        check="sidecar",
    )
