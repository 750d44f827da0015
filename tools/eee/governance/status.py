"""The one status function: a fold over a record's events.

Every reader (validator, audit, catalogue, site, the tools) asks this module what a
record's status is. Events are applied in time order (timestamp, then id); an event that
is illegal in the record's state at that point is reported and ignored.

Status precedence: retracted > superseded > disputed > active.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from eee.governance.events import EventFileError, load_all

Event = dict[str, Any]


class IllegalEvent(Exception):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class RecordState:
    """What the ledger says about one record."""

    __slots__ = ("dispute", "history", "preceded_by", "retraction", "superseded_by", "supersession", "uuid")

    def __init__(self, uuid: str) -> None:
        self.uuid = uuid
        self.retraction: Event | None = None
        self.dispute: Event | None = None
        self.superseded_by: str | None = None
        self.supersession: Event | None = None
        self.preceded_by: str | None = None
        self.history: list[Event] = []

    @property
    def status(self) -> str:
        if self.retraction is not None:
            return "retracted"
        if self.superseded_by is not None:
            return "superseded"
        if self.dispute is not None:
            return "disputed"
        return "active"

    def to_dict(self) -> dict[str, Any]:
        return {
            "record": self.uuid,
            "status": self.status,
            "retracted": self.retraction is not None,
            "retraction_reason": self.retraction["reason"] if self.retraction else None,
            "superseded_by": self.superseded_by,
            "preceded_by": self.preceded_by,
            "disputed": self.dispute is not None,
            "dispute_reference": self.dispute.get("reference") if self.dispute else None,
            "history": list(self.history),
        }


def _who(event: Event) -> str:
    actor = event.get("actor") or {}
    return f"{event.get('timestamp', '?')} by {actor.get('name', '?')}"


def order_key(event: Event) -> tuple[str, str]:
    return (str(event.get("timestamp", "")), str(event.get("id", "")))


class Ledger:
    def __init__(self) -> None:
        self.states: dict[str, RecordState] = {}
        self.problems: list[tuple[Event, IllegalEvent]] = []

    def state(self, uuid: str) -> RecordState:
        found = self.states.get(uuid)
        return found if found is not None else RecordState(uuid)

    def _get(self, uuid: str) -> RecordState:
        if uuid not in self.states:
            self.states[uuid] = RecordState(uuid)
        return self.states[uuid]

    def chain(self, uuid: str) -> list[str]:
        """``uuid`` and the records that replaced it, in order."""
        out = [uuid]
        seen = {uuid}
        nxt = self.state(uuid).superseded_by
        while nxt and nxt not in seen:
            out.append(nxt)
            seen.add(nxt)
            nxt = self.state(nxt).superseded_by
        return out

    def check(self, event: Event, exists: Callable[[str], bool] | None = None) -> None:
        """Raise IllegalEvent unless ``event`` is legal in the current state."""
        action, uuid = event.get("action"), event.get("record")
        if not isinstance(uuid, str):
            raise IllegalEvent("the event names no record")
        if exists is not None and not exists(uuid):
            raise IllegalEvent(f"no record {uuid} in the store", "check the uuid (tools/status <uuid> shows a record)")
        st = self.state(uuid)
        if action == "retract":
            if st.retraction is not None:
                raise IllegalEvent(
                    f"record {uuid} is already retracted ({_who(st.retraction)}: {st.retraction.get('reason')})",
                    "a retraction stands until `tools/reinstate` undoes it",
                )
        elif action == "reinstate":
            if st.retraction is None:
                raise IllegalEvent(f"record {uuid} is not retracted; there is nothing to reinstate")
        elif action == "supersede":
            new = event.get("replacement")
            if st.retraction is not None:
                raise IllegalEvent(
                    f"record {uuid} is retracted; a retracted record is not superseded",
                    "reinstate it first if the retraction was an error",
                )
            if st.superseded_by is not None:
                raise IllegalEvent(
                    f"record {uuid} is already superseded by {st.superseded_by}",
                    f"supersede {st.superseded_by} instead",
                )
            if not isinstance(new, str):
                raise IllegalEvent("a supersede event needs a replacement")
            if new == uuid:
                raise IllegalEvent("a record cannot supersede itself")
            if exists is not None and not exists(new):
                raise IllegalEvent(
                    f"the replacement {new} does not exist in the store", "add the corrected record first"
                )
            repl = self.state(new)
            if repl.retraction is not None:
                raise IllegalEvent(f"the replacement {new} is itself retracted", "supersede with a record that stands")
            if repl.preceded_by is not None:
                raise IllegalEvent(f"the replacement {new} already replaces {repl.preceded_by}")
            chain = self.chain(new)
            if uuid in chain:
                path = " -> ".join([uuid, *chain[: chain.index(uuid) + 1]])
                raise IllegalEvent(f"superseding would make a cycle: {path}", "a replacement must be a new record")
        elif action == "dispute":
            if st.retraction is not None:
                raise IllegalEvent(f"record {uuid} is retracted; there is nothing left to dispute")
            if st.dispute is not None:
                raise IllegalEvent(
                    f"record {uuid} is already disputed ({_who(st.dispute)}, {st.dispute.get('reference')})",
                    "add to the open discussion, or resolve it first",
                )
        elif action == "resolve":
            if st.dispute is None:
                raise IllegalEvent(f"record {uuid} is not under dispute; there is nothing to resolve")
        else:
            raise IllegalEvent(f"unknown action {action!r}")

    def apply(self, event: Event, exists: Callable[[str], bool] | None = None) -> None:
        self.check(event, exists)
        uuid, action = event["record"], event["action"]
        st = self._get(uuid)
        st.history.append(event)
        if action == "retract":
            st.retraction = event
        elif action == "reinstate":
            st.retraction = None
        elif action == "supersede":
            new = event["replacement"]
            st.superseded_by = new
            st.supersession = event
            repl = self._get(new)
            repl.preceded_by = uuid
            repl.history.append(event)
        elif action == "dispute":
            st.dispute = event
        elif action == "resolve":
            st.dispute = None


def fold(events: Iterable[Event], exists: Callable[[str], bool] | None = None) -> Ledger:
    """Every record's state after all ``events`` (illegal ones reported, not applied)."""
    ledger = Ledger()
    for event in sorted(events, key=order_key):
        try:
            ledger.apply(event, exists)
        except IllegalEvent as exc:
            ledger.problems.append((event, exc))
    return ledger


def read_ledger(root: Path) -> Ledger:
    """The ledger of the store at ``root``: its readable events, folded.

    Unreadable event files are left out here; reporting them is the validator's job.
    """
    return fold([e for _, e in load_all(root) if not isinstance(e, EventFileError)])
