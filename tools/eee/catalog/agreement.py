"""Sources checked against each other: results of one model on one benchmark under one
protocol, from different sources, whose difference is larger than their uncertainties allow.

Over the catalogue's rows of a benchmark (:func:`compare`), active results only:

- **Which pairs.** Two results of different records, of the same model (its canonical id)
  and the same metric (canonical id), are a *candidate* pair. Only a pair under **one
  protocol** (:mod:`eee.store.protocol`: the same ``protocol_id``) is compared; a pair of
  different protocols is never compared, and counted (``different_protocols``) with the
  fields that keep them apart. A pair from one **source** (the same source type,
  organisation, name, harness and harness version: :func:`source_of`) is not what this
  checks (a source against itself) and is counted apart (``same_source``).
- **The test** (:data:`TEST`): the difference of two estimates taken as independent,
  ``z = (a - b) / sqrt(se_a^2 + se_b^2)``, two-sided, each ``se`` the catalogue's
  (:mod:`eee.catalog.uncertainty`: the record's own, else from its items, else Wilson from
  a count); Holm's step-down correction over every pair tested on the page keeps the chance
  of one false alarm among them at 5%. A pair *disagrees* when its Holm-adjusted p-value
  is below 0.05. Two results computed from the same items (a leaderboard's table and its
  per-item files) are not independent: their difference should be nil, and the test is
  conservative for them (it flags less than it could).
- **Not tested**: a pair where either result has no standard error (``no_uncertainty``),
  including a result whose own items do not give its score (its interval is withheld; the
  rule ``items-agree`` reports it).

``eee agree --benchmark B`` prints the report; the site's benchmark page shows the pairs
that disagree. Pure: rows in, a report (a plain dict, JSON-ready) out.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations
from typing import Any

from eee.stats.distributions import normal_two_sided
from eee.stats.ranking import ALPHA, holm
from eee.store.protocol import differing, from_columns

TEST = (
    "z test of the difference of two independent estimates, (a - b) / sqrt(se_a^2 + se_b^2), two-sided, "
    f"Holm-corrected over the pairs tested: a pair disagrees when its adjusted p < {ALPHA}"
)
SOURCE_KEYS = ("source_type", "source_organization", "source_name", "eval_library", "eval_library_version")
# the catalogue columns compare() reads (plus the protocol_<field> columns, when present)
COLUMNS = (
    "record_uuid",
    "record_path",
    "benchmark",
    "model_id",
    "model_id_canonical",
    "metric_id",
    "metric_id_canonical",
    "evaluation_result_id",
    "evaluation_name",
    "score",
    "se",
    "uncertainty_source",
    "items_agree",
    "protocol_id",
    "lifecycle",
    *SOURCE_KEYS,
)


def _f(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def source_of(row: dict[str, Any]) -> tuple[Any, ...]:
    """What says where a result comes from: source type, organisation, name, harness and its version."""
    return tuple(row.get(k) for k in SOURCE_KEYS)


def _side(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "record_uuid": row.get("record_uuid"),
        "record_path": row.get("record_path"),
        "result": row.get("evaluation_result_id") or row.get("evaluation_name"),
        "score": _f(row.get("score")),
        "se": _f(row.get("se")),
        "uncertainty_source": row.get("uncertainty_source") or "none",
        "source": {k: row.get(k) for k in SOURCE_KEYS},
    }


def compare(rows: list[dict[str, Any]], benchmark: str) -> dict[str, Any]:
    """The agreement report of ``benchmark`` from its catalogue ``rows`` (:data:`COLUMNS`)."""
    active = [r for r in rows if (r.get("lifecycle") or "active") == "active" and _f(r.get("score")) is not None]
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for r in active:
        model = r.get("model_id_canonical") or r.get("model_id")
        metric = r.get("metric_id_canonical") or r.get("metric_id")
        groups.setdefault((model, metric), []).append(r)
    tested: list[dict[str, Any]] = []
    skipped = Counter({"different_protocols": 0, "same_source": 0, "no_uncertainty": 0})
    fields: Counter[str] = Counter()
    for (model, metric), members in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        members.sort(key=lambda r: (str(r.get("record_uuid")), str(r.get("evaluation_result_id"))))
        for a, b in combinations(members, 2):
            if a.get("record_uuid") == b.get("record_uuid"):
                continue
            if a.get("protocol_id") != b.get("protocol_id") or a.get("protocol_id") is None:
                skipped["different_protocols"] += 1
                fields.update(differing(from_columns(a), from_columns(b)))
                continue
            if source_of(a) == source_of(b):
                skipped["same_source"] += 1
                continue
            se_a, se_b = _f(a.get("se")), _f(b.get("se"))
            if se_a is None or se_b is None:
                skipped["no_uncertainty"] += 1
                continue
            sa, sb = _f(a["score"]), _f(b["score"])
            assert sa is not None and sb is not None
            diff = sa - sb
            scale = math.sqrt(se_a * se_a + se_b * se_b)
            z = diff / scale if scale > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
            p = float(normal_two_sided(z)) if math.isfinite(z) else 0.0
            tested.append(
                {
                    "model_id": model,
                    "metric_id": metric,
                    "protocol_id": a.get("protocol_id"),
                    "difference": diff,
                    "z": z if math.isfinite(z) else None,
                    "p": p,
                    "a": _side(a),
                    "b": _side(b),
                }
            )
    if tested:
        rejected, adjusted = holm([t["p"] for t in tested])
        for t, bad, adj in zip(tested, rejected.tolist(), adjusted.tolist(), strict=True):
            t["p_holm"] = adj
            t["disagree"] = bool(bad)
    disagreeing = [t for t in tested if t["disagree"]]
    disagreeing.sort(key=lambda t: (t["p"], str(t["model_id"])))
    return {
        "benchmark": benchmark,
        "test": TEST,
        "alpha": ALPHA,
        "results": len(active),
        "pairs_tested": len(tested),
        "disagreeing": disagreeing,
        "agreeing": len(tested) - len(disagreeing),
        "skipped": dict(skipped),
        "protocol_fields_apart": dict(sorted(fields.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def number(x: float | None) -> str:
    return "?" if x is None else f"{x:.4g}"


def source_text(side: dict[str, Any]) -> str:
    """A result's source in a few words: organisation or name, type, harness and version."""
    s = side["source"]
    who = s.get("source_name") or s.get("source_organization") or "?"
    lib = " ".join(str(v) for v in (s.get("eval_library"), s.get("eval_library_version")) if v and v != "unknown")
    kind = s.get("source_type")
    return f"{who} ({', '.join(x for x in (kind, lib) if x)})" if kind or lib else str(who)


