"""An import manifest names as imported only what its own import added (issue 24.5): the
commit that adds it, and the batch commits of the same import right before it. A manifest
that re-attributes records already in the store is refused by the imports hook and by the
audit, roles or not. Real git, the real hooks, a real ``eee import``."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import COMMITTER, commit, git, hook_env, make_store, place_record, record_of
from eee.governance.manifests import dumps, loads, path_for
from eee.store.strictjson import canonical

pytestmark = pytest.mark.slow

U1 = "10000000-0000-4000-8000-000000000001"
U2 = "20000000-0000-4000-8000-000000000002"
U3 = "30000000-0000-4000-8000-000000000003"
OTHER_ID = "20270101T000000.000000Z-import-abcdef"


def eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


def _audit_import_errors(repo: Path) -> list[dict]:
    report = json.loads(eee(repo, "audit", "--format", "json").stdout)
    return [f for f in report["findings"] if f["check"] == "import"]


@pytest.fixture
def imported(tmp_path: Path) -> tuple[Path, dict]:
    """A store into which `eee import --commit` brought two records (one batch per benchmark:
    two batches, then the manifest)."""
    source = tmp_path / "snapshot"
    for i, (uuid, benchmark) in enumerate(((U1, "wikitext-2"), (U2, "wikitext"))):
        place_record(source, record_of(f"acme/model-{i}", 5.0 + i), benchmark=benchmark, record_uuid=uuid)
    repo = make_store(tmp_path)
    proc = eee(repo, "import", str(source), "--commit", "--format", "json", "--no-progress")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["counts"]["imported"] == 2 and len(report["commits"]) == 3
    manifest = loads((repo / report["manifest"]).read_text(encoding="utf-8"))
    return repo, manifest


def test_an_import_s_own_commits_pass(imported: tuple[Path, dict]) -> None:
    repo, _ = imported
    assert _audit_import_errors(repo) == []


def test_a_second_manifest_re_attributing_accepted_records_is_refused(imported: tuple[Path, dict]) -> None:
    repo, manifest = imported
    forged = {**manifest, "id": OTHER_ID, "source": "somewhere else"}
    rel = path_for(OTHER_ID)
    (repo / rel).write_text(dumps(forged), encoding="utf-8")
    git(repo, "add", rel)
    refused = commit(repo, "a second manifest for the same records")
    out = refused.stdout + refused.stderr
    assert refused.returncode == 1
    assert f"{rel}::$.files[0].store: [import] names data/" in out and "its import did not add it" in out
    # past the hook: the audit finds it, one finding per record it names
    assert commit(repo, "a second manifest for the same records", "--no-verify").returncode == 0
    errors = _audit_import_errors(repo)
    assert len(errors) == 2 and all(f["file"].endswith(rel) for f in errors)


def test_a_manifest_after_records_added_by_another_commit_is_refused(tmp_path: Path) -> None:
    """Records added by an ordinary commit, then a manifest (even one whose message claims
    the import) naming them: refused; the batches of an import say so in their own message."""
    repo = make_store(tmp_path)
    rel = place_record(repo, record_of("acme/model-0", 5.0), record_uuid=U3).relative_to(repo).as_posix()
    git(repo, "add", "-A")
    assert commit(repo, "a contributor's record").returncode == 0
    manifest = {
        "manifest_schema": "1.0.0",
        "id": OTHER_ID,
        "source": "elsewhere",
        "revision": None,
        "time": "2027-01-01T00:00:00.000000Z",
        "tool": "eee 0.1.0",
        "actor": dict(COMMITTER),  # who commits it (the actor rule)
        "counts": {"imported": 1, "relocated": 0, "flagged": 0, "already_present": 0, "refused": 0, "total": 1},
        "files": [
            {
                "source": rel,
                "kind": "record",
                "outcome": "imported",
                "store": rel,
                "sha256": hashlib.sha256((repo / rel).read_bytes()).hexdigest(),
            }
        ],
    }
    (repo / path_for(OTHER_ID)).parent.mkdir(parents=True)
    (repo / path_for(OTHER_ID)).write_text(dumps(manifest), encoding="utf-8")
    git(repo, "add", "-A")
    refused = commit(repo, f"Import {OTHER_ID}: manifest")
    assert refused.returncode == 1 and "its import did not add it" in refused.stdout + refused.stderr
    # the same manifest in the commit that adds its record is the import's own
    git(repo, "reset", "-q", "--hard", "HEAD~")
    other = place_record(repo, record_of("acme/model-9", 6.0), record_uuid=U1).relative_to(repo).as_posix()
    sha = hashlib.sha256(canonical(record_of("acme/model-9", 6.0))).hexdigest()
    manifest["files"][0].update(source=other, store=other, sha256=sha)
    (repo / path_for(OTHER_ID)).parent.mkdir(parents=True, exist_ok=True)
    (repo / path_for(OTHER_ID)).write_text(dumps(manifest), encoding="utf-8")
    git(repo, "add", "-A")
    accepted = commit(repo, "a record and its manifest, in one commit")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert _audit_import_errors(repo) == []
