"""``eee irt --benchmark B``: a Rasch (1PL) fit over the per-sample rows of every active
record of a benchmark; abilities, difficulties with standard errors, worst-fitting items."""

from __future__ import annotations

import argparse
import sys

from eee.commands import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_WARNINGS,
    OUTPUT_FORMATS,
    add_all,
    add_dry_run,
    add_format,
    add_out,
    add_store,
    count,
    parser,
)
from eee.reporting.reporters import reporter

IRT_DIR = "build/analysis/irt"


def main(argv: list[str]) -> int:
    from eee.analysis.samples import MAX_ROWS, ROW_BYTES

    p = parser(
        "eee irt",
        "Fit a Rasch (one-parameter logistic) model over the per-sample rows of every active record of a "
        "benchmark: one ability per record, one difficulty per sample, with standard errors and fit statistics.",
    )
    add_store(p)
    p.add_argument(
        "--benchmark",
        required=True,
        metavar="B",
        help="the benchmark: its folder under data/, with the folders of its aliases in the identity registry",
    )
    p.add_argument(
        "--result",
        metavar="KEY",
        help="the result (evaluation_result_id) whose samples are the items (default: the most shared)",
    )
    add_all(p)
    add_out(p, "DIR", help=f"write abilities.parquet and items.parquet here (default: {IRT_DIR}/<B>)")
    add_dry_run(p, help="print the fit only; write no Parquet")
    p.add_argument("--worst", type=count(0), default=10, metavar="N", help="worst-fitting items to list (default 10)")
    p.add_argument("--ridge", type=_ridge, default=None, metavar="L", help="the ridge penalty (default 0.05)")
    p.add_argument(
        "--max-rows",
        type=count(1),
        default=None,
        metavar="N",
        help=f"read at most N per-sample rows in all (default {MAX_ROWS:,}; about {ROW_BYTES} bytes per row)",
    )
    add_format(p, OUTPUT_FORMATS)
    args = p.parse_args(argv)
    root = args.store
    from eee.analysis.samples import benchmark_folders, no_such_benchmark

    if not benchmark_folders(root, args.benchmark):  # json: one document, the refusal
        return reporter(args.format).refusal("eee irt", no_such_benchmark(args.benchmark).findings)
    from eee.analysis.irt import RIDGE, benchmark_irt, write_parquet

    res = benchmark_irt(
        root,
        args.benchmark,
        args.result,
        args.all,
        RIDGE if args.ridge is None else args.ridge,
        max_rows=args.max_rows,
    )
    summary = res.summary(args.worst)
    written = []
    if res.fit is not None and not args.dry_run:
        folder = args.out if args.out is not None else root / IRT_DIR / args.benchmark
        try:
            written = write_parquet(res, folder)
        except OSError as exc:
            print(f"{folder}: cannot write: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_ERRORS
        summary["written"] = [str(w) for w in written]
    reporter(args.format).result(summary, lambda: print(render(summary), end=""), ensure_ascii=True)
    for note in [*res.said, *res.notes]:
        print(f"note: {note}", file=sys.stderr)
    if res.fit is None:
        print(f"eee irt: no fit for {args.benchmark}: {res.no_fit}", file=sys.stderr)
        # too few records or items is what the store holds, said (exit 2); anything else failed (1)
        return EXIT_WARNINGS if res.too_few else EXIT_ERRORS
    return EXIT_WARNINGS if res.notes else EXIT_OK


def _ridge(text: str) -> float:
    """``--ridge``: zero or positive (else argparse's usage error)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"must be zero or positive, not {text}")
    return value


def render(s: dict) -> str:
    records, items = s["records"], s["items"]
    out = [
        f"benchmark {s['benchmark']}: {records} record{'' if records == 1 else 's'}, {items} item"
        f"{'' if items == 1 else 's'} (result {s['result'] or 'per record'})"
    ]
    fit = s.get("fit")
    if fit is None:
        out.append("no fit")
        return "\n".join(out) + "\n"
    out.append(
        f"{fit['method']}, ridge {fit['ridge']}, {fit['iterations']} iterations"
        + ("" if fit["converged"] else " (NOT converged)")
        + f", {fit['responses']} responses, log-likelihood {fit['log_likelihood']:.2f}"
    )
    if fit["items_answered_once"]:
        out.append(
            f"{fit['items_answered_once']} of the {s['items']} items were answered by one record only "
            "(each difficulty rests on one response and the ridge)"
        )
    out.append("abilities (highest first):")
    for r in s["abilities"]:
        out.append(
            f"  {r['ability']:+7.3f} ± {r['se']:.3f}  {r['share_correct']:6.1%}  {r['model_id']}"
            f" ({r['eval_library'] or '?'}, {r['record_uuid'][:8]})  infit {r['infit']:.2f} outfit {r['outfit']:.2f}"
        )
    out.append("worst-fitting items (outfit mean square):")
    for r in s["worst_fitting_items"]:
        out.append(
            f"  {r['item']}: outfit {r['outfit']:.2f}, infit {r['infit']:.2f}, difficulty {r['difficulty']:+.3f} ± "
            f"{r['se']:.3f}, solved by {r['share_correct']:.0%} of {r['models']}"
        )
    for w in s.get("written", []):
        out.append(f"-> {w}")
    return "\n".join(out) + "\n"
