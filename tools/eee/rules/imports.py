"""The rules of an import manifest (``governance/imports/<id>.yaml``), for the imports hook
(the index) and the audit (a commit).

A manifest is checked against its schema, its file name and its own arithmetic, and every
file it places must be in the tree with the sha256 it lists (a sidecar DVC keeps: its pointer);
every flag event it names must be in the tree too (:func:`manifest_findings`). The tree is
the index as the hooks read it (:class:`eee.store.staged.IndexTree`: what will be committed,
never the work tree) or a commit's (:class:`eee.store.tree.GitTree`); only the folders of the
files named are listed, never the whole store (:func:`check_manifests`).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eee.governance.manifests import MANIFEST_SCHEMA, OUTCOMES, PRESENT, REFUSED, loads
from eee.reporting.findings import Finding
from eee.store.paths import IMPORTS_DIR, MANIFEST_SUFFIX


def check_manifests(
    paths: list[str], rev: str | None = None, cwd: str | Path | None = None, where: object = None
) -> list[Finding]:
    """Findings of the manifests ``paths`` in the index (``rev`` None) or in commit ``rev``."""
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
        # a sidecar counts when git holds it (up to the store's threshold); one DVC keeps is in
        # the work tree only, where the index tree would find it: its pointer counts instead
        if path.endswith(SIDECAR_SUFFIX):
            return tree.git_size(path) is not None
        return tree.is_file(path)

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


def manifest_findings(
    doc: dict[str, Any],
    rel: str,
    exists: Callable[[str], bool],
    sha256_of: Callable[[str], str | None],
    file: str | None = None,
) -> list[Finding]:
    """Everything wrong with the manifest ``doc`` at ``rel``: its schema, its id, its
    arithmetic, and references to what is not in the tree (``exists``: a path of the
    tree; ``sha256_of``: a file's sha256 in the tree, None when it cannot say)."""
    from eee.store.jsonpath import format_path  # lazy: the hooks import this module only for a staged manifest
    from eee.store.schemas import default_registry

    file = file or rel
    out: list[Finding] = []
    validator = default_registry().other_validator(*MANIFEST_SCHEMA)
    for err in list(validator.iter_errors(doc))[:10]:
        out.append(
            Finding(
                file,
                format_path(list(err.instance_path)),
                f"{err.message} (import manifest schema)",
                None,
                check="import",
            )
        )
    if out:
        return out
    stem = rel.rsplit("/", 1)[-1][: -len(MANIFEST_SUFFIX)]
    if doc["id"] != stem or not rel.startswith(IMPORTS_DIR + "/") or rel.count("/") != 2:
        out.append(
            Finding(
                file,
                "$.id",
                f"id {doc['id']!r} differs from the file name",
                f"a manifest is {IMPORTS_DIR}/<id>{MANIFEST_SUFFIX}",
                check="import",
            )
        )
    files = doc["files"]
    counted = {o: 0 for o in OUTCOMES}
    for item in files:
        counted[item["outcome"]] += 1
    declared = doc["counts"]
    for outcome in OUTCOMES:
        if declared.get(outcome) != counted[outcome]:
            out.append(
                Finding(
                    file,
                    f"$.counts.{outcome}",
                    f"counts {declared.get(outcome)} {outcome} files, the list holds {counted[outcome]}",
                    "the counts are the files' outcomes, counted",
                    check="import",
                )
            )
    if declared.get("total") != len(files):
        out.append(
            Finding(
                file,
                "$.counts.total",
                f"total {declared.get('total')} differs from the {len(files)} files listed",
                None,
                check="import",
            )
        )
    for i, item in enumerate(files):
        store = item.get("store")
        if item["outcome"] == REFUSED:
            continue
        where = format_path(["files", i, "store"])
        if item["kind"] == "sidecar" and not exists(store):
            if not exists(store + ".dvc"):
                out.append(
                    Finding(
                        file,
                        where,
                        f"names sidecar {store}, which is neither in git nor tracked by a DVC pointer in the tree",
                        "commit the manifest with (or after) the files it lists",
                        check="import",
                    )
                )
            continue
        if not exists(store):
            out.append(
                Finding(
                    file,
                    where,
                    f"names {store}, which is not in the tree",
                    "commit the manifest with (or after) the files it lists",
                    check="import",
                )
            )
            continue
        if item["outcome"] != PRESENT or item.get("sha256"):
            actual = sha256_of(store)
            if actual is not None and actual != item.get("sha256"):
                out.append(
                    Finding(
                        file,
                        format_path(["files", i, "sha256"]),
                        f"sha256 differs from {store}'s ({actual})",
                        "a manifest names the exact bytes it imported",
                        check="import",
                    )
                )
        for j, flag in enumerate(item.get("flags", [])):
            event = f"governance/events/{flag['event']}.yaml"
            if not exists(event):
                out.append(
                    Finding(
                        file,
                        format_path(["files", i, "flags", j, "event"]),
                        f"names flag event {flag['event']}, which is not in the tree",
                        "commit the flag events with the records they flag",
                        check="import",
                    )
                )
    return out
