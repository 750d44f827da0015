"""The flags of the tree the gate checks: what each record's ``flag`` events accept.

The hooks read the index (what is committed plus what is staged: a flag counts when it is
committed together with the record, or before it); the audit reads each commit's tree.
Only the event files of the records concerned are read: an event's file name carries the
first eight hex digits of its record's uuid, so one listing of ``governance/events/``
picks them out, and one ``git cat-file --batch`` reads them. The pairs come from the
ledger's own fold (:func:`eee.governance.status.flagged_findings`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from eee.git.cli import read_blobs, tree_children
from eee.governance import EVENT_SUFFIX, EVENTS_DIR
from eee.reporting.findings import FileResult, Finding, Summary


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


def _read(tree: object, path: str) -> bytes | None:
    from eee.store.tree import Unreadable

    try:
        return tree.read(path)  # type: ignore[attr-defined, no-any-return]
    except (Unreadable, OSError):
        return None


def pairs_of(events: list[dict[str, object]], uuid: str) -> set[tuple[str, str]]:
    """The (rule, JSON path) pairs the flags among ``events`` accept for record ``uuid``."""
    from eee.governance.status import flagged_findings, fold

    return flagged_findings(fold(events), uuid)


def flags_in(
    uuids: Iterable[str], rev: str | None = None, cwd: str | Path | None = None
) -> dict[str, set[tuple[str, str]]]:
    """uuid -> flagged (rule, JSON path) pairs, from the events of the index (``rev`` None)
    or of commit ``rev``."""
    wanted = set(uuids)
    if not wanted:
        return {}
    return _flags_among(_names(rev, cwd), wanted, rev, cwd)


def _flags_among(
    names: list[str], wanted: set[str], rev: str | None, cwd: str | Path | None
) -> dict[str, set[tuple[str, str]]]:
    """:func:`flags_in` over the event file ``names`` of the tree (a record's flags are
    among the events whose names carry its uuid's first eight digits)."""
    out: dict[str, set[tuple[str, str]]] = {u: set() for u in wanted}
    prefixes = {f"-{u[:8]}-" for u in wanted}
    names = [n for n in names if any(p in n for p in prefixes)]
    if not names:
        return out
    from eee.governance.events import EventFileError, load_text

    events: dict[str, list[dict[str, object]]] = {}
    if rev is None:
        from eee.store.staged import index_tree

        tree = index_tree(cwd)
        contents = [_read(tree, f"{EVENTS_DIR}/{n}") for n in names]
    else:
        contents = [data for _, data in read_blobs([f"{rev}:{EVENTS_DIR}/{n}" for n in names], cwd)]
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
            out[uuid] = pairs_of(found, uuid)
    return out


def lookup(table: dict[str, set[tuple[str, str]]]) -> Callable[[str], Collection[tuple[str, str]]]:
    """The table as the function :func:`eee.rules.flags.accept_flagged` asks."""
    return lambda uuid: table.get(uuid, ())


def flags_of(
    uuids: Iterable[str], revs: Iterable[str | None], cwd: str | Path | None = None
) -> dict[str, set[tuple[str, str]]]:
    """The union of :func:`flags_in` over several trees (the audit: a commit and the range's end)."""
    wanted = set(uuids)
    out: dict[str, set[tuple[str, str]]] = {u: set() for u in wanted}
    for rev in dict.fromkeys(revs):
        for uuid, pairs in flags_in(wanted, rev, cwd).items():
            out[uuid] |= pairs
    return out


def without_flagged(
    findings: list[Finding], revs: Iterable[str | None] = (None,), cwd: str | Path | None = None
) -> list[Finding]:
    """``findings`` less those the flags accept: the flags of the index (``None``) or of
    the commits ``revs``."""
    from eee.rules.flags import accept_flagged, records_of

    uuids = records_of(findings)
    if not uuids:
        return findings
    return accept_flagged(findings, lookup(flags_of(uuids, revs, cwd)))[0]


class IndexFlags:
    """Leaves out of validator results the findings the index's flags accept, a batch of
    results at a time (a streamed run): the index's event names are listed once, and each
    batch reads the events of the records its findings name. A record's flags come from
    its own events only, so batch by batch is the same as all at once."""

    def __init__(self, cwd: str | Path | None = None) -> None:
        self.cwd = cwd
        self._names: list[str] | None = None

    def __call__(self, results: Iterable[FileResult]) -> None:
        from eee.rules.flags import accept_flagged, records_of

        results = list(results)
        uuids = records_of(f for r in results for f in r.findings)
        if not uuids:
            return
        if self._names is None:
            self._names = _names(None, self.cwd)
        flags = lookup(_flags_among(self._names, uuids, None, self.cwd))
        for result in results:
            result.findings = accept_flagged(result.findings, flags)[0]


def summary_without_flagged(summary: Summary, cwd: str | Path | None = None) -> Summary:
    """A validator run with the findings the index's flags accept left out (each file's list)."""
    IndexFlags(cwd)(summary.results)
    return summary
