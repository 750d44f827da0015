"""lighteval results into records, one per task, with per-sample rows from its details files.

Read from lighteval 0.13.0's own source (``logging/evaluation_tracker.py``,
``logging/info_loggers.py``) and its documentation ("Saving and reading results"); no
lighteval package is needed:

- ``{output_dir}/results/{model_name}/results_{date}.json`` holds ``config_general`` (the
  model's name and config, the run's duration), ``results`` (``{task: {metric: value,
  metric_stderr: value}}``), ``config_tasks`` (each task's dataset, metrics with their
  direction and aggregation, few-shot count, number of documents) and ``versions``;
- with ``--save-details``, ``{output_dir}/details/{model_name}/{date}/details_{task}_{date}.parquet``
  holds one row per document: ``doc`` (query, choices, gold_index, id), ``model_response``
  (text, input, logprobs) and ``metric`` (the document's score per metric).

A task key is ``task|few_shot`` (``gsm8k|5``, ``mmlu:anatomy|0``; before 0.13 a suite came
first, ``lighteval|gsm8k|5``, and is dropped). The benchmark folder is the task's name
before any ``:`` (``mmlu``); its evaluation name is the whole task name. lighteval's own
averages (``all``, ``mmlu:_average|0``) are computed from the tasks converted beside them
and are left out, said in a note. Each metric becomes one result (``metric_stderr`` its
standard error: analytic for a mean, bootstrap otherwise, as lighteval computes it).

Times: lighteval names its files after its local time without a zone
(``2025-06-03T12-34-56.789012``); the record keeps that time as ``evaluation_timestamp`` and
reads it as UTC for ``retrieved_timestamp`` (plus the run's duration), so converting one
log twice gives the same record. Only whitelisted config keys are copied (never an
``api_key``).

A model run through an API (lighteval's ``litellm`` endpoint) is named ``provider/model``,
and lighteval takes the first part as the provider when its config names none:
``openrouter/openai/gpt-5.2`` is OpenAI's ``gpt-5.2`` served by OpenRouter, attributed to
``openai/gpt-5.2`` with OpenRouter as its ``inference_platform`` (and the name it was served
as in ``served_as``). A first-party API names its developer (``gemini/...`` is Google's); a
router known to serve ``developer/model`` ids (OpenRouter, Together AI, Hugging Face,
DeepInfra) is split without a doubt; any other prefix is split the same way with a warning
that the split is a guess (and ``attribution`` says so in the record); a host's model whose
name has no developer (``groq/llama3-70b-8192``) needs ``--model-id``.

With ``--include-samples`` a task without a details file is converted without a sidecar,
with a warning (exit code 2), as for lm-eval. Details files are read with pyarrow.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eee.convert.common import (
    SCHEMA_VERSION,
    Batch,
    Converted,
    InputError,
    Settings,
    attribution,
    display,
    evaluation_id,
    get,
    model_info,
    number,
    read_json,
    record,
    sha256_text,
    text,
)
from eee.convert.metrics import metric_config
from eee.store.jsonpath import format_path
from eee.store.limits import LOG_MAX_BYTES, Unreadable, open_regular

HARNESS = "lighteval"
VERSION_READ = "0.13.0"
_STAMP = re.compile(r"^results_(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.json$")
# config keys copied into the record (lighteval dumps the whole model config, api keys included)
MODEL_DETAILS = ("revision", "dtype", "provider", "tensor_parallel_size", "max_model_length", "max_length")
GENERATION_ARGS = {"temperature": "temperature", "top_p": "top_p", "top_k": "top_k"}


def find_results(path: Path) -> list[Path]:
    """``results_*.json`` at ``path`` (a file, or lighteval's output folder searched recursively)."""
    if path.is_file():
        return [path]
    if not path.exists():
        raise InputError(path, "$", "no such file or directory", "check the path given to --log-path")
    found = sorted(p for p in path.rglob("results_*.json") if p.is_file() and not p.is_symlink())
    if not found:
        raise InputError(
            path, "$", "no lighteval results file (results_*.json) here", "point at lighteval's --output-dir folder"
        )
    return found


def convert(path: Path, settings: Settings) -> Batch:
    batch = Batch()
    for results_file in find_results(path):
        convert_file(results_file, settings, batch)
    return batch


def task_parts(key: str) -> tuple[str, str] | None:
    """``gsm8k|5`` -> (``gsm8k``, ``5``); ``lighteval|gsm8k|5`` -> the same; None for a key
    that is not a task (``all``) or lighteval's average of a suite (``mmlu:_average|0``)."""
    parts = key.split("|")
    if len(parts) == 3:
        parts = parts[1:]
    if len(parts) != 2 or not parts[0] or parts[0].endswith(":_average"):
        return None
    return parts[0], parts[1]


def _stamp(results_file: Path) -> str:
    match = _STAMP.match(results_file.name)
    if not match:
        raise InputError(
            results_file,
            "$",
            "the file name holds no run time (lighteval writes results_<YYYY-MM-DDTHH-MM-SS.ffffff>.json)",
            "keep lighteval's file name: it is the run's only timestamp",
        )
    return match.group("stamp")


def _iso(stamp: str) -> str:
    """``2025-06-03T12-34-56.789012`` -> ``2025-06-03T12:34:56.789012`` (lighteval wrote ``:`` as ``-``)."""
    day, _, clock = stamp.partition("T")
    return f"{day}T{clock.replace('-', ':')}"


def convert_file(results_file: Path, settings: Settings, batch: Batch) -> None:
    doc = get(read_json(results_file), results_file, [], dict)
    general = get(doc, results_file, ["config_general"], dict)
    results = get(doc, results_file, ["results"], dict)
    configs = doc.get("config_tasks") if isinstance(doc.get("config_tasks"), dict) else {}
    stamp = _stamp(results_file)
    started = datetime.fromisoformat(_iso(stamp)).replace(tzinfo=UTC).timestamp()
    duration = number(_float(general.get("total_evaluation_time_secondes"))) or 0.0
    retrieved = str(int(started + duration))
    info = _model(general, results_file, settings, batch)
    details_dir = _details_dir(results_file, str(general.get("model_name") or ""), stamp)
    tasks = [(key, parts) for key, parts in ((k, task_parts(k)) for k in results) if parts is not None]
    averages = [k for k in results if task_parts(k) is None]
    if averages:
        batch.notes.append(
            f"{display(results_file)}: lighteval's averages ({', '.join(averages)}) are computed from the tasks "
            "converted beside them; they are not converted"
        )
    if not tasks:
        raise InputError(
            results_file, "$.results", "no task results (task|few_shot keys)", "is this a lighteval results file?"
        )
    sha = general.get("lighteval_sha")
    library_version = sha if isinstance(sha, str) and sha not in ("", "?") else None  # "?": not run from git
    for key, (task, shots) in tasks:
        values = get(results, results_file, [key], dict)
        config = _task_config(configs, key, task)
        out = _results(values, config, results_file, key, task, shots, _iso(stamp))
        if not out:
            batch.warn(results_file, format_path(["results", key]), f"task {key} has no numeric metric; not converted")
            continue
        eval_id = evaluation_id(task, info["id"], stamp)
        rows = None
        if settings.include_samples:
            details = details_dir / f"details_{key}_{stamp}.parquet" if details_dir else None
            if details is None or not details.is_file():
                batch.warn(
                    results_file,
                    format_path(["results", key]),
                    f"no details file details_{key}_{stamp}.parquet for task {key}; converted without per-sample sidecar",
                    "run lighteval with --save-details to keep per-sample results, or convert without --include-samples",
                )
            else:
                rows = sample_rows(details, task, eval_id, info["id"], out) or None
                if rows is None:
                    batch.warn(
                        details, "$", "no document carries a score of a converted metric; converted without sidecar"
                    )
        record_doc = record(
            evaluation_id=eval_id,
            evaluation_timestamp=_iso(stamp),
            retrieved_timestamp=retrieved,
            source_name="lighteval",
            settings=settings,
            library=("lighteval", None),
            model=info,
            results=out,
            library_details={
                "lighteval_sha": library_version or "unknown",
                "timestamps": "lighteval's local time, without a zone (read as UTC for retrieved_timestamp)",
            },
        )
        batch.outputs.append(Converted(task.split(":", 1)[0], record_doc, rows))


def _float(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return value


def _details_dir(results_file: Path, model_name: str, stamp: str) -> Path | None:
    """``{output_dir}/details/{model_name}/{date}`` of ``{output_dir}/results/{model_name}/results_{date}.json``."""
    depth = len([p for p in model_name.strip("/").split("/") if p])
    if depth == 0 or len(results_file.parents) <= depth + 1:
        return None
    results_root = results_file.parents[depth]
    if results_root.name != "results":
        return None
    return results_root.parent / "details" / model_name.strip("/") / stamp


# litellm's provider prefixes (``provider/model``; lighteval takes the first part of the model's
# name as its provider when its config names none). A first-party API names its developer
# (as model ids write it); a router serves other developers' models under ``developer/model``.
FIRST_PARTY = {
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "mistral": "mistralai",
    "cohere": "cohere",
    "xai": "xai",
    "deepseek": "deepseek",
}
ROUTERS = ("openrouter", "together_ai", "huggingface", "deepinfra")


def attribute(name: str, config: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """Who made the model an API run reached as ``name`` (lighteval's ``model_name``):
    (``developer/model`` or None when the name holds no developer, the provider that served
    it, what was guessed or None). ``openrouter/openai/gpt-5.2`` is OpenAI's ``gpt-5.2``
    served by OpenRouter; ``gemini/gemini-2.0-flash`` Google's, through its own API."""
    given = config.get("provider") if isinstance(config.get("provider"), str) and config["provider"] else None
    parts = name.split("/")
    if given and parts[0] != given:
        provider, rest = given, name  # the provider named apart: the name is the model as it serves it
    elif len(parts) >= 2:
        provider, rest = parts[0], "/".join(parts[1:])
    else:
        return None, given, None
    developer = FIRST_PARTY.get(provider)
    if developer is not None:
        model = rest.split("/", 1)[1] if rest.count("/") == 1 and rest.split("/", 1)[0] == provider else rest
        if "/" not in model:
            return f"{developer}/{model}", provider, None
    if rest.count("/") == 1 and all(rest.split("/")):
        if provider in ROUTERS:
            return rest, provider, None
        return (
            rest,
            provider,
            (
                f"{name!r} is read as {rest!r} served by {provider!r}: lighteval names the provider first, and "
                f"{provider!r} is not a provider known here to serve developer/model ids"
            ),
        )
    return None, provider, None


def _model(general: dict[str, Any], file: Path, settings: Settings, batch: Batch | None = None) -> dict[str, Any]:
    config = general.get("model_config") if isinstance(general.get("model_config"), dict) else {}
    name = str(general.get("model_name") or config.get("model_name") or "")
    if not name:
        raise InputError(file, "$.config_general.model_name", "no model name", "lighteval writes it there")
    details = {key: text(config[key]) for key in MODEL_DETAILS if config.get(key) not in (None, "", {})}
    engine = platform = None
    deployment = None
    model_id = name
    if "gpu_memory_utilization" in config:
        engine, deployment = "vllm", "self_deployed"
    elif "mem_fraction_static" in config:
        engine, deployment = "sglang", "self_deployed"
    elif "model_parallel" in config or "continuous_batching" in config:
        engine, deployment = "transformers", "self_deployed"
    elif "org_to_bill" in config and isinstance(config.get("provider"), str) and config["provider"]:
        platform, deployment = "hf-inference-providers", "externally_managed"
    elif "api_max_retry" in config or "concurrent_requests" in config or config.get("provider"):
        # an API run through litellm: the name is provider/model, the model perhaps developer/model
        deployment = "externally_managed"
        found, platform, guess = attribute(name, config)
        overridden = settings.model_id or settings.model_ids.get(name)
        if found is None and not overridden:
            raise InputError(
                file,
                "$.config_general.model_name",
                f"model {name!r} was reached through {platform or 'an API'}, and its name says nothing of who made it",
                "pass the model's id with --model-id DEVELOPER/MODEL (or name it in a --models FILE): "
                "the provider is kept as its inference platform",
            )
        if found is not None:
            model_id = found
            details["served_as"] = name
        if guess and not overridden and batch is not None:
            details["attribution"] = "guessed from the model's name (lighteval names the provider first)"
            batch.warn(
                file,
                "$.config_general.model_name",
                guess,
                f"if another developer made it, convert again with --model-id DEVELOPER/MODEL (the provider "
                f"{platform!r} stays its inference platform)",
            )
    return model_info(
        name,
        model_id,
        settings,
        file,
        "$.config_general.model_name",
        platform=platform,
        engine=engine,
        details=details,
        deployment=deployment,
    )


def _task_config(configs: dict[str, Any], key: str, task: str) -> dict[str, Any]:
    """The task's ``config_tasks`` entry: by its key, or (older files) by ``suite|task``."""
    for candidate in (key, task, *(k for k in configs if k.split("|")[-1] == task or k.endswith(f"|{task}"))):
        if isinstance(configs.get(candidate), dict):
            return configs[candidate]
    return {}


def _metric_facts(config: dict[str, Any]) -> dict[str, tuple[bool | None, str | None]]:
    """metric name -> (higher is better, corpus aggregation) from the task's metric list."""
    out: dict[str, tuple[bool | None, str | None]] = {}
    for entry in config.get("metrics") or config.get("metric") or []:
        if not isinstance(entry, dict):
            continue
        names = entry.get("metric_name")
        higher = entry.get("higher_is_better")
        corpus = entry.get("corpus_level_fn")
        for name in names if isinstance(names, list) else [names]:
            if not isinstance(name, str):
                continue
            h = higher.get(name) if isinstance(higher, dict) else higher
            c = corpus.get(name) if isinstance(corpus, dict) else corpus
            out[name] = (h if isinstance(h, bool) else None, c if isinstance(c, str) else None)
    return out


def _results(
    values: dict[str, Any], config: dict[str, Any], file: Path, key: str, task: str, shots: str, when: str
) -> list[dict[str, Any]]:
    facts = _metric_facts(config)
    source = _source(config, task)
    generation = _generation(config, shots)
    effective = config.get("effective_num_docs")
    out = []
    for metric, value in values.items():
        if metric.endswith("_stderr"):
            continue
        score = number(value)
        if score is None:
            continue
        higher, corpus = facts.get(metric, (None, None))
        config_doc = metric_config(
            metric,
            HARNESS,
            f"{metric} on {task} ({shots}-shot)",
            lower_is_better=(not higher) if higher is not None else None,
        )
        uncertainty: dict[str, Any] = {}
        stderr = number(values.get(f"{metric}_stderr"))
        if stderr is not None:
            uncertainty["standard_error"] = {"value": stderr}
            if corpus:
                uncertainty["standard_error"]["method"] = "analytic" if "mean" in corpus else "bootstrap"
        if isinstance(effective, int) and not isinstance(effective, bool) and effective > 0:
            uncertainty["num_samples"] = effective
        details: dict[str, Any] = {"score": score}
        if uncertainty:
            details["uncertainty"] = uncertainty
        result = {
            "evaluation_result_id": metric,
            "evaluation_name": task,
            "source_data": source,
            "evaluation_timestamp": when,
            "metric_config": config_doc,
            "score_details": details,
        }
        if generation:
            result["generation_config"] = generation
        out.append(result)
    return out


def _source(config: dict[str, Any], task: str) -> dict[str, Any]:
    repo = config.get("hf_repo")
    if isinstance(repo, str) and repo and not repo.startswith(("/", ".", "~")):
        source: dict[str, Any] = {"dataset_name": task, "source_type": "hf_dataset", "hf_repo": repo}
        splits = config.get("evaluation_splits")
        if isinstance(splits, list) and splits and all(isinstance(s, str) for s in splits):
            source["hf_split"] = ",".join(splits)
        effective = config.get("effective_num_docs")
        if isinstance(effective, int) and not isinstance(effective, bool) and effective > 0:
            source["samples_number"] = effective
        extra = {
            k: str(config[k]) for k in ("hf_subset", "hf_revision") if isinstance(config.get(k), str) and config[k]
        }
        if extra:
            source["additional_details"] = extra
        return source
    return {"dataset_name": task, "source_type": "other"}


def _generation(config: dict[str, Any], shots: str) -> dict[str, Any] | None:
    args: dict[str, Any] = {}
    size = config.get("generation_size")
    if isinstance(size, int) and not isinstance(size, bool) and size >= 1:
        args["max_tokens"] = size
    details = {"num_fewshot": shots}
    stop = config.get("stop_sequence")
    if isinstance(stop, list) and stop:
        details["stop_sequence"] = json.dumps(stop)
    out: dict[str, Any] = {"additional_details": details}
    if args:
        out["generation_args"] = args
    return out


def read_details(path: Path) -> list[dict[str, Any]]:
    """The rows of a details parquet file (regular file, at most LOG_MAX_BYTES)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - the store extra has it
        raise InputError(path, "$", "pyarrow is not installed", "run `python3 tools/dev.py setup`") from None
    try:
        fd = open_regular(path, LOG_MAX_BYTES, "lighteval details file", follow=True)
    except Unreadable as exc:
        raise InputError(path, "$", exc.message, exc.hint) from None
    try:
        with os.fdopen(fd, "rb") as fh:
            table = pq.read_table(fh)
    except Exception as exc:  # pyarrow's own errors: a damaged or foreign file
        raise InputError(
            path,
            "$",
            f"not a readable parquet file: {str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}",
            "the details file is damaged; run lighteval again with --save-details",
        ) from None
    missing = [c for c in ("doc", "metric", "model_response") if c not in table.column_names]
    if missing:
        raise InputError(
            path,
            "$",
            f"no column {missing[0]!r}: not the details layout of lighteval {VERSION_READ} (doc, metric, model_response)",
            "convert without --include-samples, or export the details with lighteval 0.13",
        )
    return table.to_pylist()


def _golds(doc: dict[str, Any]) -> list[str]:
    choices = doc.get("choices") if isinstance(doc.get("choices"), list) else []
    gold = doc.get("gold_index")
    indices = gold if isinstance(gold, list) else [gold]
    out = []
    for i in indices:
        if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(choices):
            out.append(str(choices[i]))
    return out


def _answer(doc: dict[str, Any], response: dict[str, Any]) -> tuple[str, str, str, list[str] | None]:
    """(the model's response, the answer taken from it, how, the options of a multiple-choice doc)."""
    texts = [str(t) for t in response.get("text") or [] if t is not None]
    choices = [str(c) for c in doc.get("choices") or []]
    logprobs = [number(v) for v in response.get("logprobs") or []]
    if not texts and logprobs and len(logprobs) == len(choices) and all(v is not None for v in logprobs):
        best = max(range(len(choices)), key=lambda i: logprobs[i])  # type: ignore[arg-type, return-value]
        return choices[best], choices[best], "argmax_logprob", choices
    first = texts[0] if texts else ""
    processed = response.get("text_post_processed")
    extracted = str(processed[0]) if isinstance(processed, list) and processed else first
    return first, extracted, "generation", None


def sample_rows(
    details: Path, task: str, eval_id: str, model_id: str, results: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per document and metric that has an aggregate result."""
    known = {r["evaluation_result_id"] for r in results}
    rows = []
    for i, item in enumerate(read_details(details)):
        where = f"{display(details)}[{i}]"
        doc = item.get("doc") if isinstance(item.get("doc"), dict) else None
        metrics = item.get("metric") if isinstance(item.get("metric"), dict) else None
        response = item.get("model_response") if isinstance(item.get("model_response"), dict) else {}
        if doc is None or metrics is None:
            raise InputError(where, "$", "a details row without its doc or metric", "the details file is damaged")
        query = doc.get("query")
        if not isinstance(query, str):
            raise InputError(where, "$.doc.query", "missing or not a string", "the details file is damaged")
        sample_id = str(doc.get("id") or "") or str(i)
        golds = _golds(doc)
        raw, extracted, method, choices = _answer(doc, response)
        formatted = response.get("input") if isinstance(response.get("input"), str) else None
        for metric, value in metrics.items():
            score = number(value)
            if score is None or metric not in known:
                continue
            rows.append(
                {
                    "schema_version": SCHEMA_VERSION,
                    "evaluation_id": eval_id,
                    "model_id": model_id,
                    "evaluation_name": task,
                    "evaluation_result_id": metric,
                    "sample_id": sample_id,
                    "sample_hash": sha256_text(json.dumps({"query": query, "golds": golds}, sort_keys=True)),
                    "interaction_type": "single_turn",
                    "input": {"raw": query, "formatted": formatted, "reference": golds, "choices": choices},
                    "output": {"raw": [raw], "reasoning_trace": None},
                    "messages": None,
                    "answer_attribution": [attribution(extracted, method)],
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
                        "lighteval_metrics": json.dumps({k: v for k, v in metrics.items() if number(v) is not None})
                    },
                }
            )
    return rows