def render(report: dict[str, Any]) -> list[str]:
    """The report as lines of text (``eee agree``'s rich format)."""
    out = [
        f"{report['benchmark']}: {report['results']:,} active results; {report['pairs_tested']:,} pairs of one model "
        f"under one protocol from different sources tested, {len(report['disagreeing']):,} disagree",
        f"test: {report['test']}",
    ]
    for t in report["disagreeing"]:
        a, b = t["a"], t["b"]
        out.append(
            f"  {t['model_id']} [{t['metric_id']}] protocol {str(t['protocol_id'])[:12]}: "
            f"{number(a['score'])} ± {number(a['se'])} vs {number(b['score'])} ± {number(b['se'])}, "
            f"difference {number(t['difference'])}, z {number(t['z'])}, p {t['p']:.2g} (Holm {t['p_holm']:.2g})"
        )
        out.append(f"    {a['record_path']} ({a['result']}) from {source_text(a)}, se from {a['uncertainty_source']}")
        out.append(f"    {b['record_path']} ({b['result']}) from {source_text(b)}, se from {b['uncertainty_source']}")
    sk = report["skipped"]
    out.append(
        f"not compared: {sk['different_protocols']:,} pairs of different protocols (never compared)"
        + (
            " (fields apart: " + ", ".join(f"{k} {v:,}" for k, v in report["protocol_fields_apart"].items()) + ")"
            if report["protocol_fields_apart"]
            else ""
        )
        + f"; {sk['same_source']:,} pairs from one source; {sk['no_uncertainty']:,} pairs where a result has no "
        "standard error (or its interval is withheld: its items do not give its score)"
    )
    return out
