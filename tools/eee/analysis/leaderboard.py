"""Leaderboards that say what they know: the active results of one benchmark, ranked within
each protocol, each score with its interval and the source of it, and a rank range per result.

One leaderboard per protocol (:mod:`eee.store.protocol`): results of different protocols
never share one (``--protocol`` picks one, ``--metric`` the metric). Each result shows the
catalogue's score and uncertainty (:mod:`eee.catalog.uncertainty`: record, items, count,
none). Where items pair the results (the same items scored by both, from the items table,
repeated samples averaged, infrastructure errors left out), every pair is compared by the
paired t test of its per-item differences (cluster-robust when the records declare
clusters), and Holm's correction keeps the family-wise error at 5%
(:func:`eee.stats.ranking.rank_ranges`): a result's rank range runs from one more than the
results significantly better to the count of those not significantly worse, so results the
data cannot order share a range ("3-5") instead of a false order. A result whose items do
not reproduce its score (or that has none) is compared by its standard error alone, as if
independent (conservative); one with neither is not ordered against the others.

``--pass-at K`` ranks by pass@k, estimated per item from its n samples with c correct
(:func:`eee.stats.passk.pass_at_k_items`) and averaged over items, with its interval; items
with fewer than K samples are counted apart.

For AlpacaEval (``eval_library`` alpaca_eval, the ``win_rate`` result) each entry also gives,
from its items, the numbers AlpacaEval's own leaderboard publishes (win rate, standard
error, wins, losses, draws, total, discrete win rate: :func:`eee.convert.alpaca_eval.win_rates`).

The results and items come from the catalogue the pipeline wrote (``build/catalog``) or, by
default for ``eee leaderboard``, from the store itself: the benchmark's records are written
as a catalogue into a temporary folder (the same code, so the same numbers) and read back.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ALPACA_LIBRARY = "alpaca_eval"
ALPACA_RESULT = "win_rate"
ALPACA_KEYS = ("win_rate", "standard_error", "n_wins", "n_wins_base", "n_draws", "n_total", "discrete_win_rate")
RESULT_COLUMNS = (
    "record_uuid",
    "record_path",
    "benchmark",
    "benchmark_canonical",
    "model_id",
    "model_id_canonical",
    "eval_library",
    "eval_library_version",
    "evaluation_result_id",
    "evaluation_name",
    "metric_id",
    "metric_id_canonical",
    "metric_name",
    "lower_is_better",
    "min_score",
    "max_score",
    "metric_unit",
    "score",
    "lifecycle",
    "status",
    "protocol_id",
    "se",
    "ci_low",
    "ci_high",
    "ci_level",
    "uncertainty_source",
    "uncertainty_method",
    "n_items",
    "items_agree",
)
ITEM_COLUMNS = (
    "record_uuid",
    "protocol_id",
    "evaluation_result_id",
    "item_id",
    "score",
    "is_correct",
    "error_class",
    "cluster",
)


@dataclass
class Tables:
    """The catalogue rows and the items (a pyarrow table) of one benchmark, and where they came from."""

    results: list[dict[str, Any]]
    items: Any
    origin: str


def _protocol_columns() -> tuple[str, ...]:
    from eee.store.protocol import COLUMN_PREFIX, NAMES

    return tuple(f"{COLUMN_PREFIX}{n}" for n in NAMES)


def tables_from_catalog(
    catalog: Path, folders: list[str], columns: tuple[str, ...] = RESULT_COLUMNS, items: bool = True
) -> Tables:
    """The benchmark folders' rows of a written catalogue (``build/catalog``) and its items
    table (``columns``: which of the catalogue's, the protocol's readable ones added; no
    items read unless ``items``)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    from eee.catalog.items import ITEMS_DIR, read_items
    from eee.catalog.table import read_catalog

    wanted = pa.array(folders, pa.string())
    rows = read_catalog(
        catalog,
        columns=list(dict.fromkeys(columns + _protocol_columns())),
        filter=pc.is_in(ds.field("benchmark"), wanted),
    ).to_pylist()
    items_dir = catalog / ITEMS_DIR
    if items and items_dir.is_dir():
        items = read_items(
            items_dir, columns=list(ITEM_COLUMNS), filter=pc.is_in(ds.field("benchmark"), wanted), dictionary=True
        )
    else:
        from eee.catalog.items import empty_table

        items = empty_table().select(list(ITEM_COLUMNS))
    return Tables(rows, items, str(catalog))


