"""``eee validate FOLDER`` streamed: the store checked as it is walked, chunk after chunk, on
several workers, the report written as the chunks come back (issue 15). The report is the
one the one-process run of the whole list writes, byte for byte."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

import eee.reporting.reporters as report
import eee.validation.collect as collect
import eee.validation.pool as pool
import eee.validation.validate as validate
from conftest import PROJECT, git, load_example, make_store, place_record, place_with_sidecar
from eee.commands.validate import main as validate_main
from eee.reporting.findings import FileResult, Finding
from eee.reporting.reporters import json_bytes
from eee.store.tree import WorkTree
from eee.validation.flagged import summary_without_flagged


def _uuid(i: int) -> str:
    return str(uuid.UUID(int=i + 1, version=4))


def _fill(root: Path) -> None:
    """40 records over 15 folders, errors and warnings in several chunks of 3 records,
    sidecars good and bad, a pointer, files that belong nowhere."""
    for i in range(40):
        doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
        doc["model_info"]["id"] = f"org{i % 5}/model-{i % 3}"
        if i % 7 == 3:
            del doc["eval_library"]  # a schema error
        if i % 9 == 4:
            doc["evaluation_results"][0]["score_details"]["score"] = 0.5  # out of bounds
        if i % 11 == 5:
            doc["model_info"]["id"] = "elsewhere/model-x"  # folders that do not match: a warning
        benchmark = "bench" if i % 2 else "bench-b"
        path = place_record(root, doc, benchmark=benchmark, record_uuid=_uuid(i))
        if i % 11 == 5:
            target = root / "data" / benchmark / f"org{i % 5}" / f"model-{i % 3}" / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
    _record, sidecar = place_with_sidecar(root, b'{"not": "a row"}\n')
    folder = sidecar.parent
    (folder / f"{_uuid(97)}_samples.jsonl").write_text("{}\n")  # no record
    (folder / f"{_uuid(96)}_samples.jsonl.dvc").write_text("outs:\n- md5: abc\n  size: 0\n  path: x.jsonl\n")
    (root / "data" / "bench" / "org1" / "model-1" / f"{_uuid(95)}.json").write_text('{"a": 1, "a": 2}')
    (root / "data" / "bench" / "notes.txt").write_text("x")  # not a store file
    (root / "data" / "Bench").mkdir()
    (root / "data" / "Bench" / "stray.json").write_text("{}")  # a case clash, a wrong depth


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "store"
    shutil.copytree(PROJECT / "schemas", root / "schemas")
    _fill(root)
    monkeypatch.setattr(pool, "CHUNK", 3)  # many chunks of whole folders
    monkeypatch.setattr(pool, "PARALLEL_MIN", 10)  # workers for a store this small
    monkeypatch.chdir(root)
    return root


def _cli(args: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, bytes, str, dict]:
    capsys.readouterr()
    code = validate_main([*args, "--out", str(out / "report.json"), "--metrics", str(out / "metrics.json")])
    stdout = capsys.readouterr().out
    return code, (out / "report.json").read_bytes(), stdout, json.loads((out / "metrics.json").read_text())


def test_workers_stream_the_one_process_report(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_process = validate.validate_tree(WorkTree(store), options=validate.Options(jobs=1))
    expected = json_bytes(one_process)  # the whole list, checked in this process, reported at the end
    head = json.loads(expected)
    assert head["summary"]["errors"] >= 8 and head["summary"]["warnings"] >= 2
    chunks_with_errors = {
        i // 3 for i, f in enumerate(x for x in head["files"] if x["kind"] == "record") if f["errors"]
    }
    assert len(chunks_with_errors) >= 4  # errors come back from several chunks

    for jobs in ("1", "2", "3"):
        out = tmp_path / f"jobs-{jobs}"
        code, written, stdout, metrics = _cli(
            [".", "--format", "json", "--no-progress", "--jobs", jobs, "--exit-zero"], out, capsys
        )
        assert code == 0
        assert written == expected, jobs
        assert stdout.encode() == expected
        assert metrics["errors"] == head["summary"]["errors"] and metrics["files"] == head["summary"]["files"]
    # the default (the machine's cores once PARALLEL_MIN files are seen) and the exit code
    code, written, _, _ = _cli([".", "--format", "json", "--no-progress"], tmp_path / "default", capsys)
    assert code == 1 and written == expected


def test_the_text_formats_stream_too(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = validate.validate_tree(WorkTree(store), options=validate.Options(jobs=1))
    for fmt in ("rich", "github"):
        capsys.readouterr()
        report.render(summary, fmt)
        expected = capsys.readouterr().out
        assert validate_main([".", "--format", fmt, "--no-progress", "--jobs", "2"]) == 1
        assert capsys.readouterr().out == expected


def test_a_report_spooled_to_disk_is_the_same_valid_json(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = json_bytes(validate.validate_tree(WorkTree(store), options=validate.Options(jobs=1)))
    monkeypatch.setattr(report, "SPOOL_MAX", 200)  # every section's entries go to disk
    monkeypatch.setattr(report, "SPOOL_READ", 7)  # and come back in small pieces
    _code, written, _, _ = _cli([".", "--format", "json", "--no-progress", "--jobs", "2"], tmp_path, capsys)
    assert written == expected
    doc = json.loads(written)
    assert len(doc["files"]) == doc["summary"]["files"] and len(doc["findings"]) >= doc["summary"]["errors"]


def test_an_empty_and_a_clean_store_report_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    (empty / "data").mkdir(parents=True)
    clean = tmp_path / "clean"
    shutil.copytree(PROJECT / "schemas", clean / "schemas")
    place_record(clean, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"), benchmark="bench")
    for root in (empty, clean):
        expected = json_bytes(validate.run([str(root)], validate.Options(), progress=lambda done, total: None))
        # --store: the store is this one, whose registry (none) is what validate.run reads; without it
        # the command would read a snapshot with the current folder's registry (identity.home_registry)
        args = [str(root), "--store", str(root), "--format", "json", "--no-progress"]
        _code, written, _, _ = _cli(args, root, capsys)
        assert written == expected, root


def test_the_walk_yields_paths_in_sorted_order(tmp_path: Path) -> None:
    data = tmp_path / "data"
    names = ["b", "b-c", "b.json", "b_c", "B", "a", "a0", "a.json", "é", "e"]
    for name in names:
        if name.endswith(".json"):
            (data / "x" / name).parent.mkdir(parents=True, exist_ok=True)
            (data / "x" / name).write_text("{}")
        else:
            for leaf in ("1.json", "2_samples.jsonl", "z", "sub/3.json"):
                (data / "x" / name / leaf).parent.mkdir(parents=True, exist_ok=True)
                (data / "x" / name / leaf).write_text("{}")
    os.symlink(data / "x" / "b", data / "x" / "b-link")
    walked = list(collect.walk(str(tmp_path)))
    assert walked == sorted(walked)
    found = sorted(os.path.join(top, f) for top, _dirs, files in os.walk(data) for f in files)
    assert walked == sorted([*found, str(data / "x" / "b-link")])


def test_flags_are_accepted_chunk_by_chunk(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    from eee.governance.events import write
    from eee.imports.run import flag_event

    root = make_store(tmp_path, hooks=False)
    shutil.copytree(PROJECT / "schemas", root / "schemas")
    _fill(root)
    who = {"name": "Test Contributor", "email": "contributor@example.org"}
    for i in (4, 13, 31):  # out of bounds, in three chunks: each accepted by its flag
        record = next((root / "data").rglob(f"{_uuid(i)}.json"))
        rel, digest = record.relative_to(root).as_posix(), hashlib.sha256(record.read_bytes()).hexdigest()
        flag = flag_event(_uuid(i), "score", "$.evaluation_results[0].score_details.score", "checked", who, rel, digest)
        write(root, flag)
    git(root, "add", "-A")
    monkeypatch.setattr(pool, "CHUNK", 3)
    monkeypatch.setattr(pool, "PARALLEL_MIN", 10)
    monkeypatch.chdir(root)
    plain = validate.validate_tree(WorkTree(root), options=validate.Options(jobs=1))
    before = plain.errors
    expected = json_bytes(summary_without_flagged(plain))
    assert json.loads(expected)["summary"]["errors"] == before - 3
    _code, written, _, _ = _cli([".", "--format", "json", "--no-progress", "--jobs", "2"], tmp_path, capsys)
    assert written == expected


def test_a_folder_whose_files_are_not_consecutive_stays_in_one_chunk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``m/<uuid>.json``, then ``m/<uuid>.k/x.json``, then ``m/<uuid>_samples.jsonl`` in
    sorted order: a chunk cut at the folder between would part the record from its sidecar."""
    root = tmp_path / "store"
    shutil.copytree(PROJECT / "schemas", root / "schemas")
    _fill(root)
    record, sidecar = place_with_sidecar(root, b'{"not": "a row"}\n')
    between = record.parent / (record.name[: -len(".json")] + ".k")
    between.mkdir()
    (between / "x.json").write_text("{}")
    (between / "deeper").mkdir()
    (between / "deeper" / "y.json").write_text("{}")
    walked = list(collect.walk(str(root)))
    assert walked.index(str(record)) < walked.index(str(between / "x.json")) < walked.index(str(sidecar))
    monkeypatch.setattr(pool, "CHUNK", 1)
    monkeypatch.setattr(pool, "PARALLEL_MIN", 10)
    monkeypatch.chdir(root)
    expected = json_bytes(validate.validate_tree(WorkTree(root), options=validate.Options(jobs=1)))
    for jobs in ("1", "2"):
        _code, written, _, _ = _cli([".", "--format", "json", "--no-progress", "--jobs", jobs], tmp_path, capsys)
        assert written == expected


