"""Hook ``eee-immutable``: accepted records, pointers, released schemas and events never change.

Deleted and renamed paths never reach a pre-commit hook as arguments, so this hook asks
git for the staged changes itself (``--no-renames``, ``-z``) and takes no file names.
"""

from __future__ import annotations

from eee.git.cli import blob, has_commit
from eee.hooks import emit
from eee.rules.commit import REGISTRY, immutability_findings, registry_findings, released_versions
from eee.store.staged import staged


def main(argv: list[str]) -> int:
    if not has_commit("HEAD"):
        return 0  # nothing is accepted before the first commit
    head_registry = blob(f"HEAD:{REGISTRY}")
    released = set(released_versions(head_registry))
    changes = staged(head=True)  # once for all hooks of the process (eee.store.staged.session)
    findings = immutability_findings(changes, released)
    if any(c.path == REGISTRY for c in changes):
        findings += registry_findings(head_registry, blob(f":{REGISTRY}"))
    return emit(findings)
