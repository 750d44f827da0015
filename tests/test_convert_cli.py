"""``eee convert``: placing outputs in a store, all or nothing (git store, no hooks, no DVC)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, PROJECT, git, make_store
from eee.commands.convert import main
from eee.validation.validate import run

HARNESS = EXAMPLES / "harness"
INSPECT_LOG = HARNESS / "inspect" / "tiny_qa.json"
FIXED = "0f5c2d1e-7a3b-4c5d-8e9f-0a1b2c3d4e5f"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_store(tmp_path, hooks=False)
    monkeypatch.chdir(repo)
    return repo


def data_files(repo: Path) -> list[str]:
    return (
        sorted(p.relative_to(repo).as_posix() for p in (repo / "data").rglob("*") if p.is_file())
        if (repo / "data").exists()
        else []
    )


def staged(repo: Path) -> list[str]:
    return git(repo, "diff", "--cached", "--name-only").stdout.split()


def test_records_are_written_at_their_canonical_path_and_staged(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", "--log-path", str(INSPECT_LOG), "--source-organization", "Acme Evals"]) == 0
    files = data_files(store)
    assert len(files) == 1 and files[0].startswith("data/tiny_qa/meta-llama/Llama-3.1-8B-Instruct-Turbo/")
    assert staged(store) == files
    doc = json.loads((store / files[0]).read_text())
    assert doc["source_metadata"]["source_organization_name"] == "Acme Evals"
    assert run([str(store / "data")]).exit_code() == 0
    out = capsys.readouterr().out
    assert f"wrote {files[0]} (2 results)" in out


def test_options_reach_the_record(store: Path) -> None:
    args = ["lm_eval", "--log-path", str(HARNESS / "lm_eval"), "--evaluator-relationship", "first_party"]
    assert main([*args, "--eval-library-version", "9.9.9", "--model-id", "acme/tiny-lm-v2", "--no-stage"]) == 0
    docs = [json.loads((store / f).read_text()) for f in data_files(store)]
    assert len(docs) == 3 and not staged(store)
    for doc in docs:
        assert doc["source_metadata"]["evaluator_relationship"] == "first_party"
        assert doc["eval_library"]["version"] == "9.9.9"
        assert doc["model_info"]["id"] == "acme/tiny-lm-v2"


def test_dry_run_writes_nothing(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["lm_eval", "--log-path", str(HARNESS / "lm_eval"), "--include-samples", "--dry-run"])
    assert code == 2  # tiny_nosamples has no samples file: converted with a warning
    captured = capsys.readouterr()
    assert "would write data/tiny_mc/acme/tiny-lm/" in captured.out and "(4 rows)" in captured.out
    assert "tiny_nosamples: [convert] warning: no samples file" in captured.err  # findings go to stderr
    assert not (store / "data").exists() and not staged(store)


def test_a_bad_log_among_good_ones_leaves_data_untouched(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(INSPECT_LOG, logs / "a_good.json")
    doc = json.loads(INSPECT_LOG.read_text())
    del doc["eval"]["model"]
    (logs / "b_bad.json").write_text(json.dumps(doc))
    assert main(["inspect", "--log-path", str(logs)]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines()[0].endswith("b_bad.json::$.eval.model: missing field 'model'")
    assert "Traceback" not in captured.err and captured.out == ""
    assert not (store / "data").exists()


def test_an_invalid_output_leaves_data_untouched(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from eee.convert import inspect

    original = inspect.convert

    def broken(path: Path, settings):  # type: ignore[no-untyped-def]
        batch = original(path, settings)
        batch.outputs[0].record["evaluation_results"][0]["score_details"]["score"] = 5.0
        return batch

    monkeypatch.setattr(inspect, "convert", broken)
    assert main(["inspect", "--log-path", str(INSPECT_LOG)]) == 1
    err = capsys.readouterr().err
    assert "$.evaluation_results[0].score_details.score: score 5.0 is outside the declared range" in err
    assert "nothing was written" in err
    assert not (store / "data").exists()


def test_an_existing_target_is_never_overwritten(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uuids = iter([FIXED, "1f5c2d1e-7a3b-4c5d-8e9f-0a1b2c3d4e5f", "2f5c2d1e-7a3b-4c5d-8e9f-0a1b2c3d4e5f"])
    monkeypatch.setattr("eee.write.placement.new_uuid", lambda: next(uuids))
    target = store / "data" / "tiny_mc" / "acme" / "tiny-lm" / f"{FIXED}.json"
    target.parent.mkdir(parents=True)
    target.write_text("mine\n")
    assert main(["lm_eval", "--log-path", str(HARNESS / "lm_eval")]) == 1
    assert target.read_text() == "mine\n"
    assert data_files(store) == [target.relative_to(store).as_posix()]  # the other tasks were not written either


def test_a_folder_differing_only_in_case_is_refused(store: Path) -> None:
    (store / "data" / "tiny_qa" / "Meta-Llama").mkdir(parents=True)
    assert main(["inspect", "--log-path", str(INSPECT_LOG)]) == 1
    assert not any((store / "data").rglob("*.json"))


def _threshold(store: Path, limit: int) -> None:
    """The store's sidecar_git_max_bytes, committed (the tools read HEAD's)."""
    (store / "governance").mkdir(exist_ok=True)
    (store / "governance" / "settings.yaml").write_text(f"sidecar_git_max_bytes: {limit}\n")
    git(store, "add", "governance/settings.yaml")
    git(store, "commit", "-q", "-m", "the threshold")


def test_a_sidecar_above_the_threshold_needs_dvc_before_anything_is_written(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _threshold(store, 100)
    assert main(["inspect", "--log-path", str(INSPECT_LOG), "--include-samples"]) == 1
    assert "DVC is not initialised" in capsys.readouterr().err
    assert not (store / "data").exists()


def test_a_sidecar_up_to_the_threshold_goes_to_git_without_dvc(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--log-path", str(INSPECT_LOG), "--include-samples"]) == 0
    out = capsys.readouterr().out
    assert ", the sidecar in git" in out and "samples push" not in out
    (sidecar,) = (store / "data").rglob("*_samples.jsonl")
    assert not sidecar.with_name(sidecar.name + ".dvc").exists() and not (sidecar.parent / ".gitignore").exists()
    assert sidecar.relative_to(store).as_posix() in staged(store)


def test_a_failing_dvc_add_undoes_everything(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second sidecar fails to enter DVC: the first one's pointer and every file go too."""
    from eee.reporting.findings import refusal

    _threshold(store, 0)  # every sidecar goes to DVC
    (store / ".dvc").mkdir()
    calls = []

    def fake_into_dvc(sidecars: list[Path], root: Path) -> list[Path]:
        pointers = []
        for sidecar in sidecars:  # DVC gets through the first sidecar, then fails
            calls.append(sidecar)
            if len(calls) == 2:
                raise refusal("dvc add failed: disk full", file=sidecar.name)
            pointer = sidecar.with_name(sidecar.name + ".dvc")
            pointer.write_text("outs:\n- md5: 0\n")
            (sidecar.parent / ".gitignore").write_text(f"/{sidecar.name}\n")
            git(store, "add", str(pointer.relative_to(store)), str((sidecar.parent / ".gitignore").relative_to(store)))
            pointers.append(pointer)
        return pointers

    monkeypatch.setattr("eee.write.samples._into_dvc", fake_into_dvc)
    assert main(["lm_eval", "--log-path", str(HARNESS / "lm_eval"), "--include-samples"]) == 1
    assert len(calls) == 2
    assert [p for p in (store / "data").rglob("*") if p.is_file()] == []  # no record, sidecar or pointer left
    assert not staged(store)


