"""The import manifest on its own: YAML that reads back exactly, and its one check."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from eee.governance.manifests import dumps, loads, quote
from eee.rules.imports import manifest_findings

SHA = "a" * 64
RECORD = "data/qa-bench/acme/widget-7b/00000001-0000-4000-8000-000000000001.json"
EVENT = "20261201T060000.000000Z-flag-00000001-abcdef"


def _manifest() -> dict[str, Any]:
    return {
        "manifest_schema": "1.0.0",
        "id": "20261201T060000.000000Z-import-abcdef",
        "source": '/snapshots/"odd" name: yes',
        "revision": "0" * 40,
        "time": "2026-12-01T06:00:00.000000Z",
        "tool": "eee 0.1.0",
        "actor": {"name": "Ada Lovelace", "email": "ada@example.org"},
        "counts": {"imported": 0, "relocated": 0, "flagged": 1, "already_present": 0, "refused": 1, "total": 2},
        "files": [
            {
                "source": "data/qa-bench/Acme/widget-7b/00000001-0000-4000-8000-000000000001.json",
                "kind": "record",
                "outcome": "flagged",
                "store": RECORD,
                "sha256": SHA,
                "reason": "relocated from data/qa-bench/Acme/...",
                "flags": [{"rule": "score", "path": "$.evaluation_results[0].score_details.score", "event": EVENT}],
            },
            {
                "source": "data/README.md",
                "kind": "other",
                "outcome": "refused",
                "sha256": SHA,
                "reason": "not in the layout",
            },
        ],
    }


PATH = "governance/imports/20261201T060000.000000Z-import-abcdef.yaml"
TREE = {RECORD, f"governance/events/{EVENT}.yaml"}


def _check(doc: dict[str, Any], tree: set[str] = TREE, sha: str | None = SHA) -> list[str]:
    return [f.one_line() for f in manifest_findings(doc, PATH, tree.__contains__, lambda p: sha)]


@pytest.mark.parametrize(
    "text", ["plain", 'a"b\\c', "tab\there", "line\nbreak", "\u2028", "\ufeff", "日本 😀", "\x00\x85", "yes", "~", ""]
)
def test_strings_read_back_exactly(text: str) -> None:
    assert loads(f"k: {quote(text)}\n")["k"] == text


def test_a_manifest_reads_back_and_passes_its_check() -> None:
    doc = _manifest()
    assert loads(dumps(doc)) == doc
    assert _check(doc) == []


def test_the_check_finds_what_is_wrong() -> None:
    doc = _manifest()
    doc["counts"]["refused"] = 2
    # the one count that is wrong, alone: the total (2 files) still holds
    found = manifest_findings(doc, PATH, TREE.__contains__, lambda p: SHA)
    assert [(f.file, f.pointer, f.message) for f in found] == [
        (PATH, "$.counts.refused", "counts 2 refused files, the list holds 1")
    ]
    assert any("not in the tree" in line for line in _check(_manifest(), tree={RECORD}))  # the flag event is missing
    assert any("files[0].store" in line for line in _check(_manifest(), tree=set()))
    assert any("sha256 differs" in line for line in _check(_manifest(), sha="b" * 64))
    renamed = copy.deepcopy(_manifest())
    renamed["id"] = "20261201T060000.000000Z-import-000000"
    assert any("differs from the file name" in line for line in _check(renamed))
    bad = _manifest()
    bad["files"][1]["store"] = "data/x.json"  # a refused file has no store path
    assert any("import manifest schema" in line for line in _check(bad))


def _yaml(text: str) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).load(text)


def test_a_written_manifest_is_read_without_the_yaml_loader_as_the_loader_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What dumps() writes is read by a line reader (a 5,000-file manifest: ms, not the
    seconds of the pure-Python loader); it gives the loader's document, and any text that is
    not exactly dumps()'s goes to the loader: checked on thousands of one-character edits."""
    import random

    from eee.governance import manifests

    doc = _manifest()
    doc["files"].append({**doc["files"][0], "source": "\U0001f600 \x00\x85\u2028 a: b", "flags": [], "store": "x"})
    doc["files"][-1].pop("flags")
    text = dumps(doc)
    assert manifests._as_written(text) == _yaml(text) == doc
    for empty in ({**doc, "actor": {}}, {**doc, "files": [{**doc["files"][0], "flags": []}]}, {**doc, "files": []}):
        written = dumps(empty)
        assert manifests._as_written(written) in (None, _yaml(written))
    rng = random.Random(23)
    alphabet = list("\"\\: \n-x01u#[]{}&*!'\t~%?|>,Nlé\u2028\x85")
    fast = 0
    for _ in range(3000):
        i = rng.randrange(len(text))
        ch, op = rng.choice(alphabet), rng.choice("ird")
        edited = {"i": text[:i] + ch + text[i:], "r": text[:i] + ch + text[i + 1 :], "d": text[:i] + text[i + 1 :]}[op]
        read = manifests._as_written(edited)
        if read is not None:
            fast += 1
            assert read == _yaml(edited), repr(edited)
    assert fast > 300  # edits inside strings and numbers still take the fast way
    called: list[str] = []
    monkeypatch.setattr(manifests, "_as_written", lambda t: called.append(t))  # the loader's way, for the same text
    assert loads(text) == doc and called == [text]
