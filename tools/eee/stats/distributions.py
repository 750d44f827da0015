"""The normal and Student t distributions, without scipy.

The t distribution's cdf comes from the regularised incomplete beta function,
``P(|T| > t) = I_{v / (v + t^2)}(v / 2, 1 / 2)``, evaluated by its continued fraction
(modified Lentz, as in Numerical Recipes' ``betacf``), vectorised over numpy arrays so that
the p-values of every pair of a leaderboard are one call. The quantile is found by
bisection on the cdf (a scalar: intervals need one per level and degrees of freedom). The
tests check all of it against ``scipy.stats`` to 1e-10.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

_NORMAL = NormalDist()
_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 1000
NORMAL_DF = 1e7  # degrees of freedom beyond which t is the normal distribution (to 1e-7)


def normal_quantile(p: float) -> float:
    """The standard normal's ``p`` quantile (``normal_quantile(0.975)`` = 1.959964...)."""
    return _NORMAL.inv_cdf(p)


def normal_two_sided(z: Any) -> Any:
    """``P(|Z| > |z|)`` for a standard normal Z; numpy arrays elementwise."""
    import numpy as np

    z = np.abs(np.asarray(z, dtype=float))
    out = np.vectorize(math.erfc, otypes=[float])(z / math.sqrt(2.0)) if z.ndim else math.erfc(float(z) / math.sqrt(2))
    return out


def _lgamma(values: Any) -> Any:
    import numpy as np

    values = np.asarray(values, dtype=float)
    if values.size and np.all(values == values.flat[0]):  # one value (one df): no sort
        return np.full(values.shape, math.lgamma(float(values.flat[0])))
    uniq, inverse = np.unique(values, return_inverse=True)
    return np.array([math.lgamma(v) for v in uniq])[inverse].reshape(values.shape)


def _betacf(a: Any, b: Any, x: Any) -> Any:
    """The continued fraction of the incomplete beta function (modified Lentz), elementwise;
    each step works on the elements that have not converged yet."""
    import numpy as np

    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = np.where(np.abs(d) < _TINY, _TINY, d)
    d = 1.0 / d
    h = d.copy()
    out = h.copy()
    live = np.arange(len(x))
    for m in range(1, _MAX_ITER + 1):
        m2 = 2 * m
        av, bv, xv = a[live], b[live], x[live]
        aa = m * (bv - m) * xv / ((qam[live] + m2) * (av + m2))
        dd = 1.0 + aa * d
        dd[np.abs(dd) < _TINY] = _TINY
        cc = 1.0 + aa / c
        cc[np.abs(cc) < _TINY] = _TINY
        dd = 1.0 / dd
        hh = h * dd * cc
        aa = -(av + m) * (qab[live] + m) * xv / ((av + m2) * (qap[live] + m2))
        dd = 1.0 + aa * dd
        dd[np.abs(dd) < _TINY] = _TINY
        cc = 1.0 + aa / cc
        cc[np.abs(cc) < _TINY] = _TINY
        dd = 1.0 / dd
        delta = dd * cc
        hh = hh * delta
        done = np.abs(delta - 1.0) < _EPS
        out[live] = hh
        keep = ~done
        if not keep.any():
            break
        live, c, d, h = live[keep], cc[keep], dd[keep], hh[keep]
    return out


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularised incomplete beta function ``I_x(a, b)``, elementwise (a, b > 0, 0 <= x <= 1)."""
    import numpy as np

    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (a, b, x)))
    a, b, x = a.astype(float), b.astype(float), x.astype(float)
    out = np.empty(x.shape)
    zero, one = x <= 0.0, x >= 1.0
    out[zero], out[one] = 0.0, 1.0
    inside = ~(zero | one)
    if inside.any():
        ai, bi, xi = a[inside], b[inside], x[inside]
        swap = xi >= (ai + 1.0) / (ai + bi + 2.0)  # the fraction converges fast on this side
        aa, bb, xx = np.where(swap, bi, ai), np.where(swap, ai, bi), np.where(swap, 1.0 - xi, xi)
        log_front = _lgamma(aa + bb) - _lgamma(aa) - _lgamma(bb) + aa * np.log(xx) + bb * np.log1p(-xx)
        value = np.exp(log_front) * _betacf(aa, bb, xx) / aa
        out[inside] = np.where(swap, 1.0 - value, value)
    return out if out.ndim else float(out)


def t_two_sided(t: Any, df: Any) -> Any:
    """``P(|T| > |t|)`` for Student's t with ``df`` degrees of freedom (the two-sided p-value);
    numpy arrays elementwise. ``df`` at or beyond :data:`NORMAL_DF` is the normal."""
    import numpy as np

    t = np.abs(np.asarray(t, dtype=float))
    df = np.broadcast_to(np.asarray(df, dtype=float), t.shape)
    out = np.empty(t.shape)
    normal = df >= NORMAL_DF
    if normal.any():
        out[normal] = np.asarray(normal_two_sided(t[normal]))
    rest = ~normal
    if rest.any():
        tr, dr = t[rest], df[rest]
        with np.errstate(over="ignore", invalid="ignore"):
            x = np.where(np.isinf(tr), 0.0, dr / (dr + tr * tr))
        out[rest] = betainc(dr / 2.0, np.full(dr.shape, 0.5), x)
    out = np.clip(out, 0.0, 1.0)
    return out if out.ndim else float(out)


def t_cdf(t: float, df: float) -> float:
    """``P(T <= t)`` for Student's t with ``df`` degrees of freedom."""
    tail = float(t_two_sided(t, df)) / 2.0
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection on the cdf, to 1e-12)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1, not {p}")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, not {df}")
    if df >= NORMAL_DF:
        return normal_quantile(p)
    if p == 0.5:
        return 0.0
    upper = p > 0.5
    q = p if upper else 1.0 - p  # find the upper quantile, mirror for the lower
    lo, hi = 0.0, max(1.0, abs(normal_quantile(q)))
    while t_cdf(hi, df) < q:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    x = (lo + hi) / 2.0
    return x if upper else -x


