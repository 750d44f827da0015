"""The uncertainty of one score from its items.

The order of operations is fixed, and every result says which method it used:

1. **repeated samples are averaged within their item first** (:func:`item_means`): five
   samples of one question are one item whose value is the share of them that passed, not
   five independent items (that would shrink the interval by sqrt(5) for nothing);
2. **a proportion of binary items** gets a Wilson score interval (:func:`wilson`), which
   stays inside [0, 1] and keeps its coverage near 0 and 1 where the normal interval does
   not; when items are clustered, the Wilson interval is taken at the effective sample size
   ``n_eff = p (1 - p) / V_cluster`` (Korn and Graubard 1998), never above n;
3. **a continuous score** (and a proportion whose items were averaged over samples) gets a
   t interval of the mean (:func:`t_mean`), cut to [0, 1] when every item lies there; when items are clustered, with the
   cluster-robust variance ``G / (G - 1) * sum_g (sum_{i in g} (y_i - mean))^2 / n^2`` and
   ``G - 1`` degrees of freedom (few clusters give wide intervals: that is what the data
   support);
4. the percentile bootstrap (:func:`bootstrap_mean`, resampling whole clusters when there
   are clusters) is there for whoever asks for it; its seed is fixed, so the same inputs
   give the same interval.

:func:`from_items` makes that choice; :func:`wilson_count` is the interval of a proportion
known only from its count (``k`` of ``n``), which the catalogue uses when a record gives a
proportion and its number of samples and nothing else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from eee.stats.distributions import critical

LEVEL = 0.95
SEED = 20260501  # every bootstrap's fixed seed: the same inputs give the same interval
REPS = 2000

WILSON = "wilson"
WILSON_EFFECTIVE = "wilson, effective n under clustering (Korn-Graubard)"
T = "t"
T_CLUSTERED = "t, cluster-robust (G-1 df)"
BOOTSTRAP = "percentile bootstrap"
BOOTSTRAP_CLUSTERED = "percentile cluster bootstrap"


@dataclass(frozen=True)
class Estimate:
    """A mean with its uncertainty: ``estimate``, its standard error, a ``level`` interval
    [``low``, ``high``] and the ``method`` that gave them, over ``n`` items (in ``clusters``
    clusters when clustered). ``se`` or the interval may be None when the data cannot give
    one (a single continuous item)."""

    estimate: float
    se: float | None
    low: float | None
    high: float | None
    level: float
    method: str
    n: int
    clusters: int | None = None

    def scaled(self, factor: float) -> Estimate:
        """The same estimate on a scale ``factor`` times larger (0-1 items, a percent score)."""

        def s(x: float | None) -> float | None:
            return None if x is None else x * factor

        return replace(self, estimate=self.estimate * factor, se=s(self.se), low=s(self.low), high=s(self.high))


def item_means(keys: Any, values: Any) -> tuple[Any, Any, Any]:
    """Repeated samples averaged within their item: (the distinct keys in the order first
    seen, each one's mean value, each one's number of samples). ``keys``: any numpy-sortable
    array (ids, codes), ``values``: floats of the same length."""
    import numpy as np

    keys = np.asarray(keys)
    values = np.asarray(values, dtype=float)
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    group = rank[inverse]
    counts = np.bincount(group, minlength=len(order))
    sums = np.bincount(group, values, minlength=len(order))
    return uniq[order], sums / counts, counts


def is_binary(values: Any) -> bool:
    import numpy as np

    values = np.asarray(values, dtype=float)
    return len(values) > 0 and bool(np.all((values == 0.0) | (values == 1.0)))


def wilson(successes: float, n: float, level: float = LEVEL) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` of ``n`` (``successes`` may be fractional,
    as for an effective sample size)."""
    if n <= 0:
        raise ValueError("a Wilson interval needs n > 0")
    z = critical(level)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(max(p * (1.0 - p) / n + z2n / (4.0 * n), 0.0))
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson_count(successes: int, n: int, level: float = LEVEL) -> Estimate:
    """A proportion known from its count: ``successes`` of ``n``, with its Wilson interval
    and the binomial standard error sqrt(p (1 - p) / n)."""
    p = successes / n
    low, high = wilson(successes, n, level)
    return Estimate(p, math.sqrt(p * (1.0 - p) / n), low, high, level, WILSON, n)


def _cluster_codes(clusters: Any) -> tuple[Any, int]:
    import numpy as np

    _, codes = np.unique(np.asarray(clusters), return_inverse=True)
    codes = codes.ravel()
    return codes, int(codes.max(initial=-1)) + 1


