"""``eee status --list [--status S ...]``: the store's records by status, from the one fold,
with real git and the governance tools. Active means not retracted, superseded or marked
duplicate; flagged and disputed records are active and carry their marker (the same test
``eee stats`` uses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import commit, git, make_store, place_record, record_of
from eee.cli import main as eee
from eee.commands.governance import run
from eee.commands.status import main as status_main

pytestmark = pytest.mark.slow

ACTIVE = "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"
RETRACTED = "1b2c3d4e-5f6a-4b7c-9d8e-9f0a1b2c3d4e"
OLD = "2c3d4e5f-6a7b-4c8d-ae9f-0a1b2c3d4e5f"
NEW = "3d4e5f6a-7b8c-4d9e-bf0a-1b2c3d4e5f6a"
DUPLICATE = "4e5f6a7b-8c9d-4eaf-8a1b-2c3d4e5f6a7b"
DISPUTED = "5f6a7b8c-9d0e-4fa1-9b2c-3d4e5f6a7b8c"
FLAGGED = "6a7b8c9d-0e1f-4a2b-ac3d-4e5f6a7b8c9d"
MODELS = {
    ACTIVE: "acme/active-7b",
    RETRACTED: "acme/retracted-7b",
    OLD: "acme/old-7b",
    NEW: "acme/new-7b",
    DUPLICATE: "acme/duplicate-7b",
    DISPUTED: "acme/disputed-7b",
    FLAGGED: "acme/flagged-7b",
}
SCORE = "$.evaluation_results[0].score_details.score"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_store(tmp_path_factory.mktemp("status"), hooks=False)
    for uuid, model in MODELS.items():
        place_record(repo, record_of(model), record_uuid=uuid)
    git(repo, "add", "-A")
    assert commit(repo, "seven records").returncode == 0
    store = ["--store", str(repo), "--commit"]
    assert run("retract", [RETRACTED, "--reason", "built on a faulty log", *store]) == 0
    assert run("supersede", [OLD, NEW, "--reason", "the corrected run", *store]) == 0
    assert run("mark-duplicate", [DUPLICATE, "--of", ACTIVE, "--reason", "the same result twice", *store]) == 0
    reference = ["--reference", "https://example.org/discussions/1"]
    assert run("dispute", [DISPUTED, "--reason", "the harness version is wrong", *reference, *store]) == 0
    flag = ["--rule", "score", "--json-path", SCORE, "--reason", "-1 stands for missing"]
    assert run("flag", [FLAGGED, *flag, *store]) == 2  # written; the record breaks no rule: a warning
    assert git(repo, "status", "--porcelain").stdout == ""
    return repo


def listed(store: Path, capsys: pytest.CaptureFixture[str], *statuses: str) -> dict:
    capsys.readouterr()
    argv = ["--list", "--format", "json", "--store", str(store)]
    assert status_main([*argv, *(["--status", *statuses] if statuses else [])]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_record_with_its_status(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = listed(store, capsys)
    by_uuid = {r["record"]: r for r in found["records"]}
    assert {uuid: r["status"] for uuid, r in by_uuid.items()} == {
        ACTIVE: "active",
        RETRACTED: "retracted",
        OLD: "superseded",
        NEW: "active",
        DUPLICATE: "duplicate",
        DISPUTED: "disputed",
        FLAGGED: "flagged",
    }
    assert {uuid for uuid, r in by_uuid.items() if r["active"]} == {ACTIVE, NEW, DISPUTED, FLAGGED}
    assert by_uuid[OLD]["superseded_by"] == NEW and by_uuid[DUPLICATE]["duplicate_of"] == ACTIVE
    assert by_uuid[FLAGGED]["flags"] == [{"rule": "score", "path": SCORE}]
    assert by_uuid[DISPUTED]["dispute_reference"] == "https://example.org/discussions/1"
    assert by_uuid[ACTIVE]["path"] == (next((store / "data").rglob(f"{ACTIVE}.json")).relative_to(store).as_posix())
    assert found["counts"] == {
        "active": 2,
        "flagged": 1,
        "disputed": 1,
        "retracted": 1,
        "superseded": 1,
        "duplicate": 1,
    }
    assert found["total"] == 7


def test_by_status(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert [r["record"] for r in listed(store, capsys, "duplicate")["records"]] == [DUPLICATE]
    both = listed(store, capsys, "retracted", "superseded")
    assert {r["record"] for r in both["records"]} == {RETRACTED, OLD} and both["statuses"] == [
        "retracted",
        "superseded",
    ]
    active = listed(store, capsys, "active")  # flagged and disputed records are active
    assert {r["record"] for r in active["records"]} == {ACTIVE, NEW, DISPUTED, FLAGGED}
    assert active["counts"]["duplicate"] == 1 and active["total"] == 7  # the counts are the store's
    capsys.readouterr()
    argv = ["--list", "--status", "flagged", "--status", "disputed", "--format", "json", "--store", str(store)]
    assert status_main(argv) == 0  # --status repeated adds up
    assert {r["record"] for r in json.loads(capsys.readouterr().out)["records"]} == {FLAGGED, DISPUTED}


def test_active_agrees_with_the_statistics(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.catalog.stats import fill_rates

    active = listed(store, capsys, "active")["records"]
    rates = fill_rates(store)
    assert rates["records"] == len(active) == 4
    assert rates["left_out"] == {"duplicate": 1, "retracted": 1, "superseded": 1}


def test_the_readable_listing(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert eee(["status", "--list", "--status", "duplicate", "superseded", "--store", str(store)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 2
    old = next(line for line in lines if line.startswith(OLD))
    assert old.split()[1] == "superseded" and old.endswith(f"(by {NEW})")
    duplicate = next(line for line in lines if line.startswith(DUPLICATE))
    assert duplicate.split()[1] == "duplicate" and duplicate.endswith(f"(of {ACTIVE}, which stands)")
    assert "data/" in duplicate
    assert captured.err == (
        "2 of 7 records listed; the store: 2 active, 1 flagged, 1 disputed, 1 retracted, 1 superseded, 1 duplicate\n"
    )


def test_usage_errors(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, says in (
        (["--list", ACTIVE], "not both"),
        (["--status", "duplicate"], "add --list"),
        ([], "give a record"),
        (["--list", "--status", "gone"], "invalid choice: 'gone'"),
    ):
        capsys.readouterr()
        assert eee(["status", *argv, "--store", str(store)]) == 64
        captured = capsys.readouterr()
        assert captured.out == "" and says in captured.err, (argv, captured.err)


def test_an_empty_store_lists_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "data").mkdir()  # a store outside git: no events, no records
    found = listed(tmp_path, capsys)
    assert found["records"] == [] and found["total"] == 0
