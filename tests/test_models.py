"""The pydantic models are generated from the current schema and must not drift from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import EXAMPLES
from eee.models.generate import MODELS_DIR, generate


def test_models_match_a_fresh_generation(tmp_path: Path) -> None:
    for fresh in generate(tmp_path):
        committed = MODELS_DIR / fresh.name
        assert committed.exists(), f"{committed.name} is missing: run `python tools/dev.py models`"
        assert fresh.read_text() == committed.read_text(), (
            f"{committed.name} drifted from the schema: run `python tools/dev.py models` and commit the result"
        )


@pytest.mark.parametrize(
    "example", sorted((EXAMPLES / "aggregate" / "valid").glob("v0.3.0*.json")), ids=lambda p: p.stem
)
def test_models_read_current_records(example: Path) -> None:
    from eee.models import EvaluationRecord

    record = EvaluationRecord.model_validate_json(example.read_bytes())
    doc = json.loads(example.read_text())
    assert record.model_info.id == doc["model_info"]["id"]
    assert record.evaluation_results[0].score_details.score == doc["evaluation_results"][0]["score_details"]["score"]


def test_models_read_current_rows() -> None:
    from eee.models import InstanceLevelRow

    lines = (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_text().splitlines()
    kinds = [InstanceLevelRow.model_validate_json(line).interaction_type.value for line in lines]
    assert kinds == ["single_turn", "multi_turn", "agentic"]


def test_models_are_not_the_validator() -> None:
    """Why the schema stays the source of truth: the models coerce what the schema rejects."""
    from eee.models import EvaluationRecord
    from eee.store.schemas import Registry

    doc = json.loads((EXAMPLES / "aggregate" / "invalid" / "score_as_string.json").read_text())
    assert EvaluationRecord.model_validate(doc).evaluation_results[0].score_details.score == 8.79
    assert not Registry.load().validator("0.3.0", "eval").is_valid(doc)
