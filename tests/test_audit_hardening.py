"""The audit sees every commit (issue 13, items 1-4): revisions verified as commits, git
never given user input as options, merges, a trust anchor, crafted trees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, load_example, make_store, place_record
from eee.commands.audit import main as audit_main
from eee.gitutil import GitError, verify_commit

RECORD = "v0.3.0_perplexity_unbounded.json"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_store(tmp_path, hooks=False)
    place_record(repo, load_example("aggregate", "valid", RECORD))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a record")
    return repo


@pytest.mark.parametrize(
    "option",
    ["--to=--output={out}", "--from=--output={out}", "--to=--exec=touch {out}", "--to=-o{out}"],
)
def test_option_shaped_revisions_are_refused_and_write_nothing(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    out = tmp_path / "written-by-git.txt"
    code = audit_main(["--repo", str(repo), option.format(out=out)])
    text = capsys.readouterr()
    assert code == 1
    assert not out.exists()
    assert "is not a revision" in text.out + text.err


@pytest.mark.parametrize("rev", ["no-such-branch", "HEAD:README.md", "HEAD^{tree}", "0" * 40])
def test_revisions_that_name_no_commit_are_refused(repo: Path, capsys: pytest.CaptureFixture[str], rev: str) -> None:
    assert audit_main(["--repo", str(repo), "--to", rev]) == 1
    assert repr(rev) in capsys.readouterr().out


def test_a_blob_or_tag_of_a_tree_is_not_a_commit(repo: Path) -> None:
    blob = git(repo, "rev-parse", "HEAD:README.md").stdout.strip()
    with pytest.raises(GitError, match="names no commit"):
        verify_commit(blob, repo)
    git(repo, "tag", "-a", "-m", "annotated", "v1")
    assert verify_commit("v1", repo) == git(repo, "rev-parse", "HEAD").stdout.strip()


def test_a_range_audits_the_commits_after_start(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert audit_main(["--repo", str(repo), "--from", "HEAD~1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["files"] == 1
