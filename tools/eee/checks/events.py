"""Governance events, validated like records: each file on its own, then the ledger.

Per file: YAML, the event schema, the id matching the file name and the timestamp. Then
the whole ledger of the store is folded (:func:`eee.governance.status.fold`): an event
that names no record, retracts twice, supersedes into a cycle or with a retracted
replacement, resolves no dispute... is reported on its own file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eee.findings import FileResult, Finding
from eee.governance import EVENTS_DIR


def _id_findings(event: dict[str, Any], path: Path, file: str) -> list[Finding]:
    out = []
    event_id = event.get("id")
    if isinstance(event_id, str) and event_id != path.stem:
        out.append(
            Finding(
                file,
                "$.id",
                f"id {event_id!r} differs from the file name {path.name!r}",
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


def _key(path: str | Path) -> str:
    """One spelling of a file's path, however the store's folder was reached (a symlink)."""
    p = Path(path)
    return str(p.parent.resolve() / p.name)


def check_events(
    paths: list[str], root: str, display: Any, exists: Callable[[str], bool] | None = None
) -> list[FileResult]:
    """FileResults for the event files ``paths`` of the store at ``root``.

    ``exists`` answers whether a record uuid is in the store (default: look in ``root``'s
    ``data/``); the audit passes the records of the commit it checks."""
    from eee.governance.events import EventFileError, load, load_all
    from eee.governance.index import RecordIndex
    from eee.governance.status import fold
    from eee.pointer import format_path
    from eee.schemas import default_registry

    validator = default_registry().other_validator("governance", "event.schema.json")
    # the ledger: every event of the store, read once; the files checked are among them
    ledger_files = load_all(Path(root))
    loaded = {_key(p): e for p, e in ledger_files}
    results: dict[str, FileResult] = {}
    for absolute in paths:
        file = display(absolute)
        key = _key(absolute)
        result = results[key] = FileResult(file, "event")
        path = Path(absolute)
        if os.path.islink(absolute):
            result.findings.append(Finding(file, "$", "is a symbolic link", "events are regular files", check="event"))
            continue
        if not path.parent.as_posix().rstrip("/").endswith(EVENTS_DIR):
            result.findings.append(
                Finding(file, "$", f"events live directly in {EVENTS_DIR}/", "move the file there", check="event")
            )
        try:
            event = loaded[key] if key in loaded else load(path)
            if isinstance(event, EventFileError):
                raise event
        except (OSError, EventFileError) as exc:
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
        for err in list(validator.iter_errors(event))[:10]:
            result.findings.append(
                Finding(
                    file, format_path(list(err.instance_path)), f"{err.message} (event schema)", None, check="event"
                )
            )
        result.findings.extend(_id_findings(event, path, file))
    # the ledger in time order
    everything = [(p, e) for p, e in ledger_files if not isinstance(e, EventFileError)]
    by_id = {e.get("id"): _key(p) for p, e in everything}
    if exists is None:
        index = RecordIndex(Path(root))
        named = [str(e.get("record")) for _, e in everything] + [
            str(e.get("replacement")) for _, e in everything if e.get("replacement")
        ]
        if len(set(named)) > _LIST_ALL_ABOVE:
            index.all()
        index.lookup(named)
        exists = index.exists
    ledger = fold([e for _, e in everything if isinstance(e.get("id"), str)], exists=exists)
    for event, problem in ledger.problems:
        target = by_id.get(event.get("id"))
        if target in results:
            results[target].findings.append(
                Finding(
                    results[target].file,
                    "$",
                    problem.message,
                    problem.hint or "events are checked in time order against the record's status",
                    check="ledger",
                )
            )
    return list(results.values())
