"""Two runs of one benchmark, sample by sample: overlap, agreement, score difference with a
bootstrap confidence interval, an exact McNemar test for binary scores, and the samples
that disagree. Records without readable sidecars are compared on their aggregates only.

What is compared is said: the denominators (the items both have, those of them valid on
both sides, the items only one side has, infrastructure errors counted apart: a sample whose
every row failed for the harness, not the model, is left out of the difference; format and
content errors stay in, as the scores the model earned). Items clustered by the records'
declared cluster key are resampled by cluster (the clustered paired bootstrap), and the
t test beside the interval is cluster-robust. With a margin, the verdict of
non-inferiority ("A is no worse than B by more than the margin", on the score's scale).

Two results of different protocols (:mod:`eee.store.protocol`) are not compared unless
asked (``across_protocols``): the refusal names every field that differs.

The statistics are :mod:`eee.stats` (pure functions on numpy arrays, checked by hand and
against scipy); this module pairs the samples and says what was done.
"""

from __future__ import annotations

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
from eee.catalog.uncertainty import scale as score_scale
from eee.reporting.findings import Finding, Refused
from eee.reporting.shown import command, shown_command
from eee.rules.record import as_float
from eee.stats.intervals import LEVEL, REPS, SEED, bootstrap_mean
from eee.stats.paired import mcnemar_exact, non_inferiority, paired
from eee.store import protocol

SHOWN = 160  # characters of a differing protocol field a refusal shows (longer: its start and sha256)

__all__ = ["bootstrap_mean_ci", "compare_records", "compare_samples", "mcnemar_exact"]


