"""The declarative table converter: the shipped mappings on the published tables, and bad input."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, PROJECT, git, make_store, reference
from eee.commands.convert import main
from eee.convert import table
from eee.convert.common import Batch, Settings, plan, validate_planned
from eee.convert.mapping import MappingError, load_mapping
from eee.reporting.findings import Refused
from eee.validation.validate import run

MAPPINGS = PROJECT / "tools" / "eee" / "convert" / "mappings"
TABLES = EXAMPLES / "tables"
SHIPPED = ["cocoabench", "corebench_hard", "wikitext"]


def convert(name: str, table_path: Path | None = None, mapping: Path | None = None) -> Batch:
    return table.convert(
        table_path or TABLES / f"{name}.csv", Settings(mapping=mapping or MAPPINGS / f"{name}.mapping.yaml")
    )


def scores(batch: Batch) -> dict[tuple[str, ...], dict[str, float]]:
    """(model id, setting values..., eval library) -> {metric id: score}."""
    out: dict[tuple[str, ...], dict[str, float]] = {}
    for o in batch.outputs:
        results = o.record["evaluation_results"]
        setting = tuple(results[0].get("generation_config", {}).get("additional_details", {}).values())
        key = (o.record["model_info"]["id"], *setting, o.record["eval_library"]["name"])
        out[key] = {r["metric_config"]["metric_id"]: r["score_details"]["score"] for r in results}
    return out


def test_every_shipped_mapping_has_a_tested_table() -> None:
    shipped = sorted(p.name.removesuffix(".mapping.yaml") for p in MAPPINGS.glob("*mapping*.yaml"))
    assert shipped == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_mappings_convert_their_tables_to_valid_records(name: str) -> None:
    batch = convert(name)
    errors, warnings = validate_planned(plan(batch))
    assert not errors and not warnings, [f.one_line() for f in errors + warnings]
    assert not batch.warnings
    rows = len((TABLES / f"{name}.csv").read_text().strip().splitlines()) - 1
    libraries = {m.library for m in load_mapping(MAPPINGS / f"{name}.mapping.yaml").metrics} - {None}
    assert len(batch.outputs) == rows * max(1, len(libraries))
    for out in batch.outputs:
        assert out.benchmark == name
        assert out.record["source_metadata"]["source_type"] == "documentation"
        assert out.rows is None  # a table has no per-sample data


def test_cocoabench_round_trip() -> None:
    got = scores(convert("cocoabench"))
    assert len(got) == 6  # GPT-5.4 under three scaffolds is three records, not a duplicate
    assert got[("openai/gpt-5.4", "Codex", "cocoabench")] == {
        "accuracy": 45.1,
        "cocoabench.time_per_task": 377.8,
        "cocoabench.cost_per_task": 0.7,
        "cocoabench.total_cost": 111.4,
    }
    assert got[("google/gemini-3.1-pro", "Cocoa Agent", "cocoabench")]["accuracy"] == 30.7
    record = convert("cocoabench").outputs[0].record
    accuracy, time = record["evaluation_results"][:2]
    assert accuracy["metric_config"]["lower_is_better"] is False
    assert (accuracy["metric_config"]["min_score"], accuracy["metric_config"]["max_score"]) == (0.0, 100.0)
    assert accuracy["metric_config"]["metric_unit"] == "percent"
    assert time["metric_config"]["lower_is_better"] is True and time["metric_config"]["max_score"] == "Infinity"
    assert time["metric_config"]["metric_unit"] == "seconds"
    assert record["model_info"]["name"] == "GPT-5.4"
    assert record["source_metadata"]["source_organization_name"] == "CocoaBench"  # the mapping's
    mapping = MAPPINGS / "cocoabench.mapping.yaml"
    given = table.convert(TABLES / "cocoabench.csv", Settings(mapping=mapping, source_organization="My Lab"))
    assert given.outputs[0].record["source_metadata"]["source_organization_name"] == "My Lab"


def test_corebench_hard_round_trip() -> None:
    got = scores(convert("corebench_hard"))
    assert got[("anthropic/claude-opus-4.5", "Claude Code", "hal-harness")] == {
        "accuracy": 77.8,
        "hal.total_cost": 87.2,
    }
    assert got[("anthropic/claude-opus-4.5", "CORE-Agent", "hal-harness")] == {
        "accuracy": 42.2,
        "hal.total_cost": 169.0,
    }
    assert got[("anthropic/claude-3.7-sonnet", "CORE-Agent", "hal-harness")]["accuracy"] == 35.6


def test_the_two_wikitext_columns_are_different_metrics_in_different_records() -> None:
    batch = convert("wikitext")
    got = scores(batch)
    assert got == {
        ("facebook/opt-6.7b", "gptq-perplexity-script"): {"token-perplexity": 10.8605},
        ("facebook/opt-6.7b", "lm_eval"): {"word-perplexity": 12.2907},
        ("meta-llama/Llama-2-7b-hf", "gptq-perplexity-script"): {"token-perplexity": 5.4687},
        ("meta-llama/Llama-2-7b-hf", "lm_eval"): {"word-perplexity": 8.7939},
    }
    ids = [o.record["evaluation_id"] for o in batch.outputs]
    assert len(set(ids)) == 4
    text = (MAPPINGS / "wikitext.mapping.yaml").read_text()
    assert "THE TWO COLUMNS ARE DIFFERENT METRICS" in text
    for out in batch.outputs:
        (result,) = out.record["evaluation_results"]
        assert result["metric_config"]["lower_is_better"] is True
        assert "not comparable" in result["metric_config"]["evaluation_description"]


def _published_tables() -> dict[str, list[list[str]]]:
    """The Markdown tables of published-results.md, by heading."""
    path = reference("published-results.md")
    tables: dict[str, list[list[str]]] = {}
    heading = ""
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            heading = line[3:]
        elif line.startswith("|") and not re.match(r"^\|[\s|:-]+\|$", line):
            tables.setdefault(heading, []).append([c.strip() for c in line.strip("|").split("|")])
    return tables


@pytest.mark.parametrize(
    ("name", "heading"),
    [("cocoabench", "CocoaBench"), ("corebench_hard", "CORE-Bench Hard"), ("wikitext", "WikiText")],
)
def test_the_table_fixtures_are_the_published_tables(name: str, heading: str) -> None:
    published = next(rows for title, rows in _published_tables().items() if title.startswith(heading))
    ours = [line.split(",") for line in (TABLES / f"{name}.csv").read_text().strip().splitlines()]
    assert [[c.lower() for c in r] for r in ours] == [[c.lower() for c in r] for r in published]


def test_a_json_table_converts_like_the_csv(tmp_path: Path) -> None:
    lines = (TABLES / "wikitext.csv").read_text().strip().splitlines()
    header = lines[0].split(",")
    rows = [
        dict(zip(header, [line.split(",")[0], *map(float, line.split(",")[1:])], strict=True)) for line in lines[1:]
    ]
    path = tmp_path / "wikitext.json"
    path.write_text(json.dumps(rows))
    assert scores(convert("wikitext", path)) == scores(convert("wikitext"))


def test_the_command_writes_the_records_into_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = make_store(tmp_path, hooks=False)
    monkeypatch.chdir(store)
    mapping = str(MAPPINGS / "corebench_hard.mapping.yaml")
    assert main(["table", "--mapping", mapping, str(TABLES / "corebench_hard.csv")]) == 0
    files = sorted(p.relative_to(store).as_posix() for p in (store / "data").rglob("*.json"))
    assert len(files) == 6 and all(f.startswith("data/corebench_hard/anthropic/claude-") for f in files)
    assert sorted(git(store, "diff", "--cached", "--name-only").stdout.split()) == files
    assert run([str(store / "data")]).exit_code() == 0


# --- bad input: clear errors, nothing written ------------------------------------------------------


def _mapping(tmp_path: Path, change: Any = None, name: str = "cocoabench") -> Path:
    from eee.store.safeyaml import load

    doc = load((MAPPINGS / f"{name}.mapping.yaml").read_text())
    if change is not None:
        change(doc)
    path = tmp_path / "my.mapping.yaml"
    path.write_text(json.dumps(doc))  # JSON is YAML
    return path


def _refusal(call: Any) -> list[Any]:
    with pytest.raises(Refused) as info:
        call()
    return info.value.findings


@pytest.mark.parametrize(
    ("change", "pointer", "message", "hint"),
    [
        (lambda d: d["metrics"][0].update(direction="up"), "$.metrics[0].direction", "'up' is not one of", "higher"),
        (lambda d: d["metrics"][1].update(dirction="lower"), "$.metrics[1].dirction", "unknown key", "'direction'"),
        (lambda d: d["metrics"][0].pop("unit"), "$.metrics[0].unit", "missing key 'unit'", "percent"),
        (lambda d: d["metrics"][0].update(min=100), "$.metrics[0].max", "not above min", "bounds"),
        (lambda d: d["metrics"][0].update(max="lots"), "$.metrics[0].max", "expected a number", ".inf"),
        (lambda d: d["metrics"][1].update(id="accuracy"), "$.metrics[1].id", "also the id of metrics[0]", "own id"),
        (
            lambda d: d["model"]["ids"].update({"GPT-5.4": "gpt-5.4"}),
            '$.model.ids["GPT-5.4"]',
            "not a developer/model",
            "openai/gpt-4o",
        ),
        (lambda d: d.update(benchmark="../etc"), "$.benchmark", "cannot be a folder name", "letters"),
        (lambda d: d.update(benchmark="a/b"), "$.benchmark", "cannot be a folder name", "letters"),
        (lambda d: d["source"].update(type="blog"), "$.source.type", "not one of", "documentation"),
        (
            lambda d: d["source"].update(url="javascript:alert(1)"),
            "$.source.url",
            "expected an http(s) address",
            "https://",
        ),
        (lambda d: d["source"].update(name="x\u0007y"), "$.source.name", "control characters", "one line"),
        (lambda d: d.pop("metrics"), "$.metrics", "missing key 'metrics'", "metrics"),
        (lambda d: d.update(metrics={"column": "x"}), "$.metrics", "expected a list of metrics", "entry per metric"),
    ],
)
def test_a_bad_mapping_names_the_file_the_key_and_the_fix(
    tmp_path: Path, change: Any, pointer: str, message: str, hint: str
) -> None:
    path = _mapping(tmp_path, change)
    (finding,) = _refusal(lambda: convert("cocoabench", mapping=path))
    assert finding.file.endswith("my.mapping.yaml") and finding.pointer == pointer
    assert message in finding.message and hint in (finding.hint or ""), finding.one_line()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &x [1]\nb: *x\n", "anchors"),
        ("benchmark: !!python/object:os.system x\n", "tags"),
        ("benchmark: [unclosed\n", "not valid YAML"),
        ("- just\n- a list\n", "expected a table mapping"),
        ("benchmark: x\nbenchmark: y\n", "not valid YAML"),
    ],
)
def test_unsafe_or_malformed_yaml_is_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.mapping.yaml"
    path.write_text(text)
    (finding,) = _refusal(lambda: convert("cocoabench", mapping=path))
    assert finding.file.endswith("bad.mapping.yaml") and message in finding.message, finding.one_line()


def test_a_mapping_naming_missing_columns_lists_them_all(tmp_path: Path) -> None:
    def change(d: dict[str, Any]) -> None:
        d["metrics"][0]["column"] = "acc"
        d["setting"][0]["column"] = "scaffold"

    findings = _refusal(lambda: convert("cocoabench", mapping=_mapping(tmp_path, change)))
    assert [f.pointer for f in findings] == ["$.setting[0].column", "$.metrics[0].column"]
    assert "names the column 'acc', which the table" in findings[1].message
    assert "'accuracy (%)'" in (findings[1].hint or "")


def _table(tmp_path: Path, edit: Any) -> Path:
    lines = (TABLES / "cocoabench.csv").read_text().splitlines()
    path = tmp_path / "cocoabench.csv"
    path.write_text("\n".join(edit(lines)) + "\n")
    return path


@pytest.mark.parametrize(
    ("edit", "where", "pointer", "message"),
    [
        (
            lambda ls: [*ls[:2], ls[2].replace("45.1", "n/a"), *ls[3:]],
            ":3",
            '$["accuracy (%)"]',
            "'n/a' is not a number",
        ),
        (lambda ls: [*ls[:2], ls[2].replace("45.1", "nan"), *ls[3:]], ":3", '$["accuracy (%)"]', "not a finite number"),
        (
            lambda ls: [*ls, ls[1]],
            ":8",
            '$["model backbone"]',
            "a second row of model 'GPT-5.4' with agent_scaffold 'Codex'",
        ),
        (
            lambda ls: [*ls, "Codex,GPT-9,1,1,1,1"],
            ":8",
            '$["model backbone"]',
            "model 'GPT-9' has no developer/model id",
        ),
        (lambda ls: [*ls, "Codex,,1,1,1,1"], ":8", '$["model backbone"]', "no model name"),
        (lambda ls: [*ls, "Codex,GPT-5.4,1,1"], ":8", "$", "4 cells, the header has 6 columns"),
        (
            lambda ls: [*ls[:2], ls[2].replace("45.1", "145.1"), *ls[3:]],
            "",
            "$.evaluation_results[0].score_details.score",
            "outside",
        ),
    ],
)
def test_bad_rows_name_the_line_and_the_column(
    tmp_path: Path, edit: Any, where: str, pointer: str, message: str
) -> None:
    path = _table(tmp_path, edit)
    if where:
        findings = _refusal(lambda: convert("cocoabench", path))
        assert any(
            f.file.endswith(f"cocoabench.csv{where}") and f.pointer == pointer and message in f.message
            for f in findings
        ), [f.one_line() for f in findings]
    else:  # a score outside the mapping's bounds: the validator refuses the record before placement
        errors, _ = validate_planned(plan(convert("cocoabench", path)))
        assert any(f.pointer == pointer and message in f.message for f in errors), [f.one_line() for f in errors]


def test_hostile_cells_stay_data(tmp_path: Path) -> None:
    """A model name or setting with markup, quotes or a path stays a string in the record; a
    model name is never a path (the id comes from the mapping)."""
    hostile = '<script>alert("x")</script> ../../etc'

    def change(d: dict[str, Any]) -> None:
        d["model"]["ids"][hostile] = "acme/model-x"

    quoted = '"' + hostile.replace('"', '""') + '"'
    path = _table(tmp_path, lambda ls: [*ls, f"{quoted},{quoted},1,1,1,1"])
    batch = convert("cocoabench", path, _mapping(tmp_path, change))
    last = batch.outputs[-1].record
    assert last["model_info"] == {**last["model_info"], "name": hostile, "id": "acme/model-x"}
    assert last["evaluation_results"][0]["generation_config"]["additional_details"] == {"agent_scaffold": hostile}
    assert [p.record_rel.split("/")[:4] for p in plan(batch)][-1] == ["data", "cocoabench", "acme", "model-x"]


def test_an_empty_score_is_left_out_with_a_warning(tmp_path: Path) -> None:
    path = _table(tmp_path, lambda ls: [ls[0], ls[1].replace(",0.7,", ",,"), *ls[2:]])
    batch = convert("cocoabench", path)
    assert [w.pointer for w in batch.warnings] == ['$["avg. cost per task ($)"]']
    first = scores(batch)[("openai/gpt-5.4", "Codex", "cocoabench")]
    assert "cocoabench.cost_per_task" not in first and len(first) == 3


def test_the_command_refuses_bad_input_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = make_store(tmp_path, hooks=False)
    monkeypatch.chdir(store)
    path = _table(tmp_path, lambda ls: [*ls[:2], ls[2].replace("502.1", "fast"), *ls[3:]])
    mapping = str(MAPPINGS / "cocoabench.mapping.yaml")
    assert main(["table", "--mapping", mapping, str(path)]) == 1
    err = capsys.readouterr().err
    assert "cocoabench.csv:3::$[\"avg. time per task (s)\"]: 'fast' is not a number" in err
    assert "hint:" in err and "Traceback" not in err and "nothing was written" in err
    assert not (store / "data").exists()
    missing = tmp_path / "nowhere.mapping.yaml"
    assert main(["table", "--mapping", str(missing), str(TABLES / "cocoabench.csv")]) == 1
    assert "nowhere.mapping.yaml::$: file not found" in capsys.readouterr().err
    shutil.copy(TABLES / "cocoabench.csv", tmp_path / "t.txt")
    assert main(["table", "--mapping", mapping, str(tmp_path / "t.txt")]) == 1
    assert "not a .csv, .tsv or .json table" in capsys.readouterr().err
    assert not (store / "data").exists()


def test_a_models_file_is_checked_like_a_mapping(tmp_path: Path) -> None:
    from eee.convert.mapping import load_models

    good = tmp_path / "models.yaml"
    good.write_text("GPT-9: openai/gpt-9\n")
    assert load_models(good) == {"GPT-9": "openai/gpt-9"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("GPT-9: gpt-9\n")
    with pytest.raises(MappingError) as info:
        load_models(bad)
    assert info.value.finding.pointer == '$["GPT-9"]' and "developer/model" in (info.value.finding.hint or "")


# --- issue 33: the unnamed first column, a judge, rows to skip, the pinned schema ------------------

ALPACA_MAPPING = EXAMPLES / "mappings" / "alpaca_eval_leaderboard.mapping.yaml"


def _models_for(csv_path: Path, mapping: Path, out: Path) -> Path:
    """A --models file giving every name of the table's unnamed first column an id (the
    mapping names a few; the leaderboard's entrants have no known developer here)."""
    import csv

    known = load_mapping(mapping).ids
    lines = []
    with csv_path.open(newline="") as fh:
        for row in list(csv.reader(fh))[1:]:
            name = row[0]
            if name and name != "NullModel" and name not in known:
                slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
                lines.append(f"{json.dumps(name)}: alpaca-eval-entrant/{slug}")
    out.write_text("\n".join(lines) + "\n")
    return out