def tables_from_store(
    root: Path, folders: list[str], ledger: Any = None, columns: tuple[str, ...] = RESULT_COLUMNS, items: bool = True
) -> Tables:
    """The same tables, made from the store's records of the benchmark folders (their
    catalogue written into a temporary folder by :func:`eee.catalog.table.write_rows`)."""
    from eee.catalog.table import ItemsSink, iter_rows, record_paths, write_rows

    wanted = set(folders)
    paths = [(u, rel) for u, rel in record_paths(root) if rel.split("/", 2)[1] in wanted]
    with tempfile.TemporaryDirectory(prefix="eee-leaderboard-") as tmp:
        out = Path(tmp) / "catalog"
        sink = ItemsSink()
        write_rows(iter_rows(root, ledger=ledger, paths=paths, items=sink), out, items=sink)
        tables = tables_from_catalog(out, folders, columns, items)
    tables.origin = "the store"
    return tables


def _f(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _matches_metric(row: dict[str, Any], metric: str) -> bool:
    return metric in {
        row.get("metric_id"),
        row.get("metric_id_canonical"),
        row.get("metric_name"),
        row.get("evaluation_result_id"),
    }


def _result_key(row: dict[str, Any]) -> str:
    return str(row.get("evaluation_result_id") or row.get("evaluation_name") or "")


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "record_uuid": row["record_uuid"],
        "record_path": row.get("record_path"),
        "model_id": row.get("model_id_canonical") or row.get("model_id"),
        "eval_library": row.get("eval_library"),
        "result": _result_key(row),
        "score": _f(row.get("score")),
        "se": _f(row.get("se")),
        "ci_low": _f(row.get("ci_low")),
        "ci_high": _f(row.get("ci_high")),
        "ci_level": _f(row.get("ci_level")),
        "uncertainty_source": row.get("uncertainty_source") or "none",
        "uncertainty_method": row.get("uncertainty_method"),
        "n_items": row.get("n_items"),
        "items_agree": row.get("items_agree"),
    }


