"""The ledger's vocabulary, event schema 1.1.0 and the fold (no git): actions declared once,
flags, duplicates, resolutions, relations, ordering by history and the time rule."""

from __future__ import annotations

import datetime as dt
import importlib
import json

import pytest

from conftest import PROJECT
from eee.governance import ACTION_NAMES, ACTIONS, ACTIONS_IN, OUTCOMES, STATUSES
from eee.governance.events import make_event, schema_errors
from eee.governance.history import Entered
from eee.governance.status import FIELDS
from eee.rules.flags import flags_of
from eee.rules.ledger import fold, time_problem

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
C = "cccccccc-0000-4000-8000-000000000003"
ME = {"name": "Maintainer", "email": "maintainer@example.org"}
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
REF = "https://example.org/discussion/1"


def ev(action: str, record: str, i: int = 0, **kw: object) -> dict:
    if action == "dispute":
        kw.setdefault("reference", REF)
    if action == "flag":
        kw.setdefault("rule", "score")
        kw.setdefault("path", "$.evaluation_results[0].score_details.score")
        kw.setdefault("record_path", f"data/bench/acme/widget-7b/{record}.json")
        kw.setdefault("sha256", "0" * 64)
    return make_event(action, record, f"step {i}", ME, now=T0 + dt.timedelta(minutes=i), **kw)


def seq(*steps: tuple) -> list[dict]:
    out = []
    for i, (action, record, kw) in enumerate(steps):
        out.append(ev(action, record, i, **kw))
    return out


# --- the vocabulary, declared once ----------------------------------------------------------


def _schema(version: str) -> dict:
    rel = "governance/event.schema.json" if version == "1.0.0" else f"governance/{version}/event.schema.json"
    return json.loads((PROJECT / "schemas" / rel).read_text())


@pytest.mark.parametrize("version", sorted(ACTIONS_IN))
def test_each_event_schema_names_exactly_the_actions_of_its_version(version: str) -> None:
    schema = _schema(version)
    assert schema["properties"]["action"]["enum"] == list(ACTIONS_IN[version])
    assert "(" + "|".join(ACTIONS_IN[version]) + ")" in schema["properties"]["id"]["pattern"]
    assert schema["properties"]["event_schema"]["const"] == version


def test_new_schema_is_pinned_and_the_old_one_unchanged() -> None:
    registry = json.loads((PROJECT / "schemas" / "registry.json").read_text())
    assert registry["pinned"]["governance"] == {
        "event.schema.json": "0301cbce6e6b0275fdb89eeba953fc9f8afb0adf394ce9680fbbfabb69568f8b"
    }
    assert set(registry["pinned"]["governance/1.1.0"]) == {"event.schema.json"}
    assert _schema("1.1.0")["properties"]["outcome"]["enum"] == sorted(
        OUTCOMES, key=["upheld", "corrected", "retracted"].index
    )


def test_every_action_has_its_command_tool_and_cli_entry() -> None:
    from eee.cli import COMMANDS

    for action in ACTIONS:
        assert (PROJECT / "tools" / action.command).is_file(), action
        module, summary = COMMANDS[action.command]
        assert module == f"eee.commands.{action.command.replace('-', '_')}" and summary == action.summary
        assert callable(importlib.import_module(module).main)


@pytest.mark.parametrize("action", ACTION_NAMES)
def test_events_the_tools_make_are_valid_under_the_current_schema(action: str) -> None:
    kw: dict = {}
    if action in ("supersede",):
        kw["replacement"] = B
    if action == "resolve":
        kw["outcome"] = "upheld"
    if action == "duplicate":
        kw["of"] = B
    assert schema_errors(ev(action, A, **kw)) == []


def test_one_zero_events_stay_valid_under_their_schema() -> None:
    old = make_event("retract", A, "old", ME, now=T0, schema="1.0.0")
    assert old["event_schema"] == "1.0.0" and schema_errors(old) == []
    old_resolve = make_event("resolve", A, "old", ME, now=T0, schema="1.0.0")  # no outcome was fine
    assert schema_errors(old_resolve) == []
    flag = make_event("flag", A, "new action", ME, rule="score", path="$.x", now=T0, schema="1.0.0")
    assert schema_errors(flag)  # 1.0.0 has no flag


