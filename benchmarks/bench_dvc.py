#!/usr/bin/env python3
"""DVC at store scale: per-file sidecar pointers, and the pipeline's heavy stages.

    python benchmarks/bench_dvc.py [--sidecars 1000 10000] [--records 5000 50000]

1. For each sidecar count N: a temporary store with N records, each with a small sidecar
   tracked by DVC (one ``.dvc`` pointer per sidecar). Times adding one more sidecar with
   ``eee samples add`` (check against the record, ``dvc add``, ``git add``) and a full
   ``dvc status``.
2. For each record count M: a temporary store of M synthetic records (copies of a real
   record shape); times the pipeline's ``validate`` and ``catalog`` stage commands.

Prints one line per measurement; the closing note of the DVC issue quotes them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT / "tools"))
sys.path.insert(0, str(PROJECT / "benchmarks"))

from bench_hooks import _record  # noqa: E402

from eee.strictjson import canonical, canonical_row  # noqa: E402

ROWS = [
    json.loads(line)
    for line in (PROJECT / "tests" / "examples" / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl")
    .read_text()
    .splitlines()
]


def _run(cmd: list[str], cwd: Path) -> float:
    env = dict(
        os.environ, DVC_NO_ANALYTICS="1", PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]
    )
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return seconds


def _store(tmp: Path) -> Path:
    repo = tmp / "store"
    repo.mkdir()
    for cmd in (
        ["git", "init", "-q"],
        ["git", "config", "user.email", "b@example.org"],
        ["git", "config", "user.name", "bench"],
    ):
        subprocess.run(cmd, cwd=repo, check=True)
    subprocess.run([sys.executable, "-m", "dvc", "init", "-q"], cwd=repo, check=True)
    subprocess.run([sys.executable, "-m", "dvc", "config", "core.analytics", "false"], cwd=repo, check=True)
    return repo


def _with_sidecar(repo: Path, i: int) -> Path:
    rel, data = _record(i)
    doc = json.loads(data)
    uuid = rel.rsplit("/", 1)[-1][:-5]
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for j, template in enumerate(ROWS):
        row = dict(
            template, evaluation_id=doc["evaluation_id"], model_id=doc["model_info"]["id"], sample_id=f"s{i}-{j}"
        )
        row.pop("evaluation_result_id", None)
        rows.append(canonical_row(row))
    blob = b"".join(rows)
    sidecar = path.with_name(f"{uuid}_samples.jsonl")
    sidecar.write_bytes(blob)
    doc["detailed_evaluation_results"] = {
        "format": "jsonl",
        "file_path": rel[:-5] + "_samples.jsonl",
        "hash_algorithm": "sha256",
        "checksum": hashlib.sha256(blob).hexdigest(),
        "total_rows": len(rows),
    }
    path.write_bytes(canonical(doc))
    return sidecar


def sidecars(n: int) -> None:
    with tempfile.TemporaryDirectory(prefix="eee-bench-dvc-", ignore_cleanup_errors=True) as tmp:
        repo = _store(Path(tmp))
        files = [_with_sidecar(repo, i) for i in range(n)]
        t0 = time.perf_counter()
        for k in range(0, n, 500):  # dvc add in batches (one process per 500 files)
            _run(
                [sys.executable, "-m", "dvc", "add", "-q", *[str(f.relative_to(repo)) for f in files[k : k + 500]]],
                repo,
            )
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, capture_output=True)
        subprocess.run(["git", "commit", "-q", "-m", "store"], cwd=repo, check=True, capture_output=True)
        setup = time.perf_counter() - t0
        extra = _with_sidecar(repo, n + 1)
        add = _run([sys.executable, "-m", "eee", "samples", "add", str(extra.relative_to(repo))], repo)
        status = min(_run([sys.executable, "-m", "dvc", "status", "-q"], repo) for _ in range(3))
        print(
            f"sidecars={n:>6}: add one more (eee samples add) {add:6.2f} s | dvc status {status:6.2f} s | initial dvc add of all {setup:7.1f} s",
            flush=True,
        )


def records(m: int) -> None:
    with tempfile.TemporaryDirectory(prefix="eee-bench-pipe-", ignore_cleanup_errors=True) as tmp:
        repo = Path(tmp)
        for i in range(m):
            rel, data = _record(i)
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_bytes(data)
        (repo / "governance" / "events").mkdir(parents=True)
        validate = _run(
            [
                sys.executable,
                "-m",
                "eee",
                "validate",
                ".",
                "--format",
                "json",
                "--output",
                "report.json",
                "--exit-zero",
                "--no-progress",
            ],
            repo,
        )
        catalog = _run([sys.executable, "-m", "eee", "catalog", "--store", ".", "--out", "catalog.parquet"], repo)
        print(
            f"records={m:>6}: validate stage {validate:6.2f} s ({m / validate:7.0f} records/s) | catalog stage {catalog:6.2f} s ({m / catalog:7.0f} records/s)",
            flush=True,
        )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sidecars", type=int, nargs="*", default=[1000, 10000])
    p.add_argument("--records", type=int, nargs="*", default=[5000, 50000])
    args = p.parse_args()
    for n in args.sidecars:
        sidecars(n)
    for m in args.records:
        records(m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
