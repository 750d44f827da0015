"""Reading the identity registry from a tree: its files (bounded), parsed once per process
and kept in the git directory as JSON by their sha256 (``eee-identity.json``), so a commit
pays for the YAML parser only when the registry changed; the home registry a folder without
its own is read with (:func:`home_registry`)."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
from collections.abc import Iterator
from typing import Any

from eee.store.identity.model import EMPTY, IDENTITY_DIR, KIND_OF_FILE, Problem, Registry
from eee.store.identity.parse import parse
from eee.store.limits import IDENTITY_MAX_BYTES
from eee.store.tree import GitTree, Overlay, Tree, Unreadable, WorkTree

CACHE_NAME = "eee-identity.json"  # in the git directory: the parsed registry, by its files' sha256


CACHE_FORMAT = "eee-identity-cache/2"


def repo_of(tree: Tree) -> str | None:
    """The git repository a tree's store lies in (None for a folder outside git)."""
    while isinstance(tree, Overlay):
        tree = tree.base
    if isinstance(tree, GitTree):  # a commit, or the index (IndexTree)
        return str(tree.repo)
    if isinstance(tree, WorkTree) and os.path.exists(os.path.join(tree.root, ".git")):
        return tree.root
    return None


def _cache_path(repo: str | None) -> str | None:
    if repo is None:
        return None
    folder = os.path.join(repo, ".git")
    return os.path.join(folder, CACHE_NAME) if os.path.isdir(folder) else None


def read_files(tree: Tree) -> tuple[dict[str, bytes], list[Problem]]:
    """The registry files of ``tree`` (path -> bytes) and those that cannot be read."""
    found: dict[str, bytes] = {}
    problems: list[Problem] = []
    if not tree.exists(IDENTITY_DIR):
        return found, problems
    for rel in registry_paths(tree):
        if rel not in KIND_OF_FILE:
            continue  # the rule of the folder (eee.rules.identity) names it
        try:
            found[rel] = tree.read(rel, IDENTITY_MAX_BYTES)
        except Unreadable as exc:
            problems.append(Problem(tree.display(rel), "$", exc.finding.message, exc.finding.hint))
    return found, problems


def registry_paths(tree: Tree) -> list[str]:
    """Every path in the registry's folder of ``tree`` (files and anything else)."""
    return [f"{IDENTITY_DIR}/{name}" for name in sorted(tree.names(IDENTITY_DIR))]


_HOME: Registry | None = None  # the registry of the store a command runs in (home_registry)


@contextlib.contextmanager
def home_registry(store: str | os.PathLike[str] | None = None) -> Iterator[None]:
    """Within the block, a folder without a registry of its own (a datastore snapshot
    checked with `eee validate`) is read with the registry of the store ``store`` (default:
    the git work tree of the current folder): its conventions and canonical ids. Trees of
    git (a commit, the index) never are."""
    global _HOME
    from eee.git.cli import GitError, toplevel

    before = _HOME
    try:
        root = os.path.abspath(store) if store is not None else str(toplevel(os.getcwd()))
        home = WorkTree(root)
        files, _ = read_files(home)
        if files:
            _HOME = load(files, display=home.display, repo=repo_of(home))
    except GitError:
        pass
    try:
        yield
    finally:
        _HOME = before


def read(tree: Tree) -> Registry:
    """The registry of ``tree`` (empty where it has none, or the home registry:
    :func:`home_registry`), read once per tree."""
    cached = getattr(tree, "_eee_identity", None)
    if isinstance(cached, Registry):
        return cached
    files, unreadable = read_files(tree)
    if (
        not files
        and not unreadable
        and _HOME is not None
        and isinstance(tree, WorkTree)
        and not tree.exists(IDENTITY_DIR)
    ):
        reg = _HOME
        try:
            tree._eee_identity = reg  # type: ignore[attr-defined]
        except AttributeError:
            pass
        return reg
    reg = load(files, display=tree.display, repo=repo_of(tree)) if files or unreadable else EMPTY
    if unreadable:
        reg = Registry() if reg is EMPTY else copy.copy(reg)  # a parsed registry is shared: never changed
        reg.problems = [*unreadable, *reg.problems]
    try:
        tree._eee_identity = reg  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return reg


def digest_of(files: dict[str, bytes]) -> str:
    h = hashlib.sha256(CACHE_FORMAT.encode())
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    return h.hexdigest()


_PARSED: dict[str, Registry] = {}  # digest -> the registry those files parse to, in this process


PARSED_KEEP = 4


def load(files: dict[str, bytes], display: Any = None, repo: str | None = None) -> Registry:
    """The registry the files (path -> bytes) declare: parsed once per process (every chunk
    of a validation, every tree of an audit asks), else through the cache of ``repo``'s git
    directory when there is one (the cache keeps what the files parse to, problems included).
    The registry returned is shared: callers never change it."""
    digest = digest_of(files)
    reg = _PARSED.get(digest)
    if reg is None:
        reg = _load(files, digest, repo)
        if len(_PARSED) >= PARSED_KEEP:
            _PARSED.clear()
        _PARSED[digest] = reg
    if display is not None and reg.problems:  # the problems name files as this tree shows them
        reg = copy.copy(reg)
        reg.problems = [p._replace(file=display(p.file)) for p in reg.problems]
    return reg


def _load(files: dict[str, bytes], digest: str, repo: str | None) -> Registry:
    cache = _cache_path(repo)
    kept: dict[str, Any] = {}
    if cache is not None:
        try:
            with open(cache, encoding="utf-8") as handle:
                data = json.load(handle)
            kept = data["registries"] if data.get("format") == CACHE_FORMAT else {}
            if digest in kept:
                return Registry.from_json(kept[digest], digest)
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            kept = {}
    reg = parse(files)
    reg.digest = digest
    if cache is not None:
        _write_cache(cache, digest, reg, kept)
    return reg


CACHE_KEEP = 4  # registries kept (HEAD's and the index's differ while a change of it is staged)


def _write_cache(path: str, digest: str, reg: Registry, kept: dict[str, Any]) -> None:
    from eee.store.fsutil import write_replacing

    if not isinstance(kept, dict):
        kept = {}
    kept = {k: v for k, v in list(kept.items())[-(CACHE_KEEP - 1) :] if k != digest}
    kept[digest] = reg.to_json()  # the newest last
    data = json.dumps({"format": CACHE_FORMAT, "registries": kept}).encode()
    try:
        write_replacing(path, data, durable=False)
    except OSError:
        pass  # a read-only git directory: the next run parses again
