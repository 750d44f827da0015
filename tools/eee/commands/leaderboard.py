"""``eee leaderboard --benchmark B [--protocol P] [--metric M] [--pass-at K]``: the active
results of one benchmark, ranked within each protocol, with their intervals and rank ranges
(:mod:`eee.analysis.leaderboard`). Read from the store itself (the benchmark's records, their
sidecars included), or from a written catalogue with ``--catalog DIR``."""

from __future__ import annotations

from pathlib import Path

from eee.commands import EXIT_OK, OUTPUT_FORMATS, add_format, add_store, count, parser
from eee.reporting.findings import Finding, Refused
from eee.reporting.reporters import reporter


def main(argv: list[str]) -> int:
    p = parser(
        "eee leaderboard",
        "Rank the active results of a benchmark, one leaderboard per protocol (results of different judges, "
        "prompts, metrics or harness versions never share one), each score with its interval and where it comes "
        "from (record, items, count, none), and a rank range per result from paired comparisons on the shared "
        "items, Holm-corrected (results the data cannot order share a range, 3-5). For AlpacaEval, also the "
        "numbers its own leaderboard publishes, computed from the items.",
    )
    add_store(p)
    p.add_argument("--benchmark", required=True, metavar="B", help="the benchmark: its folder, or any alias of it")
    p.add_argument("--protocol", metavar="P", help="only this protocol (its protocol_id, or the start of it)")
    p.add_argument(
        "--metric", metavar="M", help="only this metric (metric_id, its canonical id, metric_name or result id)"
    )
    p.add_argument(
        "--pass-at",
        type=count(1),
        metavar="K",
        help="rank by pass@K, estimated per item from its samples (1 - C(n-c, K)/C(n, K)) and averaged over items",
    )
    p.add_argument(
        "--catalog",
        type=Path,
        metavar="DIR",
        help="read the results and items from this written catalogue (build/catalog: what the pipeline wrote) "
        "instead of the store's records",
    )
    add_format(p, OUTPUT_FORMATS)
    args = p.parse_args(argv)
    root = args.store
    from eee.analysis.leaderboard import build, render, tables_from_catalog, tables_from_store
    from eee.analysis.samples import benchmark_folders, no_such_benchmark

    folders = benchmark_folders(root, args.benchmark)
    try:
        if not folders:
            raise no_such_benchmark(args.benchmark)
        if args.catalog is not None:
            if not args.catalog.is_dir():
                p.error(f"--catalog {args.catalog}: not a folder (write one with `eee catalog`)")
            tables = tables_from_catalog(args.catalog, folders)
        else:
            tables = tables_from_store(root, folders)
        report = build(tables, args.benchmark, args.protocol, args.metric, args.pass_at)
        if not report["leaderboards"]:
            what = " and ".join(
                x
                for x in (
                    f"protocol {args.protocol}" if args.protocol else "",
                    f"metric {args.metric}" if args.metric else "",
                )
                if x
            )
            known = sorted({(r.get("protocol_id"), r.get("metric_id")) for r in tables.results}, key=str)[:8]
            raise Refused(
                Finding(
                    f"data/{folders[0]}",
                    "$",
                    f"no active result of {args.benchmark}" + (f" with {what}" if what else ""),
                    hint="protocols and metrics here: "
                    + ("; ".join(f"{pid} ({metric})" for pid, metric in known) or "none"),
                    check="analysis",
                )
            )
    except Refused as exc:
        return reporter(args.format).refusal("eee leaderboard", exc.findings)  # json: one document, the refusal
    reporter(args.format).result(report, lambda: print(render(report), end=""), ensure_ascii=True)
    return EXIT_OK
