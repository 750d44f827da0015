"""lm-evaluation-harness results into records, one per task (and per-sample sidecar rows).

``results_<date>.json`` holds every task's aggregates; ``samples_<task>_<date>.jsonl``
(written with ``--log_samples``) the per-document responses. A results key is
``metric,filter``: each becomes one result (``evaluation_result_id`` ``metric`` for the
``none`` filter, else ``metric:filter``), with ``metric_stderr,filter`` as its standard
error and the direction from the file's ``higher_is_better``.

With ``--include-samples`` a task whose samples file is missing is still converted, without
a sidecar, and reported as a warning (exit code 2): the other tasks are not affected.
"""

from __future__ import annotations

import json
import os
import re
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
    number,
    opt,
    read_json,
    read_jsonl,
    record,
    sha256_text,
    text,
)
from eee.convert.metrics import metric_config

HARNESS = "lm-evaluation-harness"
NOT_METRICS = frozenset({"alias", "samples", "name", "sample_len", "sample_count"})

# Model types that run the weights on the evaluator's hardware, and API model types.
ENGINES = {"hf": "transformers", "hf-auto": "transformers", "vllm": "vllm", "sglang": "sglang", "gguf": "llama.cpp"}
PLATFORMS = {
    "openai-completions": "openai",
    "openai-chat-completions": "openai",
    "anthropic": "anthropic",
    "anthropic-chat": "anthropic",
    "anthropic-chat-completions": "anthropic",
    "together": "together",
}
LOCAL_SERVERS = frozenset({"local-completions", "local-chat-completions"})

# How lm-eval computes a metric's standard error follows from its aggregation
# (lm_eval/api/metrics.py, stderr_for_metric): analytic for a mean, bootstrap for these.
BOOTSTRAP = frozenset({"bleu", "chrf", "f1_score", "matthews_corrcoef", "median", "nanmean", "perplexity", "ter"})
ANALYTIC = frozenset({"mean", "acc_all"})

_STAMP = re.compile(r"^results_(?P<stamp>.+)\.json$")


def find_results(path: Path) -> list[Path]:
    """``results_*.json`` at ``path`` (a file, or a folder searched recursively)."""
    if not path.is_dir() and os.path.lexists(path):
        return [path]  # a file, or something that is not one: reading it says which
    if not path.exists():
        raise InputError(path, "$", "no such file or directory", "check the path given to --log-path")
    found = sorted(p for p in path.rglob("results_*.json") if not p.is_dir())
    if not found:
        raise InputError(
            path, "$", "no lm-eval results file (results_*.json) here", "point --log-path at lm-eval's output folder"
        )
    return found


def convert(path: Path, settings: Settings) -> Batch:
    batch = Batch()
    for results_file in find_results(path):
        convert_file(results_file, settings, batch)
    return batch


def tasks(doc: dict[str, Any]) -> list[str]:
    """Tasks with at least one numeric metric (group headers without scores are left out)."""
    out = []
    for task, values in doc["results"].items():
        if isinstance(values, dict) and any(
            number(v) is not None for k, v in values.items() if k not in NOT_METRICS and "_stderr," not in k
        ):
            out.append(task)
    return out


