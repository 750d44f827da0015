"""The status fold, for every sequence of actions that matters."""

from __future__ import annotations

import datetime as dt

import pytest

from eee.governance.events import dumps, load_text, make_event
from eee.rules.ledger import fold

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
C = "cccccccc-0000-4000-8000-000000000003"
ME = {"name": "Maintainer", "email": "maintainer@example.org"}
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _events(*steps: tuple) -> list[dict]:
    out = []
    for i, step in enumerate(steps):
        action, record, *rest = step
        kw = {}
        if action == "supersede":
            kw["replacement"] = rest[0]
        if action == "dispute":
            kw["reference"] = "https://github.com/org/store/discussions/1"
        out.append(make_event(action, record, f"step {i}", ME, now=T0 + dt.timedelta(minutes=i), **kw))
    return out


CASES = [
    # (name, steps, expected {uuid: status}, number of illegal events)
    ("no events", [], {A: "active"}, 0),
    ("retract", [("retract", A)], {A: "retracted"}, 0),
    ("retract reinstate", [("retract", A), ("reinstate", A)], {A: "active"}, 0),
    ("retract reinstate retract", [("retract", A), ("reinstate", A), ("retract", A)], {A: "retracted"}, 0),
    ("retract twice", [("retract", A), ("retract", A)], {A: "retracted"}, 1),
    ("reinstate active", [("reinstate", A)], {A: "active"}, 1),
    ("supersede", [("supersede", A, B)], {A: "superseded", B: "active"}, 0),
    ("supersede chain", [("supersede", A, B), ("supersede", B, C)], {A: "superseded", B: "superseded", C: "active"}, 0),
    ("supersede cycle", [("supersede", A, B), ("supersede", B, A)], {A: "superseded", B: "active"}, 1),
    ("supersede long cycle", [("supersede", A, B), ("supersede", B, C), ("supersede", C, A)], {C: "active"}, 1),
    ("supersede itself", [("supersede", A, A)], {A: "active"}, 1),
    ("retracted replacement", [("retract", B), ("supersede", A, B)], {A: "active", B: "retracted"}, 1),
    ("superseded twice", [("supersede", A, B), ("supersede", A, C)], {A: "superseded"}, 1),
    ("replacement replaces two", [("supersede", A, B), ("supersede", C, B)], {C: "active"}, 1),
    ("supersede retracted", [("retract", A), ("supersede", A, B)], {A: "retracted"}, 1),
    ("dispute resolve", [("dispute", A), ("resolve", A)], {A: "active"}, 0),
    ("dispute", [("dispute", A)], {A: "disputed"}, 0),
    ("dispute twice", [("dispute", A), ("dispute", A)], {A: "disputed"}, 1),
    ("resolve undisputed", [("resolve", A)], {A: "active"}, 1),
    ("dispute retracted", [("retract", A), ("dispute", A)], {A: "retracted"}, 1),
    ("retract disputed", [("dispute", A), ("retract", A)], {A: "retracted"}, 0),
    ("superseded then disputed", [("supersede", A, B), ("dispute", A)], {A: "superseded"}, 0),
    # the state machine (eee.governance.lifecycle): a superseded record no longer counts and
    # is not retracted (reinstating it could not say what it would become); its replacement is
    ("retract superseded", [("supersede", A, B), ("retract", A)], {A: "superseded", B: "active"}, 1),
    ("retract the replacement", [("supersede", A, B), ("retract", B)], {A: "superseded", B: "retracted"}, 0),
]


@pytest.mark.parametrize(("name", "steps", "expected", "illegal"), CASES, ids=[c[0] for c in CASES])
def test_fold(name: str, steps: list, expected: dict, illegal: int) -> None:
    ledger = fold(_events(*steps))
    assert {u: ledger.state(u).status for u in expected} == expected
    assert len(ledger.problems) == illegal


def test_history_keeps_every_applied_event_in_order() -> None:
    ledger = fold(_events(("retract", A), ("reinstate", A), ("retract", A)))
    assert [e["action"] for e in ledger.state(A).history] == ["retract", "reinstate", "retract"]
    assert ledger.state(A).to_dict()["retraction_reason"] == "step 2"


def test_supersede_links_both_ways() -> None:
    ledger = fold(_events(("supersede", A, B), ("supersede", B, C)))
    assert ledger.state(A).superseded_by == B
    assert ledger.state(B).preceded_by == A
    assert ledger.state(C).preceded_by == B
    assert ledger.chain(A) == [A, B, C]


def test_events_are_folded_in_time_order_not_list_order() -> None:
    events = _events(("retract", A), ("reinstate", A))
    assert fold(reversed(events)).state(A).status == "active"


def test_unknown_record_is_illegal() -> None:
    ledger = fold(_events(("retract", A)), exists=lambda u: u != A)
    assert ledger.state(A).status == "active"
    assert "no record" in ledger.problems[0][1].message


def test_a_cycle_is_refused_because_its_replacement_no_longer_stands() -> None:
    ledger = fold(_events(("supersede", A, B), ("supersede", B, A)))
    (problem,) = [p for _, p in ledger.problems]
    assert f"the replacement {A} is superseded: it does not stand" in problem.message
    assert f"the record that stands for it is {B}" in str(problem.hint)


def test_event_yaml_round_trip_keeps_text_types() -> None:
    event = make_event("dispute", A, "line one\nline two", ME, reference="https://example.org/d/1")
    text = dumps(event)
    assert 'timestamp: "' in text and 'event_schema: "1.2.0"' in text
    assert load_text(text) == event
