"""The trees the validator reads: the work tree, a commit, planned files over a tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import git
from eee.git import cli as gitcli
from eee.store import tree as treemod
from eee.store.tree import GitTree, Overlay, Unreadable, WorkTree
from eee.validation.validate import validate_tree


def _store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    (root / "data" / "b").mkdir(parents=True)
    (root / "data" / "b" / "r.json").write_bytes(b"{}\n")
    os.symlink("r.json", root / "data" / "b" / "link.json")
    os.mkfifo(root / "data" / "b" / "fifo.json")
    return root


def test_work_tree_lists_everything_and_reads_regular_files_only(tmp_path: Path) -> None:
    t = WorkTree(_store(tmp_path))
    assert t.files("data") == ["data/b/fifo.json", "data/b/link.json", "data/b/r.json"]
    assert sorted(t.names("data/b")) == ["fifo.json", "link.json", "r.json"]
    assert (t.mode("data/b/r.json"), t.mode("data/b/link.json"), t.mode("data/b/nope")) == ("100644", "120000", None)
    assert t.read("data/b/r.json") == b"{}\n"
    for bad, message in (("data/b/link.json", "symbolic link"), ("data/b/fifo.json", "not a regular file")):
        with pytest.raises(Unreadable) as caught:
            t.read(bad)  # a FIFO is refused, never opened for a blocking read
        assert message in caught.value.finding.message
        assert caught.value.finding.file.endswith(bad)


def test_reads_are_capped(tmp_path: Path) -> None:
    t = WorkTree(_store(tmp_path))
    with pytest.raises(Unreadable, match="more than the 2 bytes"):
        t.read("data/b/r.json", limit=2)
    assert treemod.MAX_READ > 100 * 110_556  # far above the largest reference record


def test_a_fifo_in_the_store_is_one_finding_and_the_run_goes_on(tmp_path: Path) -> None:
    summary = validate_tree(WorkTree(_store(tmp_path)))
    by_file = {r.file.rsplit("/", 1)[-1]: [f.message for f in r.findings] for r in summary.results}
    assert set(by_file) == {"fifo.json", "link.json", "r.json"}
    assert any("not a regular file" in m for m in by_file["fifo.json"])  # "is a named pipe (FIFO), not a regular file"
    assert "is a symbolic link" in by_file["link.json"]


def test_git_tree_reads_blobs_of_the_commit_not_the_work_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "data" / "b").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "data" / "b" / "r.json").write_bytes(b"one\n")
    os.symlink("r.json", repo / "data" / "b" / "link.json")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "one")
    commit = git(repo, "rev-parse", "HEAD").stdout.strip()
    (repo / "data" / "b" / "r.json").write_bytes(b"changed on disk\n")
    with GitTree(repo, commit) as t:
        assert t.files() == ["data/b/link.json", "data/b/r.json"]
        assert t.names("data") == ["b"]
        assert t.read("data/b/r.json") == b"one\n"
        assert t.read("data/b/r.json") == b"one\n"  # the batch process serves many reads
        assert t.mode("data/b/link.json") == "120000"
        assert t.display("data/b/r.json") == f"{commit[:10]}:data/b/r.json"
        with pytest.raises(Unreadable, match="symbolic link"):
            t.read("data/b/link.json")
        with pytest.raises(Unreadable):
            t.read("data/b/absent.json")


def test_git_tree_prefetch_lists_folders_in_a_few_calls_as_one_at_a_time_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit of a commit that adds records in many folders lists them a depth at a time
    (literally: a folder named with glob characters is that folder); what it finds is what
    the folder-by-folder walk finds, files, links, sub-folders and absent folders alike."""
    repo = tmp_path / "repo"
    paths = [f"data/b{i % 3}/dev/m*{i}/r{i}.json" for i in range(12)] + ["data/b0/dev/m[0]/r.json", "top.txt"]
    for rel in paths:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(rel.encode())
    os.symlink("r0.json", repo / "data" / "b0" / "dev" / "m*0" / "link.json")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "one")
    asked = [*paths, "data/b0/dev/m*0/link.json", "data/none/x/y.json", "top.txt/under.json"]
    calls: list[tuple[str, ...]] = []
    real = gitcli.run  # every git command line is built in eee.git.cli (GitTree's listings included)

    def counted(*args: str, **kw: object) -> object:
        calls.append(args)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitcli, "run", counted)
    with GitTree(repo, "HEAD") as ahead, GitTree(repo, "HEAD") as lazy:
        ahead.prefetch(asked)
        listed = len(calls)
        assert listed <= 6  # the root, then one call per depth: not one per folder (15 of them)
        for rel in asked:
            folder = rel.rpartition("/")[0]
            assert ahead.names(folder) == lazy.names(folder), folder
            assert ahead.mode(rel) == lazy.mode(rel), rel
        assert len(calls) - listed > 6  # the lazy tree asked folder by folder
        ahead.read_ahead(asked)

        def one_by_one(name: str) -> bytes | None:
            raise AssertionError(f"{name} asked on its own after read_ahead")

        monkeypatch.setattr(ahead._batch, "blob", one_by_one)
        assert [ahead.read(rel) for rel in paths] == [rel.encode() for rel in paths]  # from the one batch
        with pytest.raises(Unreadable, match="symbolic link"):
            ahead.read("data/b0/dev/m*0/link.json")


def test_overlay_puts_planned_files_over_the_base(tmp_path: Path) -> None:
    base = WorkTree(_store(tmp_path))
    t = Overlay(base, {"data/b/new.json": b"[]", "data/c/d/x.json": b"1"})
    assert "data/b/new.json" in t.files("data") and "data/b/r.json" in t.files("data")
    assert "new.json" in t.names("data/b") and t.names("data/c") == ["d"]
    assert t.read("data/b/new.json") == b"[]" and t.read("data/b/r.json") == b"{}\n"
    assert t.exists("data/c/d") and t.exists("data/c/d/x.json") and not t.exists("data/c/e")
    assert t.display("data/b/new.json") == "data/b/new.json"
    assert not (tmp_path / "store" / "data" / "c").exists()


def test_an_event_over_the_work_tree_finds_a_planned_record(tmp_path: Path) -> None:
    """An overlay's events are checked against its planned records and the store below."""
    from eee.rules.ledger import record_exists

    base = WorkTree(_store(tmp_path))
    planned = "data/b/d/m/2b5e4f1c-7a8d-4c3b-9e6f-1a2b3c4d5e6f.json"
    exists = record_exists(Overlay(base, {planned: b"{}"}), ["2b5e4f1c-7a8d-4c3b-9e6f-1a2b3c4d5e6f"])
    assert exists("2b5e4f1c-7a8d-4c3b-9e6f-1a2b3c4d5e6f")
    assert not exists("3b5e4f1c-7a8d-4c3b-9e6f-1a2b3c4d5e6f")
