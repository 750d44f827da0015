"""Inspect AI logs (``.json``, or ``.eval``: a zip archive of JSON) into records and rows.

The model path ``provider/model`` is normalised to ``developer/model``: a developer's own
API keeps its name (``anthropic/claude-...``; a service in between, as in
``openai/azure/gpt-4o``, becomes the inference platform), a serving platform or local
engine gives way to the developer named after it (``together/meta-llama/Llama-3-8B`` ->
``meta-llama/Llama-3-8B``), and a bare local model name is attributed by its family
(``ollama/qwen2.5:0.5b`` -> ``Qwen/qwen2.5-0.5b``). The name the samples report (a dated
snapshot such as ``claude-sonnet-4-20250514``) is preferred to the alias that was asked for.

Each scorer's metrics become results (``scorer:metric``) with the scorer's ``stderr`` as
their standard error; a scorer graded by a model records the judge in ``llm_scoring``.
Each sample becomes one row per scorer; its interaction type is inferred from its
messages: any tool message makes it ``agentic``, several assistant turns ``multi_turn``,
anything else ``single_turn``. Messages keep their tool calls.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from eee.convert.common import (
    DEVELOPER_APIS,
    ENGINES,
    PLATFORMS,
    SCHEMA_VERSION,
    SERVICES,
    Batch,
    Converted,
    InputError,
    Settings,
    attribution,
    evaluation_id,
    family_developer,
    get,
    iso_epoch,
    model_info,
    now_epoch,
    number,
    opt,
    parse_json,
    read_json,
    record,
    sha256_text,
    string_details,
    text,
)
from eee.convert.metrics import metric_config

HARNESS = "inspect_ai"

SCORE_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
JUDGE_MODEL_KEYS = ("grader_model", "judge_model", "model")
JUDGE_PROMPT_KEYS = ("grader_template", "judge_template", "template", "prompt", "instructions")


# --- reading ----------------------------------------------------------------------------------


def find_logs(path: Path) -> list[Path]:
    """The Inspect logs at ``path``: a file, or every ``.json``/``.eval`` below a folder."""
    if not path.is_dir() and os.path.lexists(path):
        return [path]  # a file, or something that is not one: reading it says which
    if not path.exists():
        raise InputError(path, "$", "no such file or directory", "check the path given to --log-path")
    found = sorted(
        p for p in path.rglob("*") if p.suffix in (".json", ".eval") and p.name != "logs.json" and not p.is_dir()
    )
    if not found:
        raise InputError(path, "$", "no Inspect log (.json or .eval) here", "point --log-path at Inspect's log folder")
    return found


def read_log(path: Path) -> dict[str, Any]:
    """An Inspect log as one document (samples included), from either file form."""
    from eee.store.limits import LOG_MAX_BYTES, Unreadable, open_regular

    try:  # a regular file before anything opens it (a pipe would hang is_zipfile)
        os.close(open_regular(path, LOG_MAX_BYTES, "harness log", follow=True))
    except Unreadable as exc:
        raise InputError(path, "$", exc.message, exc.hint) from None
    except FileNotFoundError:
        raise InputError(path, "$", "file not found", "check the path given to --log-path") from None
    except OSError as exc:
        raise InputError(path, "$", f"cannot read the file: {exc.strerror}") from None
    if path.suffix == ".eval" or zipfile.is_zipfile(path):
        return read_eval_archive(path)
    doc = read_json(path)
    if not isinstance(doc, dict) or "eval" not in doc:
        raise InputError(
            path, "$.eval", "missing field 'eval': not an Inspect log", "convert Inspect's .json or .eval logs"
        )
    return doc


class _Budget:
    """What the members of one archive may still decompress to (a zip bomb stops here)."""

    def __init__(self, path: Path) -> None:
        from eee.store.limits import ARCHIVE_MAX_BYTES, LOG_MAX_BYTES

        self.path = path
        self.left = ARCHIVE_MAX_BYTES
        self.member_cap = LOG_MAX_BYTES

    def read(self, archive: zipfile.ZipFile, name: str) -> bytes:
        """One member's bytes, streamed and cut off at the caps (declared sizes can lie)."""
        from eee.store.limits import ARCHIVE_MAX_BYTES, CHUNK, size_text

        cap = min(self.member_cap, self.left)
        where = f"{self.path}!{name}"
        hint = (
            f"an .eval archive decompresses to at most {size_text(ARCHIVE_MAX_BYTES)} "
            f"({size_text(self.member_cap)} per member; see 'Limits' in docs/guide/validation.md); this one is damaged or not a log"
        )
        try:
            info = archive.getinfo(name)
            if info.file_size > cap:
                raise InputError(where, "$", f"decompresses to {size_text(info.file_size)}, more than allowed", hint)
            parts: list[bytes] = []
            got = 0
            with archive.open(info) as fh:
                while block := fh.read(min(CHUNK, cap + 1 - got)):
                    got += len(block)
                    if got > cap:
                        raise InputError(where, "$", f"decompresses to more than {size_text(cap)}", hint)
                    parts.append(block)
        except InputError:
            raise
        except Exception as exc:  # zipfile, zlib, bz2, lzma errors of a damaged member
            raise InputError(
                where, "$", f"cannot read this member of the archive: {exc}", "the log is damaged"
            ) from None
        self.left -= got
        return b"".join(parts)


