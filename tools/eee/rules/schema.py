"""JSON Schema errors (from jsonschema-rs) as findings with readable messages and hints,
and near misses: misspelt fields that an open object lets through (a warning with "did you
mean"), or that stand in for a missing required field (one error, not two)."""

from __future__ import annotations

import json
import re
from typing import Any

from eee.reporting.findings import WARNING, Finding
from eee.store.jsonpath import format_path

MAX_ERRORS_PER_DOC = 20

_SOURCE_DATA_HINT = (
    "source_data takes one of three forms: {source_type: 'url', dataset_name, url: [...]}, "
    "{source_type: 'hf_dataset', dataset_name, hf_repo?}, or {source_type: 'other', dataset_name}"
)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _hint(kind: str, path: list[Any], message: str, version: str) -> str | None:
    last = path[-1] if path else None
    parent = path[-2] if len(path) >= 2 else None
    if kind == "Required":
        field = message.split('"')[1] if '"' in message else "the field"
        if field in ("deployment_type", "model_availability"):
            return f"add model_info.additional_details.{field}; use 'unknown' when the source does not say"
        if field == "eval_library":
            return "add eval_library: {name, version}; write 'unknown' for what the source does not say"
        return f"add {field!r} (see the schema reference for version {version})"
    if kind == "AdditionalProperties":
        return "remove the field or fix its spelling; free-form facts go under an additional_details object"
    if kind == "OneOfNotValid" and last == "source_data":
        return _SOURCE_DATA_HINT
    if kind == "OneOfNotValid" and last in ("min_score", "max_score"):
        return 'write a number, the string "Infinity"/"-Infinity" for an unbounded limit, or null'
    if kind == "Type" and parent in ("additional_details", "details", "metadata", "config", "parameters"):
        return "values here must be strings; write numbers and objects as JSON text"
    if kind == "Type" and last == "additional_details":
        return "additional_details is an object whose values are strings"
    if kind == "Enum":
        return "use one of the listed values"
    if kind == "Type":
        return "change the value to the expected type"
    return None


def _with_values(hint: str | None, shape: Shape, path: list[Any], field: Any) -> str | None:
    """A missing field's hint with the values it may take, when the schema lists them, and
    the fields it needs, when it is an object that requires some."""
    here = shape.at([*path, field]) if isinstance(field, str) else None
    if here is None:
        return hint
    extra = ""
    if here.values:
        extra = "; allowed values: " + ", ".join(json.dumps(v, ensure_ascii=False) for v in here.values)
    elif here.required:
        parts = []
        for name in sorted(here.required):
            values = here.props[name].values if name in here.props else ()
            parts.append(f"{name} ({' | '.join(map(str, values))})" if values else name)
        extra = "; it needs " + ", ".join(parts)
    return (hint or f"add {field!r}") + extra


def _brief(value: Any) -> str:
    """A short rendering of an offending value for a one-line message."""
    if isinstance(value, dict):
        return "an object" if value else "an empty object"
    if isinstance(value, list):
        return "an array" if value else "an empty array"
    text = json.dumps(value, ensure_ascii=False)
    return _short(text, 60)


def _message(err: Any, kind: str) -> str:
    k = err.kind
    instance = getattr(err, "instance", None)
    if kind == "Type":
        types = " or ".join(f'"{t}"' for t in k.types)
        return f"{_brief(instance)} is not of type {types}"
    if kind == "Enum":
        options = ", ".join(_short(str(o), 40) for o in k.options)
        return f"{_brief(instance)} is not one of {options}"
    if kind in ("OneOfNotValid", "AnyOf"):
        return "matches none of the allowed forms"
    if kind == "OneOfMultipleValid":
        return "matches more than one of the allowed forms"
    if kind == "MinItems":
        return f"{_brief(instance)}: needs at least {k.limit} item{'s' if k.limit != 1 else ''}"
    if kind == "Constant":
        return f"{_brief(instance)} is not {_brief(k.expected_value)}"
    return _short(err.message, 200)


