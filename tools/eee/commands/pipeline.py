"""``eee pipeline``: the main job. Sets up what is missing, runs ``dvc repro``, says where
the results are.

Stages (dvc.yaml): validate -> report and metrics; catalog -> Parquet (partitioned by
benchmark); stats -> fill rates; analysis -> IRT and comparison pages; site -> the MkDocs build. DVC redoes only what changed since the last run.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

from eee.catalog import CATALOG_DIR
from eee.schemas import project_root

OUTPUTS = {
    "validation report": "build/validate/report.json",
    "validation metrics": "build/validate/metrics.json",
    "catalogue (Parquet)": CATALOG_DIR,
    "field fill rates": "build/stats/fill_rates.json",
    "analysis pages": "build/analysis/pages",
    "site": "build/site/index.html",
}


def _dvc(root: Path, *args: str, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    from eee.samples import dvc

    return dvc(*args, cwd=root, capture=quiet)


def local_remote(root: Path) -> Path | None:
    """The folder of the default remote when it is a local path (created if missing)."""
    config = root / ".dvc" / "config"
    if not config.exists():
        return None
    text = config.read_text()
    default = re.search(r"^\s*remote\s*=\s*(\S+)", text, re.M)
    if not default:
        return None
    section = re.search(rf"\['remote \"{re.escape(default.group(1))}\"'\]\s*\n\s*url\s*=\s*(\S+)", text)
    if not section or "://" in section.group(1):
        return None
    return (root / ".dvc" / section.group(1)).resolve()


def setup(root: Path) -> None:
    if not (root / ".dvc").is_dir():
        print("[pipeline] initialising DVC")
        _dvc(root, "init", "--quiet")
        _dvc(root, "config", "core.analytics", "false")
    remote = local_remote(root)
    if remote is not None and not remote.exists():
        remote.mkdir(parents=True)
        print(f"[pipeline] created the local DVC remote {remote}")
    for folder in ("data", "governance/events", "docs"):
        (root / folder).mkdir(parents=True, exist_ok=True)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="eee pipeline", description="Run the datastore pipeline (dvc repro) on a store.")
    p.add_argument("--root", type=Path, default=project_root(), help="the store (default: this checkout)")
    p.add_argument("--no-pull", action="store_true", help="do not fetch sidecars from the DVC remote first")
    args = p.parse_args(argv)
    root = args.root.resolve()
    setup(root)
    if not args.no_pull and any((root / "data").rglob("*.dvc")):
        pulled = _dvc(root, "pull", "--quiet", quiet=True)
        if pulled.returncode != 0:
            print("[pipeline] some sidecars could not be fetched from the DVC remote; validating without them")
    from eee.manifest import write as write_manifest

    manifest, changed = write_manifest(root)
    print(f"[pipeline] store manifest {'updated' if changed else 'unchanged'}: {manifest.relative_to(root)}")
    print("[pipeline] dvc repro")
    proc = _dvc(root, "repro")
    if proc.returncode != 0:
        print(f"[pipeline] dvc repro failed (exit {proc.returncode})")
        return 1
    metrics = root / OUTPUTS["validation metrics"]
    errors = 0
    if metrics.exists():
        m = json.loads(metrics.read_text())
        errors = m.get("errors", 0)
        print(
            f"[pipeline] {m.get('records', 0)} records, {m.get('sidecars', 0)} sidecars, {m.get('events', 0)} events: "
            f"{errors} errors, {m.get('warnings', 0)} warnings; by schema version {m.get('records_by_schema_version')}"
        )
    for label, rel in OUTPUTS.items():
        path = root / rel
        print(f"  {label:<22} {path}{'' if path.exists() else '  (missing)'}")
    if errors:
        print(f"[pipeline] the store has validation errors: see {root / OUTPUTS['validation report']}")
        return 1
    return 0
