"""What a push may do to a ref, as the server gate judges it (:mod:`eee.hooks.server`).

- **Protected branches** (``protected-ref``): a branch that the store's settings protect
  (``protected_branches`` in ``governance/settings.yaml``, default ``main``) is never
  deleted and never moved to a commit that does not descend from its head (a force push).
  Its old head stays on the new head's first-parent chain (the mainline): a push whose
  new head reaches the old head only through a merge's other parent is refused, whatever
  its signatures, since the mainline's commits judge everything merged onto them
  (:mod:`eee.rules.authority`). The settings are read **before** the push, from the
  branch's own head and from the default branch's head (a branch either protects is
  protected), never from the pushed commits: nobody unprotects a branch and rewrites it in
  one push. A settings file there that cannot be read protects every branch until it is
  fixed (fast-forward pushes, the fix included, still go through).
- **The push's bounds** (``push``): a ref names a commit (an annotated tag of one is
  fine), and a push brings at most :data:`MAX_COMMITS` new commits (the git config
  ``eee.maxCommits`` of the bare repository says otherwise): the hook's work and its output
  stay bounded whatever is pushed.
- **The basis** (:class:`Push`): what the audit of a pushed ref is judged by. Every rule
  of the audit runs at the server (:func:`eee.validation.audit.audit` with ``push=``). The
  roles and settings that judge a pushed commit are those of the mainline commit before
  it (:mod:`eee.rules.authority`): for the push's first commit, and for whatever a merge
  brings onto the old head, the old head itself; a change of them within the push is
  itself judged by the ones before it. The store's DVC remote (``dvc_remote``) is read at
  the basis (:func:`judged_at`), never at a pushed commit.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple

from eee.git.cli import config, is_ancestor, on_first_parent_chain, resolve
from eee.reporting.findings import Finding
from eee.reporting.shown import command
from eee.store.paths import escaped
from eee.store.settings import SETTINGS_PATH, Settings, SettingsProblem, read
from eee.store.tree import GitTree

BRANCH_PREFIX = "refs/heads/"
REPLACE_PREFIX = "refs/replace/"
MAX_COMMITS = 20_000  # new commits one push may bring (git config eee.maxCommits of the bare repository)


def is_zero(oid: str) -> bool:
    """Whether ``oid`` is git's "no object" (a ref created, or deleted)."""
    return bool(oid) and set(oid) == {"0"}


class Push(NamedTuple):
    """One ref update judged at the server gate: what the audit of its commits is told."""

    ref: str  # the full ref name (refs/heads/main)
    old: str | None  # the ref's commit before the push; None: the push creates the ref
    new: str  # the pushed commit (an annotated tag peeled)
    basis: str | None  # the commit whose settings and roles judge the push (None: an empty repository)
    protected: bool  # a protected branch (deleting or rewriting it was already refused)


def judged_at(parent: str | None, push: Push | None) -> str | None:
    """The commit whose settings, roles and remote judge a commit whose first parent is
    ``parent``: at the server, the push's basis (the ref's head before the push), never a
    pushed commit; in a local audit, the parent itself."""
    return push.basis if push is not None else parent


def branch(ref: str) -> str | None:
    """The branch a ref names (``refs/heads/main`` -> ``main``), or None (a tag, a note)."""
    return ref[len(BRANCH_PREFIX) :] if ref.startswith(BRANCH_PREFIX) else None


def shown_ref(ref: str) -> str:
    """A ref name as messages show it (anything unshowable escaped)."""
    return escaped(ref, quote=False)


def settings_at(cwd: Path, rev: str) -> Settings:
    """The store's settings at the commit ``rev`` (:class:`SettingsProblem` when its file
    cannot be used); read once per commit."""
    found = _settings(str(cwd), rev)
    if isinstance(found, SettingsProblem):
        raise found
    return found


@functools.lru_cache(maxsize=64)
def _settings(cwd: str, rev: str) -> Settings | SettingsProblem:
    with GitTree(cwd, rev) as tree:
        try:
            return read(tree)
        except SettingsProblem as exc:
            return exc


class Protection(NamedTuple):
    protected: bool
    problem: str | None  # the settings could not be read: every branch is protected, and why


