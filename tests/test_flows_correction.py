"""A correction is one command (issue 25.2): supersede (and resolve --outcome corrected) take
the corrected record with its sidecar, or a harness log to convert, give it its uuid (--uuid
fixes it), write file_path, checksum and placement, add the sidecar by the store's rule and
commit; the dry run prints the exact command, uuid included, that writes the same. Real git,
real DVC, the real hooks, a bare remote."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXED_UUID, commit, git, hook_env, make_store, place_with_sidecar, sha256
from eee.store.paths import UUID4_RE

pytestmark = pytest.mark.slow

ROWS = (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()
OLD = FIXED_UUID


def eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`eee ARGS` as a user runs it in the store."""
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


def pasted(repo: Path, command: str) -> subprocess.CompletedProcess[str]:
    """A command as printed, pasted into a shell in the store."""
    return subprocess.run(shlex.split(command), cwd=repo, capture_output=True, text=True, env=hook_env())


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store with a bare remote: one record with its sidecar in DVC, committed and pushed."""
    repo = make_store(tmp_path, with_dvc=True)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    record, sidecar = place_with_sidecar(repo, ROWS)
    added = eee(repo, "samples", "add", sidecar.relative_to(repo).as_posix())
    assert added.returncode == 0, added.stdout + added.stderr
    git(repo, "add", record.relative_to(repo).as_posix())
    proc = commit(repo, "a record with its sidecar")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert eee(repo, "samples", "push").returncode == 0
    git(repo, "push", "-q", "-u", "origin", "main", env=hook_env())
    return repo


def _corrected(tmp_path: Path) -> tuple[Path, Path]:
    """A corrected record (one score changed; it still names the old sidecar) and its rows."""
    doc = json.loads((EXAMPLES / "instance" / "aggregate.json").read_text())
    doc["evaluation_results"][0]["score_details"]["score"] = 0.5
    source = tmp_path / "corrected.json"
    source.write_text(json.dumps(doc, indent=2))
    rows = tmp_path / "corrected_samples.jsonl"
    rows.write_bytes(ROWS)
    return source, rows


def test_a_correction_with_a_sidecar_is_one_command_and_its_dry_run_prints_it(store: Path, tmp_path: Path) -> None:
    source, rows = _corrected(tmp_path)
    argv = ["supersede", OLD[:8], str(source), "--sidecar", str(rows), "--reason", "the first score was wrong"]
    dry = eee(store, *argv, "--commit", "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    lines = dry.stdout.splitlines()
    command = lines[-1].split("run: ", 1)[1]
    assert lines[-1].startswith("to write exactly this (the same uuid), run: ")
    new = shlex.split(command)[shlex.split(command).index("--uuid") + 1]
    assert UUID4_RE.match(new) and new != OLD
    assert f"would write data/qa-bench/acme/widget-7b/{new}.json" in dry.stdout
    assert f"would write data/qa-bench/acme/widget-7b/{new}_samples.jsonl (3 rows" in dry.stdout
    assert git(store, "status", "--porcelain").stdout == ""  # the dry run wrote nothing
    assert "--dry-run" not in command and "--commit" in command

    done = pasted(store, command)  # the printed command, pasted: the same uuid
    assert done.returncode == 0, done.stdout + done.stderr
    rel = f"data/qa-bench/acme/widget-7b/{new}.json"
    record = json.loads((store / rel).read_text())
    der = record["detailed_evaluation_results"]
    assert der["file_path"] == f"data/qa-bench/acme/widget-7b/{new}_samples.jsonl"
    assert der["checksum"] == sha256(rows) and der["total_rows"] == 3
    assert record["evaluation_results"][0]["score_details"]["score"] == 0.5
    assert (store / der["file_path"]).read_bytes() == ROWS
    # one commit: the record, its sidecar by the store's rule, the event; nothing left over
    shown = git(store, "show", "--name-only", "--format=%s", "HEAD").stdout.split()
    assert rel in shown and any(p.startswith("governance/events/") for p in shown)
    assert any(p.startswith(der["file_path"]) for p in shown)  # the sidecar, or its DVC pointer
    assert git(store, "status", "--porcelain").stdout == ""
    status = json.loads(eee(store, "status", OLD, "--format", "json").stdout)
    assert status["status"] == "superseded" and status["superseded_by"] == new
    assert eee(store, "validate", "data").returncode == 0
    assert eee(store, "audit").returncode == 0
    assert eee(store, "samples", "push").returncode == 0
    git(store, "push", "-q", env=hook_env())


def test_resolve_corrected_takes_the_file_its_sidecar_and_a_fixed_uuid(store: Path, tmp_path: Path) -> None:
    assert (
        eee(
            store, "dispute", OLD, "--reason", "the score", "--reference", "https://example.org/1", "--commit"
        ).returncode
        == 0
    )
    source, rows = _corrected(tmp_path)
    new = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    proc = eee(
        store,
        "resolve",
        OLD,
        "--outcome",
        "corrected",
        "--replacement",
        str(source),
        "--sidecar",
        str(rows),
        "--uuid",
        new,
        "--reason",
        "corrected",
        "--commit",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (store / f"data/qa-bench/acme/widget-7b/{new}.json").is_file()
    assert json.loads(eee(store, "status", OLD, "--format", "json").stdout)["superseded_by"] == new
    again = eee(store, "supersede", new, str(source), "--sidecar", str(rows), "--uuid", new, "--reason", "x")
    assert again.returncode == 1 and f"uuid {new} is already used by" in again.stderr  # a uuid names one record
    assert eee(store, "audit").returncode == 0


def test_a_corrected_record_that_declares_samples_needs_them(store: Path, tmp_path: Path) -> None:
    source, _ = _corrected(tmp_path)
    proc = eee(store, "supersede", OLD, str(source), "--reason", "x")
    assert proc.returncode == 1
    assert "declares per-sample results (detailed_evaluation_results), but no sidecar is given" in proc.stderr
    assert "--sidecar FILE" in proc.stderr and f"{OLD}_samples.jsonl" in proc.stderr
    assert git(store, "status", "--porcelain").stdout == ""
    bad = eee(store, "supersede", OLD, str(source), "--benchmark", "../x", "--reason", "x")
    assert bad.returncode == 1 and "--benchmark '../x'" in bad.stderr
    usage = eee(store, "supersede", OLD, str(source), "--uuid", "NOT-A-UUID", "--reason", "x")
    assert usage.returncode == 64 and "--uuid NOT-A-UUID" in usage.stderr


def test_a_staged_replacement_is_committed_with_the_resolution(store: Path) -> None:
    """`--commit` with a staged replacement: the commit holds the event and the staged record."""
    from conftest import place_record, record_of

    assert (
        eee(store, "dispute", OLD, "--reason", "x", "--reference", "https://example.org/2", "--commit").returncode == 0
    )
    new = "5d6e7f80-9a1b-4c2d-8e3f-4a5b6c7d8e9f"
    path = place_record(store, record_of("acme/widget-7b"), record_uuid=new)
    rel = path.relative_to(store).as_posix()
    git(store, "add", rel)
    proc = eee(store, "resolve", OLD, "--outcome", "corrected", "--replacement", new, "--reason", "r", "--commit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert rel in git(store, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert git(store, "status", "--porcelain").stdout == ""


def test_a_log_to_convert_is_the_correction(store: Path) -> None:
    """--convert: the replacement is a harness log, converted (with its per-sample rows) as
    the record it corrects: its model id; the rows are placed as the new record's sidecar."""
    log = EXAMPLES / "harness" / "inspect" / "tiny_qa.json"
    argv = ["supersede", OLD, str(log), "--convert", "inspect", "--reason", "re-converted from the log", "--commit"]
    dry = eee(store, *argv, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    command = dry.stdout.splitlines()[-1].split("run: ", 1)[1]
    new = shlex.split(command)[shlex.split(command).index("--uuid") + 1]
    done = pasted(store, command)
    assert done.returncode == 0, done.stdout + done.stderr
    (rel,) = [
        p for p in git(store, "show", "--name-only", "--format=", "HEAD").stdout.split() if p.endswith(f"{new}.json")
    ]
    assert rel.startswith("data/tiny_qa/acme/widget-7b/")  # the converter's benchmark, the old record's model
    der = json.loads((store / rel).read_text())["detailed_evaluation_results"]
    assert der["checksum"] == sha256(store / der["file_path"])
    assert eee(store, "audit").returncode == 0
    assert json.loads(eee(store, "status", OLD, "--format", "json").stdout)["superseded_by"] == new
