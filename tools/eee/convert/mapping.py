"""The YAML files a converter is given: a table's mapping (``--mapping``) and a model-id list
(``--models``).

Both are input someone else wrote, so both are read like the store's other YAML
(:mod:`eee.store.safeyaml`: no aliases, no tags, bounded depth, at most
:data:`MAPPING_MAX_BYTES`) and checked strictly: an unknown key (with the key it was
probably meant to be), a missing one, a value of the wrong type or out of its set is a
:class:`MappingError` whose finding names the file, the key (``$.metrics[1].direction``)
and the fix. Nothing is guessed or defaulted silently.

A table mapping (``eee convert table --mapping FILE results.csv``; the shipped ones are in
``tools/eee/convert/mappings/``)::

    benchmark: cocoabench                # the benchmark folder, data/<benchmark>/...
    evaluation_name: CocoaBench          # optional (default: the benchmark)
    source:
      name: CocoaBench leaderboard       # source_metadata.source_name
      type: documentation                # documentation (from a publication) | evaluation_run
      organization: CocoaBench authors   # who provides the results
      organization_url: https://...      # optional
      relationship: third_party          # optional: first_party | third_party | collaborative | other
      url: https://...                   # optional: where the results are published (one or a list)
      retrieved: "2026-05-01"            # optional: when the table was read (ISO 8601; default: now)
    dataset:                             # optional: the dataset (default: source.url)
      name: CocoaBench
      hf_repo: org/dataset               # optional: a Hugging Face dataset
      url: https://...                   # optional
    eval_library: {name: cocoabench, version: unknown}   # optional (default: the table's source name)
    model:
      column: model backbone             # the column that names the model
      ids: {GPT-5.4: openai/gpt-5.4}     # its names -> developer/model ids
    setting:                             # optional: other columns that tell rows apart
      - {column: agent scaffold, key: agent_scaffold}
    metrics:                             # one entry per metric column
      - column: accuracy (%)
        id: accuracy                     # metric_id
        name: Accuracy                   # optional display name (default: the column)
        direction: higher                # higher | lower
        min: 0                           # bounds; .inf (or Infinity) for an unbounded one
        max: 100
        unit: percent                    # none for a dimensionless score (a perplexity)
        kind: accuracy                   # optional metric_kind
        description: ...                 # optional
        stderr_column: ...               # optional: the column with its standard error
        eval_library: {name: ..., version: ...}   # optional: another implementation -> its own record
"""

from __future__ import annotations

import difflib
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

    def __init__(self, file: str | Path, path: list[str | int], message: str, hint: str) -> None:
        from eee.convert.common import display

        super().__init__(Finding(display(file), format_path(path), message, hint, check="mapping"))

    @property
    def finding(self) -> Finding:
        return self.findings[0]


def read_yaml(path: Path, what: str) -> Any:
    """The YAML document of a mapping or models file, read safely (bounded, plain data only)."""
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
        return load(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise MappingError(path, [], "not UTF-8 text", "save the file as UTF-8") from None
    except YAMLRefused as exc:
        raise MappingError(
            path, [], str(exc), "write plain YAML: mappings, lists, strings and numbers (no anchors, aliases or tags)"
        ) from None


class _Node:
    """A mapping's object at ``path``, checked key by key against what it may hold."""

    def __init__(self, file: Path, path: list[str | int], value: Any, what: str) -> None:
        self.file, self.path = file, path
        if not isinstance(value, dict):
            raise MappingError(file, path, f"expected {what} (a mapping of keys), found {json_type(value)}", _EXAMPLE)
        self.value = value

    def error(self, key: str | int | None, message: str, hint: str) -> MappingError:
        return MappingError(self.file, self.path + ([key] if key is not None else []), message, hint)

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
        return _Node(self.file, [*self.path, key], self.value[key], what)

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
        return [_Node(self.file, [*self.path, key, i], item, what) for i, item in enumerate(value)]


_EXAMPLE = "see the mapping format in tools/eee/convert/mapping.py (and the shipped mappings beside it)"


def model_ids(file: Path, path: list[str | int], ids: Any) -> dict[str, str]:
    """A mapping of model names to developer/model ids, every id checked."""
    if ids is None:
        return {}
    if not isinstance(ids, dict):
        raise MappingError(
            file,
            path,
            f"expected a mapping of model names to ids, found {json_type(ids)}",
            "write `name: developer/model`, one per line",
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
            )
        out[str(name)] = model_id
    return out


def plain_id(text: str) -> bool:
    """Whether ``text`` is a developer/model id in plain characters (``org/model-1.5``)."""
    return PLAIN_ID.match(text) is not None and canonical_folders(text) is not None


def load_models(path: Path) -> dict[str, str]:
    """A ``--models`` file: ``name: developer/model`` per line (a YAML mapping)."""
    return model_ids(path, [], read_yaml(path, "models file"))


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

    def columns(self) -> list[tuple[str, list[str | int]]]:
        """Every column the mapping names, with the key that names it."""
        out: list[tuple[str, list[str | int]]] = [(self.model_column, ["model", "column"])]
        out += [(column, ["setting", i, "column"]) for i, (column, _) in enumerate(self.setting)]
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
    """Read and check a table mapping; :class:`MappingError` names the first problem."""
    top = _Node(path, [], read_yaml(path, "mapping"), "a table mapping")
    top.allow("benchmark", "evaluation_name", "source", "dataset", "eval_library", "model", "setting", "metrics")
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
        setting.append((str(node.text("column", "the column that holds the setting")), key))
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
        column = str(node.text("column", "the column that holds this metric's scores"))
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
                stderr_column=node.text("stderr_column", "", required=False),
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
        model_column=str(model.text("column", "the column that names the model")),
        ids=model_ids(path, ["model", "ids"], model.value.get("ids")),
        setting=setting,
        metrics=metrics,
    )
