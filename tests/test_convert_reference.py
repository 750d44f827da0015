"""Conformance of the converters with the reference converter, on real harness logs.

Every log in ``../shared/reference/harness-logs`` is converted and compared, field by field,
with what the public reference converter produced from the same log
(``../shared/reference/converter-outputs``): records and sidecar rows are flattened to JSON
paths (results keyed by ``evaluation_result_id``, rows by sample and result), and every
path of either side counts once: *equal*, *explained* (a deliberate improvement listed in
:data:`IMPROVEMENTS`, with its reason) or *different*. Uuids, file paths, checksums of the
sidecar bytes and retrieval timestamps are not compared. Skipped when the reference
material is absent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import reference
from eee.convert import helm, inspect, lm_eval
from eee.convert.common import Batch, Settings, plan

# Paths never compared: they hold uuids, repository paths, the bytes' checksum (the rows
# are compared one by one instead) or the time the reference converter ran.
IGNORED = (
    r"^record\.retrieved_timestamp$",
    r"^record\.detailed_evaluation_results\.(file_path|checksum)$",
)

# Deliberate differences: (converter, regex over the flattened path, reason).
IMPROVEMENTS: list[tuple[str, str, str]] = [
    # --- all converters -------------------------------------------------------------------
    (
        "*",
        r"^record\.model_info\.additional_details\.(deployment_type|model_availability)$",
        "deployment facts filled where the log states them (a local engine is self_deployed, an API "
        "externally_managed; Anthropic/OpenAI API models closed_weights) instead of always 'unknown'",
    ),
    # --- HELM -----------------------------------------------------------------------------
    (
        "helm",
        r"^record\.evaluation_results\[[^\]]+\]\.generation_config\.generation_args\.top_k$",
        "HELM's top_k_per_token is the number of log-probabilities returned per token, not top-k "
        "sampling; it is kept as additional_details.top_k_per_token instead of posing as top_k",
    ),
    (
        "helm",
        r"^record\.evaluation_results\[[^\]]+\]\.generation_config\.additional_details\.(top_k_per_token|adapter_method)$",
        "the adapter method (joint vs separate multiple choice) and top_k_per_token are recorded",
    ),
    (
        "helm",
        r"^record\.evaluation_results\[[^\]]+\]\.score_details\.details\.perturbation_computed_on$",
        "a perturbation's computed_on (worst, perturbed, ...) is recorded: HELM reports the same "
        "perturbation name for several aggregates that differ only there",
    ),
    (
        "helm",
        r"^rows\[[^\]]+\]\.input\.(raw|formatted)$",
        "input.raw is the instance as the dataset gives it and input.formatted the prompt the model "
        "saw (instructions and few-shot examples), as the schema defines them; the reference put the "
        "whole prompt in raw and left formatted null",
    ),
    (
        "helm",
        r"^rows\[[^\]]+\]\.performance\.latency_ms$",
        "the request's wall time is its latency too (HELM times each request as a whole)",
    ),
    # --- lm-eval --------------------------------------------------------------------------
    (
        "lm_eval",
        r"^(record|rows\[[^\]]+\])\.evaluation_id$",
        "the reference's evaluation_id ends in the time of conversion; ours is "
        "<task>/<developer>_<model>/<run start from the log>, so converting the same log twice gives "
        "the same id",
    ),
    # --- Inspect --------------------------------------------------------------------------
    (
        "inspect",
        r"^record\.eval_library\.(name|version)$",
        "eval_library is name 'inspect_ai' (the schema's own example) with the plain package version, "
        "not 'inspect' with 'inspect_ai:<version>'",
    ),
    (
        "inspect",
        r"^(record|rows\[[^\]]+\])\.evaluation_id$|^(record\.model_info\.(id|developer|name)|rows\[[^\]]+\]\.model_id)$",
        "model paths normalised to developer/model: 'ollama/qwen2.5:0.5b' is Qwen's model served by "
        "Ollama (id Qwen/qwen2.5-0.5b), and 'anthropic/claude-opus-4-6' no longer becomes "
        "'anthropic/anthropic/claude-opus-4-6' (the evaluation_id follows the id)",
    ),
    (
        "inspect",
        r"^record\.model_info\.inference_platform$",
        "'openai/azure/gpt-4o-mini' ran on Azure: the service in the model path is the inference platform",
    ),
    (
        "inspect",
        r"^record\.evaluation_results\[[^\]]+\]\.generation_config\.generation_args\.sandbox\.(type|config)$|"
        r"^record\.evaluation_results\[[^\]]+\]\.generation_config\.generation_args\.sandbox$",
        "the sandbox the task declared (eval.sandbox) is recorded; the reference looked only at task_args",
    ),
    (
        "inspect",
        r"^record\.evaluation_results\[[^\]]+\]\.generation_config\.(generation_args\.(temperature|top_p|top_k|max_tokens)"
        r"|additional_details\.generation_settings_read_from)$",
        "generation settings the model's generate config leaves out are read where the log keeps them: the "
        "plan's config, the solvers' arguments, else the model calls of the samples when all of them agree "
        "(a log whose every call used max_tokens 4096 says so), and where each was read is recorded",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.output\.raw\[0\]$",
        "output.raw is the model's full response, as the schema defines it; the scorer's extracted "
        "answer goes to answer_attribution",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.answer_attribution(\[0\]\..+)?$",
        "answer_attribution records the scorer's extracted answer (the reference left it empty)",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.input\.formatted$",
        "input.formatted is the prompt the model saw (the user message after the solver's template)",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.performance\.latency_ms$",
        "latency_ms is the sample's total time; the reference wrote total minus working time (the "
        "time spent waiting), which is not a latency",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.metadata\.[a-z_]+$",
        "the sample's own metadata (source, tags, challenge settings) is kept, and an unscored sample "
        "says so (scored: false)",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.evaluation\.(score|is_correct)$",
        "the score is the scorer's own: a sample that errored before scoring is 0 / not correct; the "
        "reference compared the (empty) answer with the (empty) target and called it correct",
    ),
    (
        "inspect",
        r"^rows\[[^\]]+\]\.evaluation_result_id$",
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


_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def compare(
    converter: str, ours: dict[str, Any], theirs: dict[str, Any], rows: list[Any], ref_rows: list[Any], tally: dict
) -> None:
    """Count every compared path of one record (and its rows) into ``tally``."""
    flat_ours = flatten(_keyed(ours), "record", {})
    flat_ref = flatten(_keyed(theirs), "record", {})
    for key, mine, ref in _pair_rows(rows, ref_rows):
        flatten(mine, f"rows[{key}]", flat_ours) if mine is not None else None
        flatten(ref, f"rows[{key}]", flat_ref) if ref is not None else None
    for path in sorted(set(flat_ours) | set(flat_ref)):
        if any(re.search(p, path) for p in IGNORED):
            continue
        a, b = flat_ours.get(path, _MISSING), flat_ref.get(path, _MISSING)
        if _same(a, b):
            tally["equal"] += 1
            continue
        reason = next(
            (i for i, (c, p, _) in enumerate(IMPROVEMENTS) if c in ("*", converter) and re.search(p, path)), None
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


def _tally_for(converter: str) -> dict[str, Any]:
    tally: dict[str, Any] = {"equal": 0, "explained": 0, "different": [], "used": set(), "records": 0}
    for name, log, expected in _cases():
        if name != converter:
            continue
        batch: Batch = CONVERTERS[name].convert(log, _settings())
        plan(batch)  # gives each record its detailed_evaluation_results, as placing it would
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
    stale = [IMPROVEMENTS[i][1] for i in range(len(IMPROVEMENTS)) if i not in used]
    assert not stale, f"entries of IMPROVEMENTS that explain no difference: {stale}"


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
