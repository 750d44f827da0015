"""``eee validate PATH...``: check records, sidecars and pointers; exit 0 clean, 1 errors, 2 warnings only."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from eee.commands import Parser, add_format, add_jobs, add_manifest, add_no_progress, add_out, add_store, count
from eee.reporting.findings import FileResult
from eee.reporting.reporters import Streamed, render, reporter
from eee.validation.pool import SECTIONS
from eee.validation.validate import Options, run


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        "eee validate",
        "Validate EEE records (<uuid>.json), sidecars (<uuid>_samples.jsonl) and DVC pointers: strict JSON, "
        "the schema of the version each declares, and the store's layout and pairing rules. The report goes "
        "to stdout, progress to stderr.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories (recursive) or glob patterns")
    add_format(p, help="report format")
    p.add_argument("--schema-only", action="store_true", help="skip the store's layout and pairing rules")
    add_store(
        p,
        help="the store the paths belong to (default: found from each path, the nearest folder above it that holds data/)",
        find=False,
    )
    p.add_argument("--max-errors", type=count(1), default=20, metavar="N", help="errors shown per file (default: 20)")
    add_no_progress(p)
    add_jobs(p, help="worker processes (default: the machine's cores for 2,000 files or more, else 1)")
    add_out(p, "FILE", help="also write the JSON report to this file")
    p.add_argument(
        "--metrics",
        type=Path,
        metavar="FILE",
        help="also write summary metrics (counts by kind and schema version) as JSON",
    )
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings (for pipelines)")
    p.add_argument(
        "--cache",
        type=Path,
        metavar="FILE",
        help="when PATH is one store root: keep each folder's results in FILE and check again only the folders "
        "whose files changed (the same report as a full run; the pipeline's validate stage)",
    )
    add_manifest(
        p,
        help="with --cache: the store manifest (eee manifest) whose sha256s key the folders (else they are hashed)",
    )
    return p


def _cached_root(paths: list[str], options: Options) -> Path | None:
    from eee.validation.cache import store_root

    return store_root(paths, options)


def _digests(manifest: Path | None) -> dict[str, str] | None:
    if manifest is None:
        return None
    from eee.store.manifest import read_manifest

    try:
        data = read_manifest(manifest)
    except ValueError as exc:
        print(f"eee validate: {exc}; hashing the files instead", file=sys.stderr)
        return None
    return {**(data.get("files") or {}), **(data.get("sidecars_present") or {})}


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    options = Options(repo_checks=not args.schema_only, cap=args.max_errors, root=args.store, jobs=args.jobs)
    show_progress = not args.no_progress and not reporter(args.format).machine and sys.stderr.isatty()
    accepted = None
    if options.repo_checks:  # like the gate: what a record's flag events name is accepted, not an error
        from eee.validation.flagged import IndexFlags
        from eee.validation.settled import LedgerSettled

        flags = IndexFlags(args.store)  # the flags of the store named, else of the current folder
        settled = LedgerSettled(args.store)  # what the ledger settled; committed records' hints

        def accepted(results: list[FileResult]) -> None:
            flags(results)
            settled(results)

    # the results go to the report as they come: the run keeps the counts and the findings only
    report = Streamed(SECTIONS, accepted)
    from contextlib import ExitStack, nullcontext

    from eee.store import identity

    home = ExitStack()
    if options.repo_checks:  # a snapshot without an identity registry of its own is read with the store's
        home.enter_context(identity.home_registry(args.store))
    try:
        from eee.reporting.progress import shown

        cached_root = _cached_root(args.paths, options) if args.cache is not None else None
        with shown("validating", tty=show_progress) if not args.no_progress else nullcontext() as update:
            if cached_root is not None:
                from eee.validation.cache import run_cached

                run_cached(cached_root, options, args.cache, _digests(args.manifest), sink=report, progress=update)
            else:
                run(args.paths, options, progress=update, sink=report)
        render(report, args.format)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            partial = args.out.with_name(f".{args.out.name}.partial")
            with partial.open("wb") as fh:  # written entry by entry, then renamed: never half a report
                report.write_json(fh)
            partial.replace(args.out)
        summary = report.summary()
    finally:
        report.close()
        home.close()
    if args.metrics:
        import json

        args.metrics.parent.mkdir(parents=True, exist_ok=True)
        counts = summary.counts()
        counts["events"] = counts["by_kind"].get("event", 0)
        args.metrics.write_text(json.dumps(counts, indent=2) + "\n", encoding="utf-8")
    if summary.fatal:
        return 1
    return 0 if args.exit_zero else summary.exit_code()
