"""The ledger's state machine (issue 24.3), declared once in ``eee.governance.lifecycle``:
every (status, action) pair walked through the fold, the governance card's table held to the
declaration, the conditions it asks of other records, random event sequences checked
against status, the catalogue and the site's record pages, and the tools, the events hook and
the audit refusing the same thing with real git."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import PROJECT, commit, git, hook_env, make_store, place_record, record_of
from eee.governance import ACTION_NAMES
from eee.governance.events import make_event
from eee.governance.lifecycle import COLUMNS, CONDITIONS, LIFECYCLES, MACHINE, card_table, states, step
from eee.rules.ledger import fold

X = "aaaaaaaa-0000-4000-8000-000000000001"  # the record the action is taken on
S = "bbbbbbbb-0000-4000-8000-000000000002"  # what superseded it
Q = "cccccccc-0000-4000-8000-000000000003"  # what it was marked a duplicate of
N = "dddddddd-0000-4000-8000-000000000004"  # a fresh record that stands (replacement, original)
ME = {"name": "M", "email": "m@example.org"}
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
RULE, PATH = "score", "$.evaluation_results[0].score_details.score"


class Events:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def add(self, action: str, record: str, **kw: object) -> dict:
        if action == "dispute":
            kw.setdefault("reference", "https://example.org/d/1")
        if action == "flag":
            kw.setdefault("rule", RULE)
            kw.setdefault("path", PATH)
            kw.setdefault("record_path", f"data/bench/acme/widget-7b/{record}.json")
            kw.setdefault("sha256", "0" * 64)
        event = make_event(
            action, record, f"step {len(self.events)}", ME, now=T0 + dt.timedelta(minutes=len(self.events)), **kw
        )
        self.events.append(event)
        return event


def _reach(lifecycle: str, markers: tuple[str, ...]) -> Events:
    """Events that leave X in ``lifecycle`` with ``markers`` (markers first: a retracted
    record takes no new one)."""
    e = Events()
    if "flagged" in markers:
        e.add("flag", X)
    if "disputed" in markers:
        e.add("dispute", X)
    if lifecycle == "superseded":
        e.add("supersede", X, replacement=S)
    elif lifecycle == "retracted":
        e.add("retract", X)
    elif lifecycle == "duplicate":
        e.add("duplicate", X, of=Q)
    return e


def _act(e: Events, action: str, outcome: str | None) -> list[dict]:
    if action == "supersede":
        return [e.add("supersede", X, replacement=N)]
    if action == "duplicate":
        return [e.add("duplicate", X, of=N)]
    if action == "flag":
        return [e.add("flag", X, path="$.model_info.id")]  # another finding than the open one
    if action == "dispute":
        return [e.add("dispute", X, reference="https://example.org/d/2")]
    if action == "resolve":
        first = e.add("resolve", X, outcome=outcome, **({"replacement": N} if outcome == "corrected" else {}))
        if outcome == "retracted":
            e.add("retract", X)
        elif outcome == "corrected":
            e.add("supersede", X, replacement=N)
        return [first]
    return [e.add(action, X)]


def _state_of(cell: str) -> tuple[str, tuple[str, ...]]:
    text = re.sub(r"\s*\[\w\]", "", cell.removeprefix("→ ")).strip()
    lifecycle, *markers = [p.strip() for p in text.split("+")]
    return lifecycle, tuple(markers)


def _cells() -> list[tuple[str, tuple[str, ...], str, str | None, str]]:
    """Every (state, action) of the card's table, with its cell, parsed from the table itself."""
    tables = [block.splitlines() for block in card_table().split("\n\n")[:2]]
    heads = [h.strip() for table in tables for h in table[0].strip("|").split("|")[1:]]
    assert heads == [("mark-duplicate" if a == "duplicate" else a) + (f" ({o})" if o else "") for a, o in COLUMNS]
    out = []
    for (lifecycle, markers), *rows in zip(states(), *(table[2:] for table in tables), strict=True):
        cells = []
        for row in rows:
            first, *rest = (c.strip() for c in row.strip("|").split("|"))
            assert first == " + ".join((lifecycle, *markers))
            cells += rest
        for (action, outcome), cell in zip(COLUMNS, cells, strict=True):
            out.append((lifecycle, markers, action, outcome, cell))
    return out