def _codes(column: Any) -> tuple[Any, list[Any]]:
    """(an int64 code per row, -1 where null; the distinct values) of a string column."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    column = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if isinstance(column, pa.ChunkedArray):
        column = pa.concat_arrays(column.chunks) if column.num_chunks != 1 else column.chunk(0)
    codes = np.asarray(column.indices.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    return codes, column.dictionary.to_pylist()


class _Items:
    """The items of one protocol as numpy arrays: which entry, which item, score, correct,
    infrastructure error, cluster (columns read as codes, never as Python strings per row)."""

    def __init__(self, table: Any, entries: list[dict[str, Any]]) -> None:
        import numpy as np
        import pyarrow.compute as pc

        records, record_names = _codes(table.column("record_uuid"))
        results, result_names = _codes(pc.fill_null(table.column("evaluation_result_id"), ""))
        index = {(e["record_uuid"], e["result"]): i for i, e in enumerate(entries)}
        lookup = np.full(max(1, len(record_names) * max(1, len(result_names))), -1, dtype=np.int64)
        for r, rname in enumerate(record_names):
            for q, qname in enumerate(result_names):
                lookup[r * len(result_names) + q] = index.get((rname, qname or ""), -1)
        at = np.maximum(records, 0).astype(np.int64) * len(result_names) + np.maximum(results, 0)
        entry = np.where(records >= 0, lookup[at], -1).astype(np.int32)
        del records, results, at
        keep = entry >= 0
        self.entry = entry[keep]
        del entry
        item, self.item_names = _codes(table.column("item_id"))
        self.item = item[keep]
        del item
        self.score = np.asarray(
            pc.fill_null(pc.cast(table.column("score"), "float64"), float("nan")).to_numpy(), float
        )[keep]
        correct = pc.fill_null(pc.cast(table.column("is_correct"), "float64"), float("nan"))
        self.correct = np.asarray(correct.to_numpy(), dtype=float)[keep]
        infra = pc.fill_null(pc.equal(table.column("error_class"), "infrastructure"), False)
        self.infra = np.asarray(infra.to_numpy(zero_copy_only=False), dtype=bool)[keep]
        cluster, self.cluster_names = _codes(table.column("cluster"))
        self.cluster = cluster[keep]

    def matrix(self, k: int) -> tuple[Any, Any, Any, list[str]]:
        """(K x n scores, items averaged over their valid samples, nan where absent; the
        presence mask; each item column's cluster (None where its first row has none); the
        item names)."""
        import numpy as np

        valid = ~self.infra & ~np.isnan(self.score)
        used = np.unique(self.item[valid])
        column = np.full(len(self.item_names), -1, dtype=np.int64)
        column[used] = np.arange(len(used))
        n = len(used)
        col = column[self.item[valid]]
        flat = self.entry[valid].astype(np.int64) * n + col
        sums = np.bincount(flat, self.score[valid], minlength=k * n)
        counts = np.bincount(flat, minlength=k * n)
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix = (sums / counts).reshape(k, n)
        mask = counts.reshape(k, n) > 0
        _, first = np.unique(col, return_index=True)  # each column's first valid row, in column order
        codes = self.cluster[valid][first]
        clusters: list[Any] = [self.cluster_names[c] if c >= 0 else None for c in codes.tolist()]
        return matrix, mask, clusters, [self.item_names[i] for i in used.tolist()]

    def pass_at(self, k: int, n_entries: int) -> tuple[Any, Any]:
        """(K x n per-item pass@k, nan where absent or fewer than k samples; presence mask)."""
        import numpy as np

        from eee.stats.passk import pass_at_k_items

        valid = ~self.infra & ~np.isnan(self.score)
        passed = np.where(np.isnan(self.correct), self.score >= 1.0, self.correct >= 0.5)
        used = np.unique(self.item[valid])
        column = np.full(len(self.item_names), -1, dtype=np.int64)
        column[used] = np.arange(len(used))
        n_items = len(used)
        flat = self.entry[valid].astype(np.int64) * n_items + column[self.item[valid]]
        n = np.bincount(flat, minlength=n_entries * n_items)
        c = np.bincount(flat, passed[valid].astype(float), minlength=n_entries * n_items).astype(np.int64)
        values = np.full(n.shape, np.nan)
        present = n > 0
        values[present] = pass_at_k_items(n[present], c[present], k)
        return values.reshape(n_entries, n_items), (present & ~np.isnan(values)).reshape(n_entries, n_items)


def _alpaca(items: _Items, entries: list[dict[str, Any]]) -> None:
    """AlpacaEval's own numbers of each entry, from its items (preference = score + 1)."""
    import numpy as np

    from eee.convert.alpaca_eval import win_rates

    for i, e in enumerate(entries):
        mine = (items.entry == i) & ~np.isnan(items.score)
        if not mine.any():
            continue
        values = win_rates([float(s) + 1.0 for s in items.score[mine].tolist()])
        e["alpaca_eval"] = {k: values.get(k) for k in ALPACA_KEYS}


