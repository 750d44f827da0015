"""The HELM converter on a tiny run directory written here (tests/examples/harness/helm)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES
from eee.convert import helm
from eee.convert.common import Converted, InputError, Settings, plan, validate_planned

RUN = EXAMPLES / "harness" / "helm" / "mmlu-subject=anatomy,method=multiple_choice_joint,model=acme_tiny-lm"


def convert(path: Path = RUN, include_samples: bool = True) -> Converted:
    batch = helm.convert(path, Settings(include_samples=include_samples))
    assert len(batch.outputs) == 1
    return batch.outputs[0]


def results_by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["evaluation_result_id"]: r for r in doc["evaluation_results"]}


def test_record_and_rows_validate() -> None:
    batch = helm.convert(RUN, Settings(include_samples=True))
    errors, warnings = validate_planned(plan(batch))
    assert not errors and not warnings, [f.one_line() for f in errors + warnings]
    assert batch.outputs[0].benchmark == "mmlu"  # the dataset name comes from scenario.json


def test_model_identity_and_platform_from_the_run_spec() -> None:
    info = convert().record["model_info"]
    assert info["id"] == "acme/tiny-lm" and info["developer"] == "acme"
    assert info["inference_platform"] == "huggingface"
    assert info["additional_details"]["deployment_type"] == "self_deployed"  # HELM's huggingface client runs locally


def test_temperature_zero_stays_zero() -> None:
    for result in convert().record["evaluation_results"]:
        args = result["generation_config"]["generation_args"]
        assert "temperature" in args and args["temperature"] == 0.0
        assert args["max_tokens"] == 1 and args["top_p"] == 1.0


def test_top_k_per_token_is_not_top_k_sampling() -> None:
    config = convert().record["evaluation_results"][0]["generation_config"]
    assert "top_k" not in config["generation_args"]
    assert config["additional_details"]["top_k_per_token"] == "5"
    assert config["additional_details"]["adapter_method"] == "multiple_choice_joint"


def test_split_and_perturbation_make_every_result_distinguishable() -> None:
    results = convert().record["evaluation_results"]
    ids = [r["evaluation_result_id"] for r in results]
    assert ids == [
        "exact_match:test",
        "exact_match@5:test",
        "exact_match:valid",
        "exact_match@5:valid",
        "exact_match:test:robustness",
        "exact_match:test:fairness",
        "exact_match:test:typos/perturbed",
        "exact_match:test:typos",
    ]
    seen = set()
    for r in results:
        d = r["score_details"]["details"]
        key = (r["metric_config"]["metric_name"], d["split"], d["perturbation"], d.get("perturbation_computed_on"))
        assert key not in seen, f"{r['evaluation_result_id']} looks like another result"
        seen.add(key)
    by_id = results_by_id(convert().record)
    assert (
        by_id["exact_match:test:typos/perturbed"]["score_details"]["details"]["perturbation_computed_on"] == "perturbed"
    )
    assert by_id["exact_match:test:typos"]["score_details"]["details"]["perturbation_computed_on"] == "worst"
    assert by_id["exact_match:valid"]["score_details"]["details"] == {
        "num_train_trials": "1",
        "stddev_across_train_trials": "0.0",
        "split": "valid",
        "perturbation": "",
    }


def test_scores_counts_and_metric_configs() -> None:
    by_id = results_by_id(convert().record)
    test, valid = by_id["exact_match:test"], by_id["exact_match:valid"]
    assert test["score_details"]["score"] == 0.5 and valid["score_details"]["score"] == 1.0
    assert test["score_details"]["uncertainty"] == {"num_samples": 2}  # instances of the split, not trials
    assert valid["score_details"]["uncertainty"] == {"num_samples": 1}
    assert test["metric_config"]["metric_id"] == "exact-match"
    at5 = by_id["exact_match@5:test"]["metric_config"]
    assert at5["metric_id"] == "helm.exact_match@5" and at5["metric_parameters"] == {"k": 5.0}
    assert at5["min_score"] == 0.0 and at5["max_score"] == 1.0
    assert "num_prompt_tokens" not in {r["metric_config"]["metric_name"] for r in by_id.values()}


def test_evaluation_time_is_the_earliest_request_and_the_id_is_deterministic() -> None:
    doc = convert().record
    assert doc["evaluation_timestamp"] == "1700000050"
    assert doc["evaluation_id"] == "mmlu/acme_tiny-lm/1700000050"
    assert doc["retrieved_timestamp"] == "1700000200"  # the log's latest request, not the clock
    assert convert().record == doc


def test_one_row_per_instance_and_metric() -> None:
    out = convert()
    rows = out.rows
    assert rows is not None and len(rows) == 6
    ids = {r["evaluation_result_id"] for r in out.record["evaluation_results"]}
    assert {r["evaluation_result_id"] for r in rows} <= ids
    assert {(r["sample_id"], r["evaluation_result_id"]) for r in rows} == {
        ("id1", "exact_match:test"),
        ("id1", "exact_match@5:test"),
        ("id2", "exact_match:test"),
        ("id2", "exact_match@5:test"),
        ("id3", "exact_match:valid"),
        ("id3", "exact_match@5:valid"),
    }
    row = next(r for r in rows if r["sample_id"] == "id2" and r["evaluation_result_id"] == "exact_match:test")
    assert row["evaluation_id"] == out.record["evaluation_id"] and row["model_id"] == "acme/tiny-lm"
    assert row["input"]["raw"] == "Which organ pumps blood?"
    assert row["input"]["formatted"].endswith("C. heart\nAnswer:")
    assert row["input"]["reference"] == ["heart"]
    assert row["input"]["choices"] == ["lung", "liver", "heart"]
    assert row["output"]["raw"] == [" A"]
    assert row["answer_attribution"][0]["extracted_value"] == "A"
    assert row["evaluation"]["score"] == 0.0 and row["evaluation"]["is_correct"] is False
    assert row["token_usage"]["input_tokens"] == 40 + len("Which organ pumps blood?")
    assert row["token_usage"]["output_tokens"] == 1
    assert row["performance"]["latency_ms"] == 500.0
    right = next(r for r in rows if r["sample_id"] == "id1" and r["evaluation_result_id"] == "exact_match:test")
    assert right["evaluation"] == {"score": 1.0, "is_correct": True, "num_turns": None, "tool_calls_count": None}


def test_no_rows_without_include_samples() -> None:
    assert convert(include_samples=False).rows is None


def test_without_stats_json_the_scores_come_from_the_per_instance_stats(tmp_path: Path) -> None:
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    (run / "stats.json").unlink()
    by_id = results_by_id(convert(run).record)
    assert sorted(by_id) == ["exact_match:test", "exact_match:valid", "exact_match@5:test", "exact_match@5:valid"]
    assert by_id["exact_match:test"]["score_details"]["score"] == 0.5
    assert by_id["exact_match:valid"]["score_details"]["details"]["num_train_trials"] == "1"


def test_a_folder_of_runs(tmp_path: Path) -> None:
    for name in ("a", "b"):
        shutil.copytree(RUN, tmp_path / "runs" / name)
    batch = helm.convert(tmp_path / "runs", Settings())
    assert len(batch.outputs) == 2


def test_missing_file_is_named(tmp_path: Path) -> None:
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    (run / "scenario_state.json").unlink()
    with pytest.raises(InputError) as info:
        convert(run)
    finding = info.value.finding
    assert finding.file.endswith("scenario_state.json") and finding.pointer == "$"
    assert finding.message == "file not found" and "run_spec.json" in (finding.hint or "")


@pytest.mark.parametrize(
    ("name", "doc", "pointer", "message"),
    [
        ("scenario_state.json", {"adapter_spec": {}}, "$.request_states", "missing field 'request_states'"),
        ("run_spec.json", {"name": "x", "adapter_spec": {"model": 7}}, "$.adapter_spec.model", "expected a string"),
        ("per_instance_stats.json", [{"instance_id": "id1"}], "$[0].stats", "missing field 'stats'"),
    ],
)
def test_malformed_field_is_named(tmp_path: Path, name: str, doc: Any, pointer: str, message: str) -> None:
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    (run / name).write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        convert(run)
    assert info.value.finding.file.endswith(name)
    assert info.value.finding.pointer == pointer
    assert message in info.value.finding.message


def test_damaged_json_is_named(tmp_path: Path) -> None:
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    (run / "stats.json").write_text('[{"name": ')
    with pytest.raises(InputError) as info:
        convert(run)
    assert info.value.finding.file.endswith("stats.json")
    assert "truncated" in info.value.finding.message


def test_no_run_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        helm.convert(tmp_path, Settings())
    assert "no HELM run directory" in info.value.finding.message
