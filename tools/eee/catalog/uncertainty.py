"""An uncertainty for every score the catalogue holds, labelled with where it came from.

In this order, and never invented (:func:`choose`):

1. ``record``: the record's own uncertainty, as given: its standard error (with its
   method) and its confidence interval (with its level); a standard error alone gives the
   normal interval score +- z * se at 95% (said in the method), cut to the score's bounds;
2. ``items``: computed from the result's own items in its sidecar
   (:func:`eee.stats.intervals.from_items`: repeated samples averaged within an item,
   Wilson for binary items, t for continuous ones, clustered by the record's declared
   cluster key), on the score's scale (items on [0, 1] for a score in percent are scaled by
   100); used only when the items give the stated score (:func:`eee.store.aggregation.check`:
   within one item's worth and the score's rounding, as many items as the record's
   ``num_samples`` where it gives one): an interval around another number would be false
   precision. Where the items *disagree* with the score, no interval is given at all (not
   even the record's own): the score itself is in doubt;
3. ``count``: a proportion whose number of samples the record gives
   (``uncertainty.num_samples``) and nothing else: the Wilson interval of the count. A
   proportion is a share of items counted right: an ``accuracy`` metric kind or one of
   :data:`eee.store.aggregation.PROPORTIONS`, on [0, 1] or in percent on [0, 100]; a bounded score is not a
   proportion for being bounded (F1, a calibration error);
4. ``none``: nothing above applies.
"""

from __future__ import annotations

from typing import Any

from eee.stats.intervals import LEVEL, Estimate, normal_interval, wilson_count
from eee.store.aggregation import AGREES, DISAGREES, PROPORTIONS, check, is_proportion, scale

__all__ = ["PROPORTIONS", "choose", "from_count", "from_items", "from_record", "proportion_scale"]

RECORD, ITEMS, COUNT, NONE = "record", "items", "count", "none"
SOURCES = (RECORD, ITEMS, COUNT, NONE)
COLUMNS: list[tuple[str, str, str]] = [
    ("se", "float64", "the score's standard error, from uncertainty_source"),
    ("ci_low", "float64", "lower end of the score's confidence interval, from uncertainty_source"),
    ("ci_high", "float64", "upper end of the score's confidence interval, from uncertainty_source"),
    ("ci_level", "float64", "the interval's confidence level (0.95 for 95%; null when the record gives none)"),
    (
        "uncertainty_source",
        "string",
        "where se and the interval come from: record (as the record gives them), items (computed from the result's "
        "items in its sidecar), count (Wilson interval of a proportion from its number of samples), none",
    ),
    ("uncertainty_method", "string", "how: the record's method, or wilson, t, cluster-robust t, ..."),
    ("n_items", "int64", "items of the result in its sidecar (repeated samples counted once; null without a sidecar)"),
    (
        "items_agree",
        "bool",
        "whether the result's items give its stated score, within one item's worth and the stated score's rounding "
        "(eee.store.aggregation.check, the rule items-agree); null: not checked (no items, or a metric whose score "
        "is not recomputed from items: items_note says why)",
    ),
    ("items_score", "float64", "the score its items give, the way its metric declares (null: not recomputed)"),
    (
        "items_note",
        "string",
        "why the score was not checked against its items, or how far they disagree (null: they agree, or no items)",
    ),
]


