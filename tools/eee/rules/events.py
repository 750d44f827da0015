"""Governance events, validated like records: each file on its own, then the ledger.

Per file: YAML, the event schema of the version it declares, the id matching the file
name and the timestamp. Then the whole ledger of the tree is folded in history order (:func:`eee.governance.status.fold`): an event
that names no record, retracts twice, supersedes into a cycle or with a retracted
replacement, resolves no dispute... is reported on its own file. The events are read
from a :class:`eee.store.tree.Tree`: the work tree, or a commit for the audit.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from eee.governance.events import EventCache, EventFileError, git_dir_of, load_bytes, schema_errors
from eee.governance.history import Entered, in_git
from eee.governance.history import entered as history_of
from eee.governance.index import RecordIndex
from eee.governance.status import fold
from eee.reporting.findings import FileResult, Finding
from eee.store.limits import EVENT_MAX_BYTES
from eee.store.paths import EVENT_SUFFIX, EVENTS_DIR, RECORD_SUFFIX
from eee.store.schemas import default_registry
from eee.store.staged import IndexTree
from eee.store.tree import SYMLINK, EmptyTree, GitTree, Overlay, Tree, Unreadable, WorkTree


def _id_findings(event: dict[str, Any], name: str, file: str) -> list[Finding]:
    out = []
    event_id = event.get("id")
    if isinstance(event_id, str) and event_id != name.rsplit(".", 1)[0]:
        out.append(
            Finding(
                file,
                "$.id",
                f"id {event_id!r} differs from the file name {name!r}",
                "an event's file is <id>.yaml",
                check="event",
            )
        )
    stamp = event.get("timestamp")
    if isinstance(event_id, str) and isinstance(stamp, str) and len(event_id) > 23:
        expected = stamp.replace("-", "").replace(":", "")
        if not expected.startswith(event_id[:15]):
            out.append(
                Finding(
                    file,
                    "$.timestamp",
                    f"timestamp {stamp} does not match the time in the id",
                    "the id begins with the event's UTC time",
                    check="event",
                )
            )
    return out


# Above this many uuids one listing of every record beats one pathspec per uuid.
_LIST_ALL_ABOVE = 64


def load_event(tree: Tree, rel: str) -> dict[str, Any]:
    """One event file of the tree, parsed; :class:`EventFileError` when it is not one."""
    try:
        data = tree.read(rel, EVENT_MAX_BYTES)  # an event is small: the cap stops a huge file before YAML sees it
    except Unreadable as exc:
        raise EventFileError(exc.finding.message) from None
    return load_bytes(data, rel.rsplit("/", 1)[-1])


def ledger_files(tree: Tree) -> list[str]:
    """The event files of the tree's ledger: ``governance/events/*.yaml``, in name order."""
    prefix = EVENTS_DIR + "/"
    return [
        rel
        for rel in tree.files(EVENTS_DIR)
        if "/" not in rel[len(prefix) :] and rel.endswith(EVENT_SUFFIX) and not rel[len(prefix) :].startswith(".")
    ]


def _base(tree: Tree) -> Tree:
    while isinstance(tree, Overlay):
        tree = tree.base
    return tree


def _cache_key(tree: Tree, rel: str) -> str | None:
    """What identifies the bytes of ``rel`` in ``tree`` for the :class:`EventCache`."""
    if isinstance(tree, Overlay):
        return None if rel in tree.planned else _cache_key(tree.base, rel)
    if isinstance(tree, GitTree):
        blob = tree.blob(rel)
        return f"b:{blob}" if blob else None
    if isinstance(tree, WorkTree):
        try:
            st = os.lstat(tree.path(rel))
        except OSError:
            return None
        return f"f:{rel.rsplit('/', 1)[-1]}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    return None


def load_ledger(tree: Tree) -> list[tuple[str, dict[str, Any] | EventFileError]]:
    """Every event file of the tree's ledger, parsed (through the git directory's cache of
    parsed events), or the reason it cannot be."""
    base = _base(tree)
    folder = base.repo if isinstance(base, GitTree) else base.root if isinstance(base, WorkTree) else None
    files = ledger_files(tree)
    cache = EventCache(git_dir_of(folder) if folder is not None and files else None)
    out: list[tuple[str, dict[str, Any] | EventFileError]] = []
    for rel in files:
        key = _cache_key(tree, rel)
        hit = cache.get(key)
        if hit is not None:
            out.append((rel, hit))
            continue
        try:
            event = load_event(tree, rel)
            cache.put(key, event)
            out.append((rel, event))
        except EventFileError as exc:
            out.append((rel, exc))
    cache.save()
    return out


