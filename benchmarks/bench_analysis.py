#!/usr/bin/env python3
"""Speed of the analyses against their targets, end to end as a user runs them.

    python benchmarks/bench_analysis.py [--rows N] [--models M] [--items I] [--repeat K]

  compare  ``eee compare A B --format json`` on two records whose sidecars have ``--rows``
           rows each (default 100,000; binary scores, ~60% agreement in the disagreements
           listed): target under 5 s
  irt      ``eee irt --benchmark B`` over ``--models`` records x ``--items`` items
           (default 50 x 2,000; simulated from a Rasch model), fit and Parquet written:
           target under 30 s
  floor    reading and parsing the same sidecars with orjson only
  catalog  ``eee catalog`` on stores of ``--catalog-records`` records (default 2,000 and
           20,000): seconds and peak memory, which stays flat as the store grows (the
           catalogue is streamed in row groups)

Each figure is the median of ``--repeat`` fresh subprocesses (interpreter start-up
included) and is printed with its ratio to the target and to the floor.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT / "tools"))
sys.path.insert(0, str(PROJECT / "tests"))


def _run(args: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "eee", *args], capture_output=True, text=True)
    took = time.perf_counter() - started
    if proc.returncode not in (0, 2):
        raise SystemExit(
            f"eee {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
    return took


def _floor(paths: list[Path]) -> float:
    code = (
        "import orjson,sys\n"
        "for p in sys.argv[1:]:\n"
        "    with open(p,'rb') as fh:\n"
        "        for line in fh: orjson.loads(line)\n"
    )
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *map(str, paths)], check=True)
    return time.perf_counter() - started


def main() -> int:
    import numpy as np

    from analysis_store import place, uuid_of
    from eee.analysis.irt import simulate

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--models", type=int, default=50)
    p.add_argument("--items", type=int, default=2_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--catalog-records", type=int, nargs="*", default=[2_000, 20_000])
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        rng = np.random.default_rng(0)
        a = (rng.random(args.rows) < 0.7).astype(float)
        b = np.where(rng.random(args.rows) < 0.9, a, 1 - a)
        ra = place(store, uuid_of(1), "acme/widget-7b", "helm", list(a), benchmark="pair")
        rb = place(store, uuid_of(2), "acme/widget-7b", "lm_eval", list(b), benchmark="pair")
        sidecars = [r.with_name(r.stem + "_samples.jsonl") for r in (ra, rb)]
        size = sum(s.stat().st_size for s in sidecars) / 1e6
        y, _, _ = simulate(args.models, args.items, seed=0)
        irt_sidecars = []
        for m in range(args.models):
            rec = place(store, uuid_of(100 + m), f"lab{m}/model-{m}", "lm_eval", list(y[m]), benchmark="irt")
            irt_sidecars.append(rec.with_name(rec.stem + "_samples.jsonl"))
        compare_s, irt_s, floor_c, floor_i = [], [], [], []
        for _ in range(args.repeat):
            compare_s.append(_run(["compare", "--store", str(store), uuid_of(1), uuid_of(2), "--format", "json"]))
            floor_c.append(_floor(sidecars))
            irt_s.append(_run(["irt", "--store", str(store), "--benchmark", "irt"]))
            floor_i.append(_floor(irt_sidecars))
    c, i = statistics.median(compare_s), statistics.median(irt_s)
    fc, fi = statistics.median(floor_c), statistics.median(floor_i)
    print(
        f"compare: 2 sidecars x {args.rows:,} rows ({size:.1f} MB): {c:.2f} s (target 5 s: {c / 5:.2f}x of it); "
        f"parse-only floor {fc:.2f} s, ratio {c / fc:.1f}x"
    )
    print(
        f"irt:     {args.models} records x {args.items:,} items: {i:.2f} s (target 30 s: {i / 30:.2f}x of it); "
        f"parse-only floor {fi:.2f} s, ratio {i / fi:.1f}x"
    )
    for n in args.catalog_records:
        took, rss = _catalog(n)
        print(f"catalog: {n:,} records: {took:.2f} s, {n / took:,.0f} records/s, peak memory {rss / 1024:.0f} MB")
    return 0


def _catalog(records: int) -> tuple[float, int]:
    """(seconds, peak RSS in KiB) of ``eee catalog`` on a store of ``records`` records."""
    import json

    from analysis_store import record_doc, uuid_of

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        doc = record_doc("acme/widget-7b", "helm", 0.5)
        doc.pop("detailed_evaluation_results", None)
        text = json.dumps(doc)
        for i in range(records):
            folder = store / "data" / f"bench-{i % 20}" / "acme" / f"model-{i % 50}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{uuid_of(i + 1)}.json").write_text(text)
        code = (
            "import resource, sys, time\n"
            "from eee.commands.catalog import main\n"
            "t = time.perf_counter(); rc = main(['--store', sys.argv[1]]); t = time.perf_counter() - t\n"
            "print(t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
            "sys.exit(rc)\n"
        )
        proc = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True, check=True)
        took, rss = proc.stdout.strip().splitlines()[-1].split()
        return float(took), int(rss)


if __name__ == "__main__":
    sys.exit(main())