def read_eval_archive(path: Path) -> dict[str, Any]:
    """A ``.eval`` log: ``header.json`` plus ``samples/<id>_epoch_<n>.json`` and ``reductions.json``.

    Members are decompressed as a stream against a budget (:class:`_Budget`), so an
    archive that inflates without bound is refused once it passes the cap."""
    from eee.store.limits import ARCHIVE_MAX_MEMBERS

    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        raise InputError(
            path, "$", f"not a readable .eval archive: {exc}", "the log is damaged; export it again"
        ) from None
    with archive:
        if len(archive.infolist()) > ARCHIVE_MAX_MEMBERS:
            raise InputError(
                path,
                "$",
                f"the archive has {len(archive.infolist())} members, more than {ARCHIVE_MAX_MEMBERS}",
                "this is not an Inspect log",
            )
        budget = _Budget(path)
        names = set(archive.namelist())
        header_name = "header.json" if "header.json" in names else "_journal/start.json"
        if header_name not in names:
            raise InputError(
                f"{path}!header.json", "$", "missing from the archive", "the log is damaged or still being written"
            )
        doc = parse_json(budget.read(archive, header_name), f"{path}!{header_name}")
        if not isinstance(doc, dict) or "eval" not in doc:
            raise InputError(f"{path}!{header_name}", "$.eval", "missing field 'eval': not an Inspect log")
        order = _summary_order(archive, names, path, budget)
        samples = []
        for name in sorted(n for n in names if n.startswith("samples/") and n.endswith(".json")):
            sample = parse_json(budget.read(archive, name), f"{path}!{name}")
            if not isinstance(sample, dict):
                raise InputError(f"{path}!{name}", "$", "a sample must be a JSON object")
            samples.append(sample)
        samples.sort(key=lambda s: order.get((str(s.get("id")), s.get("epoch")), len(order)))
        doc["samples"] = samples
        if "reductions.json" in names:
            doc["reductions"] = parse_json(budget.read(archive, "reductions.json"), f"{path}!reductions.json")
    return doc


def _summary_order(
    archive: zipfile.ZipFile, names: set[str], path: Path, budget: _Budget
) -> dict[tuple[str, Any], int]:
    """The samples' order as the log lists them (file names sort 10 before 2)."""
    if "summaries.json" not in names:
        return {}
    summaries = parse_json(budget.read(archive, "summaries.json"), f"{path}!summaries.json")
    if not isinstance(summaries, list):
        return {}
    return {(str(s.get("id")), s.get("epoch")): i for i, s in enumerate(summaries) if isinstance(s, dict)}


# --- models -----------------------------------------------------------------------------------