@pytest.mark.parametrize(
    "result",
    [
        FileResult("data/b/d/m/x.json", "record", "0.3.0"),
        FileResult('we"ird\\ né\u2028 \x01.jsonl', "sidecar", "0.2.2,0.3.0", rows=12, suppressed=3),
        FileResult(
            "e.yaml",
            "event",
            findings=[
                Finding("e.yaml", "$", "m", check="event"),
                Finding("e.yaml", "$", "w", severity="warning", check="event"),
            ],
        ),
        FileResult("", "input", None, rows=0),
    ],
)
def test_a_file_entry_is_the_one_orjson_writes(result: FileResult) -> None:
    assert report.file_bytes(result) == report.SEP + report.entry_bytes(report._file_entry(result))


def test_walk_folders_gives_each_folders_files_together(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "b" / "d" / "m"
    for name in ("a.json", "c.json", "b/x.json", "a_samples.jsonl"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("{}")
    pieces = list(collect.walk_folders(str(tmp_path)))
    assert pieces == [
        (str(folder), ["a.json", "a_samples.jsonl"]),
        (str(folder / "b"), ["x.json"]),
        (str(folder), ["c.json"]),
    ]
    assert list(collect.walk(str(tmp_path))) == [os.path.join(d, n) for d, names in pieces for n in names]
