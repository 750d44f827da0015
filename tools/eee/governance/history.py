"""When each event entered history: the commit that added its file.

The ledger is ordered by history, never by the time an event declares (a hand-written
event dated 2020 must not reorder a record's past): events are taken in the order of the
commits that added them (git's topological order, oldest first), then by file name;
events no commit has added yet (staged or only in the work tree) come last, marked
uncommitted.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple

from eee.git.cli import added_under, inside_work_tree, resolve
from eee.governance import EVENT_SUFFIX, EVENTS_DIR


class Entered(NamedTuple):
    """Where one event file entered history."""

    commit: str | None  # the commit that added it; None: not committed yet
    position: int  # the commit's place in history order (0 = oldest); -1 uncommitted
    time: int | None  # the commit's author time (seconds since the epoch)


UNCOMMITTED = Entered(None, -1, None)


def order_key(name: str, entered: Entered | None) -> tuple[int, int, str]:
    """Sort key of an event file ``name``: committed by history position, then name."""
    if entered is None or entered.commit is None:
        return (1, 0, name)
    return (0, entered.position, name)


@functools.lru_cache(maxsize=64)
def _log(root: str, rev: str) -> dict[str, Entered]:
    proc = added_under(rev, EVENTS_DIR + "/", root)
    if proc.returncode != 0:
        return {}
    out: dict[str, Entered] = {}
    position = -1
    current: Entered = UNCOMMITTED
    for field in proc.stdout.split(b"\0"):
        field = field.strip(b"\n")
        if not field:
            continue
        if field.startswith(b"\x01"):
            sha, _, stamp = field[1:].decode().partition(" ")
            position += 1
            current = Entered(sha, position, int(stamp) if stamp.isdigit() else None)
            continue
        path = field.decode("utf-8", "surrogateescape")
        name = path.rsplit("/", 1)[-1]
        if path == f"{EVENTS_DIR}/{name}" and name.endswith(EVENT_SUFFIX) and name not in out:
            out[name] = current  # the first commit that added it
    return out


def entered(root: Path | str, rev: str = "HEAD") -> dict[str, Entered]:
    """Event file name -> where it entered the history of ``rev`` ({} outside git).

    ``rev`` is resolved to a commit first, so the answer is cached per commit."""
    commit = resolve(f"{rev}^{{commit}}", root)
    if commit is None:
        return {}
    return _log(str(root), commit)


def in_git(root: Path | str) -> bool:
    """Whether ``root`` is inside a git work tree."""
    return inside_work_tree(root)
