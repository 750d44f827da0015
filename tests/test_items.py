"""The items table (build/catalog/items), the catalogue's protocol and uncertainty columns,
and the DuckDB queries of docs/guide/catalogue.md, run on a store whose answers are known."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import duckdb
import pytest

from analysis_store import record_doc, uuid_of
from conftest import PROJECT
from eee.catalog.items import read_items
from eee.catalog.table import CATALOG_DIR, read_catalog, write_catalog
from eee.stats.intervals import wilson
from eee.store import items as item_rules

CLUSTERS = ("helpful_base", "koala", "oasst")


def _row(model: str, sid: str, score: float, **over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "schema_version": "0.3.0",
        "evaluation_id": "x",
        "model_id": model,
        "evaluation_name": "qa-bench",
        "evaluation_result_id": "qa:exact_match",
        "sample_id": sid,
        "interaction_type": "single_turn",
        "input": {"raw": f"question {sid}", "reference": ["a"]},
        "output": {"raw": ["a"]},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": "a",
                "extraction_method": "x",
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": score, "is_correct": score >= 0.5},
        "error": None,
        "metadata": {"dataset": CLUSTERS[int(sid[1:]) % 3]},
    }
    row.update(over)
    return row


def _place(
    store: Path,
    n: int,
    model: str,
    rows: list[dict[str, Any]] | None,
    score: float | None = None,
    config: dict[str, Any] | None = None,
    uncertainty: dict[str, Any] | None = None,
    clustered: bool = False,
) -> str:
    uuid = uuid_of(n)
    developer, name = model.split("/")
    folder = store / "data" / "qa-bench" / developer / name
    folder.mkdir(parents=True, exist_ok=True)
    scored = [r["evaluation"]["score"] for r in rows or []]
    doc = record_doc(model, "inspect_ai", score if score is not None else sum(scored) / max(1, len(scored)))
    result = doc["evaluation_results"][0]
    result["metric_config"].update(config or {})
    if uncertainty is not None:
        result["score_details"]["uncertainty"] = uncertainty
    if rows is None:
        doc.pop("detailed_evaluation_results", None)
    else:
        rel = f"data/qa-bench/{developer}/{name}/{uuid}_samples.jsonl"
        doc["detailed_evaluation_results"].update(file_path=rel, total_rows=len(rows))
        if clustered:
            doc["detailed_evaluation_results"]["additional_details"] = {"cluster_key": "dataset"}
        (store / rel).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / f"{uuid}.json").write_text(json.dumps(doc))
    return uuid


def test_error_classes_items_and_clusters_are_read_one_way() -> None:
    row = _row("a/b", "s1", 0.0)
    assert item_rules.error_class(row) is None  # a wrong answer is a score, not an error
    assert item_rules.error_class({**row, "error": "RuntimeError('No services started.')"}) == "infrastructure"
    assert item_rules.error_class({**row, "error": "The response was blocked by the content filter"}) == "content"
    assert item_rules.error_class({**row, "error": "model refused to answer"}) == "content"
    assert item_rules.error_class({**row, "answer_attribution": []}) == "format"
    invalid = [{**row["answer_attribution"][0], "extracted_value": "[invalid]"}]
    assert item_rules.error_class({**row, "answer_attribution": invalid}) == "format"  # lm-eval's filters
    right = {**row, "answer_attribution": [], "evaluation": {"score": 1.0, "is_correct": True}}
    assert item_rules.error_class(right) is None
    assert item_rules.item_id({"sample_id": 7}) == "7" and item_rules.item_id({"sample_hash": "h"}) == "h"
    assert (
        item_rules.cluster_key_of({"detailed_evaluation_results": {"additional_details": {"cluster_key": "dataset"}}})
        == "dataset"
    )
    assert item_rules.cluster_of(row, "dataset") == "koala" and item_rules.cluster_of(row, None) is None
    usage = item_rules.usage(
        {
            **row,
            "token_usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12},
            "performance": {"latency_ms": 40.5},
            "metadata": {"judge_cost_usd": "0.01", "judge_latency_ms": "163.3"},
        }
    )
    assert usage == {
        "input_tokens": 5,
        "output_tokens": 7,
        "total_tokens": 12,
        "latency_ms": 40.5,
        "cost_usd": None,
        "judge_cost_usd": 0.01,
        "judge_latency_ms": 163.3,
    }


def test_the_items_table_holds_every_row_of_active_records(tmp_path: Path) -> None:
    store = tmp_path / "store"
    rows = [
        _row("acme/m", "s1", 1.0, token_usage={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}),
        _row("acme/m", "s2", 0.0, error="TimeoutError: the sandbox did not answer", answer_attribution=[]),
        _row("acme/m", "s3", 0.0, answer_attribution=[]),
        _row("acme/m", "s4", 1.0),
        _row("acme/m", "s4", 0.0),  # a repeated sample of s4
    ]
    active = _place(store, 1, "acme/m", rows, clustered=True)
    retracted = _place(store, 2, "acme/m", rows[:2])
    from eee.governance.events import make_event, write

    write(store, make_event("retract", retracted, "wrong run", {"name": "M", "email": "m@example.org"}))
    done = write_catalog(store, store / CATALOG_DIR)
    assert done.items == 5
    table = read_items(store / CATALOG_DIR / "items").to_pylist()
    assert {r["record_uuid"] for r in table} == {active}  # a retracted record's items do not count
    by = [(r["item_id"], r["sample_index"], r["score"], r["error_class"], r["cluster"]) for r in table]
    assert by == [
        ("s1", 0, 1.0, None, "koala"),
        ("s2", 0, 0.0, "infrastructure", "oasst"),
        ("s3", 0, 0.0, "format", "helpful_base"),
        ("s4", 0, 1.0, None, "koala"),
        ("s4", 1, 0.0, None, "koala"),
    ]
    assert table[0]["input_tokens"] == 3 and table[0]["total_tokens"] == 7 and table[1]["input_tokens"] is None
    results = read_catalog(store / CATALOG_DIR).to_pylist()
    assert {r["record_uuid"]: r["protocol_id"] for r in results}[active] == table[0]["protocol_id"]
    assert all(r["protocol_id"] and r["protocol_benchmark"] == "qa-bench" for r in results)


def _one(store: Path, uuid: str) -> dict[str, Any]:
    return next(r for r in read_catalog(store / CATALOG_DIR).to_pylist() if r["record_uuid"] == uuid)


def test_every_row_carries_an_uncertainty_with_its_source(tmp_path: Path) -> None:
    store = tmp_path / "store"
    binary = [_row("acme/items", f"s{i}", float(i % 4 != 0)) for i in range(40)]  # 30 of 40
    percent = {"min_score": 0, "max_score": 100, "metric_unit": "percent"}
    uuids = {
        "record": _place(
            store, 1, "acme/record", binary, uncertainty={"standard_error": {"value": 0.05, "method": "analytic"}}
        ),
        "items": _place(store, 2, "acme/items", binary),
        "percent": _place(store, 3, "acme/percent", binary, score=75.0, config=percent),
        "clustered": _place(store, 4, "acme/clustered", binary, clustered=True),
        "disagree": _place(store, 5, "acme/disagree", binary, score=0.95, uncertainty={"num_samples": 40}),
        "count": _place(store, 6, "acme/count", None, score=0.75, uncertainty={"num_samples": 200}),
        "none": _place(
            store, 7, "acme/none", None, score=0.6, config={"metric_id": "f1"}, uncertainty={"num_samples": 200}
        ),
        "bare": _place(store, 8, "acme/bare", None, score=0.6),
        # a sidecar of 40 of the run's 100 samples describes those 40, not the run
        "partial": _place(store, 9, "acme/partial", binary, uncertainty={"num_samples": 100}),
        "edge": _place(store, 10, "acme/edge", None, score=0.97, uncertainty={"standard_error": {"value": 0.05}}),
    }
    write_catalog(store, store / CATALOG_DIR)
    rows = {name: _one(store, uuid) for name, uuid in uuids.items()}
    assert {n: r["uncertainty_source"] for n, r in rows.items()} == {
        "record": "record",
        "items": "items",
        "percent": "items",
        "clustered": "items",
        "disagree": "none",  # items that do not give the score: no interval at all, not even from the count
        "count": "count",
        "none": "none",  # an F1 is bounded, not a proportion
        "bare": "none",  # neither items nor a count: no interval is invented
        "partial": "count",
        "edge": "record",
    }
    r = rows["record"]
    assert r["se"] == 0.05 and r["ci_low"] == pytest.approx(0.75 - 1.959964 * 0.05) and r["ci_level"] == 0.95
    r = rows["items"]
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(wilson(30, 40)) and r["uncertainty_method"] == "wilson"
    assert r["n_items"] == 40 and r["items_agree"] is True
    r = rows["percent"]  # items on [0, 1] behind a percent score: scaled by 100
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(tuple(100 * x for x in wilson(30, 40)))
    assert rows["clustered"]["uncertainty_method"].endswith("3 clusters")
    r = rows["disagree"]
    assert r["items_agree"] is False and r["items_score"] == pytest.approx(0.75) and r["se"] is None
    assert "withheld" in r["uncertainty_method"] and "0.95" in r["items_note"] and "40 items" in r["items_note"]
    r = rows["count"]  # Wilson from the count: 150 of 200
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(wilson(150, 200)) and r["se"] == pytest.approx(
        math.sqrt(0.75 * 0.25 / 200)
    )
    assert all(rows[n]["se"] is None and rows[n]["ci_low"] is None for n in ("none", "bare"))
    # a partial sidecar is not checked (None), and says why
    assert rows["partial"]["items_agree"] is None and rows["partial"]["n_items"] == 40
    assert "partial sidecar" in rows["partial"]["items_note"]
    assert (rows["partial"]["ci_low"], rows["partial"]["ci_high"]) == pytest.approx(wilson(75, 100))
    r = rows["edge"]  # the normal interval of a standard error, cut to the score's bounds
    assert r["ci_high"] == 1.0 and r["ci_low"] == pytest.approx(0.97 - 1.959964 * 0.05) and r["se"] == 0.05


def _queries() -> dict[str, str]:
    """The python blocks of docs/guide/catalogue.md that start with ``# query: NAME``."""
    text = (PROJECT / "docs" / "guide" / "catalogue.md").read_text()
    blocks = re.findall(r"```python\n(# query: ([\w-]+)\n.*?)```", text, re.S)
    return {name: body for body, name in blocks}


