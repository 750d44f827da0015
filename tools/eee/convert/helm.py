"""HELM run directories into records (and per-instance sidecar rows).

A run directory holds ``run_spec.json`` (model, adapter, scenario), ``scenario.json``
(dataset name), ``scenario_state.json`` (every request and its completions),
``per_instance_stats.json`` (per-instance metric values) and, optionally, ``stats.json``
(the run's aggregates; computed from the per-instance stats when absent).

One result per core metric, split and perturbation: the ``evaluation_result_id`` is
``metric:split[:perturbation]`` and the split and perturbation are repeated in
``score_details.details``, so no two results look alike. A perturbation computed on
anything but the ``worst`` case (HELM's robustness/fairness summaries) also carries its
``computed_on`` in the id (``exact_match:test:typos/perturbed``), which keeps HELM's
per-perturbation and worst-case stats apart instead of dropping one of them.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from eee.convert.common import (
    SCHEMA_VERSION,
    Batch,
    Converted,
    InputError,
    Settings,
    attribution,
    evaluation_id,
    get,
    model_info,
    now_epoch,
    number,
    opt,
    parse_json,
    read_json,
    read_log_bytes,
    record,
    sha256_text,
)
from eee.convert.metrics import metric_config, split_parameter

HARNESS = "helm"
REQUIRED = ("run_spec.json", "scenario.json", "scenario_state.json", "per_instance_stats.json")
STATS = "stats.json"

# Stats that are benchmark scores; the rest of HELM's stats are bookkeeping (token counts,
# runtimes, finish reasons), which go into the sidecar rows' token usage and latency.
CORE_PREFIXES = (
    "exact_match",
    "quasi_exact_match",
    "prefix_exact_match",
    "quasi_prefix_exact_match",
    "classification_micro_f1",
    "classification_macro_f1",
    "f1_score",
    "rouge_l",
    "bleu_",
    "ifeval_strict_accuracy",
    "chain_of_thought_correctness",
    "math_equiv",
    "math_equiv_chain_of_thought",
)

# Per-instance scores that are a correctness signal: a positive score means correct.
# Graded metrics (rouge, bleu, f1) never claim correctness.
BINARY = frozenset(
    {
        "exact_match",
        "quasi_exact_match",
        "prefix_exact_match",
        "quasi_prefix_exact_match",
        "ifeval_strict_accuracy",
        "chain_of_thought_correctness",
        "math_equiv",
        "math_equiv_chain_of_thought",
    }
)

_RUN_HINT = "a HELM run directory holds " + ", ".join(REQUIRED) + " (and optionally stats.json)"


def is_core(name: str) -> bool:
    return name.startswith(CORE_PREFIXES)


def find_runs(path: Path) -> list[Path]:
    """The run directories at ``path``: itself, or every folder below it with a run_spec.json."""
    if not path.is_dir() and os.path.lexists(path):
        path = path.parent  # a file of the run (or something that is not one: reading it says which)
    if not path.exists():
        raise InputError(path, "$", "no such file or directory", "check the path given to --log-path")
    if (path / "run_spec.json").exists():
        return [path]
    runs = sorted({p.parent for p in path.rglob("run_spec.json")})
    if not runs:
        raise InputError(path, "$", "no HELM run directory here (no run_spec.json found)", _RUN_HINT)
    return runs


def convert(path: Path, settings: Settings) -> Batch:
    batch = Batch()
    for run in find_runs(path):
        batch.outputs.append(convert_run(run, settings, batch))
    return batch


class _Run:
    """The files of one run directory, loaded and shape-checked."""

    def __init__(self, run: Path) -> None:
        for name in REQUIRED:
            if not os.path.lexists(run / name):
                raise InputError(run / name, "$", "file not found", _RUN_HINT)
        self.dir = run
        self.spec_file = run / "run_spec.json"
        self.state_file = run / "scenario_state.json"
        self.pis_file = run / "per_instance_stats.json"
        self.stats_file = run / STATS
        self.spec = get(read_json(self.spec_file), self.spec_file, [], dict)
        self.adapter = get(self.spec, self.spec_file, ["adapter_spec"], dict)
        self.scenario = get(read_json(run / "scenario.json"), run / "scenario.json", [], dict)
        self._state_bytes = read_log_bytes(self.state_file)
        state = parse_json(self._state_bytes, self.state_file)
        self.requests: list[dict[str, Any]] = get(state, self.state_file, ["request_states"], list)
        for i in range(len(self.requests)):
            get(state, self.state_file, ["request_states", i, "instance", "id"], (str, int))
            get(state, self.state_file, ["request_states", i, "request", "prompt"], str)
        self.per_instance: list[dict[str, Any]] = get(read_json(self.pis_file), self.pis_file, [], list)
        for i in range(len(self.per_instance)):
            get(self.per_instance, self.pis_file, [i, "instance_id"], (str, int))
            get(self.per_instance, self.pis_file, [i, "stats"], list)
        self.stats: list[dict[str, Any]] | None = None
        if os.path.lexists(self.stats_file):
            self.stats = get(read_json(self.stats_file), self.stats_file, [], list)

    def state_text(self) -> str:
        return self._state_bytes.decode("utf-8", errors="replace")


def convert_run(run: Path, settings: Settings, batch: Batch) -> Converted:
    """One HELM run directory into one record (with sidecar rows when samples are asked for)."""
    r = _Run(run)
    model_name = get(r.spec, r.spec_file, ["adapter_spec", "model"], str)
    deployment = r.adapter.get("model_deployment") or ""
    platform = deployment.split("/", 1)[0] if "/" in deployment else None
    info = model_info(model_name, model_name, settings, r.spec_file, "$.adapter_spec.model", platform=platform)
    dataset = dataset_name(r)
    times = [t for rs in r.requests if (t := number(opt(rs, "result", "request_datetime")))]
    if times:
        stamp = str(int(min(times)))
        retrieved = str(int(max(times)))
    else:  # no request time in the log: a content hash keeps the id independent of the clock
        stamp = sha256_text(r.state_text())[:16]
        retrieved = now_epoch()
    eval_id = evaluation_id(dataset, info["id"], stamp)
    ids = [str(rs["instance"]["id"]) for rs in r.requests]
    source = {
        "dataset_name": dataset,
        "source_type": "hf_dataset",
        "samples_number": len(set(ids)),
        "sample_ids": list(dict.fromkeys(ids)),
        "additional_details": {
            "scenario_name": str(opt(r.spec, "scenario_spec", "class_name") or ""),
            "scenario_args": json.dumps(args) if (args := opt(r.spec, "scenario_spec", "args")) else "",
        },
    }
    generation = generation_config(r)
    results = []
    seen: set[str] = set()  # result ids already emitted (the first stat of an id wins)
    counts = instance_counts(r.per_instance)
    split_counts = {
        label(_name(s).get("split")) or "": int(m)
        for s in (r.stats or [])
        if _name(s).get("name") == "num_instances" and not _name(s).get("perturbation") and (m := number(s.get("mean")))
    }
    for stat in aggregate_stats(r):
        name = _name(stat)
        metric, split, perturbation = name["name"], name.get("split"), name.get("perturbation")
        score = stat_score(stat)
        if score is None:
            continue
        rid = result_id(metric, split, perturbation)
        if rid in seen:
            continue
        seen.add(rid)
        details = {
            "num_train_trials": "" if stat.get("count") is None else str(stat["count"]),
            "stddev_across_train_trials": "" if stat.get("stddev") is None else str(stat["stddev"]),
            "split": label(split) or "",
            "perturbation": label(perturbation) or "",
        }
        if isinstance(perturbation, dict) and perturbation.get("computed_on"):
            details["perturbation_computed_on"] = str(perturbation["computed_on"])
        num_samples = (
            counts.get(rid)
            or counts.get(result_id(metric, split, None))
            or split_counts.get(label(split) or "")
            or source["samples_number"]
        )
        score_details: dict[str, Any] = {"score": score, "details": details}
        if num_samples:
            score_details["uncertainty"] = {"num_samples": num_samples}
        result: dict[str, Any] = {"evaluation_result_id": rid, "evaluation_name": dataset, "source_data": source}
        if times:
            result["evaluation_timestamp"] = stamp
        result["metric_config"] = metric_config(metric, HARNESS, metric)
        result["score_details"] = score_details
        result["generation_config"] = generation
        results.append(result)
    if not results:
        reported = sorted({str(_name(s).get("name")) for s in aggregate_stats(r)})
        raise InputError(
            r.stats_file if r.stats is not None else r.pis_file,
            "$",
            f"no benchmark score among the run's stats ({', '.join(reported) or 'none'})",
            "HELM runs are scored by stats such as exact_match, f1_score, rouge_l or bleu_4",
        )
    doc = record(
        evaluation_id=eval_id,
        evaluation_timestamp=stamp if times else None,
        retrieved_timestamp=retrieved,
        source_name="HELM",
        settings=settings,
        library=("helm", None),
        model=info,
        results=results,
    )
    rows = None
    if settings.include_samples:
        rows = sample_rows(r, eval_id, info["id"], dataset, seen, batch)
        rows = rows or None  # no scored instance: no sidecar (sample_rows has said why)
    return Converted(dataset, doc, rows)


def dataset_name(r: _Run) -> str:
    """The scenario's name; else ``dataset=`` of the run name; else the run name's prefix."""
    name = r.scenario.get("name")
    if isinstance(name, str) and name:
        return name
    run_name = str(r.spec.get("name") or r.dir.name)
    for part in run_name.split(":", 1)[-1].split(","):
        if part.startswith("dataset="):
            return part.split("=", 1)[1]
    return run_name.split(":", 1)[0]


def generation_config(r: _Run) -> dict[str, Any]:
    """Sampling settings of the run: the first request's, else the adapter's."""
    request = opt(r.requests, 0, "request") or {}

    def pick(key: str, adapter_key: str | None = None) -> Any:
        value = request.get(key)
        return value if value is not None else r.adapter.get(adapter_key or key)

    args: dict[str, Any] = {}
    temperature = number(pick("temperature"))
    if temperature is not None:
        args["temperature"] = temperature  # 0.0 (greedy) is a setting, not an absence
    top_p = number(pick("top_p"))
    if top_p is not None:
        args["top_p"] = top_p
    max_tokens = pick("max_tokens")
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens >= 1:
        args["max_tokens"] = max_tokens  # 0 means scored by log-probability: not applicable
    args["reasoning"] = any(_thinking(rs) for rs in r.requests[:1])
    stop = request.get("stop_sequences")
    details = {
        "stop_sequences": json.dumps(stop) if stop else "[]",
        "presence_penalty": str(request.get("presence_penalty")),
        "frequency_penalty": str(request.get("frequency_penalty")),
        "num_completions": str(request.get("num_completions")),
    }
    # HELM's top_k_per_token is how many log-probabilities to return, not top-k sampling
    if request.get("top_k_per_token") is not None:
        details["top_k_per_token"] = str(request["top_k_per_token"])
    if r.adapter.get("method"):
        details["adapter_method"] = str(r.adapter["method"])
    return {"generation_args": args, "additional_details": details}


def _thinking(rs: dict[str, Any]) -> list[str]:
    out = []
    for completion in opt(rs, "result", "completions") or []:
        thinking = completion.get("thinking") if isinstance(completion, dict) else None
        value = thinking.get("text") if isinstance(thinking, dict) else thinking
        if isinstance(value, str) and value:
            out.append(value)
    return out


def _name(stat: dict[str, Any]) -> dict[str, Any]:
    name = stat.get("name")
    return name if isinstance(name, dict) else {}


def label(part: Any) -> str | None:
    """A split or perturbation as a label: its name (None when absent)."""
    if part is None or part == "":
        return None
    if isinstance(part, dict):
        return str(part.get("name") or json.dumps(part, sort_keys=True))
    return str(part)


def result_id(metric: str, split: Any, perturbation: Any) -> str:
    """``metric:split[:perturbation[/computed_on]]`` (``worst`` is implied)."""
    parts = [metric]
    if label(split):
        parts.append(str(label(split)))
    if label(perturbation):
        tag = str(label(perturbation))
        computed_on = perturbation.get("computed_on") if isinstance(perturbation, dict) else None
        if computed_on and computed_on != "worst":
            tag += f"/{computed_on}"
        parts.append(tag)
    return ":".join(parts)


def stat_score(stat: dict[str, Any]) -> float | None:
    mean = number(stat.get("mean"))
    if mean is not None:
        return mean
    count, total = number(stat.get("count")), number(stat.get("sum"))
    if count and total is not None:
        return total / count
    return None


def aggregate_stats(r: _Run) -> list[dict[str, Any]]:
    """The run's core stats: stats.json's, or computed from the per-instance stats.

    HELM averages each train trial over its instances, then the trials: ``count`` is the
    number of trials and ``stddev`` their spread.
    """
    if r.stats is not None:
        return [s for s in r.stats if isinstance(s, dict) and is_core(str(_name(s).get("name", "")))]
    by_key: dict[str, dict[str, Any]] = {}
    by_trial: dict[str, dict[int, list[float]]] = {}
    for entry in r.per_instance:
        trial = entry.get("train_trial_index", 0)
        for stat in entry["stats"]:
            if not isinstance(stat, dict) or not is_core(str(_name(stat).get("name", ""))):
                continue
            value = stat_score(stat)
            if value is None:
                continue
            key = json.dumps(_name(stat), sort_keys=True)
            by_key.setdefault(key, _name(stat))
            by_trial.setdefault(key, {}).setdefault(trial, []).append(value)
    out = []
    for key, name in by_key.items():
        means = [sum(v) / len(v) for v in by_trial[key].values()]
        mean = sum(means) / len(means)
        stddev = math.sqrt(sum((m - mean) ** 2 for m in means) / len(means))
        out.append({"name": name, "count": len(means), "mean": mean, "stddev": stddev})
    return out


def instance_counts(per_instance: list[dict[str, Any]]) -> dict[str, int]:
    """How many distinct instances each result was computed over."""
    ids: dict[str, set[str]] = {}
    for entry in per_instance:
        for stat in entry["stats"]:
            name = _name(stat) if isinstance(stat, dict) else {}
            if name.get("name"):
                rid = result_id(name["name"], name.get("split"), name.get("perturbation"))
                ids.setdefault(rid, set()).add(str(entry["instance_id"]))
    return {rid: len(found) for rid, found in ids.items()}


def _entry_key(instance_id: Any, trial: Any, perturbation: Any) -> tuple[str, int, str | None]:
    return str(instance_id), int(trial or 0), label(perturbation)


def sample_rows(
    r: _Run, eval_id: str, model_id: str, dataset: str, result_ids: set[str], batch: Batch
) -> list[dict[str, Any]]:
    """One row per request state and core metric, joined to its per-instance stats."""
    entries = {
        _entry_key(e["instance_id"], e.get("train_trial_index"), e.get("perturbation")): e for e in r.per_instance
    }
    multiple_choice = str(r.adapter.get("method") or "").startswith("multiple_choice")
    rows: list[dict[str, Any]] = []
    unscored = 0
    for rs in r.requests:
        instance = rs["instance"]
        key = _entry_key(instance["id"], rs.get("train_trial_index"), instance.get("perturbation"))
        entry = entries.get(key)
        stats = [
            s for s in (entry or {}).get("stats", []) if isinstance(s, dict) and is_core(str(_name(s).get("name")))
        ]
        scored = [(s, v) for s in stats if (v := stat_score(s)) is not None]
        if not scored:
            unscored += 1
            continue
        base = _row_base(rs, entry or {}, eval_id, model_id, dataset, multiple_choice)
        for stat, score in scored:
            name = _name(stat)
            rid = result_id(name["name"], name.get("split"), name.get("perturbation"))
            if rid not in result_ids:
                continue
            lookup = split_parameter(name["name"])[0]
            row = {
                **base,
                "evaluation_result_id": rid,
                "evaluation": {
                    "score": score,
                    "is_correct": lookup in BINARY and score > 0,
                    "num_turns": None,
                    "tool_calls_count": None,
                },
            }
            rows.append({k: row[k] for k in _ROW_ORDER})
    if unscored:
        batch.warn(
            r.pis_file,
            "$",
            f"{unscored} request(s) have no core metric in the per-instance stats; no sidecar row for them",
            "the instances were not scored by HELM; re-run its metrics step if they should be",
        )
    return rows


_ROW_ORDER = (
    "schema_version",
    "evaluation_id",
    "model_id",
    "evaluation_name",
    "evaluation_result_id",
    "sample_id",
    "sample_hash",
    "interaction_type",
    "input",
    "output",
    "messages",
    "answer_attribution",
    "evaluation",
    "token_usage",
    "performance",
    "error",
    "metadata",
)


def _row_base(
    rs: dict[str, Any], entry: dict[str, Any], eval_id: str, model_id: str, dataset: str, multiple_choice: bool
) -> dict[str, Any]:
    instance, request = rs["instance"], rs["request"]
    references = [ref for ref in instance.get("references") or [] if isinstance(ref, dict)]
    correct = [str(opt(ref, "output", "text")) for ref in references if "correct" in (ref.get("tags") or [])]
    mapping = rs.get("output_mapping")
    choices = None
    if isinstance(mapping, dict) and mapping:
        choices = [str(v) for v in mapping.values()]
    elif multiple_choice and references:
        choices = [str(opt(ref, "output", "text")) for ref in references]
    completions = [c for c in opt(rs, "result", "completions") or [] if isinstance(c, dict)]
    texts = [str(c.get("text", "")) for c in completions]
    request_time = number(opt(rs, "result", "request_time"))
    metadata: dict[str, str] = {}
    if rs.get("train_trial_index"):
        metadata["train_trial_index"] = str(rs["train_trial_index"])
    if label(instance.get("perturbation")):
        metadata["perturbation"] = str(label(instance["perturbation"]))
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": eval_id,
        "model_id": model_id,
        "evaluation_name": dataset,
        "sample_id": str(instance["id"]),
        # the reference converter's hash (prompt + first correct reference), so rows join across both
        "sample_hash": sha256_text(request["prompt"] + (correct[0] if correct else "")),
        "interaction_type": "single_turn",
        "input": {
            "raw": str(opt(instance, "input", "text") or request["prompt"]),
            "formatted": request["prompt"],
            "reference": correct,
            "choices": choices,
        },
        "output": {"raw": texts, "reasoning_trace": _thinking(rs)},
        "messages": None,
        "answer_attribution": [attribution(texts[0].strip() if texts else "", "exact_match")],
        "token_usage": _token_usage(entry),
        "performance": {
            "latency_ms": None if request_time is None else request_time * 1000,
            "time_to_first_token_ms": None,
            "generation_time_ms": None if request_time is None else request_time * 1000,
            "additional_details": None,
        },
        "error": None if opt(rs, "result", "success") is not False else str(opt(rs, "result", "error") or "failed"),
        "metadata": metadata or None,
    }


def _token_usage(entry: dict[str, Any]) -> dict[str, Any] | None:
    stats = {_name(s).get("name"): s for s in entry.get("stats", []) if isinstance(s, dict)}
    if not stats:
        return None

    def total(name: str) -> int:
        value = number(stats.get(name, {}).get("sum"))
        return int(value) if value is not None else 0

    prompt, completion, output = total("num_prompt_tokens"), total("num_completion_tokens"), total("num_output_tokens")
    thinking = completion - output
    return {
        "input_tokens": prompt,
        "output_tokens": output,
        "total_tokens": prompt + completion,
        "input_tokens_cache_write": None,
        "input_tokens_cache_read": None,
        "reasoning_tokens": thinking if thinking > 0 else None,
    }