def _leaderboard(pid: str, rows: list[dict[str, Any]], items_table: Any, pass_at: int | None) -> dict[str, Any]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from eee.stats.intervals import from_items
    from eee.stats.ranking import range_text, rank_ranges
    from eee.store.protocol import FIELDS, from_columns

    first = rows[0]
    lower = bool(first.get("lower_is_better"))
    entries = [_entry(r) for r in rows]
    k = len(entries)
    notes: list[str] = []
    table = items_table
    if table.num_rows:
        ids = pc.unique(pc.cast(table.column("protocol_id"), "string")).to_pylist()
        if ids != [pid]:  # the items of other protocols too: keep this one's
            table = table.filter(pc.equal(table.column("protocol_id"), pid))
    items = _Items(table, entries) if table.num_rows else None
    del table
    pa.default_memory_pool().release_unused()  # the columns' temporaries, back to the system
    scores = mask = clusters = None
    method = "unpaired (standard errors)"
    if items is not None and pass_at is None:
        scores, mask, clusters, _names = items.matrix(k)
        usable = np.array([bool(e["items_agree"]) for e in entries])
        dropped = int((mask.any(axis=1) & ~usable).sum())
        mask &= usable[:, None]
        if dropped:
            notes.append(
                f"{dropped} result(s) whose items do not reproduce their score are compared by their standard error only"
            )
    if pass_at is not None:
        if items is None:
            notes.append(f"no items: pass@{pass_at} cannot be estimated")
            scores, mask = None, None
            for e in entries:
                e.update(score=None, se=None, ci_low=None, ci_high=None, ci_level=None, uncertainty_source="none")
                e.update(uncertainty_method=None, n_items=None)
        else:
            scores, mask = items.pass_at(pass_at, k)
            _, _, clusters, _ = items.matrix(k)
            for i, e in enumerate(entries):
                values = scores[i][mask[i]]
                have = items.entry == i
                few = int(len(np.unique(items.item[have])) - len(values))
                cl = [c for c, m in zip(clusters, mask[i], strict=True) if m]
                est = from_items(values, cl if cl and all(c is not None for c in cl) else None)
                e.update(
                    {
                        "score": None if est is None else est.estimate,
                        "se": None if est is None else est.se,
                        "ci_low": None if est is None else est.low,
                        "ci_high": None if est is None else est.high,
                        "ci_level": None if est is None else est.level,
                        "uncertainty_source": "items" if est is not None else "none",
                        "uncertainty_method": None if est is None else f"pass@{pass_at} per item, then {est.method}",
                        "n_items": len(values),
                        "items_fewer_than_k_samples": few,
                    }
                )
            lower = False
    if clusters is not None and (not clusters or any(c is None for c in clusters)):
        clusters = None
    estimate = np.array([np.nan if e["score"] is None else e["score"] for e in entries], dtype=float)
    se = np.array([np.nan if e["se"] is None else e["se"] for e in entries], dtype=float)
    ranked = ~np.isnan(estimate)
    order = np.nonzero(ranked)[0]
    if len(order):
        sub_scores = scores[order] if scores is not None else None
        sub_mask = mask[order] if mask is not None else None
        ranking = rank_ranges(
            estimate[order],
            se[order],
            sub_scores,
            sub_mask,
            clusters if sub_scores is not None else None,
            higher_is_better=not lower,
        )
        for j, i in enumerate(order.tolist()):
            lo, hi = int(ranking.low[j]), int(ranking.high[j])
            entries[i].update(
                {
                    "rank": int(ranking.rank[j]),
                    "rank_range": [lo, hi],
                    "rank_text": range_text(lo, hi),
                    "paired": bool(sub_mask is not None and sub_mask[j].any()),
                }
            )
        if ranking.paired:
            groups = len(set(clusters)) if clusters is not None else None
            method = "paired t tests on the shared items" + (
                f", cluster-robust over {groups} clusters ({groups - 1} df)" if groups else ""
            )
        pairs = {
            "tested": ranking.pairs,
            "paired": ranking.paired,
            "significant": ranking.significant,
            "alpha": ranking.alpha,
            "correction": "holm",
            "method": method,
        }
        if groups_few(clusters):
            notes.append(
                f"{len(set(clusters))} clusters: cluster-robust tests rest on few independent units; rank ranges are wide"
            )
    else:
        pairs = {"tested": 0, "paired": 0, "significant": 0, "alpha": 0.05, "correction": "holm", "method": method}
    for e in entries:
        e.setdefault("rank", None)
        e.setdefault("rank_range", None)
        e.setdefault("rank_text", "")
        e.setdefault("paired", False)
    if items is not None and first.get("eval_library") == ALPACA_LIBRARY and _result_key(first) == ALPACA_RESULT:
        _alpaca(items, entries)
    entries.sort(key=lambda e: (e["rank"] is None, e["rank"] or 0, e["model_id"] or "", e["record_uuid"]))
    fields = from_columns(first)
    return {
        "protocol_id": pid,
        "protocol": {f.name: fields.get(f.name) for f in FIELDS},
        "metric": first.get("metric_id_canonical") or first.get("metric_id") or first.get("metric_name"),
        "result": _result_key(first),
        "lower_is_better": lower,
        "pass_at_k": pass_at,
        "entries": entries,
        "pairs": pairs,
        "notes": notes,
    }


def groups_few(clusters: Any) -> bool:
    return clusters is not None and 2 <= len(set(clusters)) < 10