def normalise_model(path: str, served: str | None = None) -> dict[str, Any]:
    """``provider/[service/]model`` -> name, id (``developer/model``), platform or engine.

    ``served`` is the model name the samples report, preferred when it is more specific.
    """
    parts = [p for p in path.split("/") if p]
    provider = parts[0].lower() if parts else ""
    rest = parts[1:]
    if served:
        served_parts = [p for p in served.split("/") if p]
        # a served name may repeat the provider (anthropic/claude-...): keep what follows it
        while len(served_parts) > 1 and served_parts[0].lower() in (provider, *SERVICES):
            served_parts = served_parts[1:]
        served = "/".join(served_parts) or None
    if provider in DEVELOPER_APIS:
        platform = provider
        if len(rest) >= 2 and rest[0].lower() in SERVICES:
            platform, rest = rest[0].lower(), rest[1:]
        while len(rest) >= 2 and rest[0].lower() == provider:
            rest = rest[1:]  # anthropic/anthropic/claude-...
        model = served.split("/")[-1] if served else "/".join(rest)
        return {
            "name": f"{provider}/{model}",
            "id": f"{provider}/{model.replace('/', '_')}",
            "platform": platform,
            "engine": None,
        }
    model_path = served if served and "/" in served else "/".join(rest)
    if provider in PLATFORMS or provider in ENGINES:
        if "/" in model_path:
            developer, model = model_path.split("/", 1)
        else:
            model = served or model_path
            developer = family_developer(model) or provider
        is_engine = provider in ENGINES
        return {
            "name": path,
            "id": f"{developer}/{model.replace(':', '-')}",
            "platform": None if is_engine else provider,
            "engine": provider if is_engine else None,
        }
    return {
        "name": path,
        "id": path if "/" in path else f"unknown/{path}",
        "platform": provider or None,
        "engine": None,
    }


def _served_model(samples: list[dict[str, Any]]) -> str | None:
    for sample in samples:
        model = opt(sample, "output", "model")
        if isinstance(model, str) and model:
            return model
    return None


def _model_info(
    path: str, served: str | None, settings: Settings, file: Path, where: str = "$.eval.model"
) -> dict[str, Any]:
    facts = normalise_model(path, served)
    return model_info(
        facts["name"],
        facts["id"],
        settings,
        file,
        where,
        platform=facts["platform"],
        engine=facts["engine"],
    )


# --- conversion ---------------------------------------------------------------------------------


def convert(path: Path, settings: Settings) -> Batch:
    batch = Batch()
    for log in find_logs(path):
        batch.outputs.append(convert_log(log, settings, batch))
    return batch


def convert_log(path: Path, settings: Settings, batch: Batch) -> Converted:
    doc = read_log(path)
    spec = get(doc, path, ["eval"], dict)
    status = doc.get("status")
    if status not in (None, "success"):
        raise InputError(
            path, "$.status", f"the run did not complete (status {status!r})", "convert logs of completed runs only"
        )
    task = get(doc, path, ["eval", "task"], str)
    model_path = get(doc, path, ["eval", "model"], str)
    scores = get(doc, path, ["results", "scores"], list)
    samples = [s for s in doc.get("samples") or [] if isinstance(s, dict)]
    info = _model_info(model_path, _served_model(samples), settings, path)
    started = iso_epoch(doc, path, "stats", "started_at") or iso_epoch(doc, path, "eval", "created")
    completed = iso_epoch(doc, path, "stats", "completed_at")
    dataset = spec.get("dataset") if isinstance(spec.get("dataset"), dict) else {}
    source = source_data(dataset, task)
    if started is not None:
        stamp = str(started)
    else:  # no time in the log: its own ids keep the evaluation id independent of the clock
        stamp = str(spec.get("eval_id") or spec.get("run_id") or sha256_text(path.name))
    retrieved = str(completed) if completed is not None else (stamp if started is not None else now_epoch())
    eval_id = evaluation_id(source["dataset_name"], info["id"], stamp)
    evaluation_name = str(spec.get("task_display_name") or task)
    generation = generation_config(doc)
    total = opt(doc, "results", "completed_samples") or opt(doc, "results", "total_samples")
    results = []
    for i, scorer in enumerate(scores):
        get(doc, path, ["results", "scores", i, "metrics"], dict)
        results.extend(scorer_results(scorer, evaluation_name, source, generation, started, total, doc, settings, path))
    if not results:
        raise InputError(path, "$.results.scores", "no scorer metric to convert", "the log has no scores")
    packages = spec.get("packages") if isinstance(spec.get("packages"), dict) else {}
    others = {k: str(v) for k, v in packages.items() if k != "inspect_ai" and v}
    doc_out = record(
        evaluation_id=eval_id,
        evaluation_timestamp=None if started is None else stamp,
        retrieved_timestamp=retrieved,
        source_name="inspect_ai",
        settings=settings,
        library=("inspect_ai", str(packages.get("inspect_ai") or "") or None),
        library_details={"packages": json.dumps(others)} if others else None,
        model=info,
        results=results,
    )
    rows = None
    if settings.include_samples:
        rows = sample_rows(samples, doc, eval_id, info["id"], evaluation_name, results) or None
        if rows is None:
            batch.warn(
                path,
                "$.samples",
                "the log holds no samples; converted without per-sample sidecar",
                "run Inspect with log_samples enabled to keep them",
            )
    return Converted(source["dataset_name"], doc_out, rows)


