"""The YAML files a converter is given: a table's mapping (``--mapping``) and a model-id list
(``--models``).

Both are input someone else wrote, so both are read like the store's other YAML
(:mod:`eee.store.safeyaml`: no aliases, no tags, bounded depth, at most
:data:`MAPPING_MAX_BYTES`) and checked strictly: an unknown key (with the key it was
probably meant to be), a missing one, a value of the wrong type or out of its set is a
:class:`MappingError` whose finding names the file, its line and the key
(``mapping.yaml:12::$.metrics[1].direction``) and the fix. Nothing is guessed or defaulted
silently.

A table mapping's format is a pinned schema, ``schemas/mappings/table.schema.json`` (every
key with what it holds); the site's conversion page has a worked example, and the shipped
mappings are in ``tools/eee/convert/mappings/``. In short::

    benchmark: cocoabench                # the benchmark folder, data/<benchmark>/...
    evaluation_name: CocoaBench          # optional (default: the benchmark)
    source: {name: ..., type: documentation, organization: ..., url: https://...}
    dataset: {name: ..., hf_repo: org/dataset}                 # optional
    eval_library: {name: cocoabench, version: unknown}         # optional
    model:
      column: model backbone             # the column that names the model ("" for one without a name)
      ids: {GPT-5.4: openai/gpt-5.4}     # its names -> developer/model ids
    setting: [{column: agent scaffold, key: agent_scaffold}]   # optional
    metrics:                             # one entry per metric column
      - {column: accuracy (%), id: accuracy, direction: higher, min: 0, max: 100, unit: percent}
    judge: {id: openai/gpt-4-1106-preview, prompt: ...}        # optional: the LLM judge of the scores
    skip: [{model: NullModel, why: ...}] # optional: rows left out (by model, or column and value)
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eee.reporting.findings import Finding, Refused
from eee.store.jsonpath import format_path, json_type
from eee.store.limits import KIB, Unreadable, read_regular
from eee.store.paths import canonical_folders, component_problem

MAPPING_MAX_BYTES = 256 * KIB
# a model id a log or table may give as it is: developer/model in plain characters
PLAIN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:+-]*$")
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
SOURCE_TYPES = ("documentation", "evaluation_run")
DIRECTIONS = ("higher", "lower")


class MappingError(Refused):
    """A mapping (or models file) that cannot be used: one finding naming file, key and fix."""

    def __init__(
        self, file: str | Path, path: list[str | int], message: str, hint: str, line: int | None = None
    ) -> None:
        from eee.convert.common import display

        super().__init__(Finding(display(file), format_path(path), message, hint, line=line, check="mapping"))

    @property
    def finding(self) -> Finding:
        return self.findings[0]


def read_yaml(path: Path, what: str) -> Any:
    """The YAML document of a mapping or models file, read safely (bounded, plain data only)."""
    return read_yaml_text(path, what)[1]


def read_yaml_text(path: Path, what: str) -> tuple[str, Any]:
    """(text, document) of a mapping or models file, read safely (bounded, plain data only)."""
    from eee.store.safeyaml import YAMLRefused, load

    try:
        data = read_regular(path, MAPPING_MAX_BYTES, what, follow=True)
    except FileNotFoundError:
        raise MappingError(path, [], "file not found", f"check the path of the {what}") from None
    except Unreadable as exc:
        raise MappingError(path, [], exc.message, exc.hint or f"give a {what} of at most 256 KiB") from None
    except OSError as exc:
        raise MappingError(path, [], f"cannot read the file: {exc.strerror}", f"check the path of the {what}") from None
    try:
        text = data.decode("utf-8")
        return text, load(text)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise MappingError(path, [], "not UTF-8 text", "save the file as UTF-8", line) from None
    except YAMLRefused as exc:
        found = re.search(r"\(line (\d+)\)", str(exc))
        raise MappingError(
            path,
            [],
            str(exc),
            "write plain YAML: mappings, lists, strings and numbers (no anchors, aliases or tags)",
            int(found.group(1)) if found else None,
        ) from None


class _Node:
    """A mapping's object at ``path``, checked key by key against what it may hold."""

    def __init__(self, file: Path, path: list[str | int], value: Any, what: str, at: _Lines | None = None) -> None:
        self.file, self.path, self.at = file, path, at or _Lines("")
        if not isinstance(value, dict):
            raise MappingError(
                file,
                path,
                f"expected {what} (a mapping of keys), found {json_type(value)}",
                _EXAMPLE,
                self.at.line(path),
            )
        self.value = value

    def error(self, key: str | int | None, message: str, hint: str) -> MappingError:
        where = self.path + ([key] if key is not None else [])
        return MappingError(self.file, where, message, hint, self.at.line(where))

    def column(self, key: str, hint: str, required: bool = True) -> str | None:
        """A column's header: any text, the empty string included (a column without a name)."""
        if key not in self.value or self.value[key] is None:
            if required:
                raise self.error(key, f"missing key {key!r}", hint)
            return None
        value = self.value[key]
        if not isinstance(value, str):
            raise self.error(key, f"expected a column's header (a string), found {json_type(value)}", hint)
        return value.strip()

    def allow(self, *keys: str) -> None:
        for key in self.value:
            if key not in keys:
                close = difflib.get_close_matches(str(key), keys, n=1)
                hint = f"did you mean {close[0]!r}?" if close else "known keys here: " + ", ".join(keys)
                raise self.error(str(key), f"unknown key {key!r}", hint)

    def text(self, key: str, hint: str, required: bool = True, default: str | None = None) -> str | None:
        if key not in self.value or self.value[key] is None:
            if required:
                raise self.error(key, f"missing key {key!r}", hint)
            return default
        value = self.value[key]
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.error(key, f"expected a string, found {json_type(value)}", hint)
        text = str(value).strip()
        if not text:
            raise self.error(key, "empty", hint)
        if any(ord(c) < 32 for c in text):
            raise self.error(key, "holds control characters", "write it on one line, as plain text")
        return text

    def choice(self, key: str, choices: tuple[str, ...], default: str | None = None) -> str:
        hint = "one of: " + ", ".join(choices)
        value = self.text(key, hint, required=default is None, default=default)
        if value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1)
            raise self.error(
                key, f"{value!r} is not one of {', '.join(choices)}", f"did you mean {close[0]!r}?" if close else hint
            )
        return value

    def urls(self, key: str) -> list[str]:
        if key not in self.value or self.value[key] is None:
            return []
        value = self.value[key]
        items = value if isinstance(value, list) else [value]
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, str) or not item.startswith(("https://", "http://")):
                at = [key, i] if isinstance(value, list) else [key]
                raise MappingError(
                    self.file,
                    self.path + at,
                    f"expected an http(s) address, found {item!r}"[:300],
                    "write the full address: https://...",
                    self.at.line(self.path + at),
                )
            out.append(item)
        return out

    def number(self, key: str, hint: str) -> float:
        if key not in self.value:
            raise self.error(key, f"missing key {key!r}", hint)
        value = self.value[key]
        if isinstance(value, str) and value.strip() in ("Infinity", "-Infinity", "inf", "-inf"):
            return float(value.strip().replace("Infinity", "inf"))
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise self.error(key, f"expected a number, found {json_type(value)} {value!r}"[:300], hint)
        return float(value)

    def child(self, key: str, what: str, required: bool = False) -> _Node | None:
        if key not in self.value or self.value[key] is None:
            if required:
                raise self.error(key, f"missing key {key!r}", _EXAMPLE)
            return None
        return _Node(self.file, [*self.path, key], self.value[key], what, self.at)

    def items(self, key: str, what: str, required: bool = False) -> list[_Node]:
        if key not in self.value or self.value[key] is None:
            if required:
                raise self.error(key, f"missing key {key!r}", f"list the {what}s under {key}:")
            return []
        value = self.value[key]
        if not isinstance(value, list) or (required and not value):
            raise self.error(
                key, f"expected a list of {what}s, found {json_type(value)}", f"write one `- ...` entry per {what}"
            )
        return [_Node(self.file, [*self.path, key, i], item, what, self.at) for i, item in enumerate(value)]


