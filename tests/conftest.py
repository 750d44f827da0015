"""Shared helpers: the reference material (skipped when absent, unless a run requires it),
the real records and temporary stores."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

PROJECT = Path(__file__).resolve().parents[1]
EXAMPLES = Path(__file__).resolve().parent / "examples"
REFERENCE = Path(os.environ.get("EEE_REFERENCE", PROJECT.parent / "shared" / "reference"))
# `.ci/run` sets EEE_REQUIRE_REFERENCE=1: there a missing piece of the reference material fails
# the tests that need it instead of skipping them, so no conformance or real-data claim is
# dropped without a word
REQUIRE_REFERENCE = os.environ.get("EEE_REQUIRE_REFERENCE", "") not in ("", "0")
REFERENCE_RECORDS = 746  # the public records of ../shared/reference/records (all 0.2.0)

FIXED_UUID = "8e6f3a4e-4b7a-4d3e-9c1a-2b3c4d5e6f70"
# who commits in a store of make_store(): an event committed there names this actor (issue 23:
# an event's actor is who committed it, in every store)
COMMITTER = {"name": "Test Contributor", "email": "contributor@example.org"}


def _absent(path: Path) -> NoReturn:
    if REQUIRE_REFERENCE:
        pytest.fail(
            f"reference material not available: {path} (EEE_REQUIRE_REFERENCE is set: put the material "
            "at ../shared/reference beside the checkout or point EEE_REFERENCE at it)",
            pytrace=False,
        )
    pytest.skip(f"reference material not available: {path}")


def reference(*parts: str) -> Path:
    """A path inside ../shared/reference; the test is skipped when it is absent (fails when the
    run requires the material: EEE_REQUIRE_REFERENCE)."""
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        _absent(path)
    return path


def reference_or_none(*parts: str) -> Path | None:
    """For a test with a fallback: a path inside ../shared/reference, or None when it is absent
    (the test then runs on the store's own records and the examples). A run that requires the
    material (EEE_REQUIRE_REFERENCE) fails instead of falling back."""
    path = REFERENCE.joinpath(*parts)
    if path.exists():
        return path
    if REQUIRE_REFERENCE:
        _absent(path)
    return None


@dataclass(frozen=True)
class RealRecords:
    """A ``data/`` folder of real records: the reference's where present, else the store's own
    (which imported the same 746 public records and never deletes one)."""

    data: Path
    from_reference: bool

    def files(self) -> list[Path]:
        return sorted(p for p in self.data.rglob("*.json") if p.is_file())

    def assert_count(self, n: int) -> None:
        if self.from_reference:
            assert n == REFERENCE_RECORDS, f"{self.data}: {n} records, expected {REFERENCE_RECORDS}"
        else:
            assert n >= REFERENCE_RECORDS, f"{self.data}: {n} records, the store holds at least {REFERENCE_RECORDS}"


def real_records() -> RealRecords:
    found = reference_or_none("records", "data")
    return RealRecords(found, True) if found else RealRecords(PROJECT / "data", False)


def write_json(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_example(*parts: str) -> dict[str, Any]:
    return json.loads(EXAMPLES.joinpath(*parts).read_text(encoding="utf-8"))


def record_of(model: str, score: float | None = None) -> dict[str, Any]:
    """The valid 0.3.0 example record for another model (and, if given, another first score)."""
    doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
    doc["model_info"]["id"] = model
    if score is not None:
        doc["evaluation_results"][0]["score_details"]["score"] = score
    return doc


# --- temporary store repositories with the real hooks installed --------------------------

import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402


def git(
    repo: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    # hooks (pre-commit, pre-push) run with this interpreter unless the caller says otherwise
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env or hook_env())
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def hook_env() -> dict[str, str]:
    """Environment for git commands in a temporary store: hooks run with this interpreter."""
    env = dict(os.environ)
    env["EEE_PYTHON"] = sys.executable
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("PRE_COMMIT_HOME", str(Path(os.environ.get("TMPDIR", "/tmp")) / "eee-pre-commit-cache"))
    return env


def dvc(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def install_hooks(repo: Path, runner: str = "gate") -> None:
    """Install the git hook of ``runner``: the lean gate (the default, as `tools/dev.py setup`
    installs it), prek or pre-commit (both run the same configuration)."""
    cmd = {
        "gate": [sys.executable, "-m", "eee", "gate", "install"],
        "prek": [str(Path(sys.executable).parent / "prek"), "install", "-f"],
        "pre-commit": [sys.executable, "-m", "pre_commit", "install", "-f"],
    }[runner]
    proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=hook_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr


def make_store(
    tmp: Path,
    hooks: bool | str = True,
    with_dvc: bool = False,
    name: str = "store",
    sidecar_git_max_bytes: int | None = None,
) -> Path:
    """A fresh store repository: the project's hook config and hook runner, one commit.

    ``hooks``: True for the default gate (the lean gate), "prek" or "pre-commit" for those
    runners, False for none.
    ``with_dvc``: DVC initialised with a local remote in ``tmp/remote`` (as the project's).
    ``sidecar_git_max_bytes``: the store's setting, committed in governance/settings.yaml
    (0: every sidecar goes to DVC, as the tests of DVC's side want; None: the default, 1 MiB).

    Each kind of store is built once per test process (:func:`_prepared`: ``git init``,
    ``dvc init`` and the hooks' install cost seconds) and copied here (milliseconds); a store
    with DVC gets its own remote, in its one commit, as if built here.
    """
    repo = tmp / name
    template = _prepared(hooks, with_dvc, sidecar_git_max_bytes)
    shutil.copytree(template, repo, symlinks=True)
    if with_dvc:
        config = repo / ".dvc" / "config"
        config.write_text(config.read_text().replace(str(template.parent / "remote"), str(tmp / "remote")))
        git(repo, "add", ".dvc/config")
        git(repo, "commit", "-q", "--amend", "--no-verify", "-C", "HEAD")
    return repo


_PREPARED: dict[tuple[bool | str, bool, int | None], Path] = {}


def _prepared(hooks: bool | str, with_dvc: bool, sidecar_git_max_bytes: int | None) -> Path:
    """The store of one kind, built once per test process in a folder of its own."""
    kind = (hooks, with_dvc, sidecar_git_max_bytes)
    if kind not in _PREPARED:
        import atexit
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="eee-prepared-store-"))
        atexit.register(shutil.rmtree, folder, True)
        _PREPARED[kind] = _build_store(folder, hooks, with_dvc, "store", sidecar_git_max_bytes)
    return _PREPARED[kind]


def _build_store(tmp: Path, hooks: bool | str, with_dvc: bool, name: str, sidecar_git_max_bytes: int | None) -> Path:
    repo = tmp / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", COMMITTER["name"])
    git(repo, "config", "user.email", COMMITTER["email"])
    git(repo, "config", "commit.gpgsign", "false")
    shutil.copyfile(PROJECT / ".pre-commit-config.yaml", repo / ".pre-commit-config.yaml")
    (repo / "tools").mkdir()
    shutil.copy2(PROJECT / "tools" / "hook", repo / "tools" / "hook")
    (repo / "README.md").write_text("a test store\n")
    if with_dvc:
        dvc(repo, "init", "-q")
        dvc(repo, "config", "core.analytics", "false")
        dvc(repo, "remote", "add", "-d", "local", str(tmp / "remote"))
    if sidecar_git_max_bytes is not None:
        (repo / "governance").mkdir(exist_ok=True)
        (repo / "governance" / "settings.yaml").write_text(f"sidecar_git_max_bytes: {sidecar_git_max_bytes}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "empty store")
    if hooks:
        install_hooks(repo, runner="gate" if hooks is True else hooks)
    return repo


def commit(repo: Path, message: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """``git commit`` through the installed hooks; returns the process (check returncode: git
    exits 1 when a hook refuses the commit)."""
    return git(repo, "commit", "-m", message, *extra, check=False, env=hook_env())


def place_with_sidecar(repo: Path, rows: bytes, record_uuid: str = FIXED_UUID) -> tuple[Path, Path]:
    """The instance example aggregate at its canonical path, with ``rows`` as its sidecar."""
    from eee.store.strictjson import canonical

    agg = load_example("instance", "aggregate.json")
    folder = repo / "data" / "qa-bench" / "acme" / "widget-7b"
    folder.mkdir(parents=True, exist_ok=True)
    sidecar = folder / f"{record_uuid}_samples.jsonl"
    sidecar.write_bytes(rows)
    agg["detailed_evaluation_results"].update(
        file_path=f"data/qa-bench/acme/widget-7b/{record_uuid}_samples.jsonl",
        checksum=sha256(sidecar),
        total_rows=rows.count(b"\n"),
    )
    record = folder / f"{record_uuid}.json"
    record.write_bytes(canonical(agg))
    return record, sidecar


def place_record(repo: Path, doc: dict[str, Any], benchmark: str | None = None, record_uuid: str = FIXED_UUID) -> Path:
    """Write a record at its canonical path (the store's canonical bytes); the benchmark
    folder is the one the record's dataset name asks for unless given."""
    from eee.rules.record import main_folder
    from eee.store.paths import canonical_record_path
    from eee.store.strictjson import canonical

    benchmark = benchmark or main_folder(doc) or "bench"
    path = repo / canonical_record_path(benchmark, doc["model_info"]["id"], record_uuid)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(canonical(doc))
    return path


def make_pipeline_store(tmp: Path) -> Path:
    """A store with the project's pipeline: dvc.yaml, the site sources, schemas, the package."""
    repo = make_store(tmp, hooks=False, with_dvc=True, name="pipeline-store")
    for name in ("dvc.yaml", "mkdocs.yml", "CHANGELOG.md"):
        shutil.copyfile(PROJECT / name, repo / name)
    for folder in ("docs", "schemas", "governance"):
        shutil.copytree(PROJECT / folder, repo / folder, ignore=shutil.ignore_patterns("*.yaml"))
    shutil.copytree(PROJECT / "tools" / "eee", repo / "tools" / "eee", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "governance" / "events").mkdir(parents=True, exist_ok=True)
    (repo / "data").mkdir(exist_ok=True)
    return repo


# --- every finding names a registered rule ------------------------------------------------


@pytest.fixture(autouse=True, scope="session")
def _registered_rule_ids() -> Any:
    """Every finding made while the tests run names a rule of the registry
    (:mod:`eee.rules.registry`): a finding with an unregistered id fails the test that made it
    (the hardening tests' fixtures and the examples included). Workers forked by the
    validator inherit the check."""
    from eee.reporting.findings import Finding
    from eee.rules.registry import IDS

    made = Finding.__init__

    def registered(self: Finding, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        if self.check not in IDS:
            raise AssertionError(f"a finding with an unregistered rule id {self.check!r}: {self.one_line()}")

    Finding.__init__ = registered  # type: ignore[method-assign]
    yield
    Finding.__init__ = made  # type: ignore[method-assign]
