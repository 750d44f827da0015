"""Names (issue 13, items 10 and 14): NFC only, no invisible or bidirectional characters,
case clashes across NFC/NFD spellings, ``data`` reserved, one store root in and out of git."""

from __future__ import annotations

import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXED_UUID, commit, git, make_store
from eee.store.paths import canonical_folders, component_problem, find_store_root, name_key
from eee.validation.validate import run

GOOD = EXAMPLES / "aggregate" / "valid" / "v0.3.0_perplexity_unbounded.json"  # model meta-llama/Llama-2-7b-hf
FOLDER = "data/wikitext-2/meta-llama/Llama-2-7b-hf"  # the benchmark folder the record's dataset names
OTHER_UUID = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"


def _put(store: Path, rel: str) -> Path:
    path = store / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(GOOD, path)
    return path


def _errors(summary) -> list[str]:
    return [f"{f.message} | {f.hint}" for r in summary.results for f in r.findings if f.severity == "error"]


INVISIBLE = {
    "zero width space": "\u200b",
    "zero width non-joiner": "\u200c",
    "left-to-right mark": "\u200e",
    "right-to-left override": "\u202e",
    "left-to-right embedding": "\u202a",
    "left-to-right isolate": "\u2066",
    "pop directional isolate": "\u2069",
    "zero width no-break space": "\ufeff",
    "soft hyphen": "\u00ad",
    "word joiner": "\u2060",
    "arabic letter mark": "\u061c",
    "mongolian vowel separator": "\u180e",
    "variation selector-16": "\ufe0f",
    "tag latin small letter a": "\U000e0061",
    "hangul filler": "\u3164",
    "no-break space": "\u00a0",
    "line separator": "\u2028",
    "c1 control": "\u0085",
    "private use": "\ue000",
}


@pytest.mark.parametrize("char", list(INVISIBLE.values()), ids=list(INVISIBLE))
def test_invisible_and_bidi_characters_are_refused_naming_the_character(char: str) -> None:
    for name in (f"bench{char}", f"{char}bench", f"be{char}nch"):
        problem = component_problem(name)
        assert problem is not None, repr(name)
        assert f"U+{ord(char):04X}" in problem
        expected = unicodedata.name(char, "")
        if expected:
            assert expected in problem


def test_every_format_character_is_refused() -> None:
    import sys

    formats = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(formats) > 100
    assert all(component_problem(f"x{c}y") for c in formats)


def test_visible_unicode_names_pass() -> None:
    for name in ("café", "日本語", "Ωmega", "naïve-bench", "a b"):
        assert component_problem(name) is None, name


def test_nfd_spelling_is_refused_and_clashes_with_the_nfc_one(tmp_path: Path) -> None:
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    assert component_problem(nfc) is None
    problem = component_problem(nfd)
    assert problem is not None and "NFC" in problem and ascii(nfc) in problem
    assert name_key(nfc) == name_key(nfd) == name_key("CAFÉ")
    _put(tmp_path, f"data/{nfc}/meta-llama/Llama-2-7b-hf/{FIXED_UUID}.json")
    other = _put(tmp_path, f"data/{nfd}/meta-llama/Llama-2-7b-hf/{OTHER_UUID}.json")
    errors = _errors(run([str(other)]))
    assert any("NFC" in e for e in errors)
    assert any("another Unicode spelling" in e for e in errors), errors


def test_bidi_folder_is_refused_by_the_validator_and_the_hook(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    path = _put(store, f"data/bench\u202egnp/meta-llama/Llama-2-7b-hf/{FIXED_UUID}.json")
    errors = _errors(run([str(path)]))
    assert any("U+202E RIGHT-TO-LEFT OVERRIDE" in e for e in errors), errors
    git(store, "add", "-A")
    proc = commit(store, "a record under a bidi folder")
    assert proc.returncode == 1
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in proc.stdout + proc.stderr


def test_nfd_twin_of_a_committed_folder_is_refused_by_the_hook(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    _put(store, f"data/caf\u00e9/meta-llama/Llama-2-7b-hf/{FIXED_UUID}.json")
    git(store, "add", "-A")
    assert commit(store, "nfc folder").returncode == 0
    _put(store, f"data/cafe\u0301/meta-llama/Llama-2-7b-hf/{OTHER_UUID}.json")
    git(store, "add", "-A")
    proc = commit(store, "nfd twin")
    assert proc.returncode == 1
    assert "another Unicode spelling" in proc.stdout + proc.stderr


def test_converters_never_produce_a_refused_folder() -> None:
    assert canonical_folders("data/model") == ("data_", "model")
    assert canonical_folders("acme/data") == ("acme", "data_")
    developer, model = canonical_folders("acme\u200b/wid\u202eget")
    assert component_problem(developer) is None and component_problem(model) is None
    assert canonical_folders("cafe\u0301/m")[0] == "caf\u00e9"


# --- `data` reserved; the store root found the same way inside and outside git --------------------

RESERVED = [
    ("benchmark", f"data/data/meta-llama/Llama-2-7b-hf/{FIXED_UUID}.json", "a benchmark folder named 'data'"),
    ("developer", f"data/bench/data/Llama-2-7b-hf/{FIXED_UUID}.json", "a developer folder named 'data'"),
    ("model", f"data/bench/meta-llama/data/{FIXED_UUID}.json", "a model folder named 'data'"),
    ("uppercase", f"data/Data/meta-llama/Llama-2-7b-hf/{FIXED_UUID}.json", "a benchmark folder named 'Data'"),
]


@pytest.mark.parametrize(("case", "rel", "message"), RESERVED, ids=[c[0] for c in RESERVED])
def test_data_is_reserved_inside_and_outside_a_git_checkout(tmp_path: Path, case: str, rel: str, message: str) -> None:
    inside = tmp_path / "checkout"
    inside.mkdir()
    subprocess.run(["git", "init", "-q", str(inside)], check=True)
    outside = tmp_path / "copy"
    verdicts = []
    for root in (inside, outside):
        path = _put(root, rel)
        assert find_store_root(path) == str(root)
        summary = run([str(path)])
        verdicts.append((summary.exit_code(), sorted(_errors(summary))))
        assert any(message in e for e in _errors(summary)), _errors(summary)
    assert verdicts[0] == verdicts[1]


def test_store_root_is_the_same_for_valid_records_in_and_out_of_git(tmp_path: Path) -> None:
    for parent in ("data/projects", "srv"):  # a store below a folder that is itself named data
        inside = tmp_path / parent / "checkout"
        inside.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(inside)], check=True)
        outside = tmp_path / parent / "copy"
        for root in (inside, outside):
            path = _put(root, f"{FOLDER}/{FIXED_UUID}.json")
            assert find_store_root(path) == str(root)
            assert run([str(path)]).exit_code() == 0