def convert_file(results_file: Path, settings: Settings, batch: Batch) -> None:
    doc = get(read_json(results_file), results_file, [], dict)
    get(doc, results_file, ["results"], dict)
    found = tasks(doc)
    if not found:
        raise InputError(results_file, "$.results", "no task with a numeric metric", "is this an lm-eval results file?")
    info = _model(doc, results_file, settings)
    date = number(doc.get("date"))
    if date is None:
        raise InputError(results_file, "$.date", "missing or not a number", "lm-eval writes the run's start time there")
    stamp = str(int(date))
    duration = number(_as_float(doc.get("total_evaluation_time_seconds"))) or 0.0
    retrieved = str(int(date + duration))  # when the run finished: the log's own time, never the clock's
    for task in found:
        eval_id = evaluation_id(task, info["id"], stamp)
        results = _results(doc, results_file, task, stamp)
        rows = None
        if settings.include_samples:
            samples = samples_file(results_file, task)
            if samples is None:
                batch.warn(
                    results_file,
                    f"$.results.{task}",
                    f"no samples file samples_{task}_{_stamp(results_file) or '*'}.jsonl beside it; "
                    "the task is converted without per-sample sidecar",
                    "run lm-eval with --log_samples to keep per-sample results, or convert without --include-samples",
                )
            else:
                rows = sample_rows(samples, task, eval_id, info["id"], results) or None
                if rows is None:
                    batch.warn(
                        samples,
                        "$",
                        "no sample carries a numeric value of a converted metric; converted without per-sample sidecar",
                        "corpus-level metrics (bleu, ...) have no per-sample score",
                    )
        record_doc = record(
            evaluation_id=eval_id,
            evaluation_timestamp=stamp,
            retrieved_timestamp=retrieved,
            source_name="lm-evaluation-harness",
            settings=settings,
            library=("lm_eval", str(doc.get("lm_eval_version") or "") or None),
            model=info,
            results=results,
        )
        batch.outputs.append(Converted(task, record_doc, rows))


def _as_float(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return value


def _stamp(results_file: Path) -> str | None:
    match = _STAMP.match(results_file.name)
    return match.group("stamp") if match else None


def samples_file(results_file: Path, task: str) -> Path | None:
    """``samples_<task>_<date>.jsonl`` of the same run (same date stamp) beside the results."""
    stamp = _stamp(results_file)
    if stamp is None:
        candidates = sorted(results_file.parent.glob(f"samples_{task}_*.jsonl"))
        return candidates[-1] if len(candidates) == 1 else None
    path = results_file.parent / f"samples_{task}_{stamp}.jsonl"
    return path if os.path.lexists(path) and not path.is_dir() else None


def parse_model_args(model_args: Any) -> dict[str, str]:
    """``pretrained=org/model,dtype=float16`` -> {"pretrained": "org/model", "dtype": "float16"}."""
    if isinstance(model_args, dict):
        return {str(k): str(v) for k, v in model_args.items()}
    out: dict[str, str] = {}
    if not isinstance(model_args, str):
        return out
    last = None
    for part in model_args.split(","):
        if "=" in part:
            key, value = part.split("=", 1)
            last = key.strip()
            out[last] = value.strip()
        elif last is not None:
            out[last] += "," + part
    return out


def _model(doc: dict[str, Any], file: Path, settings: Settings) -> dict[str, Any]:
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    model_type = str(config.get("model") or "")
    args = parse_model_args(config.get("model_args"))
    name = args.get("pretrained") or args.get("model") or str(doc.get("model_name") or "")
    if not name:
        raise InputError(file, "$.config.model_args", "no model name (pretrained=...) and no model_name")
    details = {}
    for key, label in (
        ("model_num_parameters", "num_parameters"),
        ("model_dtype", "dtype"),
        ("model_revision", "revision"),
        ("model_sha", "sha"),
    ):
        if config.get(key):
            details[label] = str(config[key])
    if config.get("model_args"):
        details["model_args"] = text(config["model_args"])
    engine = ENGINES.get(model_type)
    platform = PLATFORMS.get(model_type)
    deployment = "self_deployed" if engine or model_type in LOCAL_SERVERS else None
    return model_info(
        name,
        name,
        settings,
        file,
        "$.config.model_args",
        platform=platform,
        engine=engine,
        details=details,
        deployment=deployment,
    )


def _aggregations(task_config: dict[str, Any]) -> dict[str, str]:
    out = {}
    for entry in task_config.get("metric_list") or []:
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("metric"), str)
            and isinstance(entry.get("aggregation"), str)
        ):
            out[entry["metric"]] = entry["aggregation"]
    return out


def result_id(metric: str, filter_name: str) -> str:
    return metric if filter_name in ("", "none") else f"{metric}:{filter_name}"


