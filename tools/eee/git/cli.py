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

    def objects(self, names: Iterable[str], limit: int | None = None) -> Iterator[tuple[str, str | None, bytes | None]]:
        """(name, type, content) of each name, in order; (name, None, None) when git has no
        such object (or the name cannot be asked: it holds a line break); (name, type, None)
        for an object larger than ``limit`` bytes, whose content is passed over a piece at a
        time, never held (an object pushed to a server can be of any size)."""
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
                    size = int(header[2])
                    if limit is not None and size > limit:
                        while size > 0:  # passed over: the next object's header follows it
                            piece = stdout.read(min(size, 1 << 20))
                            if not piece:
                                break
                            size -= len(piece)
                        stdout.read(1)
                        yield name, header[1].decode(), None
                        continue
                    data = stdout.read(size)
                    stdout.read(1)
                    yield name, header[1].decode(), data
                else:  # "<name> missing" (or ambiguous): no content follows
                    yield name, None, None

    def blobs(self, names: Iterable[str], limit: int | None = None) -> Iterator[tuple[str, bytes | None]]:
        """(name, bytes, or None when it is no blob or is larger than ``limit``) of each name, in order."""
        for name, kind, data in self.objects(names, limit):
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


def read_blobs(names: list[str], cwd: Where = None, limit: int | None = None) -> Iterator[tuple[str, bytes | None]]:
    """(name, bytes or None) of each name through one :class:`BatchReader` (None, too, for
    a blob larger than ``limit``)."""
    if not names:
        return
    with BatchReader(cwd) as reader:
        yield from reader.blobs(names, limit)


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


def bare_git_dir(path: str | Path) -> Path:
    """The absolute git directory of the bare repository at ``path``; :class:`GitError`
    saying what ``path`` is instead (no folder, no git directory, a work tree's)."""
    folder = Path(path)
    if not folder.is_dir():
        raise GitError(f"{path}: no such folder")
    proc = run("--git-dir", str(folder), "rev-parse", "--is-bare-repository", "--absolute-git-dir", cwd=folder)
    lines = proc.stdout.decode(errors="replace").split("\n")
    if proc.returncode != 0 or len(lines) < 2:
        if (folder / ".git").exists():
            raise GitError(f"{path} is a work tree, not a bare repository (its git directory is {folder / '.git'})")
        raise GitError(f"{path} is not a git directory")
    if lines[0].strip() != "true":
        raise GitError(f"{path} is the git directory of a work tree (core.bare is not true), not a bare repository")
    return Path(lines[1].strip())


def has_commit(rev: str = "HEAD", cwd: str | Path | None = None) -> bool:
    return succeeds("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", cwd=cwd)


def resolve(rev: str, cwd: Where = None) -> str | None:
    """The object id ``rev`` names (``HEAD``, ``HEAD:path``, ...), or None."""
    proc = run("rev-parse", "--verify", "--quiet", "--end-of-options", rev, cwd=cwd)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip() or None


def is_shallow(cwd: Where = None) -> bool:
    """Whether the repository is a shallow clone (its history cut off at some commits)."""
    proc = run("rev-parse", "--is-shallow-repository", cwd=cwd)
    return proc.returncode == 0 and proc.stdout.decode().strip() == "true"


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


def commit_changes(
    commit: str, cwd: str | Path | None = None, parent: str | None = None, paths: list[str] | None = None
) -> list[Change]:
    """What ``commit`` changed against ``parent`` (its first parent by default; everything,
    for a root commit). A merge is compared with that parent explicitly: ``diff-tree`` of a
    merge alone shows nothing. ``paths``: only under these (literal pathspecs: a file, or a
    folder ending in /)."""
    if paths is not None and not paths:
        return []
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
        *(["--", *(f":(literal){p.rstrip('/')}" for p in paths)] if paths is not None else []),
        cwd=cwd,
    )
    return parse_raw(out)