def t_pdf(x: float, df: float) -> float:
    """The density of Student's t with ``df`` degrees of freedom at ``x``."""
    if df >= NORMAL_DF:
        return math.exp(-x * x / 2.0) / math.sqrt(2.0 * math.pi)
    log = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log - (df + 1) / 2 * math.log1p(x * x / df))


def t_critical(tail: float, df: float) -> float:
    """The |t| whose two-sided p-value is ``tail``: ``P(|T| > x) = tail`` for Student's t
    with ``df`` degrees of freedom (the normal at or beyond :data:`NORMAL_DF`). Newton's
    method on the log of the tail (so that tails far below 1e-16 keep their precision),
    kept inside a bracket that bisection narrows when a step leaves it; ``inf`` for a tail
    of 0, 0 for a tail of 1 or more."""
    if tail <= 0.0:
        return math.inf
    if tail >= 1.0:
        return 0.0
    target = math.log(tail)
    lo, hi = 0.0, math.inf
    x = max(1e-3, abs(normal_quantile(tail / 2.0)))
    for _ in range(200):
        p = float(t_two_sided(x, df))
        if p <= 0.0:  # beyond what a double holds: come back in
            hi = x
            x = (lo + x) / 2.0
            continue
        f = math.log(p) - target
        if f > 0:
            lo = max(lo, x)
        else:
            hi = min(hi, x)
        if abs(f) < 1e-13:
            return x
        slope = -2.0 * t_pdf(x, df) / p
        step = x - f / slope if slope < 0 else math.nan
        if not (lo < step < hi) or not math.isfinite(step):
            step = (lo + hi) / 2.0 if math.isfinite(hi) else x * 2.0
        if abs(step - x) <= 1e-14 * max(1.0, x):
            return step
        x = step
    return x


def critical(level: float, df: float | None = None) -> float:
    """The two-sided critical value of a ``level`` interval: t with ``df`` degrees of freedom,
    the normal when ``df`` is None."""
    q = 0.5 + level / 2.0
    return normal_quantile(q) if df is None else t_quantile(q, df)
