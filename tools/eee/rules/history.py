"""What the audit guarantees about history itself: merges, rewritten history, crafted trees.

- **Merges.** A merge commit changes nothing that any parent accepted: every protected file
  (record, sidecar pointer, governance event, released schema file) of every parent is in
  the merge unchanged; a merge may only bring in what one side added and the other lacks.
  Deleting an accepted record or event, editing a released schema, or resolving an add/add
  conflict on one record by keeping one side is an error, checked against each parent
  (``git diff-tree`` parent..merge). Two records of one uuid at different paths, one from
  each side, are an error too: the rule ``uuid`` of every commit (:mod:`eee.rules.uuids`).
- **Rewritten history.** The audit takes a trust anchor, a commit already accepted (the last
  audited or published head): ``--anchor REV`` or ``$EEE_AUDIT_ANCHOR``. It must be an
  ancestor of the audited head; amending, resetting or rebasing accepted commits makes it
  one no more, and the audit reports that as an error naming the anchor.
- **Replacements.** git objects are read with replacements disabled
  (``GIT_NO_REPLACE_OBJECTS``, set for every git call of the tools); replace refs, grafts
  and a shallow clone are reported, since they can hide or cut history.
- **Crafted trees.** Tree entries with ``..``, ``.``, ``.git``, empty or absolute
  components are findings (:func:`eee.store.paths.tree_path_problem`), never file names.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from eee.git.cli import (
    Change,
    GitError,
    common_dir,
    diff_tree_raw,
    is_ancestor,
    is_shallow,
    on_first_parent_chain,
    parse_raw,
    replace_refs,
    verify_commit,
)
from eee.reporting.findings import ERROR, WARNING, Finding
from eee.rules.commit import REGISTRY, protected_kind, registry_findings
from eee.store.paths import DATA_DIR, POINTER_SUFFIX, SIDECAR_SUFFIX

ANCHOR_ENV = "EEE_AUDIT_ANCHOR"
_NONE = {"", "0" * 40, "0" * 64}  # CI variables name "no previous commit" with zeros


def anchor_from(explicit: str | None) -> tuple[str, str] | None:
    """(revision, where it came from): ``--anchor``, else ``$EEE_AUDIT_ANCHOR``, else None."""
    if explicit is not None:
        return explicit, "--anchor"
    value = os.environ.get(ANCHOR_ENV, "").strip()
    if value in _NONE:
        return None
    return value, f"${ANCHOR_ENV}"


def anchor_findings(anchor: tuple[str, str] | None, end: str, cwd: Path, mainline: bool = True) -> list[Finding]:
    """The trust anchor must be a commit and an ancestor of ``end`` (both already verified)
    and, with ``mainline``, on ``end``'s first-parent chain: the accepted head of the
    protected branch stays on its mainline, whose commits judge everything merged onto it
    (:mod:`eee.rules.authority`)."""
    if anchor is None:
        return []
    rev, source = anchor
    where = f"trust anchor {rev} ({source})"
    try:
        commit = verify_commit(rev, cwd, "the trust anchor")
    except GitError as exc:
        return [
            Finding(
                where,
                "$",
                f"{exc}",
                "name the last accepted head (a commit of this repository); fetch it first in a shallow clone",
                check="history",
            )
        ]
    if is_ancestor(commit, end, cwd):
        if not mainline or on_first_parent_chain(commit, verify_commit(end, cwd), cwd):
            return []
        return [
            Finding(
                where,
                "$",
                f"the trust anchor {rev} ({commit[:10]}) is not on the first-parent chain of the audited head "
                f"{end[:10]}: the old head must stay on main's first-parent chain (a merge whose first parent is not "
                "the accepted head makes another history the mainline, and its roles the ones that judge)",
                "put your commits on top of the accepted head (`git pull --rebase`), or merge your branch into it "
                "(the accepted head the merge's first parent: `git checkout main && git merge BRANCH`), never it into "
                "your branch",
                check="history",
            )
        ]
    return [
        Finding(
            where,
            "$",
            f"the trust anchor {rev} ({commit[:10]}) is not an ancestor of the audited head {end[:10]}: "
            "history that was already accepted has been rewritten (amend, reset, rebase or force-push)",
            "accepted commits never change: restore the accepted history and add new commits on top of it",
            check="history",
        )
    ]


def replacement_findings(cwd: Path) -> list[Finding]:
    """Replace refs and grafts (ignored, but reported) and a shallow clone (history cut off)."""
    out: list[Finding] = []
    refs = replace_refs(cwd)
    if refs:
        out.append(
            Finding(
                "repository",
                "$",
                f"{len(refs)} replace ref(s) ({', '.join(r.rsplit('/', 1)[-1][:10] for r in refs[:3])}) are present; "
                "the audit ignores them and reads the objects themselves",
                "a replace ref can show another commit or tree than the one in history: unless you know why it "
                f"is there, delete it: `git replace -d {' '.join(r.rsplit('/', 1)[-1] for r in refs)}`",
                severity=WARNING,
                check="history",
            )
        )
    common = common_dir(cwd)
    if not common.is_absolute():
        common = cwd / common
    if (common / "info" / "grafts").exists():
        out.append(
            Finding(
                "repository",
                "$",
                "a grafts file (.git/info/grafts) rewrites the parents of commits",
                "remove .git/info/grafts; the audit must see the real parents",
                check="history",
            )
        )
    if is_shallow(cwd):
        out.append(
            Finding(
                "repository",
                "$",
                "the clone is shallow: commits before its cut-off are not audited",
                "fetch the whole history (`git fetch --unshallow`) or audit from a trust anchor inside it",
                severity=WARNING,
                check="history",
            )
        )
    return out


def _replaced_on_another_side(
    pointer: str, commit: str, parents: list[str], parent: str, read: Callable[[str, str], bytes | None]
) -> bool:
    """Whether a merge's deletion of the DVC pointer ``pointer`` of ``parent`` is a
    ``sidecar-to-git`` replacement another parent made (and its own audit checked): that
    parent holds no pointer and the same sidecar file as the merge."""
    if not pointer.endswith(SIDECAR_SUFFIX + POINTER_SUFFIX):
        return False
    sidecar = pointer[: -len(POINTER_SUFFIX)]
    mine = read(commit, sidecar)
    if mine is None:
        return False
    return any(other != parent and read(other, pointer) is None and read(other, sidecar) == mine for other in parents)


def merge_findings(
    commit: str,
    parents: list[str],
    cwd: Path,
    where: Callable[[str], str],
    released_at: Callable[[str], set[str]],
    read: Callable[[str, str], bytes | None],
) -> list[Finding]:
    """A merge keeps every protected file of every parent unchanged (see the module docstring).

    ``released_at(rev)``: the released schema folders at ``rev``; ``read(rev, path)``: a blob."""
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for n, parent in enumerate(parents, start=1):
        released = released_at(parent)
        try:
            changes = parse_raw(diff_tree_raw(parent, commit, cwd, full=True))
        except GitError:  # a crafted tree git's walker refuses: the raw objects instead
            changes = raw_changes(parent, commit, cwd)
        for change in changes:
            if change.status == "A":
                continue  # one side may add what the other lacks
            kind = protected_kind(change.path, released)
            if kind is None or (change.path, change.status) in seen:
                continue
            if change.status == "D" and _replaced_on_another_side(change.path, commit, parents, parent, read):
                continue
            seen.add((change.path, change.status))
            what = {"D": "deletes", "M": "changes", "T": "changes the type of"}.get(change.status, "changes")
            side = f"parent {n} ({parent[:10]})"
            message = f"the merge {what} an accepted {kind} of {side}"
            if change.status == "M" and change.path.startswith(DATA_DIR + "/"):
                message += "; an add/add conflict on one record is resolved by keeping both records, never one"
            out.append(
                Finding(
                    where(change.path),
                    "$",
                    message,
                    "a merge only brings in what one side added: redo the merge keeping every accepted file of "
                    "both sides unchanged (a corrected record is added beside the old one and supersedes it)",
                    severity=ERROR,
                    check="immutable",
                )
            )
        if read(parent, REGISTRY) != read(commit, REGISTRY):
            for f in registry_findings(read(parent, REGISTRY), read(commit, REGISTRY), where(REGISTRY)):
                f.message = f"the merge {f.message} (against parent {n})"
                out.append(f)
    return out


def raw_changes(parent: str | None, commit: str, cwd: Path) -> list[Change]:
    """What ``commit`` changed against ``parent``, by walking the raw tree objects: the
    audit's way through a tree that ``git diff-tree`` cannot read (a crafted entry). Every
    path comes back, however it is spelled; :func:`eee.store.paths.tree_path_problem` says which
    ones are no file names."""
    from eee.store.tree import GitTree  # lazy: the tree imports gitutil; only for a crafted tree

    zero = "0" * 40
    out: list[Change] = []
    with GitTree(cwd, commit) as reader:

        def root(rev: str | None) -> str | None:
            return GitTree(cwd, rev).root_tree() if rev is not None else None

        def walk(old: str | None, new: str | None, prefix: str) -> None:
            if old == new:
                return
            before = reader.raw_entries(old) if old else {}
            after = reader.raw_entries(new) if new else {}
            for name in sorted(set(before) | set(after)):
                path = prefix + name
                a = before[name][:2] if name in before else None
                b = after[name][:2] if name in after else None
                a_tree = a is not None and a[0] == "040000"
                b_tree = b is not None and b[0] == "040000"
                if a_tree or b_tree:
                    walk(a[1] if a_tree else None, b[1] if b_tree else None, path + "/")
                    a = None if a_tree else a
                    b = None if b_tree else b
                if (a is None and b is None) or a == b:
                    continue
                if a is None:
                    out.append(Change("A", path, "000000", b[0], zero, b[1]))
                elif b is None:
                    out.append(Change("D", path, a[0], "000000", a[1], zero))
                else:
                    status = "M" if a[0] == b[0] or {a[0], b[0]} == {"100644", "100755"} else "T"
                    out.append(Change(status, path, a[0], b[0], a[1], b[1]))

        walk(root(parent), root(commit), "")
    return out
