"""A result's protocol: the declared settings that make two results comparable.

Two scores can be compared only when they measure the same thing the same way: the same
benchmark and evaluation, on the same items (dataset, revision, split, subset), with the
same metric, against the same reference, asked the same way (prompt, shots, generation
settings), scored by the same judge or grader, through the same major version of the
harness. :data:`FIELDS` declares each of these once, with the reason it is there and where
a record says it; :func:`fields_of` reads them from a record and one of its results, and
:func:`protocol_id` is a stable hash of them (16 hex digits). Leaderboards and comparisons
stay within one ``protocol_id`` unless told otherwise, and :func:`differing` names the
fields that keep two results apart.

A protocol is only as fine as what records declare: a field a record leaves out is
``None``, and two results that both leave it out agree on it. The readable values are
short (a long prompt template is shown by its first words and its sha256); the id hashes the
full values.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, NamedTuple

from eee.store import identity

FORMAT = "eee-protocol/1"  # part of every hash: a change of the fields' reading is a new format
SHOWN_CHARS = 160  # a readable value longer than this is shown by its start and its sha256

# generation settings read from generation_config.additional_details (the harnesses' own
# names); the prompt, the shots and the split/subset are fields of their own
GENERATION_DETAILS = (
    "stop",
    "stop_sequences",
    "until",
    "do_sample",
    "num_completions",
    "num_output_tokens",
    "max_gen_toks",
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "top_k_per_token",
    "presence_penalty",
    "frequency_penalty",
    "adapter_method",
    "method",
    "use_chain_of_thought",
    "agent_scaffold",
)
GENERATION_ARGS_LEFT_OUT = (
    "prompt_template",
    "execution_command",
    "eval_plan",
)  # a path of one machine; fields of their own
SHOTS_DETAILS = ("num_fewshot", "n_shot", "num_shots", "max_train_instances", "use_few_shot")
SPLIT_DETAILS = ("eval_split", "split")
SUBSET_DETAILS = ("hf_subset", "subset", "subject", "language_pair", "level", "category")
REVISION_DETAILS = ("hf_revision", "revision", "dataset_revision", "dataset_version", "dataset_commit")
JUDGE_DETAILS = ("annotator", "judge", "grader", "grader_version", "judge_version")


class Field(NamedTuple):
    name: str
    reason: str
    where: str  # where a record says it, in words (the site prints it)


FIELDS: tuple[Field, ...] = (
    Field(
        "benchmark",
        "results of different benchmarks measure different things",
        "the benchmark folder, as the identity registry's canonical id",
    ),
    Field(
        "evaluation",
        "one benchmark holds several evaluations (subsets, leaderboard columns, task variants), scored apart",
        "evaluation_results[].evaluation_name",
    ),
    Field(
        "dataset",
        "the items scored: another dataset is another test",
        "source_data.hf_repo, else source_data.dataset_name",
    ),
    Field(
        "dataset_revision",
        "a dataset changes between revisions (labels fixed, items added or removed)",
        "source_data.additional_details: " + ", ".join(REVISION_DETAILS),
    ),
    Field(
        "split",
        "test, validation and train splits hold different items",
        "source_data.hf_split, else generation_config.additional_details: " + ", ".join(SPLIT_DETAILS),
    ),
    Field(
        "subset",
        "a subset (subject, language pair, level) is a different set of items",
        "source_data or generation_config additional_details: " + ", ".join(SUBSET_DETAILS),
    ),
    Field(
        "metric",
        "accuracy, F1 and pass@k of one run are different numbers; pass@1 is not pass@10",
        "metric_config.metric_id (canonical), else metric_name, with metric_parameters",
    ),
    Field(
        "reference",
        "a pairwise score (a win rate) is a comparison with its baseline's outputs",
        "source_data.additional_details.baseline",
    ),
    Field(
        "prompt",
        "the wording of the prompt and the plan of solvers move scores by several points",
        "generation_config.generation_args.prompt_template, else its eval_plan",
    ),
    Field(
        "shots",
        "in-context examples change what is measured",
        "generation_config.additional_details: " + ", ".join(SHOTS_DETAILS),
    ),
    Field(
        "generation",
        "sampling temperature, token limits, stop sequences and samples per item change the outputs",
        "generation_config.generation_args (less the prompt and the command line) and "
        "generation_config.additional_details: " + ", ".join(GENERATION_DETAILS),
    ),
    Field(
        "judge",
        "a judged score is its judge's opinion: another judge, judge version or judge prompt is another measurement",
        "metric_config.llm_scoring (judges' model ids, temperatures, weights, prompt, aggregation, annotator), "
        "else metric_config.additional_details: " + ", ".join(JUDGE_DETAILS),
    ),
    Field(
        "harness",
        "harnesses change answer extraction and normalisation between major versions",
        "eval_library.name and the major version of eval_library.version (0.x: the minor)",
    ),
)
NAMES = tuple(f.name for f in FIELDS)
COLUMN_PREFIX = "protocol_"  # the catalogue's readable columns: protocol_<field>


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _s(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return format(value, "g") if isinstance(value, float) else str(value)
    return _canonical(value)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _first(*maps_and_keys: tuple[dict[str, Any], tuple[str, ...]]) -> str | None:
    for mapping, keys in maps_and_keys:
        for key in keys:
            found = _s(mapping.get(key))
            if found is not None:
                return found
    return None


def major_version(version: str | None) -> str | None:
    """The major version of a harness: ``0.4`` of 0.4.9.2 (a 0.x version's minor counts as
    its major, as semantic versioning says), ``2`` of 2.1.0; None when unknown."""
    if not version or version == "unknown":
        return None
    parts = version.lstrip("vV").split(".")
    head = "".join(ch for ch in parts[0] if ch.isdigit())
    if not head:
        return version
    if head == "0" and len(parts) > 1:
        minor = "".join(ch for ch in parts[1] if ch.isdigit())
        return f"0.{minor}" if minor else "0"
    return head


def _judge(config: dict[str, Any]) -> str | None:
    """The judge in words: ``<annotator> (<judge ids>, temperature T, weight W); prompt: ...;
    aggregation: ...`` and any other judge detail, in a fixed order."""
    scoring = _d(config.get("llm_scoring"))
    details = {**_d(config.get("additional_details")), **_d(scoring.get("additional_details"))}
    judges = []
    for judge in scoring.get("judges") or []:
        if not isinstance(judge, dict):
            continue
        info = _d(judge.get("model_info"))
        said = [str(info.get("id") or info.get("name") or "unnamed judge")]
        for key in ("temperature", "weight"):
            if _s(judge.get(key)) is not None:
                said.append(f"{key} {_s(judge[key])}")
        judges.append(", ".join(said))
    head = " ".join(
        x for x in (_s(details.get("annotator")), f"({'; '.join(judges)})" if judges else None) if x is not None
    )
    parts = [head] if head else []
    for key, label in (("input_prompt", "prompt"), ("aggregation_method", "aggregation")):
        if _s(scoring.get(key)) is not None:
            parts.append(f"{label}: {_s(scoring[key])}")
    parts += [f"{key}: {_s(details[key])}" for key in JUDGE_DETAILS if key != "annotator" and _s(details.get(key))]
    return "; ".join(parts) or None


def _metric(config: dict[str, Any], names: identity.Registry) -> str | None:
    metric = config.get("metric_id")
    metric = names.canonical(identity.METRIC, metric) if isinstance(metric, str) and metric else None
    metric = metric or _s(config.get("metric_name")) or _s(config.get("evaluation_description"))
    params = config.get("metric_parameters")
    if metric and isinstance(params, dict) and params:
        return f"{metric} {_canonical(params)}"
    return metric


def _generation(generation: dict[str, Any]) -> str | None:
    args = {k: v for k, v in _d(generation.get("generation_args")).items() if k not in GENERATION_ARGS_LEFT_OUT}
    details = _d(generation.get("additional_details"))
    args.update({f"details.{k}": details[k] for k in GENERATION_DETAILS if details.get(k) is not None})
    args = {k: v for k, v in args.items() if v is not None}
    return _canonical(args) if args else None


def _prompt(generation: dict[str, Any]) -> str | None:
    args = _d(generation.get("generation_args"))
    template = _s(args.get("prompt_template"))
    if template is not None:
        return template
    plan = args.get("eval_plan")
    return _canonical(plan) if plan else None


def fields_of(
    doc: dict[str, Any], result: dict[str, Any], benchmark: str, names: identity.Registry | None = None
) -> dict[str, str | None]:
    """The protocol fields of ``result`` (one of ``doc``'s evaluation_results) of a record in
    the benchmark folder ``benchmark``, in :data:`FIELDS` order (full values: shorten them
    for display with :func:`shown`). ``names``: the identity registry (canonical ids)."""
    names = names if names is not None else identity.EMPTY
    source = _d(result.get("source_data"))
    source_details = _d(source.get("additional_details"))
    config = _d(result.get("metric_config"))
    generation = _d(result.get("generation_config"))
    generation_details = _d(generation.get("additional_details"))
    library = _d(doc.get("eval_library"))
    harness = _s(library.get("name"))
    major = major_version(_s(library.get("version")))
    readers: dict[str, Callable[[], str | None]] = {
        "benchmark": lambda: names.canonical(identity.BENCHMARK, benchmark) or benchmark,
        "evaluation": lambda: _s(result.get("evaluation_name")),
        "dataset": lambda: _s(source.get("hf_repo")) or _s(source.get("dataset_name")),
        "dataset_revision": lambda: _first((source_details, REVISION_DETAILS)),
        "split": lambda: (
            _s(source.get("hf_split")) or _first((generation_details, SPLIT_DETAILS), (source_details, SPLIT_DETAILS))
        ),
        "subset": lambda: _first((source_details, SUBSET_DETAILS), (generation_details, SUBSET_DETAILS)),
        "metric": lambda: _metric(config, names),
        "reference": lambda: _s(source_details.get("baseline")),
        "prompt": lambda: _prompt(generation),
        "shots": lambda: _first((generation_details, SHOTS_DETAILS)),
        "generation": lambda: _generation(generation),
        "judge": lambda: _judge(config),
        "harness": lambda: None if harness in (None, "unknown") else (f"{harness} {major}" if major else harness),
    }
    return {name: readers[name]() for name in NAMES}


def protocol_id(fields: dict[str, str | None]) -> str:
    """The stable id of a protocol: 16 hex digits of the sha256 of its fields (in
    :data:`FIELDS` order, full values) and :data:`FORMAT`."""
    payload = _canonical([FORMAT, [[name, fields.get(name)] for name in NAMES]])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def shown(value: str | None, limit: int = SHOWN_CHARS) -> str | None:
    """A field's value as tables show it: at most ``limit`` characters, a longer one by its
    start and its sha256 (the id hashes the full value)."""
    if value is None or len(value) <= limit:
        return value
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]
    suffix = f"… (sha256 {digest}, {len(value):,} chars)"
    return value[: max(0, limit - len(suffix))].rstrip() + suffix


def readable(fields: dict[str, str | None]) -> dict[str, str | None]:
    """The fields as the catalogue's ``protocol_<field>`` columns hold them (:func:`shown`)."""
    return {f"{COLUMN_PREFIX}{name}": shown(fields.get(name)) for name in NAMES}


def differing(a: dict[str, str | None], b: dict[str, str | None]) -> list[str]:
    """The names of the fields in which two protocols differ, in :data:`FIELDS` order."""
    return [name for name in NAMES if a.get(name) != b.get(name)]


def from_columns(row: dict[str, Any]) -> dict[str, str | None]:
    """The readable fields of a catalogue row (its ``protocol_<field>`` columns)."""
    return {name: row.get(f"{COLUMN_PREFIX}{name}") for name in NAMES}