def schema_findings(
    validator: Any,
    doc: Any,
    file: str,
    version: str,
    line: int | None = None,
    limit: int = MAX_ERRORS_PER_DOC,
    shape: Shape | None = None,
    beyond: list[int] | None = None,
) -> list[Finding]:
    """Findings for every schema error in ``doc`` (up to ``limit``).

    With the version's ``shape``, a missing required field and an unexpected key that
    misspells it are one finding at the key, an unexpected key in a closed object says
    which field it probably means, and near misses in open objects are added as warnings.
    ``beyond``: when given, the number of errors left out by ``limit`` is appended to it
    (every one is counted: a cap limits what is shown, never what is counted).
    """
    errors = []
    found = iter(validator.iter_errors(doc))
    for err in found:
        errors.append(err)
        if len(errors) >= limit + 16:  # merging may fold a few errors into one
            break
    rest = sum(1 for _ in found) if beyond is not None else 0
    renames: dict[tuple[Any, ...], str] = {}  # path of a misspelt key -> the required field it stands for
    if shape is not None:
        for err in errors:
            if type(err.kind).__name__ != "Required":
                continue
            path = list(err.instance_path)
            obj = _at(doc, path)
            field = getattr(err.kind, "property", None)
            if not isinstance(obj, dict) or not isinstance(field, str):
                continue
            here = shape.at(path)
            declared = set(here.names) if here is not None else set()
            declared.add(field)
            frozen = frozenset(declared)
            for key in sorted(k for k in obj if k not in declared):
                if (*path, key) not in renames and suggest(key, frozen) == field:
                    renames[(*path, key)] = field
                    break
    alternatives: dict[tuple[Any, ...], list[tuple[str, str]]] = {}  # a oneOf that fails for a misspelt field
    if shape is not None:
        for err in errors:
            if type(err.kind).__name__ not in ("OneOfNotValid", "AnyOf"):
                continue
            path = list(err.instance_path)
            obj, here = _at(doc, path), shape.at(path)
            if not isinstance(obj, dict) or here is None:
                continue
            for field in sorted(here.required - obj.keys()):
                declared = frozenset(here.names | {field})
                key = next(
                    (
                        k
                        for k in sorted(obj)
                        if k not in declared and (*path, k) not in renames and suggest(k, declared) == field
                    ),
                    None,
                )
                if key is not None:
                    renames[(*path, key)] = field
                    alternatives.setdefault(tuple(path), []).append((key, field))
    out: list[Finding] = []
    for err in errors:
        path = list(err.instance_path)
        kind = type(err.kind).__name__
        if kind in ("OneOfNotValid", "AnyOf") and tuple(path) in alternatives:
            for key, field in alternatives.pop(tuple(path)):
                out.append(
                    Finding(
                        file=file,
                        pointer=format_path([*path, key]),
                        message=f"{key!r} looks like a misspelling of {field!r}, which every allowed form "
                        f"requires (schema {version})",
                        hint=f"rename {key!r} to {field!r}",
                        line=line,
                        check="schema",
                    )
                )
            continue
        if kind == "Required" and renames:
            field = getattr(err.kind, "property", None)
            key = next((p[-1] for p, f in renames.items() if f == field and list(p[:-1]) == path), None)
            if key is not None:
                out.append(
                    Finding(
                        file=file,
                        pointer=format_path([*path, key]),
                        message=f"{key!r} looks like a misspelling of required {field!r} (schema {version})",
                        hint=f"rename {key!r} to {field!r}",
                        line=line,
                        check="schema",
                    )
                )
                continue
        if kind == "AdditionalProperties" and shape is not None:
            out.extend(_unexpected(err, path, doc, shape, renames, file, version, line))
            continue
        hint = _hint(kind, path, err.message, version)
        if kind == "Required" and shape is not None:
            hint = _with_values(hint, shape, path, getattr(err.kind, "property", None))
        out.append(
            Finding(
                file=file,
                pointer=format_path(path),
                message=f"{_message(err, kind)} (schema {version})",
                hint=hint,
                line=line,
                check="schema",
            )
        )
    if beyond is not None:
        beyond.append(max(0, len(out) - limit) + rest)
    out = out[:limit]
    if shape is not None:
        out.extend(near_miss_findings(doc, shape, file, version, line, skip=set(renames)))
    return out