@pytest.mark.parametrize(
    ("kw", "where"),
    [
        ({"action": "flag", "rule": None}, "rule"),
        ({"action": "flag", "sha256": None}, "sha256"),
        ({"action": "flag", "record_path": None}, "record_path"),
        ({"action": "flag", "sha256": "abc"}, "sha256"),
        ({"action": "flag", "record_path": "data/x.json"}, "record_path"),
        ({"action": "resolve", "outcome": "corrected"}, "replacement"),
        ({"action": "resolve", "outcome": None}, "outcome"),
        ({"action": "duplicate", "of": None}, "of"),
        ({"action": "retract", "of": B}, "of"),
        ({"action": "flag", "reason": "bell\x07"}, "reason"),
        ({"action": "flag", "reason": "line\u2028sep"}, "reason"),
    ],
)
def test_schema_refuses_incomplete_events(kw: dict, where: str) -> None:
    action = kw.pop("action")
    base = {"rule": "score", "path": "$.x", "record_path": f"data/b/d/m/{A}.json", "sha256": "0" * 64}
    base = base if action == "flag" else {}
    if action == "resolve":
        base["outcome"] = "upheld"
    if action == "duplicate":
        base["of"] = B
    reason = kw.pop("reason", "r")
    base.update(kw)
    event = make_event(action, A, "r", ME, now=T0, **{k: v for k, v in base.items() if v is not None})
    event["reason"] = reason
    assert schema_errors(event), (action, where)


# --- statuses -------------------------------------------------------------------------------

CASES = [
    ("flag", [("flag", A, {})], {A: "flagged"}, 0),
    ("flag resolve", [("flag", A, {}), ("resolve", A, {"outcome": "upheld"})], {A: "active"}, 0),
    ("flag twice same finding", [("flag", A, {}), ("flag", A, {})], {A: "flagged"}, 1),
    ("flag two findings", [("flag", A, {}), ("flag", A, {"path": "$.other"})], {A: "flagged"}, 0),
    ("flag retracted", [("retract", A, {}), ("flag", A, {})], {A: "retracted"}, 1),
    ("retract flagged", [("flag", A, {}), ("retract", A, {})], {A: "retracted"}, 0),
    ("superseded flagged", [("flag", A, {}), ("supersede", A, {"replacement": B})], {A: "superseded"}, 0),
    ("disputed over flagged", [("flag", A, {}), ("dispute", A, {})], {A: "disputed"}, 0),
    (
        "resolve clears dispute and flags",
        [("flag", A, {}), ("dispute", A, {}), ("resolve", A, {"outcome": "upheld"})],
        {A: "active"},
        0,
    ),
    ("resolve nothing open", [("resolve", A, {"outcome": "upheld"})], {A: "active"}, 1),
    (
        "resolve retracted with the retraction",
        [("dispute", A, {}), ("resolve", A, {"outcome": "retracted"}), ("retract", A, {})],
        {A: "retracted"},
        0,
    ),
    (
        "resolve corrected with the supersession",
        [
            ("flag", A, {}),
            ("resolve", A, {"outcome": "corrected", "replacement": B}),
            ("supersede", A, {"replacement": B}),
        ],
        {A: "superseded", B: "active"},
        0,
    ),
    ("duplicate", [("duplicate", A, {"of": B})], {A: "duplicate", B: "active"}, 0),
    ("duplicate of itself", [("duplicate", A, {"of": A})], {A: "active"}, 1),
    ("duplicate cycle", [("duplicate", A, {"of": B}), ("duplicate", B, {"of": A})], {A: "duplicate", B: "active"}, 1),
    ("duplicate twice", [("duplicate", A, {"of": B}), ("duplicate", A, {"of": C})], {A: "duplicate"}, 1),
    ("duplicate of retracted", [("retract", B, {}), ("duplicate", A, {"of": B})], {A: "active"}, 1),
    # the state machine (issue 24.3): a refused state is refused after another action too
    (
        "retract the original of a duplicate",
        [("duplicate", A, {"of": B}), ("retract", B, {})],
        {A: "duplicate", B: "active"},
        1,
    ),
    (
        "duplicate of the record it superseded",
        [("supersede", A, {"replacement": B}), ("duplicate", B, {"of": A})],
        {A: "superseded", B: "active"},
        1,
    ),
    ("retract a superseded record", [("supersede", A, {"replacement": B}), ("retract", A, {})], {A: "superseded"}, 1),
    (
        "retract the duplicate, then the original",
        [("duplicate", A, {"of": B}), ("retract", A, {}), ("retract", B, {})],
        {A: "retracted", B: "retracted"},
        0,
    ),
    (
        "reinstate a retracted duplicate",
        [("duplicate", A, {"of": B}), ("retract", A, {}), ("reinstate", A, {})],
        {A: "active", B: "active"},
        0,
    ),
    (
        "retract the replacement a duplicate moved along to",
        [("duplicate", C, {"of": A}), ("supersede", A, {"replacement": B}), ("retract", B, {})],
        {A: "superseded", B: "active", C: "duplicate"},
        1,
    ),
    ("supersede a duplicate", [("duplicate", A, {"of": B}), ("supersede", A, {"replacement": C})], {A: "duplicate"}, 1),
    ("supersede by a duplicate", [("duplicate", B, {"of": C}), ("supersede", A, {"replacement": B})], {A: "active"}, 1),
    (
        "resolve retracted of a record duplicates stand on",
        [("duplicate", B, {"of": A}), ("dispute", A, {}), ("resolve", A, {"outcome": "retracted"}), ("retract", A, {})],
        {A: "disputed", B: "duplicate"},
        2,
    ),
]