_EXAMPLE = (
    "see the mapping format: schemas/mappings/table.schema.json, with a worked example in docs/guide/conversion.md"
)
SCHEMA = ("mappings", "table.schema.json")  # (folder, file) under schemas/, pinned


class _Lines:
    """The line of each key and list item of a mapping's text, worked out when first asked
    (for a message only)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._at: dict[tuple[str | int, ...], int] | None = None

    def line(self, path: list[str | int]) -> int | None:
        if not self.text:
            return None
        if self._at is None:
            from eee.store.safeyaml import lines

            self._at = lines(self.text)
        for n in range(len(path), 0, -1):
            if tuple(path[:n]) in self._at:
                return self._at[tuple(path[:n])]
        return None


def _finite(value: Any) -> Any:
    """The document as JSON Schema reads it: YAML's .inf written as "Infinity" (a JSON
    number cannot be infinite; the schema allows the string)."""
    if isinstance(value, float) and math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def check_schema(path: Path, doc: Any, at: _Lines) -> None:
    """The mapping against its pinned schema (schemas/mappings/table.schema.json): the first
    problem, in the order of the file's lines, as a :class:`MappingError` naming its line."""
    from eee.store.schemas import default_registry

    validator = default_registry().other_validator(*SCHEMA)
    errors = list(validator.iter_errors(_finite(doc)))
    if not errors:
        return

    def place(e: Any) -> tuple[bool, bool, int, int]:
        # a misspelt key first: it explains the key the same object then misses
        line = at.line(list(e.instance_path))
        return type(e.kind).__name__ != "AdditionalProperties", line is None, line or 0, len(list(e.instance_path))

    err = min(errors, key=place)
    where, message, hint = _schema_message(err, list(err.instance_path))
    raise MappingError(path, where, message, hint, at.line(where))


