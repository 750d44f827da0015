"""The flags of the tree the gate checks, and where a finding's file is in it.

The hooks read the index (what is committed plus what is staged: a flag counts when it is
committed together with the record, or before it); ``eee validate`` reads the index's
flags for the files of the work tree; the audit reads each commit's tree. Only the event
files of the records concerned are read: an event's file name carries the first eight
hex digits of its record's uuid, so one listing of ``governance/events/`` picks them out,
and one ``git cat-file --batch`` reads them. The flags come from the ledger's own fold
(:func:`eee.rules.flags.flags_of`); a flag written before event schema 1.2.0 is bound to
the record blob at the commit that added it (:func:`eee.rules.flags.legacy_binding`).

What a flag accepts is decided by :func:`eee.rules.flags.accept_flagged`, given where
each finding's file is (its repository path and the ids of its content) in the tree checked.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from eee.git.cli import read_blobs, tree_children
from eee.governance import EVENT_SUFFIX, EVENTS_DIR
from eee.reporting.findings import FileResult, Finding, Summary
from eee.store.limits import EVENT_MAX_BYTES

Flags = dict[str, list[Any]]  # record uuid -> its flags (eee.rules.flags.Flag)
Locate = Callable[[str], Any]  # a finding's file -> (repository path, content ids), or None


def _names(rev: str | None, cwd: str | Path | None) -> list[str]:
    if (
        rev is None
    ):  # the index, as the hooks read it: HEAD's folder and the staged changes (no read of git's index file)
        from eee.git.cli import GitError
        from eee.store.staged import index_tree

        try:
            return [n for n in index_tree(cwd).names(EVENTS_DIR) if n.endswith(EVENT_SUFFIX)]
        except GitError:  # not a git work tree: no index, no flags
            return []
    names = tree_children(rev, EVENTS_DIR, cwd)
    return [n for n in names if n.endswith(EVENT_SUFFIX)]


def _read(tree: object, path: str, limit: int | None = None) -> bytes | None:
    from eee.store.tree import Unreadable

    try:
        return tree.read(path) if limit is None else tree.read(path, limit)  # type: ignore[attr-defined, no-any-return]
    except (Unreadable, OSError):
        return None


def _by_prefix(names: Iterable[str]) -> dict[str, list[str]]:
    """Event file names by the eight hex digits of the record uuid they carry
    (``<time>-<action>-<uuid8>-<random>.yaml``)."""
    out: dict[str, list[str]] = {}
    for name in names:
        parts = name[: -len(EVENT_SUFFIX)].split("-")
        if len(parts) >= 4:
            out.setdefault(parts[-2], []).append(name)
    return out


def _flags_among(names: dict[str, list[str]], wanted: set[str], rev: str | None, cwd: str | Path | None) -> Flags:
    """:func:`flags_in` over the event file ``names`` of the tree, by uuid prefix (a
    record's flags are among the events whose names carry its uuid's first eight digits)."""
    out: Flags = {u: [] for u in wanted}
    chosen = sorted({n for u in wanted for n in names.get(u[:8], ())})
    if not chosen:
        return out
    from eee.governance.events import EventFileError, load_text

    events: dict[str, list[dict[str, object]]] = {}
    if rev is None:
        from eee.store.staged import index_tree

        tree = index_tree(cwd)
        contents = [_read(tree, f"{EVENTS_DIR}/{n}") for n in chosen]
    else:
        names = [f"{rev}:{EVENTS_DIR}/{n}" for n in chosen]
        contents = [data for _, data in read_blobs(names, cwd, EVENT_MAX_BYTES)]  # a larger one is no event
    for data in contents:
        if data is None:
            continue
        try:
            event = load_text(data.decode("utf-8"))
        except (UnicodeDecodeError, EventFileError):
            continue  # the events hook reports it
        record = event.get("record")
        if isinstance(record, str) and record in wanted:
            events.setdefault(record, []).append(event)
    for uuid, found in events.items():
        if any(e.get("action") == "flag" for e in found):
            out[uuid] = _bound(found, uuid, rev, cwd)
    return out


def _bound(events: list[dict[str, object]], uuid: str, rev: str | None, cwd: str | Path | None) -> list[Any]:
    """The flags among a record's ``events`` (folded), each bound to the content it accepts."""
    from eee.rules.flags import flags_of, legacy_binding
    from eee.rules.ledger import fold

    flags = flags_of(fold(events), uuid)
    if all(f.record_path is not None for f in flags):
        return flags
    from eee.governance.history import entered

    root = Path(cwd) if cwd is not None else Path.cwd()
    history = entered(root, rev or "HEAD")  # a staged flag is in no commit: it binds nothing
    out = []
    for flag in flags:
        added = history.get(f"{flag.event}{EVENT_SUFFIX}")
        out.append(legacy_binding(flag, root, added.commit if added is not None else None))
    return out


