"""The duplicates index at scale, with real git and the default gate: a hook never builds it
beyond ``HOOK_LIMIT`` records (it says so in one line and checks the staged records among
themselves), ``eee dedup --index`` builds it by streaming (in worker processes past one
chunk), and the post-checkout and post-merge hooks keep it following HEAD."""

from __future__ import annotations

import copy
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import commit, git, hook_env, load_example, make_store, place_record
from eee.governance.duplicates import HOOK_LIMIT, DuplicateIndex

pytestmark = pytest.mark.slow


_BASE = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")


def _doc(i: int, eid: str | None = None) -> dict:
    doc = copy.deepcopy(_BASE)
    doc["model_info"]["id"] = "acme/widget-7b"
    doc["evaluation_id"] = eid or f"run-{i}"
    doc["retrieved_timestamp"] = str(1700000000 + i)
    doc["evaluation_results"][0]["score_details"]["score"] = 5 + i / 10_000
    return doc


def _rid(i: int) -> str:
    return str(uuid.UUID(int=i + 1, version=4))


def _put(repo: Path, i: int, doc: dict) -> Path:
    return place_record(repo, doc, record_uuid=_rid(i))


def _write(repo: Path, first: int, count: int) -> None:
    for i in range(first, first + count):
        _put(repo, i, _doc(i))


def _bulk(repo: Path, first: int, count: int, message: str) -> None:
    """``count`` records committed without the hooks (as a pull or an import would bring them)."""
    _write(repo, first, count)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)


def _eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


def _indexed_tree(repo: Path) -> str | None:
    path = repo / ".git" / "eee-duplicates.sqlite"
    if not path.exists():
        return None
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT v FROM meta WHERE k = 'tree'").fetchone()
    except sqlite3.OperationalError:
        row = None
    db.close()
    return row[0] if row else None


