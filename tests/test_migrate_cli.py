"""``eee migrate``: copies in the store's layout, a report, exit codes, and nothing written under data/."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, FIXED_UUID, write_json
from eee.cli import main as eee_main
from eee.commands.migrate import main
from eee.migrate.report import REPORT_NAME
from eee.store.strictjson import canonical
from eee.validation.validate import run

STEPS = EXAMPLES / "migration" / "steps"
AGENTIC_UUID = "0b7f6a52-3d1e-4c5a-9b8e-2f4d6c8a1e30"
AGENTIC_DIR = "data/agent-bench/acme/widget-70b"


def _before(step: str, case: str) -> dict[str, Any]:
    return json.loads((STEPS / step / case / "before.json").read_text())


def _store(root: Path) -> Path:
    """A store with a 0.2.0 record, a 0.2.0 record with a 0.2.0 sidecar, and a 0.3.0 record."""
    helm = json.loads((EXAMPLES / "aggregate" / "valid" / "v0.2.0_helm_leaderboard.json").read_text())
    write_json(root / "data" / "helm_lite" / "acme" / "widget-7b" / f"{FIXED_UUID}.json", helm)
    agentic = _before("eval_0.2.0_to_0.2.1", "agentic_judges_extra_args")
    row = _before("instance_level_eval_0.2.0_to_0.2.1", "agentic_interactions")
    sidecar = root / AGENTIC_DIR / f"{AGENTIC_UUID}_samples.jsonl"
    sidecar.parent.mkdir(parents=True)
    sidecar.write_text(json.dumps(row) + "\n")
    agentic["detailed_evaluation_results"]["checksum"] = hashlib.sha256(sidecar.read_bytes()).hexdigest()
    write_json(root / AGENTIC_DIR / f"{AGENTIC_UUID}.json", agentic)
    current = (EXAMPLES / "aggregate" / "valid" / "v0.3.0_agentic_and_judge.json").read_text()
    path = root / "data" / "gpqa" / "acme" / "widget-70b" / "5d2c8e1a-7f3b-4c6d-9e0a-1b2c3d4e5f60.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(json.loads(current), indent=4) + "\n")  # not in canonical form on purpose
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _report(out: Path) -> dict[str, Any]:
    return json.loads((out / REPORT_NAME).read_text())


def test_copies_keep_the_layout_validate_and_leave_the_source_alone(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    assert run([str(store / "data")]).exit_code() == 0, "the input store is clean"
    source = _files(store)
    out = tmp_path / "out"
    assert main([str(store / "data"), "--to", "0.3.0", "--out", str(out)]) == 0
    assert _files(store) == source, "the source store is never written"
    written = _files(out)
    assert set(written) == {REPORT_NAME, *(k for k in source)}
    summary = run([str(out / "data")])
    assert [f.one_line() for r in summary.results for f in r.findings] == []
    assert {r.schema_version for r in summary.results} == {"0.3.0"}
    # the sidecar's rows changed, so the copy of its record carries the new checksum
    copy = json.loads(written[f"{AGENTIC_DIR}/{AGENTIC_UUID}.json"])
    new_sum = hashlib.sha256(written[f"{AGENTIC_DIR}/{AGENTIC_UUID}_samples.jsonl"]).hexdigest()
    assert copy["detailed_evaluation_results"]["checksum"] == new_sum
    derived = json.loads(copy["source_metadata"]["additional_details"]["eee_migration_derived"])
    old_sum = json.loads(source[f"{AGENTIC_DIR}/{AGENTIC_UUID}.json"])["detailed_evaluation_results"]["checksum"]
    assert old_sum in derived["$.detailed_evaluation_results.checksum"]
    # migrated copies are written in canonical form; a current record is copied byte for byte
    helm = f"data/helm_lite/acme/widget-7b/{FIXED_UUID}.json"
    assert written[helm] == canonical(json.loads(written[helm]))
    gpqa = "data/gpqa/acme/widget-70b/5d2c8e1a-7f3b-4c6d-9e0a-1b2c3d4e5f60.json"
    assert written[gpqa] == source[gpqa]
    report = _report(out)
    assert report["summary"] | {"by_source_version": None} == {
        "records": 3,
        "migrated": 2,
        "unchanged": 1,
        "refused": 0,
        "sidecars": 1,
        "sidecar_rows": 1,
        "warnings": 0,
        "by_source_version": None,
        "refused_by_check": {},
        "refused_by_reason": {},
    }
    assert report["summary"]["by_source_version"] == {"0.2.0": 2, "0.3.0": 1}
    entry = next(r for r in report["records"] if r["file"].endswith(f"{FIXED_UUID}.json"))
    assert entry["status"] == "migrated" and entry["from"] == "0.2.0" and entry["output"] == helm
    assert "$.eval_library.name" in entry["filled"]


def test_migrating_the_copies_again_changes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    first, second = tmp_path / "first", tmp_path / "second"
    assert main([str(store), "--out", str(first)]) == 0
    assert main([str(first), "--out", str(second)]) == 0
    a, b = _files(first), _files(second)
    a.pop(REPORT_NAME), b.pop(REPORT_NAME)
    assert a == b
    assert {r["status"] for r in _report(second)["records"]} == {"unchanged"}


def test_a_record_that_cannot_be_migrated_is_reported_and_not_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _store(tmp_path / "store")
    bad = store / "data" / "mmlu" / "acme" / "widget-7b" / "6e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b.json"
    write_json(bad, json.loads((EXAMPLES / "migration" / "refused" / "score_below_min.json").read_text()))
    out = tmp_path / "out"
    assert main([str(store / "data"), "--out", str(out)]) == 1
    assert not (out / "data" / "mmlu").exists(), "nothing of a refused record is written"
    assert (out / "data" / "helm_lite").is_dir(), "the others are still written"
    text = capsys.readouterr().out
    assert (
        "::$.evaluation_results[0].score_details.score: [score] score -0.01 is outside the declared range [0, 1]"
        in text
    )
    assert "3 migrated" not in text and "2 migrated to 0.3.0" in text and "1 refused" in text
    report = _report(out)
    assert report["exit_code"] == 1
    assert report["summary"]["refused_by_check"] == {"score": 1}
    refused = next(r for r in report["records"] if r["status"] == "refused")
    assert refused["output"] is None and refused["from"] == "0.2.0"
    assert refused["reason"] == "score -0.01 is outside the declared range [0, 1]"


def test_a_bad_sidecar_row_refuses_its_record_and_leaves_no_partial_file(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    sidecar = store / AGENTIC_DIR / f"{AGENTIC_UUID}_samples.jsonl"
    sidecar.write_text(
        sidecar.read_text() + (EXAMPLES / "migration" / "refused" / "row_moved_key_taken.jsonl").read_text()
    )
    out = tmp_path / "out"
    assert main([str(store), "--out", str(out), "--format", "json"]) == 1
    assert not (out / AGENTIC_DIR).exists()
    assert [p for p in out.rglob(".*")] == [], "no temporary file is left behind"
    refused = next(r for r in _report(out)["records"] if r["status"] == "refused")
    assert refused["reason"] == (
        'its sidecar cannot be migrated (line 2, $.metadata["row.harness"]): '
        "cannot move $.harness here: the key 'row.harness' is already taken"
    )
    assert any(f["file"].endswith(f"{AGENTIC_UUID}_samples.jsonl") and f["line"] == 2 for f in refused["findings"])


@pytest.mark.parametrize("where", ["data/export", "data", ".", "data/helm_lite/acme"])
def test_an_output_folder_inside_the_store_data_is_refused(
    tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _store(tmp_path / "store")
    before = _files(store)
    assert main([str(store / "data"), "--out", str(store / where)]) == 1  # refused, nothing written
    assert "migration never writes under data/" in capsys.readouterr().err
    assert _files(store) == before


def test_the_data_folder_of_a_git_work_tree_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    other = tmp_path / "repo"
    (other / ".git").mkdir(parents=True)
    assert main([str(store / "data"), "--out", str(other)]) == 1
    assert main([str(store / "data"), "--out", str(other / "data" / "x")]) == 1
    assert main([str(store / "data"), "--out", str(other / "exports")]) == 0


def test_usage_errors_and_refusals_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path / "store")
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:
        main([str(store), "--to", "0.9.0", "--out", str(out)])  # a usage error
    assert exc.value.code == 64
    captured = capsys.readouterr()
    assert "unknown schema version '0.9.0'" in captured.err and captured.out == ""
    assert main([str(store / "nowhere"), "--out", str(out)]) == 1  # refused
    captured = capsys.readouterr()
    assert "no such file or directory" in captured.err and captured.out == ""
    assert not out.exists()
    with pytest.raises(SystemExit) as exc:
        main([str(store)])  # --out is required
    assert exc.value.code == 64


def test_downgrades_are_refused_per_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path / "store")
    out = tmp_path / "out"
    assert main([str(store), "--to", "0.2.2", "--out", str(out)]) == 1
    assert "cannot migrate from 0.3.0 down to 0.2.2: migrations only go forward" in capsys.readouterr().out
    copy = json.loads((out / "data" / "helm_lite" / "acme" / "widget-7b" / f"{FIXED_UUID}.json").read_text())
    assert copy["schema_version"] == "0.2.2"


def test_a_sidecar_named_alone_brings_its_record_and_an_orphan_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    out = tmp_path / "out"
    assert main([str(store / AGENTIC_DIR / f"{AGENTIC_UUID}_samples.jsonl"), "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / AGENTIC_DIR).iterdir()) == [
        f"{AGENTIC_UUID}.json",
        f"{AGENTIC_UUID}_samples.jsonl",
    ]
    os.remove(store / AGENTIC_DIR / f"{AGENTIC_UUID}.json")
    assert main([str(store / AGENTIC_DIR), "--out", str(tmp_path / "out2")]) == 1
    refused = _report(tmp_path / "out2")["records"][0]
    assert refused["kind"] == "sidecar" and refused["reason"].startswith("sidecar without aggregate")


def test_a_sidecar_kept_only_in_dvc_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path / "store")
    sidecar = store / AGENTIC_DIR / f"{AGENTIC_UUID}_samples.jsonl"
    sidecar.rename(sidecar.with_name(sidecar.name + ".dvc"))  # stands for the pointer; the content is not read
    out = tmp_path / "out"
    assert main([str(store / AGENTIC_DIR), "--out", str(out), "--format", "github"]) == 0
    text = capsys.readouterr().out
    assert "::warning file=" in text and "only its DVC pointer" in text
    assert _report(out)["summary"]["warnings"] == 1


def test_registered_in_the_eee_command(tmp_path: Path) -> None:
    store = _store(tmp_path / "store")
    assert eee_main(["migrate", str(store), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / REPORT_NAME).exists()


def test_older_rows_of_a_current_record_are_migrated_and_its_checksum_follows(tmp_path: Path) -> None:
    store = tmp_path / "store"
    folder = store / "data" / "qa-bench" / "acme" / "widget-7b"
    folder.mkdir(parents=True)
    sidecar = folder / f"{FIXED_UUID}_samples.jsonl"
    sidecar.write_bytes((EXAMPLES / "instance" / "valid" / "v0.2.2_prefixed_version.jsonl").read_bytes())
    agg = json.loads((EXAMPLES / "instance" / "aggregate.json").read_text())
    agg["detailed_evaluation_results"].update(
        file_path=f"data/qa-bench/acme/widget-7b/{FIXED_UUID}_samples.jsonl",
        checksum=hashlib.sha256(sidecar.read_bytes()).hexdigest(),
        total_rows=2,
    )
    write_json(folder / f"{FIXED_UUID}.json", agg)
    assert run([str(store)]).exit_code() == 0
    out = tmp_path / "out"
    assert main([str(store), "--out", str(out)]) == 0
    entry = _report(out)["records"][0]
    assert (entry["from"], entry["status"], entry["sidecar"]["status"]) == ("0.3.0", "migrated", "migrated")
    assert entry["sidecar"]["by_source_version"] == {"0.2.2": 2}
    copy = json.loads((out / "data" / "qa-bench" / "acme" / "widget-7b" / f"{FIXED_UUID}.json").read_text())
    details = copy["source_metadata"]["additional_details"]
    assert "eee_migrated_from" not in details, "the record itself was already 0.3.0"
    assert list(json.loads(details["eee_migration_derived"])) == ["$.detailed_evaluation_results.checksum"]
    rows = (out / "data" / "qa-bench" / "acme" / "widget-7b" / f"{FIXED_UUID}_samples.jsonl").read_text().splitlines()
    assert [json.loads(r)["metadata"]["eee_migrated_from"] for r in rows] == ["0.2.2", "0.2.2"]
    assert run([str(out)]).exit_code() == 0, "record and sidecar still agree (checksum, rows, ids)"
    again = tmp_path / "again"
    assert main([str(out), "--out", str(again)]) == 0
    assert {r["status"] for r in _report(again)["records"]} == {"unchanged"}


def test_the_store_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--store names the store the records belong to: a file in it but outside data/ keeps its
    place below it (found from the path alone, it would be named by its file name), and the
    store's folders are never written."""
    store = _store(tmp_path / "store")
    loose = store / "exports" / "old" / f"{FIXED_UUID}.json"
    loose.parent.mkdir(parents=True)
    loose.write_bytes((store / "data" / "helm_lite" / "acme" / "widget-7b" / f"{FIXED_UUID}.json").read_bytes())
    out = tmp_path / "out"
    assert main([str(loose), "--out", str(out), "--store", str(store)]) == 0
    assert (out / "exports" / "old" / f"{FIXED_UUID}.json").is_file()
    assert main([str(loose), "--out", str(tmp_path / "alone")]) == 0
    assert (tmp_path / "alone" / f"{FIXED_UUID}.json").is_file()  # without --store: the file name
    capsys.readouterr()
    assert main([str(loose), "--out", str(store / "governance" / "copies"), "--store", str(store)]) == 1
    assert "resolves into the store folder" in capsys.readouterr().err
    assert not (store / "governance").exists()
