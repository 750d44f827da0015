"""The audit: the commit rules applied to every commit of a range, after the fact.

``git commit --no-verify`` skips the hooks, and a push from elsewhere never ran them; the
audit checks each commit's own changes (against its first parent) with the same rules:
immutability, sidecars outside git, naming, validation of what the commit added or
modified, duplicate warnings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eee.findings import FileResult, Finding, Summary
from eee.flagged import without_flagged
from eee.gitutil import GitError, commit_changes, rev_list
from eee.governance.duplicates import audit_duplicates
from eee.imports import IMPORTS_DIR
from eee.paths import DATA_DIR, EVENT, EVENTS_DIR, RECORD_SUFFIX, file_kind
from eee.rules.commit import (
    REGISTRY,
    immutability_findings,
    naming_findings,
    registry_findings,
    released_versions,
    sample_findings,
)
from eee.rules.events import check_events
from eee.strictjson import JSONProblem, loads
from eee.tree import GitTree, Tree, Unreadable
from eee.validate import Options, validate_tree


def _doc(tree: Tree, path: str) -> dict[str, Any] | None:
    try:
        doc = loads(tree.read(path))
    except (Unreadable, JSONProblem):
        return None
    return doc if isinstance(doc, dict) else None


def _bytes(tree: Tree, path: str) -> bytes | None:
    try:
        return tree.read(path)
    except Unreadable:
        return None


def audit_commit(commit: str, parent: str | None, cwd: Path) -> list[Finding]:
    """The rules applied to ``commit``'s own changes against its first ``parent``.

    Both commits are read as :class:`eee.tree.GitTree`: blobs come from git's object
    store, nothing is written to disk, and findings name ``<short-commit>:path``."""
    with GitTree(cwd, commit) as tree:
        return _audit(tree, commit, parent, cwd)


def _audit(tree: GitTree, commit: str, parent: str | None, cwd: Path) -> list[Finding]:
    where = tree.display
    changes = commit_changes(commit, cwd)
    findings: list[Finding] = []
    if parent is not None:
        with GitTree(cwd, parent) as before:
            old_registry = _bytes(before, REGISTRY)
        released = set(released_versions(old_registry))
        findings += immutability_findings(changes, released, where)
        if any(c.path == REGISTRY for c in changes):
            findings += registry_findings(old_registry, _bytes(tree, REGISTRY), where(REGISTRY))
    present = [c for c in changes if c.status in ("A", "M", "T")]
    findings += sample_findings([c.path for c in present], where)

    added_events = [c.path for c in present if c.path.startswith(EVENTS_DIR + "/") and file_kind(c.path) == EVENT]
    if added_events:  # new events, checked against the ledger and the records at that commit
        findings += [f for result in check_events(tree, added_events) for f in result.findings]
    added_manifests = [c.path for c in present if c.path.startswith(IMPORTS_DIR + "/")]
    if added_manifests:  # import manifests: schema, arithmetic, what they name is in the commit
        from eee.imports.check import check_manifests

        findings += check_manifests(added_manifests, commit, cwd, where)
    data_changes = [c.path for c in present if c.path.startswith(DATA_DIR + "/")]
    if not data_changes:
        return findings

    docs: dict[str, dict[str, Any] | None] = {}
    for path in data_changes:
        docs[path] = _doc(tree, path) if path.endswith(RECORD_SUFFIX) else None
        findings += naming_findings(path, docs[path], tree.names, where)

    # validation of what the commit added or modified, read from the commit itself (names
    # that differ only in case are the naming rule's, above)
    summary = validate_tree(tree, data_changes, Options(case_clash=False))
    findings += [f for result in summary.results for f in result.findings]

    # duplicates against the whole store at that commit, through the ledger's index
    findings += audit_duplicates(commit, [p for p, doc in docs.items() if doc is not None], cwd, where)
    return findings


def audit(start: str | None, end: str, cwd: Path) -> Summary:
    try:
        commits = rev_list(start, end, cwd)
    except GitError as exc:
        return Summary([], fatal=f"cannot list commits: {exc}")
    results = []
    for info in commits:
        # a record's flagged findings are accepted: the flag came with the record, or after it
        findings = without_flagged(audit_commit(info.commit, info.parent, cwd), (info.commit, end), cwd)
        results.append(FileResult(f"{info.commit[:10]} {info.subject.strip()}", "commit", findings=findings))
    return Summary(results)
