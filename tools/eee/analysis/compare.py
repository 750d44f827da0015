"""Two runs of one benchmark, sample by sample: overlap, agreement, score difference with a
bootstrap confidence interval, an exact McNemar test for binary scores, and the samples
that disagree. Records without readable sidecars are compared on their aggregates only.

The statistics are plain functions on numpy arrays (:func:`mcnemar_exact`,
:func:`bootstrap_mean_ci`, :func:`compare_samples`) so they can be checked by hand.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

from eee.analysis.samples import (
    NOT_PULLED,
    ResultSamples,
    SidecarProblem,
    StoredRecord,
    primary,
    read_samples,
)
from eee.catalog.table import LEFT_OUT, normalised_score
from eee.reporting.shown import command, shown_command
from eee.rules.record import as_float

SEED = 20260501  # the bootstrap's fixed seed: the same inputs give the same interval
REPS = 2000
LEVEL = 0.95


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for the discordant counts ``b`` (A right, B wrong)
    and ``c`` (A wrong, B right): the binomial test of b successes in n = b + c trials at
    1/2, p = min(1, 2 P(X <= min(b, c))). Exact integer arithmetic up to n = 1,000, a
    log-space sum beyond (no scipy import: it costs more than the whole comparison)."""
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


def bootstrap_mean_ci(
    d: Any, reps: int = REPS, seed: int = SEED, level: float = LEVEL, max_values: int = 256
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``d`` (paired differences).

    When ``d`` takes few distinct values (binary scores give -1, 0, 1), resampling n values
    with replacement is exactly a multinomial draw of how often each value is picked, which
    costs O(reps) instead of O(reps x n); otherwise samples are drawn in chunks.
    """
    import numpy as np

    d = np.asarray(d, dtype=float)
    n = len(d)
    if n == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    values, counts = np.unique(d, return_counts=True)
    if len(values) <= max_values:
        picks = rng.multinomial(n, counts / n, size=reps)
        means = picks @ values / n
    else:
        means = np.empty(reps)
        chunk = max(1, 4_000_000 // n)
        for start in range(0, reps, chunk):
            stop = min(reps, start + chunk)
            idx = rng.integers(0, n, size=(stop - start, n), dtype=np.int64)
            means[start:stop] = d[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


def _positions(ka: Any, kb: Any) -> tuple[Any, Any]:
    """Where the keys of A are found among the keys of B: (positions in A, in A's order;
    the matching positions in B). A key B holds twice matches its last position."""
    import numpy as np

    from eee.analysis.samples import first_seen

    na = len(ka)
    _, group = first_seen(np.concatenate([ka, kb]))
    at_b = np.full(int(group.max(initial=-1)) + 1, -1, dtype=np.int64)
    np.maximum.at(at_b, group[na:], np.arange(len(kb)))
    j = at_b[group[:na]]
    ia = np.nonzero(j >= 0)[0]
    return ia, j[ia]


def _match(a: ResultSamples, b: ResultSamples) -> tuple[str, Any, Any]:
    """Indices of the samples both have: by sample id, else (no id in common) by sample hash."""
    import numpy as np

    ia, ib = _positions(a.sample_keys(), b.sample_keys())
    if len(ia):
        return "sample_id", ia, ib
    ha, has_a = a.hash_keys()
    hb, has_b = b.hash_keys()
    if not has_a.any() or not has_b.any():
        return "sample_id", ia, ib
    wa, wb = np.nonzero(has_a)[0], np.nonzero(has_b)[0]
    ia, ib = _positions(ha[wa], hb[wb])
    return ("sample_hash" if len(ia) else "sample_id"), wa[ia], wb[ib]


def compare_samples(a: ResultSamples, b: ResultSamples, disagreements: int | None = None) -> dict[str, Any]:
    """The sample-level comparison of two results (A minus B). ``disagreements``: how many
    disagreeing samples to list (None: all)."""
    import numpy as np

    matched_by, ia, ib = _match(a, b)
    n = len(ia)
    out: dict[str, Any] = {
        "result_a": a.key,
        "result_b": b.key,
        "samples_a": len(a),
        "samples_b": len(b),
        "matched_by": matched_by,
        "overlap": n,
        "only_a": len(a) - n,
        "only_b": len(b) - n,
        "repeated_rows_averaged": {"a": a.repeated, "b": b.repeated},
    }
    if n == 0:
        out["note"] = "no sample in common: nothing to compare sample by sample"
        return out
    sa, sb = a.score[ia], b.score[ib]
    diff = sa - sb
    lo, hi = bootstrap_mean_ci(diff)
    out.update(
        {
            "mean_a": float(sa.mean()),
            "mean_b": float(sb.mean()),
            "difference": float(diff.mean()),
            "difference_ci": [lo, hi],
            "ci_level": LEVEL,
            "bootstrap": {"reps": REPS, "seed": SEED, "method": "percentile, paired resampling of samples"},
        }
    )
    oa, ob = a.outcomes(), b.outcomes()
    if oa is not None and ob is not None:
        xa, xb = oa[ia] >= 0.5, ob[ib] >= 0.5
        both = int(np.sum(xa & xb))
        a_only = int(np.sum(xa & ~xb))
        b_only = int(np.sum(~xa & xb))
        neither = n - both - a_only - b_only
        out["binary"] = {
            "on": "score" if a.binary and b.binary else "is_correct",
            "both_correct": both,
            "only_a_correct": a_only,
            "only_b_correct": b_only,
            "both_wrong": neither,
            "agreement": (both + neither) / n,
            "mcnemar_exact_p": mcnemar_exact(a_only, b_only),
        }
        differ = np.nonzero(xa != xb)[0]
    else:
        close = np.isclose(sa, sb, rtol=0.0, atol=1e-9)
        corr = float(np.corrcoef(sa, sb)[0, 1]) if n > 1 and sa.std() > 0 and sb.std() > 0 else None
        out["continuous"] = {
            "agreement": float(close.mean()),
            "mean_absolute_difference": float(np.abs(diff).mean()),
            "pearson_r": corr,
        }
        differ = np.nonzero(~close)[0]
    out["agreement"] = out.get("binary", out.get("continuous", {}))["agreement"]
    out["disagreeing"] = len(differ)
    listed = (differ if disagreements is None else differ[:disagreements]).tolist()
    names = a.names(ia[listed].tolist()) if listed else []  # the ids are read again for these only
    out["disagreeing_samples"] = [
        {"sample_id": name, "score_a": float(sa[k]), "score_b": float(sb[k])}
        for name, k in zip(names, listed, strict=True)
    ]
    return out


def _results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in doc.get("evaluation_results") or [] if isinstance(r, dict)]


def _agg(r: dict[str, Any]) -> dict[str, Any]:
    cfg = r.get("metric_config") if isinstance(r.get("metric_config"), dict) else {}
    det = r.get("score_details") if isinstance(r.get("score_details"), dict) else {}
    score, lo, hi = as_float(det.get("score")), as_float(cfg.get("min_score")), as_float(cfg.get("max_score"))
    lib = cfg.get("lower_is_better")
    return {
        "evaluation_result_id": r.get("evaluation_result_id"),
        "evaluation_name": r.get("evaluation_name"),
        "metric_id": cfg.get("metric_id"),
        "score": score,
        "score_normalised": normalised_score(score, lo, hi, lib if isinstance(lib, bool) else None),
    }


def compare_aggregates(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Pairs of aggregate results: by evaluation_result_id, else metric_id, else
    evaluation_name (each result used once), with both scores and their difference on the
    normalised scale where both have one."""
    ra, rb = [_agg(r) for r in _results(a)], [_agg(r) for r in _results(b)]
    used: set[int] = set()
    out = []
    for field in ("evaluation_result_id", "metric_id", "evaluation_name"):
        for x in ra:
            if x.get("_paired") or not x.get(field):
                continue
            for j, y in enumerate(rb):
                if j not in used and y.get(field) == x[field]:
                    used.add(j)
                    x["_paired"] = True
                    na, nb = x["score_normalised"], y["score_normalised"]
                    out.append(
                        {
                            "paired_by": field,
                            "a": {k: v for k, v in x.items() if not k.startswith("_")},
                            "b": y,
                            "normalised_difference": None if na is None or nb is None else na - nb,
                        }
                    )
                    break
    return out


def _record_info(rec: StoredRecord) -> dict[str, Any]:
    return {
        "uuid": rec.uuid,
        "path": rec.rel,
        "model_id": rec.model_id,
        "eval_library": rec.eval_library,
        "status": rec.status,
        "sidecar": rec.sidecar_state() or "present",
    }


def _pairs(
    ga: dict[str, ResultSamples],
    gb: dict[str, ResultSamples],
    a: StoredRecord,
    b: StoredRecord,
    result_a: str | None,
    result_b: str | None,
) -> tuple[str, list[tuple[ResultSamples, ResultSamples]]]:
    if result_a or result_b:
        ka, kb = result_a or result_b, result_b or result_a
        missing = [f"{k!r} not in {r.uuid[:8]}" for k, g, r in ((ka, ga, a), (kb, gb, b)) if k not in g]
        if missing:
            from eee.reporting.findings import Finding, Refused

            raise Refused(
                Finding(
                    "compare",
                    "$",
                    "no such result: " + "; ".join(missing),
                    hint="results with samples: "
                    + "; ".join(f"{r.uuid[:8]}: {', '.join(g)}" for g, r in ((ga, a), (gb, b))),
                    check="analysis",
                )
            )
        return "chosen", [(ga[str(ka)], gb[str(kb)])]
    common = [k for k in ga if k in gb]
    if common:
        return "same result id", [(ga[k], gb[k]) for k in common]
    if len(ga) == 1 and len(gb) == 1:
        return "the only result of each", [(next(iter(ga.values())), next(iter(gb.values())))]
    return "the main result of each (most samples)", [(primary(ga, a.doc), primary(gb, b.doc))]


def compare_records(
    a: StoredRecord,
    b: StoredRecord,
    result_a: str | None = None,
    result_b: str | None = None,
    disagreements: int | None = None,
    max_rows: int | None = None,
) -> dict[str, Any]:
    """The comparison report of two records of one benchmark. The two sidecars are read up
    to ``max_rows`` rows together (default :data:`eee.analysis.samples.MAX_ROWS`); beyond,
    the records are compared on their aggregates, and the report says why."""
    from eee.analysis.samples import MAX_ROWS, ROW_BYTES, RowBudget, TooManyRows

    budget = RowBudget(MAX_ROWS if max_rows is None else max_rows)
    report: dict[str, Any] = {
        "benchmark": a.benchmark,
        "a": _record_info(a),
        "b": _record_info(b),
        "aggregates": compare_aggregates(a.doc, b.doc),
        "samples": None,
        "notes": [],
    }
    for side, rec in (("a", a), ("b", b)):
        if rec.status in LEFT_OUT:
            report["notes"].append(
                f"{side.upper()} {rec.uuid} is {rec.status}: not active (left out of the statistics, "
                "the comparisons of --model and the IRT fit unless --all is given)"
            )
    groups: list[dict[str, ResultSamples] | None] = []
    for side, rec in (("a", a), ("b", b)):
        state = rec.sidecar_state()
        if state is None:
            try:
                groups.append(read_samples(rec.sidecar, budget))
            except TooManyRows:
                report["notes"].append(
                    f"the two sidecars hold more than {budget.limit:,} rows (the limit was passed in {side.upper()} "
                    f"{rec.uuid}): more than one comparison reads by default; `{shown_command()} compare --max-rows N` reads "
                    f"more where there is memory for it (about {ROW_BYTES} bytes per row)"
                )
                groups = [None, None]
                break
            except (OSError, SidecarProblem) as exc:
                report[side]["sidecar"] = "unreadable"
                report["notes"].append(f"{side.upper()} {rec.uuid}: the sidecar cannot be read ({exc})")
                groups.append(None)
        else:
            groups.append(None)
            if state == NOT_PULLED:
                report["notes"].append(
                    f"{side.upper()} {rec.uuid}: the sidecar is in DVC but not in the work tree "
                    f"(not pulled: run `{command('samples', 'pull', rec.sidecar)}`)"
                )
            else:
                report["notes"].append(f"{side.upper()} {rec.uuid}: the record has no per-sample sidecar")
    ga, gb = groups
    if ga is not None and gb is not None:
        if not ga or not gb:
            report["notes"].append("a sidecar has no rows: nothing to compare sample by sample")
        else:
            how, pairs = _pairs(ga, gb, a, b, result_a, result_b)
            try:
                results = [compare_samples(x, y, disagreements) for x, y in pairs]
            except (OSError, SidecarProblem) as exc:  # reading the listed sample ids again
                report["notes"].append(f"A {a.uuid}: the sidecar cannot be read again ({exc})")
            else:
                report["samples"] = {"paired": how, "results": results}
    if report["samples"] is None:
        report["notes"].append("compared on the aggregate scores only")
    return report


def compare_many(
    records: list[StoredRecord], disagreements: int | None = None, max_rows: int | None = None
) -> dict[str, Any]:
    """Every pair of ``records`` (one model on one benchmark, e.g. under two harnesses)."""
    return {
        "records": [_record_info(r) for r in records],
        "comparisons": [
            compare_records(x, y, disagreements=disagreements, max_rows=max_rows) for x, y in combinations(records, 2)
        ],
    }


# -- readable output ------------------------------------------------------------------------


def _num(x: Any, digits: int = 4) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.2e}"


