"""The tree the validator reads: the work tree, a git commit, or planned files over either.

Paths are store-relative POSIX strings (``data/b/d/m/<uuid>.json``). Every reader is
bounded: :meth:`Tree.read` returns the bytes of a regular file only, never follows a
symbolic link, refuses FIFOs and devices, and stops at :data:`MAX_READ` bytes; a file it
will not read raises :class:`Unreadable`, which carries the one :class:`Finding` to report,
so a bad file is one finding and the run goes on.

- :class:`WorkTree` reads a folder on disk (``O_NOFOLLOW``, ``lstat``).
- :class:`GitTree` reads a commit's blobs from git's object store through one long-lived
  ``git cat-file --batch`` process; nothing is written to disk.
- :class:`Overlay` puts planned files (path -> bytes) over another tree: what a converter,
  ``supersede`` or an import would add, validated before anything is written.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from eee.git.cli import (
    BatchReader,
    batch_check,
    blob_chunks,
    ls_tree_long,
    ls_tree_long_folders,
    tree_id,
    tree_object,
)
from eee.reporting.findings import Finding
from eee.store.limits import kind_of_mode, size_text

# The largest file any reader returns. Real records are ~100 kB (the largest of the
# reference records is 110 kB) and sidecars a few MB; a sidecar is streamed in chunks
# (:meth:`Tree.chunks`) up to this size, a record or event is read whole.
MAX_READ = 1024 * 1024 * 1024
CHUNK = 8 * 1024 * 1024

REGULAR, EXECUTABLE, SYMLINK = "100644", "100755", "120000"
READ_AHEAD_BYTES = 64 * 1024 * 1024  # what GitTree.read_ahead keeps in memory at most
PREFETCH_FOLDERS = 500  # folders per `git ls-tree` of GitTree.prefetch (their names stay well under ARG_MAX)


class Unreadable(Exception):
    """A file the tree will not read; ``finding`` says why."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


class Tree:
    """What the validator needs of a store: list, read (bounded), mode, exists."""

    def files(self, prefix: str = "") -> list[str]:
        """Every non-directory entry below ``prefix`` (symbolic links included), sorted."""
        raise NotImplementedError

    def names(self, folder: str) -> list[str]:
        """The entry names of ``folder`` ("" for the root); empty when it is not a folder."""
        raise NotImplementedError

    def mode(self, path: str) -> str | None:
        """git's mode of ``path``: "100644", "100755", "120000", "040000" for a folder,
        "other" for a FIFO, socket or device, None when absent."""
        raise NotImplementedError

    def read(self, path: str, limit: int = MAX_READ) -> bytes:
        """The bytes of the regular file ``path``; :class:`Unreadable` otherwise."""
        raise NotImplementedError

    def chunks(self, path: str, limit: int = MAX_READ) -> Iterator[bytes]:
        """The bytes of ``path`` in pieces (a sidecar's stream); same rules as :meth:`read`."""
        yield self.read(path, limit)

    def exists(self, path: str) -> bool:
        return self.mode(path) is not None

    def is_file(self, path: str) -> bool:
        return self.mode(path) in (REGULAR, EXECUTABLE)

    def display(self, path: str) -> str:
        """How findings name ``path``."""
        return path

    def _refuse(self, path: str, message: str, hint: str | None = None) -> Unreadable:
        return Unreadable(Finding(self.display(path), "$", message, hint, check="input"))

    def _check_size(self, path: str, size: int, limit: int) -> None:
        if size > limit:
            raise self._refuse(
                path,
                f"the file is {size_text(size)}, more than the {size_text(limit)} the tools read for a file of its kind",
                "every read is capped, well above the largest real file (see 'Limits' in docs/guide/validation.md); "
                "a file this large is not a record, event or pointer",
            )