CELLS = _cells()


def test_the_table_covers_every_status_and_every_action() -> None:
    assert len(states()) == len(LIFECYCLES) * 4
    assert {a for a, _ in COLUMNS} == set(ACTION_NAMES)
    assert set(MACHINE) == {(lc, a) for lc in LIFECYCLES for a in ACTION_NAMES if a != "resolve"}
    assert len(CELLS) == 16 * len(COLUMNS)


def test_the_governance_card_shows_the_declared_table() -> None:
    card = (PROJECT / "governance" / "README.md").read_text(encoding="utf-8")
    start = card.index("<!-- state machine:")
    inner = card[card.index("\n", start) + 1 : card.index("<!-- end of the state machine -->")]
    assert inner.strip() == card_table().strip(), (
        "governance/README.md's state machine differs from eee.governance.lifecycle: paste "
        "`python -c 'from eee.governance.lifecycle import card_table; print(card_table())'` between its markers"
    )


@pytest.mark.parametrize(
    ("lifecycle", "markers", "action", "outcome", "cell"),
    CELLS,
    ids=[f"{lc}{'+' + '+'.join(m) if m else ''}-{a}{'-' + o if o else ''}" for lc, m, a, o, _ in CELLS],
)
def test_every_status_and_action_does_what_the_table_says(
    lifecycle: str, markers: tuple[str, ...], action: str, outcome: str | None, cell: str
) -> None:
    e = _reach(lifecycle, markers)
    reached = fold(e.events)
    assert reached.problems == [] and (reached.state(X).lifecycle, reached.state(X).markers) == (lifecycle, markers)
    taken = _act(e, action, outcome)
    ledger = fold(e.events)
    refused = [p for ev, p in ledger.problems if any(ev is t for t in taken)]
    if cell == "refused":
        assert refused, f"{action} ({outcome}) applied in {lifecycle} {markers}"
        why = step(lifecycle, markers, action, outcome).why.split("{", 1)[0]
        assert refused[0].message.startswith(why), refused[0].message
        return
    assert ledger.problems == [], [p.message for _, p in ledger.problems]
    st = ledger.state(X)
    assert (st.lifecycle, st.markers) == _state_of(cell)
    assert st.status in (st.lifecycle, *st.markers) or (st.status == "active" and st.stands)


# --- the expected transitions, written out by hand (issue 34.4) --------------------------------
# Not read from eee.governance.lifecycle: each cell below was written from the governance
# card's prose (DESIGN.md's actions, the card's rules), so a change of the declared table
# (or of the fold) that no one meant shows up here. "R" is refused; otherwise the state that
# results, "lifecycle+marker+...", markers in the order disputed, flagged.

