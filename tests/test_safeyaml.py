"""The store's one YAML reader (eee.store.safeyaml): libyaml's parser with the store's safety
on top. Hostile documents are refused with a message that says why; plain data reads as YAML
1.2 reads it (as ruamel.yaml's safe loader read every governance file before), never with
YAML 1.1's surprises; every YAML file of the project reads as it did.

Each refusal is checked through libyaml's parser and through PyYAML's pure-Python one (what
the reader falls back to without libyaml), so the safety never rests on the C part."""

from __future__ import annotations

import datetime as dt
import functools
import math
import random
from pathlib import Path
from typing import Any

import pytest

from conftest import PROJECT
from eee.store import safeyaml
from eee.store.limits import INT_MAX_DIGITS, YAML_MAX_DEPTH
from eee.store.safeyaml import YAMLRefused, lines, load


@pytest.fixture(params=["libyaml", "pure"], autouse=True)
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run each test through libyaml's parser and through PyYAML's pure-Python one."""
    import yaml

    if request.param == "libyaml":
        from yaml.cyaml import CParser

        monkeypatch.setattr(safeyaml, "_PARSER", (CParser, yaml.YAMLError))
    else:
        from yaml.loader import BaseLoader

        monkeypatch.setattr(safeyaml, "_PARSER", (BaseLoader, yaml.YAMLError))
    return request.param


def _ruamel(text: str) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).load(text)


def _nested(levels: int) -> str:
    return "a: " + "[" * (levels - 1) + "]" * (levels - 1) + "\n"  # the mapping is the first level


# --- hostile documents --------------------------------------------------------------------------

HOSTILE = {
    "alias": ("a: &x 1\nb: *x\n", "anchors (&x) are not allowed (line 1)"),
    "alias-only": ("b: *x\n", "aliases (*x) are not allowed (line 1)"),
    "anchor-only": ("action: &x retract\n", "anchors (&x) are not allowed"),
    "alias-bomb": (
        "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n",
        "anchors (&a) are not allowed (line 1)",
    ),
    "anchored-mapping": ("a: &m {b: 1}\n", "anchors (&m) are not allowed"),
    "binary": ("reason: !!binary aGVsbG8=\n", "tags (tag:yaml.org,2002:binary) are not allowed"),
    "set": ("reason: !!set {a, b}\n", "tags (tag:yaml.org,2002:set) are not allowed"),
    "python": ("action: !!python/object:os.system ls\n", "tags (tag:yaml.org,2002:python/object:os.system)"),
    "python-apply": ("a: !!python/object/apply:os.system [ls]\n", "tags (tag:yaml.org,2002:python/object/apply"),
    "custom": ("action: !retract x\n", "tags (!retract) are not allowed"),
    "explicit-str": ("a: !!str 1\n", "tags (tag:yaml.org,2002:str) are not allowed"),
    "verbatim": ("a: !<tag:example.org,2026:x> 1\n", "tags (tag:example.org,2026:x) are not allowed"),
    "tagged-map": ("a: !!omap [{b: 1}]\n", "tags (tag:yaml.org,2002:omap) are not allowed"),
    "merge": ("<<: {b: 1}\nc: 2\n", "merge keys (<<) are not allowed (line 1)"),
    "deep": ("a: " + "[" * 5000 + "]" * 5000 + "\n", f"nested more than {YAML_MAX_DEPTH} levels deep"),
    "deep-block": ("".join("  " * i + "k:\n" for i in range(40)), f"nested more than {YAML_MAX_DEPTH} levels"),
    "big-int": ("n: " + "1" * 5000 + "\n", "an integer of 5000 digits (more than 400)"),
    "big-hex": ("n: 0x" + "f" * 500 + "\n", "an integer of 502 digits"),
    "duplicate": ("action: retract\naction: dispute\n", "duplicate key 'action' (line 2)"),
    "duplicate-typed": ("1: a\n0x1: b\n", "duplicate key 1 (line 2)"),
    "duplicate-nested": ("a:\n  b: 1\n  b: 2\n", "duplicate key 'b' (line 3)"),
    "list-key": ("? [1, 2]\n: x\n", "a key must be a plain value, not a list or a mapping"),
    "map-key": ("? {a: 1}\n: x\n", "a key must be a plain value"),
    "two-documents": ("a: 1\n---\nb: 2\n", "more than one YAML document"),
    "yaml-1.1": ("%YAML 1.1\n---\na: no\n", "a %YAML 1.1 directive: the store reads YAML 1.2"),
    "broken": ("a: {b\n", "not valid YAML: "),
    "tab": ("\t- x\n", "not valid YAML: "),
    "mapping-in-scalar": ("a: b: c\n", "not valid YAML: mapping values are not allowed"),
    "nel": ("a: x\x85y\n", "U+0085 (NEL) is a line break to some YAML readers and text to others (line 1)"),
    "line-separator": (
        "a: 1\nb: |\n  x\u2028y\n",
        'U+2028 (LINE SEPARATOR) is a line break to some YAML readers and text to others (line 3): write it escaped in a double-quoted string ("\\u2028")',
    ),
    "paragraph-separator": ("a: '\u2029'\n", "U+2029 (PARAGRAPH SEPARATOR)"),
    "control-character": ("a: \x07\n", "not valid YAML"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_document_is_refused_with_a_reason(name: str) -> None:
    text, expected = HOSTILE[name]
    with pytest.raises(YAMLRefused) as refused:
        load(text)
    message = str(refused.value)
    assert expected in message, message
    assert "\n" not in message and len(message) < 400  # one line, never a traceback
    assert lines(text) == {}  # the line finder refuses the same documents


def test_nesting_and_integer_caps_are_exact() -> None:
    assert load(_nested(YAML_MAX_DEPTH)) is not None
    with pytest.raises(YAMLRefused, match=f"nested more than {YAML_MAX_DEPTH} levels deep"):
        load(_nested(YAML_MAX_DEPTH + 1))
    assert load("n: " + "9" * INT_MAX_DIGITS) == {"n": int("9" * INT_MAX_DIGITS)}
    assert load("n: -" + "9" * INT_MAX_DIGITS) == {"n": -int("9" * INT_MAX_DIGITS)}
    with pytest.raises(YAMLRefused, match=f"{INT_MAX_DIGITS + 1} digits"):
        load("n: " + "9" * (INT_MAX_DIGITS + 1))
    assert load("n: '" + "9" * 5000 + "'") == {"n": "9" * 5000}  # a quoted one is text: no cap


def test_the_alias_bomb_costs_nothing() -> None:
    """Refused at its first anchor, before any alias is expanded."""
    bomb = (
        "a: &a ["
        + ",".join(["x"] * 50)
        + "]\n"
        + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 50) + "]\n" for i in range(10))
    )
    with pytest.raises(YAMLRefused, match="anchors"):
        load(bomb)


def test_a_refused_document_leaves_nothing_behind() -> None:
    good = "action: retract\nreason: no\n"
    for text, _ in HOSTILE.values():
        with pytest.raises(YAMLRefused):
            load(text)
        assert load(good) == {"action": "retract", "reason": "no"}


def test_only_decoded_text_is_read() -> None:
    with pytest.raises(YAMLRefused, match="give the text"):
        load(b"a: 1\n")  # type: ignore[arg-type]


# --- plain data, typed by YAML 1.2 ------------------------------------------------------------------

SCALARS = [
    # YAML 1.1's booleans are words in 1.2 (a reason `no`, a model `on`, a flag `y`)
    ("no", "no"),
    ("No", "No"),
    ("on", "on"),
    ("off", "off"),
    ("yes", "yes"),
    ("y", "y"),
    ("n", "n"),
    ("true", True),
    ("True", True),
    ("TRUE", True),
    ("false", False),
    ("FALSE", False),
    ("tRUE", "tRUE"),
    # sexagesimal and octal are 1.1's
    ("1:30", "1:30"),
    ("190:20:30", "190:20:30"),
    ("1:30.5", "1:30.5"),
    ("017", 17),
    ("0o17", 15),
    ("0x1F", 31),
    ("0b101", 5),
    ("1_000", 1000),
    ("+12", 12),
    ("-0", 0),
    ("0", 0),
    ("_", "_"),
    ("1.5", 1.5),
    ("1e3", 1000.0),
    ("-1.5e-3", -0.0015),
    (".5", 0.5),
    (".inf", math.inf),
    ("-.Inf", -math.inf),
    ("1.0.0", "1.0.0"),
    ("0.3.0", "0.3.0"),
    ("null", None),
    ("~", None),
    ("Null", None),
    ("", None),
    ("nULL", "nULL"),
    # a date or time stays the text written
    ("2026-05-01", "2026-05-01"),
    ("2026-05-01T12:00:00Z", "2026-05-01T12:00:00Z"),
    ("2026-05-01 12:00:00.5 +02:00", "2026-05-01 12:00:00.5 +02:00"),
    # quoted or with the non-specific tag: always text
    ("'1'", "1"),
    ('"true"', "true"),
    ("! 12", "12"),
    ("'~'", "~"),
    ('"a\\tb\\u00e9"', "a\tbé"),
    ('"\\x85 \\u2028"', "\x85 \u2028"),
    ("=", "="),
    ("'<<'", "<<"),
    ("a & b * c", "a & b * c"),
    ("R&D", "R&D"),
    ("!", ""),
]


@pytest.mark.parametrize(("written", "value"), SCALARS, ids=[repr(w) for w, _ in SCALARS])
def test_a_scalar_reads_as_yaml_1_2_reads_it(written: str, value: Any) -> None:
    got = load(f"k: {written}\n")["k"]
    assert got == value and type(got) is type(value)
    assert load(f"- {written}\n") == [got]


def test_nan_reads_as_a_float() -> None:
    assert math.isnan(load("k: .nan\n")["k"]) and math.isnan(load("k: .NaN\n")["k"])


def test_keys_are_typed_like_values_and_kept_in_order() -> None:
    assert load("b: 1\na: 2\n1: x\nnull: z\n'2': w\n2.5: v\n") == {
        "b": 1,
        "a": 2,
        1: "x",
        None: "z",
        "2": "w",
        2.5: "v",
    }
    assert load("true: y\n") == {True: "y"}
    assert list(load("b: 1\na: 2\nc: 3\n")) == ["b", "a", "c"]


def test_documents_of_every_shape() -> None:
    assert load("") is None and load("# only a comment\n") is None and load("---\n...\n") is None
    assert load("just text") == "just text"
    assert load("[1, [2, {a: []}], {}]") == [1, [2, {"a": []}], {}]
    assert load("a:\n  - b: 1\n    c: [x, y]\n  - |\n    two\n    lines\n") == {
        "a": [{"b": 1, "c": ["x", "y"]}, "two\nlines\n"]
    }
    assert load("%YAML 1.2\n---\na: no\n") == {"a": "no"}  # 1.2, said or not


def test_lines_name_every_key_and_item() -> None:
    text = "kind: developer\nentries:\n  Qwen:\n    aliases:\n      - qwen\n      - name: QWEN\n        why: old\n  b: {aliases: [x, y]}\n"
    at = lines(text)
    assert at[("kind",)] == 1 and at[("entries",)] == 2 and at[("entries", "Qwen")] == 3
    assert at[("entries", "Qwen", "aliases")] == 4
    assert at[("entries", "Qwen", "aliases", 0)] == 5 and at[("entries", "Qwen", "aliases", 1)] == 6
    assert at[("entries", "Qwen", "aliases", 1, "why")] == 7
    assert at[("entries", "b", "aliases", 1)] == 8
    assert lines("a: 1\na: 2\n") == {} and lines("a: [") == {}


# --- every YAML file of the project reads as before ---------------------------------------------


def _project_yaml() -> list[Path]:
    found = [
        *sorted((PROJECT / "governance").rglob("*.yaml")),
        *sorted((PROJECT / "tests" / "examples").rglob("*.yaml")),
        *sorted((PROJECT / "tools" / "eee").rglob("*.yaml")),
        PROJECT / "dvc.yaml",
        PROJECT / ".pre-commit-config.yaml",
    ]
    return [p for p in found if p.is_file()]


def test_every_yaml_file_of_the_project_reads_as_ruamel_read_it() -> None:
    files = _project_yaml()
    assert len(files) > 150  # the ledger, the registry, the manifest, the mappings, the examples
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert load(text) == _ruamel(text), path


def _plain(value: Any) -> bool:
    """Whether ``value`` holds nothing ruamel types differently on purpose (a date, a time)."""
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return not isinstance(value, dt.date | tuple)


REFUSALS = (
    "anchors",
    "aliases",
    "tags",
    "merge keys",
    "nested more",
    "digits",
    "duplicate key",
    "a key must be",
    "line break",
)


@functools.cache
def _edits() -> list[tuple[str, str, Any]]:
    """(the character put in or taken out, the edited text, what ruamel.yaml reads or its
    error) of one-character edits of a real event and of the start of a real manifest."""
    event = sorted((PROJECT / "governance" / "events").glob("*.yaml"))[0].read_text(encoding="utf-8")
    manifest = sorted((PROJECT / "governance" / "imports").glob("*.yaml"))[0].read_text(encoding="utf-8")[:1500]
    rng = random.Random(34)
    alphabet = list("\"\\: \n-x01u#[]{}&*!'\t~%?|>,<=Nlé\u2028\x85")
    out = []
    for base in (event, manifest):
        for _ in range(700):
            i = rng.randrange(len(base))
            ch, op = rng.choice(alphabet), rng.choice("ird")
            text = {"i": base[:i] + ch + base[i:], "r": base[:i] + ch + base[i + 1 :], "d": base[:i] + base[i + 1 :]}[
                op
            ]
            try:
                theirs: Any = _ruamel(text)
            except Exception as exc:
                theirs = exc
            out.append((base[i] if op == "d" else ch, text, theirs))
    return out


def test_edited_governance_files_read_as_ruamel_reads_them_or_are_refused_for_a_reason() -> None:
    """1,400 one-character edits of an event and of an import manifest: whatever
    ruamel.yaml's safe loader reads, this reader reads the same (bar dates, which stay text),
    or refuses for one of the store's reasons; what ruamel refuses, this reader refuses too,
    but for a tab inside a plain scalar and a plain ``=``, both text to YAML (ruamel's own
    limits)."""
    same = refused_for_a_reason = 0
    for ch, text, theirs in _edits():
        try:
            ours: Any = load(text)
        except YAMLRefused as exc:
            ours = exc
        if isinstance(theirs, Exception):
            assert isinstance(ours, YAMLRefused) or ch in "\t=", (repr(text), theirs)
        elif isinstance(ours, YAMLRefused):
            assert any(reason in str(ours) for reason in REFUSALS), (repr(text), str(ours))
            refused_for_a_reason += 1
        elif _plain(theirs):
            assert ours == theirs, repr(text)
            same += 1
    assert same > 600 and refused_for_a_reason > 20


def test_the_reader_uses_libyaml_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyYAML's wheels carry libyaml: the store's reader, left to choose, runs on it."""
    import yaml
    from yaml.cyaml import CParser

    assert yaml.__with_libyaml__
    monkeypatch.setattr(safeyaml, "_PARSER", None)
    assert safeyaml._parser()[0] is CParser
    assert load("a: [1, no]\n") == {"a": [1, "no"]}
