"""Near misses, line numbers and the benchmark folder check, below the example files.

The example files (tests/examples/aggregate/{invalid,warning}, instance/{invalid,warning})
drive the validator end to end; these tests pin the parts: which places of a schema are
open objects, the screen that keeps the clean path as fast as before, the edit distance,
the JSON-path -> line lookup and the benchmark name normalisation, on the real records
of the reference material where it is present.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import EXAMPLES, PROJECT, real_records, reference, reference_or_none
from eee.rules.record import (
    benchmark_findings,
    main_folder,
    names_match,
)
from eee.rules.schema import Shape, edit_distance, near_misses, screen, shape_of, suggest
from eee.store.paths import classify
from eee.store.schemas import EVAL, INSTANCE, default_registry
from eee.store.strictjson import path_lines

REG = default_registry()


def _unknown_keys(value: Any, shape: Shape | None, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key of an open object that its place does not declare (near miss or not)."""
    if shape is None:
        return []
    out: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        if shape.open:
            out += [(*path, k) for k in value if k not in shape.names]
        for k, v in value.items():
            out += _unknown_keys(v, shape.props.get(k) or shape.extra, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _unknown_keys(v, shape.items, (*path, i))
    return out


def _open_places(value: Any, shape: Shape | None, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if shape is None:
        return []
    out: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        if shape.open:
            out.append(path)
        for k, v in value.items():
            out += _open_places(v, shape.props.get(k) or shape.extra, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _open_places(v, shape.items, (*path, i))
    return out


def _records(examples: str = "*") -> list[dict[str, Any]]:
    """Records at hand: the example files (``examples``: a glob below tests/examples/aggregate),
    the store's own and the reference records (where present)."""
    paths = sorted((EXAMPLES / "aggregate").glob(f"{examples}/*.json")) + sorted(
        p for p in (PROJECT / "data").rglob("*.json") if p.is_file()
    )
    records = reference_or_none("records")
    if records is not None:
        paths += sorted(p for p in records.rglob("*.json") if p.is_file())
    out = []
    for path in paths:
        try:
            doc = orjson.loads(path.read_bytes())
        except orjson.JSONDecodeError:
            continue
        if isinstance(doc, dict) and REG.resolve(doc.get("schema_version"), EVAL):
            out.append(doc)
    return out


def _rows() -> list[dict[str, Any]]:
    out = []
    for path in sorted((EXAMPLES / "instance").rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(row, dict) and REG.resolve(row.get("schema_version"), INSTANCE):
                out.append(row)
    return out


# --- which places are open -------------------------------------------------------------------


def test_open_objects_are_read_from_the_schema() -> None:
    shape = shape_of(REG, "0.3.0", EVAL)
    assert not shape.open  # the top level is closed: an unknown key there is an error already
    assert shape.props["model_info"].open  # through $ref
    assert "inference_platform" in shape.props["model_info"].names
    result = shape.props["evaluation_results"].items
    assert result is not None and result.open
    assert result.props["metric_config"].open
    assert {"min_score", "max_score", "level_names"} <= result.props["metric_config"].names
    source = result.props["source_data"]
    assert source.open and {"url", "hf_repo", "dataset_name"} <= source.names  # the oneOf branches, together
    # free-form maps: values declared by additionalProperties, keys never near misses
    assert not shape.props["model_info"].props["additional_details"].open
    assert not result.props["metric_config"].props["metric_parameters"].open
    assert not result.props["generation_config"].props["additional_details"].open
    # a closed object (generation_args) is not open: its unknown keys are schema errors
    assert not result.props["generation_config"].props["generation_args"].open


@pytest.mark.parametrize("version", sorted(REG.versions))
@pytest.mark.parametrize("kind", [EVAL, INSTANCE])
def test_every_version_declares_open_objects(version: str, kind: str) -> None:
    shape = shape_of(REG, version, kind)
    assert shape.live


def test_the_screen_accepts_exactly_the_valid_documents_without_unknown_keys() -> None:
    """The clean path validates with the screen only, so it must never let a near miss through
    nor refuse a clean document: checked on every record and row at hand, and on each of them
    with an unknown key put into its open objects."""
    checked = mutated = 0
    for kind, docs in ((EVAL, _records()), (INSTANCE, _rows())):
        for doc in docs:
            version = REG.resolve(doc["schema_version"], kind)
            assert version
            shape, validator, screened = (
                shape_of(REG, version, kind),
                REG.validator(version, kind),
                screen(REG, version, kind),
            )
            valid = validator.is_valid(doc)
            assert screened.is_valid(doc) == (valid and not _unknown_keys(doc, shape))
            checked += 1
            if not valid:
                continue
            for place in _open_places(doc, shape)[:6]:
                copied = copy.deepcopy(doc)
                node = copied
                for part in place:
                    node = node[part]
                node["zz_not_declared"] = "x"
                assert validator.is_valid(copied)
                assert not screened.is_valid(copied), place
                mutated += 1
    assert checked > 20 and mutated > 20


# --- edit distance and suggestions -----------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "names", "expected"),
    [
        ("inference_platfrom", {"inference_platform", "inference_engine", "name"}, "inference_platform"),
        ("max_scor", {"max_score", "min_score", "metric_id"}, "max_score"),
        ("retrieved_timestmp", {"retrieved_timestamp", "evaluation_timestamp"}, "retrieved_timestamp"),
        ("standardError", {"standard_error", "standard_deviation"}, "standard_error"),
        ("Max-Tokens", {"max_tokens", "top_k"}, "max_tokens"),
        ("nmae", {"name", "id"}, "name"),
        ("notes", {"name", "id", "developer"}, None),  # not close to anything declared
        ("seed", {"score", "details"}, None),
        ("x", {"id"}, None),
    ],
)
def test_suggestions(key: str, names: set[str], expected: str | None) -> None:
    assert suggest(key, frozenset(names)) == expected


def test_edit_distance_counts_a_transposition_once() -> None:
    assert edit_distance("platfrom", "platform", 3) == 1
    assert edit_distance("max_scor", "max_score", 3) == 1
    assert edit_distance("abc", "xyz", 1) == 2  # stops once above the limit
    assert edit_distance("same", "same", 0) == 0


def test_near_misses_are_not_looked_for_in_free_form_maps() -> None:
    doc = json.loads((EXAMPLES / "aggregate" / "valid" / "v0.3.0_free_form_keys_like_fields.json").read_text())
    assert near_misses(doc, shape_of(REG, "0.3.0", EVAL)) == []
    details = doc["evaluation_results"][0]["score_details"]
    details["scor"] = details.pop("score")
    assert near_misses(doc, shape_of(REG, "0.3.0", EVAL)) == [
        (("evaluation_results", 0, "score_details", "scor"), "scor", "score")
    ]
    details["score"] = 0.5  # beside the field it resembles, a key is another key, not a misspelling
    assert near_misses(doc, shape_of(REG, "0.3.0", EVAL)) == []


def test_no_record_at_hand_has_a_near_miss() -> None:
    """The reference records, the store's own and the valid examples: a near-miss warning on
    any of them would be a false positive (none of them misspells a field)."""
    found = [
        (doc.get("evaluation_id"), hit)
        for doc in _records("valid")
        for hit in near_misses(doc, shape_of(REG, REG.resolve(doc["schema_version"], EVAL) or "", EVAL))
    ]
    assert found == []


# --- JSON path -> line -----------------------------------------------------------------------


def test_path_lines_finds_keys_items_and_the_nearest_ancestor() -> None:
    data = b"""{
  "a": {"b": [10,
              {"c": "x\\"y"}],
        "we\\"ird": 1},
  "list": [
    "first",
    [1, 2]
  ]
}
"""
    lines = path_lines(
        data,
        [
            "$.a",
            "$.a.b",
            "$.a.b[0]",
            "$.a.b[1].c",
            '$.a["we\\"ird"]',
            "$.list[1][1]",
            "$.a.missing.deeper",
            "$.nothing",
            "$",
        ],
    )
    assert lines == {
        "$.a": 2,
        "$.a.b": 2,
        "$.a.b[0]": 2,
        "$.a.b[1].c": 3,
        '$.a["we\\"ird"]': 4,
        "$.list[1][1]": 7,
        "$.a.missing.deeper": 2,  # not in the file: its nearest ancestor
    }


def test_path_lines_of_a_one_line_document() -> None:
    assert path_lines(b'{"a": [1, {"b": 2}]}', ["$.a[1].b"]) == {"$.a[1].b": 1}


def test_path_lines_survives_text_that_is_not_json() -> None:
    # no exception; the key "a" is still found on its line, the stray string "b" is no key
    assert path_lines(b'{"a": }}]] "b"', ["$.a", "$.b"]) == {"$.a": 1}


# --- the benchmark folder --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "name"),
    [
        ("mmlu", "mmlu:anatomy"),
        ("mmlu", "MMLU"),
        ("reward-bench", "RewardBench"),
        ("reward-bench", "RewardBench 2"),
        ("helm_mmlu", "MMLU All Subjects"),
        ("helm_lite", "helm_lite"),
        ("wikitext", "WikiText-2"),
        ("core-bench-hard", "CORE-Bench Hard"),
        ("livecodebenchpro", "Live Code Bench Pro"),
        ("gpqa_diamond", "GPQA"),
        ("pubmed_qa", "PubMedQA"),
    ],
)
def test_folder_names_match(folder: str, name: str) -> None:
    assert names_match(folder, name)


@pytest.mark.parametrize(
    ("folder", "name"),
    [("hellaswag", "GPQA"), ("mm", "mmlu"), ("math", "mathvista"), ("helm_lite", "helm_classic"), ("bench", "")],
)
def test_folder_names_differ(folder: str, name: str) -> None:
    assert not names_match(folder, name)


def _doc(dataset: str, evaluation: str = "accuracy", source: str = "inspect_ai") -> dict[str, Any]:
    return {
        "source_metadata": {"source_name": source},
        "evaluation_results": [{"evaluation_name": evaluation, "source_data": {"dataset_name": dataset}}],
    }


def _store_registry() -> Any:
    """The identity registry of the project's store (governance/identity/)."""
    from eee.store import identity
    from eee.store.tree import WorkTree

    return identity.read(WorkTree(PROJECT))


def test_the_registry_s_aliases_let_a_folder_be_named_differently_on_purpose() -> None:
    where = classify("data/ai2_arc/acme/widget/8e6f3a4e-4b7a-4d3e-9c1a-2b3c4d5e6f70.json")
    doc = _doc("arc_easy", "arc_easy")
    assert benchmark_findings(doc, "f", where, aliases={})  # ai2_arc does not spell arc_easy ...
    names = _store_registry()
    assert not benchmark_findings(doc, "f", where, registry=names)  # ... but the store's registry lists it for ai2_arc
    other = classify("data/hellaswag/acme/widget/8e6f3a4e-4b7a-4d3e-9c1a-2b3c4d5e6f70.json")
    (finding,) = benchmark_findings(doc, "f", other, registry=names)
    assert "it probably belongs in data/ai2_arc/" in finding.message  # the registry's folder is suggested
    assert finding.severity == "warning" and finding.check == "benchmark"


def test_an_existing_folder_is_suggested_before_a_new_one() -> None:
    where = classify("data/hellaswag/acme/widget/8e6f3a4e-4b7a-4d3e-9c1a-2b3c4d5e6f70.json")
    (finding,) = benchmark_findings(_doc("GPQA Diamond"), "f", where, aliases={}, folders=lambda: ["gpqa-diamond"])
    assert "data/gpqa-diamond/" in finding.message and "data/gpqa-diamond/acme/widget/" in (finding.hint or "")
    (finding,) = benchmark_findings(_doc("GPQA Diamond"), "f", where, aliases={}, folders=lambda: [])
    assert "data/gpqa-diamond/" in finding.message


def test_a_leaderboard_record_belongs_under_the_leaderboard_not_one_of_its_scenarios() -> None:
    doc = {
        "source_metadata": {"source_name": "helm_lite"},
        "evaluation_results": [
            {"evaluation_name": "Mean win rate", "source_data": {"dataset_name": "helm_lite"}},
            {"evaluation_name": "MMLU", "source_data": {"dataset_name": "MMLU"}},
            {"evaluation_name": "GSM8K", "source_data": {"dataset_name": "GSM8K"}},
        ],
    }
    under = classify("data/mmlu/acme/widget/8e6f3a4e-4b7a-4d3e-9c1a-2b3c4d5e6f70.json")
    assert benchmark_findings(doc, "f", under, aliases={})
    assert main_folder(doc) == "helm_lite"


def test_the_registry_s_benchmarks_are_documented_and_well_formed() -> None:
    from eee.store import identity

    names = _store_registry()
    assert names.problems == [] and names.files  # the project's registry reads clean
    assert names.benchmark_names()["ai2_arc"] and names.folder_prefixes
    for canonical, entry in names[identity.BENCHMARK].entries.items():
        assert canonical == canonical.strip() and entry.get("why")
    contributing = (PROJECT / "governance" / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "governance/identity/benchmarks.yaml" in contributing


def _folder_warnings(root: Path) -> tuple[int, list[str]]:
    count, warned = 0, []
    for path in sorted(root.glob("data/*/*/*/*.json")):
        if not path.is_file():
            continue
        doc = orjson.loads(path.read_bytes())
        rel = path.relative_to(root).as_posix()
        count += 1
        warned += [f.message for f in benchmark_findings(doc, rel, classify(rel))]
    return count, warned


def test_the_store_s_own_records_are_in_their_benchmark_folders() -> None:
    count, warned = _folder_warnings(PROJECT)
    assert count > 0 and warned == []


def test_the_reference_records_are_in_their_benchmark_folders() -> None:
    """746 real records of 8 benchmarks (HELM's helm_* leaderboards, RewardBench, ...):
    the folder check gives no warning on any of them."""
    count, warned = _folder_warnings(reference("records"))
    assert count >= 700 and warned == []


def test_a_real_record_moved_to_another_benchmark_is_caught() -> None:
    """A record of each benchmark of the real records (the reference's, else the store's own)."""
    by_folder: dict[str, Path] = {}
    for path in sorted(real_records().data.glob("*/*/*/*.json")):
        by_folder.setdefault(path.parts[-4], path)
    folders = sorted(by_folder)
    assert len(folders) >= 8, folders  # the reference's 746 records are of 8 benchmarks
    missed = []
    for own, path in by_folder.items():
        doc = orjson.loads(path.read_bytes())
        for other in folders:
            if other == own or {own, other} == {"helm_mmlu", "mmlu"}:
                continue
            rel = f"data/{other}/" + "/".join(path.parts[-3:])
            found = benchmark_findings(doc, rel, classify(rel), folders=lambda: folders)
            if not found or f"data/{own}/" not in found[0].message:
                missed.append((own, other))
    assert missed == []


def _all_pointers(node: Any, path: tuple[Any, ...] = ()) -> list[str]:
    from eee.store.jsonpath import format_path

    out = [format_path(list(path))] if path else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _all_pointers(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _all_pointers(v, (*path, i))
    return out


def test_the_canonical_shortcut_gives_the_lines_the_text_scan_gives() -> None:
    """For a file in the store's canonical form the lines come from the parsed document; they
    must be the lines a scan of the text finds, for every location of every record at hand."""
    from eee.store.strictjson import canonical

    checked = 0
    for doc in _records("valid")[:60]:
        data = canonical(doc)
        pointers = [*_all_pointers(doc), "$.evaluation_results[0].not_there.deeper"]
        scanned = path_lines(data, pointers)
        assert path_lines(data, pointers, doc) == scanned
        assert len(scanned) == len(pointers)
        checked += 1
    assert checked >= 5
    # a file in another form falls back to the scan
    doc = {"a": [1, {"b": 2}]}
    assert path_lines(b'{"a": [1,\n {"b": 2}]}', ["$.a[1].b"], doc) == {"$.a[1].b": 2}
