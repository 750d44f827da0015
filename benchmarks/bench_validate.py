#!/usr/bin/env python3
"""Validator throughput against the floor (read + parse only), measured in one run.

    python benchmarks/bench_validate.py [--corpus DIR] [--rows N] [--repeat K]
    python benchmarks/bench_validate.py --records 50000 230000 [--repeat K]   # whole stores

1. Records: every ``*.json`` under the corpus (default: ../shared/reference/records, the
   746 real records), or (``--records N ...``) a whole store of N clean real records built
   once by benchmarks/scale_store.py (``$EEE_BENCH_CACHE``), with the project's identity
   registry (so every record's ids are matched against it) and a ledger of
   :data:`LEDGER_EVENTS` events over its records (parsed every run, like a real store's).
   Compares, on the same files:
     parse      read each file and parse it with orjson (the floor)
     eee        ``eee.validation.validate.run`` with every check on (strict JSON, schema of the declared
                version, layout, names, scores, pairing)
     jsonschema the reference engine (python ``jsonschema``, Draft 7) on the same files,
                schema checks only, as the public reference tooling validates
   and prints records/s, the ratio eee/parse (target >= 0.5) and peak memory (target < 150 MB).
2. Sidecar: a generated ``<uuid>_samples.jsonl`` of N rows (default 1,000,000) beside its
   aggregate; rows/s for parse-only and for ``eee`` (target ratio >= 0.4).

Every figure comes from a fresh subprocess (so peak RSS is the mode's own); each mode runs
``--repeat`` times, interleaved, and the median is printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT / "tools"))
sys.path.insert(0, str(PROJECT / "tests"))

DEFAULT_CORPUS = PROJECT.parent / "shared" / "reference" / "records"
LEDGER_EVENTS = 175  # the project's ledger held about this many events when issue 34 was measured


def _store(size: int) -> Path:
    """A store of ``size`` clean real records (benchmarks/scale_store.py, cached), with the
    project's identity registry and a ledger of LEDGER_EVENTS events (retractions and
    disputes of its records, by one maintainer)."""
    import scale_store

    from eee.governance.events import dumps, make_event

    root = scale_store.store("validate", size)
    events = root / "governance" / "events"
    if (root / ".ledger-complete").exists():
        return root
    shutil.rmtree(root / "governance" / "identity", ignore_errors=True)
    shutil.copytree(PROJECT / "governance" / "identity", root / "governance" / "identity")
    for old in events.glob("*.yaml"):
        old.unlink()
    actor = {"name": "Bench Maintainer", "email": "bench@example.org"}
    records = sorted((root / "data").rglob("*.json"))
    step = max(1, len(records) // LEDGER_EVENTS)
    for n, path in enumerate(records[::step][:LEDGER_EVENTS]):
        if n % 2:
            event = make_event(
                "dispute", path.stem, "the split is contested", actor, reference="https://example.org/d/1"
            )
        else:
            event = make_event("retract", path.stem, "built on the wrong split", actor)
        (events / f"{event['id']}.yaml").write_text(dumps(event), encoding="utf-8")
    (root / ".ledger-complete").write_text("")
    return root


def _files(corpus: Path) -> list[Path]:
    """The records of a store (its data/), or every JSON file of a folder of them."""
    folder = corpus / "data" if (corpus / "data").is_dir() else corpus
    return sorted(p for p in folder.rglob("*.json") if p.is_file())


def _mode(mode: str, target: str) -> dict[str, float]:
    """Run one measurement in this process; start-up (imports, schema loading) is timed apart."""
    t0 = time.perf_counter()
    count = 0
    if mode in ("parse", "parse-rows"):
        import orjson

        from eee.rules.sidecar import iter_lines
    elif mode in ("eee", "eee-rows"):
        from eee.store.schemas import default_registry
        from eee.validation.validate import run

        reg = default_registry()
        reg.validator(reg.current, "eval")
        reg.validator(reg.current, "instance_level_eval")
    elif mode == "jsonschema":
        import jsonschema

        from eee.store.schemas import Registry

        reg = Registry.load()
    start = time.perf_counter()
    cpu = os.times()
    if mode == "parse":
        for path in _files(Path(target)):
            with open(path, "rb") as fh:
                orjson.loads(fh.read())
            count += 1
    elif mode == "eee":
        summary = run([target])
        count = sum(1 for r in summary.results if r.kind == "record")
    elif mode == "jsonschema":
        validators: dict[str, jsonschema.Draft7Validator] = {}
        for path in _files(Path(target)):
            doc = json.loads(path.read_bytes())
            version = reg.resolve(doc.get("schema_version"), "eval") or reg.current
            if version not in validators:
                validators[version] = jsonschema.Draft7Validator(reg.schema(version, "eval"))
            validators[version].is_valid(doc)
            count += 1
    elif mode == "parse-rows":
        sidecar = next(Path(target).rglob("*_samples.jsonl"))
        for line in iter_lines(sidecar):
            orjson.loads(line)
            count += 1
    elif mode == "eee-rows":
        summary = run([target])
        side = next(r for r in summary.results if r.kind == "sidecar")
        assert summary.errors == 0, [f.one_line() for r in summary.results for f in r.findings][:5]
        count = side.rows or 0
    else:
        raise SystemExit(f"unknown mode {mode}")
    seconds = time.perf_counter() - start
    end = os.times()
    used = sum(end[:4]) - sum(cpu[:4])  # user and system time, this process's and its workers'
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "cpu": used, "startup": start - t0, "count": count, "rss_mb": rss_mb}


def _measure(mode: str, target: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--_mode", mode, "--_target", str(target)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def _series(modes: list[str], target: Path, repeat: int) -> dict[str, dict[str, float]]:
    runs: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    for _ in range(repeat):
        for m in modes:
            runs[m].append(_measure(m, target))
    return {
        m: {
            "seconds": statistics.median(r["seconds"] for r in rs),
            "startup": statistics.median(r["startup"] for r in rs),
            "cpu": statistics.median(r.get("cpu", 0.0) for r in rs),
            "count": rs[0]["count"],
            "rss_mb": max(r["rss_mb"] for r in rs),
        }
        for m, rs in runs.items()
    }


def _make_sidecar(folder: Path, rows: int, style: str) -> Path:
    """A store with one aggregate and a sidecar of ``rows`` varied rows.

    ``style`` is how the rows are serialised: ``canonical`` as the store's own tools write
    them (compact orjson), ``json`` as Python's json.dumps writes them by default.
    """
    import orjson

    examples = PROJECT / "tests" / "examples" / "instance"
    agg = json.loads((examples / "aggregate.json").read_text())
    templates = [
        json.loads(line) for line in (examples / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_text().splitlines()
    ]
    uuid = "5b0c4f6e-8a1d-4c2b-9e3f-7a6b5c4d3e2f"
    data = folder / "data" / "qa-bench" / "acme" / "widget-7b"
    data.mkdir(parents=True)
    sidecar = data / f"{uuid}_samples.jsonl"
    digest = hashlib.sha256()
    with open(sidecar, "wb") as fh:
        batch = []
        for i in range(rows):
            row = dict(templates[i % len(templates)])
            row["sample_id"] = f"s{i}"
            row["input"] = {**row["input"], "raw": f"question {i}: {row['input']['raw']}"}
            batch.append((orjson.dumps(row) if style == "canonical" else json.dumps(row).encode()) + b"\n")
            if len(batch) == 10000:
                chunk = b"".join(batch)
                fh.write(chunk)
                digest.update(chunk)
                batch = []
        chunk = b"".join(batch)
        fh.write(chunk)
        digest.update(chunk)
    agg["detailed_evaluation_results"].update(
        file_path=f"data/qa-bench/acme/widget-7b/{uuid}_samples.jsonl", checksum=digest.hexdigest(), total_rows=rows
    )
    (data / f"{uuid}.json").write_text(json.dumps(agg, indent=2))
    return folder / "data"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--records", type=int, nargs="*", default=[], help="whole stores of N clean real records")
    p.add_argument("--_mode", help=argparse.SUPPRESS)
    p.add_argument("--_target", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args._mode:
        print(json.dumps(_mode(args._mode, args._target)))
        return 0

    print(f"machine: {os.cpu_count()} cpus, python {sys.version.split()[0]}")
    for size in args.records:
        t0 = time.perf_counter()
        store = _store(size)
        built = time.perf_counter() - t0
        _measure("parse", store)  # warm-up: the files in the page cache before any run is timed
        load = os.getloadavg()[0]
        r = _series(["parse", "eee"], store, args.repeat)
        rate = {m: r[m]["count"] / r[m]["seconds"] for m in r}
        print(
            f"\nstore: {r['parse']['count']} clean real records, {LEDGER_EVENTS} events, the project's identity "
            f"registry ({store}; ready in {built:.0f} s)"
        )
        print(f"  parse only (orjson, 1 process) {rate['parse']:9.0f} records/s  {r['parse']['seconds']:7.1f} s")
        print(
            f"  eee validate (all checks)      {rate['eee']:9.0f} records/s  {r['eee']['seconds']:7.1f} s  "
            f"peak {r['eee']['rss_mb']:.0f} MB  start-up {r['eee']['startup'] * 1000:.0f} ms"
        )
        print(f"  ratio eee / parse              {rate['eee'] / rate['parse']:9.2f}   (target >= 0.5)")
        cpu = {m: r[m]["count"] / r[m]["cpu"] for m in r if r[m]["cpu"] > 0}
        if len(cpu) == 2:  # what a loaded machine changes least: records per CPU second, workers included
            print(
                f"  per CPU second: parse {cpu['parse']:.0f}, eee {cpu['eee']:.0f} records = {cpu['eee'] / cpu['parse']:.2f}x "
                f"(with {os.cpu_count()} workers on a quiet machine, the ratio above can reach about "
                f"{min(os.cpu_count() or 1, 2) * cpu['eee'] / cpu['parse']:.2f}x)"
            )
        print(
            f"  (medians of {args.repeat} runs, interleaved; load average {load:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end)"
        )
    if args.records:
        return 0
    if args.corpus.is_dir():
        r = _series(["parse", "eee", "jsonschema"], args.corpus, args.repeat)
        n = r["parse"]["count"]
        rate = {m: r[m]["count"] / r[m]["seconds"] for m in r}
        print(f"\nrecords: {n} files under {args.corpus}")
        print(f"  parse only (orjson)      {rate['parse']:9.0f} records/s  peak {r['parse']['rss_mb']:.0f} MB")
        print(f"  eee validate (all checks){rate['eee']:9.0f} records/s  peak {r['eee']['rss_mb']:.0f} MB")
        print(
            f"  jsonschema (schema only) {rate['jsonschema']:9.0f} records/s  peak {r['jsonschema']['rss_mb']:.0f} MB"
        )
        print(f"  ratio eee / parse        {rate['eee'] / rate['parse']:9.2f}   (target >= 0.5)")
        print(f"  speed-up eee / jsonschema{rate['eee'] / rate['jsonschema']:9.1f}x")
        print(f"  peak memory eee          {r['eee']['rss_mb']:9.0f} MB (target < 150 MB)")
        print(f"  start-up eee             {r['eee']['startup'] * 1000:9.0f} ms (imports, pin check, schema compile)")
    else:
        print(f"\nrecords: corpus {args.corpus} not found; skipped")
    if args.rows > 0:
        for style in ("canonical", "json"):
            with tempfile.TemporaryDirectory(prefix="eee-bench-") as tmp:
                target = _make_sidecar(Path(tmp), args.rows, style)
                sidecar = next(target.rglob("*_samples.jsonl"))
                size = sidecar.stat().st_size / 1e6
                r = _series(["parse-rows", "eee-rows"], target, args.repeat)
                rate = {m: r[m]["count"] / r[m]["seconds"] for m in r}
                written = "as the store writes it (orjson)" if style == "canonical" else "as json.dumps writes it"
                print(f"\nsidecar: {args.rows} rows, {size:.0f} MB, {written}")
                print(
                    f"  parse only (orjson)      {rate['parse-rows']:9.0f} rows/s  peak {r['parse-rows']['rss_mb']:.0f} MB"
                )
                print(
                    f"  eee validate (all checks){rate['eee-rows']:9.0f} rows/s  peak {r['eee-rows']['rss_mb']:.0f} MB"
                )
                print(f"  ratio eee / parse        {rate['eee-rows'] / rate['parse-rows']:9.2f}   (target >= 0.4)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
