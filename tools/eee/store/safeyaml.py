"""YAML as the store's governance files use it: plain data only, parsed by libyaml.

Every YAML file the store reads (events, import manifests, the identity registry, settings,
roles, a converter's mapping) is input written by someone else and holds plain data:
mappings, lists, strings, numbers, booleans and null. This is the one way to read it.
libyaml's C parser (PyYAML's ``CParser``) turns the text into events; a small composer and
constructor of our own turn those into Python data and refuse everything else before it
costs anything:

- aliases and anchors (``&a`` / ``*a``): a 634-byte alias bomb otherwise expands to
  gigabytes; merge keys (``<<``), which only make sense with them;
- every explicit tag (``!!binary``, ``!!set``, ``!!python/...``, ``!custom``; the
  non-specific ``!`` alone, which only says "a string", is kept);
- more than :data:`eee.store.limits.YAML_MAX_DEPTH` levels of nesting;
- integers of more than :data:`eee.store.limits.INT_MAX_DIGITS` digits;
- duplicate keys, and keys that are lists or mappings;
- a ``%YAML 1.1`` directive (see below), and the characters NEL, LINE SEPARATOR and
  PARAGRAPH SEPARATOR written as they are (line breaks to YAML 1.1 and libyaml, text to
  YAML 1.2: escaped in a double-quoted string, ``"\\x85"``, they are read the same by all).

Scalars are typed by YAML 1.2's rules (the core schema, as ruamel.yaml's safe loader read
these files before, so every existing file reads identically), never YAML 1.1's: ``no``,
``on``, ``y`` and ``off`` are strings, not booleans; ``1:30`` is a string, not a
sexagesimal 90; ``017`` is 17, not octal 15 (``0o17`` is 15). A date or time written
without quotes (``2026-05-01T12:00:00Z``) stays the text written, never a ``datetime``:
the store compares and shows such values as text. Only ``true``/``false`` (in any of their
three spellings), ``null``/``~``/nothing, integers (decimal, ``0x``, ``0o``, ``0b``,
with ``_``) and floats (``1.5``, ``1e3``, ``.inf``, ``.nan``) are not strings.

Whatever goes wrong comes back as one :class:`YAMLRefused` with a message (and the line,
where there is one), never a traceback. The caller caps the size of the text (e.g.
:data:`eee.store.limits.EVENT_MAX_BYTES`). Without libyaml (a PyYAML built without it)
the same composer runs over PyYAML's pure-Python parser: slower, equally strict.
"""

from __future__ import annotations

import re
from typing import Any

from eee.store.limits import INT_MAX_DIGITS, YAML_MAX_DEPTH


class YAMLRefused(ValueError):
    """Text that is not plain YAML data (the message says why)."""


NULL, BOOL, INT, FLOAT, STR = "null", "bool", "int", "float", "str"  # what a plain scalar is

# YAML 1.2's implicit types (ruamel.yaml's 1.2 resolver, less timestamps, merge and value keys)
_NULL = re.compile(r"~|null|Null|NULL|")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(
    r"[-+]?(?:0b[0-1_]*[01][0-1_]*|0o[0-7_]*[0-7][0-7_]*|0x[0-9a-fA-F_]*[0-9a-fA-F][0-9a-fA-F_]*|[0-9_]*[0-9][0-9_]*)"
)
_FLOAT = re.compile(
    r"""[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN)""",
    re.X,
)


def _where(thing: Any) -> str:
    mark = getattr(thing, "start_mark", None)
    return f" (line {mark.line + 1})" if mark is not None else ""


def _resolve(value: str) -> str:
    """The tag of a plain (unquoted) scalar."""
    first = value[:1]
    if first in "~nN" and _NULL.fullmatch(value):  # "" too: first == "" is in every string
        return NULL
    if first in "tTfF" and value in _BOOL:
        return BOOL
    if first in "-+0123456789":
        if _INT.fullmatch(value):
            return INT
        if _FLOAT.fullmatch(value):
            return FLOAT
    elif first == "." and _FLOAT.fullmatch(value):
        return FLOAT
    return STR


