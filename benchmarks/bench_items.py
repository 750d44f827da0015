#!/usr/bin/env python3
"""The items table and the leaderboard at scale: time and peak memory, end to end.

    python benchmarks/bench_items.py [--sizes RECORDSxITEMS ...] [--clusters G] [--repeat N]

For each size (default ``200x805``, AlpacaEval's shape at 200 models, and ``10000x1000``),
a store of that many records of one benchmark and protocol, each with a sidecar of that many
binary items (simulated from a Rasch model, the items in ``--clusters`` declared clusters),
then, each in a fresh process (interpreter start-up included) with its peak resident memory:

  catalog      ``eee catalog --out DIR``: the catalogue and the items table, in one pass
  floor        reading and parsing the same sidecars with orjson only
  leaderboard  ``eee leaderboard --benchmark B --catalog DIR --format json`` (from the
               written items table: paired rank ranges over every pair, Holm)
  store        ``eee leaderboard --benchmark B --format json`` from the store's records
               (the smaller sizes only: it writes the benchmark's catalogue first)
  query        the guide's "newly failed" DuckDB query over the items table, in this
               process: the median of ``--repeat`` runs (target: under 1 s)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(PROJECT / "tools"))
sys.path.insert(0, str(PROJECT / "tests"))

from bench_analysis import _floor_rss, _measure  # noqa: E402  (one way to time a child process)

ROW = (
    '{{"schema_version":"0.3.0","evaluation_id":"bench","model_id":"{model}","evaluation_name":"qa-bench",'
    '"evaluation_result_id":"qa:exact_match","sample_id":"item-{item:05d}","interaction_type":"single_turn",'
    '"input":{{"raw":"question {item}","reference":["a"]}},"output":{{"raw":["a"]}},'
    '"answer_attribution":[{{"turn_idx":0,"source":"output.raw","extracted_value":"a",'
    '"extraction_method":"exact_match","is_terminal":true}}],'
    '"evaluation":{{"score":{score},"is_correct":{correct}}},"metadata":{{"dataset":"cluster-{cluster}"}}}}\n'
)
BENCHMARK = "bench-items"


def make_store(root: Path, records: int, items: int, clusters: int) -> tuple[list[Path], list[str]]:
    """A store of ``records`` records of ``BENCHMARK``, each with ``items`` binary items."""
    import numpy as np

    from analysis_store import record_doc, uuid_of

    rng = np.random.default_rng(0)
    theta = rng.normal(0, 1, records)
    difficulty = rng.normal(0, 1, items)
    cluster = rng.integers(0, clusters, items)
    sidecars, models = [], []
    for r in range(records):
        model = f"lab{r % 97}/model-{r:05d}"
        models.append(model)
        developer, name = model.split("/")
        folder = root / "data" / BENCHMARK / developer / name
        folder.mkdir(parents=True, exist_ok=True)
        right = rng.random(items) < 1 / (1 + np.exp(-(theta[r] - difficulty)))
        uuid = uuid_of(r + 1)
        sidecar = folder / f"{uuid}_samples.jsonl"
        sidecar.write_text(
            "".join(
                ROW.format(
                    model=model, item=i, score="1.0" if ok else "0.0", correct="true" if ok else "false", cluster=c
                )
                for i, (ok, c) in enumerate(zip(right.tolist(), cluster.tolist(), strict=True))
            )
        )
        doc = record_doc(model, "inspect_ai", float(right.mean()))
        doc["detailed_evaluation_results"].update(
            file_path=f"data/{BENCHMARK}/{developer}/{name}/{sidecar.name}",
            total_rows=items,
            additional_details={"cluster_key": "dataset"},
        )
        (folder / f"{uuid}.json").write_text(json.dumps(doc))
        sidecars.append(sidecar)
    return sidecars, models


NEWLY_FAILED = """
    WITH per_item AS (
        SELECT model_id_canonical AS model, protocol_id, item_id, avg(is_correct::INTEGER) AS correct
        FROM read_parquet('{items}/*/*.parquet', hive_partitioning = true, hive_types = {{'benchmark': 'VARCHAR'}})
        WHERE model_id_canonical IN ($a, $b) AND error_class IS DISTINCT FROM 'infrastructure'
        GROUP BY ALL)
    SELECT a.protocol_id, a.item_id
    FROM per_item a JOIN per_item b USING (protocol_id, item_id)
    WHERE a.model = $a AND b.model = $b AND a.correct >= 0.5 AND b.correct < 0.5
    ORDER BY ALL
"""


def _query(items: Path, a: str, b: str, repeat: int) -> tuple[float, int]:
    import duckdb

    times, found = [], 0
    for _ in range(repeat):
        con = duckdb.connect()  # a fresh connection: nothing cached between runs
        started = time.perf_counter()
        found = len(con.execute(NEWLY_FAILED.format(items=items), {"a": a, "b": b}).fetchall())
        times.append(time.perf_counter() - started)
        con.close()
    return statistics.median(times), found


def run(records: int, items: int, clusters: int, repeat: int, from_store: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-items-") as tmp:
        store = Path(tmp) / "store"
        started = time.perf_counter()
        sidecars, models = make_store(store, records, items, clusters)
        made = time.perf_counter() - started
        size = sum(p.stat().st_size for p in sidecars) / 1e9
        rows = records * items
        print(f"{records:,} records x {items:,} items ({rows:,} rows, {size:.2f} GB of sidecars; made in {made:.0f} s)")
        catalog = Path(tmp) / "catalog"
        took, kib, _, _ = _measure(["catalog", "--store", str(store), "--out", str(catalog)])
        floor, floor_kib = _floor_rss(sidecars)
        items_bytes = sum(p.stat().st_size for p in (catalog / "items").rglob("*.parquet")) / 1e6
        print(
            f"  catalog + items table: {took:.1f} s ({rows / took:,.0f} rows/s), peak memory {kib / 1024:.0f} MB; "
            f"parse-only floor {floor:.1f} s (ratio {took / floor:.1f}x), {floor_kib / 1024:.0f} MB; "
            f"items table {items_bytes:.0f} MB of Parquet"
        )
        took, kib, _, _ = _measure(
            [
                "leaderboard",
                "--store",
                str(store),
                "--benchmark",
                BENCHMARK,
                "--catalog",
                str(catalog),
                "--format",
                "json",
            ]
        )
        pairs = records * (records - 1) // 2
        print(
            f"  leaderboard from the items table: {took:.1f} s, peak memory {kib / 1024:.0f} MB ({pairs:,} pairs, Holm)"
        )
        if from_store:
            took, kib, _, _ = _measure(
                ["leaderboard", "--store", str(store), "--benchmark", BENCHMARK, "--format", "json"]
            )
            print(f"  leaderboard from the store's records: {took:.1f} s, peak memory {kib / 1024:.0f} MB")
        median, found = _query(catalog / "items", models[0], models[1], repeat)
        print(
            f"  newly-failed query (DuckDB, {found} items): median {median:.3f} s of {repeat} "
            f"(target 1 s: {median:.2f}x of it)"
        )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="*", default=["200x805", "10000x1000"], metavar="RECORDSxITEMS")
    p.add_argument("--clusters", type=int, default=20)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    for size in args.sizes:
        records, items = (int(x) for x in size.lower().split("x"))
        run(records, items, args.clusters, args.repeat, from_store=records * items <= 1_000_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
