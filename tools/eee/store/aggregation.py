"""How a result's score comes from its items, declared once per metric kind, and whether the
score a record states is what its own items give.

A record states a score; its sidecar holds the items that score was computed from. The
two can be checked against each other only where the metric says how the items make the
score. That is declared here, once per metric kind (:data:`AGGREGATIONS`), with the kinds
whose score is **not** a function of per-item values the store can recompute, each with its
reason (:data:`NOT_RECOMPUTED`). Everything else is left unchecked with a reason, never
guessed (:func:`check`).

Every aggregation declared here is a mean over items: the items' values (the rows'
``evaluation.score``; repeated samples of one item averaged within the item first, as
:func:`eee.stats.intervals.item_means` does), averaged over items, on the score's scale
(items on [0, 1] behind a score in percent are scaled by 100). What differs from kind to
kind is what an item's value is (a 0/1 correct, a preference share, any score) and where it
must lie.

A result's items **agree** with its stated score when the two differ by no more than one
item's worth (the most one item can move the mean: the metric's range over the number of
items) plus the rounding of the stated score (half a unit of its last written digit: a
table that prints 71.2 says only that the score lies within 71.15 .. 71.25). Its items
**disagree** beyond that: a finding (rule ``items-agree``, :mod:`eee.rules.agreement`), and no
interval is computed from them (:mod:`eee.catalog.uncertainty`). Results that cannot be
recomputed are **skipped**, with one of the reasons of :data:`SKIPS`:

- the metric's aggregation is not a mean of item values (F1, BLEU, perplexity, ...), or it
  declares none the store knows;
- pass@k with k > 1 (estimated per item from several samples, not their mean);
- no row of the sidecar belongs to the result;
- the sidecar is partial: the record's ``num_samples`` differs from the items (and from the
  rows) the sidecar holds for the result (a sidecar of a few of a run's samples describes
  those few, not the run);
- the items lie outside the range an item of the metric can take (another scale);
- the record states no finite score.

The validator (``items-agree``), the catalogue (``items_agree``, ``items_score``,
``items_note``) and the site call :func:`check`; nothing else decides it.
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

AGREES, DISAGREES, SKIPPED = "agrees", "disagrees", "skipped"


class Aggregation(NamedTuple):
    """How items make a score: the mean of their values (each within ``item_range`` when
    that is declared, on the items' scale), said in words (``name``, ``how``)."""

    name: str
    how: str
    unit_items: bool  # each item's value lies in [0, 1] (a share); else within the metric's own bounds


PROPORTION = Aggregation(
    "proportion correct",
    "the share of items answered correctly: the mean of the items' scores (1 right, 0 wrong; repeated samples "
    "averaged within their item first)",
    True,
)
WIN_RATE = Aggregation(
    "win rate from preferences",
    "the mean of the items' preference shares (1 a win over the baseline, 0 a loss, 0.5 a draw; AlpacaEval's "
    "preference - 1), repeated samples averaged within their item first",
    True,
)
MEAN = Aggregation(
    "mean of scores",
    "the mean of the items' scores, repeated samples averaged within their item first",
    False,
)

# metric_kind -> how its score is made from its items
AGGREGATIONS: dict[str, Aggregation] = {
    "accuracy": PROPORTION,
    "pass_rate": PROPORTION,
    "win_rate": WIN_RATE,
    "mean": MEAN,
}

# metric ids and names whose score is a share of items counted right (the metric registry's
# canonical ids and the harnesses' names), for a result that declares no metric_kind; the
# catalogue's Wilson interval from a count reads the same list
PROPORTIONS = frozenset(
    {
        "accuracy",
        "acc",
        "exact-match",
        "exact_match",
        "em",
        "normalized-accuracy",
        "acc_norm",
        "quasi_exact_match",
        "prefix_exact_match",
        "quasi_prefix_exact_match",
        "pass@1",
        "pass_at_1",
    }
)
# metric names (or the last part of a metric_id) that say "the mean of the items' scores"
# (Inspect's mean() metric), for a result that declares no metric_kind
MEANS = frozenset({"mean"})

_PASS_AT = re.compile(r"^pass(?:@|_at_?|_)?(?P<k>\d+)?$")  # pass, pass@k, pass_at_k

# metric_kind -> why its score is not recomputed from items
NOT_RECOMPUTED: dict[str, str] = {
    "f1": "an F1 is computed from counts pooled over the items (corpus level), not a mean of item values",
    "precision": "a precision is computed from counts pooled over the items, not a mean of item values",
    "recall": "a recall is computed from counts pooled over the items, not a mean of item values",
    "correlation": "a correlation (MCC) is computed over all items at once, not a mean of item values",
    "text_overlap": "BLEU, chrF and ROUGE are computed from n-gram counts pooled over the items (corpus level)",
    "edit_distance": "an error rate (WER, CER, TER) pools edits and lengths over the items",
    "perplexity": "a perplexity is the exponential of a per-token mean: items weigh by their length",
    "compression_rate": "bits per byte weigh items by their length",
    "calibration_error": "a calibration error is computed over bins of all items",
    "brier_score": "the sidecar's per-item scores are not the per-item Brier terms",
    "auroc": "an AUROC ranks all items at once",
    "elo": "a rating is fitted from comparisons between models, not a mean of items",
    "dispersion": "a spread of the scores (std, stderr), not a level the items average to",
    "cost": "a cost may be a total or a per-item mean: the metric does not say which",
    "duration": "a duration may be a total or a per-item mean: the metric does not say which",
}

# why a result was not checked, by key (what a report counts); the texts take the values named
SKIPS: dict[str, str] = {
    "no-score": "the record states no finite score",
    "no-items": "no row of the sidecar belongs to this result",
    "not-a-mean": "{kind}: {why}",
    "unknown": "the metric declares no aggregation the store knows (metric_kind {kind}): nothing is guessed",
    "pass-at-k": "pass@k with k > 1 is estimated per item from its samples, not their mean",
    "partial": "a partial sidecar: {n} items ({rows} rows) of the {declared} samples the record declares "
    "(num_samples); it describes those items, not the run",
    "scale": "the items lie in [{low}, {high}], outside what an item of this metric can be ({lo} .. {hi}): "
    "another scale",
}


class Items(NamedTuple):
    """What a result's items give: ``n`` items (repeated samples counted once), ``rows``
    rows with a score, the ``mean`` over items of each item's mean value, the smallest and
    largest row value."""

    n: int
    rows: int
    mean: float
    low: float
    high: float


class Check(NamedTuple):
    """One result's stated score against its items: ``status`` (agrees, disagrees, skipped),
    the ``stated`` and ``recomputed`` scores (on the score's scale), the items counted, the
    ``tolerance`` (one item's worth plus the stated score's rounding), the aggregation used,
    and for a skipped result the key (:data:`SKIPS`) and text of its reason."""

    status: str
    stated: float | None = None
    recomputed: float | None = None
    n: int | None = None
    tolerance: float | None = None
    aggregation: Aggregation | None = None
    skip: str | None = None
    reason: str | None = None

    @property
    def agrees(self) -> bool | None:
        """True, False, or None when not checked."""
        return None if self.status == SKIPPED else self.status == AGREES

    def note(self) -> str | None:
        """What the catalogue and the site say of the check: why it was skipped, or how far
        the items are from the score; None when they agree."""
        if self.status == SKIPPED:
            return f"not checked: {self.reason}"
        if self.status == DISAGREES:
            return self.message()
        return None

    def message(self) -> str:
        """The finding's text: both numbers, the item count, what the tolerance allowed."""
        assert self.stated is not None and self.recomputed is not None and self.aggregation is not None
        return (
            f"the stated score {_num(self.stated)} is not what its {self.n:,} items give: "
            f"{_num(self.recomputed)} ({self.aggregation.name}), "
            f"a difference of {_num(abs(self.stated - self.recomputed))}, more than one item's worth and the "
            f"rounding of the stated score allow ({_num(self.tolerance)})"
        )


def _num(x: float | None) -> str:
    return "?" if x is None else f"{x:.10g}"


def _f(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def scale(config: dict[str, Any]) -> float:
    """How many score units one unit of an item's [0, 1] value is: 100 for a score in percent
    (its range [0, 100] or its unit ``percent``), else 1."""
    if config.get("metric_unit") == "percent" or _f(config.get("max_score")) == 100.0:
        return 100.0
    return 1.0


def names_of(config: dict[str, Any]) -> set[str]:
    """A metric's names, lowercased: its metric_id, metric_name and the last dotted part of its id."""
    out: set[str] = set()
    for key in ("metric_id", "metric_name"):
        value = config.get(key)
        if isinstance(value, str) and value:
            out.add(value.lower())
            out.add(value.rsplit(".", 1)[-1].lower())
    return out


def is_proportion(config: dict[str, Any]) -> bool:
    """Whether a result's score is a share of items counted right (kind ``accuracy`` or
    ``pass_rate``, or one of :data:`PROPORTIONS` when it declares no kind)."""
    kind = config.get("metric_kind")
    if isinstance(kind, str):
        return AGGREGATIONS.get(kind) is PROPORTION
    return bool(names_of(config) & PROPORTIONS)


def aggregation_of(config: dict[str, Any]) -> tuple[Aggregation | None, str | None, str | None]:
    """(the aggregation of a result's metric, or None with the skip key and its text)."""
    kind = config.get("metric_kind")
    names = names_of(config)
    k = _f(_d(config.get("metric_parameters")).get("k"))
    for name in names:
        said = _PASS_AT.match(name)
        if said and (int(said.group("k") or 1) > 1 or (said.group("k") is None and k is not None and k > 1)):
            return None, "pass-at-k", SKIPS["pass-at-k"]
    if isinstance(kind, str) and kind:
        if kind in AGGREGATIONS:
            return AGGREGATIONS[kind], None, None
        if kind in NOT_RECOMPUTED:
            return None, "not-a-mean", SKIPS["not-a-mean"].format(kind=kind, why=NOT_RECOMPUTED[kind])
        return None, "unknown", SKIPS["unknown"].format(kind=repr(kind))
    if names & PROPORTIONS:
        return PROPORTION, None, None
    if names & MEANS:
        return MEAN, None, None
    return None, "unknown", SKIPS["unknown"].format(kind="none")


def rounding(score: float) -> float:
    """Half a unit of the last digit the score is written with (its shortest repr: the
    digits a JSON file or a table gave): 0.05 for 71.2, 0.5 for 50 (or 50.0), 5e-17 for
    0.1234567890123456."""
    text = repr(float(score))
    mantissa, _, exponent = text.partition("e")
    if not mantissa[-1:].isdigit():  # inf, nan: no digits
        return 0.0
    fraction = mantissa.partition(".")[2]
    digits = 0 if fraction in ("", "0") else len(fraction)
    return 0.5 * 10.0 ** ((int(exponent) if exponent else 0) - digits)


class Tally:
    """A sidecar's rows gathered per result of its record, one row at a time (:meth:`add`),
    into what :func:`check` needs (:meth:`items`): per item the sum of its scores (and the
    count of an item seen more than once), per result the rows and the smallest and largest
    score. Memory follows the items of the sidecar (about 100 bytes an item). The validator (``items-agree``)
    and the catalogue (its items table's pass) feed it the rows they read anyway, so a
    sidecar is read once; a row belongs to the result :func:`eee.store.items.result_lookup`
    says, is one item by :func:`eee.store.items.item_id`, and counts when its
    ``evaluation.score`` is a number."""

    __slots__ = ("_acc", "_lookup", "_only")

    def __init__(self, doc: dict[str, Any]) -> None:
        from eee.store.items import result_lookup

        self._lookup, self._only = result_lookup(doc)
        # result index -> [{item: sum of its scores}, {item: count, for items seen more than once}, rows, low, high]
        self._acc: dict[int, list[Any]] = {}

    def add(self, row: dict[str, Any]) -> None:
        ev = row.get("evaluation")
        if ev.__class__ is not dict:
            return
        score = ev.get("score")
        if score.__class__ is not float and score.__class__ is not int:  # a bool is neither
            return
        key = row.get("evaluation_result_id") or row.get("evaluation_name") or ""
        at = self._lookup.get(key, self._only) if key.__class__ is str else self._only
        if at is None:
            return
        item = row.get("sample_id")
        if item.__class__ is int:
            item = str(item)
        elif item.__class__ is not str or not item:
            item = row.get("sample_hash")
            if item.__class__ is not str or not item:
                return
        acc = self._acc.get(at)
        if acc is None:
            self._acc[at] = [{item: score}, {}, 1, score, score]
            return
        sums = acc[0]
        before = sums.get(item)
        if before is None:
            sums[item] = score
        else:  # a repeated sample of the item (an epoch): counted apart, only for the items that repeat
            sums[item] = before + score
            acc[1][item] = acc[1].get(item, 1) + 1
        acc[2] += 1
        if score < acc[3]:
            acc[3] = score
        elif score > acc[4]:
            acc[4] = score

    def items(self, index: int) -> Items | None:
        """The :class:`Items` of the record's result ``index`` (None: no row of it)."""
        acc = self._acc.get(index)
        if acc is None:
            return None
        sums, repeats = acc[0], acc[1]
        if repeats:
            mean = math.fsum(total / repeats.get(item, 1) for item, total in sums.items()) / len(sums)
        else:
            mean = math.fsum(sums.values()) / len(sums)
        return Items(len(sums), acc[2], mean, float(acc[3]), float(acc[4]))

    def checks(self, doc: dict[str, Any]) -> list[tuple[int, Check]]:
        """(index, :func:`check`) of every result of ``doc`` (the record the rows were told of)."""
        results = doc.get("evaluation_results")
        if not isinstance(results, list):
            return []
        return [(i, check(r, self.items(i))) for i, r in enumerate(results) if isinstance(r, dict)]


def check(result: dict[str, Any], items: Items | None) -> Check:
    """A result's stated score against what its ``items`` give (None: no row of its own in
    the sidecar), the way its metric declares (:func:`aggregation_of`)."""
    config = _d(result.get("metric_config"))
    details = _d(result.get("score_details"))
    stated = _f(details.get("score"))
    if stated is None:
        return Check(SKIPPED, skip="no-score", reason=SKIPS["no-score"])
    if items is None or items.n == 0:
        return Check(SKIPPED, stated, skip="no-items", reason=SKIPS["no-items"])
    aggregation, key, why = aggregation_of(config)
    if aggregation is None:
        return Check(SKIPPED, stated, n=items.n, skip=key, reason=why)
    declared = _d(details.get("uncertainty")).get("num_samples")
    counted = isinstance(declared, int) and not isinstance(declared, bool) and declared > 0
    if counted and declared not in (items.n, items.rows):
        reason = SKIPS["partial"].format(n=f"{items.n:,}", rows=f"{items.rows:,}", declared=f"{declared:,}")
        return Check(SKIPPED, stated, n=items.n, aggregation=aggregation, skip="partial", reason=reason)
    factor = scale(config)
    lo, hi = _f(config.get("min_score")), _f(config.get("max_score"))
    if aggregation.unit_items or factor != 1.0:
        item_lo, item_hi = 0.0, 1.0
    else:
        item_lo = lo if lo is not None else -math.inf
        item_hi = hi if hi is not None else math.inf
    if items.low < item_lo or items.high > item_hi:
        reason = SKIPS["scale"].format(low=_num(items.low), high=_num(items.high), lo=_num(item_lo), hi=_num(item_hi))
        return Check(SKIPPED, stated, n=items.n, aggregation=aggregation, skip="scale", reason=reason)
    span = item_hi - item_lo if math.isfinite(item_hi - item_lo) else items.high - items.low
    recomputed = factor * items.mean
    tolerance = factor * span / items.n + rounding(stated) + 1e-9 * max(1.0, abs(stated))
    status = AGREES if abs(stated - recomputed) <= tolerance else DISAGREES
    return Check(status, stated, recomputed, items.n, tolerance, aggregation)
