"""``eee import SOURCE``: take in a datastore snapshot whole, every file accounted for.

SOURCE is a folder holding ``data/`` (read through a work tree), or a git repository read
at ``--source-ref REV`` (blobs from git's object store; nothing checked out). Every file
under ``data/`` ends imported, relocated, flagged, already present or refused; the report
lists each with its reason and the counts add up to the number of source files.
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from eee.commands import (
    EXIT_CODES_TEXT,
    EXIT_OK,
    EXIT_WARNINGS,
    OUTPUT_FORMATS,
    UsageError,
    add_dry_run,
    add_format,
    add_no_progress,
    add_store,
    count,
    parser,
    refused,
)
from eee.reporting.findings import Finding, Refused
from eee.reporting.progress import bar
from eee.reporting.reporters import reporter


def build_parser() -> Any:
    p = parser(
        "eee import",
        "Import a datastore snapshot (a folder or a git revision in the layout data/<benchmark>/<developer>/<model>/"
        "<uuid>.json): each file is imported, relocated to its canonical path, flagged (imported with a flag event "
        "for a store rule it breaks), found already present, or refused with the reason. Writes the files, the flag "
        "events and a manifest under governance/imports/, staged; --commit commits them in batches through the hooks.",
        epilog=f"{EXIT_CODES_TEXT}. Here 2 means: done, and some files were refused (each named with the reason); "
        "1: the import itself was refused (nothing of the refused batch is kept).",
    )
    p.add_argument(
        "source", metavar="SOURCE", type=Path, help="a folder holding data/, or a git repository (with --source-ref)"
    )
    p.add_argument(
        "--source-ref", metavar="REV", help="read SOURCE as a git repository at this revision (commit, branch, tag)"
    )
    writes = p.add_mutually_exclusive_group()
    add_dry_run(writes, help="plan and validate, report the outcomes; write nothing")
    writes.add_argument(
        "--commit",
        action="store_true",
        help="commit the import through the hooks: one commit per batch, then the manifest",
    )
    p.add_argument(
        "--batch",
        type=count(1),
        metavar="N",
        help="N records per batch (commit) instead of one batch per benchmark",
    )
    add_format(p, OUTPUT_FORMATS, help="report format on stdout")
    add_no_progress(p)
    add_store(p)
    return p


def open_source(source: Path, ref: str | None) -> tuple[Any, str, str | None]:
    """(tree, label, revision) for SOURCE; raises UsageError when it cannot be read."""
    from eee.store.tree import GitTree, WorkTree

    if not source.exists():
        raise UsageError(f"{source}: no such folder or repository")
    label = source.as_posix()  # as given: a provenance record names no path of the importing machine
    if ref is not None:
        from eee.git.cli import GitError, verify_commit

        try:
            revision = verify_commit(ref, source, "--source-ref")
        except GitError:
            raise UsageError(f"--source-ref {ref}: not a commit of the git repository {source}") from None
        tree = GitTree(source.resolve(), revision)
    else:
        if not source.is_dir():
            raise UsageError(f"{source}: not a folder (a git repository needs --source-ref REV)")
        tree, revision = WorkTree(source.resolve()), None
    if tree.mode("data") != "040000":
        raise UsageError(
            f"{source}: holds no data/ folder; a snapshot is data/<benchmark>/<developer>/<model>/<uuid>.json"
        )
    return tree, label, revision


SHOWN = 20  # lines per outcome in the readable report (--format json has everything)


def _print_text(report: Any) -> None:
    counts = report.counts()
    at = f" at {report.revision[:12]}" if report.revision else ""
    print(f"import {report.id}: {counts['total']} source files from {report.source}{at}")
    for outcome in ("imported", "relocated", "flagged", "already_present", "refused"):
        print(f"  {outcome.replace('_', ' '):16} {counts[outcome]:6}")

    def listing(outcome: str, line: Any) -> None:
        entries = [e for e in report.entries if e.outcome == outcome]
        for e in entries[:SHOWN]:
            print(line(e))
        if len(entries) > SHOWN:
            print(f"... {len(entries) - SHOWN} more {outcome.replace('_', ' ')} (see --format json)")

    def flags(e: Any) -> str:
        named = ", ".join(f"{f.rule} at {f.path}" for f in e.flags[:2])
        more = f" (+{len(e.flags) - 2} more)" if len(e.flags) > 2 else ""
        moved = f" (from {e.source})" if e.source != e.store else ""
        return f"flagged   {e.store}{moved}: {named}{more}"

    listing("refused", lambda e: f"refused   {e.source}: {e.reason}")
    listing("relocated", lambda e: f"relocated {e.source} -> {e.store}")
    listing("flagged", flags)
    if report.signing and (report.dry_run or report.signing["needs_signature"]):
        print(f"signing   {report.signing['said']}")
    if report.dry_run:
        print("dry run: nothing written")
    elif report.manifest:
        print(f"manifest  {report.manifest}")
        if report.commits:
            print(f"commits   {len(report.commits)} (last {report.commits[-1][:12]})")
        else:
            print("staged: review, then `git commit` (or run with --commit)")
    else:
        print("nothing to import: every file is already in the store or refused")
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)


def main(argv: list[str]) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    root = args.store
    try:
        tree, label, revision = open_source(args.source, args.source_ref)
    except UsageError as exc:
        p.error(str(exc))
    from eee.imports.run import import_snapshot

    show = not args.no_progress and sys.stderr.isatty()
    try:
        with bar("importing") if show else nullcontext() as update:
            report = import_snapshot(
                root, tree, label, revision, dry_run=args.dry_run, commit=args.commit, batch=args.batch, progress=update
            )
    except Refused as exc:
        return refused("eee import", exc)
    except OSError as exc:
        return refused(
            "eee import", Refused(Finding(str(root), "$", f"cannot write to the store: {exc}", check="import"))
        )
    finally:
        close = getattr(tree, "close", None)
        if close:
            close()
    reporter(args.format).result(report.to_dict(), lambda: _print_text(report))
    return EXIT_WARNINGS if report.counts()["refused"] else EXIT_OK
