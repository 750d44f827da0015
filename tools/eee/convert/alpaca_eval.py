"""AlpacaEval (1 and 2) leaderboards, runs and results folders into records (and per-instruction rows).

Read from alpaca_eval 0.6.6's own source (``main.py``, ``metrics/winrate.py``,
``metrics/glm_winrate.py``, ``metrics/helpers.py``, ``annotators/pairwise_evaluator.py``,
``constants.py``, ``evaluators_configs/``, ``models_configs/``) and its README; no
alpaca_eval package is needed. ``alpaca_eval --model_outputs out.json`` writes, in
``<outputs folder>/<annotator>/``, and the package keeps, in ``results/<model>/<annotator>/``:

- ``leaderboard.csv``: one row per model (the index column is the model's name):
  ``win_rate``, ``standard_error``, ``n_wins``, ``n_wins_base``, ``n_draws``, ``n_total``,
  ``discrete_win_rate``, ``mode``, ``avg_length`` and, for AlpacaEval 2,
  ``length_controlled_winrate`` and ``lc_standard_error``; the precomputed leaderboards of
  the package (``<annotator>_leaderboard.csv``) have the same columns;
- ``annotations.json``: one object per instruction: ``instruction``, ``dataset`` (its
  source: helpful_base, koala, oasst, selfinstruct, vicuna), ``output_1`` / ``generator_1``
  (the baseline), ``output_2`` / ``generator_2`` (the model), ``annotator``, ``preference``
  (1: the baseline wins, 2: the model wins, 1.5 a draw; AlpacaEval 2's weighted annotator
  gives the probability in between), ``price_per_example``, ``time_per_example`` (the
  judge's), and ``glm_preference`` when the length-controlled fit was kept.

Three ways in:

- ``eee convert alpaca_eval leaderboard.csv``: a published leaderboard (``documentation``):
  one record per model row. The baseline's own row (itself against itself: 50%, every
  instruction a draw) is not a result and is left out, said in a note. Every row whose
  model resolves to a developer/model id is converted; every other row is listed (a
  warning naming its line and the fix: exit 2), never all-or-nothing; ``--exclude NAME``
  leaves a row out on purpose.
- ``eee convert alpaca_eval <run folder or annotations.json>``: one run (``evaluation_run``):
  the record of ``generator_2``, its win rates computed from the annotations exactly as
  AlpacaEval does (:func:`win_rates`: ``win_rate`` = mean(preference - 1) x 100,
  ``standard_error`` the standard error of the mean of the same values x 100, ``n_wins``
  preferences above 1.5, ``n_wins_base`` below, ``n_draws`` exactly 1.5,
  ``discrete_win_rate`` with each preference rounded half to even, a draw staying 1.5; the
  published leaderboard is reproduced to 1e-6); the length-controlled win rate is a fitted
  GLM's and is **not** recomputed here: it comes from the mean of ``glm_preference`` when
  the annotations keep it, else from the run's ``leaderboard.csv`` beside them (whose
  ``win_rate`` must then agree with the annotations: otherwise the two files are of
  different runs, an error), else it is missing (a warning).
- ``eee convert alpaca_eval results/`` (or ``results/<model>/``): alpaca_eval's results
  folders, one record per model and judge (``<model>/<annotator>/annotations.json``); the
  model is the folder's name (the leaderboard's name: the ``NullModel`` folder's
  annotations name their generator ``example``). Runs that cannot be converted are listed,
  the others converted.

With ``--include-samples`` a run's sidecar holds one row per instruction: the instruction
as the input, the baseline's output as the reference, the model's output, the preference
(as given, in the answer attribution) and as the score ``preference - 1`` (the model's
share of the judge's preference; ``is_correct``: a win, above 0.5), the instruction's
source dataset in ``metadata.dataset``, declared as the items' cluster
(``detailed_evaluation_results.additional_details.cluster_key``: :mod:`eee.store.items`),
and the judge's cost and time (``metadata.judge_cost_usd``, ``metadata.judge_latency_ms``).
An item is its instruction: ``sample_id`` is the first 16 hex digits of the instruction's
sha256 (``sample_hash`` the whole), so runs that skipped an instruction still pair by item.

AlpacaEval 1 and 2 are different benchmarks (another baseline, another judge: scores are
not comparable): ``alpaca_eval`` against ``text_davinci_003``, ``alpaca_eval_2`` against
``gpt4_1106_preview`` (``gpt4_turbo``), told apart by the baseline (the annotations'
``generator_1``, or the leaderboard's row of the model against itself), else by the
annotator's name. **The judge is part of the metric**: every result's ``metric_id`` names
its annotator (``alpaca_eval.win_rate.weighted_alpaca_eval_gpt4_turbo``) and a known
annotator's judge model is recorded in ``llm_scoring`` (an unknown one by name in
``metric_config.additional_details.annotator``), so results of different judges never share
a metric or a protocol (:mod:`eee.store.protocol`).

Model names without a developer are resolved, in this order, by ``--model-id``, a
``--models FILE``, alpaca_eval's own model configs (``--model-configs DIR``:
``DIR/<name>/configs.yaml``; the developer from the Hugging Face link, else from
``completions_kwargs.model_name`` of the form ``org/model``, else from a GitHub link), the
placeholders this module knows (:data:`KNOWN`: ``NullModel``, the constant adversarial
output of sail-sg's Cheating-LLM-Benchmarks), and the name's family (``gpt4_1106_preview``
-> openai, ``Qwen1.5-72B-Chat`` -> Qwen, a guess the record says it is:
``model_info.additional_details.developer_from``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from eee.convert.common import (
    SCHEMA_VERSION,
    Batch,
    Converted,
    InputError,
    Settings,
    attribution,
    display,
    family_developer,
    model_info,
    now_epoch,
    number,
    read_json,
    read_log_bytes,
    record,
    sha256_text,
)
from eee.convert.mapping import plain_id
from eee.convert.metrics import metric_config
from eee.reporting.findings import ERROR, Finding, Refused
from eee.reporting.shown import command
from eee.store.items import CLUSTER_KEY
from eee.store.jsonpath import format_path, json_type

HARNESS = "alpaca_eval"
VERSION_READ = "0.6.6"
BASELINES = {"text_davinci_003": 1, "gpt4_1106_preview": 2, "gpt4_turbo": 2}
BENCHMARKS = {
    1: ("alpaca_eval", "AlpacaEval", "alpaca_eval"),
    2: ("alpaca_eval_2", "AlpacaEval 2.0", "alpaca_eval_gpt4_baseline"),
}
# the annotators of the package's leaderboards: version, judge model id, its temperature, prompt template
ANNOTATORS: dict[str, tuple[int, str, float, str]] = {
    "weighted_alpaca_eval_gpt4_turbo": (
        2,
        "openai/gpt-4-1106-preview",
        1.0,
        "alpaca_eval_clf_gpt4_turbo/alpaca_eval_clf.txt",
    ),
    "alpaca_eval_gpt4_turbo_fn": (2, "openai/gpt-4-1106-preview", 0.0, "alpaca_eval_gpt4_turbo_fn/alpaca_eval_fn.txt"),
    "alpaca_eval_cot_gpt4_turbo_fn": (
        2,
        "openai/gpt-4-1106-preview",
        0.0,
        "alpaca_eval_cot_gpt4_turbo_fn/alpaca_eval_fn.txt",
    ),
    "alpaca_eval_gpt4": (1, "openai/gpt-4", 0.0, "alpaca_eval_gpt4/alpaca_eval.txt"),
    "chatgpt_fn": (1, "openai/gpt-3.5-turbo-16k-0613", 0.0, "chatgpt_fn/basic_function_prompt.txt"),
    "claude": (1, "anthropic/claude-v1", 0.0, "claude/basic_prompt.txt"),
}
UNKNOWN_ANNOTATOR = "unknown_annotator"
# names of alpaca_eval's leaderboards that no family tells, with what alpaca_eval's own model
# config says of them (models_configs/<name>/configs.yaml)
KNOWN: dict[str, tuple[str, str]] = {
    "NullModel": (
        "sail-sg/NullModel",
        "alpaca_eval's models_configs/NullModel: 'NullModel (adversarial)', a constant output, "
        "https://github.com/sail-sg/Cheating-LLM-Benchmarks/",
    ),
}
LEADERBOARD = "leaderboard.csv"
ANNOTATIONS = "annotations.json"
CONFIG_FILES = ("configs.yaml", "config.yaml")  # a model config's file names in models_configs/<name>/
METRICS = (
    ("win_rate", "standard_error", "win rate against the baseline, as the judge prefers the model's output (percent)"),
    (
        "length_controlled_winrate",
        "lc_standard_error",
        "length-controlled win rate: the win rate a fitted GLM predicts at the baseline's output length (percent)",
    ),
    ("discrete_win_rate", None, "win rate with each preference rounded to a win, loss or draw (percent)"),
)
COUNTS = ("n_wins", "n_wins_base", "n_draws", "n_total")
SAMPLE_ID_HEX = 16  # an instruction's sample_id: this many hex digits of its sha256
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")  # a model name that may name a folder of models_configs
_ORG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def convert(path: Path, settings: Settings) -> Batch:
    if path.is_dir():
        annotations = path / ANNOTATIONS
        if annotations.is_file():
            return convert_run(annotations, settings)
        leaderboard = path / LEADERBOARD
        if leaderboard.is_file():
            return convert_leaderboard(leaderboard, settings)
        runs = find_runs(path)
        if runs:
            return convert_results(runs, settings)
        raise InputError(
            path,
            "$",
            f"no {ANNOTATIONS} or {LEADERBOARD} here, and no results folders (<model>/<annotator>/{ANNOTATIONS})",
            "point at the folder alpaca_eval wrote (<outputs>/<annotator>/), or at its results/ folder",
        )
    if not path.exists():
        raise InputError(path, "$", "no such file or directory", "check the path given to --log-path")
    if path.suffix.lower() == ".csv":
        return convert_leaderboard(path, settings)
    if path.suffix.lower() == ".json":
        return convert_run(path, settings)
    raise InputError(
        path, "$", "neither a leaderboard (.csv) nor annotations (.json)", "give leaderboard.csv or annotations.json"
    )


# --- the judge ----------------------------------------------------------------------------------


def _llm_scoring(annotator: str | None) -> dict[str, Any] | None:
    known = ANNOTATORS.get(annotator or "")
    if known is None:
        return None
    _, judge, temperature, template = known
    developer, name = judge.split("/", 1)
    return {
        "judges": [
            {
                "model_info": {
                    "name": name,
                    "id": judge,
                    "developer": developer,
                    "inference_platform": developer,
                    "additional_details": {
                        "deployment_type": "externally_managed",
                        "model_availability": "closed_weights",
                    },
                },
                "temperature": temperature,
            }
        ],
        "input_prompt": f"AlpacaEval's prompt template {template} (annotator {annotator}, alpaca_eval {VERSION_READ})",
        "additional_details": {"annotator": str(annotator), "prompt_template": template},
    }


def metric_id(metric: str, annotator: str | None) -> str:
    """The metric id of a result: the metric and its judge (``alpaca_eval.win_rate.<annotator>``),
    so that results of different judges never share a metric."""
    return f"{HARNESS}.{metric}.{annotator or UNKNOWN_ANNOTATOR}"


def _version(baseline: str | None, annotator: str | None, file: Path, where: str) -> int:
    if baseline in BASELINES:
        return BASELINES[baseline]
    if baseline is None and annotator in ANNOTATORS:
        return ANNOTATORS[annotator][0]
    raise InputError(
        file,
        where,
        f"cannot tell AlpacaEval 1 from 2: baseline {baseline!r}, annotator {annotator!r}"
        if baseline
        else f"cannot tell AlpacaEval 1 from 2: no baseline row and an unknown annotator {annotator!r}",
        "AlpacaEval 1 compares with text_davinci_003, AlpacaEval 2 with gpt4_1106_preview (gpt4_turbo); results "
        "against another baseline are not AlpacaEval's (convert them with "
        f"`{command('convert', 'table', '--mapping', 'FILE', 'TABLE')}`)",
    )


# --- who made the model -------------------------------------------------------------------------


def _org_of_link(link: Any, hosts: tuple[str, ...]) -> str | None:
    if not isinstance(link, str) or len(link) > 2000:
        return None
    try:
        parts = urlsplit(link.strip())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or (parts.hostname or "").lower() not in hosts:
        return None
    segments = [p for p in parts.path.split("/") if p]
    if len(segments) < (2 if "huggingface.co" in hosts else 1):
        return None
    org = segments[0]
    return org if _ORG.match(org) and org not in ("datasets", "spaces", "models") else None


def developer_from_config(config: Any, name: str) -> tuple[str, str] | None:
    """(developer, where it came from) of a model config of alpaca_eval (the YAML mapping of
    ``models_configs/<name>/configs.yaml``), or None when it does not say."""
    if not isinstance(config, dict) or not config:
        return None
    entry = config.get(name)
    if entry is None and len(config) == 1:
        entry = next(iter(config.values()))
    if not isinstance(entry, dict):
        return None
    link = entry.get("link")
    org = _org_of_link(link, ("huggingface.co", "www.huggingface.co", "hf.co"))
    if org:
        return org, f"alpaca_eval's model config: link {link}"
    kwargs = entry.get("completions_kwargs")
    served = kwargs.get("model_name") if isinstance(kwargs, dict) else None
    if isinstance(served, str) and "/" in served and not served.startswith((".", "/", "~")):
        org = served.split("/", 1)[0]
        if _ORG.match(org):
            return org, f"alpaca_eval's model config: completions_kwargs.model_name {served}"
    org = _org_of_link(link, ("github.com", "www.github.com"))
    if org:
        return org, f"alpaca_eval's model config: link {link}"
    return None


class Resolver:
    """Model names to developer/model ids, in the order the module's text gives, each answer
    with where it came from (None: given by the user); alpaca_eval's model configs are read
    once per name, as data (a name is a folder of ``--model-configs`` only when it is one
    plain path component)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.cache: dict[str, tuple[str, str | None] | None] = {}
        self.problems: list[Finding] = []

    def __call__(self, name: str) -> tuple[str, str | None] | None:
        if name not in self.cache:
            self.cache[name] = self._resolve(name)
        return self.cache[name]

    def _resolve(self, name: str) -> tuple[str, str | None] | None:
        s = self.settings
        if s.model_id:
            return s.model_id, None
        if name in s.model_ids:
            return s.model_ids[name], None
        if plain_id(name):
            return name, None
        found = self._config(name)
        if found is not None:
            developer, why = found
            return f"{developer}/{name}", why
        if name in KNOWN:
            return KNOWN[name]
        developer = family_developer(name)
        if developer:
            return f"{developer}/{name}", f"the family of the name ({developer}): a guess"
        return None

    def _config(self, name: str) -> tuple[str, str] | None:
        folder = self.settings.model_configs
        if folder is None or not _NAME.match(name) or ".." in name:
            return None
        from eee.convert.mapping import MappingError, read_yaml

        for file_name in CONFIG_FILES:
            path = folder / name / file_name
            if os.path.islink(folder / name) or not path.is_file():
                continue
            try:
                config = read_yaml(path, "model config")
            except MappingError as exc:
                self.problems += [_as(f, "warning", "convert", ": no developer read from it") for f in exc.findings]
                return None
            return developer_from_config(config, name)
        return None


