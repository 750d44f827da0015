"""The datastore pipeline with real DVC: outputs, incremental re-runs, the catalogue."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import FIXED_UUID, PROJECT, git, load_example, make_pipeline_store, place_record, record_of
from eee.governance.events import make_event, write

pytestmark = pytest.mark.slow

B = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"
C = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d"
ME = {"name": "Maintainer", "email": "m@example.org"}


def _pipeline(repo: Path, pull: bool = False) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "pipeline", "--store", str(repo), *([] if pull else ["--no-pull"])],
        capture_output=True,
        text=True,
    )
    return proc


def _ran(output: str) -> set[str]:
    """The stages the pipeline's summary says it ran (the manifest stage runs every time)."""
    (line,) = re.findall(r"^\[pipeline\] stages run: (.*)$", output, re.M)
    return set() if line.startswith("none") else set(line.split(", "))


_doc = record_of  # the example record for another model (and score)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    repo = make_pipeline_store(tmp_path)
    place_record(repo, _doc("meta-llama/Llama-2-7b-hf", 8.79), record_uuid=FIXED_UUID)
    place_record(repo, _doc("facebook/opt-6.7b", 12.29), record_uuid=B)
    place_record(
        repo, load_example("aggregate", "valid", "v0.2.0_helm_leaderboard.json"), benchmark="helm_lite", record_uuid=C
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "store")
    return repo


def test_pipeline_outputs_and_incremental_runs(store: Path) -> None:
    first = _pipeline(store)
    assert first.returncode == 0, first.stdout + first.stderr
    assert _ran(first.stdout) == {"validate", "catalog", "stats", "analysis", "pages", "site"}
    for rel in (
        "build/validate/report.json",
        "build/catalog/benchmark=wikitext-2/part-0.parquet",  # the folder the records' dataset names
        "build/catalog/benchmark=helm_lite/part-0.parquet",
        "build/analysis/pages",
        "build/stats/fill_rates.json",
        "build/site/index.html",
    ):
        assert (store / rel).exists(), rel
    metrics = json.loads((store / "build/validate/metrics.json").read_text())
    assert metrics["records"] == 3 and metrics["errors"] == 0
    assert metrics["records_by_schema_version"] == {"0.2.0": 1, "0.3.0": 2}
    fill = json.loads((store / "build/stats/fill_rates.json").read_text())
    assert fill["records"] == 3
    assert fill["overall"]["parameter_count"] == pytest.approx(1 / 3, abs=1e-3)  # only the HELM record gives one
    assert fill["overall"]["inference_platform"] == 0.0  # "unknown" is not a value

    second = _pipeline(store)
    assert second.returncode == 0
    assert _ran(second.stdout) == set(), second.stdout  # nothing changed, nothing reruns

    (store / "docs" / "index.md").write_text("# changed home page\n")
    third = _pipeline(store)
    assert _ran(third.stdout) == {"pages", "site"}, third.stdout  # only the stages that depend on docs

    place_record(store, _doc("mistralai/Mistral-7B-v0.1", 6.1), record_uuid="3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f")
    fourth = _pipeline(store)
    assert _ran(fourth.stdout) == {"validate", "catalog", "stats", "analysis", "pages", "site"}, fourth.stdout
    assert json.loads((store / "build/validate/metrics.json").read_text())["records"] == 4


def test_catalogue_carries_governance_status_and_duckdb_reads_it(store: Path) -> None:
    import datetime as dt

    now = dt.datetime.now(dt.UTC)  # uncommitted events are checked against the time now
    write(store, make_event("retract", B, "scored on the training split", ME, now=now))
    write(
        store,
        make_event("supersede", FIXED_UUID, "fourth decimal", ME, replacement=C, now=now + dt.timedelta(seconds=1)),
    )
    write(
        store,
        make_event(
            "dispute",
            C,
            "harness version contested",
            ME,
            reference="https://example.org/d/1",
            now=now + dt.timedelta(seconds=2),
        ),
    )
    proc = _pipeline(store)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    parquet = f"read_parquet('{store / 'build/catalog'}/**/*.parquet', hive_partitioning = true)"
    rows = duckdb.sql(
        f"SELECT record_uuid, any_value(status), any_value(status_reason), any_value(superseded_by), any_value(preceded_by), "
        f"any_value(dispute_reference), count(*) FROM {parquet} GROUP BY record_uuid ORDER BY record_uuid"
    ).fetchall()
    by_uuid = {r[0]: r[1:] for r in rows}
    assert by_uuid[B][:2] == ("retracted", "scored on the training split")
    assert by_uuid[FIXED_UUID][0] == "superseded" and by_uuid[FIXED_UUID][2] == C
    assert by_uuid[C][0] == "disputed" and by_uuid[C][3] == FIXED_UUID and by_uuid[C][4] == "https://example.org/d/1"
    assert by_uuid[C][5] == 2  # one row per result: the HELM record has two results
    # the 0.2.0 record is read as the current version
    ((declared, read_as),) = duckdb.sql(
        f"SELECT DISTINCT schema_version, read_as FROM {parquet} WHERE record_uuid = '{C}'"
    ).fetchall()
    assert declared == "0.2.0" and read_as == "0.3.0"
    ((inf,),) = duckdb.sql(f"SELECT max_score FROM {parquet} WHERE record_uuid = '{B}'").fetchall()
    assert inf == float("inf")
    # the fill rates count the active records: the disputed one stands, the other two are withdrawn
    fill = json.loads((store / "build/stats/fill_rates.json").read_text())
    assert fill["records"] == 1 and fill["left_out"] == {"retracted": 1, "superseded": 1}


