"""What the validator checks: the files named on the command line, found.

Arguments are files, folders (walked recursively: a store root means its ``data/`` and
``governance/events/``) and globs; each file becomes an :class:`Item`, a path of the tree of
the store it lies in (a loose file: of the file system's). The walk lists each folder once
and yields paths in sorted order as it goes (:func:`walk_folders`), so a whole store is
checked as it is walked (:mod:`eee.validation.pool`). A path that matches nothing is a
finding (``input``), never a silent pass.

Paths are plain strings here: this runs once per file of a whole store.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from eee.reporting.findings import WARNING, Finding
from eee.store.identity import IDENTITY_DIR, registry_paths
from eee.store.paths import DATA_DIR, EVENT_SUFFIX, EVENTS_DIR, RECORD_SUFFIX, SIDECAR_SUFFIX, find_store_root
from eee.store.tree import SYMLINK, Tree, WorkTree

_GLOB_CHARS = set("*?[")


class Display:
    """Absolute paths shown relative to the working directory when they lie below it."""

    def __init__(self) -> None:
        self.prefix = os.getcwd() + os.sep

    def __call__(self, absolute: str) -> str:
        return absolute[len(self.prefix) :] if absolute.startswith(self.prefix) else absolute


class Collected:
    """The files to check (absolute paths) and what walking the folders already listed."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.problems: list[Finding] = []
        self.listings: dict[str, list[str]] = {}


def collect(args: Iterable[str | Path]) -> Collected:
    """Files named by the arguments: files, globs and directories (recursively)."""
    found = Collected()
    raw: list[str] = []
    for arg in map(str, args):
        if os.path.lexists(arg):
            if os.path.isdir(arg) and not os.path.islink(arg):
                below = _walk(arg, found.listings, found.problems)
                if not below:
                    found.problems.append(nothing_here(arg))
                raw.extend(below)
            else:
                raw.append(arg)
        elif _GLOB_CHARS & set(arg):
            matches = sorted(glob.glob(arg, recursive=True))
            if not matches:
                found.problems.append(
                    Finding(arg, "$", "no file matches this pattern", "check the pattern", check="input")
                )
            for m in matches:
                raw.extend(
                    _walk(m, found.listings, found.problems) if os.path.isdir(m) and not os.path.islink(m) else [m]
                )
        else:
            found.problems.append(Finding(arg, "$", "no such file or directory", "check the path", check="input"))
    seen: set[str] = set()
    for f in raw:
        absolute = os.path.abspath(f)
        if absolute not in seen:
            seen.add(absolute)
            found.files.append(absolute)
    return found


def nothing_here(folder: str) -> Finding:
    return Finding(
        folder,
        "$",
        "0 files checked: no records, sidecars, pointers or events in this folder",
        "check the path: a wrong path in CI would otherwise pass without checking anything",
        severity=WARNING,
        check="input",
    )


def _walk(top: str, listings: dict[str, list[str]], problems: list[Finding] | None = None) -> list[str]:
    """Files below ``top``, sorted: a store root means its data/ and governance/events/."""
    return list(walk(top, listings, problems))


def walk(
    top: str, listings: dict[str, list[str]] | None = None, problems: list[Finding] | None = None
) -> Iterator[str]:
    """The files below ``top`` in sorted order, as the walk reaches them (a store root means
    its data/ and governance/events/); each folder's names go to ``listings`` when given."""
    for directory, names in walk_folders(top, listings, problems):
        for name in names:
            yield os.path.join(directory, name)


def walk_folders(
    top: str, listings: dict[str, list[str]] | None = None, problems: list[Finding] | None = None
) -> Iterator[tuple[str, list[str]]]:
    """:func:`walk` as (folder, the names of consecutive files in it): the files of a folder
    come in one piece unless a subfolder's files sort between them.

    Depth first, each folder's entries in the order of their paths: a folder's name sorts
    as itself followed by "/", so the paths come out as ``sorted()`` would put them."""
    top = os.path.abspath(top)
    parts = top.split(os.sep)
    under_data = DATA_DIR in parts
    if not under_data and os.path.isdir(os.path.join(top, DATA_DIR)):
        yield from walk_folders(os.path.join(top, DATA_DIR), listings, problems)
        events = os.path.join(top, EVENTS_DIR)
        if os.path.isdir(events):
            yield from walk_folders(events, listings, problems)
        yield from _identity_folder(top, listings, problems)
        return
    if not under_data and parts[-2:] == IDENTITY_DIR.split("/"):  # the identity registry's folder itself
        yield from _identity_folder(os.sep.join(parts[:-2]) or os.sep, listings, problems)
        return
    if not under_data and parts[-1] == "governance" and os.path.isdir(os.path.join(top, "events")):
        yield from walk_folders(os.path.join(top, "events"), listings, problems)
        yield from _identity_folder(os.sep.join(parts[:-1]) or os.sep, listings, problems)
        return
    in_events = top.endswith(os.sep + EVENTS_DIR.replace("/", os.sep))
    yield from _walk_folder(top, under_data, in_events, listings, problems)