def protection(cwd: Path, ref: str, bases: list[str]) -> Protection:
    """Whether the branch ``ref`` is protected by the settings at any of the commits
    ``bases`` (none: the defaults protect ``main``). A settings file that cannot be used
    protects every branch (the defaults are never silently taken in its place)."""
    name = branch(ref)
    if name is None:
        return Protection(False, None)
    if not bases:
        return Protection(name in Settings().protected_branches, None)
    for rev in bases:
        try:
            if name in settings_at(cwd, rev).protected_branches:
                return Protection(True, None)
        except SettingsProblem as exc:
            fix = f"; {exc.hint}" if exc.hint else ""
            return Protection(True, f"{SETTINGS_PATH} at {rev[:10]} cannot be used ({exc.pointer}: {exc}{fix})")
    return Protection(False, None)


def _finding(ref: str, message: str, hint: str, check: str) -> Finding:
    return Finding(shown_ref(ref), "$", message, hint, check=check)


def ref_findings(ref: str, old: str | None, new: str | None, cwd: Path, guard: Protection) -> list[Finding]:
    """What the server refuses of the update of ``ref`` from ``old`` to ``new`` (None: no
    such commit; the ref is created, or deleted) before any commit is audited: a protected
    branch deleted or rewritten, a ref that names no commit."""
    name = branch(ref) or ref
    if ref.startswith(REPLACE_PREFIX):
        return [
            _finding(
                ref,
                "a replace ref is refused: it shows readers another object than the one history holds",
                "push the commits themselves; the store's history is read as it is (the audit ignores replace refs)",
                "push",
            )
        ]
    why = (
        f" ({guard.problem}: until it is fixed every branch is protected)"
        if guard.problem
        else f" ({SETTINGS_PATH}: protected_branches, read before the push)"
    )
    if new is None:
        if not guard.protected:
            return []
        return [
            _finding(
                ref,
                f"deleting the protected branch {shown_ref(name)} is refused{why}",
                "a protected branch is never deleted: what it published stays published; a maintainer who "
                "means to stop protecting it changes protected_branches in a commit of its own first",
                "protected-ref",
            )
        ]
    if old is not None and guard.protected and not is_ancestor(old, new, cwd):
        return [
            _finding(
                ref,
                f"the push rewrites the protected branch {shown_ref(name)}: its head {old[:10]} is not an ancestor "
                f"of the pushed {new[:10]} (a force push, an amend, a reset or a rebase of published commits){why}",
                "accepted history never changes: fetch, put your commits on top of the server's branch "
                f"(`git pull --rebase origin {name}`), and push without --force",
                "protected-ref",
            )
        ]
    if old is not None and guard.protected and not on_first_parent_chain(old, new, cwd):
        return [
            _finding(
                ref,
                f"the old head must stay on {shown_ref(name)}'s first-parent chain: {old[:10]} is an ancestor of the "
                f"pushed {new[:10]} only through a merge's other parent (a merge made the other way round, whose first "
                f"parent is another history: its roles would judge the push){why}",
                f"put your commits on top of the server's branch (`git pull --rebase origin {name}`), or merge your "
                f"branch into it with the branch's head as the first parent (`git checkout {name} && git merge "
                "BRANCH`), and push again",
                "protected-ref",
            )
        ]
    return []


def target_findings(ref: str, new_oid: str, cwd: Path) -> tuple[str | None, list[Finding]]:
    """The commit the pushed ``new_oid`` names (an annotated tag peeled), or None with the
    finding that refuses it (a tag of a tree or a blob names no commit)."""
    commit = resolve(f"{new_oid}^{{commit}}", cwd)
    if commit is not None:
        return commit, []
    return None, [
        _finding(
            ref,
            f"the pushed {new_oid[:10]} names no commit (a tag of a tree or a blob)",
            "the store's refs name commits: push a branch or a tag of a commit",
            "push",
        )
    ]


def too_many(ref: str, count: int, limit: int, old: str | None) -> Finding:
    """The finding that refuses a push bringing more than ``limit`` new commits."""
    name = branch(ref) or ref
    return _finding(
        ref,
        f"the push brings {count:,} new commits, more than the {limit:,} the server gate checks in one push",
        f"push in parts of at most {limit:,} commits, oldest first (`git push origin <commit>:{name}` for "
        "successive commits of the branch); the server's administrator sets the bound with "
        "`git config eee.maxCommits N` in the bare repository",
        "push",
    )


def max_commits(cwd: Path) -> int:
    """The bound on new commits per push: the bare repository's git config
    ``eee.maxCommits`` (a positive whole number), else :data:`MAX_COMMITS`."""
    value = config("eee.maxCommits", cwd)
    if value is not None and value.isdigit() and int(value) > 0:
        return int(value)
    return MAX_COMMITS


def audit_hint(old: str | None, new: str) -> str:
    """The command that shows every finding of a push from a clone holding its commits."""
    return command("audit", *(("--from", old[:10]) if old else ()), "--to", new[:10])
