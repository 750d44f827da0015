"""The audit: the commit rules applied to every commit of a range, after the fact.

``git commit --no-verify`` skips the hooks, and a push from elsewhere never ran them; the
audit checks each commit's own changes (against its first parent) with the same rules:
immutability, sidecars outside git, naming, validation of what the commit added or
modified, duplicate warnings.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path
from typing import Any

from eee.findings import FileResult, Finding, Summary
from eee.gitutil import GitError, blob, commit_changes, git, rev_list, tree_children
from eee.governance import EVENT_SUFFIX, EVENTS_DIR
from eee.paths import DATA_DIR, POINTER_SUFFIX, RECORD_SUFFIX, sidecar_path_for
from eee.rules import (
    REGISTRY,
    duplicate_findings,
    immutability_findings,
    naming_findings,
    registry_findings,
    released_versions,
    sample_findings,
)
from eee.strictjson import JSONProblem, loads
from eee.validate import Options, run


def _doc(data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    try:
        doc = loads(data)
    except JSONProblem:
        return None
    return doc if isinstance(doc, dict) else None


def audit_commit(commit: str, parent: str | None, cwd: Path) -> list[Finding]:
    """The rules applied to ``commit``'s own changes against its first ``parent``."""
    short = commit[:10]

    def where(path: str) -> str:
        return f"{short}:{path}"

    @functools.cache
    def read(rev_path: str) -> bytes | None:  # each blob once per commit, however many rules ask
        return blob(rev_path, cwd)

    changes = commit_changes(commit, cwd)
    findings: list[Finding] = []
    if parent is not None:
        released = set(released_versions(read(f"{parent}:{REGISTRY}")))
        findings += immutability_findings(changes, released, where)
        if any(c.path == REGISTRY for c in changes):
            findings += registry_findings(read(f"{parent}:{REGISTRY}"), read(f"{commit}:{REGISTRY}"), where(REGISTRY))
    present = [c for c in changes if c.status in ("A", "M", "T")]
    findings += sample_findings([c.path for c in present], where)

    findings += _event_findings(
        commit,
        [c for c in present if c.path.startswith(EVENTS_DIR + "/") and c.path.endswith(EVENT_SUFFIX)],
        cwd,
        where,
    )
    data_changes = [c for c in present if c.path.startswith(DATA_DIR + "/")]
    if not data_changes:
        return findings
    listing: dict[str, list[str]] = {}

    def siblings(directory: str) -> list[str]:
        if directory not in listing:
            listing[directory] = tree_children(commit, directory, cwd)
        return listing[directory]

    docs: dict[str, dict[str, Any] | None] = {}
    for c in data_changes:
        docs[c.path] = _doc(read(f"{commit}:{c.path}")) if c.path.endswith(RECORD_SUFFIX) else None
        findings += naming_findings(c.path, docs[c.path], siblings, where)

    # validation of what the commit added or modified, materialised in a scratch store
    with tempfile.TemporaryDirectory(prefix="eee-audit-") as tmp:
        for c in data_changes:
            target = Path(tmp) / c.path
            target.parent.mkdir(parents=True, exist_ok=True)
            if c.new_mode == "120000":
                os.symlink((read(f"{commit}:{c.path}") or b"").decode(errors="replace"), target)
                continue
            target.write_bytes(read(f"{commit}:{c.path}") or b"")
            if c.path.endswith(RECORD_SUFFIX):
                pointer = sidecar_path_for(c.path) + POINTER_SUFFIX
                data = read(f"{commit}:{pointer}")
                if data is not None and not (Path(tmp) / pointer).exists():
                    (Path(tmp) / pointer).write_bytes(data)
        summary = run([str(Path(tmp) / c.path) for c in data_changes], Options(root=Path(tmp)))
        prefix = str(Path(tmp).resolve()) + os.sep
        for result in summary.results:
            for f in result.findings:
                rel = os.path.abspath(f.file)
                if rel.startswith(prefix):
                    f.file = where(rel[len(prefix) :])
                elif f.file.startswith(tmp):
                    f.file = where(f.file[len(tmp) + 1 :])
                findings.append(f)

    for path, doc in docs.items():
        if doc is None:
            continue
        folder = path.rsplit("/", 1)[0]
        others = {}
        for name in siblings(folder):
            other = f"{folder}/{name}"
            if name.endswith(RECORD_SUFFIX) and other != path:
                loaded = _doc(read(f"{commit}:{other}"))
                if loaded is not None:
                    others[other] = loaded
        findings += duplicate_findings(path, doc, others, where)
    return findings


def _event_findings(commit: str, added: list[Any], cwd: Path, where: Any) -> list[Finding]:
    """New events of a commit, checked against the ledger and the records at that commit."""
    if not added:
        return []
    from eee.checks.events import check_events

    events = tree_children(commit, EVENTS_DIR, cwd)
    listed = git("ls-tree", "-r", "-z", "--name-only", commit, "--", DATA_DIR + "/", cwd=cwd).decode().split("\0")
    records = {
        rel.rsplit("/", 1)[-1][: -len(RECORD_SUFFIX)]
        for rel in listed
        if rel.endswith(RECORD_SUFFIX) and rel.count("/") == 4
    }
    with tempfile.TemporaryDirectory(prefix="eee-audit-events-") as tmp:
        root = Path(tmp)
        folder = root / EVENTS_DIR
        folder.mkdir(parents=True)
        for name in events:  # the ledger at that commit, where check_events reads it
            data = blob(f"{commit}:{EVENTS_DIR}/{name}", cwd)
            if data is not None:
                (folder / name).write_bytes(data)
        results = check_events(
            [str(root / c.path) for c in added],
            str(root),
            lambda p: where(Path(p).relative_to(root).as_posix()),
            exists=records.__contains__,
        )
    return [f for result in results for f in result.findings]


def audit(start: str | None, end: str, cwd: Path) -> Summary:
    try:
        commits = rev_list(start, end, cwd)
    except GitError as exc:
        return Summary([], fatal=f"cannot list commits: {exc}")
    results = []
    for info in commits:
        findings = audit_commit(info.commit, info.parent, cwd)
        results.append(FileResult(f"{info.commit[:10]} {info.subject.strip()}", "commit", findings=findings))
    return Summary(results)
