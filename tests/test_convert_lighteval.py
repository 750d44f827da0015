"""The lighteval converter on a small output folder written here (results + details parquet)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import make_store
from eee.commands.convert import main
from eee.convert import lighteval
from eee.convert.common import Batch, Converted, InputError, Settings, plan, validate_planned
from eee.validation.validate import run
from lighteval_output import DETAILS, RESULTS, STAMP, write_output


@pytest.fixture
def output(tmp_path: Path) -> Path:
    write_output(tmp_path / "out")
    return tmp_path / "out"


def convert(path: Path, include_samples: bool = True, **kw: Any) -> Batch:
    return lighteval.convert(path, Settings(include_samples=include_samples, **kw))


def task(batch: Batch, name: str) -> Converted:
    return next(o for o in batch.outputs if o.record["evaluation_results"][0]["evaluation_name"] == name)


def test_one_valid_record_per_task(output: Path) -> None:
    batch = convert(output)
    assert [(o.benchmark, o.record["evaluation_results"][0]["evaluation_name"]) for o in batch.outputs] == [
        ("gsm8k", "gsm8k"),
        ("arc", "arc:easy"),
        ("mmlu", "mmlu:anatomy"),
    ]
    errors, warnings = validate_planned(plan(batch))
    assert not errors and not warnings, [f.one_line() for f in errors + warnings]
    assert any("lighteval's averages (all)" in note for note in batch.notes)


def test_round_trip_model_metric_score_and_sample_count(output: Path) -> None:
    batch = convert(output)
    gsm8k = task(batch, "gsm8k")
    assert gsm8k.record["model_info"]["id"] == "acme/tiny-lm"
    (result,) = gsm8k.record["evaluation_results"]
    assert result["evaluation_result_id"] == "extractive_match"
    assert result["metric_config"]["lower_is_better"] is False
    assert (result["metric_config"]["min_score"], result["metric_config"]["max_score"]) == (0.0, 1.0)
    assert result["score_details"] == {
        "score": 0.5,
        "uncertainty": {"standard_error": {"value": 0.5, "method": "analytic"}, "num_samples": 2},
    }
    assert gsm8k.rows is not None and len(gsm8k.rows) == len(DETAILS["gsm8k|5"]) == 2
    assert sum(r["evaluation"]["score"] for r in gsm8k.rows) / 2 == result["score_details"]["score"]
    arc = task(batch, "arc:easy")
    assert arc.record["evaluation_results"][0]["score_details"]["score"] == pytest.approx(2 / 3)
    assert arc.rows is not None and len(arc.rows) == 3
    assert arc.record["evaluation_results"][0]["source_data"] == {
        "dataset_name": "arc:easy",
        "source_type": "hf_dataset",
        "hf_repo": "allenai/ai2_arc",
        "hf_split": "test",
        "samples_number": 3,
        "additional_details": {"hf_subset": "ARC-Easy"},
    }


def test_rows_carry_the_answer_the_reference_and_the_score(output: Path) -> None:
    batch = convert(output)
    mc = task(batch, "arc:easy").rows or []
    first = mc[0]
    assert first["sample_id"] == "7" and first["evaluation_result_id"] == "acc"
    assert first["input"]["choices"] == [" oxygen", " carbon dioxide", " helium"]
    assert first["input"]["reference"] == [" carbon dioxide"]
    assert first["output"]["raw"] == [" carbon dioxide"]  # the option of the highest log-probability
    assert first["answer_attribution"][0]["extraction_method"] == "argmax_logprob"
    assert first["evaluation"]["is_correct"] is True
    assert mc[1]["output"]["raw"] == [" sand"] and mc[1]["evaluation"]["score"] == 0.0
    gen = task(batch, "gsm8k").rows or []
    assert gen[1]["output"]["raw"] == ["4 + 6 = 10 eggs. The answer is 10."]
    assert gen[1]["input"]["reference"] == ["24"] and gen[1]["input"]["choices"] is None
    assert gen[1]["evaluation_id"] == f"gsm8k/acme_tiny-lm/{STAMP}"


def test_model_and_times_come_from_the_log(output: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = task(convert(output), "gsm8k").record
    assert record["model_info"]["inference_engine"] == {"name": "vllm"}
    assert record["model_info"]["additional_details"]["deployment_type"] == "self_deployed"
    assert record["model_info"]["additional_details"]["dtype"] == "bfloat16"
    assert record["evaluation_timestamp"] == "2025-06-03T12:34:56.789012"
    assert record["retrieved_timestamp"] == "1748954127"  # 12:34:56 UTC + 31.2 s of evaluation
    assert record["eval_library"]["name"] == "lighteval"
    gen = record["evaluation_results"][0]["generation_config"]
    assert gen == {
        "additional_details": {"num_fewshot": "5", "stop_sequence": '["Question:"]'},
        "generation_args": {"max_tokens": 256},
    }
    monkeypatch.setattr("time.time", lambda: 4102444800.0)
    assert task(convert(output), "gsm8k").record == record


def test_a_task_without_details_is_converted_with_a_warning(output: Path) -> None:
    batch = convert(output)
    assert [w.pointer for w in batch.warnings] == ['$.results["mmlu:anatomy|0"]']
    assert "--save-details" in (batch.warnings[0].hint or "")
    assert task(batch, "mmlu:anatomy").rows is None
    assert not convert(output, include_samples=False).warnings


def test_secrets_of_the_model_config_are_never_copied(tmp_path: Path) -> None:
    results = write_output(tmp_path / "out", details={})
    doc = json.loads(results.read_text())
    doc["config_general"]["model_config"] = {
        "model_name": "openai/gpt-4o",
        "provider": "openai",
        "api_key": "sk-very-secret",
        "base_url": "https://internal.example",
        "concurrent_requests": 10,
    }
    doc["config_general"]["model_name"] = "openai/gpt-4o"
    results.write_text(json.dumps(doc))
    batch = convert(results, include_samples=False)
    text = json.dumps([o.record for o in batch.outputs])
    assert "sk-very-secret" not in text and "internal.example" not in text
    info = batch.outputs[0].record["model_info"]
    assert info["inference_platform"] == "openai"
    assert info["additional_details"]["deployment_type"] == "externally_managed"


def test_suite_prefixed_task_keys_of_older_versions(tmp_path: Path) -> None:
    results = write_output(tmp_path / "out", details={})
    doc = json.loads(results.read_text())
    doc["results"] = {f"lighteval|{k}": v for k, v in doc["results"].items() if k != "all"}
    doc["config_tasks"] = {f"lighteval|{k.split('|')[0]}": v for k, v in doc["config_tasks"].items()}
    results.write_text(json.dumps(doc))
    batch = convert(results, include_samples=False)
    assert [o.benchmark for o in batch.outputs] == ["gsm8k", "arc", "mmlu"]
    assert task(batch, "gsm8k").record["evaluation_results"][0]["source_data"]["hf_repo"] == "openai/gsm8k"


@pytest.mark.parametrize(
    ("change", "pointer", "message"),
    [
        (lambda d: d.pop("results"), "$.results", "missing field 'results'"),
        (lambda d: d.update(results={"all": {"acc": 1.0}}), "$.results", "no task results"),
        (
            lambda d: [d["config_general"].pop(k) for k in ("model_name", "model_config")],
            "$.config_general.model_name",
            "no model name",
        ),
        (
            lambda d: d["config_general"].update(model_name="tiny-lm"),
            "$.config_general.model_name",
            "no developer part",
        ),
    ],
)
def test_malformed_results_name_the_field(tmp_path: Path, change: Any, pointer: str, message: str) -> None:
    doc = json.loads(RESULTS.read_text())
    change(doc)
    path = tmp_path / RESULTS.name
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as info:
        convert(path, include_samples=False)
    assert info.value.finding.pointer == pointer and message in info.value.finding.message


def test_a_results_file_renamed_has_no_time(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(RESULTS.read_text())
    with pytest.raises(InputError) as info:
        convert(path, include_samples=False)
    assert "no run time" in info.value.finding.message


def test_damaged_or_foreign_details_are_errors(output: Path) -> None:
    details = output / "details" / "acme" / "tiny-lm" / STAMP / f"details_gsm8k|5_{STAMP}.parquet"
    details.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputError) as info:
        convert(output)
    assert "not a readable parquet file" in info.value.finding.message
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"example": ["q"], "predictions": ["a"]}), details)
    with pytest.raises(InputError) as info:
        convert(output)
    assert "not the details layout of lighteval 0.13.0" in info.value.finding.message


def test_the_command_places_records_and_sidecars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = make_store(tmp_path, hooks=False)
    write_output(tmp_path / "out")
    monkeypatch.chdir(store)
    assert main(["lighteval", str(tmp_path / "out"), "--no-stage", "--dry-run", "--include-samples"]) == 2
    assert main(["lighteval", str(tmp_path / "out")]) == 0
    records = sorted(p.relative_to(store).as_posix() for p in (store / "data").rglob("*.json"))
    assert [r.split("/")[1:4] for r in records] == [
        ["arc", "acme", "tiny-lm"],
        ["gsm8k", "acme", "tiny-lm"],
        ["mmlu", "acme", "tiny-lm"],
    ]
    assert run([str(store / "data")]).exit_code() == 0


# --- issue 33: a model reached through a provider ------------------------------------------------

PROVIDER = Path(__file__).resolve().parent / "examples" / "harness" / "lighteval_provider"


def _through(tmp_path: Path, name: str, **config: Any) -> Path:
    """The provider example's results file, rewritten for the model ``name`` (at lighteval's
    own path, results/<name>/results_<date>.json), with ``config`` over its model config."""
    (source,) = PROVIDER.rglob("results_*.json")
    doc = json.loads(source.read_text())
    doc["config_general"]["model_name"] = name
    doc["config_general"]["model_config"].update(model_name=name, **config)
    target = tmp_path / "out" / "results" / name / source.name
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(doc))
    return tmp_path / "out"


def test_a_model_reached_through_openrouter_is_its_developer_s(tmp_path: Path) -> None:
    """Issue 33's acceptance: a lighteval 0.11 results folder of an API run through OpenRouter
    (``openrouter/openai/gpt-5.2``) gives records of OpenAI's model, OpenRouter kept as where it
    ran; none under developer ``openrouter``."""
    batch = convert(PROVIDER, include_samples=False)
    assert [o.benchmark for o in batch.outputs] == ["gsm8k", "gpqa"]
    assert not batch.warnings  # OpenRouter serves developer/model ids: nothing guessed
    for out in batch.outputs:
        info = out.record["model_info"]
        assert (info["id"], info["developer"], info["inference_platform"]) == ("openai/gpt-5.2", "openai", "openrouter")
        assert info["additional_details"]["served_as"] == "openrouter/openai/gpt-5.2"
        assert info["additional_details"]["deployment_type"] == "externally_managed"
        assert info["additional_details"]["model_availability"] == "closed_weights"
    errors, warnings = validate_planned(plan(batch))
    assert not errors and not warnings, [f.one_line() for f in errors + warnings]
    store = make_store(tmp_path)
    code = main(["lighteval", str(PROVIDER), "--store", str(store), "--no-stage"])
    assert code == 0
    assert (store / "data" / "gsm8k" / "openai" / "gpt-5.2").is_dir()
    assert not list((store / "data").glob("*/openrouter"))


@pytest.mark.parametrize(
    ("name", "config", "expected", "platform"),
    [
        ("gemini/gemini-2.0-flash", {}, "google/gemini-2.0-flash", "gemini"),  # Google's own API
        ("gpt-4o", {"provider": "openai"}, "openai/gpt-4o", "openai"),  # the provider named apart
        (
            "meta-llama/Llama-3.1-8B-Instruct",
            {"provider": "together_ai"},
            "meta-llama/Llama-3.1-8B-Instruct",
            "together_ai",
        ),
    ],
)
def test_provider_prefixes_known_here(tmp_path: Path, name: str, config: dict, expected: str, platform: str) -> None:
    batch = convert(_through(tmp_path, name, **config), include_samples=False)
    info = batch.outputs[0].record["model_info"]
    assert (info["id"], info["inference_platform"]) == (expected, platform) and not batch.warnings


def test_an_unknown_provider_s_split_is_a_guess_and_said(tmp_path: Path) -> None:
    batch = convert(_through(tmp_path, "myproxy/meta-llama/Llama-3.1-8B-Instruct"), include_samples=False)
    info = batch.outputs[0].record["model_info"]
    assert (info["id"], info["inference_platform"]) == ("meta-llama/Llama-3.1-8B-Instruct", "myproxy")
    assert "guessed" in info["additional_details"]["attribution"]
    assert batch.warnings and "is read as 'meta-llama/Llama-3.1-8B-Instruct' served by 'myproxy'" in (
        batch.warnings[0].message
    )
    assert "--model-id" in (batch.warnings[0].hint or "")


def test_a_host_s_model_without_a_developer_asks_for_its_id(tmp_path: Path) -> None:
    out = _through(tmp_path, "groq/llama3-70b-8192")
    with pytest.raises(InputError) as info:
        convert(out, include_samples=False)
    finding = info.value.findings[0]
    assert finding.pointer == "$.config_general.model_name" and "through groq" in finding.message
    assert "--model-id" in (finding.hint or "")
    batch = convert(out, include_samples=False, model_id="meta-llama/Meta-Llama-3-70B-Instruct")
    model = batch.outputs[0].record["model_info"]
    assert (model["id"], model["inference_platform"]) == ("meta-llama/Meta-Llama-3-70B-Instruct", "groq")