def first_parent_messages(rev: str, cwd: Where = None) -> Iterator[tuple[str, str]]:
    """(commit, message) of ``rev`` and its first-parent ancestors, newest first, as git
    gives them (streamed: the walk stops when the caller stops reading)."""
    for entry in fields("log", "--first-parent", "-z", "--format=%H%x1f%B", "--end-of-options", rev, "--", cwd=cwd):
        commit, sep, message = entry.decode("utf-8", "replace").lstrip("\n").partition("\x1f")
        if sep:
            yield commit, message


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


def rev_list(
    start: str | None, end: str, cwd: str | Path | None = None, not_remote: str | None = None
) -> list[CommitInfo]:
    """Commits in ``start..end`` (all ancestors of ``end`` when ``start`` is None), oldest
    first, each with its first parent and subject (one git call for the whole range).
    ``not_remote``: also leave out what the remote-tracking branches of that remote hold
    (``--not --remotes=NAME``: what a push to a new branch of it publishes)."""
    end = verify_commit(end, cwd, "--to")
    spec = [end] if start is None else [f"^{verify_commit(start, cwd, '--from')}", end]
    exclude: list[str] = []
    if not_remote is not None:
        if not not_remote or not_remote.startswith("-") or any(c in not_remote for c in "*?[\\ \0"):
            raise GitError(f"{not_remote!r} is not a remote name")
        exclude = ["--not", f"--remotes={not_remote}", "--not"]
    return _commit_infos(git("log", "-z", *_LOG, *exclude, "--end-of-options", *spec, "--", cwd=cwd))


_LOG = ("--reverse", "--topo-order", "--format=%H%x1f%P%x1f%s")


def _excluded(seen: Iterable[str]) -> bytes:
    """``--stdin`` lines that leave out the history of each commit of ``seen`` (full ids)."""
    return "".join(f"^{c}\n" for c in seen if len(c) in (40, 64) and c.isalnum()).encode()


def count_new(end: str, cwd: Where = None, seen: Iterable[str] = ()) -> int:
    """How many commits of ``end``'s history no ref of the repository reaches (nor any
    commit of ``seen``): ``git rev-list --count END --not --all``, what a push brings."""
    end = verify_commit(end, cwd, "the pushed commit")
    out = git("rev-list", "--count", end, "--not", "--all", "--stdin", cwd=cwd, input=_excluded(seen))
    return int(out.decode().strip() or "0")


def rev_list_new(end: str, cwd: Where = None, seen: Iterable[str] = ()) -> list[CommitInfo]:
    """The commits of ``end``'s history that no ref of the repository reaches (nor any
    commit of ``seen``: those of an earlier ref of the same push), oldest first
    (``git log END --not --all``): in a ``pre-receive`` hook, what the push brings (the
    refs have not moved yet; the pushed objects are read from git's quarantine)."""
    end = verify_commit(end, cwd, "the pushed commit")
    # ``end`` is a full object id (verified): no option can hide in it, and ``--not --all``
    # must stay options (``--end-of-options`` would make them revisions)
    out = git("log", "-z", *_LOG, end, "--not", "--all", "--stdin", cwd=cwd, input=_excluded(seen))
    return _commit_infos(out)


def _commit_infos(out: bytes) -> list[CommitInfo]:
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


def commit(
    message: list[str], *, cwd: Where, index_file: str | None = None, sign: bool = False
) -> subprocess.CompletedProcess[bytes]:
    """``git commit`` of the index ``index_file`` (an absolute path; the repository's own
    index when None) through the hooks, never ``--no-verify``; each part of ``message`` is
    one paragraph. The one commit command of the tools (:mod:`eee.write.commit` is its one
    caller). ``sign``: ``-S``, git's own signing with the user's configuration (``gpg.format
    ssh`` and ``user.signingKey``: :func:`signing_config`)."""
    args = ["commit", "-q", "--no-edit"]
    env = {"GIT_INDEX_FILE": index_file} if index_file else {}
    if sign:
        args.append("-S")
        env["EEE_COMMIT_SIGNED"] = "1"  # the gate's reminder to sign is spared (the audit checks the signature)
    for part in message:
        args += ["-m", part]
    return run(*args, cwd=cwd, env=env or None)