def _f(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if value == value and abs(value) != float("inf") else None


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def proportion_scale(config: dict[str, Any]) -> float | None:
    """The scale (1 or 100) of a proportion metric, None when the result is not a proportion."""
    if not is_proportion(config):
        return None
    lo, hi = _f(config.get("min_score")), _f(config.get("max_score"))
    if lo == 0.0 and hi == 1.0:
        return 1.0
    if lo == 0.0 and hi == 100.0:
        return 100.0
    return None


def _row(
    source: str, se: float | None, low: float | None, high: float | None, level: float | None, method: str | None
) -> dict[str, Any]:
    return {
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "ci_level": level,
        "uncertainty_source": source,
        "uncertainty_method": method,
    }


def _clip(low: float, high: float, config: dict[str, Any]) -> tuple[float, float]:
    """An interval we derived cut to the score's declared bounds (what lies beyond is no information)."""
    lo, hi = _f(config.get("min_score")), _f(config.get("max_score"))
    return (low if lo is None else max(lo, low)), (high if hi is None else min(hi, high))


def from_record(
    score: float | None, uncertainty: dict[str, Any], config: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The record's own uncertainty (source ``record``), or None when it gives none; a
    standard error alone gives the normal interval, cut to the score's bounds."""
    se_part = _d(uncertainty.get("standard_error"))
    ci = _d(uncertainty.get("confidence_interval"))
    se = _f(se_part.get("value"))
    low, high = _f(ci.get("lower")), _f(ci.get("upper"))
    if low is not None and high is not None:
        level = _f(ci.get("confidence_level"))
        method = ci.get("method") if isinstance(ci.get("method"), str) else None
        if se is not None and isinstance(se_part.get("method"), str):
            method = f"{method or 'interval as given'}; standard error: {se_part['method']}"
        return _row(RECORD, se, low, high, level, method or "as given")
    if se is not None:
        method = se_part.get("method") if isinstance(se_part.get("method"), str) else "as given"
        if score is None:
            return _row(RECORD, se, None, None, None, f"standard error: {method}")
        lo, hi = _clip(*normal_interval(score, se, LEVEL), config or {})
        return _row(RECORD, se, lo, hi, LEVEL, f"standard error: {method}; interval: score +- z * se (normal)")
    return None


def from_items(estimate: Estimate, factor: float) -> dict[str, Any]:
    e = estimate.scaled(factor)
    method = e.method + (f", {e.clusters} clusters" if e.clusters else "")
    return _row(ITEMS, e.se, e.low, e.high, e.level, method)


def from_count(score: float | None, config: dict[str, Any], n: Any) -> dict[str, Any] | None:
    """The Wilson interval of a proportion from its count (source ``count``), or None."""
    factor = proportion_scale(config)
    if factor is None or score is None or not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        return None
    p = score / factor
    if not 0.0 <= p <= 1.0:
        return None
    e = wilson_count(p * n, n).scaled(factor)  # the count is p * n, fractional when the score was rounded
    return _row(COUNT, e.se, e.low, e.high, e.level, f"wilson, from the score and num_samples = {n}")


WITHHELD = (
    "withheld: the result's items do not give its stated score (items_note); an interval would be false precision"
)


def choose(score: float | None, result: dict[str, Any], items: Any = None) -> dict[str, Any]:
    """The uncertainty columns of one result: the first of record, items, count, none.
    ``items``: what the result's sidecar rows gave (:class:`eee.catalog.items.ResultItems`), or None.

    The result's stated score is checked against its items (:func:`eee.store.aggregation.check`,
    the same function as the rule ``items-agree``): where they disagree, no interval is given
    at all (source ``none``, the method says it was withheld), neither the record's own nor
    one computed from items or a count."""
    config = _d(result.get("metric_config"))
    uncertainty = _d(_d(result.get("score_details")).get("uncertainty"))
    out: dict[str, Any] = {"n_items": None, "items_agree": None, "items_score": None, "items_note": None}
    factor = scale(config)
    usable = None
    if items is not None and items.estimate is not None:
        out["n_items"] = items.estimate.n
    if items is not None:
        verdict = check(result, items.items)
        out["items_agree"] = verdict.agrees
        out["items_score"] = verdict.recomputed
        out["items_note"] = verdict.note()
        if verdict.status == DISAGREES:
            return {**_row(NONE, None, None, None, None, WITHHELD), **out}
        if verdict.status == AGREES and items.estimate is not None:
            usable = items.estimate
    chosen = (
        from_record(score, uncertainty, config)
        or (from_items(usable, factor) if usable is not None else None)
        or from_count(score, config, uncertainty.get("num_samples"))
        or _row(NONE, None, None, None, None, None)
    )
    return {**chosen, **out}
