"""Each hook's ``main(argv)`` called in-process, in temporary git repositories."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conftest import FIXED_UUID, PROJECT, git, load_example, make_store, place_record
from eee.hooks import duplicates, immutable, naming, samples
from eee.hooks import validate as validate_hook

OTHER_UUID = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"
RECORD = "v0.3.0_perplexity_unbounded.json"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    store = make_store(tmp_path, hooks=False)
    monkeypatch.chdir(store)
    return store


def _rel(path: Path, repo: Path) -> str:
    return path.relative_to(repo).as_posix()


def _commit_all(repo: Path, message: str = "commit") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)


# --- validate -------------------------------------------------------------------------


def test_validate_hook_blocks_errors_and_passes_warnings(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = place_record(repo, load_example("aggregate", "valid", RECORD))
    git(repo, "add", "-A")  # the hooks read what is staged
    assert validate_hook.main([_rel(good, repo)]) == 0
    bad_doc = load_example("aggregate", "valid", RECORD)
    del bad_doc["eval_library"]
    bad = place_record(repo, bad_doc, record_uuid=OTHER_UUID)
    git(repo, "add", "-A")
    assert validate_hook.main([_rel(bad, repo)]) == 1
    assert '"eval_library" is a required property' in capsys.readouterr().out
    # a warning (folders that do not come from the model id) is shown, not blocking
    wrong = repo / "data" / "wikitext" / "meta" / "llama" / f"{FIXED_UUID}.json"
    wrong.parent.mkdir(parents=True)
    wrong.write_bytes(good.read_bytes())
    git(repo, "add", "-A")
    assert validate_hook.main([_rel(wrong, repo)]) == 0
    assert "warning: folders meta/llama do not match" in capsys.readouterr().out


def test_validate_hook_ignores_files_outside_data(repo: Path) -> None:
    (repo / "notes.json").write_text("not json at all")
    assert validate_hook.main(["notes.json", "README.md"]) == 0


# --- naming ---------------------------------------------------------------------------


def test_naming_accepts_a_canonical_record(repo: Path) -> None:
    path = place_record(repo, load_example("aggregate", "valid", RECORD))
    git(repo, "add", "-A")
    assert naming.main([_rel(path, repo)]) == 0


def test_naming_requires_folders_from_model_id(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = load_example("aggregate", "valid", RECORD)
    path = repo / "data" / "wikitext" / "meta" / "llama-2-7b" / f"{FIXED_UUID}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    git(repo, "add", "-A")
    assert naming.main([_rel(path, repo)]) == 1
    assert "move the record to data/wikitext/meta-llama/Llama-2-7b-hf/" in capsys.readouterr().out


def test_naming_refuses_case_only_collision_with_the_tree(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = load_example("aggregate", "valid", RECORD)
    place_record(repo, doc, benchmark="MMLU")
    _commit_all(repo)
    path = place_record(repo, doc, benchmark="mmlu", record_uuid=OTHER_UUID)
    git(repo, "add", "-A")
    assert naming.main([_rel(path, repo)]) == 1
    assert "'data/mmlu' differs only in letter case from 'data/MMLU' in the tree" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (f"{FIXED_UUID.upper()}.json", "has uppercase letters"),
        ("result.json", "not a canonical UUID v4"),
        (f"{FIXED_UUID}.json.bak", "unexpected file"),
    ],
)
def test_naming_checks_file_names(repo: Path, capsys: pytest.CaptureFixture[str], name: str, message: str) -> None:
    path = repo / "data" / "wikitext" / "meta-llama" / "Llama-2-7b-hf" / name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(load_example("aggregate", "valid", RECORD)))
    git(repo, "add", "-A")
    assert naming.main([_rel(path, repo)]) == 1
    assert message in capsys.readouterr().out


# --- immutable ------------------------------------------------------------------------


def test_immutable_allows_additions_and_refuses_changes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = place_record(repo, load_example("aggregate", "valid", RECORD))
    git(repo, "add", "-A")
    assert immutable.main([]) == 0  # adding is how records arrive
    _commit_all(repo)
    path.chmod(0o755)
    git(repo, "add", "-A")
    assert immutable.main([]) == 1
    assert "changes the mode of an accepted record" in capsys.readouterr().out


def test_immutable_protects_released_schemas_and_the_registry(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(PROJECT / "schemas", repo / "schemas")
    _commit_all(repo, "schemas")
    target = repo / "schemas" / "0.3.0" / "eval.schema.json"
    target.write_text(target.read_text().replace('"minItems": 1', '"minItems": 2', 1))
    git(repo, "add", "-A")
    assert immutable.main([]) == 1
    assert (
        "schemas/0.3.0/eval.schema.json::$: [immutable] modifies an accepted released schema file"
        in capsys.readouterr().out
    )
    git(repo, "checkout", "--", ".")
    git(repo, "reset", "-q", "--hard")
    # a new version may be added; the pins of released ones never change
    registry = json.loads((repo / "schemas" / "registry.json").read_text())
    new = copy.deepcopy(registry)
    new["versions"]["0.4.0"] = dict(new["versions"]["0.3.0"])
    (repo / "schemas" / "0.4.0").mkdir()
    for name in ("eval.schema.json", "instance_level_eval.schema.json"):
        shutil.copyfile(repo / "schemas" / "0.3.0" / name, repo / "schemas" / "0.4.0" / name)
    (repo / "schemas" / "registry.json").write_text(json.dumps(new, indent=2))
    git(repo, "add", "-A")
    assert immutable.main([]) == 0
    new["versions"]["0.2.0"]["eval.schema.json"] = "0" * 64
    (repo / "schemas" / "registry.json").write_text(json.dumps(new, indent=2))
    git(repo, "add", "-A")
    assert immutable.main([]) == 1
    assert "changes the pins of released version 0.2.0" in capsys.readouterr().out


def test_immutable_protects_events(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    event = repo / "governance" / "events" / "20260101T000000Z-retract-abc.yaml"
    event.parent.mkdir(parents=True)
    event.write_text("action: retract\n")
    git(repo, "add", "-A")
    assert immutable.main([]) == 0
    _commit_all(repo)
    git(repo, "rm", "-q", _rel(event, repo))
    assert immutable.main([]) == 1
    assert "deletes an accepted governance event" in capsys.readouterr().out


def test_immutable_allows_dvc_gitignore_updates(repo: Path) -> None:
    ignore = repo / "data" / "wikitext" / "acme" / "widget" / ".gitignore"
    ignore.parent.mkdir(parents=True)
    ignore.write_text(f"/{FIXED_UUID}_samples.jsonl\n")
    _commit_all(repo)
    ignore.write_text(ignore.read_text() + f"/{OTHER_UUID}_samples.jsonl\n")
    git(repo, "add", "-A")
    assert immutable.main([]) == 0


def test_immutable_before_the_first_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q")
    monkeypatch.chdir(repo)
    assert immutable.main([]) == 0


# --- samples --------------------------------------------------------------------------


def _threshold(repo: Path, limit: int) -> None:
    """The store's sidecar_git_max_bytes, committed: the hooks read HEAD's (the parent's)."""
    (repo / "governance").mkdir(exist_ok=True)
    (repo / "governance" / "settings.yaml").write_text(f"sidecar_git_max_bytes: {limit}\n")
    _commit_all(repo, "the threshold")


def _stage_sidecar(repo: Path, size: int, uuid: str = FIXED_UUID) -> str:
    rel = f"data/b/d/m/{uuid}_samples.jsonl"
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_bytes(b"x" * (size - 1) + b"\n")
    git(repo, "add", rel)
    return rel


def test_samples_hook_keeps_sidecars_above_the_threshold_out_of_git(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _threshold(repo, 16)
    small = _stage_sidecar(repo, 16)  # at the threshold: git keeps it
    assert samples.main([small]) == 0
    big = _stage_sidecar(repo, 17, OTHER_UUID)
    assert samples.main([small, big, "tests/x_samples.jsonl"]) == 1
    out = capsys.readouterr().out
    assert f"{big}::$: [samples] a sidecar of 17 bytes is committed to git" in out
    assert "sidecar_git_max_bytes: 16" in out and small not in out
    assert f"hint: `git rm --cached {big}`, then `" in out and f"samples add {big}`" in out


def test_samples_hook_reads_the_threshold_of_the_parent_commit(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _threshold(repo, 16)
    (repo / "governance" / "settings.yaml").write_text("sidecar_git_max_bytes: 1048576\n")
    git(repo, "add", "-A")  # raised in the same commit: not yet in force
    big = _stage_sidecar(repo, 17)
    assert samples.main([big]) == 1
    assert "sidecar_git_max_bytes: 16)" in capsys.readouterr().out
    _commit_all(repo, "the threshold raised, with the sidecar (--no-verify)")
    again = _stage_sidecar(repo, 17, OTHER_UUID)
    assert samples.main([again]) == 0  # the next commit judges by the raised threshold


def test_samples_hook_refuses_unusable_settings_with_the_key(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "governance").mkdir()
    (repo / "governance" / "settings.yaml").write_text("sidecar_git_max_byte: 10\n")
    _commit_all(repo)
    assert samples.main([_stage_sidecar(repo, 5)]) == 1
    out = capsys.readouterr().out
    assert "governance/settings.yaml::$.sidecar_git_max_byte: [settings]" in out
    assert "did you mean 'sidecar_git_max_bytes'" in out


def test_samples_hook_a_sidecar_in_git_and_in_dvc_at_once(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rel = _stage_sidecar(repo, 10)
    (repo / (rel + ".dvc")).write_text("outs:\n- md5: 0123456789abcdef0123456789abcdef\n  size: 10\n  hash: md5\n")
    git(repo, "add", rel + ".dvc")
    assert samples.main([rel, rel + ".dvc"]) == 1
    out = capsys.readouterr().out
    assert out.count("is in git and tracked by its DVC pointer") == 1  # said once, on the sidecar
    assert samples.main([rel + ".dvc"]) == 1  # only the pointer staged with it: said there


# --- duplicates -----------------------------------------------------------------------


def _mmlu(library: str, score: float) -> dict:
    doc = load_example("aggregate", "valid", RECORD)
    doc["model_info"]["id"] = "meta-llama/llama-65b"
    doc["eval_library"] = {"name": library, "version": "unknown"}
    result = doc["evaluation_results"][0]
    result["source_data"] = {"dataset_name": "MMLU", "source_type": "other"}
    result["metric_config"] = {
        "metric_id": "accuracy",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0,
        "max_score": 100,
    }
    result["score_details"] = {"score": score}
    return doc


def test_duplicates_warn_only_for_the_same_eval_library(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    helm = place_record(repo, _mmlu("helm", 63.7))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "helm")
    lm_eval = place_record(repo, _mmlu("lm_eval", 48.8), record_uuid=OTHER_UUID)
    git(repo, "add", "-A")  # hooks read what is staged
    assert duplicates.main([_rel(lm_eval, repo)]) == 0
    assert capsys.readouterr().out == ""  # two harnesses: two valid records, not duplicates
    again = place_record(repo, _mmlu("helm", 63.7), record_uuid="2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d")
    git(repo, "add", "-A")
    assert duplicates.main([_rel(again, repo)]) == 0  # never blocks
    out = capsys.readouterr().out
    assert f"warning: duplicates {_rel(helm, repo)}: identical content apart from evaluation_id" in out
    assert "not a re-run" in out and " mark-duplicate 2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d --of " in out


# --- the runner -----------------------------------------------------------------------


def _runner(args: list[str], cwd: Path, env_extra: dict[str, str] | None = None):
    import os
    import subprocess
    import sys

    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "eee.hooks", *args], cwd=cwd, capture_output=True, text=True, env=env)


def test_runner_runs_several_hooks_in_one_process(repo: Path) -> None:
    """The hooks named run, each on its files, and only they: a staged sidecar without its
    record (validate's error, not asked for) and a record in the wrong folders (naming's)."""
    _threshold(repo, 0)  # every sidecar goes to DVC
    sidecar = repo / "data" / "b" / "d" / "m" / f"{FIXED_UUID}_samples.jsonl"
    sidecar.parent.mkdir(parents=True)
    sidecar.write_text("{}\n")
    record = repo / "data" / "wikitext" / "meta" / "llama-2-7b" / f"{OTHER_UUID}.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps(load_example("aggregate", "valid", RECORD)))
    git(repo, "add", "-A")
    files = ["--", _rel(sidecar, repo), _rel(record, repo)]
    assert "sidecar without aggregate" in _runner(["validate", *files], repo).stdout  # what validate would say
    proc = _runner(["samples", "naming", *files], repo)
    assert proc.returncode == 1
    assert "is committed to git; the store keeps sidecars above 0 bytes" in proc.stdout  # samples
    assert "move the record to data/wikitext/meta-llama/Llama-2-7b-hf/" in proc.stdout  # naming
    assert "sidecar without" not in proc.stdout  # validate was not asked for


def test_runner_prints_a_finding_once_when_two_hooks_find_it(repo: Path) -> None:
    """naming and validate both check the folders against model_info.id (an error and a
    warning with the same message): the reader sees the naming hook's error once."""
    doc = load_example("aggregate", "valid", RECORD)
    path = repo / "data" / "wikitext" / "meta" / "llama-2-7b" / f"{FIXED_UUID}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    git(repo, "add", "-A")
    rel = _rel(path, repo)
    message = "folders meta/llama-2-7b do not match model_info.id 'meta-llama/Llama-2-7b-hf'"
    alone = _runner(["validate", "--", rel], repo)
    assert alone.returncode == 0 and f"{rel}:1::$.model_info.id: [naming] warning: {message}" in alone.stdout
    proc = _runner(["naming", "validate", "--", rel], repo)
    assert proc.returncode == 1
    assert proc.stdout.count(message) == 1
    assert f"{rel}:1::$.model_info.id: [naming] {message}" in proc.stdout  # the error, not the warning


def test_runner_honours_pre_commit_skip(repo: Path) -> None:
    _threshold(repo, 0)
    sidecar = _stage_sidecar(repo, 3)
    proc = _runner(["samples", "--", sidecar], repo, {"SKIP": "eee-samples"})
    assert proc.returncode == 0
    assert proc.stdout == "eee-samples: skipped (SKIP)\n"  # said, never silent
    assert _runner(["samples", "--", sidecar], repo).returncode == 1


def test_runner_usage_errors(repo: Path) -> None:
    proc = _runner(["frobnicate", "--"], repo)
    assert proc.returncode == 64  # a usage error, as for every eee command
    assert "usage: tools/hook NAME" in proc.stderr and proc.stdout == ""


def test_hook_script_explains_a_missing_environment(tmp_path: Path) -> None:
    import os
    import shutil
    import subprocess

    tools = tmp_path / "tools"
    tools.mkdir()
    shutil.copy2(PROJECT / "tools" / "hook", tools / "hook")
    env = {k: v for k, v in os.environ.items() if k != "EEE_PYTHON"}
    env["PATH"] = "/usr/bin:/bin"  # a python3 without the project
    proc = subprocess.run([str(tools / "hook"), "samples", "--"], capture_output=True, text=True, env=env)
    assert proc.returncode == 1
    assert "python3 tools/dev.py setup" in proc.stderr


def test_events_hook_ignores_the_ledger_readme(repo: Path) -> None:
    from eee.hooks import events

    readme = repo / "governance" / "events" / "README.md"
    readme.parent.mkdir(parents=True)
    readme.write_text("# the ledger\n")
    assert events.main(["governance/events/README.md"]) == 0
