"""Layout rules: where a file may be, how it may be named, and that it is a regular file.

The path rules that need no tree (layout, uuids, portable names, canonical folders, the
kind of a file) are :mod:`eee.store.paths`; :func:`layout_findings` reports them as
findings, with the names that differ only in letter case from what the tree holds
(:func:`case_clash`, which the naming hook, the audit and convert ask too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from eee.reporting.findings import Finding
from eee.store.paths import StorePath, clash_text, classify, layout_problems, name_key

LOOSE_HINT = "records live at data/<benchmark>/<developer>/<model>/<uuid>.json; use --schema-only for a loose file"
CLASH_HINT = "two paths that differ only in case collide on macOS and Windows; use the existing spelling"
LINK_HINTS = {  # what a symbolic link in place of a file of each kind is told
    "record": "records must be regular files: copy the content in place of the link",
    "sidecar": "sidecars must be regular files (DVC keeps them; do not link them)",
}


def layout_findings(
    names: Any, rel: str, file: str, in_store: bool = True, clash: bool = True
) -> tuple[StorePath | None, list[Finding]]:
    """(where the path puts the file, the layout's findings): a file outside any store's
    data/ folder, the layout and portability of its path, and (``clash``) a name that
    differs only in letter case from one the tree ``names`` holds (a :class:`eee.store.tree.Tree`)."""
    if not in_store:
        return None, [Finding(file, "$", "not inside a data/ folder of a store", LOOSE_HINT, check="layout")]
    where = classify(rel)
    out = [Finding(file, "$", msg, hint, check="layout") for msg, hint in layout_problems(where.rel, where)]
    found = case_clash(names, rel) if clash else None
    if found:
        text = clash_text(found[0].rsplit("/", 1)[-1], found[1].rsplit("/", 1)[-1])
        out.append(Finding(file, "$", f"{found[0]!r} {text} {found[1]!r} beside it", CLASH_HINT, check="layout"))
    return where, out


def link_finding(file: str, kind: str) -> Finding:
    """A symbolic link where a regular file of ``kind`` (record, sidecar, other) must be."""
    return Finding(file, "$", "is a symbolic link", LINK_HINTS.get(kind, "use regular files only"), check="layout")


class _Names(Protocol):
    def names(self, folder: str) -> list[str]: ...


class _Folder:
    """A folder's names, and its names by their folded form (letter case and Unicode
    normalisation, NFC/NFD, both; each list sorted), folded only when asked: a name of the
    folder clashes only when two names fold together, which names all ASCII with distinct
    lowercase forms (nearly every folder) never do."""

    __slots__ = ("_folds", "clashing", "present")

    def __init__(self, names: Iterable[str]) -> None:
        self.present = set(names)
        self._folds: dict[str, list[str]] | None = None
        ascii_distinct = "".join(self.present).isascii() and len({n.lower() for n in self.present}) == len(self.present)
        self.clashing = not ascii_distinct and any(len(group) > 1 for group in self.folds().values())

    def folds(self) -> dict[str, list[str]]:
        if self._folds is None:
            self._folds = {}
            for name in sorted(self.present):
                self._folds.setdefault(name_key(name), []).append(name)
        return self._folds


def case_clash(tree: _Names | Callable[[str], Iterable[str]], rel: str) -> tuple[str, str] | None:
    """The first component of ``rel`` that differs only in case from a sibling in the tree.

    Returns (the path up to that component, the sibling's path) or None. ``tree`` is a
    :class:`eee.store.tree.Tree` or a function listing a folder's names (a commit's, the index's).
    A tree keeps each folder's index for the next file (a store of 100,000 records would
    otherwise case-fold every sibling for every file).
    """
    names_of = tree if callable(tree) else tree.names
    cache: dict[Any, Any] | None = None
    if not callable(tree):
        cache = getattr(tree, "_case_index", None)
        if cache is None:
            cache = {}
            try:
                tree._case_index = cache  # type: ignore[union-attr]
            except AttributeError:
                cache = None
    parts = rel.split("/")
    ok: set[str] | None = cache.setdefault("\0ok", set()) if cache is not None else None
    start, folder = 0, ""
    if ok:  # the deepest folder above the file whose every component was checked already
        prefix = rel.rpartition("/")[0]
        while prefix:
            if prefix in ok:
                start, folder = prefix.count("/") + 1, prefix
                break
            prefix = prefix.rpartition("/")[0]
    last = len(parts) - 1
    for depth in range(start, len(parts)):
        part = parts[depth]
        entry = cache.get(folder) if cache is not None else None
        if entry is None:
            entry = _Folder(names_of(folder))
            if cache is not None:
                cache[folder] = entry
        present = part in entry.present
        if entry.clashing or not present:  # else the name's group is itself alone
            other = next((n for n in entry.folds().get(name_key(part), ()) if n != part), None)
            if other is not None:
                return "/".join(parts[: depth + 1]), "/".join([*parts[:depth], other])
        if not present:
            return None
        if depth < last:
            folder = f"{folder}/{part}" if folder else part
            if ok is not None:
                ok.add(folder)
    return None