@pytest.mark.parametrize(("name", "steps", "expected", "illegal"), CASES, ids=[c[0] for c in CASES])
def test_fold(name: str, steps: list, expected: dict, illegal: int) -> None:
    ledger = fold(seq(*steps))
    assert {u: ledger.state(u).status for u in expected} == expected
    assert len(ledger.problems) == illegal, [p.message for _, p in ledger.problems]
    assert all(ledger.state(u).status in STATUSES for u in expected)


def test_duplicates_move_along_and_never_stand_on_a_withdrawn_record() -> None:
    ledger = fold(seq(("duplicate", C, {"of": A}), ("supersede", A, {"replacement": B})))
    assert ledger.problems == []
    assert ledger.state(C).duplicate_of == A and ledger.stands_on(C) == B  # moved along to the replacement
    assert ledger.stands_on(A) == B and ledger.stands_on(B) == B
    assert ledger.dependents(B) == [C] and ledger.record_fields(C)["stands_on"] == B
    # the replacement marked a duplicate itself: both move along once more
    D = "dddddddd-0000-4000-8000-000000000004"
    ledger = fold(seq(("duplicate", C, {"of": A}), ("supersede", A, {"replacement": B}), ("duplicate", B, {"of": D})))
    assert ledger.problems == [] and {ledger.stands_on(u) for u in (A, B, C, D)} == {D}
    # a retracted record stands for nothing, and a superseded one whose replacement is withdrawn neither
    ledger = fold(seq(("supersede", A, {"replacement": B}), ("retract", B, {})))
    assert ledger.problems == [] and ledger.stands_on(A) is None and ledger.stands_on(B) is None


def test_resolve_outcome_without_its_act_is_not_applied() -> None:
    """1.1.0: an outcome retracted needs the retraction in the same commit."""
    events = seq(("dispute", A, {}), ("resolve", A, {"outcome": "retracted"}))
    ledger = fold(events)
    assert ledger.state(A).status == "disputed"
    assert "no retraction" in ledger.problems[0][1].message
    # the retraction in another commit does not count
    events.append(ev("retract", A, 5))
    entered = {f"{e['id']}.yaml": Entered(f"c{i}", i, None) for i, e in enumerate(events)}
    ledger = fold(events, entered=entered)
    assert len(ledger.problems) == 1 and ledger.state(A).status == "retracted"
    assert ledger.state(A).resolution is None


def test_last_resolution_and_open_flags() -> None:
    events = seq(
        ("flag", A, {}),
        ("flag", A, {"rule": "naming", "path": "$.model_info.id"}),
    )
    ledger = fold(events)
    assert {(f.rule, f.path) for f in flags_of(ledger, A)} == {
        ("score", "$.evaluation_results[0].score_details.score"),
        ("naming", "$.model_info.id"),
    }
    closing = ev("resolve", A, 9, outcome="upheld", resolves=events[0]["id"])
    ledger = fold([*events, closing])
    st = ledger.state(A)
    assert st.status == "flagged" and [f["rule"] for f in st.open_flags] == ["naming"]
    assert st.to_dict()["last_resolution"]["outcome"] == "upheld"
    # resolved flags still name the findings the record is accepted with
    assert len(flags_of(ledger, A)) == 2