R = "refused"
HAND_COLUMNS = (
    ("retract", None),
    ("supersede", None),
    ("duplicate", None),
    ("reinstate", None),
    ("dispute", None),
    ("flag", None),
    ("resolve", "upheld"),
    ("resolve", "retracted"),
    ("resolve", "corrected"),
)
D, F, DF = ("disputed",), ("flagged",), ("disputed", "flagged")
# fmt: off
HAND: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {
    #                  retract               supersede              mark-duplicate         reinstate             dispute                flag                   res.upheld    res.retracted res.corrected
    ("active", ()):    ("retracted",         "superseded",          "duplicate",           R,                    "active+disputed",     "active+flagged",      R,            R,            R),
    ("active", D):     ("retracted+disputed", "superseded+disputed", "duplicate+disputed", R,                    R,                     "active+disputed+flagged", "active", "retracted",  "superseded"),
    ("active", F):     ("retracted+flagged", "superseded+flagged",  "duplicate+flagged",   R,                    "active+disputed+flagged", "active+flagged", "active",     "retracted",  "superseded"),
    ("active", DF):    ("retracted+disputed+flagged", "superseded+disputed+flagged", "duplicate+disputed+flagged", R, R, "active+disputed+flagged", "active", "retracted", "superseded"),
    ("superseded", ()): (R,                  R,                     R,                     R,                    "superseded+disputed", "superseded+flagged",  R,            R,            R),
    ("superseded", D): (R,                   R,                     R,                     R,                    R,                     "superseded+disputed+flagged", "superseded", R, R),
    ("superseded", F): (R,                   R,                     R,                     R,                    "superseded+disputed+flagged", "superseded+flagged", "superseded", R, R),
    ("superseded", DF): (R,                  R,                     R,                     R,                    R,                     "superseded+disputed+flagged", "superseded", R, R),
    ("retracted", ()): (R,                   R,                     R,                     "active",             R,                     R,                     R,            R,            R),
    ("retracted", D):  (R,                   R,                     R,                     "active+disputed",    R,                     R,                     "retracted",  R,            R),
    ("retracted", F):  (R,                   R,                     R,                     "active+flagged",     R,                     R,                     "retracted",  R,            R),
    ("retracted", DF): (R,                   R,                     R,                     "active+disputed+flagged", R,                R,                     "retracted",  R,            R),
    ("duplicate", ()): ("retracted",         R,                     R,                     R,                    "duplicate+disputed",  "duplicate+flagged",   R,            R,            R),
    ("duplicate", D):  ("retracted+disputed", R,                    R,                     R,                    R,                     "duplicate+disputed+flagged", "duplicate", "retracted", R),
    ("duplicate", F):  ("retracted+flagged", R,                     R,                     R,                    "duplicate+disputed+flagged", "duplicate+flagged", "duplicate", "retracted", R),
    ("duplicate", DF): ("retracted+disputed+flagged", R,            R,                     R,                    R,                     "duplicate+disputed+flagged", "duplicate", "retracted", R),
}
# fmt: on
HAND_CELLS = [
    (lifecycle, markers, action, outcome, expected)
    for (lifecycle, markers), row in HAND.items()
    for (action, outcome), expected in zip(HAND_COLUMNS, row, strict=True)
]


def test_the_hand_written_table_covers_the_declared_states_and_actions() -> None:
    assert set(HAND) == set(states())
    assert {a for a, _ in HAND_COLUMNS} == set(ACTION_NAMES)
    assert len(HAND_CELLS) == 144


@pytest.mark.parametrize(
    ("lifecycle", "markers", "action", "outcome", "expected"),
    HAND_CELLS,
    ids=[f"{lc}{'+' + '+'.join(m) if m else ''}-{a}{'-' + o if o else ''}" for lc, m, a, o, _ in HAND_CELLS],
)
def test_every_transition_is_the_one_written_by_hand(
    lifecycle: str, markers: tuple[str, ...], action: str, outcome: str | None, expected: str
) -> None:
    """The fold (what every reader uses), the declared step and the card's cell all give the
    state written by hand, or refuse where the hand table refuses."""
    e = _reach(lifecycle, markers)
    assert fold(e.events).problems == []
    taken = _act(e, action, outcome)
    ledger = fold(e.events)
    refused = [p for ev, p in ledger.problems if any(ev is t for t in taken)]
    declared = step(lifecycle, markers, action, outcome)
    cell = next(c for lc, m, a, o, c in CELLS if (lc, m, a, o) == (lifecycle, markers, action, outcome))
    if expected == R:
        assert refused, f"{action} ({outcome}) was applied in {lifecycle} {markers}"
        assert not declared.allowed and cell == "refused"
        return
    assert ledger.problems == [], [p.message for _, p in ledger.problems]
    assert declared.allowed and cell != "refused"
    st = ledger.state(X)
    assert "+".join((st.lifecycle, *st.markers)) == expected
    assert _state_of(cell) == (st.lifecycle, st.markers)


# --- the conditions an allowed step still asks of the other records ---------------------------


def _events(*steps: tuple) -> list[dict]:
    e = Events()
    for action, record, kw in steps:
        e.add(action, record, **kw)
    return e.events


