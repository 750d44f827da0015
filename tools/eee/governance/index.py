"""Finding records by uuid, cheaply at any store size.

In a git work tree one ``git ls-files --cached`` with a pathspec per uuid searches git's
index instead of walking 230,000 folders; only uuids it does not find are looked for among
the untracked files (``--others``, which walks the work tree: 3.4 s at 230,000 records
here), and not at all for the tree the hooks read (``untracked=False``: a record the index
does not hold is not in the commit). Outside git, the filesystem is searched.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path

from eee.git.cli import ls_files
from eee.store.paths import RECORD_SUFFIX, UUID4_RE, uuid_problem


class RecordIndex:
    def __init__(self, root: Path, untracked: bool = True) -> None:
        self.root = Path(root)
        self.untracked = untracked  # also untracked, not ignored files (a work tree; not the index)
        self.known: dict[str, str | None] = {}
        self.held: dict[str, list[str]] = {}  # uuid (as spelt) -> every record path found holding it
        self.searched: set[str] = set()  # uuids whose holders were all searched for
        self._git = (self.root / ".git").exists()
        self._complete = False  # after all(): a uuid not known is not in the store

    def lookup(self, uuids: Iterable[str]) -> dict[str, str | None]:
        """Repository-relative record paths of ``uuids`` (None when absent)."""
        uuids = list(uuids)
        wanted = [u for u in dict.fromkeys(uuids) if u not in self.known]
        if wanted and self._complete:
            self.known.update(dict.fromkeys(wanted))
        elif wanted:
            found = self._search(wanted)
            for u in wanted:
                self.known[u] = found.get(u)
        return {u: self.known[u] for u in uuids}

    def path(self, uuid: str) -> str | None:
        return self.lookup([uuid])[uuid]

    def exists(self, uuid: str) -> bool:
        return self.path(uuid) is not None

    def add(self, uuid: str, rel: str) -> None:
        self.known[uuid] = rel

    def all(self) -> dict[str, str]:
        """Every record of the store, by uuid; later lookups need no search."""
        out: dict[str, str] = {}
        self.held = {}
        for rel in self._list(["data/"]):
            name = rel.rsplit("/", 1)[-1]
            if name.endswith(RECORD_SUFFIX) and rel.count("/") == 4:
                out.setdefault(name[: -len(RECORD_SUFFIX)], rel)
                self.held.setdefault(name[: -len(RECORD_SUFFIX)], []).append(rel)
        self.known.update(out)
        self._complete = True
        return out

    def _list(self, specs: list[str], untracked: bool | None = None) -> list[str]:
        if untracked is None:
            untracked = self.untracked
        if self._git:
            listed = ls_files(specs, self.root, untracked)
            if listed is not None:
                return listed
        out = []
        for spec in specs:
            pattern = spec.removeprefix(":(glob)")
            if pattern.endswith("/"):
                top = os.path.join(self.root, pattern)
                for dirpath, _, files in os.walk(top):  # names as strings: a store holds 230,000 of them
                    rel = pattern.rstrip("/") + dirpath[len(top.rstrip("/")) :].replace(os.sep, "/")
                    out.extend(f"{rel}/{f}" for f in files)
            else:
                out.extend(Path(p).relative_to(self.root).as_posix() for p in glob.glob(str(self.root / pattern)))
        return sorted(out)

    def _search(self, uuids: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}

        def search(wanted: list[str], untracked: bool) -> None:
            for rel in self._list([f":(glob)data/*/*/*/{u}{RECORD_SUFFIX}" for u in wanted], untracked):
                uuid = rel.rsplit("/", 1)[-1][: -len(RECORD_SUFFIX)]
                found.setdefault(uuid, rel)
                held = self.held.setdefault(uuid, [])
                if rel not in held:
                    held.append(rel)

        search(uuids, False if self._git else self.untracked)  # git's index first: no walk of the work tree
        missing = [u for u in uuids if u not in found]
        if missing and self._git and self.untracked:
            search(missing, True)
        return found

    def holders(self, uuids: Iterable[str]) -> dict[str, list[str]]:
        """Every record path of the store holding each of ``uuids`` (the rule ``uuid``:
        :mod:`eee.rules.uuids`): one for a uuid that names one record, more for an impostor.
        Spelt in any letter case: ``A.json`` holds the uuid ``a``."""
        uuids = list(dict.fromkeys(uuids))
        if not self._complete:
            wanted = [u for u in uuids if u not in self.searched]
            if wanted:
                spellings = {s for u in wanted for s in (u, u.upper())}
                self._search(sorted(spellings))
                self.searched.update(wanted)
        out: dict[str, list[str]] = {}
        for u in uuids:
            out[u] = sorted({p for s in (u, u.upper()) for p in self.held.get(s, ())})
        return out


PREFIX_MIN = 8  # hex digits a uuid prefix must have (commit subjects show eight)


class PrefixProblem(ValueError):
    """A uuid or prefix that names no record, or more than one; ``matches`` lists them."""

    def __init__(self, message: str, hint: str | None = None, matches: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.matches = matches or []


def resolve_uuid(index: RecordIndex, text: str, what: str = "record") -> str:
    """The full uuid of the record ``text`` names: a uuid, or a unique prefix of at least
    :data:`PREFIX_MIN` hex digits (dashes as in the uuid). Raises PrefixProblem."""
    if UUID4_RE.match(text):
        if not index.exists(text):
            raise PrefixProblem(
                f"no {what} {text} in the store", "check the uuid; `tools/status <uuid>` finds a record"
            )
        return text
    bare = text.replace("-", "")
    if len(text) >= 36 or not bare or any(c not in "0123456789abcdefABCDEF" for c in bare):
        raise PrefixProblem(f"{what}: {uuid_problem(text)}")
    if bare != bare.lower():
        raise PrefixProblem(f"{what}: uuid prefix {text!r} has uppercase letters; use {text.lower()!r}")
    if len(bare) < PREFIX_MIN:
        raise PrefixProblem(
            f"{what}: uuid prefix {text!r} is too short ({len(bare)} hex digits)",
            f"give at least {PREFIX_MIN} hex digits (commit subjects show eight)",
        )
    shape = "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx"
    if any((c == "-") != (shape[i] == "-") for i, c in enumerate(text)):
        raise PrefixProblem(f"{what}: {text!r} is not the beginning of a uuid ({shape})")
    found = sorted(  # a uuid two records share is one uuid here (the tools then refuse it: eee.rules.uuids)
        {
            rel.rsplit("/", 1)[-1][: -len(RECORD_SUFFIX)]
            for rel in index._list([f":(glob)data/*/*/*/{text}*{RECORD_SUFFIX}"])
            if rel.count("/") == 4 and rel.endswith(RECORD_SUFFIX) and not rel.endswith("_samples" + RECORD_SUFFIX)
        }
    )
    found = [u for u in found if u.startswith(text)]
    if not found:
        raise PrefixProblem(f"no {what} whose uuid begins with {text} in the store", "check the uuid")
    if len(found) > 1:
        raise PrefixProblem(
            f"{what}: uuid prefix {text} is ambiguous: {len(found)} records match ({', '.join(found[:10])}"
            + (", ..." if len(found) > 10 else "")
            + ")",
            "give more digits",
            found,
        )
    index.lookup(found)
    return found[0]
