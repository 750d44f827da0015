#!/usr/bin/env python3
"""The published site at the public datastore's size: ``eee site pages`` and ``mkdocs build``.

    python benchmarks/bench_site.py [--records 15000] [--results 250000] [--store DIR] [--keep]

Builds a synthetic store once from real records (../shared/reference/records, else the
project's own data/): ``--records`` records spread over 24 benchmark folders, each record's
results repeated to reach ``--results`` in all, with a retraction, a supersession and a
dispute among them. Writes the catalogue as the pipeline does, then times, in fresh
processes, the two site stages (pages, then the strict MkDocs build) and prints the seconds,
the pages written, how many records got a page and the size of the search index.
Target (issue 15): the site builds in under a minute at 15,000 records.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT / "tools"))

REFERENCE = PROJECT.parent / "shared" / "reference" / "records"


def _templates() -> list[dict]:
    base = REFERENCE if REFERENCE.is_dir() else PROJECT / "data"
    out = []
    for p in sorted(base.rglob("*.json")):
        if p.is_file() and not p.name.endswith("_samples.json"):
            try:
                doc = json.loads(p.read_text(encoding="utf-8"))
            except ValueError:
                continue
            if isinstance(doc, dict) and doc.get("evaluation_results"):
                out.append(doc)
    return out


def make_store(root: Path, records: int, results: int) -> None:
    from eee.governance.events import make_event, write

    for name in ("mkdocs.yml", "CHANGELOG.md"):
        shutil.copyfile(PROJECT / name, root / name)
    for folder in ("docs", "schemas", "governance"):
        shutil.copytree(PROJECT / folder, root / folder, ignore=shutil.ignore_patterns("*.yaml"))
    shutil.copytree(PROJECT / "tools" / "eee" / "site" / "theme", root / "tools" / "eee" / "site" / "theme")
    (root / "governance" / "events").mkdir(parents=True, exist_ok=True)
    templates = _templates()
    per = max(1, round(results / records))
    uuids = []
    for i in range(records):
        doc = json.loads(json.dumps(templates[i % len(templates)]))
        rid = str(uuid.UUID(int=(i + 1) * 0x9E3779B97F4A7C15 % (1 << 122) << 6 | 0x1, version=4))
        uuids.append(rid)
        developer, _, model = str(doc["model_info"]["id"]).partition("/")
        model = f"{model or developer}-s{i % 400}"
        doc["model_info"]["id"] = f"{developer}/{model}"
        found = doc["evaluation_results"]
        doc["evaluation_results"] = [
            {**found[k % len(found)], "evaluation_name": f"{found[k % len(found)].get('evaluation_name')} #{k}"}
            if k >= len(found)
            else found[k]
            for k in range(per)
        ]
        bench = f"bench-{i % 24:02d}"
        folder = root / "data" / bench / developer / model
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{rid}.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    me = {"name": "Bench", "email": "bench@example.org"}
    now = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    write(root, make_event("retract", uuids[0], "benchmark retraction", me, now=now))
    write(root, make_event("supersede", uuids[1], "benchmark correction", me, replacement=uuids[2], now=now))
    write(root, make_event("dispute", uuids[3], "benchmark dispute", me, reference="https://example.org/d", now=now))


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall-clock and CPU seconds (user + system) of one command, and its output. On a
    shared machine the CPU time is the figure that does not depend on the neighbours."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", SOURCE_DATE_EPOCH="0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}")
    return took, cpu, proc.stdout + proc.stderr


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=15_000, help="records in the synthetic store")
    p.add_argument("--results", type=int, default=250_000, help="results in all (each record's are repeated)")
    p.add_argument("--store", type=Path, help="build the store here (reused when it already has data/)")
    p.add_argument("--keep", action="store_true", help="keep the temporary store")
    args = p.parse_args()
    root = args.store or Path(tempfile.mkdtemp(prefix="eee-bench-site-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        if not (root / "data").is_dir():
            start = time.perf_counter()
            make_store(root, args.records, args.results)
            from eee.catalog.table import CATALOG_FILE, build, write

            table, _ = build(root)
            write(table, root / CATALOG_FILE)
            print(f"store: {args.records:,} records, {table.num_rows:,} results in {time.perf_counter() - start:.0f} s")
        py = sys.executable
        pages_s, pages_cpu, out = timed([py, "-m", "eee", "site", "pages", "--store", str(root)], root)
        print(f"eee site pages: {pages_s:.1f} s wall, {pages_cpu:.1f} s CPU ({out.strip()})")
        build_s, build_cpu, out = timed(
            [py, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(root / "build" / "site")], root
        )
        site = root / "build" / "site"
        record_pages = sum(1 for _ in (site / "catalogue" / "records").glob("*/index.html"))
        index = site / "search" / "search_index.json"
        print(f"mkdocs build --strict: {build_s:.1f} s wall, {build_cpu:.1f} s CPU")
        print(f"site: {sum(1 for _ in site.rglob('*.html')):,} HTML pages, {record_pages:,} record pages")
        print(f"search index: {index.stat().st_size / 1e6:.1f} MB")
        total, cpu = pages_s + build_s, pages_cpu + build_cpu
        print(f"total {total:.1f} s wall ({total / 60:.2f}x the one-minute target), {cpu:.1f} s CPU ({cpu / 60:.2f}x)")
    finally:
        if not args.keep and not args.store:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