def _identity_folder(
    top: str, listings: dict[str, list[str]] | None, problems: list[Finding] | None
) -> Iterator[tuple[str, list[str]]]:
    """The identity registry's folder of the store at ``top``: every entry of it but hidden
    files (a file that is not the registry's is reported, not skipped)."""
    folder = os.path.join(top, IDENTITY_DIR.replace("/", os.sep))
    if not os.path.isdir(folder) or os.path.islink(folder):
        return
    try:
        names = sorted(name for name in os.listdir(folder) if not name.startswith("."))
    except OSError as exc:
        if problems is not None:
            problems.append(
                Finding(folder, "$", f"cannot read the folder: {exc.strerror}", "check its permissions", check="input")
            )
        return
    if listings is not None:
        listings[folder] = names
    if names:
        yield folder, names


def _walk_folder(
    directory: str,
    under_data: bool,
    in_events: bool,
    listings: dict[str, list[str]] | None,
    problems: list[Finding] | None,
) -> Iterator[tuple[str, list[str]]]:
    try:
        with os.scandir(directory) as it:
            entries = list(it)
    except OSError as exc:
        if problems is not None:
            problems.append(
                Finding(
                    directory, "$", f"cannot read the folder: {exc.strerror}", "check its permissions", check="input"
                )
            )
        return
    if listings is not None:
        listings[directory] = [e.name for e in entries]
    files: list[str] = []
    folders: list[str] = []
    for entry in entries:
        name = entry.name
        if entry.is_symlink():
            if under_data or in_events:
                files.append(name)
        elif entry.is_dir():
            if (under_data or not name.startswith(".")) and not in_events:
                folders.append(name)
        elif (
            under_data
            or name.endswith((RECORD_SUFFIX, SIDECAR_SUFFIX))
            or (in_events and name.endswith(EVENT_SUFFIX) and not name.startswith("."))
        ):
            files.append(name)
    del entries
    if not folders:  # a model's folder: its files, sorted
        if files:
            files.sort()
            yield directory, files
        return
    # a folder's name sorts as itself followed by "/" (its files' paths)
    keyed = sorted([(name, False) for name in files] + [(name + "/", True) for name in folders])
    run: list[str] = []
    for key, is_folder in keyed:
        if is_folder:
            if run:
                yield directory, run
                run = []
            yield from _walk_folder(os.path.join(directory, key[:-1]), under_data, in_events, listings, problems)
        else:
            run.append(key)
    if run:
        yield directory, run


class Item:
    """One file to check: its tree, its path there, and whether it lies in a store."""

    __slots__ = ("in_store", "rel", "tree")

    def __init__(self, tree: Tree, rel: str, in_store: bool = True) -> None:
        self.tree = tree
        self.rel = rel
        self.in_store = in_store

    def key(self) -> tuple[int, str]:
        return id(self.tree), self.rel

    def beside(self, rel: str) -> Item:
        return Item(self.tree, rel, self.in_store)


def store_files(tree: Tree) -> list[str]:
    """What validating a whole store checks: every file under data/ and the event files."""
    events = [
        rel
        for rel in tree.files(EVENTS_DIR)
        if "/" not in rel[len(EVENTS_DIR) + 1 :]
        and (tree.mode(rel) == SYMLINK or (rel.endswith(EVENT_SUFFIX) and not rel.rsplit("/", 1)[-1].startswith(".")))
    ]
    names = registry_paths(tree) if tree.exists(IDENTITY_DIR) else []
    return tree.files(DATA_DIR) + events + [rel for rel in names if not rel.rsplit("/", 1)[-1].startswith(".")]


EVENTS_MARKER = os.sep + EVENTS_DIR.replace("/", os.sep) + os.sep
IDENTITY_MARKER = os.sep + IDENTITY_DIR.replace("/", os.sep) + os.sep
LOOSE = "/"  # loose files are read through a work tree of the file system's root


def items(files: Iterable[str], root: str | Path | None, listings: dict[str, list[str]] | None) -> Iterator[Item]:
    """Absolute paths as items of the trees of their stores (loose files: the file system's)."""
    trees: dict[str, WorkTree] = {}

    def tree_at(top: str) -> WorkTree:
        if top not in trees:
            trees[top] = WorkTree(top, listings)
        return trees[top]

    fixed = os.path.abspath(root) if root else None
    last: tuple[str | None, str | None] = (None, None)  # a folder and its store root (files come by folder)
    for absolute in files:
        if absolute.endswith(EVENT_SUFFIX) and EVENTS_MARKER in absolute:
            store: str | None = absolute[: absolute.rindex(EVENTS_MARKER)]
        elif IDENTITY_MARKER in absolute and absolute.count(os.sep, absolute.rindex(IDENTITY_MARKER)) == 3:
            store = absolute[: absolute.rindex(IDENTITY_MARKER)]
        elif fixed:
            store = fixed
        else:
            folder = os.path.dirname(absolute)
            if folder != last[0]:
                last = (folder, find_store_root(absolute))
            store = last[1]
        rel = tree_at(store).rel(absolute) if store else None
        if rel is None:
            yield Item(tree_at(LOOSE), absolute.lstrip(os.sep), in_store=False)
        else:
            yield Item(tree_at(store), rel)