def _unexpected(
    err: Any,
    path: list[Any],
    doc: Any,
    shape: Shape,
    renames: dict[tuple[Any, ...], str],
    file: str,
    version: str,
    line: int | None,
) -> list[Finding]:
    """An AdditionalProperties error: one finding per key that misspells a field, one for the rest."""
    unexpected = [str(k) for k in getattr(err.kind, "unexpected", None) or []]
    here = shape.at(path)
    names = here.names if here is not None else frozenset()
    out: list[Finding] = []
    rest: list[str] = []
    for key in unexpected:
        if (*path, key) in renames:
            continue  # said with the required field it stands for
        field = suggest(key, names)
        if field is None or field in (_at(doc, path) or {}):
            rest.append(key)
            continue
        out.append(
            Finding(
                file=file,
                pointer=format_path([*path, key]),
                message=f"Additional properties are not allowed: {key!r}; did you mean {field!r}? (schema {version})",
                hint=f"rename {key!r} to {field!r}",
                line=line,
                check="schema",
            )
        )
    if rest:
        message = err.message
        if len(rest) != len(unexpected):
            listed = ", ".join(repr(k) for k in rest)
            message = (
                f"Additional properties are not allowed ({listed} {'was' if len(rest) == 1 else 'were'} unexpected)"
            )
        out.append(
            Finding(
                file=file,
                pointer=format_path(path),
                message=f"{_short(message, 200)} (schema {version})",
                hint=_hint("AdditionalProperties", path, message, version),
                line=line,
                check="schema",
            )
        )
    return out


def document_findings(
    registry: Any,
    version: str,
    kind: str,
    doc: Any,
    file: str,
    line: int | None = None,
    limit: int = MAX_ERRORS_PER_DOC,
    beyond: list[int] | None = None,
) -> tuple[bool, list[Finding]]:
    """(valid under the schema, findings) for one document of a known version (``beyond``:
    see :func:`schema_findings`).

    A document that passes the version's screen is valid and has no near miss: nothing
    more is done for it (the clean path costs one validation, as before).
    """
    if screen(registry, version, kind).is_valid(doc):
        return True, []
    validator = registry.validator(version, kind)
    shape = shape_of(registry, version, kind)
    if validator.is_valid(doc):
        return True, near_miss_findings(doc, shape, file, version, line)
    return False, schema_findings(validator, doc, file, version, line=line, limit=limit, shape=shape, beyond=beyond)


# --- near misses: unknown keys that look like a declared field ---------------------------------
#
# An object schema that declares ``properties`` and leaves ``additionalProperties`` open
# accepts any other key, so a misspelt optional field (``model_info.inference_platfrom``)
# passes validation and is silently lost to every reader. A :class:`Shape` is the tree of
# the fields a schema version declares at each place (through ``$ref``, ``allOf``,
# ``anyOf``/``oneOf`` branches and ``if``/``then``/``else``); a key that a place does not
# declare but that is within a small edit distance of one it does is a near miss.
#
# Free-form maps (``additional_details``, ``metric_parameters``, ...) declare their values
# through ``additionalProperties`` (or declare no properties at all): their keys are never
# near misses. Which objects are open with declared properties is read from the schema.
#
# The clean path pays nothing: :func:`screen` compiles a variant of the schema in which
# every open object with declared properties is closed (``additionalProperties: false``
# over the union of the fields it declares). A document that passes the screen is valid
# and has no unknown key where one could be a near miss; only a document that fails it is
# validated again and walked (:func:`near_misses`).