def _results(doc: dict[str, Any], file: Path, task: str, stamp: str) -> list[dict[str, Any]]:
    values = doc["results"][task]
    config = opt(doc, "configs", task) or {}
    directions = opt(doc, "higher_is_better", task) or {}
    effective = opt(doc, "n-samples", task, "effective")
    aggregations = _aggregations(config)
    source = _source(config, task)
    generation = _generation(config, opt(doc, "n-shot", task))
    out = []
    for key, value in values.items():
        if key in NOT_METRICS or "_stderr," in key:
            continue
        score = number(value)
        if score is None:
            continue
        metric, _, filter_name = key.partition(",")
        filter_name = filter_name or "none"
        description = metric if filter_name == "none" else f"{metric} (filter: {filter_name})"
        higher = directions.get(metric)
        config_doc = metric_config(
            metric, HARNESS, description, lower_is_better=(not higher) if isinstance(higher, bool) else None
        )
        if filter_name != "none":
            config_doc["additional_details"] = {"filter": filter_name, **config_doc["additional_details"]}
        uncertainty: dict[str, Any] = {}
        stderr = number(values.get(f"{metric}_stderr,{filter_name}"))
        if stderr is not None:
            uncertainty["standard_error"] = {"value": stderr}
            aggregation = aggregations.get(metric)
            if aggregation in ANALYTIC:
                uncertainty["standard_error"]["method"] = "analytic"
            elif aggregation in BOOTSTRAP:
                uncertainty["standard_error"]["method"] = "bootstrap"
        samples = effective if isinstance(effective, int) and not isinstance(effective, bool) else values.get("samples")
        if isinstance(samples, int) and not isinstance(samples, bool) and samples > 0:
            uncertainty["num_samples"] = samples
        score_details: dict[str, Any] = {"score": score}
        if uncertainty:
            score_details["uncertainty"] = uncertainty
        result = {
            "evaluation_result_id": result_id(metric, filter_name),
            "evaluation_name": task,
            "source_data": source,
            "evaluation_timestamp": stamp,
            "metric_config": config_doc,
            "score_details": score_details,
        }
        if generation:
            result["generation_config"] = generation
        out.append(result)
    return out


def _source(config: dict[str, Any], task: str) -> dict[str, Any]:
    """A Hugging Face dataset when ``dataset_path`` names one; otherwise another source."""
    path = config.get("dataset_path")
    name = str(config.get("task") or task)
    if isinstance(path, str) and "/" in path and not path.startswith(("/", ".", "~")):
        source: dict[str, Any] = {"dataset_name": name, "source_type": "hf_dataset", "hf_repo": path}
        split = config.get("test_split") or config.get("validation_split")
        if split:
            source["hf_split"] = str(split)
        if isinstance(config.get("dataset_name"), str):
            source["additional_details"] = {"hf_subset": config["dataset_name"]}
        return source
    source = {"dataset_name": name, "source_type": "other"}
    if isinstance(path, str) and path:
        source["additional_details"] = {"dataset_path": path}
    return source


def _generation(config: dict[str, Any], n_shot: Any) -> dict[str, Any] | None:
    """``generation_kwargs`` (0.0 temperature kept) and the number of few-shot examples."""
    kwargs = config.get("generation_kwargs") if isinstance(config.get("generation_kwargs"), dict) else {}
    args: dict[str, Any] = {}
    for key, target in (("temperature", "temperature"), ("top_p", "top_p"), ("top_k", "top_k")):
        if number(kwargs.get(key)) is not None:
            args[target] = float(kwargs[key])
    max_tokens = kwargs.get("max_gen_toks")
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens >= 1:
        args["max_tokens"] = max_tokens
    details = {k: text(v) for k, v in kwargs.items() if k not in ("temperature", "top_p", "top_k", "max_gen_toks")}
    shots = config.get("num_fewshot")
    if shots is None:
        shots = n_shot
    if shots is not None:
        details["num_fewshot"] = str(shots)
    out: dict[str, Any] = {}
    if args:
        out["generation_args"] = args
    if details:
        out["additional_details"] = details
    return out or None


def _is_multiple_choice(arguments: dict[str, Any]) -> bool:
    return "gen_args_1" in arguments