def history(tree: Tree) -> tuple[dict[str, Entered], float | None]:
    """Where each event of the tree entered history, and the time uncommitted events are
    checked against: now in a git work tree (they are about to be committed), none for a
    commit (every event of it is committed) or a plain folder (no history to check)."""
    base = _base(tree)
    if isinstance(base, IndexTree):  # the hooks: the index is about to be committed
        return history_of(base.repo), time.time()
    if isinstance(base, GitTree):
        return history_of(base.repo, base.commit), None
    if isinstance(base, WorkTree) and in_git(base.root):
        return history_of(base.root), time.time()
    if isinstance(base, EmptyTree) and isinstance(tree, Overlay):
        return {}, time.time()
    return {}, None


def record_exists(tree: Tree, named: list[str]) -> Callable[[str], bool]:
    """Whether a record uuid is in the tree: a git index search in a work tree, one listing
    otherwise."""
    if isinstance(tree, Overlay):  # planned records, then the tree below them
        planned = {
            rel.rsplit("/", 1)[-1][: -len(RECORD_SUFFIX)]
            for rel in tree.planned
            if rel.endswith(RECORD_SUFFIX) and rel.count("/") == 4 and rel.startswith("data/")
        }
        below = record_exists(tree.base, named)
        return lambda uuid: uuid in planned or below(uuid)
    if isinstance(tree, WorkTree | IndexTree):  # a search of git's index, not a listing of every record
        # the index tree: what git's index holds (an untracked record is not in the commit)
        index = RecordIndex(tree.root, untracked=True) if isinstance(tree, WorkTree) else RecordIndex(tree.repo, False)
        if len(set(named)) > _LIST_ALL_ABOVE:
            index.all()
        index.lookup(named)
        return index.exists
    records = {
        rel.rsplit("/", 1)[-1][: -len(RECORD_SUFFIX)]
        for rel in tree.files("data")
        if rel.endswith(RECORD_SUFFIX) and rel.count("/") == 4
    }
    return records.__contains__


def check_events(tree: Tree, paths: list[str], exists: Callable[[str], bool] | None = None) -> list[FileResult]:
    """FileResults for the event files ``paths`` of ``tree``.

    ``exists`` answers whether a record uuid is in the store (default: look in the tree's
    ``data/``). The ledger is folded in history order (:func:`history`): the commit that
    added each event, then file name, uncommitted events last; an event declaring a time
    before its record's previous event, or more than a day from its commit's time (now,
    for one about to be committed), is reported."""
    registry = default_registry()
    # the ledger: every event of the store, read once; the files checked are among them
    ledger = load_ledger(tree)
    loaded = dict(ledger)
    results: dict[str, FileResult] = {}
    for rel in paths:
        file = tree.display(rel)
        result = results[rel] = FileResult(file, "event")
        if tree.mode(rel) == SYMLINK:
            result.findings.append(Finding(file, "$", "is a symbolic link", "events are regular files", check="event"))
            continue
        if rel.rpartition("/")[0] != EVENTS_DIR:
            result.findings.append(
                Finding(file, "$", f"events live directly in {EVENTS_DIR}/", "move the file there", check="event")
            )
        try:
            event = loaded[rel] if rel in loaded else load_event(tree, rel)
            if isinstance(event, EventFileError):
                raise event
        except EventFileError as exc:
            result.findings.append(
                Finding(
                    file,
                    "$",
                    f"unreadable event: {exc}",
                    "events are written by the governance tools (tools/retract, ...)",
                    check="event",
                )
            )
            continue
        for pointer, message in schema_errors(event, registry)[:10]:
            result.findings.append(Finding(file, pointer, f"{message} (event schema)", None, check="event"))
        result.findings.extend(_id_findings(event, rel.rsplit("/", 1)[-1], file))
    # the ledger in history order
    everything = [(p, e) for p, e in ledger if not isinstance(e, EventFileError)]
    by_id = {e.get("id"): p for p, e in everything}
    if exists is None:
        named = [str(e.get("record")) for _, e in everything] + [
            str(e.get(k)) for _, e in everything for k in ("replacement", "of") if e.get(k)
        ]
        exists = record_exists(tree, named)
    entered, now = history(tree)
    folded = fold([e for _, e in everything if isinstance(e.get("id"), str)], exists=exists, entered=entered, now=now)
    for event, problem in folded.problems:
        target = by_id.get(event.get("id"))
        if target in results:
            results[target].findings.append(
                Finding(
                    results[target].file,
                    "$",
                    problem.message,
                    problem.hint or "events are checked in history order against the record's status",
                    check="ledger",
                )
            )
    return list(results.values())