class Shape:
    """The fields one place of a schema declares, and the shapes of their values."""

    __slots__ = ("extra", "items", "live", "live_keys", "names", "open", "props", "required", "values")

    def __init__(self) -> None:
        self.props: dict[str, Shape] = {}
        self.names: frozenset[str] = frozenset()
        self.open = False  # declares properties and accepts others: unknown keys may be near misses
        self.items: Shape | None = None  # array items
        self.extra: Shape | None = None  # values of undeclared keys (a map's additionalProperties)
        self.live = False  # this place or one below it is open: worth walking
        self.live_keys: tuple[tuple[str, Shape], ...] = ()
        self.required: frozenset[str] = frozenset()  # required whichever branch applies
        self.values: tuple[Any, ...] = ()  # the values allowed here, when the schema lists them (enum)

    def at(self, path: list[Any] | tuple[Any, ...]) -> Shape | None:
        """The shape of the value at ``path`` below this place (None where nothing is declared)."""
        node: Shape | None = self
        for part in path:
            if node is None:
                return None
            node = node.items if isinstance(part, int) else node.props.get(part) or node.extra
        return node


def _resolve(node: Any, root: dict[str, Any]) -> Any:
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#"):
        target: Any = root
        for part in node["$ref"][1:].split("/"):
            if part:
                target = target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, dict) else None
        node = target
        seen += 1
        if seen > 32:  # a reference cycle: nothing more to learn
            return None
    return node


_BRANCHES = ("allOf", "anyOf", "oneOf")
_CONDITIONS = ("if", "then", "else")


def _gather(node: Any, root: dict[str, Any], out: list[dict[str, Any]], depth: int = 0) -> None:
    """``node`` and every subschema that applies to the same value (refs, branches, conditions)."""
    node = _resolve(node, root)
    if not isinstance(node, dict) or depth > 32 or any(node is seen for seen in out):
        return
    out.append(node)
    for key in _BRANCHES:
        for sub in node.get(key) or ():
            _gather(sub, root, out, depth + 1)
    for key in _CONDITIONS:
        _gather(node.get(key), root, out, depth + 1)


def _always_required(node: Any, root: dict[str, Any], depth: int = 0) -> set[str]:
    """The fields ``node`` requires whatever branch of its ``oneOf``/``anyOf`` applies."""
    node = _resolve(node, root)
    if not isinstance(node, dict) or depth > 32:
        return set()
    out = {str(f) for f in node.get("required") or () if isinstance(f, str)}
    for sub in node.get("allOf") or ():
        out |= _always_required(sub, root, depth + 1)
    for key in ("oneOf", "anyOf"):
        branches = [_always_required(sub, root, depth + 1) for sub in node.get(key) or ()]
        if branches:
            out |= set.intersection(*branches)
    return out


def _is_open(schemas: list[dict[str, Any]]) -> bool:
    declaring = [s for s in schemas if isinstance(s.get("properties"), dict) and s["properties"]]
    return bool(declaring) and all(
        s.get("additionalProperties", True) is True and "patternProperties" not in s for s in declaring
    )


def build_shape(schema: dict[str, Any]) -> Shape:
    """The :class:`Shape` of a whole schema document."""
    memo: dict[tuple[int, ...], Shape] = {}

    def build(nodes: list[Any], depth: int) -> Shape:
        gathered: list[dict[str, Any]] = []
        for node in nodes:
            _gather(node, schema, gathered)
        key = tuple(sorted(id(s) for s in gathered))
        found = memo.get(key)
        if found is not None:
            return found
        shape = memo[key] = Shape()
        if depth > 32:
            return shape
        props: dict[str, list[Any]] = {}
        for s in gathered:
            if isinstance(s.get("properties"), dict):
                for name, sub in s["properties"].items():
                    props.setdefault(name, []).append(sub)
        shape.open = _is_open(gathered)
        shape.required = frozenset().union(*(_always_required(node, schema) for node in nodes))
        shape.props = {name: build(subs, depth + 1) for name, subs in props.items()}
        shape.names = frozenset(shape.props)
        enums = [s["enum"] for s in gathered if isinstance(s.get("enum"), list)]
        shape.values = tuple(v for v in enums[0] if all(v in e for e in enums[1:])) if enums else ()
        items = [s["items"] for s in gathered if isinstance(s.get("items"), dict)]
        shape.items = build(items, depth + 1) if items else None
        extra = [s["additionalProperties"] for s in gathered if isinstance(s.get("additionalProperties"), dict)]
        shape.extra = build(extra, depth + 1) if extra else None
        return shape

    top = build([schema], 0)
    # liveness bottom-up (shapes may be shared; a fixed point over the memo)
    changed = True
    while changed:
        changed = False
        for shape in memo.values():
            live = (
                shape.open
                or any(child.live for child in shape.props.values())
                or (shape.items is not None and shape.items.live)
                or (shape.extra is not None and shape.extra.live)
            )
            if live and not shape.live:
                shape.live = changed = True
    for shape in memo.values():
        shape.live_keys = tuple((name, child) for name, child in shape.props.items() if child.live)
    return top


