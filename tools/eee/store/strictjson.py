"""Strict JSON: what ``orjson`` parses, minus duplicate keys, plus precise error messages.

JSON allows duplicate object keys in theory; every parser then silently keeps one of the
values. Here a duplicate key is an error, as are ``NaN``/``Infinity`` tokens, a byte order
mark and bytes that are not UTF-8.

Duplicate keys are found cheaply: a parsed-and-reserialised document has exactly as many
``:`` separators as the original unless an object lost a key (each lost key takes at least
one ``:`` with it). Only when the counts differ (or the original spells a colon as an escape)
is the slow path taken, which finds the duplicate and its JSON path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import orjson

from eee.store.jsonpath import format_path, parse_path
from eee.store.limits import INT_MAX_DIGITS, JSON_MAX_DEPTH


class JSONProblem(Exception):
    """A document that is not strict JSON."""

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        pointer: str = "$",
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.pointer = pointer
        self.line = line
        self.column = column


class _Pairs(list):
    """The key-value pairs of one object, in document order (slow path only)."""


def _dupe_path(node: Any, path: tuple[Any, ...]) -> tuple[tuple[Any, ...], str] | None:
    if isinstance(node, _Pairs):
        seen: set[str] = set()
        for key, _ in node:
            if key in seen:
                return path, key
            seen.add(key)
        for key, value in node:
            found = _dupe_path(value, (*path, key))
            if found:
                return found
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found = _dupe_path(value, (*path, i))
            if found:
                return found
    return None


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


class _Constant(Exception):
    def __init__(self, name: str) -> None:
        self.name = name


def _raise_constant(name: str) -> Any:
    raise _Constant(name)


class BigInt(Exception):
    def __init__(self, digits: int) -> None:
        self.digits = digits


def bounded_int(text: str) -> int:
    """``parse_int`` for the standard library's parser: no integer of more than INT_MAX_DIGITS digits
    (Python refuses more than 4,300 with a ValueError; converting even fewer costs quadratic time)."""
    digits = len(text) - (text[0] == "-")
    if digits > INT_MAX_DIGITS:
        raise BigInt(digits)
    return int(text)


def _big_int_problem(digits: int) -> JSONProblem:
    return JSONProblem(
        f"an integer of {digits} digits (more than {INT_MAX_DIGITS})",
        "no value of a record is a number this long; write it as a string if it is an identifier",
    )


def _too_deep_problem(limit: int) -> JSONProblem:
    return JSONProblem(
        f"nested too deeply: more than {limit} levels of arrays and objects",
        f"records nest a few levels (the deepest real one: 16); more than {limit} is not a record",
        line=1,
    )


def explain(data: bytes, err: Exception) -> JSONProblem:
    """Turn an orjson failure into a precise message (slow path, errors only)."""
    if not data.strip():
        return JSONProblem("file is empty", "a record is one JSON object; write the whole record or remove the file")
    if data.startswith(b"\xef\xbb\xbf"):
        return JSONProblem(
            "file starts with a UTF-8 byte order mark (BOM)", "save the file as UTF-8 without BOM", line=1, column=1
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return JSONProblem(
            f"invalid UTF-8 at byte {exc.start} (line {line})",
            "re-encode the file as UTF-8",
            line=line,
        )
    if "depth limit" in str(err) or "ecursion limit" in str(err):
        return _too_deep_problem(JSON_MAX_DEPTH)
    try:
        json.loads(text, parse_constant=_raise_constant, parse_int=bounded_int)
    except RecursionError:
        return _too_deep_problem(JSON_MAX_DEPTH)
    except BigInt as exc:
        return _big_int_problem(exc.digits)
    except _Constant as exc:
        name = exc.name
        hint = "write null, or a finite number"
        if "Infinity" in name:
            hint = f'write the string "{name}" where the schema allows it (min_score/max_score from 0.2.3), else a finite number'
        pos = _find_token(text, name)
        line, col = _line_col(text, pos) if pos >= 0 else (None, None)
        return JSONProblem(f"{name} is not valid JSON", hint, line=line, column=col)
    except json.JSONDecodeError as exc:
        msg = exc.msg
        hint = "fix the JSON syntax"
        if exc.pos >= len(text.rstrip()):
            msg, hint = (
                "unexpected end of file: the JSON is truncated",
                "the file is incomplete; write it again in full",
            )
        return JSONProblem(
            f"not valid JSON: {msg} (line {exc.lineno}, column {exc.colno})", hint, line=exc.lineno, column=exc.colno
        )
    except ValueError as exc:  # whatever else the standard library refuses: never a traceback
        return JSONProblem(f"not strict JSON: {str(exc)[:200]}", "fix the value at that place")
    # orjson rejected what the standard library accepts: lone surrogates, huge integers, ...
    text_msg = str(err)
    line = None
    if " line " in text_msg:
        try:
            line = int(text_msg.rsplit(" line ", 1)[1].split()[0])
        except (ValueError, IndexError):
            line = None
    hint = "fix the value at that place"
    if "infinity" in text_msg:
        hint = (
            'the number overflows a double; write a finite number (or the string "Infinity" where the schema allows it)'
        )
    elif "surrogate" in text_msg:
        hint = "a \\uD800-\\uDFFF escape must come in a high/low pair; remove the lone surrogate"
    return JSONProblem(f"not strict JSON: {text_msg}", hint, line=line)


def _find_token(text: str, name: str) -> int:
    """Offset of a bare NaN/Infinity token outside strings, or -1."""
    in_string = escaped = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif text.startswith(name, i):
            return i
        i += 1
    return -1


def find_duplicate(data: bytes) -> JSONProblem | None:
    try:
        tree = json.loads(data.decode("utf-8"), object_pairs_hook=_Pairs, parse_int=bounded_int)
    except RecursionError:
        return _too_deep_problem(JSON_MAX_DEPTH)
    except BigInt as exc:
        return _big_int_problem(exc.digits)
    found = _dupe_path(tree, ())
    if found is None:
        return None
    path, key = found
    return JSONProblem(
        f"duplicate key {key!r}: the key appears more than once in the same object",
        "keep one of the values and delete the other; JSON readers silently drop one of them",
        pointer=format_path(path),
    )


def may_hide_colon(data: bytes) -> bool:
    """Whether the text may spell a colon as an escape (then the fast duplicate test is unsound)."""
    return b"\\u003" in data


def canonical(doc: Any) -> bytes:
    """The store's canonical bytes of a record: orjson, 2-space indent, trailing newline.

    Writing records this way keeps them diff-friendly and lets :func:`loads` prove the
    absence of duplicate keys with one comparison.
    """
    return orjson.dumps(doc, option=_INDENT) + b"\n"


def canonical_row(row: Any) -> bytes:
    """One sidecar row as the store writes it: compact orjson plus newline."""
    return orjson.dumps(row) + b"\n"


_INDENT = orjson.OPT_INDENT_2


def pretty_within(doc: Any, limit: int = JSON_MAX_DEPTH) -> bytes | None:
    """The 2-space-indented serialisation of ``doc``, or None when it nests deeper than ``limit``.

    orjson reads 1,024 levels but writes only 254, so a document must be checked before it
    is written back. The indented text shows the depth exactly: an element inside ``d``
    arrays/objects starts a line with ``2d`` spaces (strings never hold a raw newline).
    """
    try:
        pretty = orjson.dumps(doc, option=_INDENT)
    except orjson.JSONEncodeError:
        return None  # beyond what orjson writes (254 levels), or a value JSON has no text for
    deeper = b"\n" + b" " * (2 * limit)
    at = pretty.find(deeper)
    while at >= 0:
        start = at + len(deeper)
        end = pretty.find(b"\n", start)
        line = pretty[start : end if end >= 0 else len(pretty)]
        if line[:1] == b" " or line.rstrip(b",").endswith((b"[]", b"{}")):
            return None  # an element inside more than ``limit`` containers, or an empty one at the limit
        at = pretty.find(deeper, start)
    return pretty


def too_deep(doc: Any, limit: int = JSON_MAX_DEPTH) -> bool:
    return pretty_within(doc, limit) is None


def no_duplicates(data: bytes, doc: Any, pretty: bytes | None = None) -> bool:
    """Cheap proof that ``data`` has no duplicate keys (False means: look closer).

    Fast path: ``data`` is byte-identical to a serialisation of ``doc`` (which has no
    duplicates by construction). Otherwise compare ``:`` counts (see module docstring).
    """
    if pretty is None:
        pretty = orjson.dumps(doc, option=_INDENT)
    if len(data) - len(pretty) in (0, 1) and data.startswith(pretty):
        return True
    if data.count(b":") != orjson.dumps(doc).count(b":"):
        return False
    return not may_hide_colon(data)


def loads(data: bytes) -> Any:
    """Parse one strict JSON document, raising :class:`JSONProblem` (also for more than
    ``JSON_MAX_DEPTH`` levels of nesting)."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise explain(data, exc) from None
    pretty = pretty_within(doc) if isinstance(doc, dict | list) else orjson.dumps(doc, option=_INDENT)
    if pretty is None:
        raise _too_deep_problem(JSON_MAX_DEPTH)
    if not no_duplicates(data, doc, pretty):
        problem = find_duplicate(data)
        if problem is not None:
            raise problem
    return doc


