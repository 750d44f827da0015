"""The validator's fast paths (issue 15) give what the general code gives, on generated
inputs: each is a shortcut for the common case, never a second rule."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest

import eee.dvc.pointer as dvcpointer
import eee.store.paths as paths
from eee.rules.layout import case_clash
from eee.rules.record import _plausible, _plausible_each


class _Never:
    def fullmatch(self, text: str) -> None:
        return None


def _both(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, call: Any) -> tuple[Any, Any]:
    fast = call()
    with monkeypatch.context() as m:
        m.setattr(module, name, _Never())
        general = call()
    return fast, general


PIECES = ["data", "Data", "con", "CON", "con.x", "com1", "COM0", "lpt9", "aux", "nul.txt", "a", "b.", ".", "..", "x y"]
PIECES += ["x-y", "x_y", "x.y", ".hid", "é", "a:b", "-", "_", "datab", "data_", "condor", "com10", "A1", "m"]


def _uuid(rng: random.Random) -> str:
    text = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    pick = rng.random()
    return text.upper() if pick < 0.1 else text[:14] + "1" + text[15:] if pick < 0.2 else text


def test_layout_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    fast_hits = 0
    for _ in range(20_000):
        folders = [rng.choice(PIECES) for _ in range(rng.choice([3, 3, 3, 2, 4]))]
        name = _uuid(rng) + rng.choice([".json", "_samples.jsonl", "_samples.jsonl.dvc", ".jsonl", ".JSON", ".json\n"])
        rel = "/".join([rng.choice(["data", "data", "Data", "x"]), *folders, name])
        fast, general = _both(monkeypatch, paths, "_PLAIN", lambda rel=rel: paths.layout_problems(rel))
        assert fast == general, rel
        fast_hits += paths._PLAIN.fullmatch(rel) is not None
    assert fast_hits > 100


def test_portable_component(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(2)
    alphabet = [
        *"aAzZ09_-. ",
        "con",
        "CON",
        "Com1",
        "lpt9",
        "data",
        "DaTa",
        "nul",
        "é",
        ":",
        "/",
        "\u200b",
        "\t",
        "com0",
    ]
    for _ in range(20_000):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5)))
        fast, general = _both(monkeypatch, paths, "_PORTABLE", lambda name=name: paths.portable_component(name))
        assert fast == general, name


def test_dvc_pointer(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)

    def parse(text: str) -> Any:
        try:
            return dvcpointer.parse(text)
        except dvcpointer.PointerError as exc:
            return str(exc)

    for _ in range(5_000):
        text = "outs:\n- md5: {}\n  size: {}\n  hash: {}\n  path: {}\n".format(
            rng.choice(["d7d947e39d8a58ab498ac6ba9388d095", "D7D947E39D8A58AB498AC6BA9388D095", "abc"]),
            rng.choice(["2382", "0", "0123", "-1", "1e3", " 5"]),
            rng.choice(["md5", "md5 ", "'md5'"]),
            rng.choice(["x_samples.jsonl", "'x.jsonl'", "a b", "x.jsonl ", "é.jsonl"]),
        )
        text = rng.choice([text, text + "- md5: x\n", " " + text, text.rstrip("\n"), text.replace("\n", "\r\n")])
        fast, general = _both(monkeypatch, dvcpointer, "_AS_WRITTEN", lambda text=text: parse(text))
        assert fast == general, text


def test_plausible_scores() -> None:
    rng = random.Random(11)
    values: list[Any] = [None, 0, 1, 0.5, -1, 100, 1.5, "Infinity", "-Infinity", True, 2**70, float("inf")]
    for _ in range(20_000):
        results = []
        for j in range(rng.randint(0, 5)):
            config: dict[str, Any] = {}
            for key in ("min_score", "max_score"):
                pick = rng.random()
                if pick < 0.7:
                    config[key] = rng.choice([0, 1, 100, 0.0, 1.0, -5])
                elif pick < 0.9:
                    config[key] = rng.choice(values)
            if rng.random() < 0.5:
                config["score_type"] = rng.choice(["continuous", "binary"])
            result = {"metric_config": config, "score_details": {"score": rng.choice([0, 0.5, 1, 2, 101, -1])}}
            if rng.random() < 0.8:
                result["evaluation_result_id"] = rng.choice([None, "a", "b", f"id{j}"])
            results.append(result)
        assert _plausible(results) == _plausible_each(results), results


def test_case_clash_with_and_without_the_trees_cache() -> None:
    """A tree keeps what it learnt of each folder for the next path; a listing function
    does not: both give the same answers, path after path."""
    rng = random.Random(1)
    alphabet = ["a", "A", "b", "B", "é", "e\u0301", "K", "\u212a", "ß", "ss", "x.json", "X.json"]
    for _ in range(2_000):
        tree: dict[str, list[str]] = {}
        folders = [""]
        for _ in range(rng.randint(1, 8)):
            parent = rng.choice(folders)
            name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 2)))
            if name not in tree.setdefault(parent, []):
                tree[parent].append(name)
            folders.append(f"{parent}/{name}" if parent else name)

        cached = _Tree(tree)
        for _ in range(6):
            rel = "/".join(
                "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 2))) for _ in range(rng.randint(1, 3))
            )
            rel = rng.choice(folders[1:]) if rng.random() < 0.5 and len(folders) > 1 else rel
            assert case_clash(cached, rel) == case_clash(_Tree(tree).names, rel), (tree, rel)


class _Tree:
    def __init__(self, folders: dict[str, list[str]]) -> None:
        self.folders = folders

    def names(self, folder: str) -> list[str]:
        return self.folders.get(folder, [])


def test_a_new_name_clashes_with_the_spelling_in_the_tree() -> None:
    """A path the tree does not hold (a staged file against a commit's folders) clashes with
    the sibling it folds to, though no two names of the folder fold together."""
    folders = {"": ["data"], "data": ["bench", "other"], "data/bench": ["m"]}
    assert case_clash(_Tree(folders).names, "data/Bench/m/x.json") == ("data/Bench", "data/bench")
    assert case_clash(_Tree(folders), "data/bench/M/x.json") == ("data/bench/M", "data/bench/m")
    assert case_clash(_Tree(folders), "data/bench/m/x.json") is None