def test_a_mapping_naming_the_unnamed_first_column_converts_alpaca_eval_s_csv_unedited(tmp_path: Path) -> None:
    """Issue 33's acceptance: AlpacaEval 2.0's leaderboard as alpaca_eval publishes it (pandas'
    index as its first column, without a name), unedited: every row but NullModel, which the
    mapping skips and says why, becomes a valid record whose every score names its judge."""
    csv_path = reference("per-item", "alpaca_eval", "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv")
    assert csv_path.read_text().startswith(",win_rate,")  # the first column has no name
    models = _models_for(csv_path, ALPACA_MAPPING, tmp_path / "models.yaml")
    batch = table.convert(csv_path, Settings(mapping=ALPACA_MAPPING, model_ids=load_models_file(models)))
    rows = len(csv_path.read_text().strip().splitlines()) - 1
    assert len(batch.outputs) == rows - 1  # every row but NullModel
    assert not any(o.record["model_info"]["name"] == "NullModel" for o in batch.outputs)
    (note,) = batch.notes
    assert "'NullModel' left out, as the mapping says: NullModel names no model" in note
    errors, _warnings = validate_planned(plan(batch))
    assert not errors, [f.one_line() for f in errors[:5]]
    by_model = {o.record["model_info"]["id"]: o.record for o in batch.outputs}
    gpt4o = by_model["openai/gpt-4o-2024-05-13"]
    results = {r["metric_config"]["metric_id"]: r for r in gpt4o["evaluation_results"]}
    assert set(results) == {
        "alpaca_eval.length_controlled_win_rate",
        "alpaca_eval.win_rate",
        "alpaca_eval.discrete_win_rate",
    }
    for result in results.values():
        scoring = result["metric_config"]["llm_scoring"]
        assert scoring["judges"][0]["model_info"]["id"] == "openai/gpt-4-1106-preview"
        assert scoring["additional_details"] == {"judge_name": "weighted_alpaca_eval_gpt4_turbo"}
    win = results["alpaca_eval.win_rate"]["score_details"]
    assert 0 < win["score"] < 100 and win["uncertainty"]["standard_error"]["value"] > 0
    lc = results["alpaca_eval.length_controlled_win_rate"]["score_details"]
    assert 0 < lc["score"] < 100 and "uncertainty" not in lc  # the table leaves its standard error empty