# --- line numbers of JSON paths (only for files that have findings) -------------------------

_SCAN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\],]')
_NON_SPACE = re.compile(rb"\S")
_BRACKETS = re.compile(rb'(?:[^"{}\[\]]++|"(?:[^"\\]|\\.)*+")*+([{}\[\]])')  # possessive: no backtracking


def _skip_value(data: bytes, pos: int) -> int:
    """The offset after the container value that starts at the next token from ``pos`` (after
    a ``:`` if there is one); ``pos`` itself when that value is not a container."""
    m = _NON_SPACE.search(data, pos)
    if m is not None and m.group() == b":":
        m = _NON_SPACE.search(data, m.end())
    if m is None or m.group() not in (b"{", b"["):
        return pos
    depth = 0
    for t in _BRACKETS.finditer(data, m.start()):  # one step per bracket: strings are skipped inside the match
        depth += 1 if t.group(1) in (b"{", b"[") else -1
        if depth == 0:
            return t.end()
    return len(data)


def _canonical_lines(data: bytes, doc: Any, wanted: dict[str, tuple[str | int, ...]]) -> dict[str, int]:
    """:func:`path_lines` for a file in the store's canonical form (:func:`canonical`): there a
    member of a container at depth ``d`` starts a line indented by ``2 * (d + 1)`` spaces and a
    non-empty member ends on the first line after it that holds only its closing bracket at
    that indent, so a key is one search from its container's start and an item one pair of
    searches per earlier item; the parsed document says which members exist."""
    starts: dict[str, int] = {}  # pointer -> offset of the line it is on
    for pointer, parts in wanted.items():
        node, pos, found = doc, 0, None
        for depth, part in enumerate(parts):
            indent = b"\n" + b" " * (2 * (depth + 1))
            if isinstance(node, dict) and isinstance(part, str) and part in node:
                at = data.find(indent + orjson.dumps(part) + b":", pos)
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                at = data.find(indent, pos)  # the first item's line
                for earlier in node[:part]:  # step over each earlier item: to its closing line, then on
                    if at < 0:
                        break
                    if isinstance(earlier, (dict, list)) and earlier:
                        at = data.find(indent + (b"}" if isinstance(earlier, dict) else b"]"), at + 1)
                    at = data.find(b"\n", at + 1) if at >= 0 else -1
            else:
                break
            if at < 0:  # not canonical after all: leave it to the scan
                return {}
            pos, node, found = at + 1, node[part], at + 1
        if found is not None:
            starts[pointer] = found
    line, last, at_line = 1, 0, {}
    for offset in sorted(set(starts.values())):  # one pass over the text for all of them
        line += data.count(b"\n", last, offset)
        last = offset
        at_line[offset] = line
    return {pointer: at_line[offset] for pointer, offset in starts.items()}


