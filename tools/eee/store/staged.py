"""What the next commit holds: a tree over git's index, read from git's object store.

The hooks check what will be committed, never the work-tree files: a clean filter (or an
edit after ``git add``) can make a work-tree file differ from its staged blob, and the
hooks must see the blob. :class:`IndexTree` is HEAD's tree with the staged changes over it
(``git diff --cached``); blobs come from ``git cat-file`` like a commit's. Nothing here
takes its answer from an environment variable or a file: git itself is asked.

Sidecars are the one exception: a sidecar up to the store's size threshold is in git (the
index holds it, and it is read from there like any file), a larger one DVC keeps out of git,
so the index holds only its pointer; such a sidecar is read from the work tree (what DVC adds
and pushes), so a staged record and pointer are still checked against it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from eee.git.cli import Change, batch_check, has_commit, staged_changes
from eee.store.paths import SIDECAR_SUFFIX
from eee.store.tree import EXECUTABLE, MAX_READ, REGULAR, SYMLINK, GitTree, Tree, WorkTree

_ZERO = "0" * 40


class IndexTree(GitTree):
    """The next commit as the index holds it (see the module docstring)."""

    def __init__(self, repo: str | os.PathLike[str] | None = None) -> None:
        root = Path(repo) if repo is not None else Path.cwd()  # hooks run at the repository's top level
        self.has_head = has_commit("HEAD", root)
        super().__init__(root, "HEAD")
        self.short = "index"
        changes = staged(root, self.has_head)
        self._deleted = {c.path for c in changes if c.status == "D"}
        added = {c.path: (c.new_mode, c.new_blob) for c in changes if c.status != "D"}
        sizes = _sizes([blob for _, blob in added.values() if blob != _ZERO], root)
        self._staged: dict[str, tuple[str, str, int]] = {}
        for path, (mode, blob) in added.items():
            kind = mode if mode in (REGULAR, EXECUTABLE, SYMLINK) else "other"
            self._staged[path] = (kind, blob, sizes.get(blob, 0))
        self._index_folders: dict[str, dict[str, tuple[str, str, int]]] = {}
        self._work = WorkTree(root)

    def display(self, path: str) -> str:
        return path

    def _folder(self, folder: str) -> dict[str, tuple[str, str, int]]:
        folder = folder.strip("/")
        found = self._index_folders.get(folder)
        if found is not None:
            return found
        found = dict(super()._folder(folder)) if self.has_head else {}
        prefix = folder + "/" if folder else ""
        for path in self._deleted:
            if path.startswith(prefix) and "/" not in path[len(prefix) :]:
                found.pop(path[len(prefix) :], None)
        for path, entry in self._staged.items():
            if path.startswith(prefix):
                rest = path[len(prefix) :]
                if "/" in rest:
                    found.setdefault(rest.split("/", 1)[0], ("040000", "", 0))
                else:
                    found[rest] = entry
        self._index_folders[folder] = found
        return found

    def files(self, prefix: str = "") -> list[str]:
        found = set(super().files(prefix)) if self.has_head else set()
        start = prefix.strip("/") + "/" if prefix.strip("/") else ""
        found -= self._deleted
        found |= {p for p in self._staged if p.startswith(start)}
        return sorted(found)

    def _outside_git(self, path: str) -> bool:
        """A sidecar DVC keeps in the work tree (not in the index)."""
        return path.endswith(SIDECAR_SUFFIX) and self._entry(path) is None

    def mode(self, path: str) -> str | None:
        if self._outside_git(path):
            return self._work.mode(path)
        return super().mode(path)

    def exists(self, path: str) -> bool:
        if self._outside_git(path):
            return self._work.exists(path)
        return super().exists(path)

    def read(self, path: str, limit: int = MAX_READ) -> bytes:
        if self._outside_git(path):
            return self._work.read(path, limit)
        return super().read(path, limit)

    def chunks(self, path: str, limit: int = MAX_READ) -> Iterator[bytes]:
        if self._outside_git(path):
            yield from self._work.chunks(path, limit)
        else:
            yield from super().chunks(path, limit)


def _sizes(blobs: list[str], root: Path) -> dict[str, int]:
    """Blob sizes by id, from one ``git cat-file --batch-check``."""
    return {blob: size for blob, (_, kind, size) in batch_check(blobs, root).items() if kind == "blob"}


_shared: dict[str, IndexTree] | None = None
_changes: dict[str, list[Change]] | None = None


@contextmanager
def session() -> Iterator[None]:
    """Within it, one ``git diff --cached`` and one index tree per repository for this
    process: the hook runner opens one, so that hooks sharing a process (``python -m
    eee.hooks naming validate ...``, or the lean gate running them) ask git for the index
    once (at 230,000 records each such call reads a 50 MB index: 0.08 s). Nested sessions
    are the outer one; leaving the outer one forgets everything (a hook called on its own
    asks git afresh)."""
    global _shared, _changes
    if _shared is not None:
        yield
        return
    _shared, _changes = {}, {}
    try:
        yield
    finally:
        trees, _shared, _changes = _shared, None, None
        for tree in trees.values():
            tree.close()


def _key(repo: str | os.PathLike[str] | None) -> str:
    return os.path.realpath(repo if repo is not None else os.getcwd())


def staged(repo: str | os.PathLike[str] | None = None, head: bool | None = None) -> list[Change]:
    """What the next commit changes (:func:`eee.git.cli.staged_changes`), asked of git once a session."""
    root = Path(repo) if repo is not None else Path.cwd()
    if _changes is None:
        return staged_changes(root, head)
    key = _key(root)
    if key not in _changes:
        _changes[key] = staged_changes(root, head)
    return _changes[key]


def index_tree(repo: str | os.PathLike[str] | None = None) -> Tree:
    """The tree the hooks read: the index of the repository at ``repo`` (default: the current one)."""
    if _shared is None:
        return IndexTree(repo)
    key = _key(repo)
    if key not in _shared:
        _shared[key] = IndexTree(repo)
    return _shared[key]
