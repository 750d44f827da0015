"""The lm-evaluation-harness converter on a tiny results + samples pair written here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES
from eee.convert import lm_eval
from eee.convert.common import Batch, Converted, InputError, Settings, plan, validate_planned

LOGS = EXAMPLES / "harness" / "lm_eval"
RESULTS = LOGS / "results_2025-02-03T04-05-06.789012.json"


def convert(path: Path = LOGS, include_samples: bool = True) -> Batch:
    return lm_eval.convert(path, Settings(include_samples=include_samples))


def task(batch: Batch, name: str) -> Converted:
    return next(o for o in batch.outputs if o.benchmark == name)


def results_by_id(out: Converted) -> dict[str, dict[str, Any]]:
    return {r["evaluation_result_id"]: r for r in out.record["evaluation_results"]}


def test_one_record_per_task_with_numeric_metrics() -> None:
    batch = convert()
    assert [o.benchmark for o in batch.outputs] == ["tiny_mc", "tiny_gen", "tiny_nosamples"]  # no group header
    errors, warnings = validate_planned(plan(batch))
    assert not errors and not warnings, [f.one_line() for f in errors + warnings]


def test_metric_filter_keys_are_split_and_stderr_is_the_standard_error() -> None:
    by_id = results_by_id(task(convert(), "tiny_gen"))
    assert sorted(by_id) == ["exact_match:flexible-extract", "exact_match:strict-match"]
    strict = by_id["exact_match:strict-match"]
    assert strict["evaluation_name"] == "tiny_gen"
    assert strict["metric_config"]["metric_name"] == "exact_match"
    assert strict["metric_config"]["metric_id"] == "exact-match"
    assert strict["metric_config"]["evaluation_description"] == "exact_match (filter: strict-match)"
    assert strict["metric_config"]["additional_details"]["filter"] == "strict-match"
    assert strict["score_details"] == {
        "score": 0.5,
        "uncertainty": {"standard_error": {"value": 0.5, "method": "analytic"}, "num_samples": 2},
    }
    assert by_id["exact_match:flexible-extract"]["score_details"]["score"] == 1.0


def test_direction_comes_from_higher_is_better_and_na_stderr_is_dropped() -> None:
    by_id = results_by_id(task(convert(), "tiny_mc"))
    assert by_id["acc"]["metric_config"]["lower_is_better"] is False
    assert by_id["acc_norm"]["metric_config"]["metric_id"] == "normalized-accuracy"
    brier = by_id["brier_score"]
    assert brier["metric_config"]["lower_is_better"] is True
    assert "standard_error" not in brier["score_details"]["uncertainty"]  # lm-eval wrote "N/A"
    assert brier["metric_config"]["max_score"] == 2.0


def test_generation_kwargs_and_few_shot() -> None:
    batch = convert()
    gen = task(batch, "tiny_gen").record["evaluation_results"][0]["generation_config"]
    assert gen["generation_args"] == {"temperature": 0.0, "max_tokens": 64}  # a temperature of 0 stays 0
    assert gen["additional_details"] == {
        "until": json.dumps(["Question:", "\n\n"]),
        "do_sample": "false",
        "num_fewshot": "2",
    }
    mc = task(batch, "tiny_mc").record["evaluation_results"][0]["generation_config"]
    assert mc == {"additional_details": {"num_fewshot": "0"}}


def test_model_and_source() -> None:
    batch = convert()
    out = task(batch, "tiny_mc")
    info = out.record["model_info"]
    assert info["id"] == "acme/tiny-lm" and info["inference_engine"] == {"name": "transformers"}
    assert info["additional_details"]["deployment_type"] == "self_deployed"
    assert info["additional_details"]["dtype"] == "torch.float16"
    assert out.record["eval_library"] == {"name": "lm_eval", "version": "0.4.9"}
    source = out.record["evaluation_results"][0]["source_data"]
    assert source == {
        "dataset_name": "tiny_mc",
        "source_type": "hf_dataset",
        "hf_repo": "acme/tiny_mc",
        "hf_split": "test",
        "additional_details": {"hf_subset": "easy"},
    }
    local = task(batch, "tiny_nosamples").record["evaluation_results"][0]["source_data"]
    assert local["source_type"] == "other"


def test_ids_and_times_come_from_the_log(monkeypatch: pytest.MonkeyPatch) -> None:
    first = task(convert(), "tiny_mc").record
    monkeypatch.setattr("time.time", lambda: 4102444800.0)
    again = task(convert(), "tiny_mc").record
    assert first["evaluation_id"] == again["evaluation_id"] == "tiny_mc/acme_tiny-lm/1738555506"
    assert first["evaluation_timestamp"] == "1738555506"
    assert first["retrieved_timestamp"] == again["retrieved_timestamp"] == "1738555519"  # date + evaluation time


def test_multiple_choice_answer_is_the_highest_log_likelihood() -> None:
    out = task(convert(), "tiny_mc")
    rows = out.rows
    assert rows is not None
    assert [(r["sample_id"], r["evaluation_result_id"]) for r in rows] == [
        ("0", "acc"),
        ("0", "acc_norm"),
        ("1", "acc"),
        ("1", "acc_norm"),
    ]  # one row per metric; brier_score has no per-sample number
    first = rows[0]
    assert first["input"]["choices"] == ["green", "blue", "red"]
    assert first["input"]["reference"] == ["blue"]  # the gold index resolved to its option
    assert first["output"]["raw"] == ["blue"]
    assert first["evaluation"]["score"] == 1.0 and first["evaluation"]["is_correct"] is True
    assert rows[2]["output"]["raw"] == ["100 C"]


def test_filtered_rows_keep_the_response_and_the_extracted_answer() -> None:
    rows = task(convert(), "tiny_gen").rows
    assert rows is not None and len(rows) == 4
    strict = rows[0]
    assert strict["evaluation_result_id"] == "exact_match:strict-match"
    assert strict["output"]["raw"] == [" The answer is 4."]
    assert strict["answer_attribution"][0]["extracted_value"] == "[invalid]"
    assert strict["answer_attribution"][0]["extraction_method"] == "strict-match"
    assert strict["evaluation"]["is_correct"] is False
    flexible = rows[2]
    assert flexible["evaluation_result_id"] == "exact_match:flexible-extract"
    assert flexible["answer_attribution"][0]["extracted_value"] == "4"
    assert flexible["evaluation"]["score"] == 1.0


def test_a_task_without_samples_file_is_reported_not_fatal() -> None:
    batch = convert()
    assert [w.pointer for w in batch.warnings] == ["$.results.tiny_nosamples"]
    assert "samples_tiny_nosamples_2025-02-03T04-05-06.789012.jsonl" in batch.warnings[0].message
    assert task(batch, "tiny_nosamples").rows is None
    assert task(batch, "tiny_mc").rows and task(batch, "tiny_gen").rows


def test_without_include_samples_nothing_is_missing() -> None:
    batch = convert(include_samples=False)
    assert not batch.warnings and all(o.rows is None for o in batch.outputs)


def test_samples_of_another_run_are_not_used(tmp_path: Path) -> None:
    shutil.copy(RESULTS, tmp_path / RESULTS.name)
    shutil.copy(
        LOGS / "samples_tiny_mc_2025-02-03T04-05-06.789012.jsonl", tmp_path / "samples_tiny_mc_2024-01-01.jsonl"
    )
    batch = convert(tmp_path)
    assert task(batch, "tiny_mc").rows is None
    assert len(batch.warnings) == 3


@pytest.mark.parametrize(
    ("change", "pointer", "message"),
    [
        (lambda d: d.pop("date"), "$.date", "missing or not a number"),
        (lambda d: d.pop("results"), "$.results", "missing field 'results'"),
        (lambda d: d.update(results={"t": {"alias": "t"}}), "$.results", "no task with a numeric metric"),
        (
            lambda d: d["config"].update(model_args="dtype=float16") or d.pop("model_name"),
            "$.config.model_args",
            "no model",
        ),
    ],
)
def test_malformed_results_name_the_field(tmp_path: Path, change: Any, pointer: str, message: str) -> None:
    doc = json.loads(RESULTS.read_text())
    change(doc)
    path = tmp_path / RESULTS.name
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        convert(path)
    assert info.value.finding.file.endswith(RESULTS.name)
    assert info.value.finding.pointer == pointer
    assert message in info.value.finding.message


def test_model_without_developer_needs_model_id(tmp_path: Path) -> None:
    doc = json.loads(RESULTS.read_text())
    doc["config"]["model_args"] = "pretrained=gpt2"
    path = tmp_path / RESULTS.name
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        convert(path, include_samples=False)
    assert "--model-id" in (info.value.finding.hint or "")
    batch = lm_eval.convert(path, Settings(model_id="openai-community/gpt2"))
    assert batch.outputs[0].record["model_info"]["id"] == "openai-community/gpt2"
    assert batch.outputs[0].record["model_info"]["name"] == "gpt2"


def test_damaged_samples_line_names_file_and_line(tmp_path: Path) -> None:
    for path in LOGS.iterdir():
        shutil.copy(path, tmp_path / path.name)
    samples = tmp_path / "samples_tiny_gen_2025-02-03T04-05-06.789012.jsonl"
    samples.write_text(samples.read_text() + '{"doc_id": \n')
    with pytest.raises(InputError) as info:
        convert(tmp_path)
    assert info.value.finding.file.endswith(f"{samples.name}:5")
