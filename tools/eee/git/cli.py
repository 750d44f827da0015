"""The few git queries the hooks and the audit need, through the git CLI.

GitPython costs ~0.2 s to import, more than a hook's whole budget; these are plain
subprocess calls with NUL-separated output, so any path survives.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NamedTuple


class GitError(Exception):
    pass


# Objects are read as they are, never through `git replace` (a replace ref can show the
# tools another commit, tree or blob than the one in history). Set once for this process
# and the git processes it starts.
os.environ["GIT_NO_REPLACE_OBJECTS"] = "1"


def git(*args: str, cwd: str | Path | None = None, check: bool = True, input: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=input)
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def toplevel(cwd: str | Path | None = None) -> Path:
    return Path(git("rev-parse", "--show-toplevel", cwd=cwd).decode().strip())


def git_dir(cwd: str | Path | None = None) -> Path:
    """The repository's git directory, absolute (``.git``, or a worktree's own)."""
    return Path(git("rev-parse", "--absolute-git-dir", cwd=cwd).decode().strip())


def has_commit(rev: str = "HEAD", cwd: str | Path | None = None) -> bool:
    return (
        subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
            cwd=cwd,
            capture_output=True,
        ).returncode
        == 0
    )


def verify_commit(rev: str, cwd: str | Path | None = None, what: str = "revision") -> str:
    """The full id of the commit ``rev`` names, or GitError naming ``rev``.

    Every revision a user gives reaches git only through here: it must name a commit
    (``rev-parse --verify --end-of-options REV^{commit}``), so ``--output=FILE`` or any
    other option-shaped text is refused, never passed on as an option."""
    if not rev or rev.startswith("-") or "\0" in rev:
        raise GitError(f"{what} {rev!r} is not a revision (it looks like an option); name a commit")
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
        cwd=cwd,
        capture_output=True,
    )
    commit = proc.stdout.decode(errors="replace").strip()
    if proc.returncode != 0 or len(commit) not in (40, 64):
        raise GitError(f"{what} {rev!r} names no commit of this repository")
    return commit


def empty_tree(cwd: str | Path | None = None) -> str:
    return git("hash-object", "-t", "tree", os.devnull, cwd=cwd).decode().strip()


class Change(NamedTuple):
    """One entry of ``git diff --raw``: status A, M, D or T, with modes and blob ids."""

    status: str
    path: str
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str

    @property
    def is_symlink_now(self) -> bool:
        return self.new_mode == "120000"


def parse_raw(out: bytes) -> list[Change]:
    """The changes of ``git diff --raw -z --no-renames`` output."""
    changes: list[Change] = []
    fields = out.split(b"\0")
    i = 0
    while i < len(fields) - 1:
        meta = fields[i].decode()
        if not meta.startswith(":"):
            i += 1
            continue
        old_mode, new_mode, old_blob, new_blob, status = meta[1:].split(" ")
        path = fields[i + 1].decode("utf-8", errors="surrogateescape")
        changes.append(Change(status[0], path, old_mode, new_mode, old_blob, new_blob))
        i += 2
    return changes


def staged_raw(cwd: str | Path | None = None, head: bool | None = None) -> bytes:
    """``git diff --cached --raw -z --no-renames`` against HEAD (or the empty tree);
    ``head``: whether HEAD exists, when the caller already knows."""
    if head is None:
        head = has_commit("HEAD", cwd)
    base = "HEAD" if head else empty_tree(cwd)
    return git(
        "diff",
        "--cached",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        "--full-index",
        "--end-of-options",
        base,
        cwd=cwd,
    )


def staged_changes(cwd: str | Path | None = None, head: bool | None = None) -> list[Change]:
    """What the next commit changes, renames split into delete + add, always asked of git
    itself (no environment variable or file can stand in for the index)."""
    return parse_raw(staged_raw(cwd, head))


def commit_changes(commit: str, cwd: str | Path | None = None, parent: str | None = None) -> list[Change]:
    """What ``commit`` changed against ``parent`` (its first parent by default; everything,
    for a root commit). A merge is compared with that parent explicitly: ``diff-tree`` of a
    merge alone shows nothing."""
    if parent is None:
        listed = git("rev-list", "--parents", "-n", "1", "--end-of-options", commit, cwd=cwd).decode().split()
        parent = listed[1] if len(listed) > 1 else None
    root = [] if parent is not None else ["--root"]
    against = [parent, commit] if parent is not None else [commit]
    out = git(
        "diff-tree",
        "-r",
        *root,
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        "--no-commit-id",
        "--end-of-options",
        *against,
        cwd=cwd,
    )
    return parse_raw(out)


def tree_children(rev: str, directory: str, cwd: str | Path | None = None) -> list[str]:
    """Names of the entries of ``directory`` in ``rev`` (empty when it does not exist)."""
    spec = f"{rev}:{directory}" if directory else f"{rev}^{{tree}}"
    proc = subprocess.run(
        ["git", "ls-tree", "-z", "--name-only", "--end-of-options", spec], cwd=cwd, capture_output=True
    )
    if proc.returncode != 0:
        return []
    return [n.decode("utf-8", errors="surrogateescape") for n in proc.stdout.split(b"\0") if n]


def blob(rev_path: str, cwd: str | Path | None = None) -> bytes | None:
    """The bytes of ``rev:path`` (``:path`` for the index), or None when absent."""
    proc = subprocess.run(["git", "cat-file", "blob", "--end-of-options", rev_path], cwd=cwd, capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


class CommitInfo(NamedTuple):
    commit: str
    parent: str | None  # the first parent; None for a root commit
    subject: str
    parents: tuple[str, ...] = ()  # all parents (more than one: a merge)


def rev_list(start: str | None, end: str, cwd: str | Path | None = None) -> list[CommitInfo]:
    """Commits in ``start..end`` (all ancestors of ``end`` when ``start`` is None), oldest
    first, each with its first parent and subject (one git call for the whole range)."""
    end = verify_commit(end, cwd, "--to")
    spec = [end] if start is None else [f"^{verify_commit(start, cwd, '--from')}", end]
    out = git(
        "log", "-z", "--reverse", "--topo-order", "--format=%H%x1f%P%x1f%s", "--end-of-options", *spec, "--", cwd=cwd
    )
    commits = []
    for entry in out.decode("utf-8", errors="replace").split("\0"):
        if entry.strip():
            commit, parents, subject = entry.strip("\n").split("\x1f", 2)
            every = tuple(parents.split())
            commits.append(CommitInfo(commit, every[0] if every else None, subject, every))
    return commits


def config(key: str, cwd: str | Path | None = None) -> str | None:
    proc = subprocess.run(["git", "config", "--get", key], cwd=cwd, capture_output=True)
    value = proc.stdout.decode().strip()
    return value or None