def unresolved(name: str, where: str, severity: str = "warning") -> Finding:
    """The finding of a model name no rule resolves: its line, and the three fixes."""
    return Finding(
        where,
        "$",
        f"model {name!r} has no developer (developer/model): not converted"[:300],
        (
            f"name its id in a --models FILE (`{name}: developer/model`), give alpaca_eval's models_configs "
            f"folder with --model-configs DIR, or leave it out with --exclude {name}"
        )[:400],
        severity=severity,
        check="convert" if severity != ERROR else "input",
    )


def _info(name: str, resolved: tuple[str, str | None], settings: Settings, file: Path, pointer: str) -> dict[str, Any]:
    model_id, why = resolved
    details = {"developer_from": why} if why else None
    return model_info(name, model_id, replace(settings, model_id=model_id), file, pointer, details=details)


def _source(version: int, n_total: int | None, baseline: str) -> dict[str, Any]:
    _, name, subset = BENCHMARKS[version]
    source: dict[str, Any] = {
        "dataset_name": name,
        "source_type": "hf_dataset",
        "hf_repo": "tatsu-lab/alpaca_eval",
        "hf_split": "eval",
    }
    if n_total:
        source["samples_number"] = n_total
    source["additional_details"] = {"hf_subset": subset, "baseline": baseline}
    return source


