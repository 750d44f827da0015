#!/usr/bin/env python3
"""What the identity registry costs, in synthetic stores of realistic size.

1. ``eee identity`` (the groups of likely aliases across the store) over stores of each
   size (benchmarks/scale_store.py, built once and cached): its wall time and the peak RSS
   of its process. Target: under a minute at 230,000 records, memory flat (it keeps a count
   and one example per distinct spelling, never per record).
2. The commit gate with a registry (``--registry N``: N developer entries with an alias
   each, and 10 N model entries): ``git commit`` of one new record through the lean gate,
   against ``--no-verify`` and against the gate without a registry, in a git store of each
   size, the registry's parse cached (the usual commit) and not (the first commit after a
   registry change). Target: the gate adds under 1 s at 230,000 records.

    python benchmarks/bench_identity.py [--sizes 23000 230000] [--registry 400] [--runs 5] [--skip-gate]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_hooks  # noqa: E402
import scale_store  # noqa: E402

_PEAK = (
    "import resource, sys, time\n"
    "from eee.cli import main\n"
    "start = time.perf_counter()\n"
    "code = main(sys.argv[1:])\n"
    "seconds = time.perf_counter() - start\n"
    "print(f'@@ {code} {seconds:.3f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}', file=sys.stderr)\n"
)


def identity_run(store: Path) -> tuple[int, float, int, dict]:
    """(exit code, seconds, peak RSS in KiB, the report) of one ``eee identity`` of ``store``."""
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK, "identity", "--format", "json", "--store", str(store)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(PROJECT / "tools")),
    )
    line = next(x for x in proc.stderr.splitlines() if x.startswith("@@ "))
    code, seconds, rss = line.split()[1:]
    return int(code), float(seconds), int(rss), json.loads(proc.stdout)


def registry_text(entries: int) -> tuple[str, str]:
    """developers.yaml and models.yaml of a registry of ``entries`` developers (one alias
    each) and ten times as many models."""
    developers = "kind: developer\nentries:\n" + "".join(
        f'  "dev{i}":\n    aliases: ["Dev{i}", "dev-{i}"]\n' for i in range(entries)
    )
    models = "kind: model\nentries:\n" + "".join(
        f'  "dev{i % entries}/model-{i}": {{aliases: ["dev{i % entries}/Model-{i}"]}}\n' for i in range(10 * entries)
    )
    return developers, models


def gate(size: int, entries: int, runs: int) -> tuple[float, float, float, float]:
    """Medians of one-record commits: --no-verify, the lean gate without a registry, the
    lean gate with one (its parse cached), the lean gate with one parsed afresh."""
    with tempfile.TemporaryDirectory(prefix="eee-bench-identity-", ignore_cleanup_errors=True) as tmp:
        repo = Path(tmp)
        t0 = time.perf_counter()
        bench_hooks.build(repo, size)
        bench_hooks.use_lean_gate(repo)
        bench_hooks.one_commit(repo, size, 0, True)  # warm-up
        bare = [bench_hooks.one_commit(repo, size, n, True) for n in range(1, runs + 1)]
        folder = repo / "governance" / "identity"
        folder.mkdir(parents=True)
        developers, models = registry_text(entries)
        (folder / "developers.yaml").write_text(developers)
        (folder / "models.yaml").write_text(models)
        bench_hooks._git(repo, "add", "governance")
        bench_hooks._git(repo, "commit", "-q", "--no-verify", "-m", "the identity registry")
        # the duplicates index follows the new registry, as `eee identity alias --commit` or a pull's hook makes it
        subprocess.run(
            [sys.executable, "-m", "eee", "dedup", "--index"],
            cwd=repo,
            check=True,
            capture_output=True,
            env=bench_hooks._env(),
        )
        print(
            f"built a store of {size} records and a registry of {entries} developers, {10 * entries} models "
            f"({(len(developers) + len(models)) // 1024} KiB) in {time.perf_counter() - t0:.0f} s",
            flush=True,
        )
        cache = repo / ".git" / "eee-identity.json"
        bench_hooks.one_commit(repo, size, 0, True)  # warm-up (and the cache written)
        plain, cached, cold = [], [], []
        for n in range(1, runs + 1):
            plain.append(bench_hooks.one_commit(repo, size, n, False))
            cached.append(bench_hooks.one_commit(repo, size, n, True))
            cache.unlink(missing_ok=True)
            cold.append(bench_hooks.one_commit(repo, size, n, True))
        return statistics.median(plain), statistics.median(bare), statistics.median(cached), statistics.median(cold)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[23_000, 230_000])
    p.add_argument("--registry", type=int, default=400, help="developer entries of the gate's registry")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--skip-gate", action="store_true")
    p.add_argument("--skip-scan", action="store_true")
    args = p.parse_args()
    if not args.skip_scan:
        print("eee identity over synthetic stores (benchmarks/scale_store.py):")
        for size in args.sizes:
            t0 = time.perf_counter()
            store = scale_store.store("identity", size)
            built = time.perf_counter() - t0
            code, seconds, rss, report = identity_run(store)
            print(
                f"  {size:>7} records: {seconds:6.1f} s, peak RSS {rss / 1024:6.0f} MiB, exit {code}; "
                f"{report['records']} records read, spellings {report['spellings']}, {report['total']} group(s) "
                f"(store ready in {built:.0f} s)",
                flush=True,
            )
        print("  target: under a minute at 230,000 records; memory flat (it grows with distinct spellings only)")
    if not args.skip_gate:
        print(f"\nthe lean gate with a registry of {args.registry} developers and {10 * args.registry} models:")
        for size in args.sizes:
            plain, bare, cached, cold = gate(size, args.registry, args.runs)
            print(
                f"  {size:>7} records: --no-verify {plain:.2f} s; the gate without a registry {bare:.2f} s (adds "
                f"{bare - plain:.2f} s), with it {cached:.2f} s (adds {cached - plain:.2f} s), its parse not cached "
                f"{cold:.2f} s (adds {cold - plain:.2f} s)",
                flush=True,
            )
        print(f"  (medians of {args.runs} commits; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        print("  target: the gate adds < 1 s at 230,000 records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