def _choices(arguments: dict[str, Any]) -> list[str] | None:
    if not _is_multiple_choice(arguments):
        return None
    out = []
    i = 0
    while f"gen_args_{i}" in arguments:
        arg = arguments[f"gen_args_{i}"]
        if isinstance(arg, dict) and "arg_1" in arg:
            out.append(str(arg["arg_1"]).strip())
        i += 1
    return out or None


def _loglikelihood(response: Any) -> float:
    """The log-likelihood of one option: ``[logprob, is_greedy]`` (maybe wrapped in a list)."""
    value = response
    while isinstance(value, list) and value:
        if number(value[0]) is not None:
            return float(value[0])
        value = value[0]
    return float("-inf")


def _first_text(responses: Any) -> str:
    value = responses
    while isinstance(value, list):
        if not value:
            return ""
        value = value[0]
    return "" if value is None else str(value)


def _answers(sample: dict[str, Any], choices: list[str] | None) -> tuple[str, str]:
    """(the model's response, the value the filter extracted from it).

    For a multiple-choice task the answer is the option with the highest log-likelihood.
    """
    resps, filtered = sample.get("resps"), sample.get("filtered_resps")
    if choices is not None:
        source = filtered or resps or []
        scores = [_loglikelihood(r) for r in source]
        if scores and max(scores) > float("-inf"):
            best = scores.index(max(scores))
            picked = choices[best] if best < len(choices) else str(best)
            return picked, picked
        return "", ""
    extracted = _first_text(filtered if filtered else resps)
    raw = _first_text(resps) if resps else extracted
    return raw, extracted


def sample_rows(
    samples: Path, task: str, eval_id: str, model_id: str, results: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per document and metric that has an aggregate result."""
    known = {r["evaluation_result_id"] for r in results}
    rows = []
    for lineno, sample in read_jsonl(samples):
        where = f"{samples}:{lineno}"
        if not isinstance(sample, dict):
            raise InputError(where, "$", "a samples line must be a JSON object")
        get(sample, where, ["doc_id"], (int, str))
        arguments = sample.get("arguments") if isinstance(sample.get("arguments"), dict) else {}
        prompt = str(opt(arguments, "gen_args_0", "arg_0") or "")
        choices = _choices(arguments)
        target = sample.get("target")
        if (
            choices is not None
            and isinstance(target, int)
            and not isinstance(target, bool)
            and 0 <= target < len(choices)
        ):
            reference = [choices[target]]
        elif isinstance(target, list):
            reference = [str(t) for t in target]
        else:
            reference = ["" if target is None else str(target)]
        raw, extracted = _answers(sample, choices)
        filter_name = str(sample.get("filter") or "none")
        metrics = [m for m in sample.get("metrics") or [] if isinstance(m, str)]
        for metric in metrics:
            score = number(sample.get(metric))
            rid = result_id(metric, filter_name)
            if score is None or rid not in known:
                continue
            rows.append(
                {
                    "schema_version": SCHEMA_VERSION,
                    "evaluation_id": eval_id,
                    "model_id": model_id,
                    "evaluation_name": task,
                    "evaluation_result_id": rid,
                    "sample_id": str(sample["doc_id"]),
                    # the reference converter's hash, so rows of both converters join
                    "sample_hash": sha256_text(
                        json.dumps({"raw": prompt, "reference": "" if target is None else str(target)}, sort_keys=True)
                    ),
                    "interaction_type": "single_turn",
                    "input": {"raw": prompt, "formatted": None, "reference": reference, "choices": choices},
                    "output": {"raw": [raw], "reasoning_trace": None},
                    "messages": None,
                    "answer_attribution": [attribution(extracted, filter_name)],
                    "evaluation": {
                        "score": score,
                        "is_correct": score == 1.0,
                        "num_turns": None,
                        "tool_calls_count": None,
                    },
                    "token_usage": None,
                    "performance": None,
                    "error": None,
                    "metadata": {
                        "doc_hash": str(sample.get("doc_hash", "")),
                        "prompt_hash": str(sample.get("prompt_hash", "")),
                        "target_hash": str(sample.get("target_hash", "")),
                        "filter": filter_name,
                        "lm_eval_metrics": json.dumps({m: sample.get(m) for m in metrics if m in sample}),
                    },
                }
            )
    return rows
