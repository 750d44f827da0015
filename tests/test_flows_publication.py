"""Immutability starts at publication (issue 25.5): a record added in a commit never pushed
may be amended or reset like any git commit; once pushed (reachable from the upstream, a
remote branch or the trust anchor) it is accepted and never changes. With no upstream, no
remote and no anchor, everything committed counts as published. Real git, the real hooks,
a bare remote."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXED_UUID, commit, git, hook_env, make_store, place_record, record_of

pytestmark = pytest.mark.slow

A = FIXED_UUID


def eee(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=env or hook_env()
    )


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A contributor's clone of a store on a bare remote (its branch tracks origin/main)."""
    origin = make_store(tmp_path, name="origin")
    bare = tmp_path / "store.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    work = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    for key, value in (("user.name", "C"), ("user.email", "c@example.org"), ("commit.gpgsign", "false")):
        git(work, "config", key, value)
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "gate", "install"], cwd=work, capture_output=True, text=True, env=hook_env()
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return work


def _add(repo: Path, benchmark: str | None = None) -> str:
    rel = place_record(repo, record_of("acme/widget-7b"), benchmark=benchmark, record_uuid=A).relative_to(repo)
    git(repo, "add", rel.as_posix())
    proc = commit(repo, "a record")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return rel.as_posix()


def _move(repo: Path, rel: str, benchmark: str) -> str:
    new = f"data/{benchmark}/" + rel.split("/", 2)[2]
    (repo / new).parent.mkdir(parents=True, exist_ok=True)
    git(repo, "mv", rel, new)
    return new


def test_an_unpushed_record_is_amended_a_pushed_one_is_refused(clone: Path) -> None:
    rel = _add(clone, benchmark="mmlu")  # the wrong folder, seen before the push
    new = _move(clone, rel, "wikitext-2")
    amended = commit(clone, "a record, in its folder", "--amend")
    assert amended.returncode == 0, amended.stdout + amended.stderr
    assert git(clone, "show", "--name-status", "--format=", "HEAD").stdout.split() == ["A", new]
    assert eee(clone, "audit").returncode == 0

    git(clone, "push", "-q", "origin", "main", env=hook_env())
    record = clone / new
    record.write_bytes(record.read_bytes().replace(b"8.7939", b"8.7940"))
    git(clone, "add", new)
    refused = commit(clone, "a record, in its folder", "--amend")
    assert refused.returncode == 1
    assert f"{new}::$: [immutable] modifies an accepted record" in refused.stdout + refused.stderr

    git(clone, "checkout", "--", new)  # reset to the pushed commit, then a new one is fine
    git(clone, "reset", "-q", "--hard", "origin/main")
    assert eee(clone, "audit", "--anchor", "origin/main").returncode == 0


def test_a_reset_and_a_recommit_of_an_unpushed_record(clone: Path) -> None:
    rel = _add(clone, benchmark="mmlu")
    git(clone, "reset", "-q", "HEAD~1")  # the commit undone, the record left in the work tree
    target = clone / "data" / "wikitext-2" / "acme" / "widget-7b" / f"{A}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    (clone / rel).rename(target)
    git(clone, "add", "-A")
    assert commit(clone, "the record, placed").returncode == 0
    assert eee(clone, "audit").returncode == 0


def test_a_later_unpushed_commit_changes_the_record_in_its_own_commit(clone: Path) -> None:
    """A change of a record that an earlier unpushed commit added would show in history: it
    is refused, with the way to make it in that commit."""
    rel = _add(clone)
    adding = git(clone, "rev-parse", "HEAD").stdout.strip()
    (clone / "notes.txt").write_text("another commit\n")
    git(clone, "add", "notes.txt")
    assert commit(clone, "notes").returncode == 0
    record = clone / rel
    record.write_bytes(record.read_bytes().replace(b"8.7939", b"8.7940"))
    git(clone, "add", rel)
    refused = commit(clone, "fix the score", "--amend")
    out = refused.stdout + refused.stderr
    assert refused.returncode == 1
    assert f"modifies a record added in {adding[:10]}, not published yet" in out
    assert f"git rebase -i {adding[:10]}^" in out
    # past the hooks, the audit of what would be pushed says the same
    assert commit(clone, "fix the score", "--no-verify").returncode == 0
    audit = eee(clone, "audit", "--anchor", "origin/main")
    assert audit.returncode == 1 and f"added in {adding[:10]}, not published yet" in audit.stdout


def test_without_upstream_remote_or_anchor_everything_committed_is_published(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    rel = _add(store, benchmark="mmlu")
    new = _move(store, rel, "wikitext-2")
    refused = commit(store, "moved", "--amend")
    out = refused.stdout + refused.stderr
    assert refused.returncode == 1 and f"renames an accepted record to {new}" in out
    assert "nothing here says what is published" in out and "git push -u" in out
    env = dict(hook_env(), EEE_AUDIT_ANCHOR=git(store, "rev-parse", "HEAD~1").stdout.strip())
    allowed = git(store, "commit", "-q", "--amend", "-m", "moved", check=False, env=env)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr  # the trust anchor says what is published
    assert eee(store, "audit", env=dict(env, EEE_AUDIT_ANCHOR="")).returncode == 0
