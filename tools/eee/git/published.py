"""What is published: immutability starts at publication.

The rules for accepted files (records, sidecar pointers, events, import manifests, released
schema files) protect what others may already have seen and cited: the commits reachable
from the store's *published heads*. A commit not yet pushed may be amended or reset like any
git commit. The published heads are, all together:

- the trust anchor, when one is given (``eee audit --anchor REV``, ``$EEE_AUDIT_ANCHOR``:
  :func:`eee.rules.history.anchor_from`; the pre-push hook and the server gate pass the
  remote's old value);
- the branch's upstream (``@{upstream}``);
- every remote-tracking branch (``refs/remotes/*``): what was fetched from, or pushed to, a remote;
- at the server gate (``refs=True``), every ref of the bare repository: what it already
  holds was accepted (:mod:`eee.hooks.server`).

With none of them (a store that has never had a remote, on a branch without an upstream,
and no anchor), nothing tells what was published, so everything committed counts as
published (conservative): HEAD's files are accepted, as before. Setting an upstream
(``git push -u``, ``git branch --set-upstream-to``) or ``$EEE_AUDIT_ANCHOR`` says what is.

:class:`Published` answers, for a head (HEAD, the audited end): its *boundary*, the
published commits nearest to it (``git rev-list --boundary HEAD --not <published heads>``:
every commit of the head's history not reachable from them is unpublished, and the
boundary commits are the published ones it grew from; the head itself when it is
published), and whether a path was accepted there. Accepted files never change or go in
published history, so a path is accepted exactly when it is in a boundary commit's tree.
Every git process goes through :mod:`eee.git.cli`; the cost follows the number of
unpublished commits, not the size of the history.
"""

from __future__ import annotations

from pathlib import Path

from eee.git.cli import GitError, batch_check, git, resolve


class Published:
    """The published heads of the repository at ``cwd`` (see the module docstring)."""

    def __init__(self, cwd: str | Path | None, anchor: str | None = None, refs: bool = False) -> None:
        self.cwd = cwd
        self.refs = refs  # every ref of the repository is a published head (the server gate's bare repository)
        heads: list[str] = []
        if anchor is not None:
            commit = resolve(f"{anchor}^{{commit}}", cwd) if not anchor.startswith("-") else None
            if commit is not None:
                heads.append(commit)
        upstream = resolve("@{upstream}^{commit}", cwd)
        if upstream is not None:
            heads.append(upstream)
        remotes = git("for-each-ref", "--count=1", "--format=%(objectname)", "refs/remotes/", cwd=cwd, check=False)
        self.remotes = bool(remotes.strip())
        self.heads = list(dict.fromkeys(heads))
        self._walks: dict[str, tuple[list[str], frozenset[str]]] = {}

    @property
    def known(self) -> bool:
        """Whether anything tells what is published (else everything committed counts)."""
        return bool(self.heads) or self.remotes or self.refs

    def describe(self) -> str:
        """How the published heads were found, for messages."""
        if not self.known:
            return "no upstream, remote branch or trust anchor: everything committed counts as published"
        return "published: reachable from the upstream, a remote branch or the trust anchor"

    def _walk(self, head: str) -> tuple[list[str], frozenset[str]]:
        """(boundary, unpublished commits) of ``head``'s history."""
        commit = resolve(f"{head}^{{commit}}", self.cwd)
        if commit is None:
            return [], frozenset()
        if commit not in self._walks:
            lines: list[str] = []
            if self.known:
                args = ["rev-list", "--boundary", commit, "--not", *self.heads]
                if self.refs:
                    args.append("--all")
                elif self.remotes:
                    args.append("--remotes")
                try:
                    lines = git(*args, cwd=self.cwd).decode().split()
                except GitError:
                    lines = []
            unpublished = frozenset(line for line in lines if not line.startswith("-"))
            boundary = [line[1:] for line in lines if line.startswith("-")] if unpublished else [commit]
            self._walks[commit] = (boundary, unpublished)
        return self._walks[commit]

    def boundary(self, head: str) -> list[str]:
        """The published commits nearest to ``head``: ``head`` itself when it is published
        (every commit, when nothing tells what is published), else the published commits its
        unpublished ones grew from (none for a history never published)."""
        return self._walk(head)[0]

    def unpublished(self, head: str) -> frozenset[str]:
        """The commits of ``head``'s history that are not published (none when nothing tells)."""
        return self._walk(head)[1]

    def accepted(self, paths: list[str], head: str) -> set[str]:
        """The ``paths`` that were accepted (published) in ``head``'s history: in the tree of a
        boundary commit."""
        bases = self.boundary(head)
        if not bases or not paths:
            return set()
        names = [f"{b}:{p}" for b in bases for p in paths]
        found = batch_check(names, self.cwd)
        return {p for b in bases for p in paths if f"{b}:{p}" in found}


def adding_commit(path: str, head: str, cwd: str | Path | None) -> str | None:
    """The last commit of ``head``'s history that added ``path`` (None when none did)."""
    try:
        out = git("log", "-1", "--format=%H", "--diff-filter=A", "--end-of-options", head, "--", path, cwd=cwd)
    except GitError:
        return None
    return out.decode().strip() or None
