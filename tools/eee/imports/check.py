"""The manifests' check, for the ``imports`` hook (the index) and the audit (a commit).

A manifest is checked against its schema, its file name and its own arithmetic, and every
file it places must be in the tree with the sha256 it lists (a sidecar: its DVC pointer);
every flag event it names must be in the tree too. The tree is the index as the hooks read
it (:class:`eee.store.staged.IndexTree`: what will be committed, never the work tree) or a
commit's (:class:`eee.store.tree.GitTree`); only the folders of the files named are listed, never
the whole store.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from eee.reporting.findings import Finding


def check_manifests(
    paths: list[str], rev: str | None = None, cwd: str | Path | None = None, where: object = None
) -> list[Finding]:
    """Findings of the manifests ``paths`` in the index (``rev`` None) or in commit ``rev``."""
    from eee.imports.manifest import loads, manifest_findings
    from eee.store.paths import SIDECAR_SUFFIX
    from eee.store.tree import GitTree, Unreadable

    if rev is None:
        from eee.store.staged import index_tree

        tree = index_tree(cwd)
    else:
        tree = GitTree(Path(cwd) if cwd is not None else Path.cwd(), rev)

    def read(path: str) -> bytes | None:
        try:
            return tree.read(path)
        except (Unreadable, OSError):
            return None

    def in_tree(path: str) -> bool:
        # a sidecar is never in git (DVC keeps it): the index tree would find it in the work tree
        return not path.endswith(SIDECAR_SUFFIX) and tree.is_file(path)

    show = where if callable(where) else (lambda p: p)
    out: list[Finding] = []
    docs = []
    for rel in paths:
        data = read(rel)
        if data is None:
            out.append(Finding(show(rel), "$", "the manifest is not in the tree", None, check="import"))
            continue
        try:
            docs.append((rel, loads(data.decode("utf-8"))))
        except (UnicodeDecodeError, ValueError) as exc:
            out.append(
                Finding(
                    show(rel),
                    "$",
                    f"unreadable import manifest: {exc}",
                    "manifests are written by `eee import`",
                    check="import",
                )
            )
    if not docs:
        return out

    @functools.cache
    def sha256_of(path: str) -> str | None:
        data = read(path) if in_tree(path) else None
        return hashlib.sha256(data).hexdigest() if data is not None else None

    for rel, doc in docs:
        out += manifest_findings(doc, rel, functools.cache(in_tree), sha256_of, file=show(rel))
    if rev is not None:
        tree.close()
    return out
