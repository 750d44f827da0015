"""The git checks of the identity registry: whether a commit an alias names
(``settled_at``) is known, and whether a record's path is in it (:func:`settled`), asked of
git's object store through one ``git cat-file --batch-check`` per repository."""

from __future__ import annotations

import os
from typing import Any

from eee.store.identity.cache import repo_of
from eee.store.identity.model import Alias
from eee.store.tree import Tree

_checkers: dict[tuple[int, str], Any] = {}


_commits: dict[tuple[str, str], bool] = {}


def _checker(repo: str) -> Any:
    from eee.git.cli import BatchCheck

    k = (os.getpid(), repo)  # a forked worker asks through its own process
    found = _checkers.get(k)
    if found is None:
        found = _checkers[k] = BatchCheck(repo)
    return found


def commit_known(tree: Tree, commit: str) -> bool | None:
    """Whether the store's git repository has ``commit`` (None outside git)."""
    repo = repo_of(tree)
    if repo is None:
        return None
    k = (repo, commit)
    if k not in _commits:
        _commits[k] = _checker(repo).kind(f"{commit}^{{commit}}") == "commit"
    return _commits[k]


def settled(tree: Tree, alias: Alias, rel: str) -> bool:
    """Whether the record ``rel`` was under ``alias`` when it became one: the commit the
    alias names holds it. False without such a commit, outside git, or when the clone lacks
    the commit (:func:`commit_known` tells which)."""
    if alias.settled_at is None:
        return False
    repo = repo_of(tree)
    if repo is None:
        return False
    return _checker(repo).kind(f"{alias.settled_at}:{rel}") == "blob"


def close_checkers() -> None:
    for k in [k for k in _checkers if k[0] == os.getpid()]:
        _checkers.pop(k).close()
