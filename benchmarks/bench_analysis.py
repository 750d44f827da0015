#!/usr/bin/env python3
"""Speed and memory of the analyses against their targets, end to end as a user runs them.

    python benchmarks/bench_analysis.py [--only SECTION ...] [--tools DIR] [options]

  compare   ``eee compare A B --format json`` on two records whose sidecars have ``--rows``
            rows each (default 100,000; binary scores, ~60% agreement in the disagreements
            listed): target under 5 s
  irt       ``eee irt --benchmark B`` over ``--models`` records x ``--items`` items
            (default 50 x 2,000; simulated from a Rasch model), fit and Parquet written:
            target under 30 s
  floor     reading and parsing the same sidecars with orjson only
  catalog   ``eee catalog`` on stores of ``--catalog-records`` records (default 2,000 and
            20,000): seconds and peak memory, which stays flat as the store grows (the
            catalogue is streamed in row groups)
  sparse    ``eee irt`` over ``--sparse-records`` records (default 250), each answering a
            random half of a pool of ``--pool`` items (default 8,000; about 360 MB of
            sidecars): peak memory (target under 1 GB) and seconds, against the parse-only
            floor
  disjoint  ``eee irt`` over ``--disjoint-records`` records (default 60 and 250) of
            ``--pool``/2 samples each, no sample id shared: it says so (exit 1, "no sample id
            ... is shared") in memory and time near the parse-only floor

Each speed figure is the median of ``--repeat`` fresh subprocesses (interpreter start-up
included) and is printed with its ratio to the target and to the floor; peak memory is the
child's maximum resident set (``os.wait4``). ``--tools DIR`` runs the ``eee`` package of
another checkout (``DIR`` is its ``tools`` folder), e.g. main's code before a change, on the
same generated stores.
"""

from __future__ import annotations

import argparse
import os
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


ENV: dict[str, str] = dict(os.environ)

# Peak memory is the child's own high-water mark (VmHWM in /proc/self/status, read as it
# exits): ru_maxrss of a child counts the memory of the parent it was forked from, which
# here holds the generated stores.
HWM = (
    "import atexit, os\n"
    "def _hwm():\n"
    "    with open('/proc/self/status') as fh:\n"
    "        kib = next(line.split()[1] for line in fh if line.startswith('VmHWM:'))\n"
    "    with open(os.environ['EEE_BENCH_HWM'], 'w') as out:\n"
    "        out.write(kib)\n"
    "atexit.register(_hwm)\n"
)
LAUNCH = HWM + "import runpy, sys\nsys.argv[0] = 'eee'\nrunpy.run_module('eee', run_name='__main__')\n"
FLOOR = HWM + (
    "import orjson, sys\n"
    "for p in sys.argv[1:]:\n"
    "    with open(p, 'rb') as fh:\n"
    "        for line in fh: orjson.loads(line)\n"
)


