"""``eee migrate`` streams: one record at a time, its report written as it goes, no per-record state.

The report, the JSON output and the text output are compared with what the export wrote
when it kept every outcome and built the whole report in memory (the former code is
restated here as the reference); the inputs with what planning from the validator's
``collect`` gave, over every shape of input.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import EXAMPLES, FIXED_UUID, record_of, write_json
from eee.commands.migrate import closing_line, main
from eee.migrate import export as export_module
from eee.migrate.export import Folders, export
from eee.migrate.inputs import ORPHAN_UNIT, RECORD_UNIT, Inputs
from eee.migrate.report import (
    MIGRATED,
    REFUSED,
    REPORT_FORMAT,
    REPORT_NAME,
    UNCHANGED,
    ExportReport,
    Outcome,
    reason_class,
)
from eee.reporting.findings import ERROR, WARNING, FileResult, Summary
from eee.reporting.reporters import render
from eee.store.paths import file_kind, record_path_for_sidecar
from eee.validation.collect import collect
from test_migrate_cli import AGENTIC_DIR, AGENTIC_UUID, _store

# ---------------------------------------------------------------------------- the former code, as reference


def former_report(outcomes: list[Any], out: Path, target: str) -> dict[str, Any]:
    """The report as the export built it in memory from every outcome (before it streamed)."""
    by_source: dict[str, int] = {}
    by_check: dict[str, int] = {}
    by_reason: dict[str, int] = {}
    for o in outcomes:
        if o.source:
            by_source[o.source] = by_source.get(o.source, 0) + 1
        if o.status == REFUSED and o.reason:
            first = next(f for f in o.findings if f.severity == ERROR)
            by_check[first.check] = by_check.get(first.check, 0) + 1
            key = reason_class(o.reason)
            by_reason[key] = by_reason.get(key, 0) + 1
    sidecars = [o.sidecar for o in outcomes if o.sidecar]
    summary = {
        "records": sum(1 for o in outcomes if o.kind == "record"),
        MIGRATED: sum(1 for o in outcomes if o.status == MIGRATED),
        UNCHANGED: sum(1 for o in outcomes if o.status == UNCHANGED),
        REFUSED: sum(1 for o in outcomes if o.status == REFUSED),
        "sidecars": len(sidecars),
        "sidecar_rows": sum(s.get("rows") or 0 for s in sidecars),
        "warnings": sum(1 for o in outcomes for f in o.findings if f.severity == WARNING),
        "by_source_version": dict(sorted(by_source.items())),
        "refused_by_check": dict(sorted(by_check.items())),
        "refused_by_reason": dict(sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))),
    }
    return {
        "format": REPORT_FORMAT,
        "target": target,
        "output": str(out),
        "summary": summary,
        "exit_code": 1 if summary[REFUSED] else 0,
        "records": [o.to_dict() for o in outcomes],
    }


def former_plan(paths: list[str]) -> list[tuple[str, str]]:
    """The inputs as planned from collect's whole list: records in order, sidecars without a record last."""
    found = collect(paths)
    records: list[tuple[str, str]] = []
    orphans: list[tuple[str, str]] = []
    seen: set[str] = set()
    for absolute in found.files:
        kind = file_kind(absolute)
        if kind == "sidecar":
            record = record_path_for_sidecar(absolute)
            if not os.path.exists(record):
                orphans.append((ORPHAN_UNIT, absolute))
                continue
            absolute = record
        elif kind != "record":
            continue
        if absolute not in seen:
            seen.add(absolute)
            records.append((RECORD_UNIT, absolute))
    return records + orphans


# ---------------------------------------------------------------------------- stores


def _with_problems(root: Path) -> Path:
    """The CLI tests' store plus a refused record, a refused sidecar, an orphan and a record with only a pointer."""
    store = _store(root)
    bad = store / "data" / "mmlu" / "acme" / "widget-7b" / "6e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b.json"
    write_json(bad, json.loads((EXAMPLES / "migration" / "refused" / "score_below_min.json").read_text()))
    (bad.parent / "6e1f2a3b-4c5d-4e6f-8a7b-000000000000_samples.jsonl").write_text("{}\n")  # no record beside it
    sidecar = store / AGENTIC_DIR / f"{AGENTIC_UUID}_samples.jsonl"
    other = store / "data" / "agent-bench" / "acme" / "widget-8b"
    shutil.copytree(sidecar.parent, other)
    (other / sidecar.name).rename(other / f"{sidecar.name}.dvc")  # the sidecar kept in DVC only: a warning
    with sidecar.open("a") as fh:
        fh.write((EXAMPLES / "migration" / "refused" / "row_moved_key_taken.jsonl").read_text())
    (store / "data" / "gpqa" / "acme" / "widget-70b" / "broken.json").write_text('{"schema_version": ')
    return store