# --- who committed, who signed -----------------------------------------------------------------


def _ident(line: bytes) -> tuple[str, str]:
    """(name, email) of an ident (``Name <email> time tz``), read from its last ``<...>``."""
    text = line.decode("utf-8", "replace")
    head, lt, rest = text.rpartition(" <")
    if not lt:
        head, lt, rest = text.rpartition("<")
    email = rest.partition(">")[0] if lt else ""
    return (head.strip() if lt else text.strip()), email.strip()


def _idents(commits: Iterable[str], header: bytes, cwd: Where) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    with BatchReader(cwd) as reader:
        for name, kind, data in reader.objects(list(dict.fromkeys(commits))):
            if kind != "commit" or data is None:
                continue
            for line in data.split(b"\n"):
                if not line:
                    break  # the end of the headers
                if line.startswith(header):
                    out[name] = _ident(line[len(header) : line.rfind(b">") + 1])
                    break
    return out


def authors(commits: Iterable[str], cwd: Where = None) -> dict[str, tuple[str, str]]:
    """commit -> (author name, author email), read from the raw commit objects (one
    ``cat-file --batch``): whatever bytes a crafted commit holds, the fields come back as
    the header says them, never shifted into each other."""
    return _idents(commits, b"author ", cwd)


def committers(commits: Iterable[str], cwd: Where = None) -> dict[str, tuple[str, str]]:
    """commit -> (committer name, committer email), read as :func:`authors` reads authors:
    who committed is who acted (an event's actor, :mod:`eee.rules.authority`)."""
    return _idents(commits, b"committer ", cwd)


def _var_ident(var: str, cwd: Where) -> tuple[str, str] | None:
    proc = run("var", var, cwd=cwd)
    if proc.returncode != 0:
        return None
    line = proc.stdout.strip()
    return _ident(line[: line.rfind(b">") + 1])


def ident(cwd: Where = None) -> tuple[str, str] | None:
    """(name, email) the next commit's author will have (``git var GIT_AUTHOR_IDENT``: the
    GIT_AUTHOR_* variables a commit in progress sets, else the configuration); None when unset."""
    return _var_ident("GIT_AUTHOR_IDENT", cwd)


def committer_ident(cwd: Where = None) -> tuple[str, str] | None:
    """(name, email) git will record as the next commit's committer (``git var
    GIT_COMMITTER_IDENT``: ``GIT_COMMITTER_NAME``/``GIT_COMMITTER_EMAIL`` over the
    configuration, as git itself takes them); None when git cannot tell (it then refuses
    to commit too)."""
    return _var_ident("GIT_COMMITTER_IDENT", cwd)


def identity_said(cwd: Where = None) -> set[str]:
    """Which of the committer's name and email the user said (``{"name", "email"}`` at most):
    ``GIT_COMMITTER_NAME``/``GIT_COMMITTER_EMAIL`` (or ``EMAIL``), else ``committer.*`` or
    ``user.*`` in git's configuration (one git call), as opposed to what git would guess from
    the system's accounts."""
    said = {part for part in ("name", "email") if os.environ.get(f"GIT_COMMITTER_{part.upper()}")}
    if os.environ.get("EMAIL"):
        said.add("email")
    if len(said) < 2:
        proc = run("config", "-z", "--get-regexp", r"^(user|committer)\.(name|email)$", cwd=cwd)
        for item in proc.stdout.split(b"\0"):
            key, _, value = item.decode("utf-8", "replace").partition("\n")
            if key and value.strip():
                said.add(key.rsplit(".", 1)[-1].lower())
    return said