def test_usage_errors_exit_64(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def usage(*argv: str) -> str:
        with pytest.raises(SystemExit) as info:
            main(list(argv))
        assert info.value.code == 64
        captured = capsys.readouterr()
        assert captured.out == ""
        return captured.err

    assert "invalid choice: 'inspct'" in usage("inspct", "--log-path", str(INSPECT_LOG))
    assert "give PATH (or --log-path PATH)" in usage("inspect")
    assert "not both" in usage("inspect", str(INSPECT_LOG), "--log-path", str(INSPECT_LOG))
    assert "expected DEVELOPER/MODEL" in usage("inspect", "--log-path", str(INSPECT_LOG), "--model-id", "no-developer")
    assert "table needs --mapping FILE" in usage("table", str(INSPECT_LOG))
    assert "--mapping is for `eee convert table`" in usage("inspect", str(INSPECT_LOG), "--mapping", "m.yaml")
    assert not (store / "data").exists()


def test_the_log_path_may_be_given_as_the_positional_path(store: Path) -> None:
    assert main(["inspect", str(INSPECT_LOG)]) == 0
    assert len(data_files(store)) == 1


def test_missing_log_path(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["helm", "--log-path", "nowhere"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("nowhere::$: no such file or directory") and "hint:" in err


def test_outside_a_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["inspect", "--log-path", str(INSPECT_LOG)])  # no store: a usage error
    assert info.value.code == 64
    assert "not a store" in capsys.readouterr().err


def test_store_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_store(tmp_path, hooks=False)
    monkeypatch.chdir(tmp_path)
    assert main(["inspect", "--log-path", str(INSPECT_LOG), "--store", str(repo)]) == 0
    assert len(data_files(repo)) == 1


def test_thin_executable(tmp_path: Path) -> None:
    env = dict(os.environ, EEE_PYTHON=sys.executable)
    proc = subprocess.run(
        [sys.executable, str(PROJECT / "tools" / "convert"), "--help"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0 and "--include-samples" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "convert", "inspect", "--log-path", str(INSPECT_LOG), "--dry-run"],
        capture_output=True,
        text=True,
        cwd=make_store(tmp_path, hooks=False),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "would write data/tiny_qa/" in proc.stdout


def test_the_push_command_names_the_sidecars_or_their_benchmark_folders(tmp_path: Path) -> None:
    from eee.reporting.shown import shown_command
    from eee.write.samples import push_command

    eee = shown_command(tmp_path)
    one = tmp_path / "data" / "mmlu" / "acme" / "w" / "a_samples.jsonl"
    assert push_command([one], cwd=tmp_path) == f"{eee} samples push data/mmlu/acme/w/a_samples.jsonl"
    assert push_command([one], cwd=tmp_path / "data") == f"{eee} samples push mmlu/acme/w/a_samples.jsonl"
    many = [tmp_path / "data" / b / "acme" / "w" / f"{i}_samples.jsonl" for i, b in enumerate("aabbc")]
    assert push_command(many, cwd=tmp_path) == f"{eee} samples push data/a data/b data/c"
    odd = tmp_path / "data" / "my bench" / "acme" / "w" / "a_samples.jsonl"
    assert push_command([odd], cwd=tmp_path) == f"{eee} samples push 'data/my bench/acme/w/a_samples.jsonl'"


def test_hints_name_an_eee_that_runs_as_printed(tmp_path: Path) -> None:
    """`eee` is not on PATH: hints print this environment's executable, `.venv/bin/eee` from
    the project's root (the README's set-up), an absolute path from anywhere else."""
    from eee.reporting.shown import shown_command

    venv_bin = Path(sys.executable).parent
    project = venv_bin.parent.parent
    assert shown_command(project) == os.path.relpath(venv_bin / "eee", project)
    assert shown_command(tmp_path) == str(venv_bin / "eee")
    proc = subprocess.run(
        [*shlex.split(shown_command(tmp_path)), "--version"], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0 and proc.stdout.strip()


def _printed_command(out: str) -> list[str]:
    """The argv (after `convert`) of the command a dry run prints last."""
    line = out.strip().splitlines()[-1]
    assert line.startswith("to write exactly these (the same uuids), run: "), line
    words = shlex.split(line.split(": ", 1)[1])
    return words[words.index("convert") + 1 :]


def test_the_dry_run_prints_the_command_that_writes_exactly_what_it_showed(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["lm_eval", str(HARNESS / "lm_eval"), "--dry-run", "--source-organization", "Acme Evals"]
    assert main(args) == 0
    out = capsys.readouterr().out
    shown = sorted(line.split()[2] for line in out.splitlines() if line.startswith("would write "))
    argv = _printed_command(out)
    assert "--dry-run" not in argv and argv.count("--uuid") == 3
    assert argv[:2] == ["lm_eval", str(HARNESS / "lm_eval")] and "Acme Evals" in argv
    assert not (store / "data").exists()
    assert main(argv) == 0
    assert data_files(store) == shown  # the same paths, uuids included
    # the printed program runs as printed (not a bare `eee`, which is not on PATH)
    line = out.strip().splitlines()[-1].split(": ", 1)[1]
    assert shlex.split(line)[0] != "eee" and Path(shlex.split(line)[0]).name == "eee"


def test_a_dry_run_abbreviated_or_with_uuids_prints_a_clean_command(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(INSPECT_LOG), "--dry", f"--uuid={FIXED}"]) == 0
    out = capsys.readouterr().out
    assert f"/{FIXED}.json" in out
    assert _printed_command(out) == ["inspect", str(INSPECT_LOG), "--uuid", FIXED]


def test_uuid_fixes_the_uuid_of_the_record(store: Path) -> None:
    assert main(["inspect", str(INSPECT_LOG), "--uuid", FIXED]) == 0
    (record,) = data_files(store)
    assert record.endswith(f"/{FIXED}.json")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("0F5C2D1E-7A3B-4C5D-8E9F-0A1B2C3D4E5F", "uppercase"),
        ("0f5c2d1e-7a3b-1c5d-8e9f-0a1b2c3d4e5f", "not version 4"),
        ("../../etc/passwd", "not a canonical UUID v4"),
    ],
)
def test_a_malformed_uuid_is_a_usage_error(
    store: Path, capsys: pytest.CaptureFixture[str], given: str, message: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["inspect", str(INSPECT_LOG), "--uuid", given])
    assert info.value.code == 64
    assert message in capsys.readouterr().err
    assert not (store / "data").exists()


def test_a_uuid_given_twice_or_not_once_per_record_is_a_usage_error(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv, says in (
        (["--uuid", FIXED, "--uuid", FIXED], "given twice"),
        (["--uuid", FIXED], "--uuid is given 1 time for 3 records"),
    ):
        with pytest.raises(SystemExit) as info:
            main(["lm_eval", str(HARNESS / "lm_eval"), *argv])
        assert info.value.code == 64
        assert says in capsys.readouterr().err
    assert not (store / "data").exists()


def test_a_uuid_already_used_is_refused(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(INSPECT_LOG), "--uuid", FIXED]) == 0
    git(store, "commit", "-qm", "first")
    (first,) = data_files(store)
    capsys.readouterr()
    for extra in ([], ["--dry-run"]):  # the dry run says so too
        assert (
            main(
                [
                    "lm_eval",
                    str(HARNESS / "lm_eval"),
                    *extra,
                    "--uuid",
                    FIXED,
                    "--uuid",
                    "1" + FIXED[1:],
                    "--uuid",
                    "2" + FIXED[1:],
                ]
            )
            == 1
        )
        err = capsys.readouterr().err
        # the record it would write is refused by the rule uuid, naming the record that holds it
        # (the dry run's report shows the rule id, the refusal does not)
        assert re.search(rf"{FIXED}\.json::\$: (\[uuid\] )?uuid {FIXED} is already used by {re.escape(first)}", err)
    assert data_files(store) == [first]


LIGHTEVAL_RESULTS = HARNESS / "lighteval" / "results" / "acme" / "tiny-lm" / "results_2025-06-03T12-34-56.789012.json"
LM_EVAL_RESULTS = HARNESS / "lm_eval" / "results_2025-02-03T04-05-06.789012.json"


@pytest.mark.parametrize(
    ("given", "path", "reads"),
    [
        ("lm_eval", LIGHTEVAL_RESULTS, "lighteval"),
        ("lighteval", LM_EVAL_RESULTS, "lm_eval"),
        ("inspect", LM_EVAL_RESULTS, "lm_eval"),
        ("helm", HARNESS / "inspect" / "tiny_qa.eval", "inspect"),
        ("lm_eval", HARNESS / "inspect" / "tiny_qa.json", "inspect"),
        ("inspect", HARNESS / "helm", "helm"),
        ("lighteval", HARNESS / "alpaca_eval" / "alpaca_eval_gpt4_leaderboard.csv", "alpaca_eval"),
        ("lm_eval", EXAMPLES / "tables" / "cocoabench.csv", "table"),
    ],
)
def test_a_converter_given_another_harness_s_file_names_the_one_that_reads_it(
    store: Path, capsys: pytest.CaptureFixture[str], given: str, path: Path, reads: str
) -> None:
    assert main([given, str(path), "--no-stage"]) == 1
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert f"which `eee convert {reads}` reads, not {given}" in first, err
    assert f"eee convert {reads} " in err.splitlines()[1] and "Traceback" not in err
    assert data_files(store) == []


def test_a_file_of_no_known_harness_keeps_the_converter_s_own_refusal(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text('{"something": "else"}')
    assert main(["lm_eval", str(odd), "--no-stage"]) == 1
    assert "which `eee convert" not in capsys.readouterr().err
