"""Where a migrated copy says what migration did to it.

The copy must stay valid under its target version, whose top level admits no new field, so
provenance lives in a string-valued map that every target version allows:

- aggregate records: ``source_metadata.additional_details``;
- instance-level rows: ``metadata`` (created when absent or null).

Keys (all values are strings; lists and maps are JSON text):

``eee_migrated_from``
    the released version the record was written in (``"0.2.0"``); set when the version
    changed, and kept from the first migration when a migrated copy is migrated further.
``eee_migration_filled``
    JSON list of the JSON paths written as ``unknown`` because nothing could derive them.
``eee_migration_converted``
    JSON list of the JSON paths whose value changed type losslessly (see
    :class:`~eee.migrate.changes.Changes`); ``json.loads`` of a converted string gives the
    original value back.
``eee_migration_moved``
    JSON object, original path -> path in the copy.
``eee_migration_derived``
    JSON object, path -> what it was derived from.
``eee_migration_flags``
    JSON list of the store's flags the record was accepted through and that the copy still
    needs: ``{"event", "rule", "path"}``, the path as it is in the copy. A flag whose
    finding the migration resolved is not carried.

Paths name locations in the migrated copy. Keys with nothing to say are left out.
"""

from __future__ import annotations

from typing import Any

import orjson

from eee.migrate.changes import Changes, at, json_text, refusal
from eee.store.schemas import EVAL

FROM = "eee_migrated_from"
FILLED = "eee_migration_filled"
CONVERTED = "eee_migration_converted"
MOVED = "eee_migration_moved"
DERIVED = "eee_migration_derived"
FLAGS = "eee_migration_flags"
KEYS = (FROM, FILLED, CONVERTED, MOVED, DERIVED, FLAGS)


def holder_path(kind: str) -> str:
    return "$.source_metadata.additional_details" if kind == EVAL else "$.metadata"


def _holder(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    if kind == EVAL:
        source = doc["source_metadata"]
        found = source.get("additional_details")
        if found is None:
            found = source["additional_details"] = {}
        return found
    found = doc.get("metadata")
    if found is None:
        found = doc["metadata"] = {}
    return found


def _existing(holder: dict[str, Any], key: str, empty: Any, kind: str) -> Any:
    if key not in holder:
        return empty
    try:
        value = orjson.loads(holder[key])
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, type(empty)):
        where = at(holder_path(kind), key)
        raise refusal(
            where,
            f"{key} holds {holder[key]!r}, which is not migration provenance",
            f"the key {key!r} is reserved for migration provenance; rename it in a corrected record",
        )
    return value


def stamp(doc: dict[str, Any], kind: str, source: str | None, changes: Changes) -> None:
    """Record ``changes`` (and ``source``, the version migrated from) in ``doc``, in place.

    Merges with provenance already there, so migrating a migrated copy further keeps the
    first ``eee_migrated_from`` and adds to the lists.
    """
    if source is None and not changes:
        return
    holder = _holder(doc, kind)
    if source is not None and FROM not in holder:
        holder[FROM] = source
    for key, new in ((FILLED, changes.filled), (CONVERTED, changes.converted)):
        if new:
            old = _existing(holder, key, [], kind)
            holder[key] = json_text(old + [p for p in new if p not in old])
    for key, mapping in ((MOVED, changes.moved), (DERIVED, changes.derived)):
        if mapping:
            merged = _existing(holder, key, {}, kind)
            merged.update(mapping)
            holder[key] = json_text(merged)
    # the provenance keys always close the map, in one order: a copy migrated in several
    # runs reads the same as one migrated at once
    for key in KEYS:
        if key in holder:
            holder[key] = holder.pop(key)


def carry_flags(doc: dict[str, Any], flags: list[dict[str, str]]) -> None:
    """Record in the copy of an aggregate record the flags it carries (merged by event with
    those a former migration recorded), in place."""
    if not flags:
        return
    holder = _holder(doc, EVAL)
    known = _existing(holder, FLAGS, [], EVAL)
    ids = {f.get("event") for f in known if isinstance(f, dict)}
    holder[FLAGS] = json_text(known + [f for f in flags if f["event"] not in ids])
    for key in KEYS:
        if key in holder:
            holder[key] = holder.pop(key)


def read(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    """The provenance a migrated copy carries (parsed), or {} for a record never migrated."""
    if kind == EVAL:
        source = doc.get("source_metadata")
        holder = source.get("additional_details") if isinstance(source, dict) else None
    else:
        holder = doc.get("metadata")
    if not isinstance(holder, dict):
        return {}
    out: dict[str, Any] = {}
    for key in KEYS:
        if key in holder:
            out[key] = holder[key] if key == FROM else orjson.loads(holder[key])
    return out