def _child(argv: list[str], ok: tuple[int, ...]) -> tuple[float, int, int, str]:
    """(seconds, peak memory in KiB, exit code, stderr) of ``python ARGV`` in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        hwm = Path(tmp) / "hwm"
        err = Path(tmp) / "err"
        started = time.perf_counter()
        with err.open("wb") as fh:
            rc = subprocess.run(
                [sys.executable, *argv], stdout=subprocess.DEVNULL, stderr=fh, env={**ENV, "EEE_BENCH_HWM": str(hwm)}
            ).returncode
        took = time.perf_counter() - started
        text = err.read_text(errors="replace")
        if rc not in ok:
            raise SystemExit(f"python {' '.join(argv[:4])} ... failed ({rc}):\n{text[-2000:]}")
        return took, int(hwm.read_text()), rc, text


def _measure(args: list[str], ok: tuple[int, ...] = (0, 2)) -> tuple[float, int, int, str]:
    """(seconds, peak memory in KiB, exit code, stderr) of ``eee ARGS`` in a fresh process."""
    return _child(["-c", LAUNCH, *args], ok)


def _floor(paths: list[Path]) -> float:
    return _floor_rss(paths)[0]


def _floor_rss(paths: list[Path]) -> tuple[float, int]:
    """(seconds, peak memory in KiB) of reading and parsing ``paths`` line by line with orjson."""
    took, kib, _, _ = _child(["-c", FLOOR, *map(str, paths)], (0,))
    return took, kib


SECTIONS = ("compare", "irt", "catalog", "sparse", "disjoint")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=SECTIONS, action="append", help="run these sections (default: all)")
    p.add_argument("--tools", type=Path, metavar="DIR", help="the tools folder of the eee package to run")
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--models", type=int, default=50)
    p.add_argument("--items", type=int, default=2_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--catalog-records", type=int, nargs="*", default=[2_000, 20_000])
    p.add_argument("--sparse-records", type=int, default=250)
    p.add_argument("--pool", type=int, default=8_000)
    p.add_argument("--disjoint-records", type=int, nargs="*", default=[60, 250])
    args = p.parse_args()
    only = args.only or list(SECTIONS)
    if args.tools is not None:
        ENV["PYTHONPATH"] = str(args.tools.resolve()) + os.pathsep + ENV.get("PYTHONPATH", "")
    if "compare" in only or "irt" in only:
        _compare_and_irt(args)
    if "catalog" in only:
        for n in args.catalog_records:
            took, rss = _catalog(n)
            print(f"catalog: {n:,} records: {took:.2f} s, {n / took:,.0f} records/s, peak memory {rss / 1024:.0f} MB")
    if "sparse" in only:
        _irt_at_scale("sparse", args.sparse_records, args.pool)
    if "disjoint" in only:
        for n in args.disjoint_records:
            _irt_at_scale("disjoint", n, args.pool)
    return 0


def _compare_and_irt(args: argparse.Namespace) -> None:
    import numpy as np

    from analysis_store import place, uuid_of
    from eee.analysis.irt import simulate

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
        compare_m, irt_m = 0, 0
        for _ in range(args.repeat):
            took, kib, _, _ = _measure(
                ["compare", "--store", str(store), uuid_of(1), uuid_of(2), "--format", "json", "--across-protocols"]
            )
            compare_s.append(took)
            compare_m = max(compare_m, kib)
            floor_c.append(_floor(sidecars))
            took, kib, _, _ = _measure(["irt", "--store", str(store), "--benchmark", "irt"])
            irt_s.append(took)
            irt_m = max(irt_m, kib)
            floor_i.append(_floor(irt_sidecars))
    c, i = statistics.median(compare_s), statistics.median(irt_s)
    fc, fi = statistics.median(floor_c), statistics.median(floor_i)
    print(
        f"compare: 2 sidecars x {args.rows:,} rows ({size:.1f} MB): {c:.2f} s (target 5 s: {c / 5:.2f}x of it); "
        f"parse-only floor {fc:.2f} s, ratio {c / fc:.1f}x; peak memory {compare_m / 1024:.0f} MB"
    )
    print(
        f"irt:     {args.models} records x {args.items:,} items: {i:.2f} s (target 30 s: {i / 30:.2f}x of it); "
        f"parse-only floor {fi:.2f} s, ratio {i / fi:.1f}x; peak memory {irt_m / 1024:.0f} MB"
    )


def _irt_at_scale(kind: str, records: int, pool: int) -> None:
    """``eee irt`` over ``records`` records answering ``pool``/2 samples each: a random half
    of one pool (``sparse``), or samples of their own (``disjoint``). One run: peak memory
    and seconds, against reading and parsing the same sidecars."""
    import numpy as np

    from analysis_store import place, uuid_of

    rng = np.random.default_rng(1)
    theta = rng.normal(0.0, 1.0, records)
    b = rng.normal(0.0, 1.0, pool)
    half = pool // 2
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        sidecars = []
        for m in range(records):
            items = np.sort(rng.choice(pool, half, replace=False)) if kind == "sparse" else np.arange(half)
            p = 1.0 / (1.0 + np.exp(-(theta[m] - b[items])))
            scores = (rng.random(half) < p).astype(float)
            ids = [f"item-{i:05d}" if kind == "sparse" else f"r{m:04d}-item-{i:05d}" for i in items.tolist()]
            rec = place(store, uuid_of(1000 + m), f"lab{m % 40}/model-{m}", "helm", list(scores), ids, "scale")
            sidecars.append(rec.with_name(rec.stem + "_samples.jsonl"))
        size = sum(s.stat().st_size for s in sidecars) / 1e6
        args = ["irt", "--store", str(store), "--benchmark", "scale", "--dry-run"]
        took, rss, rc, err = _measure(args, ok=(0, 1, 2))
        floor, floor_rss = _floor_rss(sidecars)
    said = "fit" if rc in (0, 2) else ("no item shared" if "is shared by two" in err else f"exit {rc}")
    target = f" (target 1 GB: {rss / 1024 / 1000:.2f}x of it)" if kind == "sparse" else ""
    print(
        f"irt {kind}: {records} records x {half:,} samples ({size:.0f} MB of sidecars): {said}, exit {rc}; "
        f"{took:.2f} s, peak memory {rss / 1024:.0f} MB{target}; parse-only floor {floor:.2f} s and "
        f"{floor_rss / 1024:.0f} MB: ratio {took / floor:.1f}x in time"
    )


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
