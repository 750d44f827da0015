"""Small stores with per-sample sidecars for the analysis tests and benchmark (no git needed:
the commands take ``--store DIR``)."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parent / "examples" / "instance" / "aggregate.json"


def record_doc(model_id: str, library: str, score: float, result_id: str = "qa:exact_match") -> dict[str, Any]:
    doc = json.loads(EXAMPLE.read_text())
    doc = copy.deepcopy(doc)
    doc["model_info"]["id"] = model_id
    doc["model_info"]["name"] = model_id.split("/")[-1]
    doc["eval_library"]["name"] = library
    doc["evaluation_results"] = doc["evaluation_results"][:1]
    doc["evaluation_results"][0]["evaluation_result_id"] = result_id
    doc["evaluation_results"][0]["score_details"]["score"] = score
    return doc


def sidecar_bytes(
    model_id: str, scores: Sequence[float], ids: Sequence[str] | None = None, result_id: str = "qa:exact_match"
) -> bytes:
    ids = list(ids) if ids is not None else [f"s{i:06d}" for i in range(len(scores))]
    lines = []
    for sid, s in zip(ids, scores, strict=True):
        row = {
            "schema_version": "0.3.0",
            "evaluation_id": "x",
            "model_id": model_id,
            "evaluation_name": "qa-bench",
            "evaluation_result_id": result_id,
            "sample_id": sid,
            "interaction_type": "single_turn",
            "input": {"raw": f"question {sid}", "reference": ["a"]},
            "output": {"raw": ["a"]},
            "answer_attribution": [],
            "evaluation": {"score": float(s), "is_correct": bool(s >= 0.5)},
        }
        lines.append(json.dumps(row))
    return ("\n".join(lines) + "\n").encode()


def place(
    store: Path,
    uuid: str,
    model_id: str,
    library: str,
    scores: Sequence[float] | None,
    ids: Sequence[str] | None = None,
    benchmark: str = "qa-bench",
    pulled: bool = True,
) -> Path:
    """A record (and its sidecar unless ``scores`` is None; a DVC pointer only when not ``pulled``)."""
    developer, model = model_id.split("/")
    folder = store / "data" / benchmark / developer / model
    folder.mkdir(parents=True, exist_ok=True)
    mean = sum(scores) / len(scores) if scores else 0.5
    doc = record_doc(model_id, library, mean)
    if scores is None:
        doc.pop("detailed_evaluation_results", None)
    else:
        rel = f"data/{benchmark}/{developer}/{model}/{uuid}_samples.jsonl"
        doc["detailed_evaluation_results"]["file_path"] = rel
        data = sidecar_bytes(model_id, scores, ids)
        doc["detailed_evaluation_results"]["total_rows"] = data.count(b"\n")
        if pulled:
            (store / rel).write_bytes(data)
        else:
            md5 = hashlib.md5(data).hexdigest()
            (store / (rel + ".dvc")).write_text(
                f"outs:\n- md5: {md5}\n  size: {len(data)}\n  hash: md5\n  path: {uuid}_samples.jsonl\n"
            )
    path = folder / f"{uuid}.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def uuid_of(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-{n:012x}"
