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
  only, never a file of the git directory: the records of every parent's tree and of the
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
    """The records of commits' trees by uuid, read from git's object store (``git ls-tree``
    of each ``data/`` tree; the last few listings are kept, by tree id)."""

    KEEP = 4

    def __init__(self, cwd: str | Path) -> None:
        self.cwd = cwd
        self._listings: OrderedDict[str, dict[str, list[str]]] = OrderedDict()
        # records that commits audited so far deleted (an error of their own): still holders
        # for the commits after them, so a uuid freed by a deletion is never free
        self.deleted: dict[str, list[str]] = {}

    def forget(self, paths: Iterable[str]) -> None:
        """Remember that a commit deleted these paths (their uuids stay taken)."""
        for uuid, held in by_uuid(paths).items():
            self.deleted.setdefault(uuid, []).extend(held)

    def of(self, rev: str) -> dict[str, list[str]]:
        """uuid -> the record paths of ``rev``'s tree (empty when it has no ``data/``)."""
        from eee.git.cli import fields, resolve

        tree = resolve(f"{rev}:{DATA_DIR}", self.cwd)
        if tree is None:
            return {}
        found = self._listings.get(tree)
        if found is not None:
            self._listings.move_to_end(tree)
            return found
        paths = []
        for entry in fields("ls-tree", "-r", "-z", "--end-of-options", tree, cwd=self.cwd):
            meta, _, name = entry.partition(b"\t")
            parts = meta.split()
            if len(parts) != 3 or parts[1] != b"blob":
                continue
            path = f"{DATA_DIR}/" + name.decode("utf-8", "surrogateescape")
            if tree_path_problem(path) is None:  # a crafted entry is a finding of its own, never a record
                paths.append(path)
        found = by_uuid(paths)
        self._listings[tree] = found
        while len(self._listings) > self.KEEP:
            self._listings.popitem(last=False)
        return found

    def holders(self, revs: Iterable[str], added: Iterable[str]) -> Holders:
        """Holders over the trees of ``revs`` and the paths ``added`` (the commit's own)."""
        listings = [self.of(rev) for rev in dict.fromkeys(revs)]
        return merged(*listings, self.deleted, by_uuid(added))


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
