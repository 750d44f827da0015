"""The rules of an import manifest (``governance/imports/<id>.yaml``), for the imports hook
(the index) and the audit (a commit).

A manifest is checked against its schema, its file name and its own arithmetic, and every
file it places must be in the tree with the sha256 it lists (a sidecar DVC keeps: its pointer);
every flag event it names must be in the tree too (:func:`manifest_findings`). The tree is
the index as the hooks read it (:class:`eee.store.staged.IndexTree`: what will be committed,
never the work tree) or a commit's (:class:`eee.store.tree.GitTree`); only the folders of the
files named are listed, never the whole store (:func:`check_manifests`).

A manifest is provenance, so it may only name as imported (imported, relocated, flagged)
what its own import added (:func:`attribution_findings`): every such file and every flag
event it names must be added by the commit that adds the manifest, or by the commits of the
same import right before it on the first-parent line (each says so in its message:
:func:`eee.governance.manifests.batch_line`, as ``eee import`` writes them). A manifest that
re-attributes records already in the store (a second manifest naming accepted records) is
refused by the imports hook and the audit, whoever signs it. Read from git only: the
commits' messages and what each added against its first parent.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eee.governance.manifests import MANIFEST_SCHEMA, OUTCOMES, PRESENT, REFUSED, WRITTEN, loads
from eee.reporting.findings import Finding
from eee.store.paths import IMPORTS_DIR, MANIFEST_SUFFIX


def check_manifests(
    paths: list[str],
    rev: str | None = None,
    cwd: str | Path | None = None,
    where: object = None,
    inherited: set[str] | frozenset[str] = frozenset(),
) -> list[Finding]:
    """Findings of the manifests ``paths`` in the index (``rev`` None) or in commit ``rev``
    (``inherited``: manifests a merge brings in as another parent holds them, whose
    attribution was audited in that parent's own commits)."""
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

    # every folder the manifests name listed in a few git calls (one per depth), not one a folder:
    # a 5,000-record import names some 5,000 folders
    if isinstance(tree, GitTree):
        tree.prefetch(
            p
            for _, doc in docs
            if isinstance(doc.get("files"), list)
            for item in doc["files"]
            if isinstance(item, dict) and isinstance(item.get("store"), str)
            for p in (item["store"], item["store"] + ".dvc")
        )

    @functools.cache
    def sha256_of(path: str) -> str | None:
        data = read(path) if in_tree(path) else None
        return hashlib.sha256(data).hexdigest() if data is not None else None

    for rel, doc in docs:
        found = manifest_findings(doc, rel, functools.cache(in_tree), sha256_of, file=show(rel))
        if not found and (rev is None or rel not in inherited):
            found = attribution_findings(doc, added_by_import(str(doc["id"]), rev, cwd), file=show(rel))
        out += found
    if rev is not None:
        tree.close()
    return out


def added_by_import(import_id: str, rev: str | None = None, cwd: str | Path | None = None) -> set[str]:
    """The paths the import ``import_id`` added: what the commit ``rev`` adds (the index:
    what the next commit adds, ``rev`` None), and what each commit of that import right
    before it on the first-parent line added (git objects and messages only)."""
    from eee.git.cli import commit_changes, first_parent_messages, has_commit
    from eee.governance.manifests import of_import

    if rev is None:
        from eee.store.staged import staged

        added = {c.path for c in staged(cwd) if c.status == "A"}
        start = "HEAD" if has_commit("HEAD", cwd) else None
    else:
        added = {c.path for c in commit_changes(rev, cwd) if c.status == "A"}
        start = f"{rev}^" if has_commit(f"{rev}^", cwd) else None
    if start is None:
        return added
    for commit, message in first_parent_messages(start, cwd):
        if not of_import(message, import_id):
            break
        added |= {c.path for c in commit_changes(commit, cwd) if c.status == "A"}
    return added


def attribution_findings(doc: dict[str, Any], added: set[str], file: str) -> list[Finding]:
    """Files (and flag events) the manifest ``doc`` names as imported that its import did
    not add (``added``: :func:`added_by_import`): it would re-attribute records already in
    the store."""
    from eee.store.jsonpath import format_path

    out: list[Finding] = []
    for i, item in enumerate(doc["files"]):
        if item["outcome"] not in WRITTEN:
            continue
        store = item.get("store")
        ours = store in added or (item["kind"] == "sidecar" and f"{store}.dvc" in added)
        if not ours:
            out.append(
                Finding(
                    file,
                    format_path(["files", i, "store"]),
                    f"names {store} as {item['outcome']}, but its import did not add it: a manifest records what "
                    "its own import added, never what is already in the store",
                    "a manifest is written by `eee import`, in the commit after its import's batches; a record "
                    "already in the store is already_present, or it was added by another commit",
                    check="import",
                )
            )
            continue
        for j, flag in enumerate(item.get("flags", [])):
            event = f"governance/events/{flag['event']}.yaml"
            if event not in added:
                out.append(
                    Finding(
                        file,
                        format_path(["files", i, "flags", j, "event"]),
                        f"names flag event {flag['event']}, which its import did not add",
                        "the flag events of an import come in its own batches, with the records they flag",
                        check="import",
                    )
                )
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
