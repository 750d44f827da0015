"""eee.stats: every estimator checked by hand, against published values or against scipy."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy import special, stats

from eee.stats.distributions import betainc, critical, t_critical, t_quantile, t_two_sided
from eee.stats.intervals import (
    T_CLUSTERED,
    WILSON,
    WILSON_EFFECTIVE,
    T,
    bootstrap_mean,
    cluster_robust_var,
    from_items,
    item_means,
    wilson,
    wilson_count,
)
from eee.stats.paired import INCONCLUSIVE, INFERIOR, NON_INFERIOR, non_inferiority, paired, paired_t
from eee.stats.passk import pass_at_k, pass_at_k_items, pass_at_k_mean
from eee.stats.ranking import holm, range_text, rank_ranges


def test_the_t_distribution_agrees_with_scipy() -> None:
    rng = np.random.default_rng(3)
    a, b, x = rng.uniform(0.05, 600, 3000), rng.uniform(0.05, 600, 3000), rng.uniform(0, 1, 3000)
    assert np.max(np.abs(betainc(a, b, x) - special.betainc(a, b, x))) < 1e-10
    t, df = rng.normal(0, 6, 3000), rng.integers(1, 3000, 3000).astype(float)
    assert np.allclose(t_two_sided(t, df), 2 * stats.t.sf(np.abs(t), df), rtol=1e-8, atol=1e-12)
    for p in (0.5, 0.9, 0.975, 0.025, 0.9995):
        for v in (1, 2, 4, 30, 804, 1e5):
            assert t_quantile(p, v) == pytest.approx(stats.t.ppf(p, v), abs=1e-9)
    # the far tail keeps its precision: what Holm's threshold over millions of pairs needs
    for tail in (1e-3, 1e-9, 1e-20):
        for v in (4, 804):
            assert t_critical(tail, v) == pytest.approx(stats.t.isf(tail / 2, v), rel=1e-9)
    assert critical(0.95) == pytest.approx(1.959963984540054)


def test_wilson_matches_newcombe_and_the_count_version_says_so() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, table I: 81 of 263 and 0 of 10
    assert wilson(81, 263) == pytest.approx((0.2553, 0.3662), abs=5e-5)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=5e-5)
    e = wilson_count(15, 20)
    assert (e.estimate, e.method, e.n) == (0.75, WILSON, 20) and e.se == pytest.approx(math.sqrt(0.75 * 0.25 / 20))
    assert (e.low, e.high) == wilson(15, 20) and 0 <= e.low < 0.75 < e.high <= 1


def test_from_items_averages_repeats_first_and_picks_the_interval() -> None:
    keys, means, counts = item_means(["q1", "q2", "q1", "q3", "q2"], [1.0, 0.0, 0.0, 1.0, 0.0])
    assert keys.tolist() == ["q1", "q2", "q3"] and means.tolist() == [0.5, 0.0, 1.0] and counts.tolist() == [2, 2, 1]
    binary = from_items([1, 0, 1, 1, 0, 1, 1, 1])  # a proportion of binary items: Wilson
    assert binary.method == WILSON and (binary.low, binary.high) == wilson(6, 8)
    cont = from_items(means)  # averaged repeats are continuous: t with n - 1 df, cut to [0, 1]
    assert cont.method == T
    lo, hi = stats.t.interval(0.95, 2, loc=means.mean(), scale=stats.sem(means))
    assert lo < 0 and hi > 1 and (cont.low, cont.high) == (0.0, 1.0)
    wide = from_items([0.2, 0.45, 0.5, 0.55, 0.3, 0.4])
    lo, hi = stats.t.interval(0.95, 5, loc=0.4, scale=stats.sem([0.2, 0.45, 0.5, 0.55, 0.3, 0.4]))
    assert (wide.low, wide.high) == pytest.approx((lo, hi))
    assert from_items([]) is None
    assert from_items([0.3]).se is None  # one continuous item: no interval to invent


def test_clusters_widen_the_interval_and_say_how_many() -> None:
    rng = np.random.default_rng(5)
    clusters = np.repeat(np.arange(30), 10)  # 30 clusters of 10 items that share a cluster effect
    values = np.clip(0.5 + np.repeat(rng.normal(0, 0.3, 30), 10) + rng.normal(0, 0.05, 300), 0, 1)
    plain, clustered = from_items(values), from_items(values, clusters)
    assert clustered.method == T_CLUSTERED and clustered.clusters == 30
    assert clustered.se > 2 * plain.se  # the design effect of strongly clustered items
    # the cluster-robust variance of the mean, by hand: G/(G-1) * sum_g (sum of residuals)^2 / n^2
    resid = [(values[clusters == g] - values.mean()).sum() for g in range(30)]
    assert cluster_robust_var(values, clusters, 30) == pytest.approx(30 / 29 * sum(r * r for r in resid) / 300**2)
    assert clustered.high - clustered.estimate == pytest.approx(stats.t.ppf(0.975, 29) * clustered.se)
    binary = (values > 0.5).astype(float)
    effective = from_items(binary, clusters)
    assert effective.method == WILSON_EFFECTIVE and effective.high - effective.low > np.subtract(
        *reversed(wilson(binary.sum(), 300))
    )
    assert from_items(values, np.zeros(300)).method == T  # one cluster is no clustering


def test_the_bootstrap_is_reproducible_and_resamples_clusters() -> None:
    rng = np.random.default_rng(7)
    d = rng.normal(0.1, 1, 500)
    assert bootstrap_mean(d) == bootstrap_mean(d)  # fixed seed
    lo, hi = bootstrap_mean(d)
    se = d.std(ddof=1) / math.sqrt(len(d))
    assert lo == pytest.approx(d.mean() - 1.96 * se, abs=0.25 * se) and hi == pytest.approx(
        d.mean() + 1.96 * se, abs=0.25 * se
    )
    clusters = np.repeat(np.arange(20), 25)
    shifted = d + np.repeat(rng.normal(0, 1, 20), 25)
    plain, by_cluster = bootstrap_mean(shifted), bootstrap_mean(shifted, clusters)
    assert by_cluster[1] - by_cluster[0] > 2 * (plain[1] - plain[0])
    # resampling whole clusters: every resample's mean is a ratio of cluster sums, so with
    # one value per cluster it is the plain bootstrap of the cluster means
    assert bootstrap_mean(np.arange(20.0), np.arange(20)) == pytest.approx(
        bootstrap_mean(np.arange(20.0), np.arange(20))
    )


def test_paired_comparison_and_non_inferiority() -> None:
    rng = np.random.default_rng(11)
    a = rng.random(400) < 0.62
    b = rng.random(400) < 0.55
    t = paired_t(a.astype(float) - b.astype(float))
    ref = stats.ttest_rel(a.astype(float), b.astype(float))
    assert t.p == pytest.approx(ref.pvalue) and t.df == 399
    result = paired(a.astype(float), b.astype(float))
    assert result.difference == pytest.approx(a.mean() - b.mean()) and result.low < result.difference < result.high
    assert paired(a, b) == paired(a, b)  # the same inputs, the same interval
    assert paired_t(np.zeros(5)).p == 1.0 and paired_t(np.full(5, 0.1)).p == 0.0
    assert non_inferiority(-0.01, 0.05, 0.02) == NON_INFERIOR
    assert non_inferiority(-0.05, 0.01, 0.02) == INCONCLUSIVE
    assert non_inferiority(-0.09, -0.03, 0.02) == INFERIOR
    with pytest.raises(ValueError):
        non_inferiority(0, 1, -1)


def test_holm_by_hand() -> None:
    rejected, adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert rejected.tolist() == [True, False, False, True]
    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    rejected, _ = holm([0.01, float("nan"), 0.2])
    assert rejected.tolist() == [True, False, False]


def _brute(estimate, se, scores, mask, clusters):  # type: ignore[no-untyped-def]
    """Every pair tested one by one, Holm by hand: what rank_ranges computes in blocks."""
    k = len(estimate)
    tests = []
    for i, j in combinations(range(k), 2):
        shared = mask[i] & mask[j]
        test = None
        if mask[i].any() and mask[j].any():
            d = scores[i, shared] - scores[j, shared]
            cl = None if clusters is None else clusters[shared]
            if (cl is not None and len(set(cl.tolist())) >= 2) or (cl is None and len(d) >= 2):
                r = paired_t(d, cl)
                test = (r.p, np.sign(r.mean))
        if test is None and not (np.isnan(se[i]) or np.isnan(se[j])):
            z = (estimate[i] - estimate[j]) / math.hypot(se[i], se[j])
            test = (math.erfc(abs(z) / math.sqrt(2)), np.sign(z))
        if test is not None:
            tests.append((i, j, *test))
    rejected, _ = holm([t[2] for t in tests])
    better, worse = np.zeros(k, int), np.zeros(k, int)
    for (i, j, _p, sign), r in zip(tests, rejected, strict=True):
        if r and sign > 0:
            worse[i] += 1
            better[j] += 1
        elif r and sign < 0:
            better[i] += 1
            worse[j] += 1
    return better, worse, len(tests)


@pytest.mark.parametrize("case", range(24))
def test_rank_ranges_in_blocks_equal_holm_pair_by_pair(case: int) -> None:
    rng = np.random.default_rng(case)
    k, n = int(rng.integers(3, 22)), int(rng.integers(6, 50))
    ability = rng.normal(0, [0.1, 0.6, 2.0][case % 3], k)
    scores = (rng.random((k, n)) < 1 / (1 + np.exp(-(ability[:, None] + rng.normal(0, 1, n))))).astype(float)
    if case % 4 == 0:
        scores += rng.normal(0, 0.2, (k, n))
    mask = rng.random((k, n)) > (0.3 if case % 2 else 0.0)
    if case % 2:
        mask[0] = False  # a result without items: compared by its standard error
    clusters = rng.integers(0, int(rng.integers(2, 6)), n) if case % 3 == 1 else None
    estimate = np.array([scores[i, mask[i]].mean() if mask[i].any() else 0.5 for i in range(k)])
    se = np.array([0.05 if i % 3 == 0 else np.nan for i in range(k)])
    ranking = rank_ranges(estimate, se, np.where(mask, scores, np.nan), mask, clusters, block=4)
    better, worse, tested = _brute(estimate, se, scores, mask, clusters)
    assert ranking.pairs == tested
    assert ranking.better.tolist() == better.tolist() and ranking.worse.tolist() == worse.tolist()
    assert (ranking.low == 1 + better).all() and (ranking.high == k - worse).all()


def test_rank_ranges_share_a_range_where_the_data_cannot_order() -> None:
    rng = np.random.default_rng(1)
    items = 2000
    p = np.array([0.9, 0.6, 0.6, 0.6, 0.2])  # three results the items cannot tell apart
    scores = (rng.random((5, items)) < p[:, None]).astype(float)
    ranking = rank_ranges(scores.mean(axis=1), None, scores, np.ones_like(scores, dtype=bool))
    ranges = [range_text(lo, hi) for lo, hi in zip(ranking.low.tolist(), ranking.high.tolist(), strict=True)]
    assert ranges[0] == "1" and ranges[4] == "5" and ranges[1:4] == ["2-4", "2-4", "2-4"]
    lower = rank_ranges(scores.mean(axis=1), None, scores, np.ones_like(scores, dtype=bool), higher_is_better=False)
    assert lower.rank.tolist() == [5, *lower.rank.tolist()[1:4], 1]


def test_pass_at_k_is_estimated_per_item() -> None:
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 1) == pytest.approx(2 / 5)  # k = 1: the share of passing samples
    assert pass_at_k(5, 4, 2) == 1.0 and pass_at_k(5, 0, 3) == 0.0 and math.isnan(pass_at_k(1, 1, 2))
    rng = np.random.default_rng(2)
    n = rng.integers(0, 12, 300)
    c = np.array([rng.integers(0, m + 1) for m in n])
    for k in (1, 2, 3, 5):
        vector = pass_at_k_items(n, c, k)
        single = np.array([pass_at_k(int(a), int(b), k) for a, b in zip(n, c, strict=True)])
        assert np.array_equal(np.isnan(vector), np.isnan(single)) and np.allclose(
            vector[~np.isnan(single)], single[~np.isnan(single)]
        )
    # by enumeration: the chance that k samples drawn without replacement hold a pass
    for total, passed, k in ((6, 2, 3), (7, 3, 2), (4, 1, 4)):
        draws = list(combinations(range(total), k))
        assert pass_at_k(total, passed, k) == pytest.approx(
            sum(any(d < passed for d in draw) for draw in draws) / len(draws)
        )
    # averaged over items, never from the pooled rate: an easy and a hard item
    estimate, few = pass_at_k_mean([10, 10, 1], [10, 0, 1], 2)
    assert few == 1 and estimate is not None and estimate.estimate == pytest.approx(0.5)
    assert 1 - (1 - 10 / 20) ** 2 == 0.75  # what the pooled rate would have claimed
