"""What a metric's name says about its identity, range and direction.

Harness logs report a metric's value and hardly ever its range, so the range and the
``metric_id`` come from the metric's definition. The tables below hold the same facts the
reference converters use (so records from both join on ``metric_id``), written out here:

- a metric the metric registry carries gets its canonical id (``exact_match`` ->
  ``exact-match``); any other gets ``<harness>.<name>`` and ``metric_id_status:
  unregistered``; both say which registry revision they were resolved against;
- a metric with a known range is ``continuous`` with ``min_score``/``max_score``; one
  without gets no bounds and ``bounds_status: unknown`` (claiming [0, 1] for an unbounded
  metric would be false, while "not provided" is true), and, when its direction is not
  known either, ``polarity: unknown``.

A name decorated with a parameter (HELM's ``exact_match@5``) takes its range and kind from
the undecorated name, but not its id: the best of five completions is another quantity.
"""

from __future__ import annotations

import math
import re
from typing import Any

REGISTRY_REVISION = "8b83e9c"

_INF = math.inf

SHARED_BOUNDS: dict[str, tuple[float, float]] = {
    "accuracy": (0.0, 1.0),
    "acc": (0.0, 1.0),
    "acc_norm": (0.0, 1.0),
    "em": (0.0, 1.0),
    "exact_match": (0.0, 1.0),
    "f1": (0.0, 1.0),
    "f1_score": (0.0, 1.0),
    "precision": (0.0, 1.0),
    "recall": (0.0, 1.0),
    "mcc": (-1.0, 1.0),
    "brier_score": (0.0, 2.0),  # the multi-class Brier score sums over classes
    "std": (0.0, _INF),
    "stddev": (0.0, _INF),
    "stderr": (0.0, _INF),
    "bootstrap_stderr": (0.0, _INF),
    "var": (0.0, _INF),
}

HARNESS_BOUNDS: dict[str, dict[str, tuple[float, float]]] = {
    "helm": {
        name: (0.0, 1.0)
        for name in (
            "exact_match",
            "quasi_exact_match",
            "prefix_exact_match",
            "quasi_prefix_exact_match",
            "f1_score",
            "rouge_l",
            "bleu_1",
            "bleu_4",
            "classification_macro_f1",
            "classification_micro_f1",
            "ifeval_strict_accuracy",
            "chain_of_thought_correctness",
            "math_equiv",
            "math_equiv_chain_of_thought",
        )
    },
    "lm-evaluation-harness": {
        "mc1": (0.0, 1.0),
        "mc2": (0.0, 1.0),
        "chrf": (0.0, 100.0),
        "rouge1": (0.0, 1.0),
        "rouge2": (0.0, 1.0),
        "rougeL": (0.0, 1.0),
        "rougeLsum": (0.0, 1.0),
        "bleu": (0.0, 100.0),  # sacrebleu's scale, not the registry's proportion
        "ter": (0.0, _INF),
        "word_perplexity": (1.0, _INF),
        "byte_perplexity": (1.0, _INF),
        "perplexity": (1.0, _INF),
        "bits_per_byte": (0.0, _INF),
    },
    "inspect_ai": {},
    "lighteval": {
        "extractive_match": (0.0, 1.0),
        "truthfulqa_mc1": (0.0, 1.0),
        "truthfulqa_mc2": (0.0, 1.0),
        "rouge1": (0.0, 1.0),
        "rouge2": (0.0, 1.0),
        "rougeL": (0.0, 1.0),
        "rougeLsum": (0.0, 1.0),
        "bleu": (0.0, 100.0),  # sacrebleu's scale
        "chrf": (0.0, 100.0),
        "ter": (0.0, _INF),
        "ppl": (1.0, _INF),
        "word_perplexity": (1.0, _INF),
        "byte_perplexity": (1.0, _INF),
        "bits_per_byte": (0.0, _INF),
    },
    "alpaca_eval": {
        "win_rate": (0.0, 100.0),
        "length_controlled_winrate": (0.0, 100.0),
        "discrete_win_rate": (0.0, 100.0),
    },
}

LOWER_IS_BETTER = frozenset(
    {
        "bits_per_byte",
        "brier_score",
        "byte_perplexity",
        "calibration_error",
        "cer",
        "ece",
        "perplexity",
        "ppl",
        "ter",
        "wer",
        "word_perplexity",
    }
)

DISPERSION = frozenset({"std", "stddev", "stderr", "bootstrap_stderr", "var"})

CANONICAL_IDS: dict[str, str] = {
    "acc": "accuracy",
    "acc_norm": "normalized-accuracy",
    "accuracy": "accuracy",
    "bleu": "bleu",
    "bleu_1": "bleu-1",
    "bleu_4": "bleu-4",
    "cer": "cer",
    "em": "exact-match",
    "exact_match": "exact-match",
    "f1": "f1",
    "f1_score": "f1",
    "ppl": "perplexity",
    "perplexity": "perplexity",
    "precision": "precision",
    "recall": "recall",
    "rouge1": "rouge-1",
    "rouge2": "rouge-2",
    "rougeL": "rouge-l",
    "rouge_l": "rouge-l",
    "wer": "wer",
}