def render(report: dict[str, Any], listed: int = 20) -> str:
    """One comparison as text."""
    out = []
    a, b = report["a"], report["b"]
    out.append(f"benchmark {report['benchmark']}")
    for side, info in (("A", a), ("B", b)):
        out.append(
            f"  {side}  {info['uuid']}  {info['model_id']}  {info['eval_library'] or '?'}  "
            f"status {info['status']}  sidecar {info['sidecar']}"
        )
    if report["aggregates"]:
        out.append("aggregate results (A vs B):")
        for pair in report["aggregates"]:
            x, y = pair["a"], pair["b"]
            name = x.get("evaluation_result_id") or x.get("metric_id") or x.get("evaluation_name")
            out.append(
                f"  {name}: {_num(x['score'])} vs {_num(y['score'])}"
                + (
                    f"  (normalised difference {pair['normalised_difference']:+.4f})"
                    if pair["normalised_difference"] is not None
                    else ""
                )
            )
    else:
        out.append("aggregate results: none in common")
    samples = report.get("samples")
    if samples:
        out.append(f"samples (results paired by {samples['paired']}):")
        for r in samples["results"]:
            out.append(
                f"  {r['result_a']} vs {r['result_b']}: {r['samples_a']} and {r['samples_b']} samples, "
                f"{r['overlap']} in common (by {r['matched_by']}), {r['only_a']} only in A, {r['only_b']} only in B"
            )
            if not r["overlap"]:
                continue
            lo, hi = r["difference_ci"]
            out.append(
                f"    mean score {r['mean_a']:.4f} vs {r['mean_b']:.4f}; difference A-B {r['difference']:+.4f} "
                f"({int(r['ci_level'] * 100)}% bootstrap CI {lo:+.4f} .. {hi:+.4f})"
            )
            if "binary" in r:
                t = r["binary"]
                out.append(
                    f"    agreement {t['agreement']:.1%} ({t['on']}): both right {t['both_correct']}, "
                    f"only A {t['only_a_correct']}, only B {t['only_b_correct']}, both wrong {t['both_wrong']}; "
                    f"exact McNemar p = {_p(t['mcnemar_exact_p'])}"
                )
            else:
                c = r["continuous"]
                out.append(
                    f"    agreement {c['agreement']:.1%} (equal scores); mean |A-B| {c['mean_absolute_difference']:.4f}; "
                    f"Pearson r {_num(c['pearson_r'], 3)}"
                )
            if r["disagreeing"]:
                shown = r["disagreeing_samples"][:listed]
                out.append(
                    f"    {r['disagreeing']} samples disagree"
                    + (f", first {len(shown)}:" if r["disagreeing"] > len(shown) else ":")
                )
                for s in shown:
                    out.append(f"      {s['sample_id']}: A {s['score_a']:g}, B {s['score_b']:g}")
    for note in report["notes"]:
        out.append(f"note: {note}")
    return "\n".join(out) + "\n"


def render_many(report: dict[str, Any], listed: int = 20) -> str:
    n, m = len(report["records"]), len(report["comparisons"])
    out = [f"{n} record{'' if n == 1 else 's'}, {m} pair{'' if m == 1 else 's'}\n"]  # never "1 pairs"
    out += [render(c, listed) for c in report["comparisons"]]
    return "\n".join(out)