def _results(
    version: int, values: dict[str, Any], annotator: str | None, baseline: str, when: str | None
) -> list[dict[str, Any]]:
    n_total = values.get("n_total")
    n_total = (
        int(n_total) if isinstance(n_total, float | int) and not isinstance(n_total, bool) and n_total > 0 else None
    )
    details = {k: _count_text(values.get(k)) for k in COUNTS if values.get(k) is not None}
    for key in ("mode", "avg_length"):
        if values.get(key) not in (None, ""):
            details["leaderboard_mode" if key == "mode" else key] = _count_text(values[key])
    scoring = _llm_scoring(annotator)
    out = []
    for metric, stderr_key, description in METRICS:
        score = values.get(metric)
        if score is None:
            continue
        config = metric_config(metric, HARNESS, description, lower_is_better=False)
        config["metric_id"] = metric_id(metric, annotator)
        if scoring is not None:
            config["llm_scoring"] = scoring
        else:
            config["additional_details"] = {"annotator": str(annotator or "unknown"), **config["additional_details"]}
        uncertainty: dict[str, Any] = {}
        stderr = values.get(stderr_key) if stderr_key else None
        if stderr is not None:
            uncertainty["standard_error"] = {"value": stderr, "method": "analytic"}
        if n_total:
            uncertainty["num_samples"] = n_total
        score_details: dict[str, Any] = {"score": score}
        if details:
            score_details["details"] = details
        if uncertainty:
            score_details["uncertainty"] = uncertainty
        result = {
            "evaluation_result_id": metric,
            "evaluation_name": BENCHMARKS[version][1],
            "source_data": _source(version, n_total, baseline),
            "metric_config": config,
            "score_details": score_details,
        }
        if when is not None:
            result["evaluation_timestamp"] = when
        out.append(result)
    return out