def bootstrap_mean_ci(
    d: Any, reps: int = REPS, seed: int = SEED, level: float = LEVEL, max_values: int = 256
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``d`` (paired differences): resampling
    items (:func:`eee.stats.intervals.bootstrap_mean`; ``max_values``: up to this many
    distinct values the resampling is a multinomial draw of their counts)."""
    return bootstrap_mean(d, None, reps, seed, level, max_values)


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


def _cluster_labels(a: ResultSamples, b: ResultSamples, ia: Any, ib: Any) -> tuple[list[str] | None, str | None]:
    """The cluster of each paired sample (A's, where both sides declare clusters), or None;
    and a note when the two sides put a sample in different clusters."""
    if a.clusters is None or b.clusters is None:
        return None, None
    la = [a.cluster_names[c] for c in a.clusters[ia].tolist()]
    lb = [b.cluster_names[c] for c in b.clusters[ib].tolist()]
    if any(x is None for x in la):
        return None, "some samples of A have no cluster: not clustered"
    differ = sum(1 for x, y in zip(la, lb, strict=True) if x != y)
    note = f"{differ} paired samples are in different clusters in A and B: A's clusters are used" if differ else None
    return [str(x) for x in la], note


def compare_samples(
    a: ResultSamples,
    b: ResultSamples,
    disagreements: int | None = None,
    margin: float | None = None,
    scale: float = 1.0,
    lower_is_better: bool = False,
) -> dict[str, Any]:
    """The sample-level comparison of two results (A minus B). ``disagreements``: how many
    disagreeing samples to list (None: all). ``margin``: the non-inferiority margin on the
    score's scale (``scale`` score units per unit of a sample's score: 100 for a percent
    score of 0-1 samples), oriented by ``lower_is_better``."""
    import numpy as np

    matched_by, ia, ib = _match(a, b)
    n = len(ia)
    infra_a, infra_b = a.infra_mask(), b.infra_mask()
    left_out = infra_a[ia] | infra_b[ib]
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
        "denominators": {
            "shared": n,
            "valid_shared": int(n - left_out.sum()),
            "only_a": len(a) - n,
            "only_b": len(b) - n,
            "infrastructure_errors": {
                "a": int(infra_a.sum()),
                "b": int(infra_b.sum()),
                "shared_left_out": int(left_out.sum()),
            },
            "error_samples": {"a": dict(sorted(a.error_items.items())), "b": dict(sorted(b.error_items.items()))},
        },
        "notes": [],
    }
    ia, ib = ia[~left_out], ib[~left_out]
    n = len(ia)
    if n == 0:
        out["note"] = (
            "no sample in common: nothing to compare sample by sample"
            if not out["overlap"]
            else "every shared sample is an infrastructure error on one side: nothing to compare"
        )
        return out
    sa, sb = a.valid_scores()[ia], b.valid_scores()[ib]
    diff = sa - sb
    clusters, note = _cluster_labels(a, b, ia, ib)
    if note:
        out["notes"].append(note)
    result = paired(sa, sb, clusters)
    lo, hi = result.low, result.high
    out.update(
        {
            "mean_a": result.mean_a,
            "mean_b": result.mean_b,
            "difference": result.difference,
            "difference_ci": [lo, hi],
            "ci_level": result.level,
            "bootstrap": {
                "reps": result.reps,
                "seed": result.seed,
                "method": f"{result.method}, paired: resampling "
                + (
                    f"the {result.clusters} clusters of the shared samples" if result.clusters else "the shared samples"
                ),
                "clusters": result.clusters,
            },
            "t_test": {
                "difference": result.test.mean,
                "se": result.test.se,
                "df": result.test.df,
                "p": result.test.p,
                "clustered": result.test.clusters is not None,
            },
            "score_scale": scale,
        }
    )
    if result.clusters is not None and result.clusters < 10:
        out["notes"].append(
            f"{result.clusters} clusters: a clustered interval rests on few independent units and is wide and coarse"
        )
    if margin is not None:
        sign = -1.0 if lower_is_better else 1.0
        better = sorted((sign * lo * scale, sign * hi * scale))
        out["non_inferiority"] = {
            "claim": "A is no worse than B by more than the margin",
            "margin": margin,
            "difference_better_is_positive": better,
            "ci_level": result.level,
            "verdict": non_inferiority(better[0], better[1], margin),
        }
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
        "_result": r,
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
                            "b": {k: v for k, v in y.items() if not k.startswith("_")},
                            "normalised_difference": None if na is None or nb is None else na - nb,
                            "_results": (x["_result"], y["_result"]),
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


def result_of(doc: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The result a sidecar's result key names: by evaluation_result_id, else by a name the
    record gives one result only; the only result of a record of one."""
    results = _results(doc)
    for r in results:
        if r.get("evaluation_result_id") == key:
            return r
    named = [r for r in results if r.get("evaluation_name") == key]
    if len(named) == 1:
        return named[0]
    return results[0] if len(results) == 1 else None


def protocol_pairs(
    a: StoredRecord, b: StoredRecord, pairs: list[tuple[str, Any, str, Any]], names: Any = None
) -> list[dict[str, Any]]:
    """For each pair (A's label, A's result, B's label, B's result): both protocol ids and the
    fields that differ, with both values."""
    out = []
    for la, ra, lb, rb in pairs:
        if not isinstance(ra, dict) or not isinstance(rb, dict):
            continue
        fa = protocol.fields_of(a.doc, ra, a.benchmark, names)
        fb = protocol.fields_of(b.doc, rb, b.benchmark, names)
        out.append(
            {
                "a": la,
                "b": lb,
                "protocol_a": protocol.protocol_id(fa),
                "protocol_b": protocol.protocol_id(fb),
                "differing": [
                    {"field": f, "a": protocol.shown(fa[f], SHOWN), "b": protocol.shown(fb[f], SHOWN)}
                    for f in protocol.differing(fa, fb)
                ],
            }
        )
    return out


def protocol_refusal(b: StoredRecord, checked: list[dict[str, Any]]) -> Refused | None:
    """The refusal of a comparison across protocols, naming every field that differs."""
    apart = [c for c in checked if c["differing"]]
    if not apart:
        return None
    first = apart[0]
    said = "; ".join(f"{d['field']}: {d['a']!r} vs {d['b']!r}" for d in first["differing"])
    more = f" (and {len(apart) - 1} more pair{'s' if len(apart) > 2 else ''} of results)" if len(apart) > 1 else ""
    return Refused(
        Finding(
            b.rel,
            "$",
            f"A's {first['a']} and B's {first['b']} are of different protocols ({said}){more}"[:1200],
            hint="compare results of one protocol (`eee leaderboard --benchmark B` lists them by protocol), or pass "
            "--across-protocols to compare them anyway (the report names what differs)",
            check="analysis",
        )
    )


def compare_records(
    a: StoredRecord,
    b: StoredRecord,
    result_a: str | None = None,
    result_b: str | None = None,
    disagreements: int | None = None,
    max_rows: int | None = None,
    margin: float | None = None,
    across_protocols: bool = False,
    names: Any = None,
) -> dict[str, Any]:
    """The comparison report of two records of one benchmark. The two sidecars are read up
    to ``max_rows`` rows together (default :data:`eee.analysis.samples.MAX_ROWS`); beyond,
    the records are compared on their aggregates, and the report says why. Results of
    different protocols are refused (:class:`Refused`) unless ``across_protocols``.
    ``margin``: the non-inferiority margin, on the score's scale. ``names``: the identity
    registry (canonical ids in the protocols)."""
    from eee.analysis.samples import MAX_ROWS, ROW_BYTES, RowBudget, TooManyRows
    from eee.store.items import cluster_key_of

    budget = RowBudget(MAX_ROWS if max_rows is None else max_rows)
    aggregates = compare_aggregates(a.doc, b.doc)
    checked = protocol_pairs(
        a,
        b,
        [
            (
                str(p["a"].get("evaluation_result_id") or p["a"].get("evaluation_name")),
                p["_results"][0],
                str(p["b"].get("evaluation_result_id") or p["b"].get("evaluation_name")),
                p["_results"][1],
            )
            for p in aggregates
        ],
        names,
    )
    for p in aggregates:
        p.pop("_results", None)
    report: dict[str, Any] = {
        "benchmark": a.benchmark,
        "a": _record_info(a),
        "b": _record_info(b),
        "aggregates": aggregates,
        "protocols": checked,
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
                groups.append(read_samples(rec.sidecar, budget, cluster_key_of(rec.doc)))
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
    sample_pairs: list[tuple[ResultSamples, ResultSamples]] = []
    how = ""
    if ga is not None and gb is not None:
        if not ga or not gb:
            report["notes"].append("a sidecar has no rows: nothing to compare sample by sample")
        else:
            how, sample_pairs = _pairs(ga, gb, a, b, result_a, result_b)
            seen = {(c["a"], c["b"]) for c in checked}
            checked += protocol_pairs(
                a,
                b,
                [
                    (x.key, result_of(a.doc, x.key), y.key, result_of(b.doc, y.key))
                    for x, y in sample_pairs
                    if (x.key, y.key) not in seen
                ],
                names,
            )
    refusal = protocol_refusal(b, checked)
    if refusal is not None and not across_protocols:
        raise refusal
    if refusal is not None:
        report["notes"].append(
            "compared across protocols (--across-protocols): " + refusal.findings[0].message.split(" are of ", 1)[-1]
        )
    if sample_pairs:
        try:
            results = []
            for x, y in sample_pairs:
                config = (result_of(a.doc, x.key) or {}).get("metric_config")
                config = config if isinstance(config, dict) else {}
                results.append(
                    compare_samples(
                        x,
                        y,
                        disagreements,
                        margin=margin,
                        scale=score_scale(config),
                        lower_is_better=config.get("lower_is_better") is True,
                    )
                )
        except (OSError, SidecarProblem) as exc:  # reading the listed sample ids again
            report["notes"].append(f"A {a.uuid}: the sidecar cannot be read again ({exc})")
        else:
            report["samples"] = {"paired": how, "results": results}
    if report["samples"] is None:
        report["notes"].append("compared on the aggregate scores only")
        if margin is not None:
            report["notes"].append("no non-inferiority verdict: it needs the samples of both records")
    return report


def compare_many(
    records: list[StoredRecord],
    disagreements: int | None = None,
    max_rows: int | None = None,
    margin: float | None = None,
    across_protocols: bool = False,
    names: Any = None,
) -> dict[str, Any]:
    """Every pair of ``records`` (one model on one benchmark, e.g. under two harnesses); a
    pair of different protocols is listed as not compared (with the fields that differ)
    unless ``across_protocols``."""
    comparisons = []
    for x, y in combinations(records, 2):
        try:
            comparisons.append(
                compare_records(
                    x,
                    y,
                    disagreements=disagreements,
                    max_rows=max_rows,
                    margin=margin,
                    across_protocols=across_protocols,
                    names=names,
                )
            )
        except Refused as exc:
            comparisons.append(
                {
                    "benchmark": x.benchmark,
                    "a": _record_info(x),
                    "b": _record_info(y),
                    "aggregates": [],
                    "protocols": [],
                    "samples": None,
                    "not_compared": exc.findings[0].message,
                    "notes": [f"not compared: {exc.findings[0].message}"],
                }
            )
    return {"records": [_record_info(r) for r in records], "comparisons": comparisons}


# -- readable output ------------------------------------------------------------------------


def _num(x: Any, digits: int = 4) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.2e}"


def non_inferiority_text(verdict: dict[str, Any]) -> str:
    """One line of a non-inferiority verdict (``eee compare``'s and an experiment's): the
    margin on the score's scale, the verdict and the interval of the difference it rests on."""
    low, high = verdict["difference_better_is_positive"]
    return (
        f"non-inferiority (margin {verdict['margin']:g} on the score's scale): {verdict['verdict']} "
        f"(difference, better positive: {low:+.4g} .. {high:+.4g})"
    )


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
            den = r.get("denominators") or {}
            infra = den.get("infrastructure_errors") or {}
            if infra.get("a") or infra.get("b"):
                out.append(
                    f"    infrastructure errors counted apart: {infra['a']} samples of A, {infra['b']} of B; "
                    f"{infra['shared_left_out']} shared samples left out, {den['valid_shared']} compared"
                )
            errors = den.get("error_samples") or {}
            said = [
                f"{side.upper()}: " + ", ".join(f"{n} {k}" for k, n in errors[side].items())
                for side in ("a", "b")
                if errors.get(side) and set(errors[side]) - {"infrastructure"}
            ]
            if said:
                out.append("    samples with format or content errors (scored as the model's): " + "; ".join(said))
            if "difference_ci" not in r:
                continue
            lo, hi = r["difference_ci"]
            boot = r.get("bootstrap") or {}
            clustered = f", {boot['clusters']} clusters resampled" if boot.get("clusters") else ""
            out.append(
                f"    mean score {r['mean_a']:.4f} vs {r['mean_b']:.4f}; difference A-B {r['difference']:+.4f} "
                f"({int(r['ci_level'] * 100)}% bootstrap CI {lo:+.4f} .. {hi:+.4f}{clustered}; "
                f"n = {den.get('valid_shared', r['overlap'])})"
            )
            test = r.get("t_test") or {}
            if test.get("p") is not None:
                out.append(
                    f"    paired t test{' (cluster-robust)' if test.get('clustered') else ''}: "
                    f"se {test['se']:.4f}, {test['df']:g} df, p = {_p(test['p'])}"
                )
            verdict = r.get("non_inferiority")
            if verdict:
                out.append("    " + non_inferiority_text(verdict))
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
            for note in r.get("notes") or []:
                out.append(f"    note: {note}")
    for note in report["notes"]:
        out.append(f"note: {note}")
    return "\n".join(out) + "\n"


def render_many(report: dict[str, Any], listed: int = 20) -> str:
    n, m = len(report["records"]), len(report["comparisons"])
    out = [f"{n} record{'' if n == 1 else 's'}, {m} pair{'' if m == 1 else 's'}\n"]  # never "1 pairs"
    out += [render(c, listed) for c in report["comparisons"]]
    return "\n".join(out)
