"""Conformance of the converters with the reference converter, on real harness logs.

Every log in ``../shared/reference/harness-logs`` is converted and compared, value by value,
with what the public reference converter produced from the same log
(``../shared/reference/converter-outputs``): records and sidecar rows are flattened to JSON
paths (results keyed by ``evaluation_result_id``, rows by sample and result), and every
path of either side counts once: *equal*, *explained* or *different*.

A difference is explained only by an entry of :data:`KNOWN` that names the path *and*
checks the two values: the exact difference a deliberate change makes (the reference's
``inspect_ai:0.3.75`` against our ``0.3.75``, a uuid in a file path, the conversion time
against the log's own time, a score of 0 where our row says the sample was never scored).
Any other value at the same path is *different*, so a converter that flips every sample's
score fails here (:func:`test_a_converter_that_flips_every_score_fails`). Skipped when the
reference material is absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import reference
from eee.convert import helm, inspect, lm_eval
from eee.convert.common import SERVICES, Batch, Settings, plan

_MISSING: Any = object()
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


@dataclass
class Diff:
    """One path whose values differ, with both flattened documents for context."""

    path: str
    ours: Any
    theirs: Any
    flat_ours: dict[str, Any]
    flat_ref: dict[str, Any]

    def mine(self, path: str) -> Any:
        return self.flat_ours.get(path, _MISSING)

    def ref(self, path: str) -> Any:
        return self.flat_ref.get(path, _MISSING)

    def row(self) -> str:
        """``rows[<key>]`` of a row path."""
        return self.path[: self.path.index("]") + 1]

    def sibling(self, old: str, new: str) -> str:
        """This path with its last ``old`` replaced by ``new``."""
        head, _, tail = self.path.rpartition(old)
        return head + new + tail


def _absent(value: Any) -> bool:
    return value is _MISSING or value is None or value == [] or value == {}


def _text(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _unscored(d: Diff) -> bool:
    return d.mine(f"{d.row()}.metadata.scored") == "false"


def _model_path(model_id: str) -> str:
    return model_id.replace("/", "_")


def _eval_id(d: Diff) -> bool:
    """Ours is ``<benchmark>/<developer>_<model>/<the log's start>``; the reference's differs
    in the model part (its own spelling) and the time (when it ran), never in the benchmark."""
    if not (_text(d.ours) and _text(d.theirs)):
        return False
    bench, _, rest = d.ours.partition("/")
    model_part, _, stamp = rest.rpartition("/")
    ours_id = d.mine("record.model_info.id")
    return (
        d.theirs.split("/", 1)[0] == bench
        and model_part == _model_path(str(ours_id))
        and stamp == str(d.mine("record.evaluation_timestamp"))
    )


def _same_model_name(d: Diff) -> bool:
    """A normalised model path: the model's own name is the reference's, its developer ours."""
    if not (_text(d.ours) and _text(d.theirs)):
        return False
    if d.path.endswith(".developer"):
        return d.ours == str(d.mine("record.model_info.id")).split("/", 1)[0]
    return d.ours.split("/")[-1] == d.theirs.split("/")[-1].replace(":", "-")


Check = Callable[[Diff], bool]

# Values never alike by construction: uuids in paths, the bytes' checksum (the rows are
# compared one by one instead) and the time the reference converter ran; each still has
# the exact form it must have.
IGNORED: list[tuple[str, Check]] = [
    (
        r"^record\.retrieved_timestamp$",
        # ours is the log's own finish time, earlier than the reference's conversion run
        lambda d: float(d.ours) < float(d.theirs),
    ),
    (
        r"^record\.detailed_evaluation_results\.file_path$",
        lambda d: (
            re.fullmatch(rf"data/[^/]+/{re.escape(str(d.mine('record.model_info.id')))}/{_UUID}_samples\.jsonl", d.ours)
            is not None
            and d.ours.split("/")[1] == d.theirs.split("/")[1]
        ),
    ),
    (
        r"^record\.detailed_evaluation_results\.checksum$",
        lambda d: all(isinstance(v, str) and re.fullmatch(r"[0-9a-f]{64}", v) for v in (d.ours, d.theirs)),
    ),
]

# Deliberate differences: (converter, regex over the flattened path, the exact difference, reason).
KNOWN: list[tuple[str, str, Check, str]] = [
    # --- all converters -------------------------------------------------------------------
    (
        "*",
        r"^record\.model_info\.additional_details\.(deployment_type|model_availability)$",
        lambda d: d.theirs == "unknown" and d.ours in ("self_deployed", "externally_managed", "closed_weights"),
        "deployment facts filled where the log states them (a local engine is self_deployed, an API "
        "externally_managed; Anthropic/OpenAI API models closed_weights) instead of always 'unknown'",
    ),
    # --- HELM -----------------------------------------------------------------------------
    (
        "helm",
        r"^record\.evaluation_results\[[^\]]+\]\.generation_config\.generation_args\.top_k$",
        lambda d: (
            d.ours is _MISSING
            and d.mine(d.sibling("generation_args.top_k", "additional_details.top_k_per_token")) == str(int(d.theirs))
        ),
        "HELM's top_k_per_token is the number of log-probabilities returned per token, not top-k "
        "sampling; it is kept as additional_details.top_k_per_token instead of posing as top_k",
    ),
    (
        "helm",
        r"^record\.evaluation_results\[[^\]]+\]\.generation_config\.additional_details\.(top_k_per_token|adapter_method)$",
        lambda d: d.theirs is _MISSING and _text(d.ours),
        "the adapter method (joint vs separate multiple choice) and top_k_per_token are recorded",
    ),
    (
        "helm",
        r"^record\.evaluation_results\[[^\]]+\]\.score_details\.details\.perturbation_computed_on$",
        lambda d: d.theirs is _MISSING and d.ours in ("worst", "perturbed", "original", "all"),
        "a perturbation's computed_on (worst, perturbed, ...) is recorded: HELM reports the same "
        "perturbation name for several aggregates that differ only there",
    ),
    (
        "helm",
        r"^rows\[[^\]]+\]\.input\.(raw|formatted)$",
        lambda d: (
            d.theirs is None and d.ours == d.ref(d.sibling("formatted", "raw"))
            if d.path.endswith(".formatted")
            else _text(d.ours) and d.ours in d.theirs
        ),
        "input.raw is the instance as the dataset gives it and input.formatted the prompt the model "
        "saw (instructions and few-shot examples), as the schema defines them; the reference put the "
        "whole prompt in raw and left formatted null",
    ),
    (
        "helm",
        r"^rows\[[^\]]+\]\.performance\.latency_ms$",
        lambda d: d.theirs is None and isinstance(d.ours, float) and d.ours > 0,
        "the request's wall time is its latency too (HELM times each request as a whole)",
    ),
    # --- lm-eval --------------------------------------------------------------------------
    (
        "lm_eval",
        r"^(record|rows\[[^\]]+\])\.evaluation_id$",
        _eval_id,
        "the reference's evaluation_id ends in the time of conversion; ours is "
        "<task>/<developer>_<model>/<run start from the log>, so converting the same log twice gives "
        "the same id",
    ),
    # --- Inspect --------------------------------------------------------------------------
    (
        "inspect",
        r"^record\.eval_library\.(name|version)$",
        lambda d: (
            (d.ours, d.theirs) == ("inspect_ai", "inspect")
            if d.path.endswith(".name")
            else d.theirs == f"inspect_ai:{d.ours}"
        ),
        "eval_library is name 'inspect_ai' (the schema's own example) with the plain package version, "
        "not 'inspect' with 'inspect_ai:<version>'",
    ),
    (
        "inspect",
        r"^(record|rows\[[^\]]+\])\.evaluation_id$",
        _eval_id,
        "the evaluation_id follows the normalised model id (below)",
    ),
    (
        "inspect",
        r"^(record\.model_info\.(id|developer|name)|rows\[[^\]]+\]\.model_id)$",
        _same_model_name,
        "model paths normalised to developer/model: 'ollama/qwen2.5:0.5b' is Qwen's model served by "
        "Ollama (id Qwen/qwen2.5-0.5b), and 'anthropic/claude-opus-4-6' no longer becomes "
        "'anthropic/anthropic/claude-opus-4-6'",
    ),
    (
        "inspect",
        r"^record\.model_info\.inference_platform$",
        lambda d: d.theirs == "openai" and d.ours in SERVICES,
        "'openai/azure/gpt-4o-mini' ran on Azure: the service in the model path is the inference platform",
    ),
    (
        "inspect",
        r"^record\.evaluation_results\[[^\]]+\]\.generation_config\.generation_args\.sandbox(\.(type|config))?$",
        lambda d: _absent(d.theirs) and (d.ours is _MISSING or _text(d.ours)),
        "the sandbox the task declared (eval.sandbox) is recorded; the reference looked only at task_args",
    ),
    (
        "inspect",
        r"^record\.evaluation_results\[[^\]]+\]\.generation_config\.(generation_args\.(temperature|top_p|top_k|max_tokens)"
        r"|additional_details\.generation_settings_read_from)$",
        lambda d: (
            d.theirs is _MISSING
            and (
                d.path.endswith("generation_settings_read_from")
                or d.path.rsplit(".", 1)[1]
                in json.loads(
                    d.mine(
                        d.path.rsplit(".generation_args.", 1)[0] + ".additional_details.generation_settings_read_from"
                    )
                )
            )
        ),
        "generation settings the model's generate config leaves out are read where the log keeps them: the "
        "plan's config, the solvers' arguments, else the model calls of the samples when all of them agree "
        "(a log whose every call used max_tokens 4096 says so), and where each was read is recorded",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.output\.raw\[0\]$",
        lambda d: _text(d.ours) and d.theirs == d.mine(f"{d.row()}.answer_attribution[0].extracted_value"),
        "output.raw is the model's full response, as the schema defines it; the scorer's extracted "
        "answer (the reference's output.raw) goes to answer_attribution",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.answer_attribution(\[0\]\..+)?$",
        lambda d: (
            (d.ours, d.theirs) == (_MISSING, [])
            if d.path.endswith("answer_attribution")
            else d.theirs is _MISSING
            and (
                d.ours == d.ref(f"{d.row()}.output.raw[0]")
                if d.path.endswith("extracted_value")
                else d.ours in (0, True, "output.raw") or _text(d.ours)
            )
        ),
        "answer_attribution records the scorer's extracted answer (the reference left it empty)",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.input\.formatted$",
        lambda d: d.theirs is None and _text(d.ours) and str(d.mine(f"{d.row()}.input.raw")) in d.ours,
        "input.formatted is the prompt the model saw (the user message after the solver's template)",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.performance\.latency_ms$",
        lambda d: isinstance(d.ours, float) and isinstance(d.theirs, float) and d.ours > d.theirs >= 0,
        "latency_ms is the sample's total time; the reference wrote total minus working time (the "
        "time spent waiting), which is not a latency",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.metadata\.[a-z_]+$",
        lambda d: d.theirs is _MISSING and _text(d.ours),
        "the sample's own metadata (source, tags, challenge settings) is kept, and an unscored sample "
        "says so (scored: false)",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.evaluation\.(score|is_correct)$",
        lambda d: _unscored(d) and (d.ours, d.theirs) in ((0.0, 1.0), (False, True)),
        "the score is the scorer's own: a sample that errored before scoring is 0 / not correct; the "
        "reference compared the (empty) answer with the (empty) target and called it correct",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.evaluation_result_id$",
        lambda d: _unscored(d) and d.theirs is None and _text(d.ours),
        "every row names the result it belongs to (the reference wrote null for an unscored sample, "
        "which joins to nothing)",
    ),
]

MIN_SHARE = 0.95


def _settings() -> Settings:
    # the reference outputs were produced with these options
    return Settings(source_organization="reference", evaluator_relationship="third_party", include_samples=True)


def _keyed(doc: dict[str, Any]) -> dict[str, Any]:
    """A record with its results keyed by evaluation_result_id (order does not matter)."""
    out = dict(doc)
    out["evaluation_results"] = {str(r.get("evaluation_result_id")): r for r in doc.get("evaluation_results", [])}
    return out


def flatten(node: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    if isinstance(node, dict) and node:
        for key, value in node.items():
            flatten(value, f"{prefix}[{key}]" if prefix == "record.evaluation_results" else f"{prefix}.{key}", out)
    elif isinstance(node, list) and node:
        for i, value in enumerate(node):
            flatten(value, f"{prefix}[{i}]", out)
    else:
        out[prefix] = node
    return out


def _rows_keyed(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Rows keyed by sample and result; rows without a result id by sample and position."""
    out: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(rows):
        key = f"{row.get('sample_id')}|{row.get('evaluation_result_id') or f'#{i}'}"
        out[key] = row
    return out


