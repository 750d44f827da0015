"""Rank ranges: where the data cannot order two results, they share a range ("3-5").

Every pair of the K results of one leaderboard is tested (a family of m = K (K - 1) / 2
hypotheses "these two are equal"), and Holm's step-down procedure keeps the family-wise
error at ``alpha``: sort the p-values, reject the k-th smallest while it is at most
``alpha / (m - k + 1)``. A result's rank range is then
``1 + (results significantly better)`` .. ``K - (results significantly worse)``.

How a pair is tested: on the items both results have, the paired t test of the mean
difference (:func:`eee.stats.paired.paired_t`, cluster-robust when items are clustered);
when one of them has no items, by the normal test of the difference of two estimates with
standard errors (as if independent: when the two share items, positively correlated,
this overstates the variance, so the test is conservative); when neither can be tested, the
pair is not significant.

Built for a large leaderboard: the pairs are worked out in blocks of rows from sums that
are matrix products (shared items, sums and sums of squares of the differences), and no
p-value is computed where it cannot change the outcome: a p-value at most ``alpha / m`` is
rejected by Holm whatever the others are, one above ``alpha`` never is, so the exact t tail
is evaluated only for the pairs in between; the second pass compares each |t| with the
critical value of Holm's final threshold. Memory follows the block, not K^2.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from eee.stats.distributions import NORMAL_DF, critical, t_critical, t_two_sided

ALPHA = 0.05
BLOCK = 256


def holm(p: Any, alpha: float = ALPHA) -> tuple[Any, Any]:
    """Holm's step-down procedure on the p-values ``p`` (nan: not tested, never rejected):
    (which are rejected, the Holm-adjusted p-values)."""
    import numpy as np

    p = np.asarray(p, dtype=float)
    tested = ~np.isnan(p)
    m = int(tested.sum())
    rejected = np.zeros(p.shape, dtype=bool)
    adjusted = np.full(p.shape, np.nan)
    if m == 0:
        return rejected, adjusted
    idx = np.nonzero(tested)[0]
    order = idx[np.argsort(p[idx], kind="stable")]
    steps = (m - np.arange(m)) * p[order]
    adj = np.minimum(1.0, np.maximum.accumulate(steps))
    adjusted[order] = adj
    ok = p[order] <= alpha / (m - np.arange(m))
    first_fail = int(np.argmin(ok)) if not ok.all() else m
    rejected[order[:first_fail]] = True
    return rejected, adjusted


@dataclass
class Ranking:
    """Ranks of K results: ``rank`` by estimate (1 best; ties share the best rank), the range
    ``low`` .. ``high``, how many are significantly ``better`` and ``worse``; over ``pairs``
    tested pairs (``paired`` of them on shared items), ``significant`` after Holm at ``alpha``."""

    rank: Any
    low: Any
    high: Any
    better: Any
    worse: Any
    pairs: int
    paired: int
    significant: int
    alpha: float


class _Crit:
    """Critical |t| values by degrees of freedom: the |t| whose two-sided p-value is
    ``tail`` (one bisection per distinct df and tail, cached)."""

    def __init__(self) -> None:
        self.cache: dict[tuple[float, float], float] = {}

    def __call__(self, tail: float, df: Any) -> Any:
        import numpy as np

        df = np.asarray(df, dtype=float)
        out = np.empty(df.shape)
        for value in np.unique(df):
            key = (tail, float(value))
            if key not in self.cache:
                self.cache[key] = t_critical(tail, float(value))
            out[df == value] = self.cache[key]
        return out


def _blocks(
    estimate: Any, se: Any, scores: Any, mask: Any, codes: Any, groups: int, block: int
) -> Iterator[tuple[int, Any, Any, Any]]:
    """(first row, t, df, paired) of every block of rows against every result: t signed so
    that t > 0 means the row's result is higher; df = NORMAL_DF for the normal test; t nan
    where the pair cannot be tested (and on the diagonal)."""
    import numpy as np

    k = len(estimate)
    has_items = mask.any(axis=1) if mask is not None else np.zeros(k, dtype=bool)
    cluster_cols = [np.nonzero(codes == g)[0] for g in range(groups)] if codes is not None else None
    full = mask is not None and bool(has_items.all()) and bool(mask.all())
    mf = sm = s2m = None
    if mask is not None and not full:  # the sums over the items each pair shares
        mf = mask.astype(float)
        sm = np.where(mask, scores, 0.0)
        s2m = sm * sm
    if full:  # every result has every item: the sums are those of centred rows (one product per block)
        n_items = mask.shape[1]
        means = scores.mean(axis=1)
        centred = scores - means[:, None]
        if codes is not None:  # each result's residual sums per cluster: K x G
            centred = np.stack([centred[:, cols].sum(axis=1) for cols in cluster_cols], axis=1)
        norms = np.einsum("ij,ij->i", centred, centred)
    for start in range(0, k, block):
        stop = min(k, start + block)
        rows = slice(start, stop)
        t = np.full((stop - start, k), np.nan)
        df = np.full((stop - start, k), float(NORMAL_DF))
        paired = np.zeros((stop - start, k), dtype=bool)
        if full:
            sq = np.maximum(norms[rows, None] + norms[None, :] - 2.0 * (centred[rows] @ centred.T), 0.0)
            mean = means[rows, None] - means[None, :]
            with np.errstate(invalid="ignore", divide="ignore"):
                if codes is None:
                    se_d = np.sqrt(sq / (n_items - 1.0) / n_items) if n_items >= 2 else np.full(sq.shape, np.nan)
                    dfp = float(n_items - 1)
                else:
                    se_d = np.sqrt(groups / (groups - 1.0) * sq / (n_items * n_items))
                    dfp = float(groups - 1)
                tp = np.where(se_d > 0, mean / se_d, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))
            ok = np.isfinite(se_d) | np.isinf(tp)
            t = np.where(ok, tp, t)
            df = np.where(ok, dfp, df)
            paired = ok
        elif mf is not None and has_items[rows].any():
            n = mf[rows] @ mf.T
            total = sm[rows] @ mf.T - mf[rows] @ sm.T
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = total / n
                if cluster_cols is None:
                    sq = s2m[rows] @ mf.T + mf[rows] @ s2m.T - 2.0 * (sm[rows] @ sm.T)
                    var = np.maximum(sq - n * mean * mean, 0.0) / (n - 1.0)
                    se_d = np.sqrt(var / n)
                    dfp = n - 1.0
                    ok = n >= 2
                else:
                    ss = np.zeros_like(n)
                    g_count = np.zeros_like(n)
                    for cols in cluster_cols:
                        ng = mf[rows][:, cols] @ mf[:, cols].T
                        dg = sm[rows][:, cols] @ mf[:, cols].T - mf[rows][:, cols] @ sm[:, cols].T
                        ss += (dg - ng * mean) ** 2
                        g_count += ng > 0
                    se_d = np.sqrt(g_count / (g_count - 1.0) * ss / (n * n))
                    dfp = g_count - 1.0
                    ok = g_count >= 2
                tp = np.where(se_d > 0, mean / se_d, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))
            ok &= has_items[rows][:, None] & has_items[None, :]
            t = np.where(ok, tp, t)
            df = np.where(ok, dfp, df)
            paired = ok
        if se is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                both = np.sqrt(se[rows, None] ** 2 + se[None, :] ** 2)
                diff = estimate[rows, None] - estimate[None, :]
                tz = np.where(both > 0, diff / both, np.where(diff == 0, 0.0, np.sign(diff) * np.inf))
            usable = ~paired & ~np.isnan(se[rows, None]) & ~np.isnan(se[None, :])
            t = np.where(usable, tz, t)
            df = np.where(usable, float(NORMAL_DF), df)
        idx = np.arange(start, stop)
        t[idx - start, idx] = np.nan
        yield start, t, df, paired


def rank_ranges(
    estimate: Any,
    se: Any = None,
    scores: Any = None,
    mask: Any = None,
    clusters: Any = None,
    higher_is_better: bool = True,
    alpha: float = ALPHA,
    block: int = BLOCK,
) -> Ranking:
    """The rank ranges of K results. ``estimate``: each result's score (K); ``se``: each
    one's standard error (nan where unknown), for pairs without shared items; ``scores``
    (K x n) and ``mask`` (K x n, True where the result has the item): per-item values on
    the same items (repeated samples averaged); ``clusters``: one cluster key per item
    column, or None."""
    import numpy as np

    estimate = np.asarray(estimate, dtype=float)
    k = len(estimate)
    sign = 1.0 if higher_is_better else -1.0
    se = None if se is None else np.asarray(se, dtype=float)
    if scores is not None:
        scores = np.asarray(scores, dtype=float) * sign
        mask = np.asarray(mask, dtype=bool) & ~np.isnan(scores)
    codes, groups = None, 0
    if clusters is not None and scores is not None:
        _, codes = np.unique(np.asarray(clusters), return_inverse=True)
        codes = codes.ravel()
        groups = int(codes.max(initial=-1)) + 1
        if groups < 2:
            codes, groups = None, 0
    est = estimate * sign
    crit = _Crit()
    # pass 1: count the tests; a p-value at most alpha/m is rejected whatever the others are,
    # one above alpha never is: only those in between are computed, and kept. m is known at
    # the end of the pass; the cut uses its upper bound (pairs both of which have items, or
    # both a standard error), which only widens the band of p-values computed
    has_items = mask.any(axis=1) if mask is not None else np.zeros(k, dtype=bool)
    has_se = ~np.isnan(se) if se is not None else np.zeros(k, dtype=bool)
    a, b, ab = int(has_items.sum()), int(has_se.sum()), int((has_items & has_se).sum())
    m_bound = max(1, (a * (a - 1) + b * (b - 1) - ab * (ab - 1)) // 2)
    m = 0
    paired_pairs = 0
    n_sure = 0
    middle: list[Any] = []
    for start, t, df, paired in _blocks(est, se, scores, mask, codes, groups, block):
        keep = np.triu(~np.isnan(t), k=start + 1)  # each unordered pair once
        m += int(keep.sum())
        paired_pairs += int((keep & paired).sum())
        at, adf = np.abs(t[keep]), df[keep]
        sure = at >= crit(alpha / m_bound, adf)
        between = ~sure & (at >= crit(alpha, adf))
        n_sure += int(sure.sum())
        if between.any():
            middle.append(np.asarray(t_two_sided(at[between], adf[between]), dtype=float).ravel())
    p_mid = np.sort(np.concatenate(middle)) if middle else np.zeros(0)
    ok = p_mid <= alpha / (m - (n_sure + np.arange(len(p_mid))))
    passed = int(np.argmin(ok)) if len(ok) and not ok.all() else len(ok)
    threshold = float(p_mid[passed - 1]) if passed else (alpha / m_bound if n_sure else -1.0)
    # pass 2: who is significantly better or worse than whom, at Holm's threshold
    better = np.zeros(k, dtype=np.int64)
    worse = np.zeros(k, dtype=np.int64)
    significant = 0
    if threshold >= 0:
        for start, t, df, _ in _blocks(est, se, scores, mask, codes, groups, block):
            tested = ~np.isnan(t)
            at = np.where(tested, np.abs(t), 0.0)
            sig = tested & (at >= crit(alpha / m_bound, df))
            between = tested & ~sig & (at >= crit(alpha, df))
            if between.any():
                sig[between] = np.asarray(t_two_sided(at[between], df[between])).ravel() <= threshold
            rows = np.arange(start, start + t.shape[0])
            better[rows] += (sig & (t < 0)).sum(axis=1)
            worse[rows] += (sig & (t > 0)).sum(axis=1)
            significant += int(np.triu(sig, k=start + 1).sum())
    order = -est
    rank = np.searchsorted(np.sort(order), order, side="left") + 1
    return Ranking(rank, 1 + better, k - worse, better, worse, m, paired_pairs, significant, alpha)


def range_text(low: int, high: int) -> str:
    """A rank range as shown: ``3`` or ``3-5``."""
    return str(low) if low == high else f"{low}-{high}"


__all__ = ["ALPHA", "Ranking", "critical", "holm", "range_text", "rank_ranges"]
