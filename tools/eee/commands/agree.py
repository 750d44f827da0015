"""``eee agree --benchmark B``: results of one model on one benchmark under one protocol,
from different sources (a harness log and a leaderboard table, two harness versions),
whose difference is larger than their uncertainties allow (:mod:`eee.catalog.agreement`:
the test, the pairs never compared and why). Read from the store itself (the benchmark's
records, their sidecars included), or from a written catalogue with ``--catalog DIR``.
Exit 1 when a pair disagrees, 0 when none does."""

from __future__ import annotations

from pathlib import Path

from eee.commands import EXIT_ERRORS, EXIT_OK, OUTPUT_FORMATS, add_format, add_store, parser
from eee.reporting.findings import Refused
from eee.reporting.reporters import reporter


def main(argv: list[str]) -> int:
    p = parser(
        "eee agree",
        "List the pairs of results of one model on a benchmark, under one protocol, from different sources "
        "(source, harness or harness version), whose difference is larger than their standard errors allow: a z "
        "test of the difference of two independent estimates, two-sided, Holm-corrected over the pairs tested. "
        "Pairs of different protocols are never compared (counted, with the fields that keep them apart). "
        "Exit 1 when a pair disagrees.",
    )
    add_store(p)
    p.add_argument("--benchmark", required=True, metavar="B", help="the benchmark: its folder, or any alias of it")
    p.add_argument(
        "--catalog",
        type=Path,
        metavar="DIR",
        help="read the results from this written catalogue (build/catalog) instead of the store's records",
    )
    add_format(p, OUTPUT_FORMATS)
    args = p.parse_args(argv)
    from eee.analysis.leaderboard import tables_from_catalog, tables_from_store
    from eee.analysis.samples import benchmark_folders, no_such_benchmark
    from eee.catalog.agreement import COLUMNS, compare, render

    folders = benchmark_folders(args.store, args.benchmark)
    try:
        if not folders:
            raise no_such_benchmark(args.benchmark)
    except Refused as exc:
        return reporter(args.format).refusal("eee agree", exc.findings)  # json: one document, the refusal
    if args.catalog is not None:
        if not args.catalog.is_dir():
            p.error(f"--catalog {args.catalog}: not a folder (write one with `eee catalog`)")
        tables = tables_from_catalog(args.catalog, folders, COLUMNS, items=False)
    else:
        tables = tables_from_store(args.store, folders, columns=COLUMNS, items=False)
    report = compare(tables.results, args.benchmark)
    report["read_from"] = tables.origin
    reporter(args.format).result(report, lambda: print("\n".join(render(report))))
    return EXIT_ERRORS if report["disagreeing"] else EXIT_OK
