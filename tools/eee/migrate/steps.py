"""The migration steps: one pure function per released version step and record kind.

Each step takes a document that is valid under its source version and returns a new
document for the next version plus the :class:`~eee.migrate.changes.Changes` it made; it
never touches its argument. (Each body below rewrites a deep copy, see :func:`_pure`; the
chain, which owns its copy, runs the bodies in place: one copy per document, not per step.)
A step's docstring lists exactly what it changes, derived from the difference of the two
released schema files. What a step cannot migrate losslessly it refuses
(:class:`~eee.migrate.changes.MigrationRefused`).

Released steps are never edited: a schema file never changes once released, so neither does
the step between two of them. A fix is a new step (see governance/schema-change-checklist.md).
Constants a step needs (the field names a version knows) are frozen here with the step.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

from eee.migrate.changes import (
    ROOT,
    UNKNOWN,
    Changes,
    Where,
    at,
    child,
    clone,
    insert_after,
    items,
    json_text,
    move_into,
    refusal,
    rename_key,
    string_items,
    string_map,
    string_value,
    wrap_string,
)
from eee.store.schemas import EVAL, INSTANCE

Document = dict[str, Any]
StepFunction = Callable[[Document], tuple[Document, Changes]]


def _pure(body: StepFunction) -> StepFunction:
    """The pure step function of ``body``: it runs ``body`` on a deep copy of its argument.

    ``body`` rewrites the document it is given; the result keeps it as ``.in_place`` for
    callers that own their copy (the chain).
    """

    @functools.wraps(body)
    def step(doc: Document) -> tuple[Document, Changes]:
        return body(clone(doc))

    step.in_place = body  # type: ignore[attr-defined]
    return step


class Step:
    """One released step: ``kind`` (eval or instance_level_eval), ``source`` -> ``target``.

    Calling it is pure; :meth:`in_place` rewrites a document the caller owns.
    """

    __slots__ = ("func", "in_place", "kind", "source", "target")

    def __init__(self, kind: str, source: str, target: str, func: StepFunction) -> None:
        self.kind = kind
        self.source = source
        self.target = target
        self.func = func
        self.in_place: StepFunction = getattr(func, "in_place", func)  # a plain pure function works too

    def __repr__(self) -> str:
        return f"Step({self.kind}: {self.source} -> {self.target}, {self.func.__name__})"

    def __call__(self, doc: Document) -> tuple[Document, Changes]:
        return self.func(doc)


# --- aggregate records (eval.schema.json) -------------------------------------------------


def _results(doc: Document) -> Iterator[tuple[Where, Document]]:
    for i, result in items(doc, "evaluation_results"):
        yield at(ROOT, "evaluation_results", i), result


def _judges(result: Document, where: Where) -> Iterator[tuple[Where, Document]]:
    config = child(result, "metric_config")
    scoring = child(config, "llm_scoring") if config else None
    if scoring:
        for j, judge in items(scoring, "judges"):
            yield at(where, "metric_config", "llm_scoring", "judges", j), judge


def _model_infos(doc: Document) -> Iterator[tuple[Where, Document]]:
    """Every model_info object: the evaluated model's, then each LLM judge's."""
    info = child(doc, "model_info")
    if info is not None:
        yield at(ROOT, "model_info"), info
    for where, result in _results(doc):
        for judge_where, judge in _judges(result, where):
            judge_info = child(judge, "model_info")
            if judge_info is not None:
                yield at(judge_where, "model_info"), judge_info


# The generation_args fields 0.2.1 knows (it forbids any other).
GENERATION_ARGS_0_2_1 = frozenset(
    {
        "agentic_eval_config",
        "eval_limits",
        "eval_plan",
        "execution_command",
        "incorrect_attempt_feedback",
        "max_attempts",
        "max_tokens",
        "prompt_template",
        "reasoning",
        "sandbox",
        "temperature",
        "top_k",
        "top_p",
    }
)


@_pure
def eval_0_2_0_to_0_2_1(doc: Document) -> tuple[Document, Changes]:
    """Aggregate 0.2.0 -> 0.2.1.

    - ``schema_version`` becomes ``0.2.1``.
    - ``eval_library`` is required and 0.2.0 has no source for it: written as
      ``{"name": "unknown", "version": "unknown"}`` after ``source_metadata`` (filled).
    - Free-form maps take string values only: every non-string value of
      ``model_info.additional_details`` (the judges' too), ``source_data.additional_details``,
      ``generation_config.additional_details``, ``agentic_eval_config.additional_details``,
      ``available_tools[].parameters``, ``eval_plan.config``, ``llm_scoring.additional_details``
      and ``score_details.details`` becomes its JSON text (``null`` becomes ``"null"``).
      The same holds for the maps 0.2.1 adds where a 0.2.0 record may already carry them:
      ``source_metadata``, ``metric_config``, ``llm_scoring.judges[]`` and
      ``detailed_evaluation_results`` ``additional_details`` (converted).
    - ``source_data.sample_ids`` items become strings (``17`` -> ``"17"``; converted).
    - ``eval_plan.steps`` items become JSON-serialised strings (converted).
    - ``generation_args`` forbids unknown fields: each is moved to
      ``generation_config.additional_details["generation_args.<field>"]`` (moved; a non-string
      value as its JSON text, also converted).
    - ``detailed_evaluation_results`` must be an object (0.2.0 left it untyped): anything
      else is refused.

    Unchanged on purpose: the metric_config ``if`` without ``required: [score_type]`` (the
    same in 0.2.1).
    """
    version = "0.2.1"
    changes = Changes()
    doc["schema_version"] = version
    doc = insert_after(doc, "source_metadata", "eval_library", {"name": UNKNOWN, "version": UNKNOWN})
    changes.filled += ["$.eval_library.name", "$.eval_library.version"]
    source = child(doc, "source_metadata")
    if source is not None:
        string_map(source, "additional_details", at(ROOT, "source_metadata"), changes, version)
    if "detailed_evaluation_results" in doc:
        der = doc["detailed_evaluation_results"]
        if not isinstance(der, dict):
            raise refusal(
                at(ROOT, "detailed_evaluation_results"),
                f"detailed_evaluation_results is not an object; from {version} it must point at a sidecar "
                "as {format, file_path, ...}",
                "this shape has no lossless migration; add a corrected record in the current version instead",
            )
        string_map(der, "additional_details", at(ROOT, "detailed_evaluation_results"), changes, version)
    for where, info in _model_infos(doc):
        string_map(info, "additional_details", where, changes, version)
    for where, result in _results(doc):
        data = child(result, "source_data")
        if data is not None:
            string_map(data, "additional_details", at(where, "source_data"), changes, version)
            string_items(data, "sample_ids", at(where, "source_data"), changes)
        config = child(result, "metric_config")
        if config is not None:
            string_map(config, "additional_details", at(where, "metric_config"), changes, version)
            scoring = child(config, "llm_scoring")
            if scoring is not None:
                string_map(scoring, "additional_details", at(where, "metric_config", "llm_scoring"), changes, version)
            for judge_where, judge in _judges(result, where):
                string_map(judge, "additional_details", judge_where, changes, version)
        details = child(result, "score_details")
        if details is not None:
            string_map(details, "details", at(where, "score_details"), changes, version)
        generation = child(result, "generation_config")
        if generation is not None:
            _generation_0_2_1(generation, at(where, "generation_config"), changes, version)
    return doc, changes


def _generation_0_2_1(generation: Document, where: Where, changes: Changes, version: str) -> None:
    string_map(generation, "additional_details", where, changes, version)
    args = child(generation, "generation_args")
    if args is None:
        return
    args_where = at(where, "generation_args")
    agentic = child(args, "agentic_eval_config")
    if agentic is not None:
        agentic_where = at(args_where, "agentic_eval_config")
        string_map(agentic, "additional_details", agentic_where, changes, version)
        for k, tool in items(agentic, "available_tools"):
            string_map(tool, "parameters", at(agentic_where, "available_tools", k), changes, version)
    plan = child(args, "eval_plan")
    if plan is not None:
        string_map(plan, "config", at(args_where, "eval_plan"), changes, version)
        string_items(plan, "steps", at(args_where, "eval_plan"), changes)
    unknown = [k for k in args if k not in GENERATION_ARGS_0_2_1]
    if unknown:
        details = generation.setdefault("additional_details", {})
        move_into(args, unknown, args_where, details, at(where, "additional_details"), "generation_args", changes)


METRIC_STRINGS_0_2_2 = ("metric_id", "metric_kind", "metric_name", "metric_unit")


@_pure
def eval_0_2_1_to_0_2_2(doc: Document) -> tuple[Document, Changes]:
    """Aggregate 0.2.1 -> 0.2.2.

    - ``schema_version`` becomes ``0.2.2``.
    - 0.2.2 adds the optional ``evaluation_results[].evaluation_result_id`` and
      ``metric_config.metric_id``, ``metric_kind``, ``metric_name``, ``metric_unit`` (strings)
      and ``metric_parameters`` (an object of strings, numbers, booleans or nulls). A 0.2.1
      record may already carry these names with other values: a non-string becomes its JSON
      text, and an object or array inside ``metric_parameters`` its JSON text (converted); a
      ``metric_parameters`` that is not an object is refused.
    """
    version = "0.2.2"
    changes = Changes()
    doc["schema_version"] = version
    for where, result in _results(doc):
        string_value(result, "evaluation_result_id", where, changes)
        config = child(result, "metric_config")
        if config is None:
            continue
        config_where = at(where, "metric_config")
        for key in METRIC_STRINGS_0_2_2:
            string_value(config, key, config_where, changes)
        if "metric_parameters" in config:
            params = config["metric_parameters"]
            if not isinstance(params, dict):
                raise refusal(
                    at(config_where, "metric_parameters"),
                    f"metric_parameters is not an object; from {version} it holds named parameters such as "
                    '{"k": 1}, and nothing else can hold this value',
                    "this shape has no lossless migration; add a corrected record in the current version instead",
                )
            for k, v in params.items():
                if isinstance(v, (dict, list)):
                    params[k] = json_text(v)
                    changes.converted.append(at(config_where, "metric_parameters", k))
    return doc, changes


DEPLOYMENT_TYPES_0_2_3 = ("self_deployed", "externally_managed", UNKNOWN)
MODEL_AVAILABILITY_0_2_3 = ("open_weights", "closed_weights", UNKNOWN)
SIDECAR_PATH_0_2_3 = re.compile(
    r"^data/[^/]+/[^/]+/[^/]+/[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-4[0-9A-Fa-f]{3}-[89ABab][0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}_samples\.jsonl$"
)


@_pure
def eval_0_2_2_to_0_2_3(doc: Document) -> tuple[Document, Changes]:
    """Aggregate 0.2.2 -> 0.2.3.

    - ``schema_version`` becomes ``0.2.3``.
    - ``model_info.additional_details`` (the judges' ``model_info`` too) is required, with
      ``deployment_type`` (self_deployed, externally_managed, unknown) and
      ``model_availability`` (open_weights, closed_weights, unknown). A value already there
      under the same name and within the allowed values is kept; otherwise the field is
      written as ``unknown`` (filled), and a value outside the allowed ones is first moved to
      ``additional_details["eee_original_<field>"]`` (moved).
    - ``detailed_evaluation_results`` requires ``format`` and ``file_path``; ``file_path`` must
      be ``data/<benchmark>/<developer>/<model>/<uuid>_samples.jsonl`` and ``format`` only
      ``jsonl``. A missing ``format`` is derived from such a file_path (``jsonl``; derived). A
      missing or differently shaped ``file_path``, and ``format: "json"``, are refused: the
      sidecar's place and form cannot be derived from the record.
    - Unchanged on purpose: ``metric_config`` gains ``required: [score_type]`` in its ``if``
      and ``min_score``/``max_score`` also accept ``"Infinity"``/``"-Infinity"``/null; both
      only accept more, so nothing moves.
    """
    version = "0.2.3"
    changes = Changes()
    doc["schema_version"] = version
    for where, info in _model_infos(doc):
        details = info.get("additional_details")
        if details is None:
            details = info["additional_details"] = {}
        here = at(where, "additional_details")
        for field, allowed in (
            ("deployment_type", DEPLOYMENT_TYPES_0_2_3),
            ("model_availability", MODEL_AVAILABILITY_0_2_3),
        ):
            if details.get(field) in allowed:
                continue
            if field in details:
                keep = f"eee_original_{field}"
                if keep in details:
                    raise refusal(
                        at(here, keep),
                        f"cannot keep the {field} value {details[field]!r} here: the key {keep!r} is already taken",
                        "rename one of the two in a corrected record",
                    )
                details[keep] = details[field]
                changes.moved[at(here, field)] = at(here, keep)
            details[field] = UNKNOWN
            changes.filled.append(at(here, field))
    der = child(doc, "detailed_evaluation_results")
    if der is not None:
        where = at(ROOT, "detailed_evaluation_results")
        file_path = der.get("file_path")
        if file_path is None:
            raise refusal(
                where,
                f"declares per-sample results without file_path, which {version} requires",
                "the sidecar's path cannot be derived from the record; add a corrected record that names it",
            )
        if not SIDECAR_PATH_0_2_3.match(file_path):
            raise refusal(
                at(where, "file_path"),
                f"file_path {file_path!r} is not of the form data/<benchmark>/<developer>/<model>/<uuid>_samples.jsonl "
                f"that {version} requires",
                "the sidecar's path cannot be derived from the record; add a corrected record that names it",
            )
        if "format" not in der:
            der["format"] = "jsonl"
            changes.derived[at(where, "format")] = "from file_path, which names a JSON Lines sidecar"
        elif der["format"] != "jsonl":
            raise refusal(
                at(where, "format"),
                f"format {der['format']!r}: from {version} per-sample results are JSON Lines only",
                "convert the sidecar to JSON Lines and add a corrected record that points at it",
            )
    return doc, changes


@_pure
def eval_0_2_3_to_0_3_0(doc: Document) -> tuple[Document, Changes]:
    """Aggregate 0.2.3 -> 0.3.0.

    - ``schema_version`` becomes ``0.3.0``. Nothing else differs between the two schemas.
    """
    doc["schema_version"] = "0.3.0"
    return doc, Changes()


# --- instance-level rows (instance_level_eval.schema.json) --------------------------------

# The top-level fields a 0.2.0 row knows; 0.2.1 forbids any other (and renames interactions).
ROW_FIELDS_0_2_0 = frozenset(
    {
        "answer_attribution",
        "error",
        "evaluation",
        "evaluation_id",
        "evaluation_name",
        "input",
        "interaction_type",
        "interactions",
        "metadata",
        "model_id",
        "output",
        "performance",
        "sample_hash",
        "sample_id",
        "schema_version",
        "token_usage",
    }
)


@_pure
def instance_0_2_0_to_0_2_1(row: Document) -> tuple[Document, Changes]:
    """Instance-level row 0.2.0 -> 0.2.1.

    - ``schema_version`` becomes ``instance_level_eval_0.2.1``.
    - ``metadata`` takes string values only: each other value becomes its JSON text (converted).
    - 0.2.1 forbids unknown top-level fields: each is moved to ``metadata["row.<field>"]``
      (moved; a non-string value as its JSON text, also converted). A ``messages`` field in a
      0.2.0 row is such an unknown field.
    - ``interactions`` is renamed ``messages`` (same position, same content).
    - ``messages[].tool_call_id``: a string becomes a one-item list (converted).
    - ``messages[].tool_calls[].arguments`` take string values only (JSON text; converted).
    - ``evaluation.score``: a boolean becomes 1.0 / 0.0 (converted).
    - ``input.reference``, ``output.raw`` and ``output.reasoning_trace``: a string becomes a
      one-item list (converted).
    - ``performance.additional_details`` (new in 0.2.1) takes string values only (converted).
    - ``sample_id``: an integer becomes its decimal text (converted).

    Unchanged on purpose: ``answer_attribution[].source`` texts such as
    ``interactions[1].content`` are data written by the harness, not field references the
    schema checks; they are kept as written.
    """
    version = "0.2.1"
    changes = Changes()
    string_map(row, "metadata", ROOT, changes, version, nullable=True)
    unknown = [k for k in row if k not in ROW_FIELDS_0_2_0]
    if unknown:
        if row.get("metadata") is None:
            row["metadata"] = {}
        move_into(row, unknown, ROOT, row["metadata"], at(ROOT, "metadata"), "row", changes)
    if "interactions" in row:
        row = rename_key(row, "interactions", "messages")
        changes.moved["$.interactions"] = "$.messages"
    for t, message in items(row, "messages"):
        where: Where = at(ROOT, "messages", t)
        wrap_string(message, "tool_call_id", where, changes)
        for c, call in items(message, "tool_calls"):
            string_map(call, "arguments", at(where, "tool_calls", c), changes, version, nullable=True)
    evaluation = child(row, "evaluation")
    if evaluation is not None and evaluation.get("score").__class__ is bool:
        evaluation["score"] = 1.0 if evaluation["score"] else 0.0
        changes.converted.append("$.evaluation.score")
    given = child(row, "input")
    if given is not None:
        wrap_string(given, "reference", at(ROOT, "input"), changes)
    output = child(row, "output")
    if output is not None:
        wrap_string(output, "raw", at(ROOT, "output"), changes)
        wrap_string(output, "reasoning_trace", at(ROOT, "output"), changes)
    performance = child(row, "performance")
    if performance is not None:
        string_map(performance, "additional_details", at(ROOT, "performance"), changes, version, nullable=True)
    if row.get("sample_id").__class__ is int:
        row["sample_id"] = str(row["sample_id"])
        changes.converted.append("$.sample_id")
    row["schema_version"] = "instance_level_eval_0.2.1"
    return row, changes


@_pure
def instance_0_2_1_to_0_2_2(row: Document) -> tuple[Document, Changes]:
    """Instance-level row 0.2.1 -> 0.2.2.

    - ``schema_version`` becomes ``instance_level_eval_0.2.2``. 0.2.2 only adds the optional
      ``evaluation_result_id``, which a 0.2.1 row cannot carry (0.2.1 forbids unknown fields).
    """
    row["schema_version"] = "instance_level_eval_0.2.2"
    return row, Changes()


@_pure
def instance_0_2_2_to_0_2_3(row: Document) -> tuple[Document, Changes]:
    """Instance-level row 0.2.2 -> 0.2.3.

    - ``schema_version`` becomes ``instance_level_eval_0.2.3``. Nothing else differs.
    """
    row["schema_version"] = "instance_level_eval_0.2.3"
    return row, Changes()


@_pure
def instance_0_2_3_to_0_3_0(row: Document) -> tuple[Document, Changes]:
    """Instance-level row 0.2.3 -> 0.3.0.

    - ``schema_version`` becomes ``0.3.0`` (0.3.0 drops the ``instance_level_eval_`` prefix of
      the version's spelling). Nothing else differs.
    """
    row["schema_version"] = "0.3.0"
    return row, Changes()


# Every released step, in order. Append new steps; never edit or remove a released one.
STEPS: tuple[Step, ...] = (
    Step(EVAL, "0.2.0", "0.2.1", eval_0_2_0_to_0_2_1),
    Step(EVAL, "0.2.1", "0.2.2", eval_0_2_1_to_0_2_2),
    Step(EVAL, "0.2.2", "0.2.3", eval_0_2_2_to_0_2_3),
    Step(EVAL, "0.2.3", "0.3.0", eval_0_2_3_to_0_3_0),
    Step(INSTANCE, "0.2.0", "0.2.1", instance_0_2_0_to_0_2_1),
    Step(INSTANCE, "0.2.1", "0.2.2", instance_0_2_1_to_0_2_2),
    Step(INSTANCE, "0.2.2", "0.2.3", instance_0_2_2_to_0_2_3),
    Step(INSTANCE, "0.2.3", "0.3.0", instance_0_2_3_to_0_3_0),
)


def step_from(kind: str, source: str) -> Step | None:
    """The released step that starts at ``source`` for ``kind``, or None."""
    for step in STEPS:
        if step.kind == kind and step.source == source:
            return step
    return None