def test_the_guide_s_duckdb_queries_answer_on_a_known_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    queries = _queries()
    assert set(queries) == {"newly-failed", "flips", "by-cluster"}
    store = tmp_path / "store"
    a, b = "openai/gpt-3.5-turbo-1106", "openai/gpt-3.5-turbo-1106_concise"
    right_a = [1, 1, 0, 1, 0, 1, 1, 0, 1]
    right_b = [1, 0, 0, 1, 1, 0, 1, 0, 1]  # s1 and s5 newly failed; s4 newly passed
    _place(store, 1, a, [_row(a, f"s{i}", float(x)) for i, x in enumerate(right_a)], clustered=True)
    b_rows = [_row(b, f"s{i}", float(x)) for i, x in enumerate(right_b)]
    b_rows[2] = _row(b, "s2", 0.0, error="ConnectionError: the API timed out")  # A wrong, B failed: not B's
    b_rows[0] = _row(b, "s0", 0.0, error="HTTP 503 from the provider")  # A right, B failed: not newly failed
    b_rows.append(_row(b, "s9", 0.0))  # an item only B has
    _place(store, 2, b, b_rows, clustered=True)
    _place(store, 3, a, [_row(a, f"s{i}", float(x)) for i, x in enumerate([1, 1, 1, 1, 0, 0, 1, 0, 1])])  # a rerun of A
    write_catalog(store, store / CATALOG_DIR)
    monkeypatch.chdir(store)
    scope: dict[str, Any] = {}
    exec(compile(queries["newly-failed"], "catalogue.md", "exec"), scope)
    assert [item for _protocol, item in scope["newly_failed"]] == ["s1", "s5"]
    exec(compile(queries["flips"], "catalogue.md", "exec"), scope)
    assert [(m, item, runs, right) for m, _p, item, runs, right in scope["flips"]] == [
        (a, "s2", 2, 1),
        (a, "s5", 2, 1),
    ]
    exec(compile(queries["by-cluster"], "catalogue.md", "exec"), scope)
    got = {(m, c): (acc, n) for m, _p, c, acc, n in scope["by_cluster"]}
    # A's two runs are two records of one model: each item's runs averaged, then items per cluster
    assert got[(a, "helpful_base")] == (pytest.approx((1 + 1 + 1) / 3), 3)  # s0, s3, s6: right in both runs
    assert got[(b, "koala")] == (pytest.approx(1 / 3), 3)  # s1 and s7 wrong, s4 right
    assert got[(b, "oasst")] == (pytest.approx(1 / 2), 2)  # s2 left out (an infrastructure error): s5, s8
    assert got[(b, "helpful_base")] == (pytest.approx(2 / 3), 3)  # s0 left out; s3, s6 and s9 (only B has it)


def test_the_items_query_reads_the_pipeline_output_as_duckdb_does(tmp_path: Path) -> None:
    store = tmp_path / "store"
    _place(store, 1, "acme/m", [_row("acme/m", f"s{i}", float(i % 2)) for i in range(6)])
    write_catalog(store, store / CATALOG_DIR)
    out = store / CATALOG_DIR
    count, mean = duckdb.sql(
        f"SELECT count(*), avg(score) FROM read_parquet('{out}/items/*/*.parquet', hive_partitioning = true, "
        "hive_types = {'benchmark': 'VARCHAR'}) WHERE benchmark = 'qa-bench'"
    ).fetchall()[0]
    assert (count, mean) == (6, 0.5)
    assert os.path.isdir(out / "items" / "benchmark=qa-bench")
