"""End to end: real ``git commit`` in temporary stores with the real pre-commit hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import EXAMPLES, FIXED_UUID, commit, git, hook_env, load_example, make_store, place_record

pytestmark = pytest.mark.slow

OTHER_UUID = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"


@pytest.fixture
def store(tmp_path):
    return make_store(tmp_path)


@pytest.fixture
def accepted(store):
    """A store with one committed (accepted) record."""
    path = place_record(store, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"))
    git(store, "add", "-A")
    proc = commit(store, "add a record")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return store, path.relative_to(store).as_posix()


def _output(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


def test_valid_record_commits(accepted):
    store, rel = accepted
    assert git(store, "log", "--format=%s", "-1").stdout.strip() == "add a record"
    assert git(store, "ls-files", rel).stdout.strip() == rel


def test_invalid_record_is_blocked_with_the_validator_message(store):
    doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
    doc["evaluation_results"][0]["score_details"]["score"] = 0.5  # below min_score 1
    place_record(store, doc)
    git(store, "add", "-A")
    proc = commit(store, "add a broken record")
    assert proc.returncode == 1
    assert (
        "$.evaluation_results[0].score_details.score: [score] score 0.5 is outside the declared range [1, Infinity]"
        in _output(proc)
    )
    assert "hint:" in _output(proc)
    assert git(store, "rev-list", "--count", "HEAD").stdout.strip() == "1"


def test_edit_of_an_accepted_record_is_blocked(accepted):
    store, rel = accepted
    path = store / rel
    doc = json.loads(path.read_text())
    doc["evaluation_results"][0]["score_details"]["score"] = 9.1
    path.write_text(json.dumps(doc, indent=2) + "\n")
    git(store, "add", rel)
    proc = commit(store, "fix the score in place")
    assert proc.returncode == 1
    out = _output(proc)
    assert f"{rel}::$: [immutable] modifies an accepted record" in out
    assert "supersede" in out


def test_delete_of_an_accepted_record_is_blocked(accepted):
    store, rel = accepted
    git(store, "rm", "-q", rel)
    proc = commit(store, "remove a record")
    assert proc.returncode == 1
    assert f"{rel}::$: [immutable] deletes an accepted record" in _output(proc)
    assert "tools/retract" in _output(proc)


def test_rename_of_an_accepted_record_is_blocked(accepted):
    store, rel = accepted
    new = rel.replace(FIXED_UUID, OTHER_UUID)
    git(store, "mv", rel, new)
    proc = commit(store, "rename a record")
    assert proc.returncode == 1
    assert f"{rel}::$: [immutable] renames an accepted record to {new}" in _output(proc)


def test_case_only_rename_is_blocked(accepted):
    store, rel = accepted
    upper = rel.replace("meta-llama", "Meta-Llama")
    (store / upper).parent.mkdir(parents=True)
    git(store, "mv", rel, upper)
    proc = commit(store, "change the case of a folder")
    assert proc.returncode == 1
    assert f"{rel}::$: [immutable] case-only rename of an accepted record to {upper}" in _output(proc)


def test_turning_a_record_into_a_symlink_is_blocked(accepted):
    store, rel = accepted
    path = store / rel
    (store / "elsewhere.json").write_bytes(path.read_bytes())
    path.unlink()
    os.symlink(os.path.relpath(store / "elsewhere.json", path.parent), path)
    git(store, "add", "-A")
    proc = commit(store, "replace a record by a link")
    assert proc.returncode == 1
    assert f"{rel}::$: [immutable] turns an accepted record into a symbolic link" in _output(proc)


def test_staged_sidecar_above_the_threshold_is_blocked(store):
    (store / "governance").mkdir(exist_ok=True)
    (store / "governance" / "settings.yaml").write_text("sidecar_git_max_bytes: 1000\n")
    git(store, "add", "-A")
    assert commit(store, "git keeps sidecars up to 1000 bytes").returncode == 0
    sidecar = store / "data" / "bench" / "acme" / "widget-7b" / f"{FIXED_UUID}_samples.jsonl"
    sidecar.parent.mkdir(parents=True)
    sidecar.write_bytes((EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes())
    git(store, "add", "-A")
    proc = commit(store, "commit a sidecar to git")
    assert proc.returncode == 1
    assert "a sidecar of 2.7 KiB (2,722 bytes) is committed to git; the store keeps sidecars above" in _output(proc)
    assert "eee samples add" in _output(proc)


def test_duplicate_submission_warns_but_commits(accepted):
    store, _ = accepted
    place_record(store, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"), record_uuid=OTHER_UUID)
    git(store, "add", "-A")
    proc = commit(store, "the same result again")
    assert proc.returncode == 0, _output(proc)
    assert "warning: duplicates data/wikitext-2/meta-llama/Llama-2-7b-hf/" in _output(proc)


def test_no_verify_edit_is_caught_by_the_audit(accepted):
    store, rel = accepted
    path = store / rel
    path.write_text(path.read_text().replace("8.7939", "8.7"))
    git(store, "add", rel)
    proc = commit(store, "sneak an edit past the hooks", "--no-verify")
    assert proc.returncode == 0
    audit = subprocess.run(
        [sys.executable, "-m", "eee", "audit", "--format", "json"],
        cwd=store,
        capture_output=True,
        text=True,
        env=hook_env(),
    )
    assert audit.returncode == 1, audit.stdout + audit.stderr
    report = json.loads(audit.stdout)
    messages = [f["message"] for f in report["findings"]]
    assert "modifies an accepted record" in messages
    head = git(store, "rev-parse", "--short=10", "HEAD").stdout.strip()
    assert any(f["file"] == f"{head}:{rel}" for f in report["findings"])
    # the history before the bad commit is clean
    clean = subprocess.run(
        [sys.executable, "-m", "eee", "audit", "--to", "HEAD~1"], cwd=store, capture_output=True, text=True
    )
    assert clean.returncode == 0, clean.stdout


# -- the gate: the lean gate by default; prek and pre-commit on the same configuration ----------


def test_the_default_gate_is_the_lean_gate(store):
    assert "eee lean gate" in (store / ".git" / "hooks" / "pre-commit").read_text()


@pytest.mark.parametrize("runner", ["prek", "pre-commit"])
def test_runners_run_the_same_configuration(tmp_path, runner):
    store = make_store(tmp_path, hooks=runner)
    marker = "generated by prek" if runner == "prek" else "generated by pre-commit"
    assert marker in (store / ".git" / "hooks" / "pre-commit").read_text()
    bad = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
    del bad["eval_library"]
    place_record(store, bad)
    git(store, "add", "-A")
    proc = commit(store, "a broken record")
    assert proc.returncode == 1
    assert '"eval_library" is a required property' in _output(proc)
    git(store, "reset", "-q", "--hard")
    git(store, "clean", "-qfd")
    rel = place_record(store, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"))
    git(store, "add", "-A")
    assert commit(store, "a record").returncode == 0
    rel.write_text(rel.read_text().replace("8.7939", "8.8"))
    git(store, "add", "-A")
    proc = commit(store, "edit")
    assert proc.returncode == 1
    assert "modifies an accepted record" in _output(proc)
    git(store, "reset", "-q", "--hard")
    git(store, "rm", "-q", rel.relative_to(store).as_posix())
    proc = commit(store, "delete")
    assert proc.returncode == 1
    assert "deletes an accepted record" in _output(proc)


def test_skip_one_check_and_the_others_still_run(accepted):
    store, rel = accepted
    place_record(store, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"), record_uuid=OTHER_UUID)
    git(store, "add", "-A")
    proc = git(store, "commit", "-m", "again", check=False, env=dict(hook_env(), SKIP="eee-duplicates"))
    assert proc.returncode == 0, _output(proc)
    assert "eee-duplicates: skipped (SKIP)" in _output(proc)
    assert "warning: duplicates" not in _output(proc)  # the warning it gives unskipped (test above)
    # the immutability check is not skipped with it
    path = store / rel
    path.write_text(path.read_text().replace("8.7939", "8.8"))
    git(store, "add", "-A")
    proc = git(store, "commit", "-m", "edit", check=False, env=dict(hook_env(), SKIP="eee-duplicates"))
    assert proc.returncode == 1
    assert "modifies an accepted record" in _output(proc)


def test_dev_setup_installs_the_lean_gate(tmp_path, monkeypatch):
    """`tools/dev.py setup` installs the lean gate in place of a runner's hook, and commits go through it."""
    import importlib.util

    from conftest import PROJECT

    store = make_store(tmp_path, hooks="pre-commit")
    spec = importlib.util.spec_from_file_location("dev_under_test", PROJECT / "tools" / "dev.py")
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    monkeypatch.setattr(dev, "ROOT", store)
    monkeypatch.setattr(dev, "BIN", type(dev.BIN)(sys.executable).parent)
    dev._install_hooks()
    assert "eee lean gate" in (store / ".git" / "hooks" / "pre-commit").read_text()
    doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
    doc["evaluation_results"][0]["score_details"]["score"] = 0.5
    place_record(store, doc)
    git(store, "add", "-A")
    proc = commit(store, "a broken record")
    assert proc.returncode == 1
    assert "score 0.5 is outside the declared range" in _output(proc)