def path_lines(data: bytes, pointers: Iterable[str], doc: Any = None) -> dict[str, int]:
    """The line of each JSON location in ``data`` (a key's line; an array item's first line).

    A location that is not in the document (a missing field) gets the line of its nearest
    ancestor that is; ``$`` itself (the whole file) gets none. One pass over the text that
    skips every value holding nothing asked for and stops once each location is found or
    known to be absent; meant for files with findings only.
    """
    wanted: dict[str, tuple[str | int, ...]] = {}
    prefixes: set[tuple[str | int, ...]] = set()
    for pointer in pointers:
        parts = parse_path(pointer)
        if parts:
            wanted[pointer] = parts
            prefixes.update(parts[:n] for n in range(1, len(parts) + 1))
    if not wanted:
        return {}
    if doc is not None and data.rstrip(b"\n") == orjson.dumps(doc, option=_INDENT):
        lines = _canonical_lines(data, doc, wanted)
        if lines or not wanted:
            return lines
    found: dict[tuple[str | int, ...], int] = {}  # path -> byte offset where it starts
    unresolved = set(prefixes)
    path: list[Any] = []
    in_object: list[bool] = []
    expect_key = False
    pos = 0

    def arrive(start: int, after: int) -> int:
        """At a member or item (path complete): record it, or skip its value when nothing is wanted there."""
        here = tuple(path)
        if here in unresolved:
            found[here] = start
            unresolved.discard(here)
            return after
        return after if here in prefixes else _skip_value(data, after)

    while unresolved:
        m = _SCAN.search(data, pos)
        if m is None:
            break
        pos = m.end()
        tok = m.group()
        c = tok[:1]
        if c == b'"':
            if expect_key:
                expect_key = False
                try:
                    path[-1] = tok[1:-1].decode("utf-8") if b"\\" not in tok else json.loads(tok)
                except ValueError:
                    return {}
                pos = arrive(m.start(), pos)
        elif c == b"{":
            in_object.append(True)
            path.append(None)
            expect_key = True
        elif c == b"[":
            in_object.append(False)
            path.append(0)
            item = _NON_SPACE.search(data, pos)
            if item is not None and item.group() != b"]":
                pos = arrive(item.start(), pos)
        elif c == b",":
            if not in_object:
                break
            if in_object[-1]:
                expect_key = True
            else:
                path[-1] += 1
                item = _NON_SPACE.search(data, pos)
                if item is not None:
                    pos = arrive(item.start(), pos)
        else:  # } or ]: what was wanted inside and is not found never will be
            if not in_object:
                break
            in_object.pop()
            path.pop()
            closed = tuple(path)  # the member that held the container
            unresolved = {u for u in unresolved if u[: len(closed)] != closed}
            expect_key = False
    offsets = sorted(set(found.values()))
    line_at: dict[int, int] = {}
    line, last = 1, 0
    for offset in offsets:
        line += data.count(b"\n", last, offset)
        last = offset
        line_at[offset] = line
    out: dict[str, int] = {}
    for pointer, parts in wanted.items():
        for n in range(len(parts), 0, -1):
            offset = found.get(parts[:n])
            if offset is not None:
                out[pointer] = line_at[offset]
                break
    return out


def attach_lines(findings: Iterable[Any], data: bytes, doc: Any = None) -> None:
    """Give every finding without a line the line of its JSON location in ``data`` (``doc``:
    the parsed document, which makes the lookup cheap for a file in canonical form)."""
    todo = [f for f in findings if f.line is None and f.pointer != "$"]
    if not todo:
        return
    lines = path_lines(data, {f.pointer for f in todo}, doc)
    for f in todo:
        f.line = lines.get(f.pointer)


def loads_row(line: bytes) -> Any:
    """Parse one sidecar row (compact, one line) as strict JSON, raising :class:`JSONProblem`.

    The hot path of the validator: one parse and one compact serialisation per row; the
    depth is only measured when the row has more brackets than the depth cap."""
    try:
        row = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise explain(line, exc) from None
    if line.count(b"[") + line.count(b"{") > JSON_MAX_DEPTH and too_deep(row):
        raise _too_deep_problem(JSON_MAX_DEPTH)
    compact = orjson.dumps(row)
    if compact != line and (line.count(b":") != compact.count(b":") or may_hide_colon(line)):
        problem = find_duplicate(line)
        if problem is not None:
            raise problem
    return row
