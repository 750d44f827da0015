"""The reference material is required where CI says so (issue 22, item 7).

Without ../shared/reference a test that needs it skips, unless the run requires the material
(``EEE_REQUIRE_REFERENCE=1``, which ``.ci/run`` sets): then it fails. The migration and
cross-engine tests fall back on the store's own records and the examples instead of skipping.
``.ci/run`` itself stops before anything else when the material is missing.

Each case runs pytest (or ``.ci/run``) in a subprocess with ``EEE_REFERENCE`` pointing at a
folder that does not exist.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT

REFERENCE_ONLY = "tests/test_conformance.py::test_reference_schemas_exist_for_every_project_version"
WITH_FALLBACK = "tests/test_migrate_reference.py::test_all_real_records_migrate_or_are_refused_with_a_reason"
SWITCHES = ("EEE_REFERENCE", "EEE_REQUIRE_REFERENCE", "PYTEST_ADDOPTS")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    env.update(extra)
    return env


def _pytest(node: str, missing: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rsf", node],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        env=_env(EEE_REFERENCE=str(missing), **extra),
    )


def test_a_missing_reference_skips_the_test_and_fails_it_under_the_switch(tmp_path: Path) -> None:
    missing = tmp_path / "no-reference"
    wanted = missing / "schemas" / "0.2.0" / "eval.schema.json"
    skipped = _pytest(REFERENCE_ONLY, missing)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "1 skipped" in skipped.stdout and "failed" not in skipped.stdout, skipped.stdout
    assert "SKIPPED [1] tests/conftest.py" in skipped.stdout and f"not available: {wanted}" in skipped.stdout
    for value in ("1", "yes"):
        failed = _pytest(REFERENCE_ONLY, missing, EEE_REQUIRE_REFERENCE=value)
        assert failed.returncode == 1, failed.stdout + failed.stderr
        assert "1 failed" in failed.stdout and "skipped" not in failed.stdout, failed.stdout
        assert f"not available: {wanted} (EEE_REQUIRE_REFERENCE is set" in failed.stdout
    off = _pytest(REFERENCE_ONLY, missing, EEE_REQUIRE_REFERENCE="0")  # 0 is off, as unset
    assert off.returncode == 0 and "1 skipped" in off.stdout, off.stdout


def test_the_migration_test_falls_back_on_the_store_s_records_and_fails_under_the_switch(tmp_path: Path) -> None:
    missing = tmp_path / "no-reference"
    ran = _pytest(WITH_FALLBACK, missing)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout and "skipped" not in ran.stdout, ran.stdout
    failed = _pytest(WITH_FALLBACK, missing, EEE_REQUIRE_REFERENCE="1")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"not available: {missing / 'records' / 'data'} (EEE_REQUIRE_REFERENCE is set" in failed.stdout


def test_ci_stops_first_thing_without_the_reference(tmp_path: Path) -> None:
    """A checkout with nothing beside it: .ci/run says what is missing and where, runs nothing else."""
    checkout = tmp_path / "checkout"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy2(PROJECT / ".ci" / "run", checkout / ".ci" / "run")
    for env, where in (
        (_env(), tmp_path / "shared" / "reference"),  # ../shared/reference
        (_env(EEE_REFERENCE=str(tmp_path / "elsewhere")), tmp_path / "elsewhere"),
    ):
        proc = subprocess.run([str(checkout / ".ci" / "run")], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert proc.stdout == ""  # not even the versions: nothing ran
        first, second = proc.stderr.splitlines()
        assert first == (
            f"[ci] the reference material is missing from {where}: records records-with-samples schemas "
            "harness-logs converter-outputs published-results.md"
        )
        assert "EEE_REFERENCE" in second
    # one piece missing is named alone
    partial = tmp_path / "partial"
    for part in ("records", "records-with-samples", "schemas", "harness-logs", "converter-outputs"):
        (partial / part).mkdir(parents=True)
    proc = subprocess.run(
        [str(checkout / ".ci" / "run")], capture_output=True, text=True, env=_env(EEE_REFERENCE=str(partial))
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines()[0] == f"[ci] the reference material is missing from {partial}: published-results.md"
