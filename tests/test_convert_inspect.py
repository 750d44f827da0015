"""The Inspect AI converter on a tiny log written here, as .json and as the .eval zip archive."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES
from eee.convert import inspect
from eee.convert.common import Converted, InputError, Settings, plan, validate_planned

LOG = EXAMPLES / "harness" / "inspect" / "tiny_qa.json"
ARCHIVE = EXAMPLES / "harness" / "inspect" / "tiny_qa.eval"


def convert(path: Path = LOG) -> Converted:
    batch = inspect.convert(path, Settings(include_samples=True))
    assert len(batch.outputs) == 1 and not batch.warnings
    return batch.outputs[0]


def rows_of(sample_id: str, out: Converted | None = None) -> list[dict[str, Any]]:
    rows = (out or convert()).rows or []
    return [r for r in rows if r["sample_id"] == sample_id]


def test_record_and_rows_validate() -> None:
    batch = inspect.convert(LOG, Settings(include_samples=True))
    errors, warnings = validate_planned(plan(batch))
    assert not errors and not warnings, [f.one_line() for f in errors + warnings]


def test_eval_archive_reads_like_the_json_log() -> None:
    assert zipfile.is_zipfile(ARCHIVE)
    from_json, from_zip = convert(LOG), convert(ARCHIVE)
    assert from_zip.record == from_json.record
    assert from_zip.rows == from_json.rows  # samples in the log's order, not the archive's


@pytest.mark.parametrize(
    ("path", "served", "model_id", "platform", "engine"),
    [
        (
            "together/meta-llama/Llama-3.1-8B-Instruct-Turbo",
            None,
            "meta-llama/Llama-3.1-8B-Instruct-Turbo",
            "together",
            None,
        ),
        ("openrouter/anthropic/claude-3.5-sonnet", None, "anthropic/claude-3.5-sonnet", "openrouter", None),
        ("openai/azure/gpt-4o-mini", "gpt-4o-mini-2024-07-18", "openai/gpt-4o-mini-2024-07-18", "azure", None),
        (
            "anthropic/claude-sonnet-4-0",
            "claude-sonnet-4-20250514",
            "anthropic/claude-sonnet-4-20250514",
            "anthropic",
            None,
        ),
        ("anthropic/claude-opus-4-6", "anthropic/claude-opus-4-6", "anthropic/claude-opus-4-6", "anthropic", None),
        ("anthropic/anthropic/claude-opus-4-6", None, "anthropic/claude-opus-4-6", "anthropic", None),
        ("anthropic/bedrock/claude-3-haiku", None, "anthropic/claude-3-haiku", "bedrock", None),
        ("google/vertex/gemini-1.5-pro", None, "google/gemini-1.5-pro", "vertex", None),
        ("mistral/mistral-small-latest", "mistral-small-latest", "mistral/mistral-small-latest", "mistral", None),
        ("ollama/qwen2.5:0.5b", "qwen2.5:0.5b", "Qwen/qwen2.5-0.5b", None, "ollama"),
        ("ollama/llama3.1:8b", None, "meta-llama/llama3.1-8b", None, "ollama"),
        ("ollama/mystery:1b", None, "ollama/mystery-1b", None, "ollama"),
        ("vllm/meta-llama/Llama-3.1-8B", None, "meta-llama/Llama-3.1-8B", None, "vllm"),
        ("hf/Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B", None, "hf"),
    ],
)
def test_provider_prefixed_model_paths_are_normalised(
    path: str, served: str | None, model_id: str, platform: str | None, engine: str | None
) -> None:
    facts = inspect.normalise_model(path, served)
    assert (facts["id"], facts["platform"], facts["engine"]) == (model_id, platform, engine)


def test_model_info_of_the_log() -> None:
    info = convert().record["model_info"]
    assert info["id"] == "meta-llama/Llama-3.1-8B-Instruct-Turbo" and info["developer"] == "meta-llama"
    assert info["inference_platform"] == "together"
    assert info["name"] == "together/meta-llama/Llama-3.1-8B-Instruct-Turbo"
    assert info["additional_details"]["deployment_type"] == "externally_managed"


def test_scorers_become_results_with_their_standard_error() -> None:
    doc = convert().record
    by_id = {r["evaluation_result_id"]: r for r in doc["evaluation_results"]}
    assert sorted(by_id) == ["match:accuracy", "model_graded_qa:accuracy"]
    match = by_id["match:accuracy"]
    assert match["score_details"]["uncertainty"] == {
        "standard_error": {"value": 0.3333333333333333, "method": "analytic"},
        "num_samples": 3,
    }
    assert match["evaluation_name"] == "tiny_qa" and match["source_data"]["hf_repo"] == "acme/tiny_qa"
    assert "llm_scoring" not in match["metric_config"]
    assert doc["eval_library"]["name"] == "inspect_ai" and doc["eval_library"]["version"] == "0.3.100"


def test_llm_judge_context_goes_into_llm_scoring() -> None:
    doc = convert().record
    judged = next(r for r in doc["evaluation_results"] if r["evaluation_result_id"] == "model_graded_qa:accuracy")
    scoring = judged["metric_config"]["llm_scoring"]
    assert [j["model_info"]["id"] for j in scoring["judges"]] == ["openai/gpt-4o"]
    assert scoring["judges"][0]["model_info"]["additional_details"]["model_availability"] == "closed_weights"
    assert scoring["input_prompt"] == "Grade the answer {answer} to {question}."
    assert scoring["additional_details"] == {"grade_pattern": "GRADE: ([CI])"}
    row = next(r for r in rows_of("1") if r["evaluation_result_id"] == "model_graded_qa:accuracy")
    assert row["answer_attribution"][0]["extraction_method"] == "llm_judge"


def test_generation_settings_plan_tools_limits_and_sandbox() -> None:
    args = convert().record["evaluation_results"][0]["generation_config"]["generation_args"]
    assert args["temperature"] == 0.0 and args["max_tokens"] == 256
    assert args["agentic_eval_config"]["available_tools"] == [
        {"name": "bash", "description": "Run a bash command.", "parameters": {"timeout": "30"}}
    ]
    assert json.loads(args["eval_plan"]["steps"][1]) == {"solver": "generate", "params": {}, "params_passed": {}}
    assert args["eval_limits"] == {"message_limit": 10}
    assert args["sandbox"] == {"type": "docker", "config": "compose.yaml"}


def test_interaction_type_is_inferred_per_sample() -> None:
    out = convert()
    assert len(out.rows or []) == 6  # three samples, two scorers
    kinds = {r["sample_id"]: r["interaction_type"] for r in out.rows or []}
    assert kinds == {"1": "single_turn", "2": "multi_turn", "3": "agentic"}

    single = rows_of("1", out)[0]
    assert single["messages"] is None and single["output"]["raw"] == ["ANSWER: B"]
    assert single["input"]["formatted"].startswith("Answer with a letter.")
    assert single["evaluation"] == {"score": 1.0, "is_correct": True, "num_turns": 1, "tool_calls_count": 0}

    multi = rows_of("2", out)[0]
    assert multi["output"] is None and [m["role"] for m in multi["messages"]] == ["user", "assistant"] * 2
    assert multi["messages"][3]["reasoning_trace"] == "They want a second colour."
    assert multi["answer_attribution"][0]["source"] == "messages[3].content"
    assert multi["evaluation"]["is_correct"] is False


def test_agentic_messages_keep_their_tool_calls() -> None:
    row = rows_of("3")[0]
    messages = row["messages"]
    call = messages[2]
    assert call["role"] == "assistant" and call["content"] is None
    assert call["tool_calls"] == [{"id": "call_1", "name": "bash", "arguments": {"cmd": "ls", "timeout": "30"}}]
    assert messages[3]["role"] == "tool" and messages[3]["tool_call_id"] == ["call_1"]
    assert row["evaluation"]["tool_calls_count"] == 1 and row["evaluation"]["num_turns"] == 5
    assert row["token_usage"]["total_tokens"] == 150  # every model call of the sample, not only the last
    assert row["performance"]["latency_ms"] == 3000.0 and row["performance"]["generation_time_ms"] == 2500.0
    assert row["metadata"] == {"stop_reason": "stop", "epoch": "1", "difficulty": "2"}


def test_ids_come_from_the_log() -> None:
    doc = convert().record
    assert doc["evaluation_id"] == "tiny_qa/meta-llama_Llama-3.1-8B-Instruct-Turbo/1741064768.0"
    assert doc["retrieved_timestamp"] == "1741064829.0"  # stats.completed_at
    assert convert().record == doc


def _write_log(tmp_path: Path, change: Any) -> Path:
    doc = json.loads(LOG.read_text())
    change(doc)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("change", "pointer", "message"),
    [
        (lambda d: d["eval"].pop("model"), "$.eval.model", "missing field 'model'"),
        (lambda d: d.pop("eval"), "$.eval", "not an Inspect log"),
        (lambda d: d.update(status="error"), "$.status", "did not complete"),
        (lambda d: d["results"].update(scores={}), "$.results.scores", "expected an array"),
        (lambda d: d["stats"].update(started_at="yesterday"), "$.stats.started_at", "not an ISO 8601 timestamp"),
    ],
)
def test_malformed_log_names_file_and_field(tmp_path: Path, change: Any, pointer: str, message: str) -> None:
    path = _write_log(tmp_path, change)
    with pytest.raises(InputError) as info:
        convert(path)
    assert info.value.finding.file.endswith("log.json")
    assert info.value.finding.pointer == pointer
    assert message in info.value.finding.message


def test_eval_archive_without_header(tmp_path: Path) -> None:
    path = tmp_path / "broken.eval"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("samples/1_epoch_1.json", "{}")
    with pytest.raises(InputError) as info:
        convert(path)
    assert info.value.finding.file.endswith("broken.eval!header.json")
    assert "missing from the archive" in info.value.finding.message


def test_damaged_eval_archive(tmp_path: Path) -> None:
    path = tmp_path / "broken.eval"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputError) as info:
        convert(path)
    assert "not a readable .eval archive" in info.value.finding.message


def test_a_folder_of_logs_skips_inspect_s_listing(tmp_path: Path) -> None:
    shutil.copy(LOG, tmp_path / "a.json")
    shutil.copy(ARCHIVE, tmp_path / "b.eval")
    (tmp_path / "logs.json").write_text("{}")
    batch = inspect.convert(tmp_path, Settings())
    assert len(batch.outputs) == 2


def test_unscored_sample_is_not_correct(tmp_path: Path) -> None:
    def drop_scores(doc: dict[str, Any]) -> None:
        doc["samples"][0]["scores"] = {}
        doc["samples"][0]["error"] = {"message": "RuntimeError('sandbox')", "traceback": "Traceback ..."}

    out = convert(_write_log(tmp_path, drop_scores))
    row = rows_of("1", out)[0]
    assert row["evaluation"]["score"] == 0.0 and row["evaluation"]["is_correct"] is False
    assert row["evaluation_result_id"] == "model_graded_qa:accuracy"
    assert row["error"].startswith("RuntimeError('sandbox')") and row["metadata"]["scored"] == "false"


def _settings_from(doc_change: Any, tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    out = convert(_write_log(tmp_path, doc_change))
    generation = out.record["evaluation_results"][0]["generation_config"]
    return generation["generation_args"], generation.get("additional_details") or {}


def _empty_model_config(doc: dict[str, Any]) -> None:
    doc["eval"]["model_generate_config"] = {}
    for sample in doc["samples"]:
        sample.pop("events", None)


def _plan_config(doc: dict[str, Any]) -> None:
    """A real log's shape: the model's generate config empty, the settings in plan.config."""
    _empty_model_config(doc)
    doc["plan"]["config"] = {"temperature": 0.75, "max_tokens": 2048}


def _solver_arguments(doc: dict[str, Any]) -> None:
    _empty_model_config(doc)
    generate = next(s for s in doc["plan"]["steps"] if s["solver"] == "generate")
    generate["params"] = {"temperature": 0.2, "max_tokens": 512, "cache": False}
    generate["params_passed"] = {"temperature": 0.2, "max_tokens": 512}


def _plan_over_model(doc: dict[str, Any]) -> None:
    doc["eval"]["model_generate_config"] = {"temperature": 0.0, "max_tokens": 256, "seed": 42}
    doc["plan"]["config"] = {"temperature": 0.75}


def _model_calls(doc: dict[str, Any]) -> None:
    _empty_model_config(doc)
    for sample in doc["samples"]:
        sample["events"] = [{"event": "model", "config": {"max_tokens": 4096}}, {"event": "state"}]


def _model_calls_disagree(doc: dict[str, Any]) -> None:
    _model_calls(doc)
    doc["samples"][0]["events"][0]["config"] = {"max_tokens": 1024}


@pytest.mark.parametrize(
    ("change", "expected", "read_from"),
    [
        (
            _plan_config,
            {"temperature": 0.75, "max_tokens": 2048},
            {"max_tokens": "plan.config", "temperature": "plan.config"},
        ),
        (
            _solver_arguments,
            {"temperature": 0.2, "max_tokens": 512},
            {"max_tokens": "plan.steps[].params", "temperature": "plan.steps[].params"},
        ),
        # the plan's config is nearer the model call than the model's own: it wins, key by key
        (_plan_over_model, {"temperature": 0.75, "max_tokens": 256}, {"temperature": "plan.config"}),
        (_model_calls, {"max_tokens": 4096}, {"max_tokens": "samples[].events[].config"}),
        (_model_calls_disagree, {}, None),
    ],
    ids=["plan_config", "solver_arguments", "plan_over_model", "model_calls", "model_calls_disagree"],
)
def test_generation_settings_are_read_where_the_log_keeps_them(
    tmp_path: Path, change: Any, expected: dict[str, Any], read_from: dict[str, str] | None
) -> None:
    args, details = _settings_from(change, tmp_path)
    assert {k: args[k] for k in ("temperature", "top_p", "top_k", "max_tokens") if k in args} == expected
    if read_from is None:
        assert "generation_settings_read_from" not in details
    else:
        assert json.loads(details["generation_settings_read_from"]) == read_from
    assert "temperature" not in details and "max_tokens" not in details  # said once, as arguments


def test_generation_settings_of_the_model_config_need_no_provenance() -> None:
    generation = convert().record["evaluation_results"][0]["generation_config"]
    assert generation["generation_args"]["temperature"] == 0.0
    assert "generation_settings_read_from" not in (generation.get("additional_details") or {})


def test_a_log_keeping_its_settings_in_the_plan_config() -> None:
    """The example log has an empty model generate config and temperature 0.75, max_tokens
    2048 in plan.config, as a real log did."""
    log = EXAMPLES / "harness" / "inspect" / "tiny_qa_plan_config.json"
    assert json.loads(log.read_text())["eval"]["model_generate_config"] == {}
    out = convert(log)
    for result in out.record["evaluation_results"]:
        args = result["generation_config"]["generation_args"]
        assert (args["temperature"], args["max_tokens"]) == (0.75, 2048)
    details = out.record["evaluation_results"][0]["generation_config"]["additional_details"]
    assert json.loads(details["generation_settings_read_from"]) == {
        "max_tokens": "plan.config",
        "temperature": "plan.config",
    }