CONDITION_CASES = [
    ("stood-on", [("duplicate", S, {"of": X}), ("retract", X, {})]),
    ("stood-on", [("duplicate", Q, {"of": X}), ("supersede", X, {"replacement": S}), ("retract", S, {})]),
    ("stood-on", [("duplicate", Q, {"of": X}), ("duplicate", X, {"of": S}), ("retract", X, {})]),
    ("replacement-stands", [("retract", S, {}), ("supersede", X, {"replacement": S})]),
    ("replacement-stands", [("duplicate", S, {"of": Q}), ("supersede", X, {"replacement": S})]),
    ("replacement-stands", [("supersede", X, {"replacement": S}), ("supersede", S, {"replacement": X})]),
    ("replacement-free", [("supersede", X, {"replacement": S}), ("supersede", Q, {"replacement": S})]),
    ("original-stands", [("supersede", X, {"replacement": S}), ("duplicate", S, {"of": X})]),
    ("original-stands", [("retract", Q, {}), ("duplicate", X, {"of": Q})]),
    ("original-stands", [("duplicate", Q, {"of": S}), ("duplicate", X, {"of": Q})]),
    ("not-itself", [("duplicate", X, {"of": X})]),
    ("same-finding", [("flag", X, {}), ("flag", X, {})]),
]


@pytest.mark.parametrize(
    ("name", "steps"), CONDITION_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONDITION_CASES)]
)
def test_conditions_refuse_with_their_reason(name: str, steps: list) -> None:
    events = _events(*steps)
    ledger = fold(events)
    (problem,) = [p for e, p in ledger.problems]
    assert ledger.problems[0][0] is events[-1]
    assert problem.message.startswith(CONDITIONS[name][0].split("{", 1)[0]), problem.message


def test_the_issues_examples() -> None:
    """Retracting A after B was marked its duplicate; superseding A by B, then marking B a
    duplicate of A; a duplicate said to repeat a record that stands when it does not; active
    queries losing the evaluation."""
    ledger = fold(_events(("duplicate", S, {"of": X}), ("retract", X, {})))
    assert ledger.state(X).stands and ledger.state(S).lifecycle == "duplicate" and ledger.stands_on(S) == X
    ledger = fold(_events(("supersede", X, {"replacement": S}), ("duplicate", S, {"of": X})))
    assert ledger.state(S).stands  # the evaluation still has a record that stands
    # moved along: what the duplicate repeats was superseded; it stands on the replacement
    ledger = fold(_events(("duplicate", Q, {"of": X}), ("supersede", X, {"replacement": S})))
    assert ledger.problems == [] and ledger.stands_on(Q) == S and ledger.record_fields(Q)["stands_on"] == S


# --- random sequences: status, the catalogue and the site agree ------------------------------

RECORDS = (X, S, Q, N)


