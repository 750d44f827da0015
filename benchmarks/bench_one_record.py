#!/usr/bin/env python3
"""One more record through the main job: ``python3 tools/dev.py run``, as a contributor runs it.

    python benchmarks/bench_one_record.py [--size store|15000] [--runs N]

Issue 33's targets: one new record through ``python3 tools/dev.py run`` in under 10 s at
this store's size and under 20 s at 15,000 records. In a clone of this checkout (its
committed HEAD; the clone's ``.venv`` is this checkout's, so ``tools/dev.py`` installs
nothing), cached under ``$TMPDIR/eee-bench-scale/one-record-<size>``:

1. a cold run (``build/`` removed): every stage builds everything;
2. a run with nothing changed: the floor (the set-up, DVC's start, the manifest);
3. ``--runs`` times: one more record (a copy of a real record under a new model and uuid),
   then the main job: seconds, CPU seconds of every process, and each stage's seconds (the
   pipeline's own ``[pipeline] took ...`` line), against the target and as a ratio to the
   floor measured beside it; the record is removed and the main job run again afterwards.

``--size 15000`` adds the synthetic records of ``benchmarks/scale_store.py`` (15,000 records,
250,000 results, 10,000 sidecars in DVC) to the clone's data/, as ``bench_scale.py
--only pipeline`` does. The machine's load is printed with every figure: these are wall
times on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))

import scale_store  # noqa: E402

TARGETS = {"store": 10.0, "15000": 20.0}


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load() -> str:
    return "load " + "/".join(f"{x:.1f}" for x in os.getloadavg())


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def clone(size: str) -> Path:
    """The clone the runs happen in, at this checkout's HEAD, with this checkout's .venv
    (installed for this checkout's pyproject.toml, else tools/dev.py in the clone would
    reinstall the shared environment for the clone)."""
    import hashlib

    stamp = PROJECT / ".venv" / ".eee-installed"
    want = hashlib.sha256((PROJECT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.is_file() or stamp.read_text().strip() != want:
        raise SystemExit("the environment is not installed for this checkout: run `python3 tools/dev.py setup` first")
    if subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "pyproject.toml"], cwd=PROJECT).returncode != 0:
        raise SystemExit("pyproject.toml has uncommitted changes: commit them (the clone is of HEAD)")
    root = scale_store.CACHE / f"one-record-{size}"
    if not (root / ".complete").exists():
        if root.exists():
            shutil.rmtree(root)
        git(PROJECT, "clone", "-q", "--no-hardlinks", str(PROJECT), str(root))
        if size != "store":
            data = scale_store.store("validate", int(size), 250_000, 10_000)
            shutil.copytree(data / "data", root / "data", dirs_exist_ok=True)
        (root / ".complete").write_text("")
    git(root, "fetch", "-q", str(PROJECT), "HEAD")
    git(root, "checkout", "-q", "--force", "FETCH_HEAD")
    venv = root / ".venv"
    if not venv.is_symlink():
        if venv.exists():
            shutil.rmtree(venv)
        venv.symlink_to(PROJECT / ".venv")
    return root


def main_job(root: Path) -> tuple[float, float, dict[str, float], int]:
    """``python3 tools/dev.py run`` in ``root``: (seconds, CPU seconds, stage seconds, exit)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "tools/dev.py", "run"], cwd=root, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 2):
        raise SystemExit(f"the main job failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stages: dict[str, float] = {}
    m = re.search(r"^\[pipeline\] took [\d.]+ s: (.*)$", proc.stdout, re.M)
    for part in m.group(1).split(", ") if m else []:
        name, took, _unit = part.rsplit(" ", 2)
        stages[name] = float(took)
    return seconds, cpu, stages, proc.returncode


def new_record(root: Path, size: str, n: int) -> Path:
    """One record the store does not hold: a real record of the store under a new model id
    and uuid (at 15,000, scale_store's one_record)."""
    if size != "store":
        rel, data = scale_store.one_record(n)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path
    from eee.store.paths import canonical_record_path
    from eee.store.strictjson import canonical

    source = next(p for p in sorted((root / "data" / "mmlu").rglob("*.json")) if p.is_file())
    doc = json.loads(source.read_bytes())
    model = f"bench-one-record/model-{n}"
    doc["model_info"]["id"] = model
    doc["model_info"]["name"] = model.split("/")[1]
    if "developer" in doc["model_info"]:
        doc["model_info"]["developer"] = "bench-one-record"
    doc["evaluation_id"] = f"mmlu/{model.replace('/', '_')}/{n}"
    path = root / canonical_record_path("mmlu", model, str(uuid.uuid4()))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(canonical(doc))
    return path


def remove(path: Path, root: Path) -> None:
    path.unlink()
    folder = path.parent
    while folder != root / "data" and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=sorted(TARGETS), default="store")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    target = TARGETS[args.size]
    root = clone(args.size)
    records = sum(1 for q in (root / "data").rglob("*.json") if q.is_file() and not q.name.endswith("_samples.json"))
    say(f"{records:,} records in {root} ({load()})")
    shutil.rmtree(root / "build", ignore_errors=True)
    (root / "dvc.lock").unlink(missing_ok=True)
    seconds, cpu, stages, _ = main_job(root)
    print(f"cold (build/ empty): {seconds:.1f} s, {cpu:.1f} s of CPU [{load()}]")
    floor, floor_cpu, _, _ = main_job(root)
    print(f"nothing changed (the floor): {floor:.1f} s, {floor_cpu:.1f} s of CPU [{load()}]")
    times, cpus = [], []
    for n in range(args.runs):
        path = new_record(root, args.size, 1000 + n)
        try:
            seconds, cpu, stages, code = main_job(root)
        finally:
            remove(path, root)
        times.append(seconds)
        cpus.append(cpu)
        detail = ", ".join(f"{k} {v:.1f}" for k, v in stages.items())
        print(
            f"one more record, run {n + 1}: {seconds:.1f} s, {cpu:.1f} s of CPU (exit {code}); stages: {detail} [{load()}]"
        )
        main_job(root)  # the record gone again: the next run adds one to the same store
    med, med_cpu = statistics.median(times), statistics.median(cpus)
    verdict = "met" if med < target else f"missed by {med - target:.1f} s"
    print(
        f"one more record at {records:,} records: {med:.1f} s median of {len(times)} "
        f"({med_cpu:.1f} s of CPU; {med / floor:.1f}x the nothing-changed run); target < {target:.0f} s: {verdict} "
        f"[{load()}]"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
