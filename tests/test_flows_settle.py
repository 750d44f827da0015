"""Every warning can be settled (issue 25.4): once a record is committed, each warning's hint
is an action immutability allows, printed as the exact command (uuids, JSON path); pasted,
it runs, and afterwards the warning is settled against the ledger at the head: `eee audit`
and the pipeline's validation exit 0. One test per registered warning id (and the history
warnings), each end to end: real git, the real hooks, the command the hint names."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXED_UUID, commit, git, hook_env, make_store, place_record, record_of
from eee.rules.registry import RULES

pytestmark = pytest.mark.slow

A = FIXED_UUID
B = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"


def eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


def commands_in(text: str, action: str) -> list[str]:
    """The commands of the tools in backticks in ``text`` whose action is ``action``."""
    out = []
    for quoted in re.findall(r"`([^`]+)`", text):
        words = shlex.split(quoted)
        if len(words) > 1 and words[1] == action and words[0].endswith("eee"):
            out.append(quoted)
    return out


def paste(repo: Path, command: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(shlex.split(command), cwd=repo, capture_output=True, text=True, env=hook_env())
    assert proc.returncode in (0, 2), proc.stdout + proc.stderr
    return proc


def settled(repo: Path) -> None:
    """The audit exits 0, and so does the pipeline: its validate stage, as dvc.yaml runs it,
    counts no finding (the pipeline exits 2 on the warnings its metrics count)."""
    audit = eee(repo, "audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    validate = eee(repo, "validate", ".")
    assert validate.returncode == 0, validate.stdout + validate.stderr
    stage = eee(
        repo,
        "validate",
        ".",
        "--format",
        "json",
        "--out",
        "build/report.json",
        "--metrics",
        "build/m.json",
        "--exit-zero",
        "--no-progress",
    )
    assert stage.returncode == 0, stage.stderr
    metrics = json.loads((repo / "build" / "m.json").read_text())
    assert (metrics["errors"], metrics["warnings"]) == (0, 0)


def add(repo: Path, doc: dict, record_uuid: str, benchmark: str | None = None, *extra: str) -> str:
    path = place_record(repo, doc, benchmark=benchmark, record_uuid=record_uuid)
    rel = path.relative_to(repo).as_posix()
    git(repo, "add", rel)
    proc = commit(repo, f"add {record_uuid[:8]}", *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return rel


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return make_store(tmp_path)


def _warned(repo: Path, rule: str) -> str:
    """The audit's report (exit 2: warnings only), which must name ``rule``; and the
    validation's, which must give the same committed hints."""
    audit = eee(repo, "audit")
    assert audit.returncode == 2, audit.stdout + audit.stderr
    assert f"[{rule}]" in audit.stdout
    return audit.stdout


@pytest.mark.parametrize("how", ["supersede", "flag"])
def test_a_record_in_the_wrong_benchmark_folder(store: Path, how: str) -> None:
    rel = add(store, record_of("acme/widget-7b"), A, benchmark="mmlu")  # it names wikitext-2
    report = _warned(store, "benchmark")
    assert "place the record under" not in report  # not an action a committed record allows
    validate = eee(store, "validate", ".")
    assert validate.returncode == 2 and commands_in(validate.stdout, how), validate.stdout
    (command,) = commands_in(report, how)
    if how == "supersede":
        assert "--benchmark wikitext-2" in command and rel in command
    assert "a maintainer" in report
    paste(store, command)
    settled(store)
    if how == "supersede":
        new = json.loads(eee(store, "status", A, "--format", "json").stdout)["superseded_by"]
        assert (store / f"data/wikitext-2/acme/widget-7b/{new}.json").is_file()


def test_a_record_with_a_misspelt_field(store: Path) -> None:
    doc = record_of("acme/widget-7b")
    doc["model_info"]["inference_platfrom"] = "vllm"
    add(store, doc, A)
    report = _warned(store, "near-miss")
    assert "rename 'inference_platfrom'" not in report
    (command,) = commands_in(report, "flag")
    assert "--json-path '$.model_info.inference_platfrom'" in command and "--rule near-miss" in command
    paste(store, command)
    settled(store)