def _count_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --- leaderboards -------------------------------------------------------------------------------

NUMERIC = (
    "win_rate",
    "standard_error",
    "discrete_win_rate",
    "length_controlled_winrate",
    "lc_standard_error",
    "avg_length",
    *COUNTS,
)


def read_leaderboard(path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(model, where, values) per row of a leaderboard CSV; numbers parsed, empty cells None."""
    try:
        text = read_log_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(path, "$", "not UTF-8 text", "save the leaderboard as UTF-8") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if not header or "win_rate" not in header:
            raise InputError(
                f"{display(path)}:1",
                "$",
                "no win_rate column: not an AlpacaEval leaderboard",
                "give the leaderboard.csv alpaca_eval wrote",
            )
        columns = [h.strip() for h in header]
        rows = []
        seen: dict[str, str] = {}
        for cells in reader:
            where = f"{display(path)}:{reader.line_num}"
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(columns):
                raise InputError(
                    where,
                    "$",
                    f"{len(cells)} cells, the header has {len(columns)} columns",
                    "give every row one cell per column",
                )
            row = dict(zip(columns, cells, strict=True))
            name = cells[0].strip()
            if not name:
                raise InputError(where, format_path([columns[0]]), "no model name", "the first column names the model")
            if name in seen:
                raise InputError(
                    where,
                    format_path([columns[0]]),
                    f"a second row of model {name!r} (the first is {seen[name]})",
                    "keep one row per model",
                )
            seen[name] = where
            values: dict[str, Any] = {}
            for key in NUMERIC:
                cell = (row.get(key) or "").strip()
                if not cell:
                    continue
                try:
                    value = float(cell)
                except ValueError:
                    value = math.nan
                if not math.isfinite(value):
                    raise InputError(
                        where, format_path([key]), f"{cell!r} is not a number"[:200], f"the {key} column holds numbers"
                    )
                values[key] = value
            if "win_rate" not in values:
                raise InputError(
                    where, format_path(["win_rate"]), "no win rate", "every row of a leaderboard has its win_rate"
                )
            if row.get("mode"):
                values["mode"] = row["mode"].strip()
            rows.append((name, where, values))
    except csv.Error as exc:
        raise InputError(
            f"{display(path)}:{reader.line_num}", "$", f"not readable as CSV: {exc}", "check the quoting of this line"
        ) from None
    if not rows:
        raise InputError(path, "$", "the leaderboard has no rows", "give the leaderboard.csv alpaca_eval wrote")
    return rows


def _is_baseline(values: dict[str, Any]) -> bool:
    total = values.get("n_total")
    return bool(total) and values.get("n_draws") == total and values.get("win_rate") == 50.0


def _annotator_of(path: Path) -> str | None:
    """The annotator a leaderboard file is named after (``<annotator>_leaderboard.csv`` or
    ``<annotator>/leaderboard.csv``)."""
    if path.name.endswith("_leaderboard.csv"):
        return path.name[: -len("_leaderboard.csv")]
    if path.name == LEADERBOARD:
        return path.parent.name or None
    return None


def _excluded_notes(batch: Batch, settings: Settings, seen: set[str], file: Path) -> None:
    for name in settings.exclude:
        if name not in seen:
            batch.warn(
                file,
                "$",
                f"--exclude {name!r}: no model of that name here"[:300],
                "check the name (as the leaderboard's first column or the results folder spells it)",
            )


def _as(f: Finding, severity: str, check: str, suffix: str = "") -> Finding:
    """``f`` with another severity and rule (and ``suffix`` added to its message)."""
    return Finding(f.file, f.pointer, f.message + suffix, f.hint, f.line, severity, check=check)  # type: ignore[arg-type]


def _nothing(batch: Batch, file: Path, what: str) -> Refused:
    findings = [_as(f, ERROR, "input") for f in batch.warnings]
    if not findings:
        findings = [Finding(display(file), "$", f"nothing to convert: {what}", check="input")]
    return Refused(findings)


def convert_leaderboard(path: Path, settings: Settings) -> Batch:
    """Every row of a leaderboard whose model resolves, as a record; every other row listed."""
    rows = read_leaderboard(path)
    baselines = [name for name, _, values in rows if _is_baseline(values)]
    annotator = _annotator_of(path)
    version = _version(baselines[0] if len(baselines) == 1 else None, annotator, path, "$")
    baseline = baselines[0] if len(baselines) == 1 else ("text_davinci_003" if version == 1 else "gpt4_1106_preview")
    resolve = Resolver(settings)
    excluded = set(settings.exclude)
    batch = Batch()
    wanted: list[tuple[str, str, dict[str, Any], tuple[str, str | None]]] = []
    for name, where, values in rows:
        if _is_baseline(values):
            batch.notes.append(
                f"{where}: {name} is the baseline (itself against itself: 50%, every instruction a draw); not a result, not converted"
            )
            continue
        if name in excluded:
            batch.notes.append(f"{where}: {name} left out (--exclude)")
            continue
        resolved = resolve(name)
        if resolved is None:
            batch.warnings.append(unresolved(name, where))
            continue
        wanted.append((name, where, values, resolved))
    _excluded_notes(batch, settings, {name for name, _, _ in rows}, path)
    batch.warnings[:0] = resolve.problems
    models = {resolved[0] for _, _, _, resolved in wanted}
    if settings.model_id and len(models) > 1:
        raise InputError(
            path,
            "$",
            f"--model-id names one model; the leaderboard has {len(models)}",
            "name each model's id in a --models FILE instead",
        )
    if not wanted:
        raise _nothing(batch, path, "every row is the baseline or left out")
    if settings.source_organization == "unknown":
        settings = replace(settings, source_organization="tatsu-lab (AlpacaEval)")
    bench, title, _ = BENCHMARKS[version]
    for name, where, values, resolved in wanted:
        info = _info(name, resolved, settings, path, "$")
        model_id = info["id"]
        results = _results(version, values, annotator, baseline, None)
        stamp = sha256_text(repr((bench, model_id, results)))[:16]  # a leaderboard holds no time
        batch.outputs.append(
            Converted(
                bench,
                record(
                    evaluation_id=f"{bench}/{model_id.replace('/', '_')}/{stamp}",
                    evaluation_timestamp=None,
                    retrieved_timestamp=now_epoch(),
                    source_name=f"{title} leaderboard ({annotator or 'unknown annotator'})",
                    settings=settings,
                    library=("alpaca_eval", None),
                    model=info,
                    results=results,
                    source_type="documentation",
                    source_details={"converted_from": f"{path.name} line {where.rsplit(':', 1)[-1]}"},
                ),
                None,
            )
        )
    if wanted and len(wanted) < len(rows) - len(baselines):
        batch.notes.append(f"{display(path)}: {len(wanted)} of {len(rows) - len(baselines)} model rows converted")
    return batch


# --- one run: annotations ------------------------------------------------------------------------


def _preference(value: Any) -> float | None:
    """A preference in [1, 2] (0 is the old spelling of a draw); None for anything else
    (AlpacaEval drops those from the win rate)."""
    p = number(value)
    if p == 0.0:
        return 1.5
    return p if p is not None and 1.0 <= p <= 2.0 else None


def _sem(values: list[float]) -> float | None:
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) / math.sqrt(n)


def win_rates(preferences: list[float]) -> dict[str, Any]:
    """AlpacaEval's ``get_winrate`` (metrics/winrate.py, metrics/helpers.py) over valid preferences."""
    shifted = [p - 1 for p in preferences]
    out: dict[str, Any] = {
        "win_rate": sum(shifted) / len(shifted) * 100,
        "n_wins": sum(1 for s in shifted if s > 0.5),
        "n_wins_base": sum(1 for s in shifted if s < 0.5),
        "n_draws": sum(1 for p in preferences if p == 1.5),
        "n_total": len(shifted),
    }
    sem = _sem(shifted)
    if sem is not None:
        out["standard_error"] = sem * 100
    discrete = [1.5 if p == 1.5 else float(round(p)) for p in preferences]  # numpy's round: half to even
    out["discrete_win_rate"] = sum(d - 1 for d in discrete) / len(discrete) * 100
    return out


def _one(values: list[Any], file: Path, key: str) -> str:
    found = sorted({str(v) for v in values if v is not None})
    if len(found) != 1:
        raise InputError(
            file,
            f"$[*].{key}",
            f"expected one {key} in all annotations, found {len(found)}: {', '.join(found[:3])}"[:300],
            "give the annotations of one run (one model against one baseline)",
        )
    return found[0]


@dataclass
class Run:
    """One run's annotations, checked: the model (``generator_2``), the baseline, the judge."""

    file: Path
    items: list[dict[str, Any]]
    generator: str
    baseline: str
    annotator: str
    version: int


def read_run(annotations_file: Path) -> Run:
    items = read_json(annotations_file)
    if not isinstance(items, list) or not items:
        raise InputError(
            annotations_file,
            "$",
            f"expected a non-empty array of annotations, found {json_type(items)}",
            "give the annotations.json alpaca_eval wrote",
        )
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(
                annotations_file,
                format_path([i]),
                f"expected an annotation object, found {json_type(item)}",
                "the file is damaged",
            )
        for key in ("instruction", "output_2", "generator_2", "generator_1"):
            if not isinstance(item.get(key), str):
                raise InputError(
                    annotations_file,
                    format_path([i, key]),
                    f"missing or not a string ({json_type(item.get(key))})",
                    "the file is damaged or not AlpacaEval's annotations",
                )
    generator = _one([a["generator_2"] for a in items], annotations_file, "generator_2")
    baseline = _one([a["generator_1"] for a in items], annotations_file, "generator_1")
    annotator = (
        _one([a.get("annotator") for a in items], annotations_file, "annotator")
        if any(a.get("annotator") for a in items)
        else annotations_file.parent.name
    )
    version = _version(baseline, annotator, annotations_file, "$[*].generator_1")
    return Run(annotations_file, items, generator, baseline, annotator, version)


def convert_run(annotations_file: Path, settings: Settings, name: str | None = None) -> Batch:
    """One run: the record of its model (``name``, the results folder's name, else
    ``generator_2``), with its sidecar rows when asked."""
    run = read_run(annotations_file)
    model = name or run.generator
    resolved = Resolver(settings)(model)
    if resolved is None:
        raise Refused([unresolved(model, display(annotations_file), severity=ERROR)])
    return _converted_run(run, model, resolved, settings)


def _converted_run(run: Run, model: str, resolved: tuple[str, str | None], settings: Settings) -> Batch:
    annotations_file, items = run.file, run.items
    preferences = [_preference(a.get("preference")) for a in items]
    valid = [p for p in preferences if p is not None]
    if not valid:
        raise InputError(
            annotations_file,
            "$[*].preference",
            "no annotation has a preference between 1 and 2",
            "the judge produced no usable annotation",
        )
    values = win_rates(valid)
    glm = [number(a.get("glm_preference")) for a in items]
    board = _leaderboard_row(annotations_file.parent / LEADERBOARD, model)
    if all(g is not None for g in glm):
        lc = [g for g in glm if g is not None]
        values["length_controlled_winrate"] = sum(lc) / len(lc) * 100
        sem = _sem(lc)
        if sem is not None:
            values["lc_standard_error"] = sem * 100
    if board is not None:
        where, row = board
        if abs(row["win_rate"] - values["win_rate"]) > 1e-6:
            raise InputError(
                where,
                "$.win_rate",
                f"the leaderboard's win rate of {model} ({row['win_rate']}) is not the annotations' ({values['win_rate']})",
                f"the two files are of different runs; convert {ANNOTATIONS} alone, or the leaderboard alone",
            )
        for key in ("length_controlled_winrate", "lc_standard_error", "avg_length", "mode"):
            if key in row and key not in values:
                values[key] = row[key]
    batch = Batch()
    if run.version == 2 and "length_controlled_winrate" not in values:
        batch.warn(
            annotations_file,
            "$",
            "no length-controlled win rate: the annotations keep no glm_preference and no leaderboard.csv of the run is beside them",
            f"keep the run's {LEADERBOARD} beside {ANNOTATIONS} (AlpacaEval computes it from a fitted GLM; it is not recomputed here)",
        )
    if model != run.generator:
        batch.notes.append(
            f"{display(annotations_file)}: generator_2 is {run.generator!r}; the model is the results folder's {model!r}"
        )
    if run.generator == run.baseline:
        batch.notes.append(
            f"{display(annotations_file)}: {model} is the baseline itself (identical outputs: every instruction a draw, not judged)"
        )
    info = _info(model, resolved, settings, annotations_file, "$[*].generator_2")
    model_id = info["id"]
    bench, title, _ = BENCHMARKS[run.version]
    results = _results(run.version, values, run.annotator, run.baseline, None)
    dates = sorted({str(a["preference_date"]) for a in items if isinstance(a.get("preference_date"), str)})
    stamp = dates[-1] if dates else sha256_text(repr((bench, model_id, results)))[:16]
    eval_id = f"{bench}/{model_id.replace('/', '_')}/{stamp}"
    rows = None
    if settings.include_samples:
        rows = _rows(items, preferences, glm, eval_id, model_id, title)
    doc = record(
        evaluation_id=eval_id,
        evaluation_timestamp=dates[-1] if dates else None,
        retrieved_timestamp=now_epoch(),
        source_name=f"{title} ({run.annotator})",
        settings=settings,
        library=("alpaca_eval", None),
        model=info,
        results=results,
    )
    if rows and any(isinstance(a.get("dataset"), str) and a["dataset"] for a in items):
        doc["detailed_evaluation_results"] = {"additional_details": {CLUSTER_KEY: "dataset"}}
    batch.outputs.append(Converted(bench, doc, rows))
    ignored = sum(1 for p in preferences if p is None)
    if ignored:
        batch.notes.append(
            f"{display(annotations_file)}: {ignored} annotations without a preference in [1, 2] are left out of the win rate, as AlpacaEval leaves them out"
        )
    return batch


def _leaderboard_row(path: Path, model: str) -> tuple[str, dict[str, Any]] | None:
    if not path.is_file():
        return None
    for name, where, values in read_leaderboard(path):
        if name == model:
            return where, values
    return None


def sample_id(instruction: str) -> str:
    """An instruction's item id: the first :data:`SAMPLE_ID_HEX` hex digits of its sha256."""
    return hashlib.sha256(instruction.encode("utf-8")).hexdigest()[:SAMPLE_ID_HEX]


def _rows(
    items: list[dict[str, Any]],
    preferences: list[float | None],
    glm: list[float | None],
    eval_id: str,
    model_id: str,
    title: str,
) -> list[dict[str, Any]]:
    rows = []
    for i, (item, preference) in enumerate(zip(items, preferences, strict=True)):
        if preference is None:
            continue
        scores = [("win_rate", preference - 1)]
        if glm[i] is not None:
            scores.append(("length_controlled_winrate", float(glm[i])))  # type: ignore[arg-type]
        metadata: dict[str, str] = {}
        if isinstance(item.get("dataset"), str) and item["dataset"]:
            metadata["dataset"] = item["dataset"]
        price, seconds = number(item.get("price_per_example")), number(item.get("time_per_example"))
        if price is not None:
            metadata["judge_cost_usd"] = repr(price)
        if seconds is not None:
            metadata["judge_latency_ms"] = repr(seconds * 1000.0)
        instruction = item["instruction"]
        for result_id, score in scores:
            rows.append(
                {
                    "schema_version": SCHEMA_VERSION,
                    "evaluation_id": eval_id,
                    "model_id": model_id,
                    "evaluation_name": title,
                    "evaluation_result_id": result_id,
                    "sample_id": sample_id(instruction),
                    "sample_hash": sha256_text(instruction),
                    "interaction_type": "single_turn",
                    "input": {
                        "raw": instruction,
                        "formatted": None,
                        "reference": [str(item.get("output_1") or "")],
                        "choices": None,
                    },
                    "output": {"raw": [item["output_2"]], "reasoning_trace": None},
                    "messages": None,
                    "answer_attribution": [attribution(repr(preference), "llm_judge")],
                    "evaluation": {
                        "score": score,
                        "is_correct": score > 0.5,
                        "num_turns": None,
                        "tool_calls_count": None,
                    },
                    "token_usage": None,
                    "performance": None,
                    "error": None,
                    "metadata": metadata or None,
                }
            )
    return rows


# --- results folders: <model>/<annotator>/annotations.json ---------------------------------------


def _subfolders(path: Path) -> list[Path]:
    try:
        with os.scandir(path) as it:
            return sorted(Path(e.path) for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def find_runs(path: Path) -> list[tuple[str, Path]]:
    """(model, annotations file) of every run under ``path``: alpaca_eval's ``results/``
    (``<model>/<annotator>/annotations.json``) or one model's folder of it
    (``<annotator>/annotations.json``, the model being the folder's name)."""
    own = [(path.resolve().name, sub / ANNOTATIONS) for sub in _subfolders(path) if (sub / ANNOTATIONS).is_file()]
    if own:
        return own
    return [
        (model.name, sub / ANNOTATIONS)
        for model in _subfolders(path)
        for sub in _subfolders(model)
        if (sub / ANNOTATIONS).is_file()
    ]


def convert_results(runs: list[tuple[str, Path]], settings: Settings) -> Batch:
    """Every run of alpaca_eval's results folders: one record per model and judge; a run
    whose model does not resolve, or whose files cannot be read, is listed (a warning) and
    the others are converted."""
    batch = Batch()
    resolve = Resolver(settings)
    excluded = set(settings.exclude)
    for model, annotations_file in runs:
        if model in excluded:
            batch.notes.append(f"{display(annotations_file)}: {model} left out (--exclude)")
            continue
        resolved = resolve(model)
        if resolved is None:
            batch.warnings.append(unresolved(model, display(annotations_file)))
            continue
        try:
            one = _converted_run(read_run(annotations_file), model, resolved, settings)
        except Refused as exc:
            batch.warnings += [_as(f, "warning", "convert", ": this run is not converted") for f in exc.findings]
            continue
        batch.outputs += one.outputs
        batch.warnings += one.warnings
        batch.notes += one.notes
    _excluded_notes(batch, settings, {model for model, _ in runs}, runs[0][1].parent.parent)
    batch.warnings[:0] = resolve.problems
    if not batch.outputs:
        raise _nothing(batch, runs[0][1], "every run is left out")
    return batch
