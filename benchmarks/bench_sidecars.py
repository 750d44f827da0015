#!/usr/bin/env python3
"""What keeping sidecars by size costs a contributor: add, commit through the gate, push
through the pre-push hook.

    python benchmarks/bench_sidecars.py [--sizes 65536 1000000 1100000 67108864]

A temporary store with the lean gate installed (pre-commit and pre-push), DVC with a local
remote and a bare git remote. For each sidecar size (rows of the example sidecar, repeated
with fresh sample ids): ``eee samples add`` (the check of every row against the record, then
git up to the 1 MiB default threshold, DVC above it), ``git commit`` through the gate against
``git commit --no-verify`` of the same staged files, and ``git push`` through the pre-push
hook (the audit of the pushed commit with ``--remote-objects``: the DVC object on the remote,
its md5 and sha256) against ``git push --no-verify`` of the same commit to another bare
remote, after ``eee samples push`` for a sidecar in DVC. Prints one line per size: seconds
and the ratio to the hook-less git command. Times are wall-clock on this machine, under
whatever load it has; the ratios are the figure to read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
EXAMPLES = PROJECT / "tests" / "examples" / "instance"
ROWS = [
    json.loads(line) for line in (EXAMPLES / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_text().splitlines()
]


def _env() -> dict[str, str]:
    return dict(
        os.environ,
        EEE_PYTHON=sys.executable,
        DVC_NO_ANALYTICS="1",
        PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
    )


def run(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=_env())
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return seconds


def git(repo: Path, *args: str) -> float:
    return run(["git", *args], repo)


def eee(repo: Path, *args: str) -> float:
    return run([sys.executable, "-m", "eee", *args], repo)


def store(tmp: Path) -> tuple[Path, Path, Path]:
    repo = tmp / "store"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.org"), ("commit.gpgsign", "false")):
        git(repo, "config", key, value)
    shutil.copyfile(PROJECT / ".pre-commit-config.yaml", repo / ".pre-commit-config.yaml")
    (repo / "tools").mkdir()
    shutil.copy2(PROJECT / "tools" / "hook", repo / "tools" / "hook")
    run([sys.executable, "-m", "dvc", "init", "-q"], repo)
    run([sys.executable, "-m", "dvc", "remote", "add", "-d", "local", str(tmp / "dvc-remote")], repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "an empty store")
    eee(repo, "gate", "install")
    hooked, plain = tmp / "hooked.git", tmp / "plain.git"
    for bare in (hooked, plain):
        git(tmp, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "hooked", str(hooked))
    git(repo, "remote", "add", "plain", str(plain))
    git(repo, "push", "-q", "--no-verify", "hooked", "main")
    git(repo, "push", "-q", "--no-verify", "plain", "main")
    git(repo, "branch", "-q", "--set-upstream-to", "hooked/main")
    return repo, hooked, plain


def place(repo: Path, size: int) -> tuple[str, str]:
    """A record and its sidecar of about ``size`` bytes (rows of the example, fresh ids)."""
    record_uuid = str(uuid.uuid4())
    folder = "data/qa-bench/acme/widget-7b"
    (repo / folder).mkdir(parents=True, exist_ok=True)
    record, sidecar = f"{folder}/{record_uuid}.json", f"{folder}/{record_uuid}_samples.jsonl"
    doc = json.loads((EXAMPLES / "aggregate.json").read_text())
    doc["evaluation_id"] = f"{doc['evaluation_id']}-{record_uuid[:8]}"  # a run of its own, not a duplicate
    lines: list[bytes] = []
    total = 0
    while total < size:
        row = dict(ROWS[len(lines) % len(ROWS)], sample_id=f"s{len(lines)}", evaluation_id=doc["evaluation_id"])
        lines.append(json.dumps(row, ensure_ascii=False).encode() + b"\n")
        total += len(lines[-1])
    data = b"".join(lines)
    (repo / sidecar).write_bytes(data)
    doc["detailed_evaluation_results"].update(
        file_path=sidecar, checksum=hashlib.sha256(data).hexdigest(), total_rows=len(lines)
    )
    (repo / record).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return record, sidecar


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[64 * 1024, 1000 * 1000, 1100 * 1000, 64 * 1024 * 1024])
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="eee-bench-sidecars-") as tmp:
        repo, _hooked, _plain = store(Path(tmp))
        print("size (bytes)  placed  add s  commit s (no-verify s, ratio)  push s (no-verify s, ratio)")
        for size in args.sizes:
            record, sidecar = place(repo, size)
            actual = (repo / sidecar).stat().st_size
            add = eee(repo, "samples", "add", sidecar)
            placed = "dvc" if (repo / (sidecar + ".dvc")).exists() else "git"
            git(repo, "add", record)
            bare = git(repo, "commit", "-q", "--no-verify", "-m", f"baseline {size}")
            git(repo, "reset", "-q", "--soft", "HEAD~1")
            gated = git(repo, "commit", "-q", "-m", f"a record with a sidecar of {actual} bytes ({placed})")
            if placed == "dvc":
                eee(repo, "samples", "push", sidecar)
            plain_push = git(repo, "push", "-q", "--no-verify", "plain", "main")
            hooked_push = git(repo, "push", "-q", "hooked", "main")
            print(
                f"{actual:>12,}  {placed:<6}  {add:5.2f}  {gated:8.2f} ({bare:5.2f}, {gated / bare:5.1f}x)"
                f"  {hooked_push:6.2f} ({plain_push:5.2f}, {hooked_push / plain_push:5.1f}x)",
                flush=True,
            )


if __name__ == "__main__":
    main()