SIGNING_KEYS = ("gpg.format", "user.signingkey", "commit.gpgsign", "gpg.ssh.defaultkeycommand")


def signing_config(cwd: Where = None) -> dict[str, str]:
    """The user's signing settings (:data:`SIGNING_KEYS`, lower-case names) in one git call."""
    proc = run(
        "config",
        "-z",
        "--get-regexp",
        r"^(gpg\.format|user\.signingkey|commit\.gpgsign|gpg\.ssh\.defaultkeycommand)$",
        cwd=cwd,
    )
    found: dict[str, str] = {}
    for item in proc.stdout.split(b"\0"):
        key, _, value = item.decode("utf-8", "replace").partition("\n")
        if key:
            found[key.lower()] = value
    return found


def ssh_signing(cwd: Where = None, config: dict[str, str] | None = None) -> bool:
    """Whether the user's git signs with SSH: ``gpg.format ssh`` and a key (``user.signingkey``,
    or ``gpg.ssh.defaultKeyCommand``)."""
    config = signing_config(cwd) if config is None else config
    key = config.get("user.signingkey", "").strip() or config.get("gpg.ssh.defaultkeycommand", "").strip()
    return config.get("gpg.format", "").strip().lower() == "ssh" and bool(key)


class Signature(NamedTuple):
    """What git says of a commit's signature: ``status`` is git's %G? (G good and known, U a
    key the allowed signers do not know, N none, B bad, E cannot be checked, X/Y/R expired or
    revoked); ``principal`` the allowed signer it verified as (G only); ``key`` its fingerprint."""

    status: str
    principal: str | None
    key: str


def signatures(commits: list[str], allowed_signers: str | Path, cwd: Where = None) -> dict[str, Signature]:
    """Each commit's signature verified against the allowed-signers file ``allowed_signers``
    (an absolute path): one ``git log --no-walk`` for them all; git runs ``ssh-keygen -Y
    verify`` for each signed one."""
    if not commits:
        return {}
    proc = run(
        "-c",
        f"gpg.ssh.allowedSignersFile={allowed_signers}",
        "-c",
        "log.showSignature=false",
        "log",
        "--no-walk=unsorted",
        "--stdin",
        "-z",
        "--format=%H%x1f%G?%x1f%GF%x1f%GS",
        cwd=cwd,
        input="".join(f"{c}\n" for c in commits).encode(),
    )
    if proc.returncode != 0:
        raise GitError(f"git log (signatures): {proc.stderr.decode(errors='replace').strip()}")
    out: dict[str, Signature] = {}
    for entry in proc.stdout.split(b"\0"):
        parts = entry.strip(b"\n").decode("utf-8", "replace").split("\x1f", 3)
        if len(parts) == 4 and len(parts[0]) in (40, 64):
            status = parts[1][:1] or "N"
            principal = parts[3].strip() if status == "G" and parts[3].strip() else None
            out[parts[0]] = Signature(status, principal, parts[2].strip())
    return out


def _oid_text(value: str) -> bool:
    return len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value)


def on_first_parent_chain(old: str, new: str, cwd: Where = None) -> bool:
    """Whether the commit ``old`` is ``new`` or one of its first-parent ancestors (both full
    object ids): whether ``new`` keeps ``old`` on its mainline. One ``rev-list``: the
    first-parent walk from ``new`` down to what ``old`` reaches; ``old`` is on the chain
    exactly when the last commit walked has it as first parent."""
    if not (_oid_text(old) and _oid_text(new)):
        raise GitError(f"not object ids: {old!r}, {new!r}")
    if old == new:
        return True
    out = git("rev-list", "--first-parent", "--parents", new, "--not", old, cwd=cwd).decode().split("\n")
    lines = [line.split() for line in out if line.strip()]
    return bool(lines) and len(lines[-1]) > 1 and lines[-1][1] == old


