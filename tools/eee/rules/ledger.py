"""The ledger's rules: governance events, each file on its own and all of them in history order.

- **Event files** (:func:`check_events`): YAML, the event schema of the version each
  declares, the id matching the file name and the timestamp, regular files directly in
  ``governance/events/``.
- **Time, legality and the fold** (:func:`eee.rules.fold.fold`, :func:`eee.rules.fold.read_ledger`,
  re-exported here): the events folded in the order they entered history, each refused
  that breaks the state machine or the time rules; the one status function every reader
  uses. The events hook and the audit report here what it refuses.

The events are read from a :class:`eee.store.tree.Tree`: the work tree, the index (the hooks)
or a commit (the audit). A flag that accepts nothing is reported (``flag-unmatched``).
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
from eee.governance.status import Ledger
from eee.reporting.findings import WARNING, FileResult, Finding
from eee.rules.fold import (  # the fold, re-exported: readers long imported it from here
    Event,
    IllegalEvent,
    binding_problem,
    check_event,
    companion_problem,
    fold,
    parse_time,
    read_ledger,
    time_problem,
)
from eee.rules.settle import counts, resolve_flag_command
from eee.store.limits import EVENT_MAX_BYTES, RECORD_MAX_BYTES
from eee.store.paths import EVENT_SUFFIX, EVENTS_DIR, RECORD_SUFFIX
from eee.store.schemas import default_registry
from eee.store.staged import IndexTree
from eee.store.tree import SYMLINK, EmptyTree, GitTree, Overlay, Tree, Unreadable, WorkTree

__all__ = [
    "Event",
    "IllegalEvent",
    "binding_problem",
    "check_event",
    "check_events",
    "companion_problem",
    "fold",
    "parse_time",
    "read_ledger",
    "record_exists",
    "time_problem",
]


# --- event files ----------------------------------------------------------------------------


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
    _unmatched(tree, results, everything, folded, entered)
    return list(results.values())


def _unmatched(
    tree: Tree,
    results: dict[str, FileResult],
    everything: list[tuple[str, Event]],
    folded: Ledger,
    entered: dict[str, Entered],
) -> None:
    """A warning (``flag-unmatched``) on each flag event checked that accepts nothing: its
    record path is not in the tree or holds other bytes than it names, or the record has no
    finding of its rule at its JSON path (see :mod:`eee.rules.flags`). A flag resolved since,
    or of a record that no longer counts, is settled (:mod:`eee.rules.settle`): not warned."""
    applied = {id(e) for state in folded.states.values() if counts(state) for e in state.open_flags}
    checked = [(rel, e) for rel, e in everything if rel in results and id(e) in applied]
    if not checked:
        return
    from eee.rules.flags import content_ids, flag_of, legacy_binding, record_findings

    base = _base(tree)
    repo = (
        base.repo
        if isinstance(base, GitTree)
        else base.root
        if isinstance(base, WorkTree) and in_git(base.root)
        else None
    )
    for rel, event in checked:
        flag = flag_of(event)
        if flag.record_path is None:
            added = entered.get(rel.rsplit("/", 1)[-1])
            if repo is None or added is None or added.commit is None:
                continue  # not in git, or not committed (refused on its own): nothing to bind it to
            flag = legacy_binding(flag, repo, added.commit)
            if flag.record_path is None:
                _warn(
                    results[rel],
                    flag,
                    f"it binds no record: at the commit that added it ({added.commit[:10]}), "
                    f"no single record carries the uuid {flag.record}",
                )
                continue
        assert flag.record_path is not None
        try:
            data = tree.read(flag.record_path, RECORD_MAX_BYTES)
        except Unreadable:
            _warn(results[rel], flag, f"the record it accepts, {flag.record_path}, is not in the tree")
            continue
        sha256, blob = content_ids(data)
        if not (sha256 == flag.sha256 if flag.sha256 is not None else blob == flag.blob):
            _warn(results[rel], flag, f"{flag.record_path} holds other bytes than the ones it accepts")
            continue
        found = record_findings(tree, flag.record_path, flag.rule)
        if found is not None and (flag.rule, flag.path) not in found:
            _warn(
                results[rel],
                flag,
                f"{flag.record_path} has no [{flag.rule}] finding at {flag.path}",
                "flag the finding as the report shows it ([rule] and JSON path); ",
            )


def _warn(result: FileResult, flag: Any, why: str, first: str = "") -> None:
    """The warning that ``flag`` accepts nothing, and its settle path: a maintainer resolves it."""
    result.findings.append(
        Finding(
            result.file,
            "$",
            f"the flag accepts nothing: {why}",
            f"{first}a maintainer resolves this flag, which settles the warning: "
            f"`{resolve_flag_command(flag.record, flag.event)}`",
            severity=WARNING,
            check="flag-unmatched",
        )
    )
