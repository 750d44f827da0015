"""``eee experiment new|show|check|report ID``: experiment cards, comparisons declared in the
store's history before their results (:mod:`eee.governance.experiments`).

- ``new ID``: a card from the options (``--like RECORD`` copies a record's protocol fields),
  or from a drafted file (``--from FILE``; ``--template`` prints one), written as
  ``governance/experiments/ID.yaml`` and, with ``--commit``, committed on its own through
  the one commit stack (signed where git signs; in a store with roles by a known key).
- ``show ID``: the card, its history (the commit that added it, its amendments).
- ``check ID``: what the card declared against what the cited results hold; every deviation.
- ``report ID``: the declared analysis on the cited active results (:mod:`eee.analysis.experiment`).

Exit codes: 0 clean, 1 errors (nothing written), 2 deviations (warnings), 64 usage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from eee.commands import (
    EXIT_OK,
    EXIT_WARNINGS,
    OUTPUT_FORMATS,
    add_dry_run,
    add_format,
    add_store,
    count,
    parser,
    refused,
)
from eee.reporting.findings import Refused
from eee.reporting.reporters import reporter

PROG = "eee experiment"


def _card_id(text: str) -> str:
    from eee.governance.experiments import ID_RE

    if not ID_RE.match(text):
        raise argparse.ArgumentTypeError(
            f"{text[:80]!r} is no card id: 3 to 64 lowercase letters, digits and single hyphens (the file name)"
        )
    return text


def _margin(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a margin is a distance, 0 or more")
    return int(value) if value.is_integer() else value


def _model(text: str) -> dict[str, str]:
    model, _, revision = text.partition("@")
    if "/" not in model or not model.split("/", 1)[0] or not model.split("/", 1)[1]:
        raise argparse.ArgumentTypeError(f"{text[:80]!r}: a model is DEVELOPER/MODEL[@REVISION]")
    return {"id": model, **({"revision": revision} if revision else {})}


def like(root: Path, ref: str, result: str | None) -> dict[str, Any]:
    """The protocol fields of a record's result (``ref``: a uuid or prefix), by the card's
    sections: ``benchmark`` (dataset, revision, split) and ``protocol``; and the result key."""
    from eee.analysis.compare import result_of
    from eee.analysis.samples import resolve
    from eee.catalog.table import read_names
    from eee.governance.experiments import BENCHMARK_FIELDS
    from eee.store import protocol

    rec = resolve(root, ref)
    results = [r for r in rec.doc.get("evaluation_results") or [] if isinstance(r, dict)]
    key = result or (results[0].get("evaluation_result_id") if results else None)
    found = result_of(rec.doc, str(key)) if key else None
    if found is None:
        from eee.reporting.findings import refusal

        raise refusal(f"{rec.rel} has no result {key!r}", "name one of its evaluation_result_id values with --result")
    fields = protocol.fields_of(rec.doc, found, rec.benchmark, read_names(root))
    bench = {own: fields[f] for own, f in BENCHMARK_FIELDS.items() if fields.get(f)}
    proto = {f: v for f, v in fields.items() if v and f not in ("benchmark", *BENCHMARK_FIELDS.values())}
    return {"benchmark": {"id": rec.benchmark, **bench}, "protocol": proto, "result": str(key)}


def _add_new(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "new",
        help="register a card (--template prints one to draft from; --commit commits it)",
        description="Register an experiment card: the comparison declared before its results. Written as "
        "governance/experiments/ID.yaml; --commit commits it on its own (signed where git signs).",
    )
    add_store(p)
    p.add_argument("id", nargs="?", metavar="ID", help="the card's id (its file name)")
    p.add_argument("--template", action="store_true", help="print a complete card to draft from, write nothing")
    p.add_argument(
        "--from", dest="source", metavar="FILE", help="a drafted card (YAML); its id, author, time are set here"
    )
    p.add_argument("--question", metavar="TEXT", help="the question the experiment answers")
    p.add_argument(
        "--model", action="append", type=_model, default=[], metavar="DEV/MODEL[@REV]", help="a model (twice or more)"
    )
    p.add_argument("--candidate", metavar="DEV/MODEL", help="the model the claim is about (default: the first)")
    p.add_argument("--reference", metavar="DEV/MODEL", help="the model it is compared with (default: the second)")
    p.add_argument("--benchmark", metavar="B", help="the benchmark (its folder or canonical id)")
    p.add_argument("--like", metavar="RECORD", help="copy the benchmark's and protocol's fields from this record")
    p.add_argument("--result", metavar="KEY", help="the primary result (evaluation_result_id)")
    p.add_argument("--items", type=count(1), metavar="N", help="items each result should hold")
    p.add_argument("--samples-per-item", type=count(1), default=1, metavar="K", help="samples per item (default 1)")
    p.add_argument("--cluster-key", metavar="KEY", help="the items' metadata key to cluster by")
    p.add_argument("--margin", type=_margin, metavar="M", help="non-inferiority margin on the score's scale")
    p.add_argument("--subgroup", action="append", default=[], metavar="KEY", help="an item metadata key to report by")
    p.add_argument("--stopping-rule", metavar="TEXT", help="when data collection stops, in words")
    p.add_argument("--results-per-model", type=count(1), default=1, metavar="N", help="results per model (default 1)")
    p.add_argument("--analysis-plan", metavar="TEXT", help="the analysis plan in words")
    p.add_argument("--existing", action="append", default=[], metavar="UUID", help="data: existing: a record analysed")
    p.add_argument("--amends", type=_card_id, metavar="OLD", help="the card this one amends (with --reason)")
    p.add_argument("--reason", metavar="TEXT", help="why the amendment")
    p.add_argument("--commit", action="store_true", help="commit the card on its own (signed where git signs)")
    add_dry_run(p)
    add_format(p, OUTPUT_FORMATS)
    return p


def _new(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from eee.governance.experiments import CARD_SCHEMA_VERSION, CardProblem, dumps, loads
    from eee.write.experiments import TEMPLATE, register

    if args.template:
        print(dumps({**TEMPLATE, "id": args.id or TEMPLATE["id"]}), end="")
        return EXIT_OK
    if args.id is None:
        p.error("give the card's ID")
    if bool(args.amends) != bool(args.reason):
        p.error("--amends OLD and --reason TEXT go together")
    root = args.store
    try:
        if args.source:
            from eee.store.limits import CARD_MAX_BYTES, read_regular

            try:
                card = loads(read_regular(args.source, CARD_MAX_BYTES, "card"))
            except (OSError, CardProblem) as exc:
                p.error(f"--from {args.source}: {exc}")
            card.pop("author", None)
            card["id"] = args.id
            card.pop("time", None)
        else:
            missing = [
                o
                for o, v in (
                    ("--question", args.question),
                    ("--benchmark or --like", args.benchmark or args.like),
                    ("--stopping-rule", args.stopping_rule),
                    ("--analysis-plan", args.analysis_plan),
                )
                if not v
            ]
            if len(args.model) < 2:
                missing.append("--model (twice)")
            if missing:
                p.error("missing: " + ", ".join(missing) + " (or draft the card: --template, then --from FILE)")
            copied = like(root, args.like, args.result) if args.like else {}
            bench = dict(copied.get("benchmark") or {})
            if args.benchmark:
                bench["id"] = args.benchmark
            if args.items:
                bench["items"] = args.items
            result = args.result or copied.get("result")
            if not result:
                p.error("missing: --result KEY (the primary result), or --like RECORD")
            models = [m["id"] for m in args.model]
            comparison: dict[str, object] = {
                "candidate": args.candidate or models[0],
                "reference": args.reference or models[1],
                "paired_by": "item",
            }
            if args.cluster_key:
                comparison["cluster_key"] = args.cluster_key
            comparison["level"] = 0.95
            if args.margin is not None:
                comparison["margin"] = args.margin
            card = {
                "card_schema": CARD_SCHEMA_VERSION,
                "id": args.id,
                "question": args.question,
                "data": "existing" if args.existing else "new",
                **({"results": list(dict.fromkeys(args.existing))} if args.existing else {}),
                "models": args.model,
                "benchmark": bench,
                **({"protocol": copied["protocol"]} if copied.get("protocol") else {}),
                "samples_per_item": args.samples_per_item,
                "primary_metric": {"result": result, "infrastructure_errors": "left_out", "format_errors": "scored"},
                "comparison": comparison,
                **({"subgroups": list(dict.fromkeys(args.subgroup))} if args.subgroup else {}),
                "stopping_rule": {"text": args.stopping_rule, "results_per_model": args.results_per_model},
                "analysis_plan": args.analysis_plan,
            }
        if args.amends:
            card["amends"] = {"card": args.amends, "reason": args.reason}
        result = register(root, card, commit=args.commit, dry_run=args.dry_run)
    except Refused as exc:
        refused(f"{PROG} new", exc)
        print("nothing was written", file=sys.stderr)
        return 1

    def said() -> None:
        if args.dry_run:
            print(result["text"], end="")
            print(f"dry run: {result['path']} would be written; {result['signing']['said']}")
        elif result["committed"]:
            print(f"registered {result['path']} in commit {result['commit'][:12]}")
        else:
            print(f"wrote {result['path']} (staged); commit it on its own before any result that cites it")

    reporter(args.format).result(result, said)
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from eee.analysis.experiment import _history
    from eee.governance.experiments import path_for, read_cards
    from eee.store.paths import escaped
    from eee.store.tree import WorkTree

    cards = read_cards(WorkTree(args.store))
    found = cards.get(args.id)
    if found is None or found.doc is None:
        from eee.reporting.findings import refusal

        why = "no such card" if found is None else f"unreadable: {found.problem}"
        return refused(
            f"{PROG} show",
            refusal(why, "the cards are governance/experiments/*.yaml", file=path_for(args.id), check="experiment"),
        )
    history = _history(args.store, cards, args.id)
    if reporter(args.format).machine:
        reporter(args.format).result({"card": found.doc, "history": history}, lambda: None)
        return EXIT_OK
    text = (args.store / found.path).read_text("utf-8", "replace")
    print("\n".join(escaped(line, quote=False) for line in text.splitlines()))
    print("history:")
    for h in history:
        when = (
            f"commit {h['commit'][:10]} {h['time']} by {escaped(h['committer'], quote=False)}"
            if h["commit"]
            else "not committed"
        )
        extra = f"; amends {h['amends']}: {escaped(str(h.get('reason')), quote=False)}" if h.get("amends") else ""
        late = "  [after results were committed]" if h.get("after_results") else ""
        print(f"  {h['card']} ({h['role']}): {when}{extra}{late}")
    return EXIT_OK


def _analysis(args: argparse.Namespace, verb: str) -> int:
    from eee.analysis.experiment import build, deviation_findings, render

    try:
        report = build(args.store, args.id, analyse=verb == "report")
    except Refused as exc:
        return refused(f"{PROG} {verb}", exc)
    reporter(args.format).result(report, lambda: print(render(report, args.show), end=""))
    return EXIT_WARNINGS if deviation_findings(report) else EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    p = parser(
        PROG,
        "Experiment cards (governance/experiments/ID.yaml): a comparison declared in the store's history before "
        "its results, immutable once published, amended by new cards.",
    )
    sub = p.add_subparsers(dest="verb", metavar="ACTION", help="new, show, check or report", required=True)
    _add_new(sub)
    show = sub.add_parser(
        "show",
        help="the card and its history",
        description="Print an experiment card and its history (the commit that added it, its amendments).",
    )
    add_store(show)
    show.add_argument("id", metavar="ID", help="the card's id")
    add_format(show, OUTPUT_FORMATS)
    for verb, summary, what in (
        (
            "check",
            "what the card declared against what the cited results hold",
            "What the card declared against what the cited results hold: every deviation.",
        ),
        (
            "report",
            "the declared analysis, with every deviation",
            "The card's declared analysis on the cited active results: the paired interval, the non-inferiority "
            "verdict, subgroups with their counts, errors apart, the items one model gets right and the other "
            "wrong, the level of reproducibility, every deviation.",
        ),
    ):
        q = sub.add_parser(verb, help=summary, description=what)
        add_store(q)
        q.add_argument("id", metavar="ID", help="the card's id")
        add_format(q, OUTPUT_FORMATS)
        q.add_argument(
            "--show", type=count(0), default=20, metavar="N", help="items listed in rich output (default 20)"
        )
    return p


def main(argv: list[str]) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    leaf = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices[args.verb]
    for given in (args.id, getattr(args, "amends", None)):
        if given is not None:
            try:
                _card_id(given)
            except argparse.ArgumentTypeError as exc:
                leaf.error(str(exc))
    if args.verb == "new":
        return _new(leaf, args)
    if args.verb == "show":
        return _show(args)
    return _analysis(args, args.verb)
