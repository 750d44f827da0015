#!/usr/bin/env python3
"""DVC at store scale: per-file sidecar pointers, and the pipeline's heavy stages.

    python benchmarks/bench_dvc.py [--sidecars 1000 10000] [--named 1 10 100] [--records 5000 50000]
                                   [--stock-setup] [--no-stock]

1. For each sidecar count N: a temporary store with N records, each with a small sidecar
   tracked by DVC (one ``.dvc`` pointer per sidecar, written by eee.dvc.store: the same
   pointer and cache object ``dvc add`` writes, see tests/test_samples_dvcstore.py;
   ``--stock-setup`` tracks them with ``dvc add`` itself, 1,247 s at 10,000), pushed to a
   local remote. Times, as a contributor runs them: ``eee samples add`` of one more sidecar
   (check against the record, cache, pointer, ``git add``), ``eee samples push`` of K named
   sidecars and ``eee samples pull`` of K named sidecars (deleted from the work tree and the
   cache first) for each K of ``--named``; and, unless ``--no-stock``, what the same costs
   through stock DVC (``dvc add`` of one file, ``dvc push`` / ``dvc pull`` of one named
   pointer, ``dvc status``), with the ratio stock / eee. The last line gives the ratio of
   the eee costs at the largest N to those at the smallest (1.0 = flat in the store).
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

from eee.store.strictjson import canonical, canonical_row  # noqa: E402

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


def _unpull(repo: Path, sidecars: list[Path]) -> None:
    """Remove the sidecars and their cache objects (a clone that never pulled them)."""
    from eee.dvc.store import read_pointer

    for sidecar in sidecars:
        md5 = read_pointer(sidecar.with_name(sidecar.name + ".dvc")).md5
        obj = repo / ".dvc" / "cache" / "files" / "md5" / md5[:2] / md5[2:]
        obj.unlink(missing_ok=True)
        sidecar.unlink(missing_ok=True)


def sidecars(n: int, named: list[int], stock: bool, stock_setup: bool) -> dict[str, float]:
    """One line per measurement at ``n`` tracked sidecars; returns the eee timings."""
    from eee.dvc.store import DvcStore

    with tempfile.TemporaryDirectory(prefix="eee-bench-dvc-", ignore_cleanup_errors=True) as tmp:
        repo = _store(Path(tmp))
        remote = Path(tmp) / "remote"
        subprocess.run([sys.executable, "-m", "dvc", "remote", "add", "-d", "local", str(remote)], cwd=repo, check=True)
        files = [_with_sidecar(repo, i) for i in range(n)]
        t0 = time.perf_counter()
        rels = [str(f.relative_to(repo)) for f in files]
        for k in range(0, n, 500):  # in batches (one DVC process per 500 files)
            if stock_setup:
                _run([sys.executable, "-m", "dvc", "add", "-q", *rels[k : k + 500]], repo)
            else:
                DvcStore(repo).add(files[k : k + 500])
        setup = time.perf_counter() - t0
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, capture_output=True)
        subprocess.run(["git", "commit", "-q", "-m", "store"], cwd=repo, check=True, capture_output=True)
        eee = [sys.executable, "-m", "eee", "samples"]
        t0 = time.perf_counter()
        _run([*eee, "push"], repo)
        push_all = time.perf_counter() - t0
        how = "dvc add" if stock_setup else "eee.dvc.store"
        print(
            f"sidecars={n:>6}: set-up: track all ({how}) {setup:7.1f} s | eee samples push of all {push_all:7.1f} s",
            flush=True,
        )
        out: dict[str, float] = {}
        extra = _with_sidecar(repo, n + 1)
        out["add 1"] = _run([*eee, "add", str(extra.relative_to(repo))], repo)
        line = f"sidecars={n:>6}: eee samples add of one more {out['add 1']:6.2f} s"
        if stock:
            extra2 = _with_sidecar(repo, n + 2)
            dvc_add = _run([sys.executable, "-m", "dvc", "add", "-q", str(extra2.relative_to(repo))], repo)
            status = _run([sys.executable, "-m", "dvc", "status", "-q"], repo)
            line += f" | stock dvc add of one more {dvc_add:6.2f} s (x{dvc_add / out['add 1']:.0f}) | dvc status {status:6.2f} s"
        print(line, flush=True)
        for k in named:
            chosen = files[:k]
            names = [str(f.relative_to(repo)) for f in chosen]
            # push: objects the remote lacks (removed there first), named one by one on the command line
            for f in chosen:
                md5 = json_md5(f)
                (remote / "files" / "md5" / md5[:2] / md5[2:]).unlink(missing_ok=True)
            out[f"push {k}"] = _run([*eee, "push", *names], repo)
            _unpull(repo, chosen)
            out[f"pull {k}"] = _run([*eee, "pull", *names], repo)
            assert all(f.is_file() for f in chosen)
            line = f"sidecars={n:>6}: eee samples push of {k:>4} named {out[f'push {k}']:6.2f} s | pull of {k:>4} named {out[f'pull {k}']:6.2f} s"
            if stock and k == named[0]:
                pointers = [p + ".dvc" for p in names]
                for f in chosen:
                    md5 = json_md5(f)
                    (remote / "files" / "md5" / md5[:2] / md5[2:]).unlink(missing_ok=True)
                dvc_push = _run([sys.executable, "-m", "dvc", "push", "-q", *pointers], repo)
                _unpull(repo, chosen)
                dvc_pull = _run([sys.executable, "-m", "dvc", "pull", "-q", *pointers], repo)
                line += (
                    f" | stock dvc push {dvc_push:6.2f} s (x{dvc_push / out[f'push {k}']:.0f})"
                    f" | dvc pull {dvc_pull:6.2f} s (x{dvc_pull / out[f'pull {k}']:.0f})"
                )
            print(line, flush=True)
        return out


def json_md5(sidecar: Path) -> str:
    return hashlib.md5(sidecar.read_bytes(), usedforsecurity=False).hexdigest()


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
                "--out",
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
    p.add_argument("--sidecars", type=int, nargs="*", default=[1000, 10000], help="tracked sidecar counts")
    p.add_argument("--named", type=int, nargs="*", default=[1, 10, 100], help="sidecars named to push / pull")
    p.add_argument("--stock-setup", action="store_true", help="track the store's sidecars with `dvc add` (slow)")
    p.add_argument("--no-stock", action="store_true", help="leave out the stock DVC comparisons")
    p.add_argument("--records", type=int, nargs="*", default=[5000, 50000], help="record counts for the stages")
    args = p.parse_args()
    runs = {n: sidecars(n, args.named, not args.no_stock, args.stock_setup) for n in args.sidecars}
    if len(runs) > 1:
        low, high = min(runs), max(runs)
        ratios = " | ".join(f"{key} x{runs[high][key] / runs[low][key]:.2f}" for key in runs[low])
        print(f"eee cost at {high} sidecars / at {low} (1.0 = flat in the store): {ratios}", flush=True)
    for m in args.records:
        records(m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