def added_by(path: str, head: str = "HEAD", cwd: Where = None) -> tuple[str, str, str, str] | None:
    """(commit, committer date ISO 8601, committer name, committer email) of the last commit
    of ``head``'s history that added ``path`` (a literal path), or None when none did."""
    try:
        out = git(
            "log", "-1", "--format=%H%x00%cI%x00%cn%x00%ce", "--diff-filter=A", "--end-of-options", head, "--",
            f":(literal){path}", cwd=cwd,
        )  # fmt: skip
    except GitError:
        return None
    parts = out.decode("utf-8", "replace").strip().split("\x00")
    return (parts[0], parts[1], parts[2], parts[3]) if len(parts) == 4 and parts[0] else None


def topological_order(rev: str = "HEAD", cwd: Where = None) -> dict[str, int]:
    """Every commit of ``rev``'s history by its place, the oldest 0 (topological order)."""
    try:
        out = git("rev-list", "--topo-order", "--reverse", "--end-of-options", rev, "--", cwd=cwd)
    except GitError:
        return {}
    return {c: i for i, c in enumerate(out.decode("ascii", "replace").split())}


def first_parent_walk(rev: str, cwd: Where = None) -> Iterator[str]:
    """``rev`` and its first-parent ancestors, newest first (streamed: the walk stops when
    the caller stops reading)."""
    for entry in fields("log", "--first-parent", "-z", "--format=%H", "--end-of-options", rev, "--", cwd=cwd):
        commit = entry.decode("ascii", "replace").strip()
        if commit:
            yield commit


class Adding(NamedTuple):
    """How a record entered the mainline: ``mainline``, the first commit of the first-parent
    chain whose tree holds it; ``adders``, the commits that added it (in none of their
    parents): the mainline commit itself, or, when it is a merge that brought the record
    from another parent, the commits of that side that added it; ``path``, where."""

    mainline: str
    adders: tuple[str, ...]
    path: str


def record_adding(record_uuid: str, head: str, cwd: Where = None) -> Adding | None:
    """How the record ``data/*/*/*/<uuid>.json`` entered ``head``'s mainline (its
    first-parent chain), every parent considered (:class:`Adding`), or None when no commit
    of it did (``record_uuid`` a checked uuid). git's own history simplification follows
    whichever parent a merge happens to match: never used here."""
    if not record_uuid or not all(c in "0123456789abcdef-" for c in record_uuid):
        return None
    proc = run(
        "log",
        "--first-parent",
        "--diff-merges=first-parent",
        "--diff-filter=A",
        "-z",
        "--format=%x01%H",
        "--name-only",
        "--end-of-options",
        head,
        "--",
        f":(glob)data/*/*/*/{record_uuid}.json",
        cwd=cwd,
    )
    if proc.returncode != 0:
        return None
    found: tuple[str, str] | None = None
    commit = ""
    for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        item = item.strip("\n")
        if item.startswith("\x01"):
            commit = item[1:].strip()
        elif item and commit:
            found = (commit, item)  # the oldest comes last
    if found is None:
        return None
    mainline, path = found
    parents = git("rev-list", "--no-walk", "--parents", mainline, cwd=cwd).decode().split()[1:]
    if len(parents) < 2:
        return Adding(mainline, (mainline,), path)
    # a merge: the record came from another parent (or is the merge's own content)
    side = git("rev-list", "--full-history", "--parents", mainline, "--not", parents[0], "--", path, cwd=cwd)
    candidates = [line.split()[0] for line in side.decode().splitlines() if line.strip()]
    real = (
        {
            line.split()[0]: line.split()[1:]
            for line in git(
                "rev-list",
                "--no-walk=unsorted",
                "--parents",
                "--stdin",
                cwd=cwd,
                input="".join(f"{c}\n" for c in candidates).encode(),
            )
            .decode()
            .splitlines()
            if line.strip()
        }
        if candidates
        else {}
    )
    names = [f"{c}:{path}" for c in real] + [f"{p}:{path}" for ps in real.values() for p in ps]
    have = batch_check(names, cwd)
    adders = tuple(
        c for c in candidates if f"{c}:{path}" in have and not any(f"{p}:{path}" in have for p in real.get(c, []))
    )
    return Adding(mainline, adders or (mainline,), path)