def _watch_outcomes(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every outcome the export adds to its report, kept here (the export itself keeps none)."""
    kept: list[Any] = []
    add = ExportReport.add

    def keep(self: ExportReport, outcome: Any) -> None:
        kept.append(outcome)
        add(self, outcome)

    monkeypatch.setattr(ExportReport, "add", keep)
    return kept


# ---------------------------------------------------------------------------- the report


@pytest.mark.parametrize("fmt", ["json", "rich", "github"])
def test_the_streamed_report_and_output_are_what_the_whole_report_gave(
    tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _with_problems(tmp_path / "store")
    outcomes = _watch_outcomes(monkeypatch)
    out = tmp_path / "out"
    assert main([str(store), "--out", str(out), "--format", fmt]) == 1
    printed = capsys.readouterr().out
    whole = former_report(outcomes, out, "0.3.0")
    assert [o["status"] for o in whole["records"]].count(REFUSED) == 4, "the store has refusals of every kind"
    assert whole["summary"]["warnings"] == 1
    assert (out / REPORT_NAME).read_bytes() == orjson.dumps(whole, option=orjson.OPT_INDENT_2) + b"\n"
    if fmt == "json":
        assert printed == json.dumps(whole, indent=2, ensure_ascii=False) + "\n"
    else:
        monkeypatch.undo()  # the outcomes are all kept; from here on, the code as it stands
        results = [FileResult(o.file, o.kind, o.source, findings=o.findings) for o in outcomes]
        render(Summary(results), fmt, what="record")
        report = ExportReport(out, "0.3.0")
        for o in outcomes:
            report.add(o)
        print(closing_line(report))
        report.close()
        assert printed == capsys.readouterr().out
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == [], "no spool or temporary file is left"


def test_a_run_with_nothing_to_migrate_writes_an_empty_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "store" / "data" / "b" / "d" / "m"
    folder.mkdir(parents=True)
    (folder / f"{FIXED_UUID}_samples.jsonl.dvc").write_text("outs: []\n")  # a pointer: nothing to migrate
    out = tmp_path / "out"
    assert main([str(tmp_path / "store"), "--out", str(out), "--format", "json"]) == 0
    whole = former_report([], out, "0.3.0")
    assert (out / REPORT_NAME).read_bytes() == orjson.dumps(whole, option=orjson.OPT_INDENT_2) + b"\n"
    assert capsys.readouterr().out == json.dumps(whole, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------- no per-record state


def test_many_records_leave_no_outcome_or_path_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    for i in range(150):
        folder = store / "data" / f"bench-{i % 3}" / "acme" / f"model-{i}"
        write_json(folder / f"00000000-0000-4000-8000-{i:012x}.json", record_of(f"acme/model-{i}"))
    refused = store / "data" / "bench-0" / "acme" / "model-0" / f"{FIXED_UUID}.json"
    write_json(refused, record_of("acme/model-0", score=-5.0))
    exporters: list[Any] = []
    init = export_module._Exporter.__init__

    def watch(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        exporters.append(self)

    monkeypatch.setattr(export_module._Exporter, "__init__", watch)
    report = export([store / "data"], tmp_path / "out")
    gc.collect()
    assert report.units == 151 and report.count(REFUSED) == 1
    assert [o for o in gc.get_objects() if isinstance(o, Outcome)] == [], "every outcome is dropped once written"
    assert [r.file for r in report.problems] == [str(refused)], "only the findings of a refused record are kept"
    (exporter,) = exporters
    assert exporter.claimed == set(), "copies of one store's records are not remembered"
    assert len(exporter.made) <= Folders.KEEP < 150


def test_copies_that_would_meet_are_still_refused(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    rel = Path("data") / "b" / "acme" / "m" / f"{FIXED_UUID}.json"
    write_json(one / rel, record_of("acme/m"))
    write_json(two / rel, record_of("acme/m"))
    (tmp_path / "loose").mkdir()
    shutil.copyfile(one / rel, tmp_path / "loose" / "x.json")
    shutil.copyfile(one / rel, tmp_path / "x.json")
    report = export([one / "data", two / "data"], tmp_path / "out")  # two stores: every copy is claimed
    assert (report.count(MIGRATED) + report.count(UNCHANGED), report.count(REFUSED)) == (1, 1)
    assert "another input is also copied to data/b/acme/m" in report.problems[0].findings[0].message
    report = export([tmp_path / "loose" / "x.json", tmp_path / "x.json"], tmp_path / "out2")  # loose: by name
    assert report.count(REFUSED) == 1 and report.problems[0].file.endswith("x.json")


def test_folders_known_to_exist_keep_the_latest() -> None:
    known = Folders()
    for i in range(Folders.KEEP + 10):
        known.add(Path(f"/f/{i}"))
    assert len(known) == Folders.KEEP
    assert Path("/f/0") not in known and Path(f"/f/{Folders.KEEP + 9}") in known
    known.discard(Path(f"/f/{Folders.KEEP + 9}"))
    assert Path(f"/f/{Folders.KEEP + 9}") not in known


# ---------------------------------------------------------------------------- the inputs


def _odd_store(root: Path) -> Path:
    """Records, sidecars, pointers, orphans, links, hidden folders, events, and folders whose
    names sort between a record and its sidecar, or after the record only as a folder."""
    store = _with_problems(root)
    folder = store / AGENTIC_DIR
    between = folder / f"{AGENTIC_UUID}.json.d"  # sorts after the record, before its sidecar
    write_json(between / f"{FIXED_UUID}.json", record_of("acme/between"))
    (between / f"{FIXED_UUID}_samples.jsonl").write_text("{}\n")
    write_json(folder / AGENTIC_UUID / f"{FIXED_UUID}.json", record_of("acme/x"))  # "uuid/" sorts after "uuid.json"
    write_json(store / "data" / ".hidden" / "acme" / "m" / f"{FIXED_UUID}.json", record_of("acme/hidden"))
    (folder / "11111111-2222-4333-8444-555555555555.json").symlink_to(f"{AGENTIC_UUID}.json")
    events = store / "governance" / "events"
    events.mkdir(parents=True)
    (events / "e1.yaml").write_text("kind: flag\n")
    (events / "e1_samples.jsonl").write_text("{}\n")
    loose = root / "loose"
    loose.mkdir()
    shutil.copyfile(folder / f"{AGENTIC_UUID}.json", loose / "a.json")
    shutil.copyfile(folder / f"{AGENTIC_UUID}_samples.jsonl", loose / "a_samples.jsonl")
    (loose / ".hidden").mkdir()
    write_json(loose / ".hidden" / "b.json", record_of("acme/b"))
    (loose / "notes.txt").write_text("not a record\n")
    return store


def _shapes(root: Path, store: Path) -> list[list[str]]:
    sidecar = str(store / AGENTIC_DIR / f"{AGENTIC_UUID}_samples.jsonl")
    return [
        [str(store)],
        [str(store / "data")],
        [str(store / "data") + "/"],
        [str(store / AGENTIC_DIR)],
        [sidecar],
        [sidecar, str(store / AGENTIC_DIR / f"{AGENTIC_UUID}.json")],
        [str(store / AGENTIC_DIR), str(store / "data"), str(store)],
        [str(store / "data" / "*" / "acme" / "*")],
        [str(store / "data" / "**")],
        [str(store / "governance")],
        [str(root / "loose")],
        [str(root / "loose" / "a_samples.jsonl"), str(root / "loose" / "a.json")],
        [str(root / "loose"), str(store / "data" / "mmlu")],
    ]


def test_the_inputs_are_what_planning_from_collect_gave(tmp_path: Path) -> None:
    store = _odd_store(tmp_path)
    for paths in _shapes(tmp_path, store):
        inputs = Inputs(paths)
        assert list(inputs) == former_plan(paths), paths
        assert not inputs.problems, paths
    here = os.getcwd()
    try:
        os.chdir(store)  # relative paths
        for paths in (["data"], ["./data/../data"], ["data/agent-bench", "data"]):
            assert list(Inputs(paths)) == former_plan(paths), paths
    finally:
        os.chdir(here)


def test_a_problem_with_the_inputs_is_seen_where_collect_sees_one(tmp_path: Path) -> None:
    store = _odd_store(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty-glob").mkdir()
    for paths in (
        [str(store / "nowhere")],
        [str(store / "data"), str(store / "no*match")],
        [str(tmp_path / "empty")],
        [str(store / "data"), str(tmp_path / "empty")],
        [str(tmp_path / "empty-*")],  # a glob's empty folder is no problem
        [str(tmp_path / "loose" / ".hidden")],
    ):
        inputs = Inputs(paths)
        list(inputs)
        assert inputs.problems == bool(collect(paths).problems), paths


def test_the_walk_lists_a_folder_when_it_reaches_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    first = write_json(store / "data" / "a" / "acme" / "m" / f"{FIXED_UUID}.json", record_of("acme/m"))
    there = write_json(store / "data" / "b" / "acme" / "m" / f"{FIXED_UUID}.json", record_of("acme/m"))
    units = iter(Inputs([str(store / "data")]))
    assert next(units) == (RECORD_UNIT, str(first))
    later = write_json(there.with_name("00000000-0000-4000-8000-000000000001.json"), record_of("acme/m"))
    assert list(units) == [(RECORD_UNIT, str(later)), (RECORD_UNIT, str(there))], "listed when reached"
