"""``eee compare A B`` / ``eee compare --model M --benchmark B``: two runs of one benchmark,
sample by sample (the denominators, infrastructure errors apart, the score difference with a
paired bootstrap interval, clustered when the items are, a t test, an exact McNemar test for
binary scores, a non-inferiority verdict with ``--margin``, the samples that disagree);
aggregates only without sidecars. Results of different protocols are refused (exit 1, the
differing fields named) unless ``--across-protocols``."""

from __future__ import annotations

from eee.commands import EXIT_OK, EXIT_WARNINGS, OUTPUT_FORMATS, add_all, add_format, add_store, count, parser, refused
from eee.reporting.findings import Finding, Refused
from eee.reporting.reporters import reporter


def _margin(text: str) -> float:
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a margin is a distance, 0 or more")
    return value


def main(argv: list[str]) -> int:
    from eee.analysis.samples import MAX_ROWS, ROW_BYTES

    p = parser(
        "eee compare",
        "Compare two records of one benchmark sample by sample (matched by sample id), or every record "
        "of one model on one benchmark. Records without a readable sidecar are compared on their aggregates.",
    )
    add_store(p)
    p.add_argument("records", nargs="*", metavar="RECORD", help="two records: uuids or unique prefixes (8+ hex digits)")
    p.add_argument(
        "--model",
        metavar="M",
        help="compare every record of this model (with --benchmark): its model_info.id, every spelling the "
        "identity registry makes one model",
    )
    p.add_argument(
        "--benchmark", metavar="B", help="the benchmark (with --model): its folder, and its aliases' folders"
    )
    p.add_argument(
        "--result-a", metavar="KEY", help="the result (evaluation_result_id) of A to compare (default: matched)"
    )
    p.add_argument("--result-b", metavar="KEY", help="the result of B to compare (default: as --result-a)")
    add_all(p, help="with --model: include retracted, superseded and duplicate records")
    p.add_argument(
        "--margin",
        type=_margin,
        metavar="M",
        help="non-inferiority margin on the score's scale (2 for 2 points of a percent score): the verdict on "
        '"A is no worse than B by more than M" from the paired interval',
    )
    p.add_argument(
        "--across-protocols",
        action="store_true",
        help="compare results of different protocols (different judge, prompt, metric, ...) anyway; the report "
        "names the fields that differ",
    )
    add_format(p, OUTPUT_FORMATS)
    p.add_argument(
        "--show",
        type=count(0),
        default=20,
        metavar="N",
        help="disagreeing samples to show in rich output (default 20)",
    )
    p.add_argument(
        "--max-rows",
        type=count(1),
        default=None,
        metavar="N",
        help=f"read at most N rows of the two sidecars together (default {MAX_ROWS:,}; about {ROW_BYTES} bytes per row)",
    )
    args = p.parse_args(argv)
    # JSON lists every disagreeing sample; rich output shows --show of them (their ids are read again)
    listed = None if reporter(args.format).machine else args.show
    by_pair = args.model is not None or args.benchmark is not None
    if by_pair and (args.records or args.model is None or args.benchmark is None):
        p.error("give either two records, or --model and --benchmark (not both)")
    if not by_pair and len(args.records) != 2:
        p.error("give two records to compare (uuids or prefixes), or --model M --benchmark B")
    root = args.store
    from eee.analysis.compare import compare_many, compare_records, render, render_many
    from eee.analysis.samples import records_of, resolve
    from eee.catalog.table import read_names
    from eee.rules.ledger import read_ledger

    ledger = read_ledger(root)
    names = read_names(root)
    try:
        if by_pair:
            recs = list(records_of(root, args.benchmark, args.model, active_only=not args.all, ledger=ledger))
            if len(recs) < 2:
                raise Refused(
                    Finding(
                        f"data/{args.benchmark}",
                        "$",
                        f"{len(recs)} {'active ' if not args.all else ''}record(s) of {args.model} on {args.benchmark}: "
                        "nothing to compare",
                        hint="check the model id (model_info.id) and benchmark folder"
                        + ("; --all includes withdrawn records" if not args.all else ""),
                        check="analysis",
                    )
                )
            report = compare_many(recs, listed, args.max_rows, args.margin, args.across_protocols, names)
            reports = report["comparisons"]
            text = render_many(report, args.show)
        else:
            a, b = (resolve(root, ref, ledger) for ref in args.records)
            if a.uuid == b.uuid:
                raise Refused(Finding(a.rel, "$", "A and B are the same record", check="analysis"))
            from eee.store.identity import BENCHMARK

            if names.canonical(BENCHMARK, a.benchmark) != names.canonical(BENCHMARK, b.benchmark):
                raise Refused(
                    Finding(
                        b.rel,
                        "$",
                        f"the records are of different benchmarks ({a.benchmark}, {b.benchmark})",
                        hint="compare two records of one benchmark",
                        check="analysis",
                    )
                )
            report = compare_records(
                a, b, args.result_a, args.result_b, listed, args.max_rows, args.margin, args.across_protocols, names
            )
            reports = [report]
            text = render(report, args.show)
    except Refused as exc:
        return refused("eee compare", exc)
    reporter(args.format).result(report, lambda: print(text, end=""), ensure_ascii=True)
    aggregates_only = any(r["samples"] is None for r in reports)  # a pair not compared included
    return EXIT_WARNINGS if aggregates_only else EXIT_OK