# --- what the other floors ask of git ---------------------------------------------------------
# Every git command line of the package is built in this module (issue 34.5; a test holds it:
# no other module spawns git or passes git arguments). Each function is one question or one
# change, named for what it does; it returns what the caller used to read of git's output.


def git_path(name: str, cwd: Where = None) -> Path:
    """``git rev-parse --git-path NAME``: where git keeps ``name`` (``hooks/pre-commit``, ...;
    ``core.hooksPath`` respected), as git says it (relative to ``cwd`` or absolute)."""
    return Path(git("rev-parse", "--git-path", name, cwd=cwd).decode().strip())


def common_dir(cwd: Where = None) -> Path:
    """``git rev-parse --git-common-dir``, as git says it (relative to ``cwd`` or absolute)."""
    return Path(git("rev-parse", "--git-common-dir", cwd=cwd).decode().strip())


def git_dir_or_none(cwd: Where = None) -> Path | None:
    """The repository's absolute git directory, None when ``cwd`` is in none."""
    proc = run("rev-parse", "--absolute-git-dir", cwd=cwd)
    return Path(proc.stdout.decode().strip()) if proc.returncode == 0 and proc.stdout.strip() else None


def top_and_git_dir(cwd: Where = None) -> tuple[Path, Path] | None:
    """(the work tree's top, its absolute git directory), None outside a work tree."""
    proc = run("rev-parse", "--show-toplevel", "--absolute-git-dir", cwd=cwd)
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode != 0 or len(lines) != 2:
        return None
    return Path(lines[0]), Path(lines[1])


def inside_work_tree(cwd: Where = None) -> bool:
    """Whether ``cwd`` is inside a git work tree."""
    proc = run("rev-parse", "--is-inside-work-tree", cwd=cwd)
    return proc.returncode == 0 and proc.stdout.strip() == b"true"


def is_bare(cwd: Where = None) -> bool:
    """Whether the repository at ``cwd`` is bare."""
    return git("rev-parse", "--is-bare-repository", cwd=cwd, check=False).strip() == b"true"


def head_ref(cwd: Where = None) -> str:
    """The branch HEAD names (``refs/heads/main``), "" when it is detached or git cannot say."""
    return git("symbolic-ref", "-q", "HEAD", cwd=cwd, check=False).decode().strip()


def replace_refs(cwd: Where = None) -> list[str]:
    """Every ref under ``refs/replace/``."""
    return git("for-each-ref", "--format=%(refname)", "refs/replace/", cwd=cwd, check=False).decode().split()


def set_config(key: str, value: str, cwd: Where = None) -> None:
    """``git config KEY VALUE`` in the repository at ``cwd``."""
    git("config", key, value, cwd=cwd)


def worktree_changed(paths: list[str], cwd: Where = None) -> list[str]:
    """Which of ``paths`` differ in the work tree from the index (``git diff --name-only``),
    asked 500 at a time."""
    found: list[str] = []
    for i in range(0, len(paths), 500):
        out = git("diff", "--name-only", "--no-ext-diff", "-z", "--", *paths[i : i + 500], cwd=cwd)
        found.extend(p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p)
    return found


def ls_files(specs: list[str], cwd: Where = None, untracked: bool = False) -> list[str] | None:
    """The paths of the index (and, ``untracked``, the untracked ones not ignored) matching
    ``specs`` (pathspecs), sorted; None when git cannot answer."""
    others = ["--others", "--exclude-standard"] if untracked else []
    proc = run("ls-files", "-z", "--cached", *others, "--", *specs, cwd=cwd)
    if proc.returncode != 0:
        return None
    return sorted({p.decode("utf-8", "surrogateescape") for p in proc.stdout.split(b"\0") if p})


