"""Layout, naming and pairing rules: bad paths each give exit 1 and a one-line message."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXED_UUID, write_json
from eee.commands.validate import main as validate_main
from eee.validation.validate import Options, run

GOOD = EXAMPLES / "aggregate" / "valid" / "v0.3.0_perplexity_unbounded.json"  # model meta-llama/Llama-2-7b-hf
FOLDER = "data/wikitext/meta-llama/Llama-2-7b-hf"


def _messages(summary) -> list[str]:
    return [f.one_line() for r in summary.results for f in r.findings if f.severity == "error"]


def _put(store: Path, rel: str, source: Path = GOOD) -> Path:
    path = store / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, path)
    return path


BAD_PATHS = [
    ("uppercase_uuid", f"{FOLDER}/{FIXED_UUID.upper()}.json", "has uppercase letters"),
    ("uuid_v1", f"{FOLDER}/8e6f3a4e-4b7a-1d3e-9c1a-2b3c4d5e6f70.json", "not version 4"),
    ("not_a_uuid", f"{FOLDER}/result.json", "not a canonical UUID v4"),
    ("too_shallow", f"data/wikitext/meta-llama/{FIXED_UUID}.json", "wrong depth: 3 levels"),
    ("too_deep", f"data/wikitext/meta-llama/Llama-2-7b-hf/extra/{FIXED_UUID}.json", "wrong depth: 5 levels"),
    ("colon_in_folder", f"data/wikitext/meta-llama/Llama:2/{FIXED_UUID}.json", "not portable"),
    ("trailing_dot", f"data/wikitext./meta-llama/Llama-2-7b-hf/{FIXED_UUID}.json", "ends with a dot"),
    ("trailing_space", f"data/wikitext /meta-llama/Llama-2-7b-hf/{FIXED_UUID}.json", "ends with a dot or a space"),
    ("reserved_name", f"data/CON/meta-llama/Llama-2-7b-hf/{FIXED_UUID}.json", "reserved device name"),
    ("reserved_name_with_extension", f"data/wikitext/meta-llama/aux.v2/{FIXED_UUID}.json", "reserved device name"),
    ("control_character", f"data/wikitext/meta-llama/Llama\t2/{FIXED_UUID}.json", "not portable"),
    ("question_mark", f"data/wikitext?/meta-llama/Llama-2-7b-hf/{FIXED_UUID}.json", "not portable"),
]


@pytest.mark.parametrize(("case", "rel", "message"), BAD_PATHS, ids=[c[0] for c in BAD_PATHS])
def test_bad_record_paths_are_errors(tmp_path: Path, case: str, rel: str, message: str) -> None:
    path = _put(tmp_path, rel)
    summary = run([str(path)])
    assert summary.exit_code() == 1
    assert any(message in m for m in _messages(summary)), _messages(summary)


def test_case_only_collision_is_an_error(tmp_path: Path) -> None:
    _put(tmp_path, f"{FOLDER}/{FIXED_UUID}.json")
    other = _put(tmp_path, f"data/wikitext/Meta-Llama/Llama-2-7b-hf/{FIXED_UUID}.json")
    summary = run([str(other)])
    assert summary.exit_code() == 1
    assert any("differs only in letter case" in m for m in _messages(summary))


def test_symlinked_record_is_an_error(tmp_path: Path) -> None:
    target = _put(tmp_path, "elsewhere/real.json")
    link = tmp_path / FOLDER / f"{FIXED_UUID}.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    summary = run([str(tmp_path / "data")])
    assert summary.exit_code() == 1
    assert any("is a symbolic link" in m for m in _messages(summary))


def test_symlinked_folder_inside_data_is_reported(tmp_path: Path) -> None:
    _put(tmp_path, f"{FOLDER}/{FIXED_UUID}.json")
    (tmp_path / "data" / "mirror").symlink_to(tmp_path / "data" / "wikitext")
    summary = run([str(tmp_path / "data")])
    assert any("is a symbolic link" in m for m in _messages(summary))


def test_sidecar_without_aggregate(tmp_path: Path) -> None:
    sidecar = tmp_path / FOLDER / f"{FIXED_UUID}_samples.jsonl"
    sidecar.parent.mkdir(parents=True)
    sidecar.write_text((EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_text())
    summary = run([str(sidecar)])
    assert summary.exit_code() == 1
    assert any("sidecar without aggregate" in m for m in _messages(summary))


def test_sidecar_whose_record_does_not_declare_it(tmp_path: Path) -> None:
    _put(tmp_path, f"{FOLDER}/{FIXED_UUID}.json")
    sidecar = tmp_path / FOLDER / f"{FIXED_UUID}_samples.jsonl"
    sidecar.write_text((EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_text())
    summary = run([str(tmp_path)])
    assert any("does not declare this sidecar" in m for m in _messages(summary))


def test_dvc_pointer_without_aggregate(tmp_path: Path) -> None:
    pointer = tmp_path / FOLDER / f"{FIXED_UUID}_samples.jsonl.dvc"
    pointer.parent.mkdir(parents=True)
    pointer.write_text(f"outs:\n- md5: 0\n  path: {FIXED_UUID}_samples.jsonl\n")
    summary = run([str(tmp_path)])
    assert any("DVC pointer without aggregate" in m for m in _messages(summary))


def test_record_outside_a_data_folder(tmp_path: Path) -> None:
    path = _put(tmp_path, f"records/{FIXED_UUID}.json")
    summary = run([str(path)])
    assert summary.exit_code() == 1
    assert any("not inside a data/ folder" in m for m in _messages(summary))
    # ... and with --schema-only it is checked as a loose file
    assert run([str(path)], options=Options(repo_checks=False)).exit_code() == 0


def test_unexpected_file_in_data(tmp_path: Path) -> None:
    _put(tmp_path, f"{FOLDER}/{FIXED_UUID}.json")
    (tmp_path / FOLDER / "notes.txt").write_text("hello")
    summary = run([str(tmp_path / "data")])
    assert any("unexpected file 'notes.txt'" in m for m in _messages(summary))


def test_missing_path_and_empty_glob(tmp_path: Path) -> None:
    summary = run([str(tmp_path / "nope.json"), str(tmp_path / "*.json")])
    msgs = _messages(summary)
    assert summary.exit_code() == 1
    assert any("no such file or directory" in m for m in msgs)
    assert any("no file matches this pattern" in m for m in msgs)


def test_developer_folder_disagreeing_with_model_id_is_a_warning(tmp_path: Path, capsys) -> None:
    path = _put(tmp_path, f"data/wikitext/meta/llama-2-7b/{FIXED_UUID}.json")
    assert validate_main([str(path)]) == 2
    out = capsys.readouterr().out
    assert "warning: folders meta/llama-2-7b do not match model_info.id 'meta-llama/Llama-2-7b-hf'" in out
    assert "data/wikitext/meta-llama/Llama-2-7b-hf/" in out


def test_dot_dot_in_an_argument_is_resolved(tmp_path: Path) -> None:
    path = _put(tmp_path, f"{FOLDER}/{FIXED_UUID}.json")
    indirect = tmp_path / "data" / "wikitext" / ".." / "wikitext" / "meta-llama" / "Llama-2-7b-hf" / path.name
    assert run([str(indirect)]).exit_code() == 0


def test_globs_and_directories_are_expanded(tmp_path: Path) -> None:
    examples = sorted((EXAMPLES / "aggregate" / "valid").glob("v0.3.0*.json"))
    for i, name in enumerate(examples):
        doc = json.loads(name.read_text())
        from eee.store.paths import canonical_record_path

        rel = canonical_record_path("bench", doc["model_info"]["id"], FIXED_UUID[:-1] + str(i))
        write_json(tmp_path / rel, doc)
    assert len(examples) >= 2
    assert len(run([str(tmp_path / "data" / "**" / "*.json")]).results) == len(examples)
    assert len(run([str(tmp_path)]).results) == len(examples)


def test_unreadable_file_is_reported_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    path = _put(tmp_path, f"{FOLDER}/{FIXED_UUID}.json")
    real_open = os.open

    def deny(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)  # the tree reads files with os.open (O_NOFOLLOW)
    summary = run([str(path)])
    assert summary.exit_code() == 1
    assert any("cannot read the file: Permission denied" in m for m in _messages(summary))


def test_unreadable_folder_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    _put(tmp_path, f"{FOLDER}/{FIXED_UUID}.json")
    real = os.scandir
    locked = str(tmp_path / "data" / "wikitext")

    def deny(path):  # type: ignore[no-untyped-def]
        if str(path) == locked:
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "scandir", deny)
    summary = run([str(tmp_path / "data")])
    assert summary.exit_code() == 1
    assert any("cannot read the folder: Permission denied" in m for m in _messages(summary))
