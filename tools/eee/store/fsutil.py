"""The one way the store's tools create a file: exclusive and atomic.

:func:`write_new` writes the bytes to a temporary file in the target's own folder, makes
them durable (fsync), then links the temporary file to the target name. ``os.link`` fails
when the target exists, so an existing file is never overwritten, and a reader sees
either no file or the whole file. The temporary name is made here (not by the tempfile
module) so that nothing else in a run needs a temporary file or folder.
"""

from __future__ import annotations

import os
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
