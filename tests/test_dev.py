"""The test tooling itself: `tools/dev.py test`'s defaults (every core, the slowest tests
listed) and the prepared stores of tests/conftest.py (built once per process, copied per
test, each copy a store of its own)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import COMMITTER, PROJECT, git, make_store

sys.path.insert(0, str(PROJECT / "tools"))
import dev


def test_the_suite_runs_on_every_core_and_lists_its_ten_slowest_tests(monkeypatch) -> None:
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 2)
    assert dev.test_options([]) == ["-n", "auto", "--dist", "loadfile", "--durations=10"]
    assert dev.test_options(["-p", "no:cacheprovider"]) == ["-n", "auto", "--dist", "loadfile", "--durations=10"]
    assert dev.test_options(["-k", "version"])[:2] == ["-n", "auto"]
    # said otherwise: one process, or as many durations as asked
    assert dev.test_options(["-n", "0"]) == ["--durations=10"]
    assert dev.test_options(["-n4"]) == ["--durations=10"]
    assert dev.test_options(["-p", "no:xdist"]) == ["--durations=10"]
    assert dev.test_options(["--durations=0"]) == ["-n", "auto", "--dist", "loadfile"]
    # a run of the files it names stays in one process (no workers to start for one test)
    assert dev.test_options(["-q", "tests/test_cli.py", "-k", "version"]) == ["--durations=10"]
    assert dev.test_options(["tests/test_cli.py::test_version"]) == ["--durations=10"]
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 1)
    assert dev.test_options([]) == ["--durations=10"]


def _head_tree(repo: Path) -> str:
    return git(repo, "ls-tree", "-r", "--name-only", "HEAD").stdout


def test_a_prepared_store_is_a_store_of_its_own(tmp_path: Path) -> None:
    one = make_store(tmp_path / "a")
    two = make_store(tmp_path / "b")
    assert one != two and (one / ".git").is_dir() and (two / ".git").is_dir()
    (one / "README.md").write_text("changed in one\n")
    assert (two / "README.md").read_text() == "a test store\n"  # a copy, nothing shared
    assert (
        git(one, "log", "--format=%an <%ae>|%s").stdout.strip()
        == f"{COMMITTER['name']} <{COMMITTER['email']}>|empty store"
    )
    assert git(two, "status", "--porcelain").stdout == ""
    assert "eee lean gate" in (two / ".git" / "hooks" / "pre-commit").read_text()
    assert not (make_store(tmp_path / "c", hooks=False) / ".git" / "hooks" / "pre-commit").exists()


def test_a_prepared_store_with_dvc_has_its_own_remote_in_its_one_commit(tmp_path: Path) -> None:
    stores = [make_store(tmp_path / name, with_dvc=True, sidecar_git_max_bytes=0) for name in ("a", "b")]
    for store in stores:
        remote = str(store.parent / "remote")
        assert f"url = {remote}" in (store / ".dvc" / "config").read_text()
        assert git(store, "status", "--porcelain").stdout == ""  # the config committed as it reads
        assert f"url = {remote}" in git(store, "show", "HEAD:.dvc/config").stdout
        assert git(store, "rev-list", "--count", "HEAD").stdout.strip() == "1"
        assert "governance/settings.yaml" in _head_tree(store)
        proc = subprocess.run(
            [sys.executable, "-m", "dvc", "remote", "list"], cwd=store, capture_output=True, text=True, check=True
        )
        assert remote in "".join(proc.stdout.split())  # dvc wraps a long path at the width of its table
