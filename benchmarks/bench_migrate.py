#!/usr/bin/env python3
"""Migration throughput against the floor (read + parse only), measured in one run.

    python benchmarks/bench_migrate.py [--corpus DIR] [--to VERSION] [--repeat K]

On every ``*.json`` under the corpus (default: ../shared/reference/records, the 746 real
records), compares:

  parse    read each file and parse it with orjson (the floor of reading)
  migrate  read, strict-parse and migrate each record in memory to the target version, as
           ``eee.load_record`` does (validation under the declared version, score rules, the
           steps, provenance, validation under the target), plus the copy's canonical bytes
  copy     read each file and write it unchanged in the same layout under a fresh folder,
           through a temporary file renamed into place (the floor of writing copies)
  export   ``eee migrate --out TMP``: migrate, plus writing every copy and the report

and prints records/s for each (refused records count: they are read, checked and reported)
and the ratio to parse. Every figure comes from a fresh subprocess; each mode runs
``--repeat`` times, interleaved, and the median is printed.
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

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT / "tools"))

DEFAULT_CORPUS = PROJECT.parent / "shared" / "reference" / "records"


def _files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*.json") if p.is_file())


def _mode(mode: str, target: str, version: str) -> dict[str, float]:
    """One measurement in this process; start-up (imports, schema compile) is timed apart."""
    t0 = time.perf_counter()
    migrated = refused = 0
    if mode == "parse":
        import orjson
    elif mode == "copy":
        pass
    else:
        from eee.migrate import MigrationRefused
        from eee.migrate.export import export
        from eee.migrate.files import migrate_file
        from eee.store.schemas import default_registry
        from eee.store.strictjson import canonical

        reg = default_registry()
        for v in reg.ordered:
            reg.validator(v, "eval")
    files = _files(Path(target))
    start = time.perf_counter()
    if mode == "parse":
        for path in files:
            with open(path, "rb") as fh:
                orjson.loads(fh.read())
        count = len(files)
    elif mode == "migrate":
        for path in files:
            try:
                canonical(migrate_file(path, version).doc)
                migrated += 1
            except MigrationRefused:
                refused += 1
        count = len(files)
    elif mode == "copy":
        with tempfile.TemporaryDirectory(prefix="eee-bench-copy-") as tmp:
            for path in files:
                dest = Path(tmp) / path.relative_to(target)
                dest.parent.mkdir(parents=True, exist_ok=True)
                fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
                with os.fdopen(fd, "wb") as fh:
                    fh.write(path.read_bytes())
                os.replace(name, dest)
        count = len(files)
    elif mode == "export":
        with tempfile.TemporaryDirectory(prefix="eee-bench-migrate-") as tmp:
            report = export([target], Path(tmp) / "out", version)
            migrated, refused = report.count("migrated") + report.count("unchanged"), report.count("refused")
            count = report.units
    else:
        raise SystemExit(f"unknown mode {mode}")
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "startup": start - t0, "count": count, "migrated": migrated, "refused": refused}


def _measure(mode: str, target: Path, version: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--_mode", mode, "--_target", str(target), "--to", version],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    p.add_argument("--to", default="0.3.0", help="target version (default: 0.3.0)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--_mode", help=argparse.SUPPRESS)
    p.add_argument("--_target", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args._mode:
        print(json.dumps(_mode(args._mode, args._target, args.to)))
        return 0

    print(f"machine: {os.cpu_count()} cpus, python {sys.version.split()[0]}")
    if not args.corpus.is_dir():
        print(f"records: corpus {args.corpus} not found; skipped")
        return 0
    modes = ["parse", "migrate", "copy", "export"]
    runs: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    for _ in range(args.repeat):
        for m in modes:
            runs[m].append(_measure(m, args.corpus, args.to))
    seconds = {m: statistics.median(r["seconds"] for r in runs[m]) for m in modes}
    rate = {m: runs[m][0]["count"] / seconds[m] for m in modes}
    first = runs["migrate"][0]
    print(f"\nrecords: {runs['parse'][0]['count']} files under {args.corpus}, to {args.to}")
    print(f"  (median of {args.repeat} runs; {first['migrated']:.0f} migrate, {first['refused']:.0f} are refused)")
    print(f"  parse only (orjson)          {rate['parse']:9.0f} records/s")
    print(
        f"  migrate in memory            {rate['migrate']:9.0f} records/s   ratio to parse {rate['migrate'] / rate['parse']:.2f}"
    )
    print(f"  copy only (write unchanged)  {rate['copy']:9.0f} records/s")
    print(
        f"  eee migrate (writes copies)  {rate['export']:9.0f} records/s   ratio to copy  {rate['export'] / rate['copy']:.2f}"
    )
    startup = statistics.median(r["startup"] for r in runs["migrate"])
    print(f"  start-up                     {startup * 1000:9.0f} ms (imports, pin check, schema compile)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
