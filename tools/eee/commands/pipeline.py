"""``eee pipeline``: the main job. Validates the whole store and writes the report.

(The DVC pipeline takes this over once ``dvc.yaml`` exists.)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eee.report import summary_line, to_json
from eee.schemas import project_root
from eee.validate import run


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="eee pipeline", description="Run the datastore pipeline on this checkout.")
    p.add_argument("--root", type=Path, default=project_root(), help="the store (default: this checkout)")
    args = p.parse_args(argv)
    root: Path = args.root
    data = root / "data"
    out = root / "build" / "validate"
    out.mkdir(parents=True, exist_ok=True)
    summary = run([str(data)] if data.is_dir() else [])
    report = out / "report.json"
    report.write_text(json.dumps(to_json(summary), indent=2) + "\n", encoding="utf-8")
    print(summary_line(summary, "file"))
    print(f"report: {report}")
    return 1 if summary.errors else 0
