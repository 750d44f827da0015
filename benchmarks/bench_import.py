"""How fast `eee import` takes in a datastore snapshot, against parsing alone.

A snapshot of N records is derived from the 746 real records of ../shared/reference/records:
record i is reference record i mod 746 under a fresh uuid (file name), at its source path,
from the second round on with its own evaluation_id and model name (another run, not a
duplicate), so it keeps every real quirk (HELM's -1 scores, folders that do not come from
model_info.id, a path at the wrong depth). Then, for each N:

- parse-only: read and parse every record of the snapshot (the floor);
- dry run: `eee import SNAPSHOT --dry-run` (plan, validate through the overlay, report);
- import (staged): `eee import SNAPSHOT` (also write the files, the flag events and the
  manifest, and stage them: the import's whole own work);
- import --commit: the same into a fresh store with the hooks installed, committed per
  benchmark through them (what the hooks add is the gate's cost, see bench_hooks.py);

and prints records/s of each, the ratio to parse-only, and the peak memory (max RSS) of
the import process itself (not of git or the hooks it runs), which stays flat in N: one
chunk of records is held at a time.

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
        doc = orjson.loads(src.read_bytes())
        new = str(uuid.UUID(int=(rng.int + i * 0x9E3779B97F4A7C15) % (1 << 128), version=4))
        if i >= len(sources):  # a distinct run of the same model: another evaluation_id and name
            doc["evaluation_id"] = f"{doc.get('evaluation_id')}-copy{i}"
            info = doc.get("model_info")
            if isinstance(info, dict) and isinstance(info.get("name"), str):
                info["name"] = f"{info['name']} (copy {i // len(sources)})"
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
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


# `eee import ARGS` in a child that reports its own peak memory (not its hooks' or git's)
WRAPPER = (
    "import resource, sys; from eee.cli import main; code = main(['import', *sys.argv[1:]]); "
    "print(f'PEAK {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}', file=sys.stderr); sys.exit(code)"
)


def run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    """(seconds, the import process's own max RSS in MB) of one import."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    elapsed = time.perf_counter() - start
    err = proc.stderr.decode(errors="replace")
    if proc.returncode not in (0, 2):
        sys.exit(f"eee import {' '.join(args)} failed (exit {proc.returncode}):\n{err[-3000:]}")
    peak = next((int(line.split()[1]) for line in err.splitlines() if line.startswith("PEAK ")), 0)
    return elapsed, peak // 1024


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,2500,5000", help="snapshot sizes (records), comma-separated")
    p.add_argument("--no-commit", action="store_true", help="leave out the import through the hooks")
    p.add_argument(
        "--lean-gate",
        action="store_true",
        help="commit through the lean gate (`eee gate install`) instead of pre-commit",
    )
    args = p.parse_args(argv)
    from conftest import hook_env, make_store

    env = hook_env()
    print("records/s (seconds); x: time against parse-only; peak: the import process's own max RSS")
    head = f"{'records':>8} {'parse-only':>16} {'dry run':>24} {'import (staged)':>24}"
    print(head + ("" if args.no_commit else f" {'import --commit':>30}") + f" {'peak MB':>16}")
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="eee-bench-import-") as tmp:
            base = Path(tmp)
            snapshot = base / "snapshot"
            files = derive(snapshot, n)
            floor = parse_only(files)

            def cell(seconds: float, n: int = n, floor: float = floor) -> str:
                return f"{n / seconds:>7.0f}/s ({seconds:5.1f} s, {seconds / floor:4.1f}x)".rjust(24)

            staged_store = make_store(base, with_dvc=False, name="staged")
            dry, dry_mb = run([str(snapshot), "--dry-run", "--no-progress"], staged_store, env)
            staged, staged_mb = run([str(snapshot), "--no-progress"], staged_store, env)
            line = f"{n:>8} {n / floor:>9.0f}/s ({floor:4.1f} s) {cell(dry)} {cell(staged)}"
            peaks = [dry_mb, staged_mb]
            if not args.no_commit:
                store = make_store(base, with_dvc=False)
                if args.lean_gate:
                    subprocess.run(
                        [sys.executable, "-m", "eee", "gate", "install"],
                        cwd=store,
                        env=env,
                        check=True,
                        capture_output=True,
                    )
                full, full_mb = run([str(snapshot), "--commit", "--no-progress"], store, env)
                commits = subprocess.run(
                    ["git", "rev-list", "--count", "HEAD"], cwd=store, capture_output=True, text=True
                )
                line += f" {n / full:>7.0f}/s ({full:5.1f} s, {int(commits.stdout) - 1:>2} commits)"
                peaks.append(full_mb)
            print(line + "   " + "/".join(str(p) for p in peaks), flush=True)
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
