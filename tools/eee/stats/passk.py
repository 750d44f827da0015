"""pass@k: the chance that at least one of k samples of an item passes.

From n samples of an item of which c passed, the unbiased estimator (Chen et al. 2021,
"Evaluating Large Language Models Trained on Code") is ``1 - C(n - c, k) / C(n, k)``,
computed as ``1 - prod_{i = n - c + 1}^{n} (1 - k / i)`` (no large binomials). It is
estimated per item and then averaged over items: never from the pooled rate over all
samples (``1 - (1 - c_total / n_total)^k`` is biased, and wrong when items differ in
difficulty). An item with fewer than k samples cannot be estimated and is counted apart.
The mean over items gets its interval from :func:`eee.stats.intervals.from_items`.
"""

from __future__ import annotations

from typing import Any

from eee.stats.intervals import LEVEL, Estimate, from_items


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one item with ``n`` samples of which ``c`` passed (nan when n < k)."""
    if k < 1:
        raise ValueError("k is at least 1")
    if not 0 <= c <= n:
        raise ValueError(f"c = {c} correct of n = {n} samples")
    if n < k:
        return float("nan")
    if n - c < k:
        return 1.0
    out = 1.0
    for i in range(n - c + 1, n + 1):
        out *= 1.0 - k / i
    return 1.0 - out


def pass_at_k_items(n: Any, c: Any, k: int) -> Any:
    """:func:`pass_at_k` of every item (numpy arrays of samples and passes), nan where n < k;
    vectorised: one pass over i = 1 .. max(n) multiplying (1 - k / i) where n - c < i <= n."""
    import numpy as np

    if k < 1:
        raise ValueError("k is at least 1")
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if np.any((c < 0) | (c > n)):
        raise ValueError("c must lie between 0 and n")
    prod = np.ones(n.shape)
    for i in range(k, int(n.max(initial=0)) + 1):  # below k the factor would be negative; no term there survives
        use = (i > n - c) & (i <= n)
        prod[use] *= 1.0 - k / i
    out = 1.0 - prod
    out[n - c < k] = 1.0
    out[n < k] = np.nan
    return out


def pass_at_k_mean(n: Any, c: Any, k: int, clusters: Any = None, level: float = LEVEL) -> tuple[Estimate | None, int]:
    """The mean pass@k over items with its interval, and the number of items left out
    because they have fewer than k samples."""
    import numpy as np

    values = pass_at_k_items(n, c, k)
    keep = ~np.isnan(values)
    kept_clusters = None if clusters is None else np.asarray(clusters)[keep]
    return from_items(values[keep], kept_clusters, level), int((~keep).sum())
