"""Hook ``eee-immutable``: accepted records, sidecars, pointers, released schemas and events never change.

The one change an accepted DVC pointer allows is its replacement by the very file it tracks,
committed to git (``sidecar-to-git``: :func:`eee.rules.commit.sidecar_replacements`): the
pointer deleted, the sidecar added beside it, the file's md5 the pointer's and its sha256
the record's checksum.

Deleted and renamed paths never reach a pre-commit hook as arguments, so this hook asks
git for the staged changes itself (``--no-renames``, ``-z``) and takes no file names.

Immutability starts at publication (:mod:`eee.git.published`): a file is accepted once a
published commit holds it (reachable from the upstream, a remote branch or the trust anchor
``$EEE_AUDIT_ANCHOR``; with none of them, everything committed). A hook cannot tell
``git commit --amend`` from a new commit, so a change of a file that only the last commit
added, and that was never published, passes: amending or resetting an unpushed commit works
like in any git repository (a new commit that changes such a file instead is refused by the
pre-push audit, which sees the two commits). A file that an earlier unpublished commit
added is refused with the way to change it there.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from eee.git.cli import batch_check, blob, has_commit, resolve
from eee.hooks import emit
from eee.rules.commit import (
    FREE,
    REGISTRY,
    immutability_findings,
    protected_kind,
    registry_findings,
    released_versions,
    sidecar_replacements,
)
from eee.store.paths import DVC_POINTER, file_kind
from eee.store.staged import staged


def main(argv: list[str]) -> int:
    if not has_commit("HEAD"):
        return 0  # nothing is accepted before the first commit
    head_registry = blob(f"HEAD:{REGISTRY}")
    released = set(released_versions(head_registry))
    changes = staged(head=True)  # once for all hooks of the process (eee.store.staged.session)
    judge = None
    touched = [c.path for c in changes if c.status in ("M", "T", "D") and protected_kind(c.path, released)]
    bases: list[str] = []
    unknown: set[str] = set()  # added by HEAD, but nothing says what is published
    if touched or any(c.path == REGISTRY for c in changes):
        judge, bases, unknown = _judge(touched)
    replaced: set[str] = set()
    if any(c.status == "D" and file_kind(c.path) == DVC_POINTER for c in changes):
        from eee.store.staged import index_tree
        from eee.store.tree import GitTree

        with GitTree(Path.cwd(), "HEAD") as before:  # a pointer replaced by its file (sidecar-to-git)
            replaced, refused = sidecar_replacements(changes, before, index_tree())
    else:
        refused = []
    findings = refused + immutability_findings(changes, released, judge=judge, replaced=replaced)
    for f in findings:
        if f.file in unknown:
            f.hint = f"{f.hint}; {NOTHING_PUBLISHED}"
    if any(c.path == REGISTRY for c in changes):
        new = blob(f":{REGISTRY}")
        for base in bases:  # the versions released in published history keep their pins
            findings += [f for f in registry_findings(blob(f"{base}:{REGISTRY}"), new) if f not in findings]
    return emit(findings)


NOTHING_PUBLISHED = (
    "nothing here says what is published (no upstream, remote branch or $EEE_AUDIT_ANCHOR), so every commit "
    "counts as published: once the branch has an upstream (`git push -u`), or with "
    "EEE_AUDIT_ANCHOR=<the last published commit>, a commit not yet pushed may be amended"
)


def _judge(paths: list[str]) -> tuple[Callable[[str], str | None], list[str], set[str]]:
    """What each changed path was (see :func:`eee.rules.commit.immutability_findings`), the
    published commits nearest to HEAD, and the paths that only HEAD added when nothing says
    what is published (everything committed counts)."""
    from eee.git.published import Published, adding_commit  # lazy: only when an accepted kind changes
    from eee.rules.history import anchor_from

    anchor = anchor_from(None)
    published = Published(None, anchor[0] if anchor else None)
    accepted = published.accepted(paths, "HEAD")
    parents = [p for p in (resolve(f"HEAD^{n}") for n in (1, 2)) if p]
    in_parents = batch_check([f"{p}:{path}" for p in parents for path in paths]) if parents else {}
    earlier = {path for p in parents for path in paths if f"{p}:{path}" in in_parents}

    def judge(path: str) -> str | None:
        if path in accepted:
            return None
        if path in earlier:  # a change against the parent too: even an amend would show it
            return adding_commit(path, "HEAD^", None) or "HEAD^"
        return FREE

    unknown = set() if published.known else set(paths) - earlier
    return judge, published.boundary("HEAD"), unknown