KINDS: dict[str, str] = {
    **dict.fromkeys(("extractive_match", "truthfulqa_mc1", "truthfulqa_mc2"), "accuracy"),
    **dict.fromkeys(("win_rate", "length_controlled_winrate", "discrete_win_rate"), "win_rate"),
    **dict.fromkeys(
        (
            "acc",
            "acc_norm",
            "accuracy",
            "chain_of_thought_correctness",
            "em",
            "exact_match",
            "ifeval_strict_accuracy",
            "math_equiv",
            "math_equiv_chain_of_thought",
            "mc1",
            "prefix_exact_match",
            "quasi_exact_match",
            "quasi_prefix_exact_match",
        ),
        "accuracy",
    ),
    **dict.fromkeys(("classification_macro_f1", "classification_micro_f1", "f1", "f1_score"), "f1"),
    "precision": "precision",
    "recall": "recall",
    "mcc": "correlation",
    "brier_score": "brier_score",
    "calibration_error": "calibration_error",
    "ece": "calibration_error",
    **dict.fromkeys(
        ("bleu", "bleu_1", "bleu_4", "chrf", "rouge1", "rouge2", "rougeL", "rougeLsum", "rouge_l"), "text_overlap"
    ),
    **dict.fromkeys(("cer", "ter", "wer"), "edit_distance"),
    **dict.fromkeys(("byte_perplexity", "perplexity", "ppl", "word_perplexity"), "perplexity"),
    "bits_per_byte": "compression_rate",
    **dict.fromkeys(("std", "stddev", "stderr", "var", "bootstrap_stderr"), "dispersion"),
}

# Names whose harness scale differs from the registry entry's, so they keep a namespaced id.
NOT_CANONICAL: dict[str, frozenset[str]] = {"lm-evaluation-harness": frozenset({"bleu"})}

UNITS: dict[str, str] = {"bits_per_byte": "bits_per_byte", "chrf": "percent", "ter": "percent"}

_AT_K = re.compile(r"^(?P<base>.+)@(?P<k>\d+)$")


def split_parameter(name: str) -> tuple[str, dict[str, Any] | None]:
    """``exact_match@5`` -> (``exact_match``, {"k": 5.0}); other names unchanged."""
    match = _AT_K.match(name)
    if not match:
        return name, None
    return match.group("base"), {"k": float(match.group("k"))}


def _limit(value: float) -> float | str:
    if value == _INF:
        return "Infinity"
    if value == -_INF:
        return "-Infinity"
    return value


def metric_config(
    name: str,
    harness: str,
    description: str,
    lower_is_better: bool | None = None,
) -> dict[str, Any]:
    """A ``metric_config`` for metric ``name`` reported by ``harness``.

    ``lower_is_better`` is what the log itself says (lm-eval's ``higher_is_better``); when
    None the direction comes from the metric's definition, and is marked unknown when the
    definition does not fix it.
    """
    lookup, parameters = split_parameter(name)
    bounds = {**SHARED_BOUNDS, **HARNESS_BOUNDS.get(harness, {})}.get(lookup)
    canonical = None if name in NOT_CANONICAL.get(harness, ()) else CANONICAL_IDS.get(name)
    details: dict[str, str] = {}
    if lookup in DISPERSION:
        details["polarity"] = "not_applicable"
    known_direction = lower_is_better is not None or lookup in LOWER_IS_BETTER or lookup in DISPERSION
    if bounds is None and not known_direction:
        details["polarity"] = "unknown"
    if bounds is None:
        details["bounds_status"] = "unknown"
    details["metric_id_registry_revision"] = REGISTRY_REVISION
    if canonical is None:
        details["metric_id_status"] = "unregistered"
    config: dict[str, Any] = {
        "evaluation_description": description,
        "metric_id": canonical or f"{harness}.{name}",
        "metric_name": name,
    }
    kind = KINDS.get(lookup)
    if kind:
        config["metric_kind"] = kind
    unit = UNITS.get(lookup) or {(0.0, 1.0): "proportion", (0.0, 100.0): "percent"}.get(bounds or (0.0, 0.0))
    if unit:
        config["metric_unit"] = unit
    if parameters:
        config["metric_parameters"] = parameters
    config["lower_is_better"] = bool(lower_is_better) if lower_is_better is not None else lookup in LOWER_IS_BETTER
    if bounds is not None:
        config["score_type"] = "continuous"
        config["min_score"] = _limit(bounds[0])
        config["max_score"] = _limit(bounds[1])
    config["additional_details"] = details
    return config


def has_unknown_bounds(config: dict[str, Any]) -> bool:
    return config.get("additional_details", {}).get("bounds_status") == "unknown"


def unknown_bounds_details(results: list[dict[str, Any]]) -> dict[str, str] | None:
    """``source_metadata.additional_details`` counting the results whose range is unknown."""
    count = sum(1 for r in results if has_unknown_bounds(r["metric_config"]))
    return {"metrics_with_unknown_bounds": str(count)} if count else None