def cluster_robust_var(values: Any, codes: Any, groups: int) -> float:
    """The cluster-robust (CR1) variance of the mean of ``values`` whose clusters are the
    integer ``codes`` (0 .. groups - 1): ``G / (G - 1) * sum_g (sum_{i in g} (y_i - mean))^2 / n^2``."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    n = len(values)
    resid = np.bincount(codes, values - values.mean(), minlength=groups)
    return float(groups / (groups - 1) * np.sum(resid * resid) / (n * n))


def t_mean(values: Any, clusters: Any = None, level: float = LEVEL) -> Estimate:
    """The mean of ``values`` with a t interval: the standard error s / sqrt(n) and n - 1
    degrees of freedom; with ``clusters`` (one key per value, at least two distinct), the
    cluster-robust variance and G - 1 degrees of freedom."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    mean = float(values.mean())
    if clusters is not None:
        codes, groups = _cluster_codes(clusters)
        if groups >= 2:
            se = math.sqrt(cluster_robust_var(values, codes, groups))
            half = critical(level, groups - 1) * se
            return Estimate(mean, se, mean - half, mean + half, level, T_CLUSTERED, n, groups)
    if n < 2:
        return Estimate(mean, None, None, None, level, T, n)
    se = float(values.std(ddof=1)) / math.sqrt(n)
    half = critical(level, n - 1) * se
    return Estimate(mean, se, mean - half, mean + half, level, T, n)


def wilson_items(values: Any, clusters: Any = None, level: float = LEVEL) -> Estimate:
    """The proportion of binary ``values`` with its Wilson interval; with ``clusters`` (at
    least two), the interval at the effective sample size p (1 - p) / V_cluster (at most n)
    and the cluster-robust standard error."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    n = len(values)
    k = float(values.sum())
    p = k / n
    if clusters is not None:
        codes, groups = _cluster_codes(clusters)
        if groups >= 2:
            var = cluster_robust_var(values, codes, groups)
            n_eff = n if var <= 0.0 else min(float(n), p * (1.0 - p) / var)
            n_eff = max(n_eff, 1e-9)
            low, high = wilson(p * n_eff, n_eff, level)
            return Estimate(p, math.sqrt(var), low, high, level, WILSON_EFFECTIVE, n, groups)
    low, high = wilson(k, n, level)
    return Estimate(p, math.sqrt(p * (1.0 - p) / n), low, high, level, WILSON, n)


def from_items(values: Any, clusters: Any = None, level: float = LEVEL) -> Estimate | None:
    """The estimate of a score from its per-item values (repeated samples already averaged:
    :func:`item_means`): Wilson when every value is 0 or 1, else t; clustered when
    ``clusters`` names at least two clusters. None when there is no item."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return None
    if clusters is not None and len(np.unique(np.asarray(clusters))) < 2:
        clusters = None
    if is_binary(values):
        return wilson_items(values, clusters, level)
    estimate = t_mean(values, clusters, level)
    if estimate.low is not None and estimate.high is not None and values.min() >= 0.0 and values.max() <= 1.0:
        # items on [0, 1] have their mean on [0, 1]: the part of the interval beyond is no information
        estimate = replace(estimate, low=max(0.0, estimate.low), high=min(1.0, estimate.high))
    return estimate


def bootstrap_mean(
    values: Any, clusters: Any = None, reps: int = REPS, seed: int = SEED, level: float = LEVEL, max_values: int = 256
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``values``; with ``clusters``, whole
    clusters are resampled (each with all its items: the mean of a resample is its items'
    sum over its items' count). Fixed ``seed``."""
    import numpy as np

    values = np.asarray(values, dtype=float)
    n = len(values)
    if n == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    if clusters is not None:
        codes, groups = _cluster_codes(clusters)
        sums = np.bincount(codes, values, minlength=groups)
        sizes = np.bincount(codes, minlength=groups).astype(float)
        picks = rng.multinomial(groups, np.full(groups, 1.0 / groups), size=reps)
        means = (picks @ sums) / (picks @ sizes)
    else:
        uniq, counts = np.unique(values, return_counts=True)
        if len(uniq) <= max_values:  # resampling n of few distinct values is a multinomial draw of their counts
            picks = rng.multinomial(n, counts / n, size=reps)
            means = picks @ uniq / n
        else:
            means = np.empty(reps)
            chunk = max(1, 4_000_000 // n)
            for start in range(0, reps, chunk):
                stop = min(reps, start + chunk)
                idx = rng.integers(0, n, size=(stop - start, n), dtype=np.int64)
                means[start:stop] = values[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def normal_interval(estimate: float, se: float, level: float = LEVEL) -> tuple[float, float]:
    """estimate +- z * se: the interval a standard error implies under the normal approximation."""
    half = critical(level) * se
    return estimate - half, estimate + half