def index_entries_raw(rels: list[str], cwd: Where = None) -> bytes:
    """``git ls-files -s -z`` of ``rels`` (literal paths): the index's entries of them."""
    return git("--literal-pathspecs", "ls-files", "-s", "-z", "--", *rels, cwd=cwd, check=False)


def head_entries_raw(rels: list[str], cwd: Where = None) -> bytes:
    """``git ls-tree -z --full-tree HEAD`` of ``rels`` (literal paths): HEAD's entries of them."""
    return git("--literal-pathspecs", "ls-tree", "-z", "--full-tree", "HEAD", "--", *rels, cwd=cwd, check=False)


def ls_tree_raw(tree: str, cwd: Where = None, recursive: bool = True, under: str | None = None) -> bytes:
    """``git ls-tree -z`` of ``tree`` (``-r``: every blob below it; ``under``: only that folder,
    ``--full-tree``), what git lists before any entry it stops at (never raises)."""
    if under is not None:
        return git("ls-tree", "-r", "-z", "--full-tree", tree, "--", under, cwd=cwd, check=False)
    return git("ls-tree", *(["-r"] if recursive else []), "-z", "--end-of-options", tree, cwd=cwd, check=False)


def ls_tree_fields(tree: str, cwd: Where = None) -> Iterator[bytes]:
    """The NUL-separated entries of ``git ls-tree -r`` of ``tree``, streamed."""
    return fields("ls-tree", "-r", "-z", "--end-of-options", tree, cwd=cwd)


def diff_tree_fields(old: str, new: str, cwd: Where = None) -> Iterator[bytes]:
    """The NUL-separated fields of ``git diff-tree -r --raw`` from ``old`` to ``new``, streamed."""
    return fields("diff-tree", "-r", "-z", "--no-renames", "--raw", "--end-of-options", old, new, cwd=cwd)


def diff_tree_raw(old: str, new: str, cwd: Where = None, full: bool = False) -> bytes:
    """``git diff-tree -r -z`` from ``old`` to ``new`` (raw; ``full``: unabbreviated ids, after
    ``--end-of-options``); GitError when git's walker refuses a tree."""
    if full:
        return git(
            "diff-tree", "-r", "--raw", "-z", "--no-renames", "--no-abbrev", "--end-of-options", old, new, cwd=cwd
        )
    return git("diff-tree", "-r", "-z", "--no-renames", old, new, cwd=cwd)


def added_under(rev: str, folder: str, cwd: Where = None) -> subprocess.CompletedProcess[bytes]:
    """``git log`` of the files added under ``folder`` in ``rev``'s history, oldest first
    (topological, full history): per commit ``\\x01<commit> <author time>`` then the names."""
    return run(
        "log",
        "--reverse",
        "--topo-order",
        "--full-history",
        "--no-renames",
        "--diff-filter=A",
        "--name-only",
        "-z",
        "--format=%x01%H %at",
        "--end-of-options",
        rev,
        "--",
        folder,
        cwd=cwd,
    )


def ever_held(rev: str, path: str, cwd: Where = None) -> bool:
    """Whether any commit of ``rev``'s history touches ``path`` (one git call)."""
    proc = run("log", "-1", "--format=%H", "--end-of-options", rev, "--", path, cwd=cwd)
    return proc.returncode == 0 and bool(proc.stdout.strip())


def parents_of(commits: list[str], cwd: Where = None) -> dict[str, list[str]]:
    """commit -> its parents, one git call (commits git does not know are left out)."""
    proc = run(
        "log",
        "--no-walk=unsorted",
        "--stdin",
        "--format=%H %P",
        cwd=cwd,
        input="".join(f"{c}\n" for c in commits).encode(),
    )
    out: dict[str, list[str]] = {}
    for line in proc.stdout.decode().splitlines():
        parts = line.split()
        if parts:
            out[parts[0]] = parts[1:]
    return out