@pytest.fixture(scope="module")
def plain_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store (no git: events come in file-name order) with the four records and the site's
    templates and schemas."""
    root = tmp_path_factory.mktemp("machine") / "store"
    (root / "data").mkdir(parents=True)
    shutil.copytree(PROJECT / "schemas", root / "schemas")
    for i, uuid in enumerate(RECORDS):
        place_record(root, record_of(f"acme/model-{i}", 5.0 + i), record_uuid=uuid)
    return root


def _event_step() -> st.SearchStrategy:
    return st.tuples(
        st.sampled_from(ACTION_NAMES),
        st.sampled_from(RECORDS),
        st.sampled_from(RECORDS),
        st.sampled_from(["upheld", "retracted", "corrected"]),
        st.booleans(),
    )


def _sequence(steps: list[tuple]) -> list[dict]:
    e = Events()
    for action, record, other, outcome, with_act in steps:
        if action == "supersede":
            e.add(action, record, replacement=other)
        elif action == "duplicate":
            e.add(action, record, of=other)
        elif action == "resolve":
            e.add(action, record, outcome=outcome, **({"replacement": other} if outcome == "corrected" else {}))
            if with_act and outcome == "retracted":
                e.add("retract", record)
            elif with_act and outcome == "corrected":
                e.add("supersede", record, replacement=other)
        else:
            e.add(action, record)
    return e.events


def _site_status(page: str) -> tuple[str, str]:
    status = re.search(r"<li><strong>Status:</strong> <strong>([^<]+)</strong></li>", page)
    lifecycle = re.search(r"<li><strong>Lifecycle:</strong> (\w+)", page)
    assert status and lifecycle, page[:400]
    return status.group(1), lifecycle.group(1)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_event_step(), min_size=1, max_size=12))
def test_random_sequences_agree_in_status_catalogue_and_site(plain_store: Path, steps: list[tuple]) -> None:
    from eee.catalog.table import build
    from eee.commands.status import listing
    from eee.governance.events import write
    from eee.rules.ledger import read_ledger
    from eee.site.cataloguepages import record_page
    from eee.site.context import SiteContext
    from eee.store.schemas import Registry
    from fuzzing import machine_problems

    events = _sequence(steps)
    assert machine_problems(events, RECORDS) == []
    folder = plain_store / "governance" / "events"
    shutil.rmtree(folder, ignore_errors=True)
    for event in events:
        write(plain_store, event)
    ledger = read_ledger(plain_store)
    listed = {r["record"]: r for r in listing(plain_store)["records"]}
    table, skipped = build(plain_store)
    assert skipped == []
    rows: dict[str, list[dict]] = {}
    for row in table.to_pylist():
        rows.setdefault(row["record_uuid"], []).append(row)
    ctx = SiteContext(plain_store, Registry.load(plain_store / "schemas"), None, record_pages=set(RECORDS))
    for uuid in RECORDS:
        state = ledger.state(uuid)
        expected = (state.status, state.lifecycle, ledger.stands_on(uuid))
        first = rows[uuid][0]
        assert (listed[uuid]["status"], listed[uuid]["lifecycle"], listed[uuid]["stands_on"]) == expected
        assert all((r["status"], r["lifecycle"], r["stands_on"]) == expected for r in rows[uuid])
        assert first["is_duplicate"] == (state.lifecycle == "duplicate")
        page = record_page(ctx, uuid, rows[uuid], state, highlight=False).content
        assert _site_status(page) == expected[:2]
        if state.lifecycle == "duplicate":
            assert "which stands" in page if expected[2] == state.duplicate_of else "no longer stands" in page


# --- the tools, the events hook and the audit implement the same table -------------------------


def eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


@pytest.mark.slow
def test_tools_hook_and_audit_refuse_what_the_table_refuses(tmp_path: Path) -> None:
    from eee.governance.events import write

    repo = make_store(tmp_path)
    for i, uuid in enumerate((X, S)):
        place_record(repo, record_of(f"acme/model-{i}", 5.0 + i), record_uuid=uuid)
    git(repo, "add", "-A")
    assert commit(repo, "two records").returncode == 0
    assert eee(repo, "mark-duplicate", S, "--of", X, "--reason", "uploaded twice", "--commit").returncode == 0
    # the tool refuses to retract X: S, its duplicate, stands on it
    refused = eee(repo, "retract", X, "--reason", "faulty source", "--commit")
    assert refused.returncode == 1 and f"records marked duplicates stand on {X} ({S})" in refused.stderr
    # the same retraction written by hand: the events hook refuses it
    now = dt.datetime.now(dt.UTC)
    path = write(
        repo, make_event("retract", X, "by hand", {"name": "Test Contributor", "email": "c@example.org"}, now=now)
    )
    git(repo, "add", "-A")
    hooked = commit(repo, "a retraction by hand")
    assert hooked.returncode == 1 and "stand on" in hooked.stdout + hooked.stderr
    # past the hook: the audit reports it, and every reader leaves X standing
    assert commit(repo, "a retraction by hand", "--no-verify").returncode == 0
    audit = json.loads(eee(repo, "audit", "--format", "json").stdout)
    (finding,) = [f for f in audit["findings"] if f["check"] == "ledger"]
    assert finding["file"].endswith(path.relative_to(repo).as_posix()) and "stand on" in finding["message"]
    status = json.loads(eee(repo, "status", X, "--format", "json").stdout)
    assert status["lifecycle"] == "active" and status["duplicates"] == [S]
    # in the right order it goes: the duplicate first, then the record it repeats
    assert eee(repo, "retract", S, "--reason", "faulty source", "--commit").returncode == 0
    assert eee(repo, "retract", X, "--reason", "faulty source", "--commit").returncode == 0
    assert json.loads(eee(repo, "status", S, "--format", "json").stdout)["lifecycle"] == "retracted"
