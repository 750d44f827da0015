#!/usr/bin/env python3
"""The long fuzz run: 100,000 mutated records, sidecars and events through the validator,
and 5,000 records carrying the injection corpus through the site's pages.

    python benchmarks/fuzz.py [--cases N] [--batch N] [--seed S] [--site N] [--sequences N]

The cases come from ``tests/fuzzing.py`` (the generator ``tests/test_fuzz.py`` runs at
2,500 cases in CI): each batch is written to a fresh temporary store and validated in one
run. Prints the number of cases, of findings, of bad cases found and good cases left clean
(the oracle of ``tests/fuzzing.py``: a miss or a spurious finding is a bug), the slowest
file (timed between the validator's progress calls) and the peak memory of the process.
Exit 1 when any case was missed, flagged wrongly, or crashed the run.

``--site N`` (default 5,000; 0 skips it): stores of 500 records whose text fields hold random
pieces of the injection corpus (``tests/fuzzing.py``: ``site_store``), with events, an import
manifest and analysis records; every page ``eee site pages`` and ``eee analysis`` generate is
rendered as MkDocs renders it and scanned (``tests/injection.py``). Prints the pages read and
every page where the corpus came out as an element, an attribute, a link or a script.

``--sequences N`` (default 20,000; 0 skips it): random governance event sequences through the
ledger's state machine (``tests/fuzzing.py``: ``event_sequence``, ``machine_problems``): the
fold applies only what the machine allows, refused events have no effect, and no duplicate
stands on a record that does not stand. Prints the sequences, events and every violation.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT / "tools"))
sys.path.insert(0, str(PROJECT / "tests"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=100_000, help="mutations in all (default 100,000)")
    p.add_argument("--batch", type=int, default=10_000, help="mutations per temporary store (default 10,000)")
    p.add_argument("--seed", type=int, default=20261201, help="the first batch's seed (default 20261201)")
    p.add_argument(
        "--site", type=int, default=5000, help="records with the injection corpus for the site (default 5,000)"
    )
    p.add_argument("--sequences", type=int, default=20_000, help="random governance event sequences (default 20,000)")
    args = p.parse_args(argv)

    from eee.validation.validate import run
    from fuzzing import build, clean_seeds, iter_findings

    totals: Counter[str] = Counter()
    by_op: Counter[str] = Counter()
    slowest = (0.0, "")
    problems: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="eee-fuzz-") as tmp:
        seeds = clean_seeds(Path(tmp) / "seeds")
        print(f"seeds: {len(seeds[0])} records, {len(seeds[1])} record/sidecar pairs")
        done = 0
        batch_no = 0
        while done < args.cases:
            n = min(args.batch, args.cases - done)
            records, sidecars = int(n * 0.7), int(n * 0.15)
            events = n - records - sidecars
            root = Path(tmp) / f"store-{batch_no}"
            root.mkdir()
            cases = build(root, args.seed + batch_no, records, sidecars, events, seeds)
            stamps: list[float] = []
            t0 = time.perf_counter()

            def progress(i: int, total: int, stamps: list[float] = stamps) -> None:
                stamps.append(time.perf_counter())

            try:
                summary = run([str(root)], progress=progress)
            except Exception:  # a crash is the one thing this run must never see
                problems.append(f"batch {batch_no}: the validator crashed:\n{traceback.format_exc()}")
                shutil.rmtree(root)
                batch_no += 1
                done += n
                continue
            elapsed = time.perf_counter() - t0
            results = list(iter_findings(summary, root))
            # the progress calls come in result order for data files (events are checked together at the end)
            data_results = [rel for rel, r in results if r.kind not in ("event", "input")]
            previous = t0
            timed: list[tuple[float, str]] = []
            for rel, stamp in zip(data_results, stamps, strict=False):
                timed.append((stamp - previous, rel))
                previous = stamp
            # the slowest few of the batch, timed again alone (best of 3): a figure for the
            # file itself, not for whatever else the machine was doing at that moment
            for _seen, rel in sorted(timed, reverse=True)[:5]:
                best = float("inf")
                for _ in range(3):
                    t = time.perf_counter()
                    run([str(root / rel)])
                    best = min(best, time.perf_counter() - t)
                if best > slowest[0]:
                    slowest = (best, f"{rel} (batch {batch_no})")
            by_rel = dict(results)
            for case in cases:
                result = by_rel.get(case.rel)
                totals["cases"] += 1
                totals[f"expect {case.expect}"] += 1
                by_op[f"{case.kind}:{case.op}"] += 1
                if result is None:
                    problems.append(f"not reported: {case.kind} {case.op} {case.rel}")
                    continue
                if result.findings:
                    totals["cases with findings"] += 1
                if case.expect == "bad" and not result.findings:
                    problems.append(f"missed: {case.kind} {case.op} {case.rel}")
                if case.expect == "good" and result.findings:
                    problems.append(f"spurious: {case.kind} {case.op} {case.rel}: {result.findings[0].one_line()}")
            totals["findings"] += sum(len(r.findings) for r in summary.results)
            totals["files"] += len(summary.results)
            print(
                f"batch {batch_no}: {len(cases)} cases, {len(summary.results)} files, "
                f"{sum(len(r.findings) for r in summary.results)} findings, {elapsed:.1f} s"
            )
            shutil.rmtree(root)
            batch_no += 1
            done += n
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print()
    print(f"cases:          {totals['cases']:,} (mutations {done:,}; the rest are unmutated controls)")
    print(
        f"expectations:   {totals['expect bad']:,} bad, {totals['expect good']:,} good, {totals['expect any']:,} random"
    )
    print(f"files checked:  {totals['files']:,}")
    print(f"findings:       {totals['findings']:,} (on {totals['cases with findings']:,} cases)")
    print(f"slowest file:   {slowest[0] * 1000:.1f} ms  {slowest[1]} (alone, best of 3, with its sidecar if any)")
    print(f"peak memory:    {peak:.0f} MB (max RSS of this process)")
    print(f"wall time:      {wall:.0f} s")
    print(f"problems:       {len(problems)}")
    for line in problems[:20]:
        print(f"  {line}")
    common = ", ".join(f"{op} {n}" for op, n in by_op.most_common(8))
    print(f"most common operations: {common}")
    if args.site:
        problems += site_fuzz(args.site, args.seed)
    if args.sequences:
        problems += sequence_fuzz(args.sequences, args.seed)
    return 1 if problems else 0


def sequence_fuzz(sequences: int, seed: int, length: int = 16) -> list[str]:
    """The ledger's part: ``sequences`` random event sequences of ``length`` events."""
    import random

    from fuzzing import event_sequence, machine_problems

    problems: list[str] = []
    events = 0
    started = time.perf_counter()
    for n in range(sequences):
        sequence = event_sequence(random.Random(seed + n), length)
        events += len(sequence)
        problems += [f"sequence {n}: {what}" for what in machine_problems(sequence)]
    print()
    print(f"ledger:         {sequences:,} event sequences, {events:,} events folded")
    print(f"ledger time:    {time.perf_counter() - started:.0f} s")
    print(f"ledger problems: {len(problems)}")
    for line in problems[:20]:
        print(f"  {line}")
    return problems


def site_fuzz(records: int, seed: int, batch: int = 500) -> list[str]:
    """The site's part: ``records`` records with the injection corpus, ``batch`` a store."""
    from fuzzing import site_problems, site_store

    problems: list[str] = []
    pages = done = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="eee-fuzz-site-") as tmp:
        n = 0
        while done < records:
            size = min(batch, records - done)
            root = Path(tmp) / f"site-{n}"
            site_store(root, seed + n, size)
            read, found = site_problems(root)
            pages += read
            problems += [f"site batch {n}: {page}: {what[0]}" for page, what in found.items()]
            shutil.rmtree(root)
            done += size
            n += 1
    print()
    print(f"site:           {done:,} records with the injection corpus, {pages:,} pages rendered and scanned")
    print(f"site wall time: {time.perf_counter() - started:.0f} s")
    print(f"site problems:  {len(problems)}")
    for line in problems[:20]:
        print(f"  {line}")
    return problems


if __name__ == "__main__":
    sys.exit(main())
