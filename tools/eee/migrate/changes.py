"""What a migration step changed, why a document cannot be migrated, and the helpers steps share.

A step never guesses silently: everything it fills, converts, moves or derives is named in a
:class:`Changes`, by its JSON path in the migrated copy, and the chain writes that into the
copy (see :mod:`eee.migrate.provenance`). What cannot be migrated raises
:class:`MigrationRefused`; nothing is ever half-migrated.

The helpers work in place on a copy the step owns (:func:`clone`); the step functions
themselves stay pure (they never touch their argument).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import orjson

from eee.reporting.findings import Finding, Refused
from eee.store.jsonpath import format_path, json_type

UNKNOWN = "unknown"
ROOT = "$"
Where = str  # a JSON path as messages show it: $.evaluation_results[0].source_data


@lru_cache(maxsize=8192)
def _member(key: str) -> str:
    return format_path([key])[1:]


def at(where: Where, *keys: str | int) -> Where:
    """The JSON path of ``keys`` below ``where``: ``at("$.a", "b c", 0)`` -> ``$.a["b c"][0]``."""
    for key in keys:
        where += f"[{key}]" if isinstance(key, int) else _member(key)
    return where


class Changes:
    """What one step (or a whole chain) changed, as JSON paths of the migrated copy.

    ``filled``: required fields with no source, written as ``unknown``.
    ``converted``: values whose JSON type changed losslessly (a number, boolean, null,
    object or array written as its JSON text; a string wrapped in a one-item list; a boolean
    score written as 1.0/0.0). ``[*]`` ends a path when every item of that array was converted.
    ``moved``: values that moved, old path -> new path (the old path as the source version spells it).
    ``derived``: values computed from another field of the same document, path -> how.
    """

    __slots__ = ("converted", "derived", "filled", "moved")

    def __init__(self) -> None:
        self.filled: list[str] = []
        self.converted: list[str] = []
        self.moved: dict[str, str] = {}
        self.derived: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self.filled or self.converted or self.moved or self.derived)

    def __repr__(self) -> str:
        return f"Changes({self.to_dict()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Changes) and self.to_dict() == other.to_dict()

    def extend(self, other: Changes) -> None:
        if other.filled:
            self.filled = list(dict.fromkeys([*self.filled, *other.filled]))
        if other.converted:
            self.converted = list(dict.fromkeys([*self.converted, *other.converted]))
        self.moved.update(other.moved)
        self.derived.update(other.derived)

    def to_dict(self) -> dict[str, Any]:
        return {"filled": self.filled, "converted": self.converted, "moved": self.moved, "derived": self.derived}


class MigrationRefused(Refused):
    """A document that cannot be migrated: a :class:`~eee.reporting.findings.Refused` whose findings
    say where and why (the first is the reason), plus the version the document declares."""

    def __init__(self, findings: list[Finding], source: str | None = None) -> None:
        super().__init__(findings)
        self.source = source  # the version the document declares, when known

    def for_file(self, file: str, line: int | None = None) -> MigrationRefused:
        """The same refusal, its findings naming ``file`` (and ``line``, for a sidecar row)."""
        for f in self.findings:
            f.file = file
            if line is not None:
                f.line = line
        return self


def refusal(where: Where, message: str, hint: str | None = None, check: str = "migrate") -> MigrationRefused:
    """A refusal for one location of a document (the file is named later, see :meth:`MigrationRefused.for_file`)."""
    return MigrationRefused([Finding("<document>", where, message, hint, check=check)])


def clone(doc: Any) -> Any:
    """A deep copy of a JSON document (the round trip through orjson is the fastest copy)."""
    return orjson.loads(orjson.dumps(doc))


def json_text(value: Any) -> str:
    """The JSON text of a value: ``7`` -> ``"7"``, ``None`` -> ``"null"``, objects compact, keys in order."""
    return orjson.dumps(value).decode()


def items(owner: dict[str, Any], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The object items of ``owner[key]`` when it is an array, with their index."""
    value = owner.get(key)
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield i, item


def child(owner: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = owner.get(key)
    return value if isinstance(value, dict) else None


def string_map(
    owner: dict[str, Any], key: str, where: Where, changes: Changes, version: str, nullable: bool = False
) -> None:
    """Make ``owner[key]`` (when present) an object whose values are strings, converting the others to JSON text."""
    if key not in owner:
        return
    value = owner[key]
    here = at(where, key)
    if value is None and nullable:
        return
    if value.__class__ is not dict:
        raise refusal(
            here,
            f"{key} is {json_type(value)}; from {version} it must be an object of strings, and nothing else can hold it",
            "this shape has no lossless migration; add a corrected record in the current version instead",
        )
    for k, v in value.items():
        if v.__class__ is not str:
            value[k] = json_text(v)
            changes.converted.append(at(here, k))


def string_value(owner: dict[str, Any], key: str, where: Where, changes: Changes) -> None:
    """Make ``owner[key]`` (when present) a string, converting another value to its JSON text."""
    if key in owner and owner[key].__class__ is not str:
        owner[key] = json_text(owner[key])
        changes.converted.append(at(where, key))


def string_items(owner: dict[str, Any], key: str, where: Where, changes: Changes) -> None:
    """Make the items of the array ``owner[key]`` (when present) strings, converting the others to JSON text."""
    array = owner.get(key)
    if not isinstance(array, list):
        return
    converted = [i for i, v in enumerate(array) if v.__class__ is not str]
    if not converted:
        return
    for i in converted:
        array[i] = json_text(array[i])
    here = at(where, key)
    if len(converted) == len(array):
        changes.converted.append(here + "[*]")
    else:
        changes.converted.extend(at(here, i) for i in converted)


def wrap_string(owner: dict[str, Any], key: str, where: Where, changes: Changes) -> None:
    """Make a string ``owner[key]`` a one-item list of strings (the newer version takes lists only)."""
    value = owner.get(key)
    if value.__class__ is str:
        owner[key] = [value]
        changes.converted.append(at(where, key))


def move_into(
    source: dict[str, Any],
    keys: list[str],
    source_where: Where,
    target: dict[str, Any],
    target_where: Where,
    prefix: str,
    changes: Changes,
) -> None:
    """Move ``source[key]`` for each key into the string map ``target`` as ``<prefix>.<key>``.

    Strings move as they are; other values as their JSON text (also listed as converted).
    A name already taken in ``target`` is refused rather than overwritten.
    """
    for key in keys:
        name = f"{prefix}.{key}"
        new = at(target_where, name)
        if name in target:
            raise refusal(
                new,
                f"cannot move {at(source_where, key)} here: the key {name!r} is already taken",
                "rename one of the two in a corrected record",
            )
        value = source.pop(key)
        if value.__class__ is str:
            target[name] = value
        else:
            target[name] = json_text(value)
            changes.converted.append(new)
        changes.moved[at(source_where, key)] = new


def rename_key(doc: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """A copy of ``doc`` with key ``old`` renamed to ``new`` in the same position."""
    return {new if k == old else k: v for k, v in doc.items()}


def insert_after(doc: dict[str, Any], after: str, key: str, value: Any) -> dict[str, Any]:
    """A copy of ``doc`` with ``key`` placed right after ``after`` (at the end when ``after`` is absent)."""
    out: dict[str, Any] = {}
    placed = False
    for k, v in doc.items():
        out[k] = v
        if k == after:
            out[key] = value
            placed = True
    if not placed:
        out[key] = value
    return out
