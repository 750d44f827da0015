"""Repository checks of an aggregate record beyond its schema: scores, bounds, folders, ids."""

from __future__ import annotations

import math
from typing import Any

from eee.findings import WARNING, Finding
from eee.jsonpath import format_path
from eee.paths import StorePath, canonical_folders, sidecar_path_for

_UNBOUNDED = {"Infinity": math.inf, "-Infinity": -math.inf}


def as_float(value: Any) -> float | None:
    """A score or score limit as a float: numbers, and the strings ``"Infinity"`` and
    ``"-Infinity"`` that unbounded limits use; None for anything else (absent, null, text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return _UNBOUNDED.get(value)
    return None


def _score_ptr(i: int) -> str:
    return f"$.evaluation_results[{i}].score_details.score"


def _plausible(results: list[Any]) -> bool:
    """Fast pre-check for schema-valid results: True when no score rule can fail.

    Runs once per result of every record of a whole store, so it avoids the detailed
    walk (and its allocations) in the common case.
    """
    seen: set[str] = set()
    for result in results:
        rid = result.get("evaluation_result_id")
        if rid is not None:
            if rid in seen:
                return False
            seen.add(rid)
        config = result["metric_config"]
        lo = config.get("min_score")
        hi = config.get("max_score")
        if lo is None and hi is None:
            if config.get("score_type") == "continuous":
                return False
            continue
        if lo is None or hi is None or lo.__class__ is str or hi.__class__ is str:
            return False
        score = result["score_details"]["score"]
        if not lo <= score <= hi:
            return False
    return True


def score_findings(doc: dict[str, Any], file: str, schema_valid: bool = False) -> list[Finding]:
    out: list[Finding] = []
    results = doc.get("evaluation_results")
    if not isinstance(results, list):
        return out
    if schema_valid and _plausible(results):
        return out
    seen_ids: dict[str, int] = {}
    for i, result in enumerate(results):
        if not isinstance(result, dict):
            continue
        rid = result.get("evaluation_result_id")
        if isinstance(rid, str):
            if rid in seen_ids:
                out.append(
                    Finding(
                        file,
                        format_path(["evaluation_results", i, "evaluation_result_id"]),
                        f"evaluation_result_id {rid!r} is also used by evaluation_results[{seen_ids[rid]}]",
                        "each result needs its own id; sidecar rows use it to name their result",
                        check="results",
                    )
                )
            else:
                seen_ids[rid] = i
        config = result.get("metric_config")
        details = result.get("score_details")
        if not isinstance(config, dict) or not isinstance(details, dict):
            continue
        score = details.get("score")
        if isinstance(score, (int, float)) and not isinstance(score, bool) and not math.isfinite(score):
            out.append(
                Finding(file, _score_ptr(i), f"score {score} is not finite", "write a finite number", check="score")
            )
            continue
        lo_raw, hi_raw = config.get("min_score"), config.get("max_score")
        lo, hi = as_float(lo_raw), as_float(hi_raw)
        if config.get("score_type") == "continuous":
            for name, raw in (("min_score", lo_raw), ("max_score", hi_raw)):
                if name in config and raw is None:
                    out.append(
                        Finding(
                            file,
                            format_path(["evaluation_results", i, "metric_config", name]),
                            f"continuous metric has {name} null",
                            'a continuous metric carries both bounds: a number, or "-Infinity"/"Infinity" when unbounded',
                            check="score",
                        )
                    )
        if lo is not None and hi is not None and lo > hi:
            out.append(
                Finding(
                    file,
                    format_path(["evaluation_results", i, "metric_config"]),
                    f"min_score {lo_raw} is greater than max_score {hi_raw}",
                    "swap the bounds",
                    check="score",
                )
            )
            continue
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            continue
        if (lo is not None and score < lo) or (hi is not None and score > hi):
            lo_text = "-inf" if lo is None else lo_raw
            hi_text = "inf" if hi is None else hi_raw
            hint = "fix the score or the declared bounds"
            if hi == 1.0 and 1.0 < score <= 100.0:
                hint = "the score looks like a percentage on a 0-1 metric: divide by 100, or declare max_score 100"
            out.append(
                Finding(
                    file,
                    _score_ptr(i),
                    f"score {score} is outside the declared range [{lo_text}, {hi_text}]",
                    hint,
                    check="score",
                )
            )
    return out


def folder_findings(doc: dict[str, Any], file: str, where: StorePath, severity: str = WARNING) -> list[Finding]:
    """The <developer>/<model> folders must come from model_info.id (a warning for the
    validator; the naming hook passes ``severity=ERROR`` for records being added)."""
    info = doc.get("model_info")
    model_id = info.get("id") if isinstance(info, dict) else None
    if not isinstance(model_id, str) or where.developer is None:
        return []
    folders = canonical_folders(model_id)
    if folders is None:
        return [
            Finding(
                file,
                "$.model_info.id",
                f"model_info.id {model_id!r} has no developer part",
                "write the id as developer/model, for example meta-llama/Llama-3.1-8B; the folders come from it",
                severity=severity,
                check="naming",
            )
        ]
    if (where.developer, where.model) != folders:
        return [
            Finding(
                file,
                "$.model_info.id",
                f"folders {where.developer}/{where.model} do not match model_info.id {model_id!r}",
                f"move the record to data/{where.benchmark}/{folders[0]}/{folders[1]}/",
                severity=severity,
                check="naming",
            )
        ]
    return []


def sidecar_pointer_findings(doc: dict[str, Any], file: str, where: StorePath) -> list[Finding]:
    """``detailed_evaluation_results.file_path`` must name this record's own sidecar."""
    der = doc.get("detailed_evaluation_results")
    if not isinstance(der, dict):
        return []
    expected = sidecar_path_for(where.rel)
    file_path = der.get("file_path")
    out: list[Finding] = []
    if isinstance(file_path, str) and file_path != expected:
        problem = (
            "points outside the record's folder" if ".." in file_path.split("/") else "is not this record's sidecar"
        )
        out.append(
            Finding(
                file,
                "$.detailed_evaluation_results.file_path",
                f"file_path {file_path!r} {problem}",
                f"the sidecar shares the record's uuid and folder: {expected}",
                check="sidecar",
            )
        )
    fmt = der.get("format")
    if isinstance(fmt, str) and fmt != "jsonl":
        out.append(
            Finding(
                file,
                "$.detailed_evaluation_results.format",
                f"format {fmt!r}: the store keeps per-sample results as JSON Lines",
                "convert the file to JSON Lines and set format to 'jsonl'",
                check="sidecar",
            )
        )
    return out
