"""The AlpacaEval converter: leaderboards (1 and 2) and one run's annotations, written here."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, make_store
from eee.commands.convert import main
from eee.convert import alpaca_eval
from eee.convert.common import Batch, Converted, InputError, Settings, plan, validate_planned
from eee.convert.mapping import load_models
from eee.reporting.findings import Refused
from eee.validation.validate import run

LOGS = EXAMPLES / "harness" / "alpaca_eval"
BOARD_2 = LOGS / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
BOARD_1 = LOGS / "alpaca_eval_gpt4_leaderboard.csv"
RUN_2 = LOGS / "run_v2" / "weighted_alpaca_eval_gpt4_turbo"
RUN_1 = LOGS / "run_v1" / "alpaca_eval_gpt4"
MODELS = load_models(LOGS / "models.yaml")


def convert(path: Path, include_samples: bool = True, **kw: Any) -> Batch:
    return alpaca_eval.convert(path, Settings(include_samples=include_samples, model_ids=MODELS, **kw))


def scores(out: Converted) -> dict[str, float]:
    return {r["evaluation_result_id"]: r["score_details"]["score"] for r in out.record["evaluation_results"]}


def valid(batch: Batch) -> None:
    errors, warnings = validate_planned(plan(batch))
    assert not errors and not warnings, [f.one_line() for f in errors + warnings]


def test_alpaca_eval_2_leaderboard() -> None:
    batch = convert(BOARD_2)
    valid(batch)
    assert [o.record["model_info"]["id"] for o in batch.outputs] == [
        "anthropic/claude-3-opus-20240229",
        "Qwen/Qwen1.5-72B-Chat",
        "meta-llama/Meta-Llama-3-8B-Instruct",
        "acme/acme-chat-7b",  # named by the --models file
    ]
    assert all(o.benchmark == "alpaca_eval_2" and o.rows is None for o in batch.outputs)
    assert any("gpt4_1106_preview is the baseline" in n for n in batch.notes)  # its row is said, not dropped
    claude = batch.outputs[0]
    assert scores(claude) == {
        "win_rate": 29.1052695333,
        "length_controlled_winrate": 40.5095080124,
        "discrete_win_rate": 27.8881987578,
    }
    lc = claude.record["evaluation_results"][1]
    assert lc["score_details"]["uncertainty"] == {
        "standard_error": {"value": 0.4805555952, "method": "analytic"},
        "num_samples": 805,
    }
    assert lc["score_details"]["details"]["leaderboard_mode"] == "minimal"
    config = lc["metric_config"]
    assert (config["min_score"], config["max_score"], config["metric_unit"]) == (0.0, 100.0, "percent")
    assert config["llm_scoring"]["judges"][0]["model_info"]["id"] == "openai/gpt-4-1106-preview"
    assert claude.record["source_metadata"]["source_type"] == "documentation"
    assert lc["source_data"]["additional_details"] == {
        "hf_subset": "alpaca_eval_gpt4_baseline",
        "baseline": "gpt4_1106_preview",
    }


def test_alpaca_eval_1_leaderboard() -> None:
    batch = convert(BOARD_1)
    valid(batch)
    assert [(o.benchmark, o.record["model_info"]["id"]) for o in batch.outputs] == [
        ("alpaca_eval", "openai/gpt4_1106_preview"),
        ("alpaca_eval", "anthropic/claude-2.1"),
    ]
    assert scores(batch.outputs[1]) == {"win_rate": 87.08074534161491, "discrete_win_rate": 87.08074534161491}
    judge = batch.outputs[0].record["evaluation_results"][0]["metric_config"]["llm_scoring"]["judges"][0]
    assert judge["model_info"]["id"] == "openai/gpt-4" and judge["temperature"] == 0.0


def test_a_v2_run_recomputes_the_win_rate_and_keeps_the_leaderboard_s_lc() -> None:
    batch = convert(RUN_2)
    valid(batch)
    assert not batch.warnings
    (out,) = batch.outputs
    assert out.benchmark == "alpaca_eval_2" and out.record["model_info"]["id"] == "Qwen/Qwen1.5-7B-Chat"
    assert out.record["source_metadata"]["source_type"] == "evaluation_run"
    got = scores(out)
    assert got["win_rate"] == pytest.approx(40.0013905525)
    assert got["length_controlled_winrate"] == 42.51783451  # from the run's leaderboard.csv
    assert got["discrete_win_rate"] == 37.5
    rows = out.rows or []
    # an item is its instruction (runs that skip one still pair by item), not its position
    assert len(rows) == 4 and [r["sample_id"] for r in rows] == [
        hashlib.sha256(r["input"]["raw"].encode()).hexdigest()[:16] for r in rows
    ]
    assert all(r["sample_hash"].startswith(r["sample_id"]) for r in rows)
    assert sum(r["evaluation"]["score"] for r in rows) / 4 * 100 == pytest.approx(got["win_rate"])
    assert rows[0]["input"]["raw"].startswith("What are the names of some famous actors")
    assert rows[0]["output"]["raw"] == ["Julie Andrews, Meryl Streep and Patti LuPone all began on Broadway."]
    assert rows[0]["evaluation"]["is_correct"] is True and rows[1]["evaluation"]["is_correct"] is False
    assert rows[0]["input"]["reference"][0].startswith("Several famous actors started on Broadway")
    assert rows[0]["metadata"] == {
        "dataset": "helpful_base",
        "judge_cost_usd": "0.00878",
        "judge_latency_ms": "190.3589129",
    }
    assert rows[0]["answer_attribution"][0]["extracted_value"] == "1.9"  # the preference as the judge gave it
    # the source dataset is the items' cluster, declared once in the record
    assert out.record["detailed_evaluation_results"]["additional_details"] == {"cluster_key": "dataset"}
    config = out.record["evaluation_results"][0]["metric_config"]
    assert config["metric_id"] == "alpaca_eval.win_rate.weighted_alpaca_eval_gpt4_turbo"


def test_a_v1_run_from_its_annotations() -> None:
    batch = convert(RUN_1 / "annotations.json")
    valid(batch)
    (out,) = batch.outputs
    assert out.benchmark == "alpaca_eval" and out.record["model_info"]["id"] == "mistralai/Mistral-7B-Instruct-v0.2"
    assert scores(out) == {"win_rate": 62.5, "discrete_win_rate": 62.5}  # 2, 1, 2 and a draw (0 -> 1.5)
    details = out.record["evaluation_results"][0]["score_details"]["details"]
    assert details == {"n_wins": "2", "n_wins_base": "1", "n_draws": "1", "n_total": "4"}
    assert len(out.rows or []) == 4


def _run_copy(tmp_path: Path, edit: Any = None, board: bool = True) -> Path:
    folder = tmp_path / "weighted_alpaca_eval_gpt4_turbo"
    shutil.copytree(RUN_2, folder)
    if not board:
        (folder / "leaderboard.csv").unlink()
    if edit is not None:
        items = json.loads((folder / "annotations.json").read_text())
        edit(items)
        (folder / "annotations.json").write_text(json.dumps(items))
    return folder


def test_glm_preferences_give_the_length_controlled_win_rate(tmp_path: Path) -> None:
    def add_glm(items: list[dict[str, Any]]) -> None:
        for item, glm in zip(items, (0.8, 0.3, 0.5, 0.1), strict=True):
            item["glm_preference"] = glm

    batch = convert(_run_copy(tmp_path, add_glm, board=False))
    (out,) = batch.outputs
    assert scores(out)["length_controlled_winrate"] == pytest.approx(42.5)
    assert sorted({r["evaluation_result_id"] for r in out.rows or []}) == ["length_controlled_winrate", "win_rate"]
    assert not batch.warnings


def test_a_v2_run_without_lc_says_so(tmp_path: Path) -> None:
    batch = convert(_run_copy(tmp_path, board=False))
    assert "length_controlled_winrate" not in scores(batch.outputs[0])
    assert [w.message.split(":")[0] for w in batch.warnings] == ["no length-controlled win rate"]


def test_a_leaderboard_of_another_run_is_refused(tmp_path: Path) -> None:
    def flip(items: list[dict[str, Any]]) -> None:
        items[0]["preference"] = 1.0

    with pytest.raises(InputError) as info:
        convert(_run_copy(tmp_path, flip))
    assert "different runs" in (info.value.finding.hint or "")
    assert info.value.finding.file.endswith("leaderboard.csv:3")


@pytest.mark.parametrize(
    ("edit", "pointer", "message"),
    [
        (lambda items: items[1].update(generator_2="Other-Model"), "$[*].generator_2", "expected one generator_2"),
        (lambda items: items[2].pop("output_2"), "$[2].output_2", "missing or not a string"),
        (
            lambda items: [i.update(generator_1="my_baseline") for i in items],
            "$[*].generator_1",
            "cannot tell AlpacaEval 1 from 2",
        ),
        (lambda items: [i.update(preference="A") for i in items], "$[*].preference", "no annotation has a preference"),
    ],
)
def test_bad_annotations_name_the_field(tmp_path: Path, edit: Any, pointer: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        convert(_run_copy(tmp_path, edit, board=False))
    assert info.value.finding.pointer == pointer and message in info.value.finding.message


def _board(tmp_path: Path, edit: Any, source: Path = BOARD_2) -> Path:
    lines = source.read_text().splitlines()
    path = tmp_path / source.name
    path.write_text("\n".join(edit(lines)) + "\n")
    return path


@pytest.mark.parametrize(
    ("edit", "where", "message"),
    [
        (lambda ls: [*ls[:3], ls[3].replace("26.4982508848", "high"), *ls[4:]], ":4", "'high' is not a number"),
        (lambda ls: [*ls, ls[2]], ":7", "a second row of model 'claude-3-opus-20240229' (the first is"),
        (lambda ls: [ls[0].replace("win_rate", "winrate", 1), *ls[1:]], ":1", "no win_rate column"),
        (lambda ls: [*ls, "a,b"], ":7", "2 cells, the header has 12 columns"),
    ],
)
def test_bad_leaderboards_name_the_line(tmp_path: Path, edit: Any, where: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        convert(_board(tmp_path, edit))
    assert info.value.finding.file.endswith(where) and message in info.value.finding.message


def test_a_leaderboard_converts_every_row_that_resolves_and_lists_the_others(tmp_path: Path) -> None:
    board = _board(tmp_path, lambda ls: [*ls, ls[-1].replace("acme-chat-7b", "zz-chat"), "NullModel" + ls[-1][12:]])
    batch = alpaca_eval.convert(board, Settings())
    assert [o.record["model_info"]["id"] for o in batch.outputs] == [
        "anthropic/claude-3-opus-20240229",
        "Qwen/Qwen1.5-72B-Chat",
        "meta-llama/Meta-Llama-3-8B-Instruct",
        "sail-sg/NullModel",  # the placeholder: alpaca_eval's own config names its authors
    ]
    assert [(w.file.rsplit(":", 1)[-1], w.message, w.severity) for w in batch.warnings] == [
        ("6", "model 'acme-chat-7b' has no developer (developer/model): not converted", "warning"),
        ("7", "model 'zz-chat' has no developer (developer/model): not converted", "warning"),
    ]
    hint = batch.warnings[0].hint or ""
    assert "--models FILE" in hint and "--model-configs DIR" in hint and "--exclude acme-chat-7b" in hint
    null = batch.outputs[3].record["model_info"]
    assert "Cheating-LLM-Benchmarks" in null["additional_details"]["developer_from"]
    # a family guess says it is one; a name the user gave says nothing
    assert "a guess" in batch.outputs[1].record["model_info"]["additional_details"]["developer_from"]
    excluded = alpaca_eval.convert(board, Settings(exclude=("acme-chat-7b", "zz-chat", "nope")))
    assert not [w for w in excluded.warnings if "no developer" in w.message]
    assert [w.message for w in excluded.warnings] == ["--exclude 'nope': no model of that name here"]
    assert any("zz-chat left out (--exclude)" in n for n in excluded.notes)
    with pytest.raises(Refused) as info:  # nothing left: refused, every row named
        alpaca_eval.convert(
            board,
            Settings(exclude=("claude-3-opus-20240229", "Qwen1.5-72B-Chat", "Meta-Llama-3-8B-Instruct", "NullModel")),
        )
    assert [f.severity for f in info.value.findings] == ["error", "error"]


def _configs(tmp_path: Path) -> Path:
    folder = tmp_path / "models_configs"
    configs = {
        "acme-chat-7b": 'acme-chat-7b:\n  completions_kwargs:\n    model_name: "./local/acme"\n'
        '  pretty_name: "Acme"\n  link: "https://huggingface.co/acme-labs/acme-chat-7b"\n',
        "zz-chat": 'zz-chat:\n  completions_kwargs:\n    model_name: "zzorg/zz-chat-hf"\n  link: "https://zz.example"\n',
        "gh-model": "gh-model:\n  link: https://github.com/gh-org/repo/\n",
        "bad": "bad: &a [*a]\n",
    }
    for name, text in configs.items():
        (folder / name).mkdir(parents=True)
        (folder / name / "configs.yaml").write_text(text)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "configs.yaml").write_text("x:\n  link: https://huggingface.co/evil/x\n")
    return folder


def test_model_configs_name_the_developers(tmp_path: Path) -> None:
    folder = _configs(tmp_path)
    resolve = alpaca_eval.Resolver(Settings(model_configs=folder))
    assert resolve("acme-chat-7b") == (
        "acme-labs/acme-chat-7b",
        "alpaca_eval's model config: link https://huggingface.co/acme-labs/acme-chat-7b",
    )
    assert resolve("zz-chat")[0] == "zzorg/zz-chat"  # type: ignore[index]
    assert resolve("gh-model")[0] == "gh-org/gh-model"  # type: ignore[index]
    assert resolve("../outside") is None  # a name is data, never a path out of the folder
    assert resolve("bad") is None and "anchors" in resolve.problems[0].message  # a config that is not plain YAML: said
    assert resolve("gemma-2b-it")[0] == "google/gemma-2b-it"  # type: ignore[index]  # no config: the family
    board = _board(tmp_path, lambda ls: [*ls, ls[-1].replace("acme-chat-7b", "zz-chat")])
    batch = alpaca_eval.convert(board, Settings(model_configs=folder))
    assert not batch.warnings
    assert [o.record["model_info"]["id"] for o in batch.outputs][-2:] == ["acme-labs/acme-chat-7b", "zzorg/zz-chat"]


def test_the_command_converts_what_it_can_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = make_store(tmp_path, hooks=False)
    monkeypatch.chdir(store)
    assert main(["alpaca_eval", str(BOARD_2), "--no-stage"]) == 2
    err = capsys.readouterr().err
    assert "model 'acme-chat-7b' has no developer" in err and "--exclude acme-chat-7b" in err
    assert len(list((store / "data").rglob("*.json"))) == 3
    assert main(["alpaca_eval", str(BOARD_2), "--no-stage", "--exclude", "acme-chat-7b", "--dry-run"]) == 0
    with pytest.raises(SystemExit) as usage:
        main(["lm_eval", str(BOARD_2), "--exclude", "x"])
    assert usage.value.code == 64


def test_a_leaderboard_without_its_baseline_row_is_told_by_its_annotator(tmp_path: Path) -> None:
    path = _board(tmp_path, lambda ls: [ls[0], *ls[2:]])
    assert [o.benchmark for o in convert(path).outputs] == ["alpaca_eval_2"] * 4
    other = tmp_path / "other.csv"
    other.write_text(path.read_text())
    with pytest.raises(InputError) as info:
        convert(other)
    assert "cannot tell AlpacaEval 1 from 2" in info.value.finding.message


def test_the_command_places_the_run_and_its_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = make_store(tmp_path, hooks=False)
    monkeypatch.chdir(store)
    assert main(["alpaca_eval", str(BOARD_2), "--models", str(LOGS / "models.yaml")]) == 0
    assert main(["alpaca_eval", str(RUN_2), "--no-stage"]) == 0
    records = sorted(p.relative_to(store).as_posix() for p in (store / "data").rglob("*.json"))
    assert len(records) == 5 and all(r.startswith("data/alpaca_eval_2/") for r in records)
    assert run([str(store / "data")]).exit_code() == 0
