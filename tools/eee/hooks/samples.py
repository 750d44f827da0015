"""Hook ``eee-samples``: where the staged sidecars are kept, and whose objects the staged
DVC pointers name.

- A sidecar in git is at most the store's ``sidecar_git_max_bytes`` (``governance/settings.yaml``
  at HEAD, the parent of the commit being made; 1 MiB by default), and never both in git
  and tracked by a pointer (:func:`eee.rules.commit.sample_findings`). The validate hook
  checks it in full (every row, the row count, the record's checksum).
- A DVC pointer added is checked against its object (:mod:`eee.rules.objects`): found in
  the work tree, DVC's cache, else the store's DVC remote, its md5 must be the pointer's and
  its sha256 the record's checksum; a pointer whose object is nowhere is refused unless a
  maintainer's flag (``pointer-unverified``) accepts it.
"""

from __future__ import annotations

from pathlib import Path

from eee.hooks import data_paths, emit
from eee.reporting.findings import Finding
from eee.store.paths import DVC_POINTER, SIDECAR, file_kind


def main(argv: list[str]) -> int:
    paths = [p for p in data_paths(argv) if file_kind(p) in (SIDECAR, DVC_POINTER)]
    if not paths:
        return 0
    from eee.git.cli import has_commit
    from eee.rules.commit import sample_findings, settings_finding
    from eee.store import settings
    from eee.store.staged import index_tree, staged

    tree = index_tree()
    root = Path.cwd()
    findings: list[Finding] = []
    try:
        current = settings.of_commit(root, "HEAD") if has_commit("HEAD", root) else settings.DEFAULTS
    except settings.SettingsProblem as exc:
        findings.append(settings_finding(exc, "HEAD"))
    else:
        findings += sample_findings(paths, tree.git_size, lambda p: tree.git_size(p) is not None, current)
    added = {c.path for c in staged(root, has_commit("HEAD", root)) if c.status in ("A", "T")}
    pointers = [p for p in paths if file_kind(p) == DVC_POINTER and p in added]
    if pointers:
        from eee.dvc.objects import ObjectFinder
        from eee.rules.objects import object_findings
        from eee.validation.flagged import without_flagged

        findings += without_flagged(object_findings(tree, pointers, ObjectFinder(root, remote=True)))
    return emit(findings)