def _is_hub_location(location: Any) -> bool:
    return (
        isinstance(location, str)
        and "/" in location
        and not location.startswith(("/", ".", "~"))
        and "://" not in location
        and not re.match(r"^[A-Za-z]:[\\/]", location)
    )


def source_data(dataset: dict[str, Any], task: str) -> dict[str, Any]:
    """A Hugging Face dataset when the dataset's location is a Hub id, else another source."""
    name = dataset.get("name")
    location = dataset.get("location")
    ids = [str(i) for i in dataset.get("sample_ids") or []]
    if _is_hub_location(location) and isinstance(name, str) and name:
        source: dict[str, Any] = {
            "dataset_name": name.split("/")[-1],
            "source_type": "hf_dataset",
            "hf_repo": location,
        }
        if isinstance(dataset.get("samples"), int):
            source["samples_number"] = dataset["samples"]
        if ids:
            source["sample_ids"] = ids
        source["additional_details"] = {"shuffled": str(bool(dataset.get("shuffled")))}
        return source
    details = {"shuffled": str(bool(dataset.get("shuffled")))}
    if location:
        details["inspect_dataset_location"] = str(location)
    if name:
        details["inspect_dataset_name"] = str(name)
    if dataset.get("samples") is not None:
        details["samples_number"] = str(dataset["samples"])
    if ids:
        details["sample_ids"] = ",".join(ids)
    return {"dataset_name": task.split("/")[-1], "source_type": "other", "additional_details": details}


# GenerateConfig fields a solver may be given as arguments (generate(temperature=...), ...)
SOLVER_SETTINGS = (
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "seed",
    "reasoning_effort",
    "reasoning_tokens",
    "frequency_penalty",
    "presence_penalty",
    "stop_seqs",
    "num_choices",
)
SAMPLING = ("temperature", "top_p", "top_k", "max_tokens")


def _agreed(configs: list[dict[str, Any]], keys: tuple[str, ...]) -> dict[str, Any]:
    """The settings every one of ``configs`` that sets them gives the same value."""
    out: dict[str, Any] = {}
    for key in keys:
        values = [c[key] for c in configs if c.get(key) is not None]
        if values and all(v == values[0] for v in values):
            out[key] = values[0]
    return out


