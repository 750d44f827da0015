"""``eee migrate --to VERSION PATH... --out DIR``: write migrated copies of records elsewhere.

Exit 0 when every record migrated (or was at the target already), 1 when any was refused
(the others are still written) or the run was refused as a whole (a missing input, an
output inside data/: nothing is written), 64 for a usage error such as an unknown
``--to`` version or a ``--store`` that is not a store (nothing is written).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from eee.commands import EXIT_CODES_TEXT, Parser, add_format, add_no_progress, add_out, add_store, refused
from eee.migrate.export import export
from eee.migrate.report import REPORT_NAME, ExportReport
from eee.reporting.findings import FileResult, Refused, Summary
from eee.reporting.reporters import render, reporter


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        "eee migrate",
        "Write copies of EEE records (and their sidecars) migrated to a schema version, in the store's layout "
        "under DIR, with a report (DIR/migration-report.json). Records under data/ are never rewritten.",
        epilog=EXIT_CODES_TEXT + "; 1 also when some records were refused (the others are written)",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="records, sidecars, directories (recursive) or globs")
    p.add_argument("--to", metavar="VERSION", type=_version, help="target schema version (default: the current one)")
    add_out(p, "DIR", help="output folder (outside any store's data/)", required=True)
    add_format(p)
    add_no_progress(p)
    add_store(
        p,
        help="the store the records belong to; the copies are placed as below it, and nothing is written into it "
        "(default: found from each path, the nearest folder above it that holds data/)",
        find=False,
    )
    return p


def _version(text: str) -> str:
    """``--to``: a released schema version (else argparse's usage error)."""
    from eee.migrate.chain import target_version
    from eee.store.schemas import default_registry

    try:
        target_version(text, default_registry())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


class Checked(Summary):
    """The findings of the records that have some, and how many were checked in all (the
    text formats print only those two)."""

    def __init__(self, results: list[FileResult], files: int) -> None:
        super().__init__(results)
        self.files = files

    def counts(self) -> dict[str, Any]:
        return {**super().counts(), "files": self.files}


def closing_line(report: ExportReport) -> str:
    s = report.summary()
    parts = [
        f"{s['records']} record{'' if s['records'] == 1 else 's'}",
        f"{s['migrated']} migrated to {report.target}",
        f"{s['unchanged']} already {report.target} (copied unchanged)",
        f"{s['refused']} refused",
    ]
    if s["sidecars"]:
        parts.append(f"{s['sidecars']} sidecars ({s['sidecar_rows']} rows)")
    return ", ".join(parts) + f"; report: {report.out / REPORT_NAME}"


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    show_progress = not args.no_progress and not reporter(args.format).machine and sys.stderr.isatty()
    try:
        if show_progress:
            from eee.reporting.progress import bar

            with bar("migrating") as update:
                report = export(args.paths, args.out, args.to, progress=update, store=args.store)
        else:
            report = export(args.paths, args.out, args.to, store=args.store)
    except Refused as exc:
        return refused("eee migrate", exc)

    def text() -> None:
        render(Checked(report.problems, report.units), args.format, what="record")
        print(closing_line(report))

    # json: the report itself, the same bytes json.dump(indent=2, ensure_ascii=False) wrote for it
    reporter(args.format).result_file(report.out / REPORT_NAME, text)
    return report.exit_code()
