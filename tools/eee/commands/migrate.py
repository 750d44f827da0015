"""``eee migrate --to VERSION PATH... --out DIR``: write migrated copies of records elsewhere.

Exit 0 when every record migrated (or was at the target already), 1 when any was refused
(the others are still written) or the run was refused as a whole (a missing input, an
output inside data/: nothing is written), 64 for a usage error such as an unknown
``--to`` version (nothing is written).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

from eee.commands import EXIT_CODES_TEXT, EXIT_USAGE, Parser, refused
from eee.migrate.export import export
from eee.migrate.report import REPORT_NAME, ExportReport
from eee.reporting.findings import FileResult, Refused, Summary
from eee.reporting.reporters import FORMATS, render


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        "eee migrate",
        "Write copies of EEE records (and their sidecars) migrated to a schema version, in the store's layout "
        "under DIR, with a report (DIR/migration-report.json). Records under data/ are never rewritten.",
        epilog=EXIT_CODES_TEXT + "; 1 also when some records were refused (the others are written)",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="records, sidecars, directories (recursive) or globs")
    p.add_argument("--to", metavar="VERSION", help="target schema version (default: the current one)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder (outside any data/)")
    p.add_argument("--format", choices=FORMATS, default="rich", help="output format (default: rich)")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    return p


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
    p = build_parser()
    args = p.parse_args(argv)
    if args.to is not None:
        from eee.migrate.chain import target_version
        from eee.store.schemas import default_registry

        try:
            target_version(args.to, default_registry())
        except ValueError as exc:
            p.print_usage(sys.stderr)
            print(f"eee migrate: error: --to: {exc}", file=sys.stderr)
            return EXIT_USAGE
    show_progress = not args.no_progress and args.format != "json" and sys.stderr.isatty()
    try:
        if show_progress:
            from eee.reporting.progress import bar

            with bar("migrating") as update:
                report = export(args.paths, args.out, args.to, progress=update)
        else:
            report = export(args.paths, args.out, args.to)
    except Refused as exc:
        return refused("eee migrate", exc)
    if args.format == "json":
        # the report itself: the same bytes json.dump(indent=2, ensure_ascii=False) writes for it
        with open(report.out / REPORT_NAME, "rb") as fh:
            buffer = getattr(sys.stdout, "buffer", None)
            if buffer is not None:
                sys.stdout.flush()
                shutil.copyfileobj(fh, buffer)
                buffer.flush()
            else:
                sys.stdout.write(fh.read().decode("utf-8"))
    else:
        render(Checked(report.problems, report.units), args.format, what="record")
        print(closing_line(report))
    return report.exit_code()
