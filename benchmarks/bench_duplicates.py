#!/usr/bin/env python3
"""What the duplicate check costs: one staged record against every record of the store.

    python benchmarks/bench_duplicates.py [--sizes 15000] [--runs 20]

For each size a temporary git repository is filled with that many records (with a few
duplicates among them) and committed. Then it measures: the first build of the duplicate
index (once per clone, in the git directory), the index's check that it follows HEAD
(every later hook run), the check of one staged record in-process (the hook's work:
sync, lookups, evidence), the whole ``eee-duplicates`` hook as a process (Python start-up
included), and ``eee dedup`` over the store. Target: the check of a staged record at
15,000 records in under 100 ms. Prints medians; tests never assert timings.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT / "tools"))

from eee.governance.duplicates import DuplicateIndex  # noqa: E402
from eee.rules.duplicates import staged_findings  # noqa: E402
from eee.store.jsonlite import load_object  # noqa: E402
from eee.store.paths import canonical_record_path  # noqa: E402
from eee.store.strictjson import canonical  # noqa: E402

BASE = json.loads(
    (PROJECT / "tests" / "examples" / "aggregate" / "valid" / "v0.3.0_perplexity_unbounded.json").read_text()
)


def _record(i: int, copy_of: int | None = None) -> tuple[str, bytes]:
    n = i if copy_of is None else copy_of
    doc = json.loads(json.dumps(BASE))
    doc["model_info"]["id"] = f"dev{(n // 20) % 400}/model-{n // 8000}-{n % 7}"
    doc["evaluation_id"] = f"bench{n % 20}/{doc['model_info']['id'].replace('/', '_')}/{1770000000 + n}"
    doc["retrieved_timestamp"] = str(1770000000 + i)
    doc["evaluation_results"][0]["score_details"]["score"] = 5 + (n % 1000) / 100
    rid = str(uuid.UUID(int=i + 1, version=4))
    return canonical_record_path(f"bench{n % 20}", doc["model_info"]["id"], rid), canonical(doc)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _median_ms(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def bench(size: int, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="eee-bench-dup-") as tmp:
        repo = Path(tmp) / "store"
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "config", "user.name", "bench")
        _git(repo, "config", "user.email", "bench@example.org")
        _git(repo, "config", "gc.auto", "0")
        for i in range(size):
            rel, data = _record(i, copy_of=i - 1 if i % 1000 == 999 else None)  # one copy per thousand
            path = repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"{size} records")  # a benchmark store: no hooks installed

        t = time.perf_counter()
        index = DuplicateIndex(repo)
        built = index.sync()
        first = time.perf_counter() - t
        follow = _median_ms(index.sync, runs)
        index.close()

        rel, data = _record(size + 1, copy_of=size // 2)  # a staged copy of a committed record
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)
        _git(repo, "add", rel)
        import os

        os.chdir(repo)
        found: list = []

        def check() -> None:
            found[:] = staged_findings(repo, [rel], load_object)

        check_ms = _median_ms(check, runs)
        assert found and "duplicates" in found[0].message, "the staged copy was not found"

        def hook() -> None:
            subprocess.run(
                [sys.executable, "-m", "eee.hooks", "duplicates", rel],
                cwd=repo,
                capture_output=True,
                check=True,
                env={**os.environ, "PYTHONPATH": str(PROJECT / "tools")},
            )

        hook_ms = _median_ms(hook, max(3, runs // 4))

        def start() -> None:
            subprocess.run(
                [sys.executable, "-c", "import eee.reporting.findings"],
                capture_output=True,
                check=True,
                env={**os.environ, "PYTHONPATH": str(PROJECT / "tools")},
            )

        start_ms = _median_ms(start, max(3, runs // 4))
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "eee", "dedup", "--format", "json"],
            cwd=repo,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(PROJECT / "tools")},
        )
        dedup_s = time.perf_counter() - t
        groups = json.loads(proc.stdout)["total"]
        print(f"{size:,} records ({built:,} indexed):")
        print(f"  first index build            {first:8.2f} s (once per clone)")
        print(f"  index follows HEAD (no-op)   {follow:8.1f} ms")
        print(f"  check of one staged record   {check_ms:8.1f} ms   (target < 100 ms)")
        print(f"  the hook as a process        {hook_ms:8.1f} ms   (Python start-up alone {start_ms:.1f} ms)")
        print(f"  eee dedup                    {dedup_s:8.2f} s    ({groups} groups)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[15000])
    p.add_argument("--runs", type=int, default=20)
    args = p.parse_args()
    for size in args.sizes:
        bench(size, args.runs)


if __name__ == "__main__":
    main()
