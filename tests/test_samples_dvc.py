"""Sidecars in DVC, with real DVC and real git: add, push, pull, clone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLES, commit, git, make_store, place_with_sidecar
from eee.commands.samples import main as samples_main
from eee.validation.validate import run

pytestmark = pytest.mark.slow

ROWS = (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_store(tmp_path, with_dvc=True, sidecar_git_max_bytes=0)
    monkeypatch.chdir(repo)
    return repo


def _rel(path: Path, repo: Path) -> str:
    return path.relative_to(repo).as_posix()


def test_add_push_delete_pull_round_trip(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record, sidecar = place_with_sidecar(store, ROWS)
    assert samples_main(["add", _rel(sidecar, store)]) == 0
    # the next step is said once, as the exact command, with an eee that runs as printed
    from eee.reporting.shown import shown_command

    assert capsys.readouterr().out.splitlines()[-1] == (
        f"after the commit, upload the sidecars in DVC with `{shown_command(store)} samples push {_rel(sidecar, store)}`"
    )
    pointer = sidecar.with_name(sidecar.name + ".dvc")
    staged = git(store, "diff", "--cached", "--name-only").stdout.split()
    assert _rel(pointer, store) in staged
    assert _rel(sidecar.parent / ".gitignore", store) in staged
    assert _rel(sidecar, store) not in staged  # the sidecar itself never enters git
    git(store, "add", _rel(record, store))
    proc = commit(store, "a record with its sidecar")  # through the real hooks
    assert proc.returncode == 0, proc.stdout + proc.stderr

    assert samples_main(["push"]) == 0
    assert any((tmp_path / "remote").rglob("*")), "the remote holds the sidecar"

    sidecar.unlink()
    shutil.rmtree(store / ".dvc" / "cache")
    assert samples_main(["pull", _rel(sidecar, store)]) == 0
    assert sidecar.read_bytes() == ROWS

    # a fresh clone restores it from the remote too
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    assert not (clone / _rel(sidecar, store)).exists()
    import os

    os.chdir(clone)
    assert samples_main(["pull"]) == 0
    assert (clone / _rel(sidecar, store)).read_bytes() == ROWS
    assert run([str(clone / "data")]).exit_code() == 0


def test_add_refuses_a_sidecar_that_does_not_match_its_record(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record, sidecar = place_with_sidecar(store, ROWS)
    doc = json.loads(record.read_text())
    doc["detailed_evaluation_results"]["checksum"] = "0" * 64
    doc["detailed_evaluation_results"]["total_rows"] = 7
    record.write_text(json.dumps(doc, indent=2))
    assert samples_main(["add", _rel(sidecar, store)]) == 1
    out = capsys.readouterr().err
    assert (
        "but the aggregate declares 0000" in out
        and "the file has 3 rows but the aggregate declares total_rows 7" in out
    )
    assert not sidecar.with_name(sidecar.name + ".dvc").exists()


def test_add_refuses_a_sidecar_without_record(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sidecar = store / "data" / "b" / "d" / "m" / "8e6f3a4e-4b7a-4d3e-9c1a-2b3c4d5e6f70_samples.jsonl"
    sidecar.parent.mkdir(parents=True)
    sidecar.write_bytes(ROWS)
    assert samples_main(["add", _rel(sidecar, store)]) == 1
    assert "sidecar without aggregate" in capsys.readouterr().err


def test_sidecar_changed_after_add_fails_validation(store: Path) -> None:
    record, sidecar = place_with_sidecar(store, ROWS)
    assert samples_main(["add", _rel(sidecar, store)]) == 0
    sidecar.write_bytes(ROWS.replace(b'"q1"', b'"q9"'))
    messages = [f.message for r in run([str(record)]).results for f in r.findings]
    assert any("sha256 of the file is" in m for m in messages)
    assert any("differs from what its DVC pointer recorded" in m for m in messages)


def test_pointer_naming_another_file_is_an_error(store: Path) -> None:
    _record, sidecar = place_with_sidecar(store, ROWS)
    assert samples_main(["add", _rel(sidecar, store)]) == 0
    pointer = sidecar.with_name(sidecar.name + ".dvc")
    pointer.write_text(pointer.read_text().replace(sidecar.name, "other_samples.jsonl"))
    messages = [f.message for r in run([str(pointer)]).results for f in r.findings]
    assert any("the pointer tracks 'other_samples.jsonl'" in m for m in messages)


def test_outside_a_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        samples_main(["pull"])  # no store: a usage error
    assert exc.value.code == 64
    captured = capsys.readouterr()
    assert "not inside a git work tree" in captured.err and captured.out == ""


def test_add_in_a_store_whose_dvc_runs_without_git(store: Path) -> None:
    """The project's DVC runs with core.no_scm (so that dvc.lock can be git-ignored) and
    then writes no .gitignore entry itself: `eee samples add` writes and stages it."""
    from conftest import dvc

    dvc(store, "config", "core.no_scm", "true")
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "DVC without git")
    _record, sidecar = place_with_sidecar(store, ROWS)
    assert samples_main(["add", _rel(sidecar, store)]) == 0
    ignore = sidecar.parent / ".gitignore"
    assert ignore.read_text().splitlines() == [f"/{sidecar.name}"]
    staged = git(store, "diff", "--cached", "--name-only").stdout.split()
    assert _rel(ignore, store) in staged and _rel(sidecar, store) + ".dvc" in staged
    assert git(store, "ls-files", "--others", "--exclude-standard").stdout.split() == [
        _rel(sidecar.parent / (sidecar.stem.replace("_samples", "") + ".json"), store)
    ]  # the record is left to the contributor to stage; the sidecar is ignored
    assert samples_main(["add", _rel(sidecar, store)]) == 0  # again: the entry is not repeated
    assert ignore.read_text().splitlines() == [f"/{sidecar.name}"]
