"""Layout rules over a tree: names that differ only in letter case.

The path rules that need no tree (layout, uuids, portable names, canonical folders, the
kind of a file) are :mod:`eee.paths`; this one asks the tree what else is there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from eee.paths import name_key


class _Names(Protocol):
    def names(self, folder: str) -> list[str]: ...


def case_clash(tree: _Names | Callable[[str], Iterable[str]], rel: str) -> tuple[str, str] | None:
    """The first component of ``rel`` that differs only in case from a sibling in the tree.

    Returns (the path up to that component, the sibling's path) or None. ``tree`` is a
    :class:`eee.tree.Tree` or a function listing a folder's names (a commit's, the index's).
    """
    names_of = tree if callable(tree) else tree.names
    parts = rel.split("/")
    for depth, part in enumerate(parts):
        folder = "/".join(parts[:depth])
        names = list(names_of(folder))
        key = name_key(part)  # letter case and Unicode normalisation (NFC/NFD) both
        other = next((n for n in sorted(names) if n != part and name_key(n) == key), None)
        if other is not None:
            return "/".join(parts[: depth + 1]), "/".join([*parts[:depth], other])
        if part not in names:
            return None
    return None