def _int(text: str, node: Any) -> int:
    text = text.replace("_", "")
    sign = -1 if text[0] == "-" else 1
    text = text.lstrip("+-")
    digits = len(text)
    if digits > INT_MAX_DIGITS:
        raise YAMLRefused(f"an integer of {digits} digits (more than {INT_MAX_DIGITS}){_where(node)}")
    for prefix, base in (("0b", 2), ("0o", 8), ("0x", 16)):
        if text.startswith(prefix):
            return sign * int(text[2:], base)
    return sign * int(text)


def _float(text: str) -> float:
    text = text.replace("_", "").lower()
    sign = -1.0 if text[0] == "-" else 1.0
    text = text.lstrip("+-")
    if text == ".inf":
        return sign * float("inf")
    if text == ".nan":
        return float("nan")
    return sign * float(text)


_PARSER: Any = None


def _parser() -> tuple[Any, Any]:
    """(PyYAML's event parser class, its error class): libyaml's when PyYAML has it."""
    global _PARSER
    if _PARSER is None:
        import yaml  # lazy: PyYAML costs ~35 ms; only where a YAML file is read

        if getattr(yaml, "__with_libyaml__", False):
            from yaml.cyaml import CParser as parser
        else:  # pragma: no cover - PyYAML's wheels carry libyaml; a source build may not
            from yaml.loader import BaseLoader as parser
        _PARSER = (parser, yaml.YAMLError)
    return _PARSER


class _Frame:
    """A list or mapping being built, with its path (for :func:`lines`)."""

    __slots__ = ("key", "mapping", "path", "value")

    def __init__(self, value: Any, path: tuple[str | int, ...]) -> None:
        self.value = value
        self.mapping = value.__class__ is dict
        self.key: Any = _NO_KEY
        self.path = path


_NO_KEY = object()  # a mapping's frame waiting for a key (None is a key)


def _refuse_marks(event: Any) -> None:
    """Refuse an anchor or an explicit tag on ``event`` (a scalar or a collection start)."""
    if event.anchor is not None:
        raise YAMLRefused(f"anchors (&{event.anchor}) are not allowed{_where(event)}")
    tag = event.tag
    if tag is not None and tag != "!":
        raise YAMLRefused(f"tags ({tag}) are not allowed{_where(event)}")


def _build(text: str, at: dict[tuple[str | int, ...], int] | None = None) -> Any:
    """The one document of ``text`` as data, built in one pass over libyaml's events (no
    node tree, no recursion); with ``at``, the line of every key and list item goes there."""
    import yaml.events as ev  # lazy: with PyYAML

    parser_class, _error = _parser()
    scalar, seq_start, map_start = ev.ScalarEvent, ev.SequenceStartEvent, ev.MappingStartEvent
    seq_end, map_end, alias, doc_start = ev.SequenceEndEvent, ev.MappingEndEvent, ev.AliasEvent, ev.DocumentStartEvent
    parser = parser_class(text)
    stack: list[_Frame] = []
    root: Any = None
    documents = 0
    try:
        while True:
            event = parser.get_event()
            if event is None:
                break
            kind = event.__class__
            if kind is scalar:
                if event.anchor is not None or (event.tag is not None and event.tag != "!"):
                    _refuse_marks(event)
                text_value = event.value
                if event.tag is None and event.implicit[0]:  # plain: typed by YAML 1.2's rules
                    tag = _resolve(text_value)
                    if tag is STR:
                        if text_value == "<<":
                            raise YAMLRefused(f"merge keys (<<) are not allowed{_where(event)}")
                        value: Any = text_value
                    elif tag is NULL:
                        value = None
                    elif tag is BOOL:
                        value = _BOOL[text_value]
                    elif tag is INT:
                        value = _int(text_value, event)
                    else:
                        value = _float(text_value)
                else:
                    value = text_value
                if stack:
                    top = stack[-1]
                    if top.mapping and top.key is _NO_KEY:
                        if value in top.value:
                            raise YAMLRefused(f"not valid YAML: duplicate key {value!r}{_where(event)}")
                        top.key = value
                        if at is not None:
                            at[(*top.path, text_value)] = event.start_mark.line + 1
                        continue
                    _add(top, value, event, at)
                else:
                    root = value
            elif kind is map_start or kind is seq_start:
                if event.anchor is not None or (event.tag is not None and event.tag != "!"):
                    _refuse_marks(event)
                if len(stack) >= YAML_MAX_DEPTH:
                    raise YAMLRefused(f"nested more than {YAML_MAX_DEPTH} levels deep{_where(event)}")
                path: tuple[str | int, ...] = ()
                if stack:
                    top = stack[-1]
                    if top.mapping and top.key is _NO_KEY:
                        raise YAMLRefused(f"a key must be a plain value, not a list or a mapping{_where(event)}")
                    if at is not None:
                        path = (*top.path, top.key if top.mapping else len(top.value))
                        if not top.mapping:
                            at[path] = event.start_mark.line + 1
                stack.append(_Frame({} if kind is map_start else [], path))
            elif kind is map_end or kind is seq_end:
                done = stack.pop().value
                if stack:
                    _add(stack[-1], done, event, None)
                else:
                    root = done
            elif kind is alias:
                raise YAMLRefused(f"aliases (*{event.anchor}) are not allowed{_where(event)}")
            elif kind is doc_start:
                documents += 1
                if documents > 1:
                    raise YAMLRefused(f"more than one YAML document (---){_where(event)}")
                if event.version not in (None, (1, 2)):
                    major, minor = event.version
                    raise YAMLRefused(
                        f"a %YAML {major}.{minor} directive: the store reads YAML 1.2 (remove the directive)"
                        f"{_where(event)}"
                    )
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()
    return root