def screening_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` in which every open object with declared properties is closed.

    Only places where an object is fully described are closed: the schema itself, property
    values, array items, map values, definitions and the alternatives of a pure
    ``oneOf``/``anyOf``. Fragments that are ANDed with such a place (``allOf`` members,
    ``if``/``then``/``else``, ``not``, alternatives beside declared properties) stay as they
    are, and a closed place lists every field its fragments declare, so the screen accepts
    exactly the valid documents that have no unknown key in an open object.
    """
    import copy  # lazy: only when a version's screen is first compiled

    root = copy.deepcopy(schema)

    def visit(node: Any, full: bool) -> None:
        if not isinstance(node, dict):
            return
        declares = isinstance(node.get("properties"), dict) and bool(node["properties"])
        if full and declares and _is_open([node]):
            gathered: list[dict[str, Any]] = []
            _gather(node, root, gathered)
            for s in gathered:
                for name in s.get("properties") or {}:
                    node["properties"].setdefault(name, {})
            node["additionalProperties"] = False
        for sub in (node.get("properties") or {}).values():
            visit(sub, full)
        for key in ("$defs", "definitions", "patternProperties"):
            for sub in (node.get(key) or {}).values():
                visit(sub, True if key != "patternProperties" else full)
        if isinstance(node.get("items"), dict):
            visit(node["items"], full)
        if isinstance(node.get("additionalProperties"), dict):
            visit(node["additionalProperties"], full)
        for key in ("anyOf", "oneOf"):
            for sub in node.get(key) or ():
                visit(sub, full and not declares)
        for key in ("allOf", "if", "then", "else", "not"):
            subs = node.get(key)
            for sub in subs if isinstance(subs, list) else [subs]:
                visit(sub, False)

    visit(root, True)
    return root


_SHAPES: dict[tuple[str, str, str], Shape] = {}
_SCREENS: dict[tuple[str, str, str], Any] = {}


def shape_of(registry: Any, version: str, kind: str) -> Shape:
    key = (str(registry.root), version, kind)
    found = _SHAPES.get(key)
    if found is None:
        found = _SHAPES[key] = build_shape(registry.schema(version, kind))
    return found


def screen(registry: Any, version: str, kind: str) -> Any:
    """The screening validator of a version (see :func:`screening_schema`)."""
    key = (str(registry.root), version, kind)
    found = _SCREENS.get(key)
    if found is None:
        import jsonschema_rs  # lazy: as in eee.store.schemas, only when a schema is first compiled

        found = _SCREENS[key] = jsonschema_rs.Draft7Validator(screening_schema(registry.schema(version, kind)))
    return found


def _fold(name: str) -> str:
    return name.casefold().replace("_", "").replace("-", "").replace(" ", "")


def edit_distance(a: str, b: str, limit: int) -> int:
    """Damerau-Levenshtein distance (optimal string alignment), or ``limit + 1`` once above it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, previous2[j - 2] + 1)
            current[j] = best
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def _allowed(name: str) -> int:
    return 1 if len(name) <= 5 else 2 if len(name) <= 12 else 3


_SUGGESTIONS: dict[tuple[str, frozenset[str]], str | None] = {}


def suggest(key: str, names: frozenset[str] | set[str]) -> str | None:
    """The declared field that ``key`` most likely misspells, or None."""
    frozen = names if isinstance(names, frozenset) else frozenset(names)
    cache_key = (key, frozen)
    if cache_key in _SUGGESTIONS:
        return _SUGGESTIONS[cache_key]
    import difflib  # lazy: only when a document has an unknown key

    best: tuple[int, float, str] | None = None
    folded = _fold(key)
    for name in sorted(frozen):
        if name == key:
            continue
        if _fold(name) == folded and folded:
            distance = 0
        else:
            limit = min(_allowed(key), _allowed(name))
            distance = edit_distance(key.casefold(), name.casefold(), limit)
            if distance > limit or distance * 2 >= max(len(key), len(name)):
                continue
        ratio = difflib.SequenceMatcher(None, key, name).ratio()
        candidate = (distance, -ratio, name)
        if best is None or candidate < best:
            best = candidate
    found = best[2] if best else None
    if len(_SUGGESTIONS) < 65536:
        _SUGGESTIONS[cache_key] = found
    return found


def near_misses(doc: Any, shape: Shape) -> list[tuple[tuple[Any, ...], str, str]]:
    """Every (path of the key, key, declared field it probably misspells) in ``doc``."""
    out: list[tuple[tuple[Any, ...], str, str]] = []
    _walk(doc, shape, (), out)
    return out


def _walk(value: Any, shape: Shape, path: tuple[Any, ...], out: list[tuple[tuple[Any, ...], str, str]]) -> None:
    if value.__class__ is dict:
        names = shape.names
        if shape.open and not value.keys() <= names:
            for key in sorted(k for k in value if k not in names):
                field = suggest(key, names)
                if field is not None and field not in value:  # beside the field itself it is another key
                    out.append(((*path, key), key, field))
        for key, child in shape.live_keys:
            sub = value.get(key)
            if sub is not None:
                _walk(sub, child, (*path, key), out)
        extra = shape.extra
        if extra is not None and extra.live:
            for key, sub in value.items():
                if key not in names:
                    _walk(sub, extra, (*path, key), out)
    elif value.__class__ is list:
        items = shape.items
        if items is not None and items.live:
            for i, sub in enumerate(value):
                _walk(sub, items, (*path, i), out)


def _pattern(path: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple("*" if isinstance(p, int) else p for p in path)


def near_miss_findings(
    doc: Any,
    shape: Shape,
    file: str,
    version: str,
    line: int | None = None,
    skip: set[tuple[Any, ...]] | None = None,
) -> list[Finding]:
    """Warnings for misspelt fields in open objects; a key repeated in every result is said once."""
    out: list[Finding] = []
    by_pattern: dict[tuple[Any, ...], list[Any]] = {}
    for path, key, field in near_misses(doc, shape):
        if skip and path in skip:
            continue
        pattern = _pattern(path)
        if pattern in by_pattern:
            by_pattern[pattern][1] += 1
            continue
        finding = Finding(
            file=file,
            pointer=format_path(list(path)),
            message=f"unknown field {key!r} (schema {version}): did you mean {field!r}?",
            hint=f"rename {key!r} to {field!r}: the schema lets other fields through here, so the "
            f"misspelt one passes validation but no reader finds it",
            line=line,
            severity=WARNING,
            check="near-miss",
        )
        by_pattern[pattern] = [finding, 0]
        out.append(finding)
    for finding, more in by_pattern.values():
        if more:
            finding.message += f" (the same key in {more} more place{'s' if more != 1 else ''})"
    return out


def _at(doc: Any, path: list[Any]) -> Any:
    node = doc
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


class OncePerFile:
    """Near-miss warnings of a sidecar said once per place and key, with a count of the rows
    that repeat it (a key misspelt by the converter is misspelt on every row)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], list[Any]] = {}

    def first(self, finding: Finding) -> bool:
        """True for the first finding of its kind; later ones are counted on it."""
        key = (re.sub(r"\[\d+\]", "[*]", finding.pointer), finding.message)
        entry = self.seen.get(key)
        if entry is None:
            self.seen[key] = [finding, 0]
            return True
        entry[1] += 1
        return False

    def finish(self) -> None:
        for finding, more in self.seen.values():
            if more:
                finding.message += f" (and on {more} more row{'s' if more != 1 else ''})"