def load_models_file(path: Path) -> dict[str, str]:
    from eee.convert.mapping import load_models

    return load_models(path)


def test_the_unnamed_column_called_as_pandas_reads_it_back_is_explained(tmp_path: Path) -> None:
    table_path = tmp_path / "board.csv"
    table_path.write_text(",win_rate\nacme/widget-7b,50.0\n")
    text = ALPACA_MAPPING.read_text().replace('column: ""', 'column: "Unnamed: 0"')
    mapping = tmp_path / "board.mapping.yaml"
    mapping.write_text(text)
    findings = _refusal(lambda: table.convert(table_path, Settings(mapping=mapping)))
    assert findings[0].pointer == "$.model.column"
    assert 'name it column: ""' in (findings[0].hint or "")


def test_a_skip_entry_that_names_no_row_is_a_warning_and_skips_by_column(tmp_path: Path) -> None:
    table_path = tmp_path / "board.csv"
    table_path.write_text(",win_rate,mode\nacme/widget-7b,50.0,verified\nacme/other-1b,40.0,dev\n")
    mapping = tmp_path / "board.mapping.yaml"
    mapping.write_text(
        "benchmark: board\nsource: {name: a board, type: documentation, organization: someone}\n"
        'model: {column: ""}\n'
        "skip:\n"
        "  - {column: mode, value: dev, why: rows in development}\n"
        "  - {model: nobody/none, why: a row that is not there}\n"
        "metrics:\n  - {column: win_rate, id: win_rate, direction: higher, min: 0, max: 100, unit: percent}\n"
    )
    batch = table.convert(table_path, Settings(mapping=mapping))
    assert [o.record["model_info"]["id"] for o in batch.outputs] == ["acme/widget-7b"]
    assert any("'acme/other-1b' left out, as the mapping says: rows in development" in n for n in batch.notes)
    (warning,) = batch.warnings
    assert warning.pointer == "$.skip[1]" and "no row of" in warning.message