def test_relations_both_ways_and_catalogue_fields() -> None:
    ledger = fold(seq(("supersede", A, {"replacement": B}), ("duplicate", C, {"of": B})))
    assert ledger.relations(A) == [{"relation": "IsPreviousVersionOf", "record": B}]
    assert {(r["relation"], r["record"]) for r in ledger.relations(B)} == {
        ("IsNewVersionOf", A),
        ("IsIdenticalTo", C),
    }
    assert ledger.relations(C) == [{"relation": "IsIdenticalTo", "record": B, "role": "duplicate"}]
    fields = ledger.record_fields(C)
    assert set(fields) == {name for name, _, _ in FIELDS}
    assert fields["is_duplicate"] is True and fields["duplicate_of"] == B
    assert ledger.linked(A, B) and ledger.linked(B, C) and not ledger.linked(A, C)
    assert ledger.chain(B) == [A, B]


# --- order by history, and the time rule ----------------------------------------------------


def test_events_are_ordered_by_history_not_by_declared_time() -> None:
    supersede = ev("supersede", A, 5, replacement=B)
    backdated = make_event("reinstate", A, "dated 2020", ME, now=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))
    retract = ev("retract", A, 1)
    entered = {
        f"{retract['id']}.yaml": Entered("c1", 0, None),
        f"{supersede['id']}.yaml": Entered("c2", 1, None),
        f"{backdated['id']}.yaml": Entered("c3", 2, None),
    }
    ledger = fold([backdated, supersede, retract], entered=entered)
    # history: retract, (supersede of a retracted record: illegal), reinstate dated 2020:
    # earlier than the record's last event, so refused; the record stays retracted
    assert ledger.state(A).status == "retracted"
    messages = [p.message for _, p in ledger.problems]
    assert any("retracted record is not superseded" in m for m in messages)
    assert any("earlier than the record's previous event" in m for m in messages)


def test_uncommitted_events_come_last() -> None:
    late_commit = ev("retract", A, 9)  # declares a later time, but is committed first
    early_uncommitted = ev("reinstate", A, 10)
    ledger = fold([early_uncommitted, late_commit], entered={f"{late_commit['id']}.yaml": Entered("c", 0, None)})
    assert [e["action"] for e in ledger.state(A).history] == ["retract", "reinstate"]
    assert ledger.entry(early_uncommitted).commit is None


def test_time_rule() -> None:
    event = ev("retract", A, 0)
    t = T0.timestamp()
    assert time_problem(event, None, t + 3600) is None
    assert "more than a day" in time_problem(event, None, t + 86401)[0]
    assert "earlier than" in time_problem(event, t + 1, None)[0]
    assert time_problem(event, t, t) is None


def test_derived_from_converted_and_migrated_records() -> None:
    from eee.governance.relations import derived_from

    converted = {
        "evaluation_id": "mmlu/acme_m/1",
        "source_metadata": {"source_type": "evaluation_run"},
        "eval_library": {"name": "inspect_ai"},
    }
    assert derived_from(converted) == [
        {"relation": "IsDerivedFrom", "source": "Inspect AI log", "identifier": "mmlu/acme_m/1"}
    ]
    migrated = {
        "evaluation_id": "x",
        "source_metadata": {"source_type": "documentation", "additional_details": {"eee_migrated_from": "0.2.0"}},
    }
    assert derived_from(migrated)[0]["source"] == "the record as written in schema version 0.2.0"
    assert derived_from({"source_metadata": {"source_type": "documentation"}}) == []


def test_parsed_events_are_cached_in_the_git_dir_and_never_stale(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    from eee.governance.events import CACHE_FILE, load_all, write

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    first = write(tmp_path, ev("retract", A, 1))
    write(tmp_path, ev("reinstate", A, 2))
    fresh = load_all(tmp_path, cache=False)
    assert load_all(tmp_path) == fresh  # parsed, then cached
    assert (tmp_path / ".git" / CACHE_FILE).is_file()
    assert load_all(tmp_path) == fresh  # from the cache
    text = first.read_text().replace("step 1", "step one, longer")
    first.write_text(text)  # (events never change; the cache must not hide it if one does)
    assert load_all(tmp_path)[0][1]["reason"] == "step one, longer"
    (tmp_path / ".git" / CACHE_FILE).write_text("{not json")
    assert load_all(tmp_path)[0][1]["reason"] == "step one, longer"