def test_sidecar_with_wrong_checksum_fails_the_pipeline(store: Path) -> None:
    from conftest import EXAMPLES, place_with_sidecar

    _record, sidecar = place_with_sidecar(
        store, (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()
    )
    sidecar.write_bytes(sidecar.read_bytes().replace(b'"q1"', b'"q7"'))
    proc = _pipeline(store)
    assert proc.returncode == 1
    assert "validation errors" in proc.stderr
    report = json.loads((store / "build/validate/report.json").read_text())
    assert any("sha256 of the file is" in f["message"] for f in report["findings"])


def test_pipeline_runs_in_a_clone_whose_sidecars_were_never_pulled(store: Path, tmp_path: Path) -> None:
    """A fresh clone has the pointers but neither the sidecars nor the DVC cache or remote."""
    import shutil

    from conftest import EXAMPLES, place_with_sidecar
    from eee.commands.samples import main as samples_main

    (store / "governance" / "settings.yaml").write_text("sidecar_git_max_bytes: 0\n")  # every sidecar in DVC
    git(store, "add", "governance/settings.yaml")
    git(store, "commit", "-q", "--no-verify", "-m", "sidecars in DVC")
    _, sidecar = place_with_sidecar(
        store, (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()
    )
    import os

    cwd = os.getcwd()
    os.chdir(store)
    try:
        assert samples_main(["add", sidecar.relative_to(store).as_posix()]) == 0
    finally:
        os.chdir(cwd)
    git(store, "add", "-A")
    git(store, "commit", "-q", "--no-verify", "-m", "a record with a sidecar")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    shutil.rmtree(tmp_path / "remote", ignore_errors=True)  # nothing to pull from
    assert not (clone / sidecar.relative_to(store)).exists()
    first = _pipeline(clone, pull=True)
    assert first.returncode == 0, first.stdout + first.stderr
    rel = sidecar.relative_to(store).as_posix()
    assert f"[pipeline] not fetched: {rel}: not on remote 'local'" in first.stderr  # where it is, said
    metrics = json.loads((clone / "build/validate/metrics.json").read_text())
    assert metrics["records"] == 4 and metrics["errors"] == 0 and metrics["sidecars"] == 0
    second = _pipeline(clone)
    assert _ran(second.stdout) == set(), second.stdout
    # once the sidecar is there (pulled, or copied here), the stages that read it rerun
    shutil.copyfile(sidecar, clone / sidecar.relative_to(store))
    third = _pipeline(clone)
    assert {"validate", "catalog", "analysis"} <= _ran(third.stdout)
    assert json.loads((clone / "build/validate/metrics.json").read_text())["sidecars"] == 1
    page = (clone / "build/analysis/pages/qa-bench.md").read_text()
    assert "# qa-bench: instance-level analysis" in page and "| read |" in page


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ, DVC_NO_ANALYTICS="1")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # stages say `python`
    return env


def test_a_fresh_clone_runs_with_dvc_alone_and_stays_clean(tmp_path: Path) -> None:
    """The pipeline is DVC's own: in a fresh clone of the project, `dvc repro` alone runs it
    (the manifest is a stage), `eee pipeline` from a subfolder then finds the clone (not the
    package's checkout) with nothing left to do, prints only its own summary, and neither
    leaves `git status` dirty (dvc.lock is not committed)."""
    if git(PROJECT, "rev-parse", "--is-inside-work-tree", check=False).returncode != 0:
        pytest.skip("the project is not a git work tree")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(PROJECT), str(clone))
    assert not (clone / "dvc.lock").exists() and not (clone / "build").exists()
    repro = subprocess.run(
        [sys.executable, "-m", "dvc", "repro"], cwd=clone, capture_output=True, text=True, env=_env()
    )
    assert repro.returncode == 0, repro.stdout + repro.stderr
    assert set(re.findall(r"Running stage '(\w+)'", repro.stdout)) == set(yaml_stages())
    assert (clone / "build/manifest/store.json").exists() and (clone / "build/site/index.html").exists()
    assert git(clone, "status", "--porcelain", "--untracked-files=all").stdout == ""

    proc = subprocess.run(
        [sys.executable, "-m", "eee", "pipeline"], cwd=clone / "docs", capture_output=True, text=True, env=_env()
    )
    # the exit code follows the project's own records (0 clean, 2 warnings only; never 1 here)
    metrics = json.loads((clone / "build/validate/metrics.json").read_text())
    assert metrics["errors"] == 0, metrics
    assert proc.returncode == (2 if metrics["warnings"] else 0), proc.stdout + proc.stderr
    assert _ran(proc.stdout) == set(), proc.stdout  # what `dvc repro` built is what `eee pipeline` builds
    assert f"{clone / 'build/validate/report.json'}" in proc.stdout  # the clone's, not the package's checkout
    for hint in ("dvc.lock", "dvc push", "git add", "Running stage"):
        assert hint not in proc.stdout + proc.stderr, hint
    assert git(clone, "status", "--porcelain", "--untracked-files=all").stdout == ""