def _schema_message(err: Any, where: list[str | int]) -> tuple[list[str | int], str, str]:
    """A schema error said for a mapping's author: (where, message, hint). An unknown key with
    the key it was probably meant to be, a missing key with what it holds, a value out of its
    set or of the wrong type with what is expected, else the validator's own words."""
    kind = type(err.kind).__name__
    schema = _schema_at(where) or {}
    known = list(schema.get("properties") or {})
    value = err.instance
    if kind == "AdditionalProperties" and getattr(err.kind, "unexpected", None):
        key = str(err.kind.unexpected[0])
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else "known keys here: " + ", ".join(known)
        return [*where, key], f"unknown key {key!r}", hint
    if kind == "Required":
        prop = getattr(err.kind, "property", None)
        name = str(prop) if isinstance(prop, str) else str(err.message).split('"')[1 if '"' in str(err.message) else 0]
        what = _described([*where, name])
        return [*where, name], f"missing key {name!r}", f"{name}: {what}" if what else _EXAMPLE
    if kind == "Enum":
        allowed = [str(a) for a in schema.get("enum") or []]
        close = difflib.get_close_matches(str(value), allowed, n=1)
        hint = f"did you mean {close[0]!r}?" if close else "one of: " + ", ".join(allowed)
        return where, f"{value!r} is not one of {', '.join(allowed)}"[:300], hint
    described = _described(where) or schema.get("description") or _EXAMPLE
    if kind in ("OneOfNotValid", "OneOfMultipleValid") and len(where) == 2 and where[0] == "skip":
        return where, "a skip entry names a model, or a column and its value (one of the two), and why", described
    if kind == "Pattern" and "\\x00-\\x1f" in str(schema.get("pattern", "")):
        return where, "holds control characters", "write it on one line, as plain text"
    expects = _expects(where, schema)
    if expects == "url":
        return where, f"expected an http(s) address, found {value!r}"[:300], "write the full address: https://..."
    if expects == "number":
        return where, f"expected a number, found {json_type(value)} {value!r}"[:300], described
    if kind == "Type" and schema.get("type") == "array":
        name = str(where[-1]) if where else "item"
        return (
            where,
            f"expected a list of {name}, found {json_type(value)}",
            f"write one `- ...` entry per {name[:-1] if name.endswith('s') else name}",
        )
    if kind == "Type" and schema.get("type") == "object":
        what = "a table mapping" if not where else f"{where[-1]}"
        return where, f"expected {what} (a mapping of keys), found {json_type(value)}", described
    message = str(err.message)
    return where, (message if len(message) <= 300 else message[:297] + "..."), described


