"""Every git process the tools start, through the git CLI: the one module that builds git
command lines.

GitPython costs ~0.2 s to import, more than a hook's whole budget; these are plain
subprocess calls with NUL-separated output, so any path survives. Objects are read as they
are, never through ``git replace`` (a replace ref can show the tools another commit, tree
or blob than the one in history): every process started here gets
``GIT_NO_REPLACE_OBJECTS=1`` in the environment it is given (:func:`environment`);
importing this module changes nothing in the process's own environment.

Blobs are read through :class:`BatchReader` (one long-lived ``git cat-file --batch``) and
sized through :func:`batch_check`; the one commit command is :func:`commit`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple


class GitError(Exception):
    pass


Where = str | Path | None


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git process: this process's, with replace objects ignored,
    and ``extra`` (``GIT_INDEX_FILE``, ...) over it."""
    env = dict(os.environ)
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    if extra:
        env.update(extra)
    return env


def run(
    *args: str, cwd: Where = None, input: bytes | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` with its output captured, whatever its exit code."""
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=input, env=environment(env))


def git(
    *args: str, cwd: Where = None, check: bool = True, input: bytes | None = None, env: Mapping[str, str] | None = None
) -> bytes:
    """The standard output of ``git ARGS``; GitError (with git's message) when it fails and ``check``."""
    proc = run(*args, cwd=cwd, input=input, env=env)
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def succeeds(*args: str, cwd: Where = None) -> bool:
    return run(*args, cwd=cwd).returncode == 0


def fields(*args: str, cwd: Where = None) -> Iterator[bytes]:
    """The NUL-separated fields of ``git ARGS``'s output as it comes (bounded memory); the
    command is stopped when the caller stops reading."""
    proc = subprocess.Popen(
        ["git", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environment()
    )
    assert proc.stdout is not None
    rest = b""
    try:
        while True:
            block = proc.stdout.read(1 << 16)
            if not block:
                break
            parts = (rest + block).split(b"\0")
            rest = parts.pop()
            yield from parts
        if rest:
            yield rest
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.wait()


def blob_chunks(blob: str, size: int, cwd: Where = None) -> Iterator[bytes]:
    """The blob ``blob`` in pieces of ``size`` bytes, streamed from ``git cat-file`` (a large
    file is never held whole in memory)."""
    proc = subprocess.Popen(
        ["git", "cat-file", "blob", "--end-of-options", blob], cwd=cwd, stdout=subprocess.PIPE, env=environment()
    )
    assert proc.stdout is not None
    try:
        while piece := proc.stdout.read(size):
            yield piece
    finally:
        proc.stdout.close()
        proc.kill()
        proc.wait()


# Object names per round trip to ``git cat-file`` (41 KB of ids: fits an empty pipe, no deadlock).
BATCH_CHUNK = 1000


class BatchReader:
    """One long-lived ``git cat-file --batch``: the one reader of git's objects. Objects are
    named by id, ``rev:path`` or ``:path`` (the index); they are asked for a chunk at a time,
    so that memory holds one chunk whatever the number asked for."""

    def __init__(self, cwd: Where = None) -> None:
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                cwd=self.cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=environment(),
            )
        return self.proc

    def objects(self, names: Iterable[str]) -> Iterator[tuple[str, str | None, bytes | None]]:
        """(name, type, content) of each name, in order; (name, None, None) when git has no
        such object (or the name cannot be asked: it holds a line break)."""
        names = list(names)
        proc = self._start()
        stdin, stdout = proc.stdin, proc.stdout
        assert stdin is not None and stdout is not None
        for i in range(0, len(names), BATCH_CHUNK):
            part = names[i : i + BATCH_CHUNK]
            asked = [n for n in part if "\n" not in n and "\r" not in n]
            stdin.write("".join(n + "\n" for n in asked).encode("utf-8", "surrogateescape"))
            stdin.flush()
            for name in part:
                if "\n" in name or "\r" in name:
                    yield name, None, None
                    continue
                header = stdout.readline().rsplit(None, 2)
                if len(header) == 3 and header[2].isdigit():  # "<id> <type> <size>", then the content
                    data = stdout.read(int(header[2]))
                    stdout.read(1)
                    yield name, header[1].decode(), data
                else:  # "<name> missing" (or ambiguous): no content follows
                    yield name, None, None

    def blobs(self, names: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """(name, bytes, or None when it is no blob) of each name, in order."""
        for name, kind, data in self.objects(names):
            yield name, data if kind == "blob" else None

    def blob(self, name: str) -> bytes | None:
        ((_, data),) = self.blobs([name])
        return data

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait()
            if self.proc.stdout:
                self.proc.stdout.close()
            self.proc = None

    def __enter__(self) -> BatchReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BatchCheck:
    """One long-lived ``git cat-file --batch-check``: which objects exist, one question at a
    time (``rev:path`` names), for a reader that asks as it goes (the identity rule asks
    whether a record was in the commit an alias names)."""

    def __init__(self, cwd: Where = None) -> None:
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None

    def kind(self, name: str) -> str | None:
        """The type of the object ``name`` names (blob, tree, commit, tag), or None."""
        if "\n" in name or "\r" in name:
            return None
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                ["git", "cat-file", "--batch-check=%(objecttype)"],
                cwd=self.cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=environment(),
            )
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            stdin.flush()
            line = stdout.readline().strip()
        except (BrokenPipeError, OSError):
            return None
        return line.decode() if line in (b"blob", b"tree", b"commit", b"tag") else None

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait()
            if self.proc.stdout:
                self.proc.stdout.close()
            self.proc = None


def read_blobs(names: list[str], cwd: Where = None) -> Iterator[tuple[str, bytes | None]]:
    """(name, bytes or None) of each name through one :class:`BatchReader`."""
    if not names:
        return
    with BatchReader(cwd) as reader:
        yield from reader.blobs(names)


def batch_check(names: list[str], cwd: Where = None) -> dict[str, tuple[str, str, int]]:
    """name -> (object id, type, size) for the names git has, from one ``git cat-file --batch-check``."""
    asked = [n for n in dict.fromkeys(names) if "\n" not in n and "\r" not in n]
    if not asked:
        return {}
    out = git(
        "cat-file",
        "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        cwd=cwd,
        check=False,
        input="".join(f"{n}\n" for n in asked).encode("utf-8", "surrogateescape"),
    )
    found: dict[str, tuple[str, str, int]] = {}
    for name, line in zip(asked, out.split(b"\n"), strict=False):  # one line per name, in order
        parts = line.split(b" ")
        if len(parts) == 3 and parts[2].isdigit() and parts[1] in (b"blob", b"tree", b"commit", b"tag"):
            found[name] = (parts[0].decode(), parts[1].decode(), int(parts[2]))
    return found


def toplevel(cwd: str | Path | None = None) -> Path:
    return Path(git("rev-parse", "--show-toplevel", cwd=cwd).decode().strip())


def git_dir(cwd: str | Path | None = None) -> Path:
    """The repository's git directory, absolute (``.git``, or a worktree's own)."""
    return Path(git("rev-parse", "--absolute-git-dir", cwd=cwd).decode().strip())


def has_commit(rev: str = "HEAD", cwd: str | Path | None = None) -> bool:
    return succeeds("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", cwd=cwd)


def resolve(rev: str, cwd: Where = None) -> str | None:
    """The object id ``rev`` names (``HEAD``, ``HEAD:path``, ...), or None."""
    proc = run("rev-parse", "--verify", "--quiet", "--end-of-options", rev, cwd=cwd)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip() or None


def is_ancestor(commit: str, of: str, cwd: Where = None) -> bool:
    return succeeds("merge-base", "--is-ancestor", "--end-of-options", commit, of, cwd=cwd)


def verify_commit(rev: str, cwd: str | Path | None = None, what: str = "revision") -> str:
    """The full id of the commit ``rev`` names, or GitError naming ``rev``.

    Every revision a user gives reaches git only through here: it must name a commit
    (``rev-parse --verify --end-of-options REV^{commit}``), so ``--output=FILE`` or any
    other option-shaped text is refused, never passed on as an option."""
    if not rev or rev.startswith("-") or "\0" in rev:
        raise GitError(f"{what} {rev!r} is not a revision (it looks like an option); name a commit")
    proc = run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", cwd=cwd)
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
    proc = run("ls-tree", "-z", "--name-only", "--end-of-options", spec, cwd=cwd)
    if proc.returncode != 0:
        return []
    return [n.decode("utf-8", errors="surrogateescape") for n in proc.stdout.split(b"\0") if n]


def blob(rev_path: str, cwd: str | Path | None = None) -> bytes | None:
    """The bytes of ``rev:path`` (``:path`` for the index), or None when absent."""
    proc = run("cat-file", "blob", "--end-of-options", rev_path, cwd=cwd)
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
    proc = run("config", "--get", key, cwd=cwd)
    value = proc.stdout.decode().strip()
    return value or None


def commit(message: list[str], *, cwd: Where, index_file: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """``git commit`` of the index ``index_file`` (an absolute path; the repository's own
    index when None) through the hooks, never ``--no-verify``; each part of ``message`` is
    one paragraph. The one commit command of the tools (:mod:`eee.write.commit` is its one
    caller): signing (``-S``; git's own ``commit.gpgSign``, ``gpg.format ssh`` and
    ``user.signingKey`` settings already apply) is added here."""
    args = ["commit", "-q", "--no-edit"]
    for part in message:
        args += ["-m", part]
    return run(*args, cwd=cwd, env={"GIT_INDEX_FILE": index_file} if index_file else None)