def yaml_stages() -> list[str]:
    from ruamel.yaml import YAML

    return list(YAML(typ="safe").load((PROJECT / "dvc.yaml").read_text())["stages"])


def test_a_folder_left_behind_and_removed_is_seen_again(store: Path) -> None:
    """Issue 33: a record moved as the naming hint says leaves its old folder behind, whose
    name differs from the new one in case only (an error); once that empty folder is
    removed, the validate stage runs again and the pipeline says the store is clean, as
    ``eee validate`` does (the manifest lists folders, so the stale report is not kept)."""
    assert _pipeline(store).returncode == 0
    canonical = place_record(store, _doc("acme/widget-7b", 5.0), record_uuid="4d5e6f7a-8b9c-4dae-8f01-2b3c4d5e6f7a")
    wrong = canonical.parent.parent.parent / "Acme" / "widget-7b" / canonical.name
    wrong.parent.mkdir(parents=True)
    canonical.rename(wrong)
    canonical.parent.rmdir()
    canonical.parent.parent.rmdir()
    misplaced = _pipeline(store)
    assert misplaced.returncode == 2, misplaced.stdout + misplaced.stderr  # the naming warning
    hint = re.search(r"hint: move the record to (data/\S+)/", misplaced.stdout)
    assert hint and hint.group(1) == canonical.parent.relative_to(store).as_posix()
    canonical.parent.mkdir(parents=True)  # as the hint says; the old folder stays behind, empty
    wrong.rename(canonical)
    clash = _pipeline(store)
    assert clash.returncode == 1, clash.stdout + clash.stderr
    assert "differs only in letter case" in clash.stdout
    assert clash.stdout.count("differs only in letter case") == 1  # said once, not twice
    wrong.parent.rmdir()
    wrong.parent.parent.rmdir()
    clean = _pipeline(store)
    assert "validate" in _ran(clean.stdout)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "0 errors, 0 warnings" in clean.stdout


def test_force_runs_every_stage_again_from_the_store_alone(store: Path) -> None:
    assert _pipeline(store).returncode == 0
    (store / "build" / "validate" / ".folders.json").write_text("{}")  # a cache the forced run must not read
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "pipeline", "--store", str(store), "--no-pull", "--force"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _ran(proc.stdout) == {"validate", "catalog", "stats", "analysis", "pages", "site"}
    assert "--force: removed build/manifest, build/validate" in proc.stderr
    assert "site built in full" in proc.stdout or "site built in full" in proc.stderr or (store / "build/site").is_dir()
    took = re.search(r"^\[pipeline\] took [\d.]+ s: (.*)$", proc.stdout, re.M)
    assert took and {part.rsplit(" ", 2)[0] for part in took.group(1).split(", ")} >= {"validate", "site"}
    # progress: each stage announced, and the stages' own progress lines passed on
    assert "[pipeline] stage validate" in proc.stderr
    assert re.search(r"^\[pipeline\]   validate: validating: \d+/\d+$", proc.stderr, re.M)
    assert re.search(r"^\[pipeline\]   site: building pages: \d+/\d+$", proc.stderr, re.M)
