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


def test_a_written_manifest_reads_back_through_the_store_s_yaml_reader_as_ruamel_reads_it() -> None:
    """What dumps() writes (every string double-quoted, escapes for what is not printable)
    reads back exactly through the store's one YAML reader (libyaml: a 1,000-file manifest
    in milliseconds; the hand-written line reader that stood in for the pure-Python loader is
    gone), as ruamel.yaml reads it too; a manifest that is not plain data is refused."""
    doc = _manifest()
    doc["files"].append({**doc["files"][0], "source": "\U0001f600 \x00\x85\u2028 a: b", "flags": [], "store": "x"})
    doc["files"][-1].pop("flags")
    text = dumps(doc)
    assert "\\x85" in text and "\\u2028" in text  # escaped: the same to YAML 1.1 and 1.2 readers
    assert loads(text) == _yaml(text) == doc
    for empty in ({**doc, "actor": {}}, {**doc, "files": [{**doc["files"][0], "flags": []}]}, {**doc, "files": []}):
        written = dumps(empty)
        assert loads(written) == _yaml(written)
    for bad, why in (
        (text.replace('"manifest_schema"', "manifest_schema", 1) + "copy: &a x\n", "anchors"),
        (text + "more: !!binary aGVsbG8=\n", "tags"),
        (text + "id: again\n", "duplicate key 'id'"),
        ("- a list\n", "a manifest is a YAML mapping"),
    ):
        with pytest.raises(ValueError, match=why):
            loads(bad)
