"""End to end: convert with sidecars into a store with real DVC, commit through the real hooks."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import EXAMPLES, commit, git, make_store, reference
from eee.commands.convert import main
from eee.validation.validate import run

pytestmark = pytest.mark.slow

HARNESS = EXAMPLES / "harness"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with DVC and the default threshold: the converters' small sidecars go to git."""
    repo = make_store(tmp_path, with_dvc=True)
    monkeypatch.chdir(repo)
    return repo


@pytest.fixture
def dvc_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store whose sidecar_git_max_bytes is 0: every sidecar goes to DVC."""
    repo = make_store(tmp_path, with_dvc=True, sidecar_git_max_bytes=0)
    monkeypatch.chdir(repo)
    return repo


def _committed(repo: Path) -> list[str]:
    return git(repo, "ls-files", "data").stdout.split()


def _convert_and_commit(repo: Path, runs: list[tuple[list[str], int]]) -> None:
    for argv, expected in runs:
        assert main([*argv, "--include-samples", "--source-organization", "Acme Evals"]) == expected, argv
    proc = commit(repo, "harness-derived records")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not git(repo, "status", "--porcelain").stdout.strip(), "everything the converter wrote is committed"
    files = _committed(repo)
    in_dvc = (repo / "governance" / "settings.yaml").exists()  # the dvc_store's threshold 0
    assert any(f.endswith("_samples.jsonl.dvc") for f in files) == in_dvc
    assert any(f.endswith("_samples.jsonl") for f in files) != in_dvc  # in git up to the threshold, else DVC
    summary = run([str(repo / "data")])
    problems = [f.one_line() for r in summary.results for f in r.findings]
    assert summary.exit_code() == 0, problems


@pytest.mark.parametrize("where", ["git", "dvc"])
def test_fixture_logs_convert_and_commit_through_the_hooks(where: str, request: pytest.FixtureRequest) -> None:
    store = request.getfixturevalue("store" if where == "git" else "dvc_store")
    _convert_and_commit(
        store,
        [
            (["helm", "--log-path", str(HARNESS / "helm")], 0),
            (["lm_eval", "--log-path", str(HARNESS / "lm_eval")], 2),  # one task has no samples file
            (["inspect", "--log-path", str(HARNESS / "inspect" / "tiny_qa.eval")], 0),
        ],
    )
    records = [f for f in _committed(store) if f.endswith(".json")]
    assert len(records) == 5


def test_real_harness_logs_convert_and_commit_through_the_hooks(store: Path) -> None:
    logs = reference("harness-logs")
    _convert_and_commit(
        store,
        [
            (["helm", "--log-path", str(logs / "helm")], 0),
            (["lm_eval", "--log-path", str(logs / "lm_eval")], 2),  # math_rephrased_full has no samples file
            (["inspect", "--log-path", str(logs / "inspect")], 0),
        ],
    )
    records = [f for f in _committed(store) if f.endswith(".json")]
    assert len(records) == 9


def test_converting_the_same_log_twice_is_flagged_as_a_duplicate(store: Path) -> None:
    """A second conversion makes a new record (new uuid); the duplicates hook warns, never blocks."""
    log = str(HARNESS / "inspect" / "tiny_qa.json")
    assert main(["inspect", "--log-path", log]) == 0
    assert commit(store, "first").returncode == 0
    assert main(["inspect", "--log-path", log]) == 0
    proc = commit(store, "again")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning: duplicates data/" in proc.stdout + proc.stderr
    assert "identical content apart from evaluation_id and retrieved_timestamp" in proc.stdout + proc.stderr
    # the same log converted under another evaluator is the same evaluation, still warned about
    assert main(["inspect", "--log-path", log, "--source-organization", "Another Lab"]) == 0
    proc = commit(store, "again, another evaluator")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "repeats the evaluation of" in proc.stdout + proc.stderr
    assert "the evaluator differs (Another Lab here" in proc.stdout + proc.stderr


def test_convert_ends_with_the_command_that_pushes_its_sidecars(
    dvc_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last step (upload the sidecars DVC keeps) is said once, as a command that works as printed."""
    store = dvc_store
    import shlex
    import subprocess

    assert main(["lm_eval", "--log-path", str(HARNESS / "lm_eval"), "--include-samples"]) == 2
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if " samples push " in line]
    assert len(lines) == 1 and lines[0] == out.rstrip("\n").splitlines()[-1]
    command = lines[0].split("`")[1]
    words = shlex.split(command)
    assert words[0] != "eee" and Path(words[0]).name == "eee"  # `eee` is not on PATH: the environment's own
    sidecars = sorted(f for f in git(store, "diff", "--cached", "--name-only").stdout.split() if f.endswith(".dvc"))
    assert words[1:] == ["samples", "push", *(f.removesuffix(".dvc") for f in sidecars)]
    assert commit(store, "converted").returncode == 0
    assert not any((tmp_path / "remote").rglob("*.*"))
    proc = subprocess.run(words, cwd=store, capture_output=True, text=True)  # as printed, from where it was printed
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert any(p.is_file() for p in (tmp_path / "remote").rglob("*")), "the command uploaded the sidecars"


def test_new_converters_convert_and_commit_through_the_hooks(store: Path, tmp_path: Path) -> None:
    """lighteval (with details), an AlpacaEval run (with its annotations) and a published
    table, through real DVC and the real hooks: no error, no warning."""
    from lighteval_output import write_output

    write_output(tmp_path / "lighteval")
    mapping = Path(__file__).resolve().parents[1] / "tools" / "eee" / "convert" / "mappings" / "wikitext.mapping.yaml"
    _convert_and_commit(
        store,
        [
            (["lighteval", "--log-path", str(tmp_path / "lighteval")], 2),  # mmlu:anatomy has no details file
            (
                [
                    "alpaca_eval",
                    "--log-path",
                    str(HARNESS / "alpaca_eval" / "run_v2" / "weighted_alpaca_eval_gpt4_turbo"),
                ],
                0,
            ),
            (["table", "--mapping", str(mapping), "--log-path", str(EXAMPLES / "tables" / "wikitext.csv")], 0),
        ],
    )
    records = [f for f in _committed(store) if f.endswith(".json")]
    assert len(records) == 3 + 1 + 4