def _pair_rows(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    mine, ref = _rows_keyed(ours), _rows_keyed(theirs)
    pairs = [(key, mine.pop(key), ref.pop(key)) for key in list(ref) if key in mine]
    # what is left (a null result id on one side) pairs by sample id, in order
    for key, row in list(ref.items()):
        match = next((k for k, r in mine.items() if r.get("sample_id") == row.get("sample_id")), None)
        if match is not None:
            pairs.append((key, mine.pop(match), ref.pop(key)))
    pairs += [(key, None, row) for key, row in ref.items()] + [(key, row, None) for key, row in mine.items()]
    return pairs


def _same(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _holds(check: Check, diff: Diff) -> bool:
    try:
        return bool(check(diff))
    except (TypeError, ValueError, KeyError, AttributeError):  # a value of another shape: not this difference
        return False


def new_tally() -> dict[str, Any]:
    return {"equal": 0, "explained": 0, "different": [], "used": set(), "records": 0}


def compare(
    converter: str, ours: dict[str, Any], theirs: dict[str, Any], rows: list[Any], ref_rows: list[Any], tally: dict
) -> None:
    """Count every compared path of one record (and its rows) into ``tally``: equal, explained
    (a :data:`KNOWN` entry names the path and its check holds for the two values), or different."""
    flat_ours = flatten(_keyed(ours), "record", {})
    flat_ref = flatten(_keyed(theirs), "record", {})
    for key, mine, ref in _pair_rows(rows, ref_rows):
        flatten(mine, f"rows[{key}]", flat_ours) if mine is not None else None
        flatten(ref, f"rows[{key}]", flat_ref) if ref is not None else None
    for path in sorted(set(flat_ours) | set(flat_ref)):
        a, b = flat_ours.get(path, _MISSING), flat_ref.get(path, _MISSING)
        if _same(a, b):
            tally["equal"] += 1
            continue
        diff = Diff(path, a, b, flat_ours, flat_ref)
        ignored = next((check for pattern, check in IGNORED if re.search(pattern, path)), None)
        if ignored is not None and _holds(ignored, diff):
            continue
        reason = next(
            (
                i
                for i, (c, pattern, check, _) in enumerate(KNOWN)
                if c in ("*", converter) and re.search(pattern, path) and _holds(check, diff)
            ),
            None,
        )
        if reason is not None:
            tally["explained"] += 1
            tally["used"].add(reason)
        else:
            tally["different"].append((path, None if a is _MISSING else a, None if b is _MISSING else b))


def _ref_outputs(folder: Path) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The reference records of one log, by benchmark folder, with their sidecar rows."""
    out = {}
    for path in sorted(folder.glob("data/*/*/*/*.json")):
        sidecar = path.with_name(path.stem + "_samples.jsonl")
        rows = [json.loads(line) for line in sidecar.read_text().splitlines()] if sidecar.exists() else []
        out[path.relative_to(folder / "data").parts[0]] = (json.loads(path.read_text()), rows)
    return out


def _cases() -> list[tuple[str, Path, Path]]:
    logs, outputs = reference("harness-logs"), reference("converter-outputs")
    cases = []
    for run in sorted((logs / "helm").iterdir()):
        cases.append(("helm", run, outputs / "helm" / run.name))
    for results in sorted((logs / "lm_eval").glob("results_*.json")):
        cases.append(("lm_eval", results, outputs / "lm_eval" / results.stem))
    for log in sorted((logs / "inspect").iterdir()):
        cases.append(("inspect", log, outputs / "inspect" / log.stem))
    return cases


CONVERTERS = {"helm": helm, "lm_eval": lm_eval, "inspect": inspect}


def _tally_for(converter: str, mutate: Callable[[Batch], None] | None = None) -> dict[str, Any]:
    tally = new_tally()
    for name, log, expected in _cases():
        if name != converter:
            continue
        batch: Batch = CONVERTERS[name].convert(log, _settings())
        plan(batch)  # gives each record its detailed_evaluation_results, as placing it would
        if mutate is not None:
            mutate(batch)
        refs = _ref_outputs(expected)
        assert sorted(o.benchmark for o in batch.outputs) == sorted(refs), f"{log}: other records than the reference"
        for output in batch.outputs:
            ref_doc, ref_rows = refs[output.benchmark]
            compare(name, output.record, ref_doc, output.rows or [], ref_rows, tally)
            tally["records"] += 1
    return tally


@pytest.mark.parametrize("converter", ["helm", "lm_eval", "inspect"])
def test_matches_the_reference_converter(converter: str) -> None:
    tally = _tally_for(converter)
    different = tally["different"]
    total = tally["equal"] + tally["explained"] + len(different)
    share = (tally["equal"] + tally["explained"]) / total
    print(
        f"\n{converter}: {tally['records']} records, {total} fields compared: "
        f"{tally['equal'] / total:.1%} equal, {tally['explained'] / total:.1%} explained, "
        f"{len(different) / total:.1%} different"
    )
    for path, ours, theirs in different[:40]:
        print(f"  {path}: ours {json.dumps(ours)[:120]} / reference {json.dumps(theirs)[:120]}")
    assert share >= MIN_SHARE, f"{converter}: only {share:.1%} of fields equal or explained"
    assert not different, f"{converter}: {len(different)} unexplained differences (see output)"


def test_every_improvement_explains_something() -> None:
    used: set[int] = set()
    for converter in CONVERTERS:
        used |= _tally_for(converter)["used"]
    stale = [KNOWN[i][1] for i in range(len(KNOWN)) if i not in used]
    assert not stale, f"entries of KNOWN that explain no difference: {stale}"


def _flip_every_score(batch: Batch) -> None:
    """What a broken converter would write: every sample's score and verdict inverted."""
    for output in batch.outputs:
        for row in output.rows or []:
            row["evaluation"]["score"] = 1.0 - row["evaluation"]["score"]
            row["evaluation"]["is_correct"] = not row["evaluation"]["is_correct"]


@pytest.mark.parametrize("converter", ["helm", "lm_eval", "inspect"])
def test_a_converter_that_flips_every_score_fails(converter: str) -> None:
    """The comparison compares values: flipped scores are differences, whatever path excuses exist."""
    honest = _tally_for(converter)
    flipped = _tally_for(converter, _flip_every_score)
    rows = sum(1 for path in _flat_paths(converter) if path.endswith(".evaluation.score"))
    scores = [p for p, _, _ in flipped["different"] if p.endswith(".evaluation.score")]
    verdicts = [p for p, _, _ in flipped["different"] if p.endswith(".evaluation.is_correct")]
    assert not honest["different"] and rows > 0
    # every flipped row differs, except an unscored Inspect sample whose flip lands on the reference's value
    assert len(scores) >= rows - 1 and len(verdicts) >= rows - 1, (len(scores), rows)


def _flat_paths(converter: str) -> list[str]:
    """The flattened paths of our rows (one ``.evaluation.score`` per row)."""
    paths: list[str] = []
    for name, log, _ in _cases():
        if name == converter:
            batch = CONVERTERS[name].convert(log, _settings())
            for output in batch.outputs:
                for i, row in enumerate(output.rows or []):
                    paths += flatten(row, f"rows[{i}]", {})
    return paths


def test_lm_eval_task_without_samples_is_reported_like_the_reference() -> None:
    """The reference lists math_rephrased_full among its sample failures; so do we (as a warning)."""
    logs = reference("harness-logs", "lm_eval")
    report = json.loads(
        next(
            reference("converter-outputs", "lm_eval").glob("*/adapter_reports/lm_eval_samples_failures.json")
        ).read_text()
    )
    failed = {r["source_record"]["task_name"] for r in report["failed_records"]}
    batch = lm_eval.convert(logs, _settings())
    warned = {w.pointer.rsplit(".", 1)[-1] for w in batch.warnings}
    assert warned == failed
