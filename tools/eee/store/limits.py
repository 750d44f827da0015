"""What one file may cost to read: the caps, and reads that keep to them.

Every file the tools read from a store (record, sidecar, DVC pointer, governance event) or
take as input (a harness log, an ``.eval`` archive) is read here: a regular file only
(never a FIFO, device, socket or folder), never through a symbolic link (store files), and
never more bytes than its cap. A file that breaks a rule raises :class:`Unreadable` (an
``OSError``, so every reader that already reports unreadable files reports it the same
way); callers turn it into one finding for that file and go on with the others.

The caps are well above the largest real file of each kind (the largest public record is
about 110 KB, the deepest nests 16 levels); they are documented in docs/guide/validation.md, 'Limits'.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from typing import Any

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

RECORD_MAX_BYTES = 16 * MIB  # one aggregate record
EVENT_MAX_BYTES = 64 * KIB  # one governance event (YAML)
POINTER_MAX_BYTES = 64 * KIB  # one DVC pointer (YAML)
CARD_MAX_BYTES = 256 * KIB  # one experiment card (governance/experiments/*.yaml)
IDENTITY_MAX_BYTES = 4 * MIB  # one file of the identity registry (governance/identity/*.yaml)
ROW_MAX_BYTES = 16 * MIB  # one line of a sidecar
SIDECAR_MAX_BYTES = 64 * GIB  # one sidecar (read as a stream, one row at a time)
LOG_MAX_BYTES = 1 * GIB  # one harness log file given to a converter
ARCHIVE_MAX_BYTES = 2 * GIB  # everything one .eval archive decompresses to
ARCHIVE_MAX_MEMBERS = 1_000_000  # entries of one .eval archive

JSON_MAX_DEPTH = 64  # nested arrays/objects in a record or a sidecar row
LOG_JSON_MAX_DEPTH = 128  # nested arrays/objects in a harness log
YAML_MAX_DEPTH = 16  # nested mappings/sequences in an event
INT_MAX_DIGITS = 400  # digits of one integer literal (JSON or YAML)

CHUNK = 8 * MIB


def size_text(n: int) -> str:
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


class Unreadable(OSError):
    """A file the tools refuse to read: a symlink, not a regular file, or over its cap."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(errno.EINVAL, message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


def problem_of(exc: OSError) -> tuple[str, str | None]:
    """(message, hint) for a file that could not be read."""
    if isinstance(exc, Unreadable):
        return exc.message, exc.hint
    return f"cannot read the file: {exc.strerror or exc}", "check that the file exists and can be read"


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of_mode(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | os.PathLike[str], cap: int, what: str = "file", follow: bool = False) -> int:
    """A read-only descriptor of ``path`` once it is known to be a regular file within ``cap``.

    ``follow=False`` (store files): a symbolic link is refused, not followed. The file is
    opened non-blocking, so a FIFO never hangs the open; its type is then taken from the
    open descriptor (no race between a check and the read).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (not follow and os.path.islink(path)):
            raise Unreadable(
                "is a symbolic link",
                f"a {what} must be a regular file: replace the link by the file itself",
            ) from None
        if exc.errno == errno.EISDIR:
            raise Unreadable(f"is a folder, not a {what}", "name a file") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable(
                f"is {kind_of_mode(st.st_mode)}, not a regular file",
                f"a {what} must be a regular file; the tools never read pipes, devices or sockets",
            )
        if st.st_size > cap:
            raise Unreadable(too_big(st.st_size, cap, what)[0], too_big(st.st_size, cap, what)[1])
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def too_big(size: int | None, cap: int, what: str) -> tuple[str, str]:
    shown = f"{size_text(size)}" if size is not None else f"more than {size_text(cap)}"
    return (
        f"is {shown}, more than the {size_text(cap)} a {what} may have",
        f"the tools read at most {size_text(cap)} per {what} (see 'Limits' in docs/guide/validation.md); a file this large is not one",
    )


def read_regular(path: str | os.PathLike[str], cap: int, what: str = "file", follow: bool = False) -> bytes:
    """The bytes of a regular file of at most ``cap`` bytes (see :func:`open_regular`)."""
    fd = open_regular(path, cap, what, follow)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(cap + 1)
    if len(data) > cap:  # it grew after the check
        raise Unreadable(*too_big(None, cap, what))
    return data


def read_text(path: str | os.PathLike[str], cap: int, what: str = "file", follow: bool = False) -> str:
    """:func:`read_regular` decoded as UTF-8 (``UnicodeDecodeError`` when it is not)."""
    return read_regular(path, cap, what, follow).decode("utf-8")


def iter_chunks(
    path: str | os.PathLike[str], cap: int, what: str = "file", follow: bool = False, chunk: int = CHUNK
) -> Iterator[bytes]:
    """The file in chunks, refused (:class:`Unreadable`) once more than ``cap`` bytes were read."""
    fd = open_regular(path, cap, what, follow)
    total = 0
    with os.fdopen(fd, "rb") as fh:
        while block := fh.read(chunk):
            total += len(block)
            if total > cap:
                raise Unreadable(*too_big(None, cap, what))
            yield block


def iter_lines(
    path: str | os.PathLike[str],
    *hashers: Any,
    cap: int = SIDECAR_MAX_BYTES,
    line_cap: int = ROW_MAX_BYTES,
    what: str = "sidecar",
    follow: bool = False,
) -> Iterator[bytes]:
    """A file's lines without their newline, read in large chunks (fed to ``hashers``).

    A line longer than ``line_cap`` raises :class:`Unreadable` (naming its line number)
    instead of growing without bound."""
    return split_lines(iter_chunks(path, cap, what, follow), *hashers, line_cap=line_cap, what=what)


def split_lines(
    chunks: Iterable[bytes], *hashers: Any, line_cap: int = ROW_MAX_BYTES, what: str = "sidecar"
) -> Iterator[bytes]:
    """The lines without their newline of a stream of chunks (a file's, a tree's
    :meth:`~eee.store.tree.Tree.chunks`), each chunk fed to ``hashers``: the one line splitter.

    A line longer than ``line_cap`` raises :class:`Unreadable` (naming its line number)
    instead of growing without bound."""

    def too_long(lineno: int) -> Unreadable:
        return Unreadable(
            f"line {lineno} is longer than {size_text(line_cap)}",
            f"one row of a {what} is at most {size_text(line_cap)} (see 'Limits' in docs/guide/validation.md)",
        )

    rest = b""
    lineno = 0
    for block in chunks:
        for hasher in hashers:
            if hasher is not None:
                hasher.update(block)
        data = rest + block if rest else block
        cut = data.rfind(b"\n")
        if cut < 0:
            rest = data
            if len(rest) > line_cap:
                raise too_long(lineno + 1)
            continue
        rest = data[cut + 1 :]
        lines = data[:cut].split(b"\n")
        for line in lines:
            lineno += 1
            if len(line) > line_cap:
                raise too_long(lineno)
        yield from lines
    if rest:
        yield rest