def build(
    tables: Tables,
    benchmark: str,
    protocol: str | None = None,
    metric: str | None = None,
    pass_at: int | None = None,
) -> dict[str, Any]:
    """The leaderboards of ``benchmark`` (one per protocol) from ``tables``; ``protocol``: a
    protocol id or its start; ``metric``: a metric id, name or result id."""
    from collections import defaultdict

    from eee.catalog.table import WITHDRAWN

    rows = [r for r in tables.results if (r.get("lifecycle") or "active") == "active" and r.get("score") is not None]
    left_out = sorted(
        {(r["record_uuid"], r.get("lifecycle")) for r in tables.results if (r.get("lifecycle") or "active") != "active"}
    )
    if metric is not None:
        rows = [r for r in rows if _matches_metric(r, metric)]
    if protocol is not None:
        rows = [r for r in rows if str(r.get("protocol_id") or "").startswith(protocol)]
    by_protocol: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_protocol[str(r.get("protocol_id"))].append(r)
    boards = [_leaderboard(pid, group, tables.items, pass_at) for pid, group in by_protocol.items()]
    notes = []
    if pass_at is not None:
        without = [b for b in boards if all(e["score"] is None for e in b["entries"])]
        boards = [b for b in boards if b not in without]
        if without:
            notes.append(
                f"{len(without)} protocol(s) without items left out: pass@{pass_at} needs the samples "
                f"({', '.join(b['result'] for b in without[:5])})"
            )
    boards.sort(key=lambda b: (-len(b["entries"]), b["result"], b["protocol_id"]))
    return {
        "benchmark": benchmark,
        "from": tables.origin,
        "notes": notes,
        "leaderboards": boards,
        "left_out": [{"record_uuid": u, "lifecycle": st} for u, st in left_out if st in (*WITHDRAWN, "duplicate")],
    }


# -- readable output ------------------------------------------------------------------------


def _num(x: Any, digits: int = 4) -> str:
    if x is None:
        return ""
    return (
        f"{x:.{digits}g}" if abs(x) >= 1e4 or (x != 0 and abs(x) < 1e-3) else f"{x:.{digits}f}".rstrip("0").rstrip(".")
    )


def interval_text(e: dict[str, Any]) -> str:
    """A score's interval as tables show it: ``[low, high]`` (its level when not 95%), or ``± se``."""
    low, high, level = e.get("ci_low"), e.get("ci_high"), e.get("ci_level")
    if low is not None and high is not None:
        said = f"[{_num(low)}, {_num(high)}]"
        return said if level in (None, 0.95) else f"{said} at {level:.0%}"
    if e.get("se") is not None:
        return f"± {_num(e['se'])} (se)"
    return ""


def render(report: dict[str, Any]) -> str:
    out = [f"benchmark {report['benchmark']} (from {report['from']})"]
    if not report["leaderboards"]:
        out.append("no active result to rank")
    for board in report["leaderboards"]:
        said = ", ".join(f"{k} {v}" for k, v in board["protocol"].items() if v is not None and len(str(v)) <= 80)
        title = f"pass@{board['pass_at_k']} of " if board["pass_at_k"] else ""
        out.append("")
        out.append(f"{title}{board['metric']} ({board['result']}), protocol {board['protocol_id']}")
        out.append(f"  {said}")
        p = board["pairs"]
        out.append(
            f"  {len(board['entries'])} results; rank ranges: {p['method']}, {p['tested']} pairs tested, "
            f"{p['significant']} significant after Holm at {p['alpha']:g}"
        )
        alpaca = any("alpaca_eval" in e for e in board["entries"])
        head = ["rank", "range", "model", "score", "95% interval", "source", "items"]
        if alpaca:
            head += ["win rate", "se", "wins", "losses", "draws", "n", "discrete"]
        lines = [head]
        for e in board["entries"]:
            line = [
                "" if e["rank"] is None else str(e["rank"]),
                e["rank_text"],
                f"{e['model_id']} ({e['record_uuid'][:8]})",
                _num(e["score"]),
                interval_text(e),
                e["uncertainty_source"],
                "" if e["n_items"] is None else str(e["n_items"]),
            ]
            if alpaca:
                a = e.get("alpaca_eval") or {}
                line += [
                    _num(a.get("win_rate")),
                    _num(a.get("standard_error")),
                    *("" if a.get(k) is None else str(a[k]) for k in ("n_wins", "n_wins_base", "n_draws", "n_total")),
                    _num(a.get("discrete_win_rate")),
                ]
            lines.append(line)
        widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
        for row in lines:
            out.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        for note in board["notes"]:
            out.append(f"  note: {note}")
    for note in report.get("notes") or []:
        out.append(f"note: {note}")
    if report["left_out"]:
        out.append("")
        out.append(f"left out (not active): {len(report['left_out'])} record(s)")
    return "\n".join(out) + "\n"