def _described(where: list[str | int]) -> str | None:
    """The description the schema gives the value at ``where`` (on the property itself, beside a reference)."""
    raw: Any = _schema_doc()
    for step in where:
        raw = _resolve(raw)
        raw = raw.get("items") if isinstance(step, int) else (raw.get("properties") or {}).get(step)
        if not isinstance(raw, dict):
            return None
    return raw.get("description") or _resolve(raw).get("description")


def _expects(where: list[str | int], schema: dict[str, Any]) -> str | None:
    """What kind of value a oneOf or typed place wants: a url, a number, else None."""
    raw: Any = _schema_doc()
    for step in where:  # the unresolved node, to see which definition it names
        raw = _resolve(raw)
        raw = raw.get("items") if isinstance(step, int) else (raw.get("properties") or {}).get(step)
        if not isinstance(raw, dict):
            return None
    ref = str(raw.get("$ref", ""))
    if ref.endswith(("/url", "/urls")):
        return "url"
    if ref.endswith("/limit") or schema.get("type") == "number":
        return "number"
    return None


@functools.cache
def _schema_doc() -> dict[str, Any]:
    import json

    from eee.store.schemas import default_registry

    return dict(json.loads((default_registry().root / SCHEMA[0] / SCHEMA[1]).read_text(encoding="utf-8")))


