"""How fast `eee import` takes in a datastore snapshot, against parsing alone.

A snapshot of N records is derived from the 746 real records of ../shared/reference/records:
record i is reference record i mod 746 under a fresh uuid (file name) and its own
evaluation_id, at its source path, so it keeps every real quirk (HELM's -1 scores, folders
that do not come from model_info.id, a path at the wrong depth). Then, for each N:

- parse-only: read and parse every record of the snapshot (the floor);
- dry run: `eee import SNAPSHOT --dry-run` (plan, validate through the overlay, report);
- import: `eee import SNAPSHOT --commit` into a fresh store with the hooks installed
  (write, flag, commit per benchmark through the hooks, manifest);

and prints records/s of each, the ratio to parse-only, and the peak memory (max RSS) of
the import process, which stays flat in N (one batch's bytes at a time).

    .venv/bin/python benchmarks/bench_import.py [--sizes 1000,5000] [--no-commit]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import orjson

PROJECT = Path(__file__).resolve().parents[1]
REFERENCE = Path(os.environ.get("EEE_REFERENCE", PROJECT.parent / "shared" / "reference")) / "records"
sys.path.insert(0, str(PROJECT / "tests"))


def derive(snapshot: Path, n: int) -> list[Path]:
    sources = sorted(p for p in REFERENCE.rglob("*.json") if p.is_file())
    if not sources:
        sys.exit(f"no reference records under {REFERENCE}")
    rng = uuid.UUID(int=0x5EED)
    out = []
    for i in range(n):
        src = sources[i % len(sources)]
        rel = src.relative_to(REFERENCE)
        data = src.read_bytes()
        doc = orjson.loads(data)
        new = str(uuid.UUID(int=(rng.int + i * 0x9E3779B97F4A7C15) % (1 << 128), version=4))
        old_id = doc.get("evaluation_id")
        if isinstance(old_id, str):  # a distinct run: the same bytes with another evaluation_id
            data = data.replace(orjson.dumps(old_id), orjson.dumps(f"{old_id}-copy{i}"), 1)
        target = snapshot / rel.parent / f"{new}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        out.append(target)
    return out


def parse_only(files: list[Path]) -> float:
    start = time.perf_counter()
    for f in files:
        orjson.loads(f.read_bytes())
    return time.perf_counter() - start


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, int]:
    """(seconds, exit code, max RSS in MB) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 2):
        print(err[-2000:], file=sys.stderr)
    return elapsed, code, usage.ru_maxrss // 1024


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,5000", help="snapshot sizes (records), comma-separated")
    p.add_argument("--no-commit", action="store_true", help="measure the dry run only")
    args = p.parse_args(argv)
    from conftest import hook_env, make_store

    env = hook_env()
    eee = [sys.executable, "-m", "eee", "import"]
    print(f"{'records':>8} {'parse-only':>12} {'dry run':>18} {'import --commit':>22} {'peak MB (dry/commit)':>22}")
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="eee-bench-import-") as tmp:
            base = Path(tmp)
            snapshot = base / "snapshot"
            files = derive(snapshot, n)
            floor = parse_only(files)
            store = make_store(base, with_dvc=False)
            dry, code, dry_mb = run([*eee, str(snapshot), "--dry-run", "--no-progress"], store, env)
            line = f"{n:>8} {n / floor:>9.0f}/s   {n / dry:>7.0f}/s ({dry / floor:>4.1f}x)"
            if not args.no_commit:
                full, code, full_mb = run([*eee, str(snapshot), "--commit", "--no-progress"], store, env)
                commits = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=store, capture_output=True, text=True)
                line += f"   {n / full:>7.0f}/s ({full:>5.1f} s, {int(commits.stdout) - 1} commits)"
                line += f"   {dry_mb:>6} / {full_mb:<6}"
            else:
                line += f"   {'-':>22}   {dry_mb:>6}"
            print(line, flush=True)
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