def _mode_of(st: os.stat_result) -> str:
    if stat.S_ISLNK(st.st_mode):
        return SYMLINK
    if stat.S_ISDIR(st.st_mode):
        return "040000"
    if stat.S_ISREG(st.st_mode):
        return EXECUTABLE if st.st_mode & 0o111 else REGULAR
    return "other"


class WorkTree(Tree):
    """A store's folder on disk; shown relative to the working directory when below it."""

    def __init__(self, root: str | os.PathLike[str], listings: dict[str, list[str]] | None = None) -> None:
        self.root = os.path.abspath(root)
        self._base = self.root.rstrip(os.sep) + os.sep
        self._cwd = os.getcwd() + os.sep
        self._listings = listings if listings is not None else {}  # absolute folder -> names

    def path(self, rel: str) -> str:
        """The absolute path of ``rel``."""
        return self._base + rel if rel else self.root

    def rel(self, absolute: str) -> str | None:
        """``absolute`` relative to the root (POSIX), or None when outside it."""
        if not absolute.startswith(self._base):
            return None
        rel = absolute[len(self._base) :]
        return rel if os.sep == "/" else rel.replace(os.sep, "/")  # pragma: no cover - POSIX in practice

    def display(self, path: str) -> str:
        absolute = self.path(path)
        return absolute[len(self._cwd) :] if absolute.startswith(self._cwd) else absolute

    def files(self, prefix: str = "") -> list[str]:
        out: list[str] = []
        stack = [prefix.rstrip("/")]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(self.path(folder)))
            except OSError:
                continue
            for entry in entries:
                rel = f"{folder}/{entry.name}" if folder else entry.name
                if entry.is_dir(follow_symlinks=False):
                    stack.append(rel)
                else:
                    out.append(rel)
        return sorted(out)

    def names(self, folder: str) -> list[str]:
        absolute = self.path(folder)
        found = self._listings.get(absolute)
        if found is None:
            try:
                found = os.listdir(absolute)
            except OSError:
                found = []
            self._listings[absolute] = found
        return found

    def mode(self, path: str) -> str | None:
        try:
            return _mode_of(os.lstat(self.path(path)))
        except (OSError, ValueError):
            return None

    def exists(self, path: str) -> bool:
        return os.path.lexists(self.path(path))

    def _open(self, path: str, limit: int) -> int:
        return self._open_sized(path, limit)[0]

    def _open_sized(self, path: str, limit: int) -> tuple[int, int]:
        try:
            fd = os.open(self.path(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            if os.path.islink(self.path(path)):
                raise self._refuse(path, "is a symbolic link", "use regular files only") from None
            raise self._refuse(path, f"cannot read the file: {exc.strerror}") from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise self._refuse(
                path,
                f"is {kind_of_mode(st.st_mode)}, not a regular file",
                "use regular files only: the tools never read pipes, devices, sockets or folders",
            )
        try:
            self._check_size(path, st.st_size, limit)
        except Unreadable:
            os.close(fd)
            raise
        return fd, st.st_size

    def read(self, path: str, limit: int = MAX_READ) -> bytes:
        """One read of the size ``fstat`` gave (a byte more, to see a file that grew); the
        pieces of :meth:`chunks` only when the file is not what fstat said."""
        fd, size = self._open_sized(path, limit)
        try:
            try:
                data = os.read(fd, size + 1) if size < CHUNK else b""
            except OSError as exc:
                raise self._refuse(path, f"cannot read the file: {exc.strerror}") from None
            if len(data) == size:
                return data
        finally:
            os.close(fd)
        return b"".join(self.chunks(path, limit))  # it grew, shrank or is large: in pieces, checked

    def chunks(self, path: str, limit: int = MAX_READ) -> Iterator[bytes]:
        fd, size = self._open_sized(path, limit)
        total = 0
        try:
            while True:
                # no more than the file holds (and a byte, to see it grew): a read allocates what it asks for
                want = min(CHUNK, size - total + 1) if total <= size else CHUNK
                try:
                    chunk = os.read(fd, want)
                except OSError as exc:
                    raise self._refuse(path, f"cannot read the file: {exc.strerror}") from None
                if not chunk:
                    return
                total += len(chunk)
                self._check_size(path, total, limit)  # grew while read
                yield chunk
                if total == size and len(chunk) < want:
                    return  # the end, as fstat gave it: a read that asked for a byte more got none
        finally:
            os.close(fd)


class GitTree(Tree):
    """The tree of one commit, read from git's object store (never from the work tree)."""

    def __init__(self, repo: str | os.PathLike[str], commit: str) -> None:
        self.repo = Path(repo)
        self.commit = commit
        self.short = commit[:10]
        # folder -> {name: (mode, blob, size)}; each folder listed once, when first asked
        self._folders: dict[str, dict[str, tuple[str, str, int]]] = {}
        self._batch = BatchReader(self.repo)
        self._ahead: dict[str, bytes] = {}  # blob id -> bytes read ahead (read_ahead), READ_AHEAD_BYTES at most

    def display(self, path: str) -> str:
        return f"{self.short}:{path}"

    @staticmethod
    def _entries(out: bytes) -> Iterator[tuple[str, tuple[str, str, int]]]:
        """(path, (mode, blob, size)) of ``git ls-tree -z --long`` output."""
        for item in out.split(b"\0"):
            if not item:
                continue
            meta, _, raw = item.partition(b"\t")
            mode, kind, blob, size = meta.decode().split()
            path = raw.decode("utf-8", errors="surrogateescape")
            if kind == "tree":
                yield path, ("040000", blob, 0)
            elif kind == "blob":
                yield path, (mode, blob, int(size))
            else:  # a submodule: neither a file nor a folder the store can use
                yield path, ("other", blob, 0)

    def _folder(self, folder: str) -> dict[str, tuple[str, str, int]]:
        folder = folder.strip("/")
        found = self._folders.get(folder)
        if found is None:
            parent, _, name = folder.rpartition("/")
            if folder and self._folder(parent).get(name, ("",))[0] != "040000":
                found = {}  # not a folder of this commit: no git call
            else:
                spec = f"{self.commit}:{folder}" if folder else f"{self.commit}^{{tree}}"
                out = ls_tree_long(spec, self.repo)
                if out is None:  # a tree git's own walker refuses (a crafted entry): read the object itself
                    sha = self._folder(parent)[name][1] if folder else self.root_tree()
                    found = self.raw_entries(sha) if sha else {}
                else:
                    found = dict(self._entries(out))
            self._folders[folder] = found
        return found

    def prefetch(self, paths: Iterable[str]) -> None:
        """List every folder above ``paths`` not listed yet in a few git calls: one
        ``git ls-tree`` per depth (folders of one depth never nest, so each entry it prints
        belongs to the folder above it), :data:`PREFETCH_FOLDERS` folders at a time. The
        audit of a commit that adds thousands of records in as many folders asks git a
        handful of times, not once a folder. What a call cannot list (a crafted tree) is
        left to be listed one folder at a time, when asked."""
        if type(self)._folder is not GitTree._folder:
            return  # a tree that lists its folders its own way (the index: eee.store.staged)
        wanted: dict[int, set[str]] = {}
        for path in paths:
            parts = path.strip("/").split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                folder = "/".join(parts[:depth])
                if folder not in self._folders:
                    wanted.setdefault(depth, set()).add(folder)
        if not wanted:
            return
        self._folder("")
        for depth in sorted(wanted):
            todo = []
            for folder in sorted(wanted[depth]):
                parent, _, name = folder.rpartition("/")
                listing = self._folders.get(parent)
                if listing is None:
                    continue  # its parent could not be listed here: asked one folder at a time
                if listing.get(name, ("",))[0] != "040000":
                    self._folders[folder] = {}  # not a folder of this commit
                else:
                    todo.append(folder)
            for i in range(0, len(todo), PREFETCH_FOLDERS):
                part = todo[i : i + PREFETCH_FOLDERS]
                out = ls_tree_long_folders(self.commit, [f"{folder}/" for folder in part], self.repo)
                if out is None:
                    continue
                found: dict[str, dict[str, tuple[str, str, int]]] = {folder: {} for folder in part}
                for path, entry in self._entries(out):
                    parent, _, name = path.rpartition("/")
                    if parent in found:
                        found[parent][name] = entry
                self._folders.update(found)

    def read_ahead(self, paths: Iterable[str], limit: int = MAX_READ) -> None:
        """Read the regular files ``paths`` (each up to ``limit`` bytes) from git in one
        pipelined batch and keep them for :meth:`read`: a commit's thousands of records are
        not asked for one round trip each (twice: the audit parses them, the validator
        checks them). At most :data:`READ_AHEAD_BYTES` are kept; the rest is read when asked."""
        room = READ_AHEAD_BYTES - sum(map(len, self._ahead.values()))
        blobs: list[str] = []
        for path in dict.fromkeys(paths):
            entry = self._entry(path)
            if entry is None or entry[0] not in (REGULAR, EXECUTABLE) or entry[2] > limit or entry[1] in self._ahead:
                continue
            if entry[2] > room:
                break
            room -= entry[2]
            blobs.append(entry[1])
        for blob, data in self._batch.blobs(blobs):
            if data is not None:
                self._ahead[blob] = data

    def root_tree(self) -> str | None:
        """The id of the commit's root tree (None when it has none)."""
        return tree_id(self.commit, self.repo)

    def raw_entries(self, sha: str) -> dict[str, tuple[str, str, int]]:
        """The entries of the tree object ``sha`` parsed here (``mode SP name NUL id``), for
        trees ``git ls-tree`` refuses; every name comes back as it is, for the rules to judge."""
        data = tree_object(sha, self.repo)
        entries: list[tuple[str, str, str]] = []
        at = 0
        while at < len(data):
            space = data.find(b" ", at)
            nul = data.find(b"\0", space)
            if space < 0 or nul < 0:
                break
            mode = data[at:space].decode(errors="replace").rjust(6, "0")
            entries.append(
                (data[space + 1 : nul].decode("utf-8", "surrogateescape"), mode, data[nul + 1 : nul + 21].hex())
            )
            at = nul + 21
        blobs = [blob for _, mode, blob in entries if mode in (REGULAR, EXECUTABLE, SYMLINK)]
        sizes = {blob: size for blob, (_, _, size) in batch_check(blobs, self.repo).items()}
        found: dict[str, tuple[str, str, int]] = {}
        for name, mode, blob in entries:
            if mode == "040000":
                found[name] = ("040000", blob, 0)
            elif mode in (REGULAR, EXECUTABLE, SYMLINK):
                found[name] = (mode, blob, sizes.get(blob, 0))
            else:
                found[name] = ("other", blob, 0)
        return found

    def _entry(self, path: str) -> tuple[str, str, int] | None:
        parent, _, name = path.rpartition("/")
        return self._folder(parent).get(name)

    def files(self, prefix: str = "") -> list[str]:
        prefix = prefix.strip("/")
        if prefix and self.mode(prefix) != "040000":
            return []
        spec = f"{self.commit}:{prefix}" if prefix else f"{self.commit}^{{tree}}"
        out = ls_tree_long(spec, self.repo, recursive=True) or b""
        base = prefix + "/" if prefix else ""
        return sorted(base + path for path, _ in self._entries(out))

    def names(self, folder: str) -> list[str]:
        return list(self._folder(folder))

    def mode(self, path: str) -> str | None:
        entry = self._entry(path) if path else ("040000", "", 0)
        return entry[0] if entry else None

    def blob(self, path: str) -> str | None:
        entry = self._entry(path)
        return entry[1] if entry else None

    def git_size(self, path: str) -> int | None:
        """The size of ``path`` when git holds it as a file (a blob of the commit, or of the
        index for :class:`eee.store.staged.IndexTree`), else None: what the sidecar
        placement rule judges (a sidecar DVC keeps in the work tree is not in git)."""
        entry = self._entry(path)
        return entry[2] if entry and entry[0] in (REGULAR, EXECUTABLE) else None

    def read(self, path: str, limit: int = MAX_READ) -> bytes:
        entry = self._entry(path)
        if entry is None:
            raise self._refuse(path, "cannot read the file: No such file or directory")
        mode, blob, size = entry
        if mode == SYMLINK:
            raise self._refuse(path, "is a symbolic link", "use regular files only")
        if mode not in (REGULAR, EXECUTABLE):
            raise self._refuse(path, "is not a regular file", "use regular files only")
        self._check_size(path, size, limit)
        return self._cat(path, blob)

    def chunks(self, path: str, limit: int = MAX_READ) -> Iterator[bytes]:
        """A blob in pieces, streamed from ``git cat-file`` (a large sidecar committed to git
        is never held whole in memory)."""
        entry = self._entry(path)
        if entry is None or entry[2] <= CHUNK:
            yield self.read(path, limit)
            return
        mode, blob, size = entry
        if mode not in (REGULAR, EXECUTABLE):
            yield self.read(path, limit)  # refused there, with the reason
            return
        self._check_size(path, size, limit)
        yield from blob_chunks(blob, CHUNK, self.repo)

    def _cat(self, path: str, blob: str) -> bytes:
        data = self._ahead.get(blob)
        if data is not None:
            return data
        data = self._batch.blob(blob)
        if data is None:
            raise self._refuse(path, f"cannot read blob {blob} from git's object store")
        return data

    def close(self) -> None:
        self._batch.close()
        self._ahead.clear()

    def __enter__(self) -> GitTree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class EmptyTree(Tree):
    """A tree with nothing in it (what an overlay of planned files alone stands on)."""

    def files(self, prefix: str = "") -> list[str]:
        return []

    def names(self, folder: str) -> list[str]:
        return []

    def mode(self, path: str) -> str | None:
        return None

    def read(self, path: str, limit: int = MAX_READ) -> bytes:
        raise self._refuse(path, "cannot read the file: No such file or directory")


class Overlay(Tree):
    """Planned files (path -> bytes) over ``base``: the store as it would be after a write."""

    def __init__(self, base: Tree, planned: dict[str, bytes]) -> None:
        self.base = base
        self.planned = dict(planned)
        self._folders: dict[str, set[str]] = {}
        for path in self.planned:
            parts = path.split("/")
            for depth in range(len(parts)):
                self._folders.setdefault("/".join(parts[:depth]), set()).add(parts[depth])

    def display(self, path: str) -> str:
        return path if path in self.planned else self.base.display(path)

    def files(self, prefix: str = "") -> list[str]:
        base = prefix.rstrip("/") + "/" if prefix else ""
        return sorted(set(self.base.files(prefix)) | {p for p in self.planned if p.startswith(base)})

    def names(self, folder: str) -> list[str]:
        folder = folder.rstrip("/")
        extra = self._folders.get(folder, set())
        return list(dict.fromkeys([*self.base.names(folder), *sorted(extra)]))

    def mode(self, path: str) -> str | None:
        if path in self.planned:
            return REGULAR
        if path in self._folders:
            return "040000"
        return self.base.mode(path)

    def exists(self, path: str) -> bool:
        return path in self.planned or path in self._folders or self.base.exists(path)

    def read(self, path: str, limit: int = MAX_READ) -> bytes:
        if path in self.planned:
            data = self.planned[path]
            self._check_size(path, len(data), limit)
            return data
        return self.base.read(path, limit)

    def chunks(self, path: str, limit: int = MAX_READ) -> Iterator[bytes]:
        if path in self.planned:
            yield self.read(path, limit)
        else:
            yield from self.base.chunks(path, limit)
