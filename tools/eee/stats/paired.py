"""Two results on the same items: paired differences, their interval, and what they say.

A paired comparison looks at ``d_i = a_i - b_i`` on the items both results have (repeated
samples averaged within each item first), so what the items share (their difficulty) cancels
out. Its interval is the percentile bootstrap of the mean of ``d``, resampling items, or
whole clusters of items when the items are clustered (:func:`paired`); beside it the
t statistic (cluster-robust when clustered) gives a p-value (:func:`paired_t`). For binary
outcomes, :func:`mcnemar_exact` tests the discordant pairs exactly. :func:`non_inferiority`
turns the interval into a verdict against a margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from eee.stats.distributions import t_two_sided
from eee.stats.intervals import (
    BOOTSTRAP,
    BOOTSTRAP_CLUSTERED,
    LEVEL,
    REPS,
    SEED,
    _cluster_codes,
    bootstrap_mean,
    cluster_robust_var,
)

NON_INFERIOR = "non-inferior"
INFERIOR = "inferior"
INCONCLUSIVE = "inconclusive"


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for the discordant counts ``b`` (A right, B wrong)
    and ``c`` (A wrong, B right): the binomial test of b successes in n = b + c trials at
    1/2, p = min(1, 2 P(X <= min(b, c))). Exact integer arithmetic up to n = 1,000, a
    log-space sum beyond."""
    n = b + c
    k = min(b, c)
    if n == 0 or b == c:
        return 1.0
    if n <= 1000:
        from fractions import Fraction

        tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)
        return float(min(Fraction(1), 2 * tail))
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2) for i in range(k + 1)]
    top = max(logs)
    tail = math.exp(top) * sum(math.exp(x - top) for x in logs)
    return min(1.0, 2 * tail)


@dataclass(frozen=True)
class PairedTest:
    """The t statistic of the mean paired difference: mean, standard error, degrees of
    freedom, two-sided p-value, and the number of clusters when clustered."""

    mean: float
    se: float | None
    df: float | None
    p: float | None
    clusters: int | None = None


def paired_t(d: Any, clusters: Any = None) -> PairedTest:
    """The t test of mean(``d``) = 0: s / sqrt(n) with n - 1 degrees of freedom, or with
    ``clusters`` (at least two) the cluster-robust variance with G - 1. A zero standard error
    gives p = 1 when the mean is 0, else p = 0 (every item differs by the same amount)."""
    import numpy as np

    d = np.asarray(d, dtype=float)
    n = len(d)
    if n == 0:
        return PairedTest(float("nan"), None, None, None)
    mean = float(d.mean())
    groups = None
    if clusters is not None:
        codes, g = _cluster_codes(clusters)
        if g >= 2:
            groups = g
            se = math.sqrt(cluster_robust_var(d, codes, g))
            df = float(g - 1)
    if groups is None:
        if n < 2:
            return PairedTest(mean, None, None, None)
        se = float(d.std(ddof=1)) / math.sqrt(n)
        df = float(n - 1)
    if se == 0.0:
        return PairedTest(mean, 0.0, df, 1.0 if mean == 0.0 else 0.0, groups)
    return PairedTest(mean, se, df, float(t_two_sided(mean / se, df)), groups)


@dataclass(frozen=True)
class Paired:
    """A paired comparison of A and B on ``n`` shared items: the means, the mean difference
    A - B with its ``level`` interval by ``method`` (the bootstrap's ``reps`` and ``seed``),
    and the t test beside it."""

    n: int
    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    level: float
    method: str
    reps: int
    seed: int
    clusters: int | None
    test: PairedTest


def paired(a: Any, b: Any, clusters: Any = None, level: float = LEVEL, reps: int = REPS, seed: int = SEED) -> Paired:
    """The paired comparison of ``a`` and ``b`` (aligned per-item values): the percentile
    bootstrap of mean(a - b), resampling clusters when ``clusters`` names at least two."""
    import numpy as np

    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    d = a - b
    groups = None
    if clusters is not None:
        _, groups = _cluster_codes(clusters)
        if groups < 2:
            clusters, groups = None, None
    low, high = bootstrap_mean(d, clusters, reps, seed, level)
    return Paired(
        len(d),
        float(a.mean()) if len(a) else float("nan"),
        float(b.mean()) if len(b) else float("nan"),
        float(d.mean()) if len(d) else float("nan"),
        low,
        high,
        level,
        BOOTSTRAP_CLUSTERED if groups else BOOTSTRAP,
        reps,
        seed,
        groups,
        paired_t(d, clusters),
    )


def non_inferiority(low: float, high: float, margin: float) -> str:
    """The verdict on "A is no worse than B by more than ``margin``" from the interval
    [``low``, ``high``] of the difference A - B, oriented so that higher is better:
    ``non-inferior`` when the whole interval lies above -margin, ``inferior`` when it lies
    below, else ``inconclusive`` (a two-sided 95% interval is the one-sided 2.5% test)."""
    if margin < 0:
        raise ValueError("the margin is a distance: 0 or more")
    if low > -margin:
        return NON_INFERIOR
    if high < -margin:
        return INFERIOR
    return INCONCLUSIVE
