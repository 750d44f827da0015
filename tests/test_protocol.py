"""eee.store.protocol: the fields that make two results comparable, and the id they hash to."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from conftest import EXAMPLES
from eee.convert import alpaca_eval
from eee.convert.common import Settings
from eee.store import protocol
from eee.store.identity import Registry


def _result(**over: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "evaluation_result_id": "acc",
        "evaluation_name": "arc_easy",
        "source_data": {
            "dataset_name": "ARC",
            "source_type": "hf_dataset",
            "hf_repo": "allenai/ai2_arc",
            "hf_split": "test",
        },
        "metric_config": {"metric_id": "accuracy", "metric_name": "accuracy", "lower_is_better": False},
        "generation_config": {
            "generation_args": {"temperature": 0.0, "max_tokens": 16, "execution_command": "run.sh --gpu 3"},
            "additional_details": {"num_fewshot": "5"},
        },
        "score_details": {"score": 0.8},
    }
    result.update(over)
    return result


def _doc(result: dict[str, Any], library: tuple[str, str] = ("lm_eval", "0.4.9.2")) -> dict[str, Any]:
    return {"eval_library": {"name": library[0], "version": library[1]}, "evaluation_results": [result]}


def _fields(result: dict[str, Any], **kw: Any) -> dict[str, str | None]:
    return protocol.fields_of(_doc(result, **kw), result, "ai2_arc")


def test_every_field_is_declared_once_with_its_reason() -> None:
    assert len(set(protocol.NAMES)) == len(protocol.FIELDS) == 13
    assert all(f.reason and f.where for f in protocol.FIELDS)
    assert {
        "benchmark",
        "dataset",
        "dataset_revision",
        "split",
        "metric",
        "prompt",
        "shots",
        "generation",
        "judge",
    } <= set(protocol.NAMES) and "harness" in protocol.NAMES


def test_the_fields_of_a_result() -> None:
    fields = _fields(_result())
    assert fields["benchmark"] == "ai2_arc" and fields["dataset"] == "allenai/ai2_arc" and fields["split"] == "test"
    assert fields["shots"] == "5" and fields["harness"] == "lm_eval 0.4" and fields["judge"] is None
    # the command line is a machine's path, not the protocol; the sampling settings are
    assert json.loads(fields["generation"] or "{}") == {"max_tokens": 16, "temperature": 0.0}
    # a setting that changes scores is another protocol; one that does not is the same
    base = protocol.protocol_id(fields)
    hotter = _result()
    hotter["generation_config"]["generation_args"]["temperature"] = 0.7
    assert protocol.protocol_id(_fields(hotter)) != base
    moved = _result()
    moved["generation_config"]["generation_args"]["execution_command"] = "other.sh"
    assert protocol.protocol_id(_fields(moved)) == base
    assert protocol.differing(fields, _fields(hotter)) == ["generation"]
    assert protocol.protocol_id(dict(reversed(list(fields.items())))) == base  # the declared order, not the dict's
    assert len(base) == 16 and all(c in "0123456789abcdef" for c in base)


@pytest.mark.parametrize(
    ("version", "major"),
    [
        ("0.4.9.2", "0.4"),
        ("2.1.0", "2"),
        ("v3", "3"),
        ("0.3.138.dev45+g23fb0e7e", "0.3"),
        ("unknown", None),
        (None, None),
    ],
)
def test_the_harness_counts_by_its_major_version(version: str | None, major: str | None) -> None:
    assert protocol.major_version(version) == major


def test_the_benchmark_and_metric_are_canonical_ids() -> None:
    names = Registry()
    fields = protocol.fields_of(_doc(_result()), _result(), "ai2_arc", names)
    assert fields["benchmark"] == "ai2_arc"
    with_params = _result()
    with_params["metric_config"]["metric_parameters"] = {"k": 1}
    assert _fields(with_params)["metric"] == 'accuracy {"k":1}'


def test_a_long_prompt_is_shown_short_and_hashed_whole() -> None:
    long = _result()
    long["generation_config"]["generation_args"]["prompt_template"] = "Answer the question. " * 40
    fields = _fields(long)
    shown = protocol.readable(fields)["protocol_prompt"] or ""
    assert len(shown) <= protocol.SHOWN_CHARS and "sha256" in shown and shown.startswith("Answer the question.")
    other = copy.deepcopy(long)
    other["generation_config"]["generation_args"]["prompt_template"] = "Answer the question. " * 39 + "Answer!"
    assert protocol.protocol_id(_fields(other)) != protocol.protocol_id(fields)


def test_alpaca_eval_judges_never_share_a_metric_or_a_protocol() -> None:
    board = EXAMPLES / "harness" / "alpaca_eval" / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
    weighted = alpaca_eval.convert(board, Settings(exclude=("acme-chat-7b",))).outputs[0].record
    other = (
        alpaca_eval.convert(
            board.with_name("alpaca_eval_gpt4_leaderboard.csv"),
            Settings(model_ids={"acme-chat-7b": "acme/acme-chat-7b"}),
        )
        .outputs[0]
        .record
    )
    fw = protocol.fields_of(weighted, weighted["evaluation_results"][0], "alpaca_eval_2")
    assert (fw["judge"] or "").startswith(
        "weighted_alpaca_eval_gpt4_turbo (openai/gpt-4-1106-preview, temperature 1); prompt: AlpacaEval's prompt"
    )
    assert (
        fw["reference"] == "gpt4_1106_preview"
        and fw["metric"] == "alpaca_eval.win_rate.weighted_alpaca_eval_gpt4_turbo"
    )
    # the same leaderboard under another annotator: another judge, another metric, another protocol
    renamed = copy.deepcopy(weighted)
    scoring = renamed["evaluation_results"][0]["metric_config"]["llm_scoring"]
    scoring["judges"][0]["model_info"]["id"] = "openai/gpt-4o"
    assert protocol.differing(fw, protocol.fields_of(renamed, renamed["evaluation_results"][0], "alpaca_eval_2")) == [
        "judge"
    ]
    fo = protocol.fields_of(other, other["evaluation_results"][0], "alpaca_eval")
    assert "judge" in protocol.differing(fw, fo) and protocol.protocol_id(fw) != protocol.protocol_id(fo)
