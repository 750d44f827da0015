"""What the next commit holds: the index's entries and blobs, read from git's object store.

The hooks check what will be committed, never the work-tree files: a clean filter (or an
edit after ``git add``) can make a work-tree file differ from its staged blob, and the
hooks must see the blob. Everything here comes from git itself (``git ls-files -s``,
``git cat-file --batch``); no environment variable or file stands in for the index.
Reads are bounded like every other read (:mod:`eee.limits`): a symbolic link or
submodule entry is refused, and a blob over its cap is never read.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from eee.limits import RECORD_MAX_BYTES, Unreadable, too_big

LINK_MODE = "120000"
GITLINK_MODE = "160000"


class Staged:
    """The index of the repository at ``root``: entries (mode, blob id) and their contents."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else None
        self._entries: dict[str, tuple[str, str]] = {}
        self._listed: set[str] = set()  # folders whose entries are all in _entries
        self._absent: set[str] = set()
        self._blobs: dict[str, bytes] = {}

    def _ls_files(self, specs: list[str]) -> None:
        out = subprocess.run(
            ["git", "ls-files", "-s", "-z", "--", *specs], cwd=self.root, capture_output=True, check=True
        ).stdout
        for item in out.split(b"\0"):
            if not item:
                continue
            meta, _, name = item.partition(b"\t")
            mode, sha, stage = meta.decode().split(" ")
            if stage in ("0", "2"):  # stage 2: ours, during a conflicted merge
                self._entries[name.decode("utf-8", "surrogateescape")] = (mode, sha)

    def entry(self, path: str) -> tuple[str, str] | None:
        """(mode, blob id) of ``path`` in the index, or None when it is not staged."""
        if path not in self._entries and path not in self._absent:
            self._ls_files([f":(literal){path}"])
            if path not in self._entries:
                self._absent.add(path)
        return self._entries.get(path)

    def names(self, folder: str) -> list[str]:
        """The entries below ``folder`` in the index, one level (listed recursively: use it
        for small folders, such as one model's)."""
        prefix = f"{folder}/" if folder else ""
        if folder not in self._listed:
            self._ls_files([f":(literal){prefix}" if prefix else "."])
            self._listed.add(folder)
        return sorted({p[len(prefix) :].split("/", 1)[0] for p in self._entries if p.startswith(prefix)})

    def prefetch(self, paths: list[str]) -> None:
        """Read the index entries of ``paths`` in one git call (the hooks' staged files)."""
        wanted = [p for p in paths if p not in self._entries]
        for i in range(0, len(wanted), 500):
            self._ls_files([f":(literal){p}" for p in wanted[i : i + 500]])

    def read(self, path: str, cap: int = RECORD_MAX_BYTES, what: str = "record") -> bytes:
        """The staged bytes of ``path`` (FileNotFoundError when not staged, Unreadable when refused)."""
        entry = self.entry(path)
        if entry is None:
            raise FileNotFoundError(2, "not in the index", path)
        mode, sha = entry
        if mode == LINK_MODE:
            raise Unreadable("is a symbolic link", f"a {what} must be a regular file: stage the file itself")
        if mode == GITLINK_MODE:
            raise Unreadable("is a submodule, not a file", f"a {what} must be a regular file")
        if sha not in self._blobs:
            self._blobs.update(read_blobs([sha], cap, self.root, what))
        return self._blobs[sha]


def read_blobs(shas: list[str], cap: int, root: str | Path | None = None, what: str = "file") -> dict[str, bytes]:
    """Blob contents by id, one ``git cat-file`` process; a blob over ``cap`` raises Unreadable."""
    if not shas:
        return {}
    check = subprocess.run(
        ["git", "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
        cwd=root,
        input="".join(f"{s}\n" for s in shas).encode(),
        capture_output=True,
        check=True,
    ).stdout.decode()
    for line in check.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob" and int(parts[2]) > cap:
            raise Unreadable(*too_big(int(parts[2]), cap, what))
        if len(parts) != 3 or parts[1] != "blob":
            raise Unreadable(f"object {parts[0]} is not a blob", "stage a regular file")
    proc = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=root,
        input="".join(f"{s}\n" for s in shas).encode(),
        capture_output=True,
        check=True,
    )
    out: dict[str, bytes] = {}
    data = proc.stdout
    at = 0
    for _ in shas:
        header_end = data.index(b"\n", at)
        sha, _kind, size = data[at:header_end].decode().split()
        start = header_end + 1
        out[sha] = data[start : start + int(size)]
        at = start + int(size) + 1
    return out
