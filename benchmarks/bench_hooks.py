#!/usr/bin/env python3
"""What the commit gate costs: ``git commit`` of one new record with the hooks, against
``git commit --no-verify`` of the same change, in synthetic stores of realistic size.

Two ways to run the same hooks are measured: pre-commit itself, and the lean gate (``eee
gate install``, the default), which runs the hooks of the same configuration on the staged
files without pre-commit's work-tree scans. (``benchmarks/bench_scale.py`` measures prek
too, in pairs of commits.)

    python benchmarks/bench_hooks.py [--sizes 23000 230000] [--runs 5]

For each size a temporary git repository is filled with that many records (the real
datastore holds about 230,000), the project's hooks are installed with pre-commit, and
one new record is committed ``--runs`` times each way (reset in between). Prints the
medians and their difference. Target: the hooks add under 1 s at 230,000 records, about
the same as at 23,000 (the cost follows the change, not the store).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT / "tools"))

from eee.store.paths import canonical_record_path  # noqa: E402
from eee.store.strictjson import canonical  # noqa: E402


def _record(i: int) -> tuple[str, bytes]:
    base = json.loads(
        (PROJECT / "tests" / "examples" / "aggregate" / "valid" / "v0.3.0_perplexity_unbounded.json").read_text()
    )
    base["model_info"]["id"] = f"dev{(i // 20) % 400}/model-{i // 8000}-{i % 7}"
    base["evaluation_id"] = f"bench{i % 20}/{base['model_info']['id'].replace('/', '_')}/{1770000000 + i}"
    base["retrieved_timestamp"] = str(1770000000 + i)
    base["evaluation_results"][0]["score_details"]["score"] = 5 + (i % 1000) / 100
    rid = str(uuid.UUID(int=i + 1, version=4))
    return canonical_record_path(f"bench{i % 20}", base["model_info"]["id"], rid), canonical(base)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["EEE_PYTHON"] = sys.executable
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    return env


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=_env())


def build(repo: Path, size: int) -> None:
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "bench")
    _git(repo, "config", "user.email", "bench@example.org")
    _git(repo, "config", "gc.auto", "0")  # no background gc racing the measurements
    shutil.copyfile(PROJECT / ".pre-commit-config.yaml", repo / ".pre-commit-config.yaml")
    (repo / "tools").mkdir()
    shutil.copy2(PROJECT / "tools" / "hook", repo / "tools" / "hook")
    for i in range(size):
        rel, data = _record(i)
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", f"{size} records")
    subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"], cwd=repo, check=True, capture_output=True, env=_env()
    )
    # the duplicates index the hook reads, as `tools/dev.py setup` builds it (a hook never builds it)
    subprocess.run(
        [sys.executable, "-m", "eee", "dedup", "--index"], cwd=repo, check=True, capture_output=True, env=_env()
    )


def use_lean_gate(repo: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "eee", "gate", "install"], cwd=repo, check=True, capture_output=True, env=_env()
    )


def one_commit(repo: Path, size: int, n: int, verify: bool) -> float:
    rel, data = _record(size + n)
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    _git(repo, "add", rel)
    cmd = ["git", "commit", "-q", "-m", "one more record"] + ([] if verify else ["--no-verify"])
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=_env())
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"commit failed:\n{proc.stdout}\n{proc.stderr}")
    _git(repo, "reset", "-q", "--hard", "HEAD~1")
    return seconds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[23_000, 230_000])
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="eee-bench-hooks-", ignore_cleanup_errors=True) as tmp:
            repo = Path(tmp)
            t0 = time.perf_counter()
            build(repo, size)
            print(f"built a store of {size} records in {time.perf_counter() - t0:.0f} s", flush=True)
            one_commit(repo, size, 0, True)  # warm-up: pre-commit's first run initialises its cache
            hooks, plain = [], []
            for n in range(1, args.runs + 1):
                hooks.append(one_commit(repo, size, n, True))
                plain.append(one_commit(repo, size, n, False))
            use_lean_gate(repo)  # measure the baseline again, beside it
            lean, plain2 = [], []
            for n in range(1, args.runs + 1):
                lean.append(one_commit(repo, size, n, True))
                plain2.append(one_commit(repo, size, n, False))
            rows.append(
                (
                    size,
                    statistics.median(plain),
                    statistics.median(hooks),
                    statistics.median(plain2),
                    statistics.median(lean),
                )
            )
            print(
                f"  {size} records: --no-verify {rows[-1][1]:.2f}s, pre-commit {rows[-1][2]:.2f}s; "
                f"again: --no-verify {rows[-1][3]:.2f}s, lean gate {rows[-1][4]:.2f}s",
                flush=True,
            )
    print(
        f"\n{'records':>9} {'--no-verify':>12} {'pre-commit':>11} {'adds':>7} | {'--no-verify':>12} {'lean gate':>11} {'adds':>7}"
    )
    for size, plain, hooks, plain2, lean in rows:
        print(
            f"{size:>9} {plain:>11.2f}s {hooks:>10.2f}s {hooks - plain:>6.2f}s | {plain2:>11.2f}s {lean:>10.2f}s {lean - plain2:>6.2f}s"
        )
    print(f"(medians of {args.runs} commits; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print("target: hooks add < 1 s at 230,000 records, about the same at 23,000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
