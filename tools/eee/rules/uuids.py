"""One uuid, one record, for ever: the rule ``uuid``, decided by one function.

A record's uuid (its file name) is how events, status, catalogue rows and site links find
it. No other path may carry it: not in published history (records are never deleted from
it, so retracted and superseded records keep their uuid for ever), not in the commit being
checked. :func:`uuid_findings` decides, for the record paths a caller checks, against the
*holders* of their uuids (every record path that carries each one where the caller looks);
each caller says where that is:

- **the gate** (hook ``eee-naming``, :func:`index_holders`): the next commit as git's index
  holds it: HEAD's records through the duplicates index in the git directory (a lookup by
  uuid, whatever the store's size), less what the index deletes, plus what it stages; an
  index too far behind HEAD is not waited for: git's index is searched instead. An amend
  or a reset of a commit never published holds only what the new commit holds;
- **the audit** (and so the server gate, which runs it: :class:`TreeRecords`): git objects
  only, never a file of the git directory (but at the server gate, whose own index of the
  audit answers for a tree it holds exactly): the records of every parent's tree and of the
  published commits the first parent grew from (:meth:`eee.git.published.Published.boundary`)
  and the records earlier commits of the audited range deleted (an error of their own, whose
  uuids stay taken), plus what the commit itself adds (a merge included). A commit that was
  reset before it was published is in no tree the audit reads;
- **eee import** (:mod:`eee.imports.plan`): the store's records and the records planned
  before; an identical file is already present, any other file of a taken uuid is refused;
- **eee convert --uuid** and **eee supersede --uuid**: the store's records (committed,
  staged or in the work tree), before anything is written;
- **the governance tools** (``eee retract <uuid>`` and the others): a uuid that names two
  records resolves to neither, so that no action ever falls on an impostor.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from eee.reporting.findings import Finding
from eee.store.paths import DATA_DIR, RECORD_SUFFIX, tree_path_problem

if TYPE_CHECKING:
    from eee.store.staged import IndexTree

# uuids -> every record path holding each one (where the caller looks)
Holders = Callable[[list[str]], Mapping[str, Iterable[str]]]

HINT = (
    "a uuid names one record for ever: give this record a fresh uuid (its file name; `eee convert` and "
    "`eee supersede` draw one when --uuid is left out)"
)


def record_uuid(path: str) -> str | None:
    """The uuid a record path names, lowercased (``data/<b>/<d>/<m>/<uuid>.json``); None for
    any other path."""
    if not (path.startswith(DATA_DIR + "/") and path.endswith(RECORD_SUFFIX) and path.count("/") == 4):
        return None
    return path.rsplit("/", 1)[1][: -len(RECORD_SUFFIX)].lower()


def uuid_findings(
    paths: Iterable[str],
    holders: Holders,
    where: Callable[[str], str] = lambda p: p,
    hint: str = HINT,
    new: bool = False,
) -> list[Finding]:
    """The rule ``uuid``: each record path of ``paths`` whose uuid another path holds.

    ``holders(uuids)`` gives every record path that carries each uuid where the caller looks
    (the checked paths among them or not). When the only other holders are checked paths
    too (two new records of one uuid), the first of them in path order may stay and the
    others are reported; a holder the caller did not check is always reported against.
    ``new``: the paths are records a tool is about to write, so a record already at the
    very path holds the uuid too (a commit's own paths are its records)."""
    mine: dict[str, str] = {}
    for path in paths:
        uuid = record_uuid(path)
        if uuid is not None:
            mine[path] = uuid
    if not mine:
        return []
    held = holders(sorted(set(mine.values())))
    out: list[Finding] = []
    for path, uuid in sorted(mine.items()):
        others = sorted(set(held.get(uuid, ())) - (set() if new else {path}))
        if not others:
            continue
        if all(o in mine for o in others) and path < others[0]:
            continue  # new records of one uuid: the first may stay, the later ones are reported
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        out.append(
            Finding(
                where(path),
                "$",
                f"uuid {uuid} is already used by {shown}: one uuid names one record for ever "
                "(retracted and superseded records included)",
                hint,
                check="uuid",
            )
        )
    return out


def by_uuid(paths: Iterable[str]) -> dict[str, list[str]]:
    """Record paths grouped by their uuid (other paths left out)."""
    out: dict[str, list[str]] = {}
    for path in paths:
        uuid = record_uuid(path)
        if uuid is not None:
            out.setdefault(uuid, []).append(path)
    return out


def merged(*sources: Mapping[str, Iterable[str]]) -> Holders:
    """Holders that are the union of ``sources`` (uuid -> paths)."""

    def holders(uuids: list[str]) -> dict[str, list[str]]:
        return {u: sorted({p for s in sources for p in s.get(u, ())}) for u in uuids}

    return holders


# --- the audit: git objects only ---------------------------------------------------------------


class TreeRecords:
    """The records of commits' trees that carry given uuids, read from git's object store.
    The first ``data/`` tree asked for is listed whole (``git ls-tree -r``, kept as git
    printed it); every other tree is that listing and git's diff from it (``git diff-tree``:
    a commit of a push or of an import differs from the one before by what it adds), unless
    the diff is large, then it is listed whole too. Only the entries whose name is a wanted
    uuid are read into paths: a store of 230,000 records is searched as bytes, not walked
    entry by entry (the walk of every parent's listing cost the server gate some 2.5 s a
    commit; git's own walk of such a tree takes about 1 s, paid once an audit)."""

    KEEP = 8
    DIFF_MAX = 4 * 1024 * 1024  # bytes of diff past which a tree is listed whole

    def __init__(self, cwd: str | Path, indexed: bool = False) -> None:
        self.cwd = cwd
        # indexed: the git directory is the server gate's own (no pusher writes it), so the
        # audit's index there may answer for a tree it holds (:meth:`_indexed`); elsewhere a
        # cache of a clone is never trusted over git's objects
        self._git_dir: str | None = None if indexed else ""
        self._base: tuple[str, bytes, bytes] | None = None  # (tree, listing, lowercased)
        self._names: dict[bytes, list[int]] | None = None  # the base's names, indexed when many uuids are asked
        # tree -> (listing or the diff's added entries as a listing, lowercased, paths gone from the base or None)
        self._views: OrderedDict[str, tuple[bytes, bytes, frozenset[str] | None]] = OrderedDict()
        # records that commits audited so far deleted (an error of their own): still holders
        # for the commits after them, so a uuid freed by a deletion is never free
        self.deleted: dict[str, list[str]] = {}

    def forget(self, paths: Iterable[str]) -> None:
        """Remember that a commit deleted these paths (their uuids stay taken)."""
        for uuid, held in by_uuid(paths).items():
            self.deleted.setdefault(uuid, []).extend(held)

    def _view(self, tree: str) -> tuple[bytes, bytes, frozenset[str] | None]:
        """The listing of the ``data/`` tree ``tree`` (or the base's and the entries its diff
        adds, with the paths it takes away)."""
        from eee.git.cli import GitError, diff_tree_raw, ls_tree_raw

        if self._base is not None and tree == self._base[0]:
            return self._base[1], self._base[2], None
        found = self._views.get(tree)
        if found is not None:
            self._views.move_to_end(tree)
            return found
        diff = None
        if self._base is not None:
            try:
                diff = diff_tree_raw(self._base[0], tree, self.cwd)
            except GitError:  # a tree git's walker cannot read (a crafted entry, a finding of its own)
                diff = None
        if diff is None or len(diff) > self.DIFF_MAX:
            # what git lists before it stops at such an entry (check=False), as the walk always read
            out = ls_tree_raw(tree, self.cwd)
            if self._base is None:
                self._base = (tree, out, out.lower())
                return self._base[1], self._base[2], None
            found = (out, out.lower(), None)
        else:
            listing, gone = bytearray(), set()
            items = diff.split(b"\0")
            for meta, name in zip(items[0::2], items[1::2], strict=False):
                fields = meta.split()
                if len(fields) != 5 or not meta.startswith(b":"):
                    continue
                mode, blob, status = fields[1], fields[3], fields[4]
                if status != b"D" and mode not in (b"000000", b"040000", b"160000"):
                    listing += b"%s blob %s\t%s\0" % (mode, blob, name)
                else:  # deleted, or no longer a file
                    gone.add(f"{DATA_DIR}/" + name.decode("utf-8", "surrogateescape"))
            found = (bytes(listing), bytes(listing).lower(), frozenset(gone))
        self._views[tree] = found
        while len(self._views) > self.KEEP:
            self._views.popitem(last=False)
        return found

    FIND_MAX = 16  # uuids looked for one by one in a whole listing; past it, the listing's names are indexed once

    def _find(self, out: bytes, lowered: bytes, wanted: set[str]) -> list[str]:
        """The paths of ``git ls-tree -r -z`` output ``out`` whose name is a wanted uuid."""
        needles = {u: f"/{u}{RECORD_SUFFIX}\0".encode() for u in wanted}
        starts: list[tuple[int, bytes]] = []
        if self._base is not None and out is self._base[1] and len(wanted) > self.FIND_MAX:
            if self._names is None:  # name (lowercased, without .json) -> where "/name.json\0" starts
                self._names = {}
                for m in re.finditer(rb"/([^/\0]*)\.json\0", lowered):
                    self._names.setdefault(m.group(1), []).append(m.start())
            for u, needle in needles.items():
                starts += [(at, needle) for at in self._names.get(u.encode(), ())]
        else:
            for needle in needles.values():
                at = lowered.find(needle)
                while at >= 0:
                    starts.append((at, needle))
                    at = lowered.find(needle, at + 1)
        paths = []
        for at, needle in starts:
            start = out.rfind(b"\0", 0, at) + 1
            meta, _, name = out[start : at + len(needle) - 1].partition(b"\t")
            parts = meta.split()
            path = f"{DATA_DIR}/" + name.decode("utf-8", "surrogateescape")
            if len(parts) == 3 and parts[1] == b"blob" and tree_path_problem(path) is None:
                paths.append(path)
        return paths

    def _indexed(self, tree: str, uuids: set[str]) -> dict[str, list[str]] | None:
        """The answer of the audit's duplicates index when it holds exactly the ``data/``
        tree ``tree`` (:func:`eee.governance.duplicates.indexed_paths`), at the server gate
        only (``indexed``): it keeps that index at the default branch's head and the
        duplicates rule brings it to each commit audited, so a push's parents are answered by
        uuid, not by listing 230,000 entries. There the index is written only by the gate's
        hooks, from git's objects, in a git directory no push writes; None when it cannot
        answer."""
        from eee.git.cli import GitError, git_dir
        from eee.governance.duplicates import indexed_paths

        if not uuids or any(len(u) != 36 for u in uuids):  # the index keys a name's last 36 letters: a uuid's
            return None
        if self._git_dir is None:
            try:
                self._git_dir = str(git_dir(self.cwd))
            except GitError:  # no git directory to ask
                self._git_dir = ""
        if not self._git_dir:
            return None
        found = indexed_paths(self._git_dir, tree, sorted(uuids))
        if found is None:
            return None
        out = {u: [p for p in held if tree_path_problem(p) is None] for u, held in found.items()}
        return {u: held for u, held in out.items() if held}

    def of(self, rev: str, uuids: Iterable[str]) -> dict[str, list[str]]:
        """uuid -> the record paths of ``rev``'s tree that carry it, for ``uuids`` (lowercase,
        as :func:`record_uuid` gives them); empty when it has no ``data/``. A name is found
        by its bytes lowercased (a uuid is ASCII: no other character lowercases into one),
        then read as the walk read every entry: a blob, a path the store can hold (a crafted
        entry is a finding of its own, never a record), naming that uuid. The audit's index
        answers instead where it holds exactly that tree (:meth:`_indexed`)."""
        from eee.git.cli import resolve

        tree = resolve(f"{rev}:{DATA_DIR}", self.cwd)
        if tree is None:
            return {}
        indexed = self._indexed(tree, set(uuids))
        if indexed is not None:
            return indexed
        view = self._view(tree)
        out, lowered, gone = view
        wanted = set(uuids)
        paths = self._find(out, lowered, wanted)
        if gone is not None and self._base is not None:  # the base's entries, less what the diff took away
            paths += [p for p in self._find(self._base[1], self._base[2], wanted) if p not in gone]
        return {u: held for u, held in by_uuid(dict.fromkeys(paths)).items() if u in wanted}

    def holders(self, revs: Iterable[str], added: Iterable[str]) -> Holders:
        """Holders over the trees of ``revs`` and the paths ``added`` (the commit's own)."""
        revs, own = list(dict.fromkeys(revs)), by_uuid(added)

        def holders(uuids: list[str]) -> dict[str, list[str]]:
            return merged(*(self.of(rev, uuids) for rev in revs), self.deleted, own)(uuids)

        return holders


# --- the gate: the next commit, as git's index holds it ------------------------------------------


def index_holders(tree: IndexTree) -> Holders:
    """Holders in the next commit: HEAD's records through the duplicates index (brought to
    HEAD if that reads at most :data:`eee.governance.duplicates.HOOK_LIMIT` records), less
    the paths the index deletes, plus the staged records; git's index itself when the
    duplicates index cannot answer (:class:`eee.governance.duplicates.Stale`)."""
    from eee.store.staged import staged

    changes = staged(tree.repo, tree.has_head)
    deleted = {c.path for c in changes if c.status == "D"}
    staged_records = by_uuid(c.path for c in changes if c.status != "D")

    def holders(uuids: list[str]) -> dict[str, list[str]]:
        head = _head_records(Path(tree.repo), uuids) if tree.has_head else {}
        if head is None:  # no duplicates index to ask: git's index is the next commit
            from eee.governance.index import RecordIndex

            return RecordIndex(Path(tree.repo), untracked=False).holders(uuids)
        return {
            u: sorted({p for p in head.get(u, ()) if p not in deleted} | set(staged_records.get(u, ()))) for u in uuids
        }

    return holders


def _head_records(root: Path, uuids: list[str]) -> dict[str, list[str]] | None:
    """uuid -> HEAD's record paths, from the duplicates index; None when it cannot answer."""
    import sqlite3

    from eee.governance.duplicates import HOOK_LIMIT, DuplicateIndex, Stale

    try:
        index = DuplicateIndex(root, timeout=2)
    except (sqlite3.Error, OSError):  # a cache that cannot be opened: git's index is asked instead
        return None
    try:
        index.sync(limit=HOOK_LIMIT)
        return index.paths_of(uuids)
    except (Stale, sqlite3.Error):
        return None
    finally:
        index.close()