def hash_object(rel: str, cwd: Where = None) -> str:
    """``git hash-object -w --no-filters``: the work tree's file ``rel`` written as a blob; its id."""
    return git("hash-object", "-w", "--no-filters", "--", rel, cwd=cwd).decode().strip()


def _nul(paths: Iterable[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def stage_paths(paths: list[str], cwd: Where = None) -> subprocess.CompletedProcess[bytes]:
    """``git update-index --add --remove``: the index takes the work tree's ``paths`` (a path
    gone from the work tree leaves it); git's answer, whatever its exit code."""
    return run("update-index", "--add", "--remove", "-z", "--stdin", cwd=cwd, input=_nul(paths))


def read_tree(base: str | None, cwd: Where = None, env: Mapping[str, str] | None = None) -> None:
    """``git read-tree``: the index (``GIT_INDEX_FILE`` in ``env``) holds ``base``, or nothing."""
    if base is None:
        git("read-tree", "--empty", cwd=cwd, env=env)
    else:
        git("read-tree", base, cwd=cwd, env=env)


def set_index_entries(info: bytes, cwd: Where = None, env: Mapping[str, str] | None = None, check: bool = True) -> None:
    """``git update-index -z --index-info`` (``--add`` when ``check``): ``info`` is
    ``"<mode> <blob>\\t<path>\\0"`` entries."""
    if check:
        git("update-index", "--add", "-z", "--index-info", cwd=cwd, env=env, input=info)
    else:
        git("update-index", "-z", "--index-info", cwd=cwd, env=env, input=info, check=False)


def remove_index_entries(
    paths: list[str], cwd: Where = None, env: Mapping[str, str] | None = None, check: bool = True
) -> None:
    """``git update-index --force-remove``: ``paths`` leave the index."""
    git("update-index", "--force-remove", "-z", "--stdin", cwd=cwd, env=env, input=_nul(paths), check=check)


def _output(*args: str, cwd: Where = None) -> bytes | None:
    """The standard output of ``git ARGS``, None when it fails."""
    proc = run(*args, cwd=cwd)
    return proc.stdout if proc.returncode == 0 else None


def ls_tree_long(spec: str, cwd: Where = None, recursive: bool = False) -> bytes | None:
    """``git ls-tree -z --long SPEC`` (``-r``: every blob below it); None when git's walker
    refuses the tree (a crafted entry)."""
    return _output("ls-tree", *(["-r"] if recursive else []), "-z", "--long", spec, cwd=cwd)


def ls_tree_long_folders(commit: str, folders: list[str], cwd: Where = None) -> bytes | None:
    """``git ls-tree -z --long`` of ``folders`` (literal paths, each ending in /) of ``commit``;
    None when git refuses."""
    return _output(
        "--literal-pathspecs",  # a folder named a*b is that folder, not a pattern
        "ls-tree",
        "-z",
        "--long",
        "--end-of-options",
        commit,
        "--",
        *folders,
        cwd=cwd,
    )


def tree_id(commit: str, cwd: Where = None) -> str | None:
    """The id of ``commit``'s root tree, None when git cannot say."""
    out = _output("rev-parse", "--verify", "--end-of-options", f"{commit}^{{tree}}", cwd=cwd)
    return out.decode().strip() if out else None


def tree_object(sha: str, cwd: Where = None) -> bytes:
    """The raw bytes of the tree object ``sha`` (``git cat-file tree``), b"" when git cannot read it."""
    return _output("cat-file", "tree", sha, cwd=cwd) or b""


def last_commit_time(cwd: Where = None) -> str:
    """The committer time of HEAD (seconds since the epoch, as git prints it), "" without one."""
    return git("log", "-1", "--format=%ct", cwd=cwd, check=False).decode(errors="replace").strip()
