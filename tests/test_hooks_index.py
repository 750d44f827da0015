"""The hooks read what will be committed (issue 13, item 13): the index's blobs, not the
work-tree files, and no environment variable stands in for git's own answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import commit, git, hook_env, load_example, make_store, place_record

RECORD = "v0.3.0_perplexity_unbounded.json"
pytestmark = pytest.mark.slow


def _filter(store: Path, name: str, clean: str) -> None:
    """A git clean filter on every .json: the staged blob is ``clean`` applied to the file."""
    (store / ".gitattributes").write_text(f"*.json filter={name}\n")
    git(store, "config", f"filter.{name}.clean", clean)
    git(store, "config", f"filter.{name}.smudge", "cat")
    git(store, "add", ".gitattributes")
    git(store, "commit", "-q", "--no-verify", "-m", "a clean filter")


def _staged(store: Path, rel: str) -> bytes:
    return subprocess.run(["git", "cat-file", "blob", f":{rel}"], cwd=store, capture_output=True, check=True).stdout


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return make_store(tmp_path)


def test_a_clean_filter_cannot_show_the_validator_a_valid_record(store: Path) -> None:
    _filter(store, "spoil", 'sed -e \'s/"schema_version": "0.3.0"/"schema_version": "9.9.9"/\'')
    path = place_record(store, load_example("aggregate", "valid", RECORD))
    git(store, "add", "-A")
    rel = path.relative_to(store).as_posix()
    assert b'"9.9.9"' in _staged(store, rel) and b'"9.9.9"' not in path.read_bytes()
    proc = commit(store, "a record whose blob differs from the work tree")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "unknown schema_version '9.9.9'" in out


def test_a_clean_filter_cannot_show_the_naming_hook_another_model(store: Path) -> None:
    _filter(store, "rename", 'sed -e \'s#"meta-llama/Llama-2-7b-hf"#"acme/other-model"#\'')
    path = place_record(store, load_example("aggregate", "valid", RECORD))
    git(store, "add", "-A")
    assert b"acme/other-model" in _staged(store, path.relative_to(store).as_posix())
    proc = commit(store, "folders that do not match the committed model id")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "do not match model_info.id 'acme/other-model'" in out


def test_a_valid_blob_with_a_broken_work_tree_file_commits(store: Path) -> None:
    """The other way round: what is committed is valid, the work tree is not: the commit passes."""
    _filter(store, "repair", 'sed -e \'s/"schema_version": "9.9.9"/"schema_version": "0.3.0"/\'')
    doc = load_example("aggregate", "valid", RECORD)
    doc["schema_version"] = "9.9.9"
    place_record(store, doc)
    git(store, "add", "-A")
    proc = commit(store, "valid as committed")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_staged_list_cannot_be_replaced_from_the_environment(store: Path, tmp_path: Path) -> None:
    path = place_record(store, load_example("aggregate", "valid", RECORD))
    git(store, "add", "-A")
    assert commit(store, "a record").returncode == 0
    doc = json.loads(path.read_text())
    doc["evaluation_results"][0]["score_details"]["score"] = 9.5
    path.write_text(json.dumps(doc, indent=2))
    git(store, "add", "-A")
    empty = tmp_path / "nothing-staged.raw"
    empty.write_bytes(b"")
    env = dict(hook_env(), EEE_STAGED_RAW=str(empty))
    proc = git(store, "commit", "-m", "edit an accepted record", check=False, env=env)
    assert proc.returncode == 1
    assert "modifies an accepted record" in proc.stdout + proc.stderr
