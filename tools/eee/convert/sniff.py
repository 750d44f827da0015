"""Which harness wrote a file: what ``eee convert`` says when a converter is refused a file
that another converter reads (``eee convert lm_eval`` given lighteval's results names
``eee convert lighteval``).

Only asked after a refusal, and only of what the refused path holds: a file's first bytes
and, for JSON, its top-level keys (read within the log cap, :func:`eee.convert.common.read_log_bytes`);
a folder's few names. A shape no converter knows gives None: the refusal stands as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# harness -> what its output is, as a sentence names it
WHAT = {
    "helm": "a HELM run directory",
    "lm_eval": "lm-evaluation-harness results",
    "inspect": "an Inspect AI log",
    "lighteval": "lighteval results",
    "alpaca_eval": "AlpacaEval output",
    "table": "a results table",
}
_FOLDER_NAMES = 200  # names of a folder looked at


def harness_of(path: Path) -> str | None:
    """The converter that reads ``path`` (a file or folder), or None when it is like none."""
    try:
        if path.is_dir():
            return _folder(path)
        if path.is_file():
            return _file(path)
    except OSError:
        return None
    return None


def _folder(path: Path) -> str | None:
    names: list[str] = []
    for i, entry in enumerate(path.iterdir()):
        if i >= _FOLDER_NAMES:
            break
        names.append(entry.name)
    if "run_spec.json" in names or any((path / n / "run_spec.json").is_file() for n in names[:50]):
        return "helm"
    if "annotations.json" in names and "leaderboard.csv" in names:
        return "alpaca_eval"
    if any(n.endswith(".eval") for n in names):
        return "inspect"
    found = next((p for p in path.rglob("results_*.json") if p.is_file()), None)
    return _file(found) if found is not None else None


def _file(path: Path) -> str | None:
    name = path.name
    if name == "run_spec.json" or name in ("scenario_state.json", "per_instance_stats.json"):
        return "helm"
    with path.open("rb") as fh:
        head = fh.read(4096)
    if head.startswith(b"PK\x03\x04") and name.endswith(".eval"):
        return "inspect"
    if name.endswith((".csv", ".tsv")):
        first = head.split(b"\n", 1)[0].decode("utf-8", "replace")
        columns = {c.strip() for c in first.split("\t" if name.endswith(".tsv") else ",")}
        if "win_rate" in columns and ({"length_controlled_winrate", "n_wins", "discrete_win_rate"} & columns):
            return "alpaca_eval"
        return "table"
    if not name.endswith(".json"):
        return None
    doc = _json(path)
    if isinstance(doc, dict):
        keys = set(doc)
        if {"config_general", "results"} <= keys:
            return "lighteval"
        if "results" in keys and keys & {"configs", "n-shot", "n-samples", "group_subtasks", "higher_is_better"}:
            return "lm_eval"
        if "eval" in keys and keys & {"version", "status", "samples", "results", "plan"}:
            return "inspect"
        if keys & {"adapter_spec", "scenario_spec"}:
            return "helm"
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        first = doc[0]
        if {"instruction", "output_1", "output_2"} <= set(first) or "preference" in first:
            return "alpaca_eval"
        return "table"
    return None


def _json(path: Path) -> Any:
    from eee.convert.common import read_log_bytes
    from eee.reporting.findings import Refused

    try:
        import orjson

        return orjson.loads(read_log_bytes(path))
    except (Refused, ValueError, OSError):
        return None


def hint_for(path: Path, harness: str) -> tuple[str, str] | None:
    """(message, hint) when ``path`` is another converter's: what it is and the command that
    converts it; None when it is this ``harness``'s or like none."""
    other = harness_of(path)
    if other is None or other == harness:
        return None
    from eee.reporting.shown import command

    shown = command("convert", other, *(["--mapping", "MAPPING.yaml"] if other == "table" else []), path)
    return (
        f"this looks like {WHAT[other]}, which `eee convert {other}` reads, not {harness}",
        f"convert it with `{shown}`",
    )
