"""Bounded reads (issue 13, items 6, 7 and 14): no file in the store can crash, hang or
exhaust the validator, the hooks or the audit; each bad file is a finding, the run goes on.

Deep JSON, huge integers, FIFOs, links to devices, oversized files, YAML aliases, tags and
deep nesting; checksums that cannot be checked; empty sidecars."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from conftest import (
    COMMITTER,
    EXAMPLES,
    FIXED_UUID,
    commit,
    git,
    load_example,
    make_store,
    place_record,
    place_with_sidecar,
)
from eee.governance.events import dumps, make_event
from eee.reporting.findings import ERROR
from eee.validation.validate import run

RECORD = "v0.3.0_perplexity_unbounded.json"
ROWS = EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl"
UUIDS = [f"{i:08x}-1111-4111-8111-111111111111" for i in range(1, 40)]


def _good(repo: Path, n: int = 0) -> Path:
    return place_record(repo, load_example("aggregate", "valid", RECORD), record_uuid=UUIDS[n])


def _beside(good: Path, n: int, suffix: str = ".json") -> Path:
    return good.parent / f"{UUIDS[n]}{suffix}"


def _by_file(summary) -> dict[str, list]:
    return {os.path.basename(r.file): [f for f in r.findings if f.severity == ERROR] for r in summary.results}


def _deep(levels: int) -> bytes:
    return b'{"a": ' + b"[" * levels + b"1" + b"]" * levels + b"}"


BAD_JSON = {
    "deep-300": _deep(300),
    "deep-2000": _deep(2000),
    "deep-100000": _deep(100_000),
    "int-5000-digits": b'{"schema_version": "0.3.0", "n": ' + b"7" * 5000 + b"}",
    "negative-int-5000": b'{"n": -' + b"7" * 5000 + b"}",
    "float-overflow": b'{"n": 1e999}',
    "deep-then-dupe": b'{"a": 1, "a": ' + b"[" * 200 + b"]" * 200 + b"}",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_store(tmp_path, hooks=False)


def test_each_bad_record_is_one_finding_and_the_run_goes_on(repo: Path) -> None:
    good = _good(repo)
    bad = {}
    for i, (name, data) in enumerate(BAD_JSON.items(), start=1):
        path = _beside(good, i)
        path.write_bytes(data)
        bad[path.name] = name
    summary = run([str(repo)])
    found = _by_file(summary)
    assert found[good.name] == []
    for file, name in bad.items():
        assert found[file], f"{name}: no finding"
        assert all(f.check == "json" for f in found[file]), (name, found[file])
    messages = {bad[f]: found[f][0].message for f in bad}
    assert "nested too deeply" in messages["deep-300"]
    assert "nested too deeply" in messages["deep-100000"]
    assert "an integer of 5000 digits" in messages["int-5000-digits"]


def test_depth_cap_is_exact_and_documented_in_the_message(repo: Path) -> None:
    from eee.store.limits import JSON_MAX_DEPTH
    from eee.store.strictjson import JSONProblem, loads

    assert loads(b"[" * JSON_MAX_DEPTH + b"]" * JSON_MAX_DEPTH) is not None
    with pytest.raises(JSONProblem, match=f"more than {JSON_MAX_DEPTH} levels"):
        loads(b"[" * (JSON_MAX_DEPTH + 1) + b"]" * (JSON_MAX_DEPTH + 1))
    nested = b"{" + b'"k": {' * JSON_MAX_DEPTH + b'"v": "{}"' + b"}" * (JSON_MAX_DEPTH + 1)
    with pytest.raises(JSONProblem, match="nested too deeply"):
        loads(nested)


def test_fifo_device_link_and_folder_never_hang_the_validator(repo: Path) -> None:
    good = _good(repo)
    fifo = _beside(good, 1)
    os.mkfifo(fifo)
    device = _beside(good, 2)
    device.symlink_to("/dev/zero")
    folder = _beside(good, 3)
    folder.mkdir()
    (folder / "x").write_text("x")
    sidecar_fifo = _beside(good, 4, "_samples.jsonl")
    os.mkfifo(sidecar_fifo)
    pointer_fifo = _beside(good, 5, "_samples.jsonl.dvc")
    os.mkfifo(pointer_fifo)
    summary = run([str(repo)])
    found = _by_file(summary)
    assert found[good.name] == []
    assert any("named pipe (FIFO)" in f.message for f in found[fifo.name])
    assert any("symbolic link" in f.message for f in found[device.name])
    assert found[f"{folder.name}/x"] if f"{folder.name}/x" in found else found["x"]
    assert any("named pipe" in f.message for f in found[sidecar_fifo.name])
    assert any("named pipe" in f.message for f in found[pointer_fifo.name])


def test_oversized_record_is_refused_without_reading_it(repo: Path) -> None:
    from eee.store.limits import RECORD_MAX_BYTES

    good = _good(repo)
    big = _beside(good, 1)
    with open(big, "wb") as fh:  # sparse: costs no disk, would cost memory if read
        fh.truncate(RECORD_MAX_BYTES + 1)
    found = _by_file(run([str(repo)]))
    assert found[good.name] == []
    assert any("more than the 16 MiB" in f.message for f in found[big.name])


def test_sidecar_rows_deep_huge_and_endless_line(repo: Path) -> None:
    first = ROWS.read_bytes().splitlines()[0]
    data = first + b"\n" + b"[" * 500 + b"]" * 500 + b"\n" + b'{"n": ' + b"9" * 5000 + b"}\n"
    _record, sidecar = place_with_sidecar(repo, data)
    summary = run([str(sidecar)])
    (result,) = [r for r in summary.results if r.file.endswith("_samples.jsonl")]
    lines = {f.line for f in result.findings if f.check == "json"}
    assert {2, 3} <= lines
    assert any("nested too deeply" in f.message for f in result.findings)


def test_sidecar_line_longer_than_the_row_cap(repo: Path) -> None:
    from eee.store.limits import ROW_MAX_BYTES

    _record, sidecar = place_with_sidecar(repo, b"{}\n")
    with open(sidecar, "ab") as fh:
        fh.write(b"x" * (ROW_MAX_BYTES + 10))
    summary = run([str(sidecar)])
    (result,) = [r for r in summary.results if r.file.endswith("_samples.jsonl")]
    assert any("longer than 16 MiB" in f.message for f in result.findings)


def _event_text(record: str = FIXED_UUID) -> str:
    event = make_event("retract", record, "wrong split", COMMITTER)  # who commits it in the test stores
    return dumps(event)


BAD_YAML = {
    "alias-bomb": "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n",
    "binary": "action: retract\nreason: !!binary aGVsbG8=\n",
    "set": "action: retract\nreason: !!set {a, b}\n",
    "python-tag": "action: !!python/object:os.system ls\n",
    "custom-tag": "action: !retract x\n",
    "anchor-only": "action: &x retract\n",
    "deep": "a: " + "[" * 5000 + "]" * 5000 + "\n",
    "big-int": "action: retract\nn: " + "1" * 5000 + "\n",
    "not-utf8": "reason: caf\xe9\n",
    "dupe": "action: retract\naction: dispute\n",
}


def test_each_bad_event_is_one_finding_and_the_ledger_is_still_checked(repo: Path) -> None:
    _good(repo)
    folder = repo / "governance" / "events"
    folder.mkdir(parents=True)
    text = _event_text(UUIDS[0])
    event_id = next(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("id:"))
    good = folder / f"{event_id}.yaml"
    good.write_text(text)
    bad = {}
    for i, (name, body) in enumerate(BAD_YAML.items()):
        path = folder / f"2026010{i % 9}T000000.000000Z-retract-bad{i}.yaml"
        path.write_bytes(body.encode("latin-1") if name == "not-utf8" else body.encode())
        bad[path.name] = name
    os.mkfifo(folder / "20260102T000000.000000Z-retract-fifo.yaml")
    bad["20260102T000000.000000Z-retract-fifo.yaml"] = "fifo"
    (folder / "20260103T000000.000000Z-retract-big.yaml").write_text("reason: " + "x" * 70_000 + "\n")
    bad["20260103T000000.000000Z-retract-big.yaml"] = "oversized"
    summary = run([str(repo)])
    found = _by_file(summary)
    assert found[good.name] == []
    for file, name in bad.items():
        assert found[file], f"{name}: no finding"
    messages = {name: found[file][0].message for file, name in bad.items()}
    assert "anchors (&a) are not allowed" in messages["alias-bomb"]  # refused at its first anchor
    assert "tags" in messages["binary"] and "tags" in messages["set"] and "tags" in messages["custom-tag"]
    assert "nested more than" in messages["deep"]
    assert "5000 digits" in messages["big-int"]
    assert "named pipe" in messages["fifo"]
    assert "more than the 64 KiB" in messages["oversized"]


def test_unknown_checksum_form_is_an_error(repo: Path) -> None:
    record, sidecar = place_with_sidecar(repo, b"")
    doc = json.loads(record.read_text())
    sidecar.write_bytes(ROWS.read_bytes().splitlines(keepends=True)[0])
    doc["detailed_evaluation_results"]["total_rows"] = 1
    for checksum, alg, expect in [
        ("deadbeef" * 5, None, "unknown checksum form"),  # 40 characters, no algorithm: was skipped
        ("zz" * 32, "sha256", "not hexadecimal"),
        (hashlib.sha256(sidecar.read_bytes()).hexdigest(), "md5", "a md5 checksum has 32"),
    ]:
        doc["detailed_evaluation_results"]["checksum"] = checksum
        if alg is None:
            doc["detailed_evaluation_results"].pop("hash_algorithm", None)
        else:
            doc["detailed_evaluation_results"]["hash_algorithm"] = alg
        record.write_text(json.dumps(doc, indent=2))
        summary = run([str(record)])
        errors = [f for r in summary.results for f in r.findings if f.severity == ERROR]
        assert any(expect in f.message for f in errors if r"$.detailed_evaluation_results" in f.pointer), (
            expect,
            errors,
        )
        assert any("cannot be checked" in f.message for f in errors if f.file.endswith("_samples.jsonl")), errors
        assert summary.exit_code() == 1


def test_empty_sidecar_is_an_error(repo: Path) -> None:
    record, sidecar = place_with_sidecar(repo, b"")  # 0 bytes, total_rows 0
    summary = run([str(record)])
    errors = [f.message for r in summary.results for f in r.findings if f.severity == ERROR]
    assert "declares an empty sidecar (total_rows 0)" in errors
    assert errors.count("the sidecar is empty (no rows)") == 1  # one finding, however many rules saw it
    pointer = sidecar.with_name(sidecar.name + ".dvc")
    sidecar.unlink()
    pointer.write_text(
        f"outs:\n- md5: d41d8cd98f00b204e9800998ecf8427e\n  size: 0\n  hash: md5\n  path: {sidecar.name}\n"
    )
    summary = run([str(pointer)])
    assert any("tracks an empty sidecar" in f.message for r in summary.results for f in r.findings)


def test_validate_on_an_empty_folder_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.commands.validate import main

    empty = tmp_path / "nothing"
    empty.mkdir()
    assert main([str(empty), "--no-progress"]) == 2
    out = capsys.readouterr().out
    assert "0 files checked" in out
    assert "warning" in out


# --- real git: the hook refuses with a finding, and a committed bad file does not break later audits ----


def test_hook_refuses_a_deep_record_with_a_finding(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    good = _good(store)
    _beside(good, 1).write_bytes(_deep(400))
    git(store, "add", "-A")
    proc = commit(store, "deep record")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1
    assert "nested too deeply" in out
    assert "Traceback" not in out


def test_bad_files_once_committed_do_not_break_later_audits(tmp_path: Path, capsys) -> None:
    from eee.commands.audit import main as audit_main

    repo = make_store(tmp_path, hooks=False)
    good = _good(repo)
    _beside(good, 1).write_bytes(_deep(2000))
    _beside(good, 2).write_bytes(b'{"n": ' + b"1" * 5000 + b"}")
    events = repo / "governance" / "events"
    events.mkdir(parents=True)
    (events / "20260101T000000.000000Z-retract-bomb.yaml").write_text(BAD_YAML["alias-bomb"])
    (events / "20260101T000000.000000Z-retract-tag.yaml").write_text(BAD_YAML["binary"])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "bad files")
    for n in (3, 4):  # later, good commits: a record and an event
        _good(repo, n)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--no-verify", "-m", f"good {n}")
    text = _event_text(UUIDS[3])
    event_id = next(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("id:"))
    (events / f"{event_id}.yaml").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "good event")
    assert audit_main(["--store", str(repo), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["files"] == 5
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    files = {f["file"].split(":", 1)[1] for f in errors}
    assert any(name.endswith(f"{UUIDS[1]}.json") for name in files)
    assert any(name.endswith(f"{UUIDS[2]}.json") for name in files)
    assert any(name.endswith("bomb.yaml") for name in files)
    assert any(name.endswith("tag.yaml") for name in files)
    assert not any(event_id in f["file"] for f in errors), errors
    assert not any(UUIDS[3] in f["file"] or UUIDS[4] in f["file"] for f in errors), errors


def test_a_refused_yaml_document_leaves_no_state_behind() -> None:
    """The loader is made once per process: a refused document (too deep, an alias, not YAML)
    must not change how the next one reads."""
    from eee.governance.events import EventFileError, load_text

    good = _event_text()
    for bad in BAD_YAML.values():
        if bad.isascii():
            with pytest.raises(EventFileError):
                load_text(bad)
        assert load_text(good)["action"] == "retract"