def _resolve(node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        node = _schema_doc()["definitions"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _schema_at(where: list[str | int]) -> dict[str, Any] | None:
    """The part of the mapping schema that describes the value at ``where``."""
    node: Any = _schema_doc()
    for step in where:
        node = _resolve(node)
        if not isinstance(node, dict):
            return None
        node = node.get("items") if isinstance(step, int) else (node.get("properties") or {}).get(step)
        if node is None:
            return None
    node = _resolve(node)
    return node if isinstance(node, dict) else None


def model_ids(file: Path, path: list[str | int], ids: Any, at: _Lines | None = None) -> dict[str, str]:
    """A mapping of model names to developer/model ids, every id checked."""
    if ids is None:
        return {}
    at = at or _Lines("")
    if not isinstance(ids, dict):
        raise MappingError(
            file,
            path,
            f"expected a mapping of model names to ids, found {json_type(ids)}",
            "write `name: developer/model`, one per line",
            at.line(path),
        )
    out: dict[str, str] = {}
    for name, model_id in ids.items():
        where = [*path, str(name)]
        if not isinstance(model_id, str) or not plain_id(model_id):
            raise MappingError(
                file,
                where,
                f"{model_id!r} is not a developer/model id"[:300],
                "write the model's id as developer/model (letters, digits, . _ -), e.g. openai/gpt-4o",
                at.line(where),
            )
        out[str(name)] = model_id
    return out


def plain_id(text: str) -> bool:
    """Whether ``text`` is a developer/model id in plain characters (``org/model-1.5``)."""
    return PLAIN_ID.match(text) is not None and canonical_folders(text) is not None


def load_models(path: Path) -> dict[str, str]:
    """A ``--models`` file: ``name: developer/model`` per line (a YAML mapping)."""
    text, doc = read_yaml_text(path, "models file")
    return model_ids(path, [], doc, _Lines(text))


@dataclass
class Metric:
    column: str
    id: str
    name: str
    lower_is_better: bool
    min: float
    max: float
    unit: str | None
    kind: str | None
    description: str | None
    stderr_column: str | None
    library: tuple[str, str] | None
    where: list[str | int]


@dataclass
class Judge:
    """The LLM judge behind a table's scores (a mapping's ``judge``)."""

    id: str
    name: str | None
    prompt: str
    temperature: float | None
    platform: str | None
    deployment_type: str = "unknown"
    model_availability: str = "unknown"


@dataclass
class Skip:
    """Rows a mapping leaves out: by the model's name, or by a column's value; and why."""

    why: str
    where: list[str | int]
    model: str | None = None
    column: str | None = None
    value: str | None = None

    def matches(self, model_column: str, cells: dict[str, Any]) -> bool:
        column, wanted = (model_column, self.model) if self.model is not None else (self.column, self.value)
        cell = cells.get(column) if column is not None else None
        if cell is None or isinstance(cell, bool) or not isinstance(cell, str | int | float):
            return False
        return str(cell).strip() == (wanted or "").strip()


@dataclass
class Mapping:
    file: Path
    benchmark: str
    evaluation_name: str
    source_name: str
    source_type: str
    organization: str
    organization_url: str | None
    relationship: str
    source_urls: list[str]
    retrieved: float | None
    dataset_name: str
    hf_repo: str | None
    dataset_urls: list[str]
    library: tuple[str, str]
    model_column: str
    ids: dict[str, str]
    setting: list[tuple[str, str]] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    judge: Judge | None = None
    skip: list[Skip] = field(default_factory=list)

    def columns(self) -> list[tuple[str, list[str | int]]]:
        """Every column the mapping names, with the key that names it."""
        out: list[tuple[str, list[str | int]]] = [(self.model_column, ["model", "column"])]
        out += [(column, ["setting", i, "column"]) for i, (column, _) in enumerate(self.setting)]
        out += [(k.column, [*k.where, "column"]) for k in self.skip if k.column is not None]
        for m in self.metrics:
            out.append((m.column, [*m.where, "column"]))
            if m.stderr_column:
                out.append((m.stderr_column, [*m.where, "stderr_column"]))
        return out


def _library(node: _Node | None, default: tuple[str, str] | None) -> tuple[str, str] | None:
    if node is None:
        return default
    node.allow("name", "version")
    name = node.text("name", "the name of the software that produced the numbers")
    version = node.text("version", "its version, or unknown", required=False, default="unknown")
    return str(name), str(version)


def _unit(node: _Node) -> str | None:
    """The unit of the scores; ``none`` for a dimensionless one (a perplexity), said explicitly."""
    unit = node.text(
        "unit", "the unit of the scores: proportion, percent, seconds, usd, ...; none for a dimensionless one"
    )
    return None if unit == "none" else unit


def _retrieved(node: _Node) -> float | None:
    text = node.text("retrieved", "", required=False)
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise node.error(
            "retrieved",
            f"not an ISO 8601 date or time: {text!r}"[:300],
            'write e.g. "2026-05-01" or "2026-05-01T12:00:00Z"',
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def load_mapping(path: Path) -> Mapping:
    """Read and check a table mapping against its pinned schema, then what a schema cannot
    say (a benchmark folder's name, metric ids told apart, bounds in order, model ids);
    :class:`MappingError` names the first problem with its line."""
    text, doc = read_yaml_text(path, "mapping")
    at = _Lines(text)
    check_schema(path, doc, at)
    top = _Node(path, [], doc, "a table mapping", at)
    top.allow(
        "benchmark",
        "evaluation_name",
        "source",
        "dataset",
        "eval_library",
        "model",
        "setting",
        "metrics",
        "judge",
        "skip",
    )
    benchmark = str(top.text("benchmark", "the benchmark's folder name under data/, e.g. cocoabench"))
    problem = "it holds a /" if "/" in benchmark else component_problem(benchmark)
    if problem or benchmark != benchmark.strip():
        raise top.error(
            "benchmark", f"{benchmark!r} cannot be a folder name: {problem}"[:300], "use letters, digits, - and _"
        )
    source = top.child("source", "the source of the table", required=True)
    assert source is not None
    source.allow("name", "type", "organization", "organization_url", "relationship", "url", "retrieved")
    source_name = str(source.text("name", "the name of the publication or leaderboard the table comes from"))
    organization_url = source.urls("organization_url")
    dataset = top.child("dataset", "the dataset")
    if dataset is not None:
        dataset.allow("name", "hf_repo", "url")
    model = top.child("model", "the model column", required=True)
    assert model is not None
    model.allow("column", "ids")
    setting = []
    for node in top.items("setting", "setting"):
        node.allow("column", "key")
        key = str(node.text("key", "the name the setting is recorded under, e.g. agent_scaffold"))
        setting.append((str(node.column("column", "the column that holds the setting")), key))
    metrics = []
    seen: dict[str, int] = {}
    for i, node in enumerate(top.items("metrics", "metric", required=True)):
        node.allow(
            "column",
            "id",
            "name",
            "direction",
            "min",
            "max",
            "unit",
            "kind",
            "description",
            "stderr_column",
            "eval_library",
        )
        column = str(node.column("column", "the column that holds this metric's scores"))
        metric_id = str(node.text("id", "the metric's id, e.g. accuracy or cocoabench.cost_per_task"))
        if metric_id in seen:
            raise node.error(
                "id",
                f"metric id {metric_id!r} is also the id of metrics[{seen[metric_id]}]",
                "give each metric its own id",
            )
        seen[metric_id] = i
        bounds = "the lowest and highest possible score; .inf for an unbounded limit"
        low, high = node.number("min", bounds), node.number("max", bounds)
        if not low < high:
            raise node.error(
                "max", f"max {high} is not above min {low}", "the bounds are the lowest and highest possible score"
            )
        metrics.append(
            Metric(
                column=column,
                id=metric_id,
                name=str(node.text("name", "", required=False, default=column)),
                lower_is_better=node.choice("direction", DIRECTIONS) == "lower",
                min=low,
                max=high,
                unit=_unit(node),
                kind=node.text("kind", "", required=False),
                description=node.text("description", "", required=False),
                stderr_column=node.column("stderr_column", "", required=False),
                library=_library(node.child("eval_library", "the metric's eval library"), None),
                where=["metrics", i],
            )
        )
    library = _library(top.child("eval_library", "the eval library"), (source_name, "unknown"))
    assert library is not None
    return Mapping(
        file=path,
        benchmark=benchmark,
        evaluation_name=str(top.text("evaluation_name", "", required=False, default=benchmark)),
        source_name=source_name,
        source_type=source.choice("type", SOURCE_TYPES),
        organization=str(source.text("organization", "the organisation that provides the results")),
        organization_url=organization_url[0] if organization_url else None,
        relationship=source.choice("relationship", RELATIONSHIPS, default="third_party"),
        source_urls=source.urls("url"),
        retrieved=_retrieved(source),
        dataset_name=str(dataset.text("name", "the dataset's name") if dataset else benchmark),
        hf_repo=dataset.text("hf_repo", "", required=False) if dataset else None,
        dataset_urls=dataset.urls("url") if dataset else [],
        library=library,
        model_column=str(model.column("column", "the column that names the model")),
        ids=model_ids(path, ["model", "ids"], model.value.get("ids"), at),
        setting=setting,
        metrics=metrics,
        judge=_judge(top.child("judge", "the judge")),
        skip=[
            Skip(
                why=str(node.text("why", "why the rows are left out")),
                where=["skip", i],
                model=node.text("model", "", required=False),
                column=node.column("column", "", required=False),
                value=None if "value" not in node.value else str(node.value["value"]).strip(),
            )
            for i, node in enumerate(top.items("skip", "row to skip"))
        ],
    )


def _judge(node: _Node | None) -> Judge | None:
    if node is None:
        return None
    judge_id = str(node.text("id", "the judge model's developer/model id"))
    if not plain_id(judge_id):
        raise node.error("id", f"{judge_id!r} is not a developer/model id", "write the judge's id as developer/model")
    temperature = node.value.get("temperature")
    return Judge(
        id=judge_id,
        name=node.text("name", "", required=False),
        prompt=str(node.text("prompt", "the prompt template the judge is given")),
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        platform=node.text("platform", "", required=False),
        deployment_type=node.choice("deployment_type", ("self_deployed", "externally_managed", "unknown"), "unknown"),
        model_availability=node.choice("model_availability", ("open_weights", "closed_weights", "unknown"), "unknown"),
    )
