"""The status fold: the ledger's rules applied to the events in the order they entered history.

:func:`fold` (and :func:`read_ledger`, the fold of a store's events) is the one status
function: every reader (validator, audit, catalogue, site, tools) gets a record's status from
it, building each record's state (:class:`eee.governance.status.Ledger`).

- **Time** (:func:`time_problem`): an event may not declare a time before its record's
  previous event, nor one more than a day from its commit's time (now, for an event about
  to be committed).
- **Legality** (:func:`check_event`): an event must name a record of the store and be legal
  in that record's state (the state machine of :mod:`eee.governance.lifecycle`): no
  retracting twice, no supersession cycle or retracted replacement, a resolution that
  resolves something (with its retraction or supersession in the same commit:
  :func:`companion_problem`), no duplicate cycle; a flag names a rule a flag may accept, a
  JSON path a finding writes and the record's own path, and a new one the bytes it accepts.

The fold reads no tree and reports no file: the ledger's file rules and the report of what
it refuses are :mod:`eee.rules.ledger`'s. Kept apart from them so that the rules that need a
record's status (:mod:`eee.rules.duplicates`) import the fold without the ledger's rules,
which re-check flagged records through every rule (an import cycle before).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from eee.governance import BY_NAME, MAX_CLOCK_SKEW_SECONDS
from eee.governance.events import EventFileError, load_all
from eee.governance.history import Entered
from eee.governance.history import entered as history_of
from eee.governance.lifecycle import CONDITIONS, OUTCOME_ACTS, step
from eee.governance.status import Ledger, RecordState, order_key
from eee.reporting.shown import command
from eee.store.paths import RECORD_SUFFIX, tree_path_problem

Event = dict[str, Any]


def fold(
    events: Iterable[Event],
    exists: Callable[[str], bool] | None = None,
    entered: dict[str, Entered] | None = None,
    now: float | None = None,
) -> Ledger:
    """Every record's state after all ``events`` (illegal ones reported, not applied).

    The one status function: every reader (validator, audit, catalogue, site, tools) gets a
    record's status from it. ``entered``: event file name -> where it entered history
    (:func:`eee.governance.history.entered`);
    events not in it are uncommitted and come last, by file name. ``now`` (seconds since
    the epoch): the time uncommitted events are checked against (the hooks pass it; left
    out, only committed events' times are checked)."""
    ledger = Ledger()
    ledger.entered = dict(entered or {})
    ordered = sorted(events, key=lambda e: order_key(e, ledger.entered))
    last_time: dict[str, float] = {}

    def commit_of(event: Event) -> str | None:
        return ledger.entry(event).commit

    for i, event in enumerate(ordered):
        try:
            entry = ledger.entry(event)
            uuid = event.get("record")
            problem = time_problem(
                event,
                last_time.get(uuid) if isinstance(uuid, str) else None,
                entry.time if entry.commit is not None else now,
                committed=entry.commit is not None,
            )
            if problem:
                raise IllegalEvent(*problem)
            unbound = binding_problem(event, entry.commit is not None, now)
            if unbound:
                raise IllegalEvent(*unbound)
            if event.get("action") == "resolve":
                missing = companion_problem(ordered, i, commit_of)
                if missing:
                    raise IllegalEvent(missing, "write the resolution with its tool (tools/resolve --outcome ...)")
            check_event(ledger, event, exists)
            ledger.apply(event)
            stamp = parse_time(event.get("timestamp"))
            if stamp is not None:
                for who in (uuid, event.get("replacement"), event.get("of")):
                    if isinstance(who, str) and stamp > last_time.get(who, stamp - 1):
                        last_time[who] = stamp
        except IllegalEvent as exc:
            ledger.problems.append((event, exc))
    return ledger


def read_ledger(root: Path, exists: Callable[[str], bool] | None = None, now: float | None = None) -> Ledger:
    """The ledger of the store at ``root``: its readable events, folded in history order.

    Unreadable event files are left out here; reporting them is the validator's job."""
    events = [e for _, e in load_all(root) if not isinstance(e, EventFileError)]
    return fold(events, exists=exists, entered=history_of(root) if events else {}, now=now)


# --- time -------------------------------------------------------------------------------------


def parse_time(stamp: object) -> float | None:
    """Seconds since the epoch of an event's ``timestamp`` (None when it is not one)."""
    if not isinstance(stamp, str) or not stamp.endswith("Z"):
        return None
    try:
        return dt.datetime.fromisoformat(stamp[:-1] + "+00:00").timestamp()
    except ValueError:
        return None


def _when(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def time_problem(
    event: dict[str, Any], last: float | None, reference: float | None, committed: bool = True
) -> tuple[str, str] | None:
    """(message, hint) when ``event``'s declared time cannot be true, else None.

    ``last``: the latest declared time among the record's earlier events (in history
    order); ``reference``: the time of the commit that added the event (its author
    time), or now for an event about to be committed. An event may not declare a time
    before its record's previous event, nor one more than :data:`MAX_CLOCK_SKEW_SECONDS`
    (a day) away from ``reference``."""
    declared = parse_time(event.get("timestamp"))
    if declared is None:
        return None  # the schema reports a malformed timestamp
    if last is not None and declared < last:
        return (
            f"the event declares {event.get('timestamp')}, earlier than the record's previous event ({_when(last)})",
            "events are ordered by history, not by the time they declare; write a new event with the tools",
        )
    if reference is not None and abs(declared - reference) > MAX_CLOCK_SKEW_SECONDS:
        which = "its commit's time" if committed else "now"
        return (
            f"the event declares {event.get('timestamp')}, more than a day from {which} ({_when(reference)})",
            "an event is committed when it is written (tools/... --commit); write a new one with the tools",
        )
    return None


# --- legality: an event in the record's state --------------------------------------------------


class IllegalEvent(Exception):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def _who(event: Event) -> str:
    actor = event.get("actor") or {}
    return f"{event.get('timestamp', '?')} by {actor.get('name', '?')}"


def check_event(ledger: Ledger, event: Event, exists: Callable[[str], bool] | None = None) -> None:
    """Raise :class:`IllegalEvent` unless ``event`` is legal in ``ledger``'s current state
    (``exists``: whether a record uuid is in the store).

    Legality is the state machine's (:mod:`eee.governance.lifecycle`): the step of the
    action in the record's lifecycle and markers, then the conditions that step asks of the
    other records (a replacement or an original that stands, no cycle, no duplicate left
    standing on a retracted record); the rest is what an event must name (a record of the
    store, a flag's rule and bytes, the dispute or flag a resolution closes)."""
    action, uuid = event.get("action"), event.get("record")
    if not isinstance(uuid, str):
        raise IllegalEvent("the event names no record")
    if exists is not None and not exists(uuid):
        raise IllegalEvent(f"no record {uuid} in the store", "check the uuid (tools/status <uuid> shows a record)")
    if not isinstance(action, str) or action not in BY_NAME:  # the actions declared now (eee.governance.declare)
        raise IllegalEvent(f"unknown action {action!r}")
    st = ledger.state(uuid)
    outcome = None
    if action == "flag":
        problem = _flag_problem(uuid, event)
        if problem is not None:
            raise problem
    elif action == "resolve":
        _check_resolves(uuid, st, event)
        outcome = _acting_outcome(event, st)
    s = step(st.lifecycle, st.markers, action, outcome)
    if not s.allowed:
        raise IllegalEvent(_fill(s.why, st), _fill(s.hint, st) or None)
    for condition in s.unless:
        _CHECKS[condition](ledger, st, event, exists)


def _fill(text: str, st: RecordState) -> str:
    dispute = st.dispute
    return text.format(
        uuid=st.uuid,
        superseded_by=st.superseded_by,
        duplicate_of=st.duplicate_of,
        dispute=f"{_who(dispute)}, {dispute.get('reference')}" if dispute else "",
    )


def _acting_outcome(event: Event, st: RecordState) -> str | None:
    """The outcome of a resolution that acts (its retraction or supersession is checked as
    that act): every outcome from event schema 1.1.0 on. In 1.0.0 outcomes were words: a
    correction that names its replacement is checked as one, and a retraction only may not
    be of a retracted record."""
    outcome = event.get("outcome")
    if outcome not in OUTCOME_ACTS:
        return None
    if event.get("event_schema", "1.0.0") != "1.0.0":
        return outcome
    if outcome == "retracted" and st.lifecycle == "retracted":
        raise IllegalEvent(f"record {st.uuid} is already retracted", "resolve with the outcome upheld")
    return outcome if outcome == "corrected" and event.get("replacement") else None


def _check_resolves(uuid: str, st: RecordState, event: Event) -> None:
    open_ids = ([st.dispute.get("id")] if st.dispute else []) + [f.get("id") for f in st.open_flags]
    target = event.get("resolves")
    if open_ids and target is not None and target not in open_ids:
        raise IllegalEvent(
            f"event {target} is not an open dispute or flag of record {uuid}",
            "open ones: " + ", ".join(str(i) for i in open_ids),
        )


def _condition(name: str, **values: Any) -> IllegalEvent:
    message, hint = CONDITIONS[name]
    return IllegalEvent(message.format(**values), hint.format(**values) or None)


def _head_hint(ledger: Ledger, other: str) -> str:
    head = ledger.stands_on(other)
    return f" (the record that stands for it is {head})" if head is not None and head != other else ""


def _stood_on(ledger: Ledger, st: RecordState, event: Event, exists: Callable[[str], bool] | None) -> None:
    names = ledger.dependents(st.uuid)
    if names:
        raise _condition("stood-on", uuid=st.uuid, names=", ".join(names))


def _replacement(ledger: Ledger, st: RecordState, event: Event, exists: Callable[[str], bool] | None) -> str:
    new = event.get("replacement")
    if not isinstance(new, str):
        raise IllegalEvent("a supersede event needs a replacement")
    if new == st.uuid:
        raise IllegalEvent("a record cannot supersede itself")
    if exists is not None and not exists(new):
        raise IllegalEvent(f"the replacement {new} does not exist in the store", "add the corrected record first")
    return new


def _replacement_stands(ledger: Ledger, st: RecordState, event: Event, exists: Callable[[str], bool] | None) -> None:
    new = _replacement(ledger, st, event, exists)
    repl = ledger.state(new)
    if not repl.stands:
        raise _condition("replacement-stands", other=new, lifecycle=repl.lifecycle, head=_head_hint(ledger, new))


def _replacement_free(ledger: Ledger, st: RecordState, event: Event, exists: Callable[[str], bool] | None) -> None:
    new = _replacement(ledger, st, event, exists)
    before = ledger.state(new).preceded_by
    if before is not None:
        raise _condition("replacement-free", other=new, names=before)


def _no_cycle(ledger: Ledger, st: RecordState, event: Event, exists: Callable[[str], bool] | None) -> None:
    new = _replacement(ledger, st, event, exists)
    chain = ledger.successors(new)
    if st.uuid in chain:
        raise _condition("no-cycle", names=" -> ".join([st.uuid, *chain[: chain.index(st.uuid) + 1]]))


def _original(event: Event) -> str:
    of = event.get("of")
    if not isinstance(of, str):
        raise IllegalEvent("a duplicate event names the record that stands (`of`)")
    return of


def _not_itself(ledger: Ledger, st: RecordState, event: Event, exists: Callable[[str], bool] | None) -> None:
    if _original(event) == st.uuid:
        raise _condition("not-itself")


def _original_stands(ledger: Ledger, st: RecordState, event: Event, exists: Callable[[str], bool] | None) -> None:
    of = _original(event)
    if exists is not None and not exists(of):
        raise IllegalEvent(f"the record {of} (that stands) does not exist in the store", "check the uuid")
    original = ledger.state(of)
    if not original.stands:
        raise _condition("original-stands", other=of, lifecycle=original.lifecycle, head=_head_hint(ledger, of))


def _same_finding(ledger: Ledger, st: RecordState, event: Event, exists: Callable[[str], bool] | None) -> None:
    for f in st.open_flags:
        if (f.get("rule"), f.get("path")) == (event.get("rule"), event.get("path")):
            raise _condition(
                "same-finding", uuid=st.uuid, names=f"{event.get('rule')} at {event.get('path')} ({_who(f)})"
            )


# the conditions of the state machine (eee.governance.lifecycle.CONDITIONS), as checks
_CHECKS: dict[str, Callable[[Ledger, RecordState, Event, Callable[[str], bool] | None], None]] = {
    "stood-on": _stood_on,
    "replacement-stands": _replacement_stands,
    "replacement-free": _replacement_free,
    "no-cycle": _no_cycle,
    "not-itself": _not_itself,
    "original-stands": _original_stands,
    "same-finding": _same_finding,
}


def companion_problem(events: list[Event], i: int, key: Callable[[Event], Any]) -> str | None:
    """Why the resolve ``events[i]`` lacks the retraction or supersession its outcome says
    is in the same commit (None when it is there)."""
    event = events[i]
    outcome, uuid = event.get("outcome"), event.get("record")
    if event.get("event_schema", "1.0.0") == "1.0.0" or outcome not in ("retracted", "corrected"):
        return None  # 1.0.0 outcomes were words only; they are read as they were written
    commit = key(event)
    for later in events[i + 1 :]:
        if key(later) != commit:
            break
        if later.get("record") != uuid:
            continue
        if outcome == "retracted" and later.get("action") == "retract":
            return None
        if (
            outcome == "corrected"
            and later.get("action") == "supersede"
            and later.get("replacement") == event.get("replacement")
        ):
            return None
    if outcome == "retracted":
        return f"the outcome is retracted, but no retraction of {uuid} follows in the same commit"
    return f"the outcome is corrected, but no supersession of {uuid} by {event.get('replacement')} follows in the same commit"


# --- flags: a registered rule a flag may accept, bound to one record's bytes ---------------------


def _flag_problem(uuid: str, event: Event) -> IllegalEvent | None:
    """Why a flag event can never accept anything (None when it can): its rule is not a
    registered one a flag may accept, its JSON path is not one a finding writes, or the
    record path it names is not the record's."""
    from eee.rules.registry import BY_ID, unknown_text
    from eee.store.jsonpath import well_formed

    rule, path, record_path = event.get("rule"), event.get("path"), event.get("record_path")
    if isinstance(rule, str) and rule not in BY_ID:
        return IllegalEvent(f"the flag names {unknown_text(rule)}", "flag the [id] the finding shows")
    if isinstance(rule, str) and not BY_ID[rule].flaggable:
        return IllegalEvent(
            f"a flag never accepts a finding of rule {rule!r}: {BY_ID[rule].summary}",
            "JSON, schema, version, identity and layout errors are fixed, never flagged "
            f"(`{command('rules', rule)}` says how a finding of it is settled)",
        )
    if isinstance(path, str) and not well_formed(path):
        return IllegalEvent(
            f"the flag's JSON path {path!r} is not one a finding writes", "copy the JSON path from the finding"
        )
    if isinstance(record_path, str) and (
        record_path.rsplit("/", 1)[-1] != f"{uuid}{RECORD_SUFFIX}"
        or record_path.count("/") != 4
        or not record_path.startswith("data/")
        or tree_path_problem(record_path) is not None
    ):
        return IllegalEvent(
            f"the flag names record {uuid} at {record_path}, a path that is not that record's",
            f"write flags with `{command('flag')}`, which names the record's own path and bytes",
        )
    return None


def binding_problem(event: Event, committed: bool, now: float | None) -> tuple[str, str] | None:
    """(message, hint) for a flag about to be committed (``now`` given, not ``committed``)
    that names no record path and sha256 (a flag of 1.1.0 or earlier): flags written from
    event schema 1.2.0 on name the bytes they accept."""
    if event.get("action") != "flag" or committed or now is None:
        return None
    if isinstance(event.get("record_path"), str) and isinstance(event.get("sha256"), str):
        return None
    return (
        "a new flag names the record's path (record_path) and the sha256 of the bytes it accepts (event schema 1.2.0)",
        f"write flags with `{command('flag')}`, which names them",
    )
