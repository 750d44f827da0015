"""The pipeline's cached validation (``eee validate . --cache``) gives the report of a full
run, byte for byte, while checking again only the folders that changed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLES, load_example, place_record, place_with_sidecar, record_of
from eee.commands.validate import main as validate_main

B = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"
C = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d"
D = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    shutil.copytree(Path(__file__).resolve().parents[1] / "schemas", store / "schemas")
    (store / "governance" / "events").mkdir(parents=True)
    place_record(store, record_of("meta-llama/Llama-2-7b-hf", 8.79), record_uuid=B)
    bad = record_of("facebook/opt-6.7b")
    bad["evaluation_results"][0]["score_details"]["score"] = "high"  # a schema error
    place_record(store, bad, record_uuid=C)
    place_with_sidecar(store, (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes())
    place_record(store, load_example("aggregate", "valid", "v0.2.0_helm_leaderboard.json"), benchmark="Wikitext-2")
    (store / "data" / "stray.json").write_text("{}")  # a file at the wrong depth
    return store


def _run(store: Path, out: Path, cache: Path | None) -> tuple[int, bytes, bytes]:
    out.mkdir(parents=True, exist_ok=True)
    argv = [".", "--format", "json", "--out", str(out / "r.json"), "--metrics", str(out / "m.json"), "--no-progress"]
    argv += ["--exit-zero"] + (["--cache", str(cache)] if cache else [])
    cwd = os.getcwd()
    os.chdir(store)
    try:
        code = validate_main(argv)
    finally:
        os.chdir(cwd)
    return code, (out / "r.json").read_bytes(), (out / "m.json").read_bytes()


def test_cached_validation_reports_exactly_what_a_full_run_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _store(tmp_path)
    cache = tmp_path / "cache.json"
    full = _run(store, tmp_path / "full", None)
    assert json.loads(full[2])["errors"] > 0  # the store has findings to compare
    assert _run(store, tmp_path / "c1", cache) == full  # the first run fills the cache
    assert _run(store, tmp_path / "c2", cache) == full  # the second reads it
    # a change: another record, a fixed one, a new case clash and an event
    place_record(store, record_of("mistralai/Mistral-7B-v0.1", 6.1), record_uuid=D)
    place_record(store, record_of("facebook/opt-6.7b", 12.3), record_uuid=C)
    place_record(store, record_of("Meta-Llama/x", 1.0), record_uuid="3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f")
    from eee.governance.events import make_event, write

    write(store, make_event("retract", B, "wrong split", {"name": "M", "email": "m@example.org"}))
    full = _run(store, tmp_path / "full2", None)
    assert _run(store, tmp_path / "c3", cache) == full
    assert _run(store, tmp_path / "c4", cache) == full
    capsys.readouterr()


def test_only_changed_folders_are_checked_again(tmp_path: Path) -> None:
    from eee.validation.cache import run_cached
    from eee.validation.validate import Options

    store = _store(tmp_path)
    cache = tmp_path / "cache.json"
    options = Options()
    _, first = run_cached(store, options, cache)
    _, again = run_cached(store, options, cache)
    assert first > 0 and again == 0
    place_record(store, record_of("mistralai/Mistral-7B-v0.1", 6.1), record_uuid=D)
    _, one = run_cached(store, options, cache)
    assert one == 1  # the new record's folder holds it alone