@pytest.mark.parametrize(
    ("text", "pointer", "line", "message"),
    [
        (
            "benchmark: b\nsource: {name: s, type: documentation, organization: o}\nmodel: {column: m}\nmetrics: []\n",
            "$.metrics",
            4,
            "[] has less than 1 item",
        ),
        (
            "benchmark: b\nsource:\n  name: s\n  type: documentation\n  organisation: o\n",
            "$.source.organisation",
            5,
            "unknown key 'organisation'",
        ),
        (
            "benchmark: b\nsource: {name: s, type: documentation, organization: o}\nmodel: {column: m}\n"
            "judge: {id: not-an-id, prompt: p}\nmetrics:\n  - {column: a, id: a, direction: higher, min: 0, max: 1, unit: x}\n",
            "$.judge.id",
            4,
            "does not match",
        ),
        (
            "benchmark: b\nsource: {name: s, type: documentation, organization: o}\nmodel: {column: m}\n"
            "skip:\n  - {why: nothing named}\n"
            "metrics:\n  - {column: a, id: a, direction: higher, min: 0, max: 1, unit: x}\n",
            "$.skip[0]",
            5,
            "names a model, or a column and its value",
        ),
    ],
)
def test_the_pinned_schema_names_the_mapping_s_line(
    tmp_path: Path, text: str, pointer: str, line: int, message: str
) -> None:
    path = tmp_path / "m.mapping.yaml"
    path.write_text(text)
    with pytest.raises(MappingError) as info:
        load_mapping(path)
    finding = info.value.finding
    assert (finding.pointer, finding.line) == (pointer, line), finding.one_line()
    assert message in finding.message, finding.one_line()
    assert finding.one_line().startswith(f"{finding.file}:{line}::{pointer}: ")


def test_the_mapping_schema_is_pinned_and_every_shipped_mapping_follows_it() -> None:
    from eee.store.schemas import default_registry

    pins = default_registry().pinned_files()
    assert "mappings/table.schema.json" in pins
    for path in [*MAPPINGS.glob("*.mapping.yaml"), ALPACA_MAPPING]:
        load_mapping(path)  # through the schema
