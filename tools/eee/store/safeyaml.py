"""YAML as the governance events use it: plain data only.

An event is a small mapping of strings, numbers and one nested mapping. This loader
(ruamel.yaml's pure-Python safe loader with its own composer and constructor) refuses
everything else before it costs anything:

- aliases and anchors (``&a`` / ``*a``): a 634-byte alias bomb otherwise expands to
  gigabytes;
- every explicit tag (``!!binary``, ``!!set``, ``!!python/...``, ``!custom``);
- more than :data:`eee.store.limits.YAML_MAX_DEPTH` levels of nesting;
- integers of more than :data:`eee.store.limits.INT_MAX_DIGITS` digits.

Whatever goes wrong comes back as one :class:`YAMLRefused` with a message, never a
traceback. The caller caps the size of the text (:data:`eee.store.limits.EVENT_MAX_BYTES`).
"""

from __future__ import annotations

from typing import Any

from eee.store.limits import INT_MAX_DIGITS, YAML_MAX_DEPTH


class YAMLRefused(ValueError):
    """Text that is not plain YAML data (the message says why)."""


def _where(event: Any) -> str:
    mark = getattr(event, "start_mark", None)
    return f" (line {mark.line + 1})" if mark is not None else ""


def _loader() -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.composer import Composer
    from ruamel.yaml.constructor import SafeConstructor
    from ruamel.yaml.events import AliasEvent, CollectionStartEvent

    class PlainComposer(Composer):
        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.parser.peek_event()
            if isinstance(event, AliasEvent):
                raise YAMLRefused(f"aliases (*{event.anchor}) are not allowed{_where(event)}")
            if event.anchor is not None:
                raise YAMLRefused(f"anchors (&{event.anchor}) are not allowed{_where(event)}")
            tag = getattr(event, "tag", None)
            if tag is not None and tag != "!":
                raise YAMLRefused(f"tags ({tag}) are not allowed{_where(event)}")
            if isinstance(event, CollectionStartEvent):
                depth = getattr(self, "nesting", 0) + 1
                if depth > YAML_MAX_DEPTH:
                    raise YAMLRefused(f"nested more than {YAML_MAX_DEPTH} levels deep{_where(event)}")
                self.nesting = depth
                try:
                    return super().compose_node(parent, index)
                finally:
                    self.nesting = depth - 1
            return super().compose_node(parent, index)

    class PlainConstructor(SafeConstructor):
        def construct_yaml_int(self, node: Any) -> Any:
            text = str(node.value).replace("_", "")
            digits = len(text.lstrip("+-"))
            if digits > INT_MAX_DIGITS:
                raise YAMLRefused(f"an integer of {digits} digits (more than {INT_MAX_DIGITS}){_where(node)}")
            return super().construct_yaml_int(node)

    PlainConstructor.add_constructor("tag:yaml.org,2002:int", PlainConstructor.construct_yaml_int)

    yaml = YAML(typ="safe", pure=True)
    yaml.Composer = PlainComposer
    yaml.Constructor = PlainConstructor
    yaml.allow_duplicate_keys = False
    return yaml


_LOADER: Any = None


def load(text: str) -> Any:
    """The one document in ``text`` as plain Python data; :class:`YAMLRefused` otherwise."""
    global _LOADER
    if _LOADER is None:
        _LOADER = _loader()  # made once: making one costs more than a load
    try:
        return _LOADER.load(text)
    except YAMLRefused:
        _LOADER = None  # whatever state a refused document left behind goes with it
        raise
    except RecursionError:
        _LOADER = None
        raise YAMLRefused(f"nested more than {YAML_MAX_DEPTH} levels deep") from None
    except Exception as exc:  # ruamel's errors, and anything else odd input provokes: one message, no traceback
        _LOADER = None
        problem = getattr(exc, "problem", None)
        mark = getattr(exc, "problem_mark", None)
        if problem:
            where = f" (line {mark.line + 1})" if mark is not None else ""
            raise YAMLRefused(f"not valid YAML: {str(problem).strip().splitlines()[0]}{where}") from None
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise YAMLRefused(f"not valid YAML: {first[:200]}") from None


def lines(text: str) -> dict[tuple[str | int, ...], int]:
    """The line (1-based) of every key and list item of the one document in ``text``, by its
    path (``("entries", "Qwen", "aliases", 0)``), for messages that name a line. The text is
    composed again with the same refusals as :func:`load` (call it only for a file with a
    finding); an empty mapping when it cannot be."""
    global _LOADER
    if _LOADER is None:
        _LOADER = _loader()
    try:
        node = _LOADER.compose(text)
    except Exception:  # refused or broken: load() has said why
        _LOADER = None
        return {}
    out: dict[tuple[str | int, ...], int] = {}

    def walk(node: Any, path: tuple[str | int, ...]) -> None:
        value = getattr(node, "value", None)
        if isinstance(value, list) and value and isinstance(value[0], tuple):  # a mapping
            for key, child in value:
                name = getattr(key, "value", None)
                if isinstance(name, str):
                    out[(*path, name)] = key.start_mark.line + 1
                    walk(child, (*path, name))
        elif isinstance(value, list):  # a sequence
            for i, child in enumerate(value):
                out[(*path, i)] = child.start_mark.line + 1
                walk(child, (*path, i))

    if node is not None:
        walk(node, ())
    return out