def _add(top: _Frame, value: Any, event: Any, at: dict[tuple[str | int, ...], int] | None) -> None:
    """``value`` into the list or mapping being built (a key was taken before it)."""
    if top.mapping:
        top.value[top.key] = value
        top.key = _NO_KEY
    else:
        if at is not None and value.__class__ is not dict and value.__class__ is not list:
            at[(*top.path, len(top.value))] = event.start_mark.line + 1
        top.value.append(value)


# line breaks to YAML 1.1 (libyaml), text to YAML 1.2: written as they are, they would mislead one reader or the other
_BREAKS = {
    "\x85": ("U+0085 (NEL)", "\\x85"),
    "\u2028": ("U+2028 (LINE SEPARATOR)", "\\u2028"),
    "\u2029": ("U+2029 (PARAGRAPH SEPARATOR)", "\\u2029"),
}


def _read(text: str, at: dict[tuple[str | int, ...], int] | None = None) -> Any:
    if not isinstance(text, str):
        raise YAMLRefused("not valid YAML: give the text, decoded")
    for char, (name, escaped) in _BREAKS.items():
        if char in text:
            line = text.count("\n", 0, text.index(char)) + 1
            raise YAMLRefused(
                f"the character {name} is a line break to some YAML readers and text to others (line {line}): "
                f'write it escaped in a double-quoted string ("{escaped}")'
            )
    _parser_class, yaml_error = _parser()
    try:
        return _build(text, at)
    except YAMLRefused:
        raise
    except RecursionError:  # pragma: no cover - the builder keeps its own stack
        raise YAMLRefused(f"nested more than {YAML_MAX_DEPTH} levels deep") from None
    except yaml_error as exc:
        problem = getattr(exc, "problem", None) or getattr(exc, "context", None)
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        first = (str(problem or exc).strip().splitlines() or [type(exc).__name__])[0]
        if "nesting depth" in first:  # libyaml's own cap (1,000 levels), met while it scans ahead
            raise YAMLRefused(f"nested more than {YAML_MAX_DEPTH} levels deep{where}") from None
        raise YAMLRefused(f"not valid YAML: {first[:200]}{where}") from None
    except (ValueError, TypeError, UnicodeError, MemoryError) as exc:  # anything else odd input provokes: one message
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise YAMLRefused(f"not valid YAML: {first[:200]}") from None


def load(text: str) -> Any:
    """The one document in ``text`` as plain Python data; :class:`YAMLRefused` otherwise."""
    return _read(text)


def lines(text: str) -> dict[tuple[str | int, ...], int]:
    """The line (1-based) of every key and list item of the one document in ``text``, by its
    path (``("entries", "Qwen", "aliases", 0)``), for messages that name a line. The text is
    read again with the same refusals as :func:`load` (call it only for a file with a
    finding); an empty mapping when it cannot be."""
    at: dict[tuple[str | int, ...], int] = {}
    try:
        _read(text, at)
    except YAMLRefused:  # refused or broken: load() has said why
        return {}
    return at