def test_a_record_in_folders_not_from_its_model_id(store: Path) -> None:
    """The gate refuses it; committed past the hooks, the audit reports it and the validator
    warns; superseding it with a copy placed by its model_info.id settles both."""
    path = store / "data" / "wikitext-2" / "acme" / "wrong-folder" / f"{A}.json"
    path.parent.mkdir(parents=True)
    from eee.store.strictjson import canonical

    path.write_bytes(canonical(record_of("acme/widget-7b")))
    git(store, "add", "-A")
    assert commit(store, "wrong folders").returncode == 1  # the gate's error
    assert commit(store, "wrong folders", "--no-verify").returncode == 0
    validate = eee(store, "validate", ".")
    assert validate.returncode == 2 and "[naming]" in validate.stdout
    (command,) = commands_in(validate.stdout, "supersede")
    assert "move the record" not in validate.stdout
    paste(store, command)
    settled(store)
    new = json.loads(eee(store, "status", A, "--format", "json").stdout)["superseded_by"]
    assert (store / f"data/wikitext-2/acme/widget-7b/{new}.json").is_file()


def _twin(eid: str, retrieved: str, score: float | None = None) -> dict:
    doc = record_of("acme/widget-7b", score)
    doc["evaluation_id"], doc["retrieved_timestamp"] = eid, retrieved
    return doc


@pytest.mark.parametrize("how", ["mark-duplicate", "retract-the-original"])
def test_a_duplicate(store: Path, how: str) -> None:
    add(store, _twin("run-1", "1800000000"), A)
    add(store, _twin("run-1b", "1800000001"), B)  # the same result again: a warning, the commit goes through
    report = _warned(store, "duplicates")
    (command,) = commands_in(report, "mark-duplicate")
    assert f"mark-duplicate {B} --of {A}" in command
    if how == "mark-duplicate":
        paste(store, command)
    else:  # the maintainer retracts the one that stood: the pair no longer counts twice
        assert eee(store, "retract", A, "--reason", "the copy stays", "--commit").returncode == 0
        assert eee(store, "audit").returncode == 0  # settled: the hint's mark-duplicate would now be refused
    settled(store)


def test_a_re_run_that_corrects_the_other(store: Path) -> None:
    add(store, _twin("run-1", "1800000000", 8.5), A)
    add(store, _twin("run-1", "1800000001", 8.9), B)  # the same evaluation, another score
    report = _warned(store, "duplicates")
    (command,) = commands_in(report, "supersede")
    assert f"supersede {A} {B}" in command
    paste(store, command)
    settled(store)


def test_a_flag_that_accepts_nothing(store: Path) -> None:
    add(store, record_of("acme/widget-7b"), A)
    flagged = eee(
        store, "flag", A, "--rule", "score", "--json-path", "$.evaluation_results[0]", "--reason", "x", "--commit"
    )
    assert flagged.returncode == 2, flagged.stdout + flagged.stderr  # written, with the warning
    report = _warned(store, "flag-unmatched")
    (command,) = commands_in(report, "resolve")
    assert f"resolve {A} --event " in command and "--outcome upheld" in command
    paste(store, command)
    settled(store)


def test_a_replace_ref(store: Path) -> None:
    add(store, record_of("acme/widget-7b"), A)
    first = git(store, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    git(store, "replace", "HEAD", first)
    report = eee(store, "audit")
    assert report.returncode == 2 and "[history]" in report.stdout
    (command,) = re.findall(r"`(git replace -d [^`]+)`", report.stdout)
    subprocess.run(shlex.split(command), cwd=store, check=True, capture_output=True)
    settled(store)


def test_the_rules_say_how_each_warning_is_settled() -> None:
    """`eee rules ID`: the text of each warning rule names the action its hint gives."""
    warnings = {r.id: r for r in RULES if r.severity == "warning"}
    assert set(warnings) == {
        "near-miss",
        "naming",
        "benchmark",
        "identity",
        "duplicates",
        "flag-unmatched",
        "before-roles",
        "experiment-deviation",
    }
    for rule, action in [
        ("near-miss", "eee flag"),
        ("identity", "eee identity alias"),
        ("naming", "eee supersede"),
        ("benchmark", "--benchmark FOLDER"),
        ("duplicates", "eee mark-duplicate"),
        ("flag-unmatched", "eee resolve"),
    ]:
        assert action in warnings[rule].settle, rule
        assert "--commit" in warnings[rule].settle, rule
    # a deviation from an experiment card is the report's to state; a changed plan is a new card amending it
    assert "eee experiment new NEW --amends OLD" in warnings["experiment-deviation"].settle
    assert "--commit" in warnings["experiment-deviation"].settle
    # the history before a store's roles is no record's: it is left out by auditing from the trust anchor
    assert "eee audit --from ANCHOR" in warnings["before-roles"].settle