def flags_in(uuids: Iterable[str], rev: str | None = None, cwd: str | Path | None = None) -> Flags:
    """uuid -> its flags, from the events of the index (``rev`` None) or of commit ``rev``."""
    wanted = set(uuids)
    if not wanted:
        return {}
    return _flags_among(_by_prefix(_names(rev, cwd)), wanted, rev, cwd)


def flags_of(uuids: Iterable[str], revs: Iterable[str | None], cwd: str | Path | None = None) -> Flags:
    """The union of :func:`flags_in` over several trees (the audit: a commit and the range's end)."""
    wanted = set(uuids)
    out: Flags = {u: [] for u in wanted}
    for rev in dict.fromkeys(revs):
        for uuid, flags in flags_in(wanted, rev, cwd).items():
            out[uuid] = list(dict.fromkeys([*out[uuid], *flags]))
    return out


def _lookup(table: Flags) -> Callable[[str], Collection[Any]]:
    return lambda uuid: table.get(uuid, ())


# --- where a finding's file is -----------------------------------------------------------------


def _located(rel: str, data: bytes | None) -> Any:
    from eee.rules.flags import content_ids

    return (rel, content_ids(data)) if data is not None else None


def in_index(cwd: str | Path | None = None) -> Locate:
    """A finding's file as the hooks name it (a path of the index), read from the index."""
    from eee.store.limits import RECORD_MAX_BYTES
    from eee.store.staged import index_tree

    tree = index_tree(cwd)
    return lambda file: _located(file, _read(tree, file, RECORD_MAX_BYTES))


def in_work_tree(cwd: str | Path | None = None) -> Locate:
    """A finding's file as ``eee validate`` names it (relative to the current folder, or
    absolute), read from the work tree of the store at ``cwd``."""
    from eee.git.cli import GitError, toplevel
    from eee.store.limits import RECORD_MAX_BYTES
    from eee.store.tree import WorkTree

    try:
        root = toplevel(cwd)
    except GitError:
        return lambda file: None
    tree = WorkTree(root)

    def locate(file: str) -> Any:
        rel = tree.rel(os.path.abspath(file))
        return _located(rel, _read(tree, rel, RECORD_MAX_BYTES)) if rel is not None else None

    return locate


def in_commit(commit: str, cwd: str | Path) -> Locate:
    """A finding's file as the audit names it (``<short commit>:path``), read from ``commit``."""
    from eee.store.limits import RECORD_MAX_BYTES
    from eee.store.tree import GitTree

    tree = GitTree(Path(cwd), commit)

    def locate(file: str) -> Any:
        rel = file.split(":", 1)[1] if ":" in file else file
        return _located(rel, _read(tree, rel, RECORD_MAX_BYTES))

    return locate


def without_flagged(
    findings: list[Finding],
    revs: Iterable[str | None] = (None,),
    cwd: str | Path | None = None,
    locate: Locate | None = None,
) -> list[Finding]:
    """``findings`` less those the flags accept: the flags of the index (``None``) or of
    the commits ``revs``; ``locate``: where a finding's file is (default: the index)."""
    from eee.rules.flags import accept_flagged, records_of

    uuids = records_of(findings)
    if not uuids:
        return findings
    return accept_flagged(findings, _lookup(flags_of(uuids, revs, cwd)), locate or in_index(cwd))[0]


class IndexFlags:
    """Leaves out of validator results the findings the index's flags accept, a batch of
    results at a time (a streamed run): the index's event names are listed once, and each
    batch reads the events of the records its findings name. A record's flags come from
    its own events only, so batch by batch is the same as all at once. ``staged``: the
    files checked are the index's (the hooks), else the work tree's (``eee validate``)."""

    def __init__(self, cwd: str | Path | None = None, staged: bool = False) -> None:
        self.cwd = cwd
        self.staged = staged
        self._names: dict[str, list[str]] | None = None
        self._locate: Locate | None = None

    def __call__(self, results: Iterable[FileResult]) -> None:
        from eee.rules.flags import accept_flagged, records_of

        results = list(results)
        uuids = records_of(f for r in results for f in r.findings)
        if not uuids:
            return
        if self._names is None:
            self._names = _by_prefix(_names(None, self.cwd))
            self._locate = in_index(self.cwd) if self.staged else in_work_tree(self.cwd)
        assert self._locate is not None
        flags = _lookup(_flags_among(self._names, uuids, None, self.cwd))
        for result in results:
            result.findings = accept_flagged(result.findings, flags, self._locate)[0]


def summary_without_flagged(summary: Summary, cwd: str | Path | None = None) -> Summary:
    """A validator run of the index (the validate hook) with the findings the index's flags
    accept left out (each file's list)."""
    IndexFlags(cwd, staged=True)(summary.results)
    return summary
