"""The one way the tools create, replace and confine files.

:func:`write_new` writes the bytes to a temporary file in the target's own folder, makes
them durable (fsync), then links the temporary file to the target name. ``os.link`` fails
when the target exists, so an existing file is never overwritten, and a reader sees
either no file or the whole file. The temporary name is made here (not by the tempfile
module) so that nothing else in a run needs a temporary file or folder.

:func:`write_replacing` is the one way to write a file that may exist already: the bytes
go to a temporary file beside it (:func:`write_new`), which then takes its place in one
step, so a reader sees the old file or the new one, never a mix, and a failed write leaves
the old one. :func:`replace_file` and :func:`replace_folder` put a fully written file or
folder in place of another in one step (the only ``os.replace`` of the tools); :func:`locked`
holds a lock file (filelock's: ``flock`` on POSIX, ``msvcrt`` on Windows, never through a
symbolic link) for one writer at a time; :func:`confined`
turns a path read from an untrusted place (a journal in the git directory, a source tree)
into a file name below the store, or says why it cannot be one.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_new(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> Path:
    """Create ``path`` holding ``data``; ``FileExistsError`` when it exists (nothing written).

    The folder must exist. On any error the temporary file is removed and the target is
    absent (or, when it existed before, untouched). ``durable=False`` leaves out the two
    fsyncs (still exclusive and atomic): for bulk writes whose durable copy is the git
    object store they are staged into next (``eee import``: 2 x 5 ms a file here)."""
    target = Path(path)
    folder = target.parent
    tmp = folder / f".{target.name}.{os.urandom(6).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, target)  # fails if the target exists: never overwrite
    finally:
        os.unlink(tmp)
    if durable:
        _fsync_folder(folder)
    return target


def write_replacing(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> Path:
    """Write ``path`` (new, or in place of the file there) atomically: a reader sees the old
    bytes or ``data``, never a mix; on any error the old file stays and no temporary file is
    left. ``durable=False`` leaves out the fsyncs (a cache: a lost write is rebuilt)."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.urandom(6).hex()}.tmp")
    write_new(tmp, data, durable=durable)
    try:
        replace_file(tmp, target)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    return target


@contextlib.contextmanager
def locked(path: str | os.PathLike[str], wait: float | None = None) -> Iterator[bool]:
    """Hold the lock file ``path`` for the block (the one way the tools take a lock): yields
    True once held, or False when ``wait`` seconds passed without it (0: one try; None: wait
    as long as it takes). The lock goes with the process that held it, however it ends."""
    from filelock import FileLock, Timeout

    lock = FileLock(os.fspath(path), timeout=-1 if wait is None else wait)
    try:
        lock.acquire()
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def make_folders(root: Path, rel_folder: str) -> list[Path]:
    """Create the folders of ``rel_folder`` below ``root`` that do not exist yet; returns
    them in creation order (for undoing a partial placement)."""
    created: list[Path] = []
    folder = root
    for part in rel_folder.split("/") if rel_folder else []:
        folder = folder / part
        if not folder.is_dir():
            folder.mkdir()
            created.append(folder)
    return created


def replace_file(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Put the file ``source`` (written beside ``target``) at ``target`` in one step: a
    reader sees the old file or the new one, never a mix."""
    os.replace(source, target)


def replace_folder(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Put the fully written folder ``source`` at ``target``: the old folder (if any) is
    moved aside, the new one moved in, then the old one removed; when the move in fails,
    the old folder is put back."""
    import shutil

    target = Path(target)
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    had = os.path.lexists(target)
    if had:
        os.replace(target, old)
    try:
        os.replace(source, target)
    except BaseException:
        if had:
            os.replace(old, target)
        raise
    if had:
        shutil.rmtree(old, ignore_errors=True)


class Unconfined(ValueError):
    """A path that may not name a file of the store; the message says why."""


def confined(root: Path, rel: object, under: tuple[str, ...]) -> Path:
    """``root / rel`` for a path read from an untrusted place, or :class:`Unconfined`.

    ``rel`` must be a relative POSIX path (no absolute path, no ``..``, ``.`` or empty
    component, no backslash, no ``.git``), a name that can be shown as it is
    (:func:`eee.store.paths.name_problem`), one of the files or below one of the folders
    ``under``; and no
    component on the way may be a symbolic link (each existing one is a real folder, the
    file itself a regular file or absent)."""
    from eee.store.paths import escaped, name_problem, tree_path_problem

    if not isinstance(rel, str):
        raise Unconfined(f"{rel!r} is not a path")
    problem = name_problem(rel) or tree_path_problem(rel)
    if problem:
        raise Unconfined(problem)
    if not any(rel == folder.rstrip("/") or rel.startswith(folder.rstrip("/") + "/") for folder in under):
        raise Unconfined(f"{escaped(rel)} is not below {', '.join(f.rstrip('/') + '/' for f in under)}")
    path = Path(root)
    parts = rel.split("/")
    for i, part in enumerate(parts):
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            break
        except OSError as exc:
            raise Unconfined(f"{escaped(rel)}: {exc.strerror}") from None
        last = i == len(parts) - 1
        if stat.S_ISLNK(mode):
            raise Unconfined(f"{escaped('/'.join(parts[: i + 1]))} is a symbolic link")
        if not last and not stat.S_ISDIR(mode):
            raise Unconfined(f"{escaped('/'.join(parts[: i + 1]))} is not a folder")
        if last and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise Unconfined(f"{escaped(rel)} is not a regular file")
    return Path(root) / rel
