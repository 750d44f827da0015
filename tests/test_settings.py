"""The store's settings file: defaults, typed keys, clear refusals, read from any tree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from eee.store import settings
from eee.store.tree import GitTree, WorkTree


def test_a_store_without_the_file_has_the_defaults(tmp_path: Path) -> None:
    assert settings.read(WorkTree(tmp_path)) == settings.DEFAULTS
    assert settings.DEFAULTS.sidecar_git_max_bytes == 1024 * 1024
    assert settings.DEFAULTS.require_signed_commits is False
    assert settings.DEFAULTS.protected_branches == ("main",)


def test_the_protected_paths_and_the_dvc_remote() -> None:
    """What the tools run or check is protected by default; a store names more (or fewer: the
    settings are a maintainer's), and names the DVC remote its pointers' objects live on."""
    assert {"mkdocs.yml", "tools/", "pyproject.toml", ".pre-commit-config.yaml", "dvc.yaml", ".ci/"} <= set(
        settings.DEFAULTS.protected_paths
    )
    assert settings.DEFAULTS.dvc_remote == ""
    got = settings.parse("protected_paths: [mkdocs.yml, docs/overrides/]\ndvc_remote: storage\n")
    assert got.protected_paths == ("mkdocs.yml", "docs/overrides/") and got.dvc_remote == "storage"
    assert settings.is_protected("docs/overrides/main.html", got.protected_paths)
    assert settings.is_protected("mkdocs.yml", got.protected_paths)
    assert not settings.is_protected("mkdocs.yml.bak", got.protected_paths)
    assert not settings.is_protected("docs/guide.md", got.protected_paths)
    from eee.governance import act_of_path

    assert act_of_path("tools/eee/cli.py") == "protected-path"
    assert act_of_path("schemas/registry.json") == "release-schema"  # an act of its own comes first
    assert act_of_path("docs/overrides/main.html", got.protected_paths) == "protected-path"
    assert act_of_path("tools/eee/cli.py", got.protected_paths) is None


def test_keys_left_out_keep_their_defaults() -> None:
    got = settings.parse("sidecar_git_max_bytes: 2048\n")
    assert got.sidecar_git_max_bytes == 2048
    assert got.require_signed_commits is False
    assert settings.parse("") == settings.DEFAULTS


@pytest.mark.parametrize(
    ("text", "pointer", "words"),
    [
        ("sidecar_git_max_byte: 1\n", "$.sidecar_git_max_byte", "did you mean 'sidecar_git_max_bytes'"),
        ("sidecar_git_max_bytes: '1'\n", "$.sidecar_git_max_bytes", "whole number"),
        ("sidecar_git_max_bytes: -1\n", "$.sidecar_git_max_bytes", "whole number"),
        ("sidecar_git_max_bytes: true\n", "$.sidecar_git_max_bytes", "whole number"),
        ("require_signed_commits: 'yes'\n", "$.require_signed_commits", "true or false"),
        ("protected_branches: main\n", "$.protected_branches", "list of branch names"),
        ("protected_branches: ['']\n", "$.protected_branches", "list of branch names"),
        ("protected_paths: tools/\n", "$.protected_paths", "list of repository paths"),
        ("protected_paths: [/etc/passwd]\n", "$.protected_paths", "no leading /"),
        ("protected_paths: [tools/../x]\n", "$.protected_paths", "list of repository paths"),
        ('protected_paths: ["a\\x07"]\n', "$.protected_paths", "list of repository paths"),
        ("dvc_remote: [a, b]\n", "$.dvc_remote", "one name"),
        ("dvc_remote: 7\n", "$.dvc_remote", "one name"),
        ("- a\n- b\n", "$", "mapping"),
        ("a: &x 1\nb: *x\n", "$", "not plain YAML"),
        ("sidecar_git_max_bytes: !!binary aGk=\n", "$", "not plain YAML"),
    ],
)
def test_a_bad_file_is_refused_naming_the_key(text: str, pointer: str, words: str) -> None:
    with pytest.raises(settings.SettingsProblem) as exc:
        settings.parse(text)
    assert exc.value.pointer == pointer
    assert words in f"{exc.value.message} {exc.value.hint}"


def test_read_from_a_commit_not_the_disk(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    (tmp_path / "governance").mkdir()
    (tmp_path / settings.SETTINGS_PATH).write_text("sidecar_git_max_bytes: 10\n")
    git("add", ".")
    git("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "settings", "--no-verify")
    (tmp_path / settings.SETTINGS_PATH).write_text("sidecar_git_max_bytes: 99\n")  # not committed
    with GitTree(tmp_path, git("rev-parse", "HEAD").strip()) as tree:
        assert settings.read(tree).sidecar_git_max_bytes == 10
    assert settings.read(WorkTree(tmp_path)).sidecar_git_max_bytes == 99


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "governance").mkdir()
    (tmp_path / settings.SETTINGS_PATH).write_bytes(b"sidecar_git_max_bytes: \xff\n")
    with pytest.raises(settings.SettingsProblem, match="UTF-8"):
        settings.read(WorkTree(tmp_path))