def _head_data(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD:data").stdout.strip()


def _git_hooks(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return git(repo, *args, env=hook_env())


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return make_store(tmp_path)


def test_the_first_commit_in_a_large_store_builds_nothing(store: Path) -> None:
    _bulk(store, 0, HOOK_LIMIT + 1, "a large store, committed without the hooks")
    assert _indexed_tree(store) is None
    _put(store, 90_000, _doc(90_000, eid="run-5"))  # repeats the evaluation of record 5
    _put(store, 90_001, _doc(90_000, eid="run-5"))  # and is staged twice
    git(store, "add", "-A")
    proc = commit(store, "two copies of a committed record")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    notice = [line for line in out.splitlines() if "not checked against the committed records" in line]
    assert len(notice) == 1 and "eee dedup --index" in notice[0] and "no duplicates index yet" in notice[0]
    assert "duplicates data/" in out  # the two staged copies, against each other
    assert _indexed_tree(store) is None  # nothing was built in the hook
    proc = _eee(store, "dedup", "--index")
    assert proc.returncode == 0, proc.stderr
    assert f"{HOOK_LIMIT + 3:,} records read" in proc.stderr
    assert _indexed_tree(store) == _head_data(store)
    _put(store, 90_002, _doc(7))  # a copy of record 7
    git(store, "add", "-A")
    proc = commit(store, "a third copy")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "not checked" not in out
    assert f"{_rid(7)}.json" in out  # found through the index


def test_a_hook_far_behind_says_so(store: Path) -> None:
    _bulk(store, 0, 10, "a few records")
    assert _eee(store, "dedup", "--index").returncode == 0
    _bulk(store, 10, HOOK_LIMIT + 1, "many more, without the hooks")
    _put(store, 90_000, _doc(90_000))
    git(store, "add", "-A")
    proc = commit(store, "one more")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert f"more than {HOOK_LIMIT:,} records behind HEAD" in out and "eee dedup --index" in out


def test_checkouts_and_merges_keep_it_following_head(store: Path) -> None:
    _bulk(store, 0, 5, "five records")
    assert _eee(store, "dedup", "--index").returncode == 0
    _git_hooks(store, "checkout", "-q", "-b", "more")
    _bulk(store, 5, 3, "three more")
    _git_hooks(store, "checkout", "-q", "main")
    assert _indexed_tree(store) == _head_data(store)  # post-checkout
    _git_hooks(store, "checkout", "-q", "more")
    assert _indexed_tree(store) == _head_data(store)
    _git_hooks(store, "checkout", "-q", "main")
    _git_hooks(store, "merge", "-q", "--ff-only", "more")
    assert _indexed_tree(store) == _head_data(store)  # post-merge


def _background_builds(store: Path) -> list[int]:
    """The running ``eee dedup --index --quiet`` processes of ``store`` (from Linux's /proc; a
    finished one, even a zombie not yet reaped, has no command line and is not counted)."""
    where = os.path.realpath(store)
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if b"dedup" in argv and b"--index" in argv and b"--quiet" in argv and cwd == where:
            pids.append(int(entry.name))
    return pids


def test_a_big_jump_is_built_in_the_background(store: Path) -> None:
    _bulk(store, 0, 5, "five records")
    assert _eee(store, "dedup", "--index").returncode == 0
    _git_hooks(store, "checkout", "-q", "-b", "big")
    _bulk(store, 5, HOOK_LIMIT + 1, "many more")
    _git_hooks(store, "checkout", "-q", "main")
    proc = _git_hooks(store, "checkout", "big")
    assert proc.returncode == 0
    from eee.governance.duplicates import build_command

    assert f"building it in the background (`{build_command(store)}`)" in proc.stdout + proc.stderr
    # wait for the background build, however long it takes on a loaded machine: while the index
    # is behind HEAD a build must still be running
    while _indexed_tree(store) != _head_data(store):
        if not _background_builds(store):
            assert _indexed_tree(store) == _head_data(store), "the background build ended short of HEAD"
        time.sleep(0.2)
    assert _eee(store, "dedup", "--index").returncode == 0  # waits for the lock if a build still runs


def test_the_streamed_build_equals_the_incremental_one(store: Path, tmp_path: Path) -> None:
    _bulk(store, 0, 1500, "1,500 records")
    index = DuplicateIndex(store)
    assert index.sync() == 1500  # from scratch: streamed, in two worker processes past one chunk
    _put(store, 5, _doc(5)).unlink()  # one deleted, one changed
    _put(store, 6, _doc(7))
    _write(store, 1500, 700)
    for i in range(1500, 1510):  # ten copies of committed records
        _put(store, i, _doc(i - 1000))
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "more")
    assert index.sync(jobs=2) == 701  # incremental: the changed and the added
    incremental = index.groups()
    index.close()
    (store / ".git" / "eee-duplicates.sqlite").unlink()
    fresh = DuplicateIndex(store)
    assert fresh.sync(jobs=2) == 2199
    assert fresh.groups() == incremental
    assert len(incremental) == 11  # the ten copies, and record 6 changed into a copy of 7
    fresh.close()


@pytest.mark.parametrize("runner", ["prek", "pre-commit"])
def test_prek_and_pre_commit_run_the_same_index_hook(tmp_path: Path, runner: str) -> None:
    repo = make_store(tmp_path, hooks=runner)  # default_install_hook_types: pre-commit, post-checkout, post-merge
    _bulk(repo, 0, 5, "five records")
    assert _eee(repo, "dedup", "--index").returncode == 0
    _git_hooks(repo, "checkout", "-q", "-b", "more")
    _bulk(repo, 5, 3, "three more")
    _git_hooks(repo, "checkout", "-q", "main")
    _git_hooks(repo, "merge", "-q", "--ff-only", "more")
    assert _indexed_tree(repo) == _head_data(repo)
    _put(repo, 90_000, _doc(6))  # a copy of record 6: found through the index
    git(repo, "add", "-A")
    proc = commit(repo, "a copy")
    assert proc.returncode == 0 and f"{_rid(6)}.json" in proc.stdout + proc.stderr