def generate_settings(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The generation settings the run used, and where each was read (a setting nearer the
    model call wins, as in Inspect): the model's generate config, then the plan's config (the
    eval's own GenerateConfig, ``plan.config``), then the solvers' arguments (``generate(
    temperature=...)``: ``params_passed``, else ``params``). What none of them says is read from
    the model calls of the samples (``events[].config``) when every call agrees on it."""
    layers = [
        ("eval.model_generate_config", opt(doc, "eval", "model_generate_config")),
        ("plan.config", opt(doc, "plan", "config")),
    ]
    steps = [s for s in opt(doc, "plan", "steps") or [] if isinstance(s, dict)]
    solver_args = [a for s in steps if isinstance(a := s.get("params_passed", s.get("params")), dict) and a]
    layers.append(("plan.steps[].params", _agreed(solver_args, SOLVER_SETTINGS)))
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, layer in layers:
        for key, value in (layer if isinstance(layer, dict) else {}).items():
            if value is not None:
                merged[str(key)] = value
                sources[str(key)] = name
    missing = tuple(k for k in SAMPLING if k not in merged)
    if missing:
        calls = [
            event["config"]
            for sample in doc.get("samples") or []
            if isinstance(sample, dict)
            for event in sample.get("events") or []
            if isinstance(event, dict) and event.get("event") == "model" and isinstance(event.get("config"), dict)
        ]
        for key, value in _agreed(calls, missing).items():
            if all(c.get(key) == value for c in calls):  # every call, not only those that set it
                merged[key] = value
                sources[key] = "samples[].events[].config"
    return merged, sources


def generation_config(doc: dict[str, Any]) -> dict[str, Any]:
    """Sampling settings (a temperature of 0 is kept), the solver plan, tools, limits, sandbox."""
    config, sources = generate_settings(doc)
    spec_config = opt(doc, "eval", "config") or {}
    args: dict[str, Any] = {}
    for key in ("temperature", "top_p", "top_k"):
        if number(config.get(key)) is not None:
            args[key] = float(config[key])
    if isinstance(config.get("max_tokens"), int) and config["max_tokens"] >= 1:
        args["max_tokens"] = config["max_tokens"]
    effort = config.get("reasoning_effort")
    args["reasoning"] = bool(
        (isinstance(effort, str) and effort.lower() != "none") or number(config.get("reasoning_tokens"))
    )
    plan = doc.get("plan") if isinstance(doc.get("plan"), dict) else {}
    steps = [s for s in plan.get("steps") or [] if isinstance(s, dict)]
    template = next((opt(s, "params", "template") for s in steps if s.get("solver") == "prompt_template"), None)
    if isinstance(template, str):
        args["prompt_template"] = template
    args["agentic_eval_config"] = {"available_tools": available_tools(steps)}
    args["eval_plan"] = {
        "name": str(plan.get("name") or "plan"),
        "steps": [
            json.dumps(
                {
                    "solver": s.get("solver"),
                    "params": s.get("params") or {},
                    # logs before params_passed existed passed exactly their params
                    "params_passed": s["params_passed"] if "params_passed" in s else s.get("params") or {},
                }
            )
            for s in steps
        ],
        "config": {str(k): json.dumps(v) for k, v in (plan.get("config") or {}).items() if v is not None},
    }
    args["eval_limits"] = {
        key: spec_config[key]
        for key in ("time_limit", "message_limit", "token_limit")
        if isinstance(spec_config.get(key), int) and not isinstance(spec_config.get(key), bool)
    }
    sandbox = opt(doc, "eval", "sandbox")
    if isinstance(sandbox, list):
        sandbox = {"type": sandbox[0], "config": sandbox[1] if len(sandbox) > 1 else None}
    args["sandbox"] = (
        {k: str(sandbox[k]) for k in ("type", "config") if sandbox.get(k)} if isinstance(sandbox, dict) else {}
    )
    out: dict[str, Any] = {"generation_args": args}
    rest = {k: v for k, v in config.items() if k not in SAMPLING}
    read_elsewhere = {k: where for k, where in sorted(sources.items()) if where != "eval.model_generate_config"}
    if read_elsewhere:  # where settings missing from the model's generate config were found
        rest["generation_settings_read_from"] = json.dumps(read_elsewhere)
    if string_details(rest):
        out["additional_details"] = string_details(rest)
    return out


def available_tools(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tools = []
    for step in steps:
        if step.get("solver") != "use_tools":
            continue
        listed = opt(step, "params", "tools")
        for tool in _flatten(listed):
            if isinstance(tool, dict) and tool.get("name"):
                entry: dict[str, Any] = {"name": str(tool["name"])}
                if tool.get("description"):
                    entry["description"] = str(tool["description"])
                if isinstance(tool.get("params"), dict) and tool["params"]:
                    entry["parameters"] = {str(k): text(v) for k, v in tool["params"].items()}
                tools.append(entry)
    return tools


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [item for sub in value for item in _flatten(sub)]
    return [value]


def scorer_results(
    scorer: dict[str, Any],
    evaluation_name: str,
    source: dict[str, Any],
    generation: dict[str, Any],
    started: float | None,
    total: Any,
    doc: dict[str, Any],
    settings: Settings,
    path: Path,
) -> list[dict[str, Any]]:
    """The results of one scorer: one per metric, its stderr (and std) folded in."""
    name = str(scorer.get("name") or scorer.get("scorer") or "score")
    metrics = {str(k): m for k, m in scorer["metrics"].items() if isinstance(m, dict)}
    by_name = {str(m.get("name") or k): m for k, m in metrics.items()}
    stderr = number(opt(by_name, "stderr", "value"))
    stddev = next((v for key in ("std", "stddev") if (v := number(opt(by_name, key, "value"))) is not None), None)
    judge = llm_scoring(scorer, doc, settings, path)
    count = scorer.get("scored_samples") if isinstance(scorer.get("scored_samples"), int) else total
    out = []
    for metric_name, metric in by_name.items():
        if metric_name in ("stderr", "std", "stddev"):
            continue
        value = number(metric.get("value"))
        if value is None:
            continue
        config = metric_config(metric_name, HARNESS, f"{metric_name} from scorer {name}")
        if judge:
            config["llm_scoring"] = judge
        uncertainty: dict[str, Any] = {}
        if stderr is not None:
            uncertainty["standard_error"] = {"value": stderr, "method": "analytic"}
        if stddev is not None:
            uncertainty["standard_deviation"] = stddev
        if isinstance(count, int) and count > 0:
            uncertainty["num_samples"] = count
        score_details: dict[str, Any] = {"score": value}
        if uncertainty:
            score_details["uncertainty"] = uncertainty
        result: dict[str, Any] = {
            "evaluation_result_id": f"{name}:{metric_name}",
            "evaluation_name": evaluation_name,
            "source_data": source,
        }
        if started is not None:
            result["evaluation_timestamp"] = str(started)
        result.update(metric_config=config, score_details=score_details, generation_config=generation)
        out.append(result)
    return out


def llm_scoring(scorer: dict[str, Any], doc: dict[str, Any], settings: Settings, path: Path) -> dict[str, Any] | None:
    """The judge of a model-graded scorer, from its params or its options in ``eval.scorers``."""
    name = scorer.get("scorer") or scorer.get("name")
    options = next(
        (s.get("options") for s in opt(doc, "eval", "scorers") or [] if isinstance(s, dict) and s.get("name") == name),
        None,
    )
    params = {**(options if isinstance(options, dict) else {}), **(scorer.get("params") or {})}
    judges = []
    for key in JUDGE_MODEL_KEYS:
        value = params.get(key)
        for item in value if isinstance(value, list) else [value]:
            model = item.get("model") if isinstance(item, dict) else item
            if isinstance(model, str) and "/" in model:
                judge_settings = replace(settings, model_id=None)  # --model-id names the evaluated model only
                judges.append({"model_info": _model_info(model, None, judge_settings, path, "$.results.scores")})
        if judges:
            break
    if not judges:
        return None
    prompt = next((params[k] for k in JUDGE_PROMPT_KEYS if isinstance(params.get(k), str)), None)
    out: dict[str, Any] = {"judges": judges, "input_prompt": prompt if prompt is not None else "unknown"}
    extra = {k: v for k, v in params.items() if k not in JUDGE_MODEL_KEYS and k not in JUDGE_PROMPT_KEYS}
    if string_details(extra):
        out["additional_details"] = string_details(extra)
    return out


# --- samples --------------------------------------------------------------------------------------


def _content(content: Any, attachments: dict[str, Any]) -> tuple[str | None, str | None]:
    """(text, reasoning) of a message content: a string or a list of typed parts."""
    if content is None:
        return None, None
    if isinstance(content, str):
        return _resolve(content, attachments), None
    texts, reasoning = [], []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(_resolve(part["text"], attachments))
        elif part.get("type") == "reasoning":
            value = part.get("reasoning") or part.get("summary")
            if isinstance(value, str):
                reasoning.append(_resolve(value, attachments))
    return ("\n".join(texts) if texts else None), ("\n".join(reasoning) if reasoning else None)


def _resolve(value: str, attachments: dict[str, Any]) -> str:
    """Inspect moves long strings to ``attachments``, leaving ``attachment://<hash>`` behind."""
    if value.startswith("attachment://"):
        found = attachments.get(value[len("attachment://") :])
        if isinstance(found, str):
            return found
    return value


def messages(sample: dict[str, Any]) -> list[dict[str, Any]]:
    attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
    out = []
    for i, message in enumerate(m for m in sample.get("messages") or [] if isinstance(m, dict)):
        content, reasoning = _content(message.get("content"), attachments)
        calls = None
        if message.get("role") == "assistant":
            calls = [
                {
                    "id": str(call.get("id") or ""),
                    "name": str(call.get("function") or call.get("name") or ""),
                    "arguments": {str(k): text(v) for k, v in call["arguments"].items()}
                    if isinstance(call.get("arguments"), dict)
                    else None,
                }
                for call in message.get("tool_calls") or []
                if isinstance(call, dict)
            ]
        call_id = message.get("tool_call_id")
        out.append(
            {
                "turn_idx": i,
                "role": str(message.get("role") or "unknown"),
                "content": content or None,  # the schema's "null when empty"
                "reasoning_trace": reasoning,
                "tool_calls": calls,
                "tool_call_id": [call_id] if isinstance(call_id, str) else call_id,
            }
        )
    return out


def interaction_type(transcript: list[dict[str, Any]]) -> str:
    """Tool messages: agentic; several assistant turns: multi_turn; else single_turn."""
    if any(m["role"] == "tool" for m in transcript):
        return "agentic"
    if sum(1 for m in transcript if m["role"] == "assistant") > 1:
        return "multi_turn"
    return "single_turn"


def score_value(value: Any) -> float | None:
    """A sample's score as a number: C/I/P/N letters, booleans, numbers, or a dict's first number."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, str):
        return SCORE_LETTERS.get(value.strip().upper())
    if isinstance(value, dict):
        return next((v for item in value.values() if (v := score_value(item)) is not None), None)
    return number(value)


def _usage(sample: dict[str, Any]) -> dict[str, Any] | None:
    """Tokens of the whole sample (every model call), else of its final output."""
    per_model = sample.get("model_usage")
    usages = list(per_model.values()) if isinstance(per_model, dict) and per_model else [opt(sample, "output", "usage")]
    usages = [u for u in usages if isinstance(u, dict)]
    if not usages:
        return None
    keys = ("input_tokens", "output_tokens", "total_tokens")
    extra = ("input_tokens_cache_write", "input_tokens_cache_read", "reasoning_tokens")
    out: dict[str, Any] = {k: int(sum(number(u.get(k)) or 0 for u in usages)) for k in keys}
    for k in extra:
        values = [number(u.get(k)) for u in usages if number(u.get(k)) is not None]
        out[k] = int(sum(v for v in values if v is not None)) if values else None
    return out


def _millis(seconds: Any) -> float | None:
    value = number(seconds)
    return None if value is None else float(round(value * 1000))


def sample_rows(
    samples: list[dict[str, Any]],
    doc: dict[str, Any],
    eval_id: str,
    model_id: str,
    evaluation_name: str,
    results: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """One row per sample (and epoch) and scorer; the row names its scorer's first result."""
    first_result: dict[str, str] = {}
    for result in results:
        first_result.setdefault(result["evaluation_result_id"].split(":", 1)[0], result["evaluation_result_id"])
    judged = {r["evaluation_result_id"].split(":", 1)[0] for r in results if "llm_scoring" in r["metric_config"]}
    default_scorer = next(iter(first_result))
    rows = []
    for sample in samples:
        scores = sample.get("scores") if isinstance(sample.get("scores"), dict) else {}
        scorers = [s for s in scores if s in first_result] or [default_scorer]
        for scorer in scorers:
            method = "llm_judge" if scorer in judged else scorer
            rows.append(
                _row(sample, scores.get(scorer), method, first_result[scorer], eval_id, model_id, evaluation_name)
            )
    return rows


def _row(
    sample: dict[str, Any],
    score: Any,
    method: str,
    result_id: str,
    eval_id: str,
    model_id: str,
    evaluation_name: str,
) -> dict[str, Any]:
    attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
    raw_input = sample.get("input")
    if isinstance(raw_input, list):  # a chat input: the text of its messages
        raw_input = "\n\n".join(
            t for m in raw_input if isinstance(m, dict) and (t := _content(m.get("content"), attachments)[0])
        )
    raw_input = _resolve(str(raw_input or ""), attachments)
    target = sample.get("target")
    reference = [str(t) for t in target] if isinstance(target, list) else ["" if target is None else str(target)]
    choices = [str(c) for c in sample.get("choices") or []] or None
    transcript = messages(sample)
    kind = interaction_type(transcript)
    completion = opt(sample, "output", "completion")
    message = opt(sample, "output", "choices", 0, "message")
    reply, reasoning = _content(message.get("content"), attachments) if isinstance(message, dict) else (None, None)
    response = completion if isinstance(completion, str) and completion else reply or ""
    value = score_value(score.get("value")) if isinstance(score, dict) else None
    answer = score.get("answer") if isinstance(score, dict) else None
    assistant_turns = [m["turn_idx"] for m in transcript if m["role"] == "assistant"]
    attributions = []
    if isinstance(answer, str):
        single = kind == "single_turn"
        turn = 0 if single or not assistant_turns else assistant_turns[-1]
        attributions.append(attribution(answer, method, turn, "output.raw" if single else f"messages[{turn}].content"))
    user_turns = [m for m in transcript if m["role"] == "user" and m["content"]]
    error = sample.get("error")
    stop = opt(sample, "output", "stop_reason") or opt(sample, "output", "choices", 0, "stop_reason")
    metadata = {"stop_reason": str(stop or ""), "epoch": str(sample.get("epoch", 1))}
    for key, item in (sample.get("metadata") or {}).items():
        if item is not None and key not in metadata:
            metadata[str(key)] = text(item)
    if not isinstance(score, dict):
        metadata["scored"] = "false"
    total_time, working_time = sample.get("total_time"), sample.get("working_time")
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": eval_id,
        "model_id": model_id,
        "evaluation_name": evaluation_name,
        "evaluation_result_id": result_id,
        "sample_id": str(sample.get("id")),
        # the reference converter's hash (input + references), so rows of both converters join
        "sample_hash": sha256_text(raw_input + "".join(reference)),
        "interaction_type": kind,
        "input": {
            "raw": raw_input,
            "formatted": user_turns[0]["content"] if kind == "single_turn" and user_turns else None,
            "reference": reference,
            "choices": choices,
        },
        "output": {"raw": [response], "reasoning_trace": [reasoning] if reasoning else None}
        if kind == "single_turn"
        else None,
        "messages": None if kind == "single_turn" else transcript,
        "answer_attribution": attributions,
        "evaluation": {
            "score": value if value is not None else 0.0,
            "is_correct": value is not None and value >= 1.0,
            "num_turns": 1 if kind == "single_turn" else max(1, len(transcript)),
            "tool_calls_count": sum(len(m["tool_calls"] or []) for m in transcript),
        },
        "token_usage": _usage(sample),
        "performance": None
        if total_time is None and working_time is None
        else {
            "latency_ms": _millis(total_time),
            "time_to_first_token_ms": None,
            "generation_time_ms": _millis(working_time),
            "additional_details": None,
        },
        "error": f"{error.get('message', '')}\n{error.get('traceback', '')}" if isinstance(error, dict) else None,
        "metadata": metadata,
    }
