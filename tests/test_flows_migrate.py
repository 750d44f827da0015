"""`eee migrate` migrates flagged records and carries their flags (issue 25.6): a record the
store accepted through a flag (a score outside its bounds) migrates; its copy says which
flags it carries; a finding the migration itself resolves is no longer flagged; a flag bound
to other bytes accepts nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXED_UUID, PROJECT, git, hook_env, make_store, place_record
from eee.migrate.chain import migrate
from eee.migrate.export import _carried
from eee.migrate.provenance import FLAGS
from eee.rules.flags import Flag, content_ids
from eee.store.schemas import EVAL

SCORE = "$.evaluation_results[0].score_details.score"


def eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


def _flagged_0_2_0() -> dict:
    doc = json.loads((EXAMPLES / "aggregate" / "valid" / "v0.2.0_helm_leaderboard.json").read_text())
    result = doc["evaluation_results"][0]
    result["score_details"]["score"] = result["metric_config"]["max_score"] + 1  # outside its bounds
    return doc


@pytest.mark.slow
def test_a_flagged_record_migrates_and_its_copy_carries_the_flag(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    rel = place_record(store, _flagged_0_2_0(), record_uuid=FIXED_UUID).relative_to(store).as_posix()
    git(store, "add", rel)
    flagged = eee(
        store, "flag", FIXED_UUID, "--rule", "score", "--json-path", SCORE, "--reason", "as HELM says", "--commit"
    )
    assert flagged.returncode == 0, flagged.stdout + flagged.stderr  # the staged record committed with its flag
    assert eee(store, "audit").returncode == 0
    event = json.loads(eee(store, "status", FIXED_UUID, "--format", "json").stdout)["flags"][0]["event"]

    out = tmp_path / "out"
    migrated = eee(store, "migrate", "data", "--out", str(out))
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    assert "1 migrated to 0.3.0" in migrated.stdout and "0 refused" in migrated.stdout
    copy = json.loads((out / rel).read_text())
    assert copy["schema_version"] == "0.3.0"
    carried = json.loads(copy["source_metadata"]["additional_details"][FLAGS])
    assert carried == [{"event": event, "rule": "score", "path": SCORE}]
    (entry,) = json.loads((out / "migration-report.json").read_text())["records"]
    assert entry["status"] == "migrated" and entry["flags"] == carried and entry["flags_resolved"] == []

    # the same record without its flag is refused, as before
    bare = tmp_path / "bare"
    (bare / rel).parent.mkdir(parents=True)
    (bare / rel).write_bytes((store / rel).read_bytes())
    refused = eee(tmp_path, "migrate", str(bare / "data"), "--out", str(tmp_path / "out2"))
    assert refused.returncode == 1 and "[score]" in refused.stdout


def _flag(rel: str, data: bytes, path: str = SCORE) -> Flag:
    sha256, _ = content_ids(data)
    return Flag("score", path, FIXED_UUID, rel, sha256, None, "20260101T000000.000000Z-flag-8e6f3a4e-abcdef")


def test_a_finding_the_migration_resolves_is_no_longer_flagged() -> None:
    rel = f"data/helm_lite/acme/widget-7b/{FIXED_UUID}.json"
    doc = _flagged_0_2_0()
    data = json.dumps(doc).encode()
    flag = _flag(rel, data)
    result = migrate(doc, EVAL, "0.3.0", file=rel, accept=lambda f: f.check == "score" and f.pointer == SCORE)
    assert [(f.check, f.pointer) for f in result.accepted] == [("score", SCORE)]
    assert _carried([flag], result, rel, rel, data) == ([{"event": flag.event, "rule": "score", "path": SCORE}], [])
    result.doc["evaluation_results"][0]["score_details"]["score"] = 0.5  # as if a step had fixed it
    assert _carried([flag], result, rel, rel, data) == ([], [{"event": flag.event, "rule": "score", "path": SCORE}])
    other = _flag(rel, data + b" ")  # bound to other bytes: it accepts nothing here
    assert _carried([other], result, rel, rel, data) == ([], [])


def test_the_stores_flagged_records_all_migrate(tmp_path: Path) -> None:
    """The store accepted its records through flags; every one of them migrates, and every
    flag of the ledger is carried by its record's copy."""
    records_root = PROJECT  # the store's own records and ledger
    out = tmp_path / "out"
    proc = eee(records_root, "migrate", "data", "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stdout[-2000:]
    report = json.loads((out / "migration-report.json").read_text())
    assert report["summary"]["refused"] == 0
    events = list((records_root / "governance" / "events").glob("*-flag-*.yaml"))
    carried = {f["event"] for r in report["records"] for f in r["flags"]}
    assert len(carried) == len(events) > 0
