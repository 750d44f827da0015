"""``eee export hf-evals|hf-dataset``: results out of the store for the Hugging Face Hub.

- ``eee export hf-evals --model ID [--out DIR]``: the model's active results as
  ``DIR/.eval_results/*.yaml`` (default ``build/hub/<model>/``), the files the Hub shows on
  the model's page; results of benchmarks the identity registry maps to no Hub dataset are
  listed and skipped (exit 2). Push them with ``hf upload MODEL_REPO DIR/.eval_results
  .eval_results``.
- ``eee export hf-dataset --out DIR [--license ID]``: the catalogue as a dataset folder (a
  default config of every benchmark, one config per benchmark, one row per active result)
  that ``datasets.load_dataset(DIR)`` reads (``load_dataset(DIR, CONFIG)``: one benchmark);
  push it with ``hf upload --repo-type dataset REPO DIR``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from eee.commands import EXIT_OK, EXIT_WARNINGS, OUTPUT_FORMATS, Parser, add_format, add_out, add_store, refused
from eee.reporting.findings import Refused
from eee.reporting.reporters import reporter


def main(argv: list[str]) -> int:
    p = Parser("eee export", "Write the store's results in the forms the Hugging Face Hub reads.")
    sub = p.add_subparsers(dest="what", required=True, metavar="FORM", parser_class=Parser, help="what to write")
    e = sub.add_parser(
        "hf-evals",
        help="a model's active results as .eval_results/*.yaml for its Hub page",
        description="Write a model's active results (every spelling the identity registry makes one model) as "
        "the Hub's .eval_results/*.yaml files, one per benchmark and variant, each entry linking to the record's "
        "page on the published site (the store's site_url setting; unset: no link). Benchmarks the registry maps "
        "to no Hub dataset are listed and skipped (exit 2).",
    )
    e.add_argument("--model", required=True, metavar="ID", help="the model (model_info.id, or any alias of it)")
    add_out(e, "DIR", help="the folder to write .eval_results/ into (default: build/hub/<model>/)")
    add_format(e, OUTPUT_FORMATS)
    add_store(e)
    d = sub.add_parser(
        "hf-dataset",
        help="the catalogue as a dataset folder (one config per benchmark) for datasets.load_dataset",
        description="Write the catalogue as a Hugging Face dataset folder: a dataset card with a license, a "
        "default config of every benchmark and one config per benchmark, and one row per active evaluation result (retracted, superseded and duplicate results left "
        "out). The folder is replaced whole (only a folder this command wrote).",
    )
    add_out(d, "DIR", help="the dataset folder", required=True)
    d.add_argument(
        "--license",
        metavar="ID",
        default="other",
        help="the Hub license id the card declares (cc-by-4.0, mit, ...; default: other, with LICENSE.md beside "
        "the card: each result keeps the terms of its source)",
    )
    add_format(d, OUTPUT_FORMATS)
    add_store(d)
    args = p.parse_args(argv)
    if args.what == "hf-dataset":
        from eee.export.dataset import LICENSE_ID

        if not LICENSE_ID.match(args.license):
            p.error(f"--license {args.license!r} is not a Hub license id (lowercase: cc-by-4.0, mit, other, ...)")
    try:
        if args.what == "hf-evals":
            return _evals(args.store, args.model, args.out, args.format)
        return _dataset(args.store, args.out, args.format, args.license)
    except Refused as exc:
        return refused(f"eee export {args.what}", exc)


def _evals(root: Path, model: str, out: Path | None, fmt: str) -> int:
    from eee.export.hub import DEFAULT_OUT, build, model_folder, write
    from eee.reporting.findings import Finding

    export = build(root, model)
    if not export.records:
        more = f" ({export.left_out} that no longer count)" if export.left_out else ""
        raise Refused(
            [
                Finding(
                    "data",
                    "$",
                    f"no active record of {export.model!r} in the store{more}",
                    "name the model by its model_info.id (or an alias of it): `eee identity --kind model` lists them",
                    check="output",
                )
            ]
        )
    folder = out if out is not None else root / DEFAULT_OUT / model_folder(export.model)
    written, others = write(folder, export) if export.files else ([], [])
    skipped = sorted(export.skipped.values(), key=lambda s: (s.benchmark, s.reason))
    report = {
        "model": export.model,
        "records": export.records,
        "left_out": export.left_out,
        "written": [str(w) for w in written],
        "entries": {name: len(entries) for name, entries in export.files.items()},
        "skipped": [s.__dict__ for s in skipped],
        "not_written_here": others,
    }

    def text() -> None:
        for w in written:
            print(f"wrote {w} ({len(export.files[w.name])} result(s))")
        for s in skipped:
            print(f"skipped {s.results} result(s) of {s.benchmark}: {s.reason} (e.g. {s.example})", file=sys.stderr)
        if others:
            print(f"left as they were in {folder}/.eval_results: {', '.join(others)}", file=sys.stderr)
        if written:
            print(f"push them with: hf upload <model-repo> {folder}/.eval_results .eval_results", file=sys.stderr)

    reporter(fmt).result(report, text)
    if skipped:
        print(
            "    hint: a maintainer maps a benchmark to its Hub dataset and task ids in "
            "governance/identity/benchmarks.yaml (hub: {dataset: ..., task: ..., source: {url: ..., note: ...}}: "
            "docs/guide/hub.md)",
            file=sys.stderr,
        )
    return EXIT_WARNINGS if skipped else EXIT_OK


def _dataset(root: Path, out: Path, fmt: str, license: str) -> int:
    from eee.export.dataset import write

    done = write(root, out, license)
    report = {
        "out": str(out),
        "rows": done.rows,
        "configs": done.configs,
        "left_out": dict(done.left_out),
        "unreadable": done.skipped,
    }

    def text() -> None:
        print(f"wrote {out}: {done.rows:,} active result(s) in {len(done.configs)} config(s)")
        if done.left_out:
            print("left out: " + ", ".join(f"{n} {why}" for why, n in sorted(done.left_out.items())), file=sys.stderr)
        print(f"push it with: hf upload --repo-type dataset <dataset-repo> {out}", file=sys.stderr)

    reporter(fmt).result(report, text)
    for line in done.skipped[:5]:
        print(f"eee export: cannot read {line}", file=sys.stderr)
    if done.skipped:
        print(f"eee export: {len(done.skipped)} record(s) could not be read: run `eee validate`", file=sys.stderr)
        return 1
    return EXIT_OK
