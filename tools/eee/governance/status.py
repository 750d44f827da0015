"""What the ledger says about each record: the state the one status fold builds.

Every reader (validator, audit, catalogue, site, the tools) gets a record's status from
the fold, :func:`eee.rules.ledger.fold` (and :func:`eee.rules.ledger.read_ledger` for a
store): the ledger's rules applied to its events in the order they entered history (the
commit that added each, then file name; uncommitted events last: see
:mod:`eee.governance.history`), never in the order of the times they declare. An event
that is illegal where it stands is reported and not applied. This module holds what the
fold builds: a :class:`Ledger` of :class:`RecordState` and the effects of a legal event
(:meth:`Ledger.apply`).

A record's status is a lifecycle value (active, superseded, retracted, duplicate) plus
markers (disputed, flagged), moved only as the ledger's state machine says
(:mod:`eee.governance.lifecycle`, declared once: :meth:`Ledger.apply` takes each event's
resulting lifecycle from it). The one word readers show (``status``): the lifecycle when
the record does not stand, else its first marker, else active. Only an active record
stands; a superseded record or a duplicate stands on the record its chain leads to
(:meth:`Ledger.stands_on`: a duplicate's original, moved along when that one is
superseded or marked a duplicate itself).

The API other modules use:

- ``Ledger.state(uuid)`` -> :class:`RecordState` (``lifecycle``, ``markers``, ``status``, ``retraction``,
  ``superseded_by``, ``preceded_by``, ``dispute``, ``open_flags``, ``duplicate_of``,
  ``duplicates``, ``resolution``, ``history``);
- ``Ledger.relations(uuid)`` -> DataCite relations, both ways;
- ``Ledger.stands_on(uuid)`` -> the record that stands for it, ``Ledger.dependents(uuid)``
  -> the duplicates that stand on it;
- ``Ledger.record_fields(uuid)`` -> the catalogue's governance columns (:data:`FIELDS`);
- what a record's flags accept: :func:`eee.rules.flags.flags_of` (ledger, uuid).
"""

from __future__ import annotations

import json
from typing import Any

from eee.governance import (
    EVENT_SUFFIX,
    IS_IDENTICAL_TO,
    IS_NEW_VERSION_OF,
    IS_PREVIOUS_VERSION_OF,
)
from eee.governance.history import UNCOMMITTED, Entered
from eee.governance.history import order_key as _history_key
from eee.governance.lifecycle import MACHINE, STANDS, markers_of, status_of

Event = dict[str, Any]


class RecordState:
    """What the ledger says about one record."""

    __slots__ = (
        "dispute",
        "duplicate_event",
        "duplicate_of",
        "duplicates",
        "flags",
        "history",
        "lifecycle",
        "open_flags",
        "preceded_by",
        "resolution",
        "retraction",
        "superseded_by",
        "supersession",
        "uuid",
    )

    def __init__(self, uuid: str) -> None:
        self.uuid = uuid
        self.lifecycle = STANDS  # eee.governance.lifecycle.LIFECYCLES: moved by the state machine only
        self.retraction: Event | None = None
        self.dispute: Event | None = None
        self.superseded_by: str | None = None
        self.supersession: Event | None = None
        self.preceded_by: str | None = None
        self.flags: list[Event] = []  # every flag ever applied
        self.open_flags: list[Event] = []  # flags no resolution has closed
        self.duplicate_of: str | None = None
        self.duplicate_event: Event | None = None
        self.duplicates: list[str] = []  # records marked as duplicates of this one
        self.resolution: Event | None = None  # the last resolution
        self.history: list[Event] = []

    @property
    def markers(self) -> tuple[str, ...]:
        """disputed, flagged: what is open on the record (:data:`eee.governance.lifecycle.MARKERS`)."""
        return markers_of(self.dispute is not None, bool(self.open_flags))

    @property
    def stands(self) -> bool:
        """Whether the record stands (is active): it counts."""
        return self.lifecycle == STANDS

    @property
    def status(self) -> str:
        """The one word readers show (:func:`eee.governance.lifecycle.status_of`)."""
        return status_of(self.lifecycle, self.markers)

    def to_dict(self) -> dict[str, Any]:
        res = self.resolution
        return {
            "record": self.uuid,
            "status": self.status,
            "lifecycle": self.lifecycle,
            "markers": list(self.markers),
            "retracted": self.retraction is not None,
            "retraction_reason": self.retraction["reason"] if self.retraction else None,
            "superseded_by": self.superseded_by,
            "preceded_by": self.preceded_by,
            "disputed": self.dispute is not None,
            "dispute_reference": self.dispute.get("reference") if self.dispute else None,
            "flagged": bool(self.open_flags),
            "flags": [
                {
                    "rule": f.get("rule"),
                    "path": f.get("path"),
                    "record_path": f.get("record_path"),
                    "sha256": f.get("sha256"),
                    "reason": f.get("reason"),
                    "event": f.get("id"),
                }
                for f in self.open_flags
            ],
            "duplicate_of": self.duplicate_of,
            "duplicates": list(self.duplicates),
            "last_resolution": None
            if res is None
            else {
                "outcome": res.get("outcome"),
                "reason": res.get("reason"),
                "event": res.get("id"),
                "timestamp": res.get("timestamp"),
                "replacement": res.get("replacement"),
            },
            "history": list(self.history),
        }


def event_name(event: Event) -> str:
    """The file name an event lives in (its id + .yaml)."""
    return f"{event.get('id')}{EVENT_SUFFIX}"


def order_key(event: Event, entered: dict[str, Entered] | None = None) -> tuple[int, int, str]:
    """Where ``event`` stands in the ledger: by history (``entered``), then file name."""
    name = event_name(event)
    return _history_key(name, entered.get(name) if entered else None)


# --- catalogue fields ------------------------------------------------------------------------

# (column, arrow type, description): the governance columns every table of records carries
FIELDS: list[tuple[str, str, str]] = [
    (
        "status",
        "string",
        "retracted, superseded, duplicate, disputed, flagged or active: the lifecycle when the record does not "
        "stand, else its first marker (the governance fold)",
    ),
    (
        "lifecycle",
        "string",
        "active, superseded, retracted or duplicate (the ledger's state machine); active rows are the ones that "
        "count: WHERE lifecycle = 'active'",
    ),
    (
        "stands_on",
        "string",
        "uuid of the record that stands for this one: itself when active, the head of its chain when superseded "
        "or a duplicate, null when the evaluation was withdrawn",
    ),
    ("status_reason", "string", "reason of the retraction (or of the supersession, or of the duplicate mark)"),
    ("superseded_by", "string", "uuid of the record that replaces this one (IsPreviousVersionOf)"),
    ("preceded_by", "string", "uuid of the record this one replaces (IsNewVersionOf)"),
    ("dispute_reference", "string", "URL of the open dispute"),
    ("flags", "string", "JSON list of the open flags: rule, JSON path and reason (null when none)"),
    ("duplicate_of", "string", "uuid of the record this one duplicates (IsIdenticalTo; that one stands)"),
    ("is_duplicate", "bool", "whether the record is marked a duplicate of another (leave it out to count once)"),
    ("last_resolution", "string", "outcome of the last resolution (upheld, retracted, corrected)"),
    (
        "relations",
        "string",
        'JSON list of DataCite relations to other records, both ways: [{"relation": "IsNewVersionOf", "record": uuid}, ...]',
    ),
    (
        "unverified_events",
        "int64",
        "how many of the record's events no signature of the store's roles verifies: their actor is only the "
        "commit's author (every event, in a store without roles)",
    ),
]


class Ledger:
    def __init__(self) -> None:
        self.states: dict[str, RecordState] = {}
        self.problems: list[tuple[Event, Exception]] = []  # eee.rules.ledger.IllegalEvent: what the fold refused
        self.entered: dict[str, Entered] = {}  # event file name -> where it entered history
        # commit -> the principal whose signature the roles verify on it (None: unverified), for
        # the readers that show it; None until one asks (eee.governance.signatures.commit_signers)
        self.signed: dict[str, str | None] | None = None

    def state(self, uuid: str) -> RecordState:
        found = self.states.get(uuid)
        return found if found is not None else RecordState(uuid)

    def _get(self, uuid: str) -> RecordState:
        if uuid not in self.states:
            self.states[uuid] = RecordState(uuid)
        return self.states[uuid]

    def entry(self, event: Event) -> Entered:
        return self.entered.get(event_name(event), UNCOMMITTED)

    def chain(self, uuid: str) -> list[str]:
        """The whole version chain ``uuid`` is in: its predecessors, itself, its replacements."""
        before: list[str] = []
        seen = {uuid}
        prev = self.state(uuid).preceded_by
        while prev and prev not in seen:
            before.append(prev)
            seen.add(prev)
            prev = self.state(prev).preceded_by
        out = [*reversed(before), uuid]
        nxt = self.state(uuid).superseded_by
        while nxt and nxt not in seen:
            out.append(nxt)
            seen.add(nxt)
            nxt = self.state(nxt).superseded_by
        return out

    def stands_on(self, uuid: str) -> str | None:
        """The record that stands for ``uuid``: itself when it stands; for a superseded record
        or a duplicate, the record its chain leads to (replacements, and the record a
        duplicate repeats: duplicates move along), when that one stands; None when the chain
        ends withdrawn (retracted) or the record is retracted itself."""
        seen = {uuid}
        st = self.state(uuid)
        while st.lifecycle in ("superseded", "duplicate"):
            nxt = st.superseded_by if st.lifecycle == "superseded" else st.duplicate_of
            if nxt is None or nxt in seen:
                return None
            seen.add(nxt)
            st = self.state(nxt)
        return st.uuid if st.stands else None

    def dependents(self, uuid: str) -> list[str]:
        """The records marked duplicates whose chain passes through ``uuid`` (they stand on
        it, or on what it leads to): its own duplicates, those of the records it replaced and
        theirs, and so on."""
        out: list[str] = []
        seen = {uuid}
        frontier = [uuid]
        while frontier:
            st = self.state(frontier.pop())
            nxt = [d for d in st.duplicates if self.state(d).lifecycle == "duplicate"]
            out += [d for d in nxt if d not in seen]
            if st.preceded_by is not None and self.state(st.preceded_by).lifecycle == "superseded":
                nxt.append(st.preceded_by)
            for other in nxt:
                if other not in seen:
                    seen.add(other)
                    frontier.append(other)
        return sorted(out)

    def successors(self, uuid: str) -> list[str]:
        """``uuid`` and the records that replaced it, in order."""
        chain = self.chain(uuid)
        return chain[chain.index(uuid) :]

    def relations(self, uuid: str) -> list[dict[str, Any]]:
        """DataCite relations of ``uuid`` to other records, from the ledger, both ways."""
        st = self.state(uuid)
        out: list[dict[str, Any]] = []
        if st.preceded_by:
            out.append({"relation": IS_NEW_VERSION_OF, "record": st.preceded_by})
        if st.superseded_by:
            out.append({"relation": IS_PREVIOUS_VERSION_OF, "record": st.superseded_by})
        if st.duplicate_of:
            out.append({"relation": IS_IDENTICAL_TO, "record": st.duplicate_of, "role": "duplicate"})
        for other in st.duplicates:
            out.append({"relation": IS_IDENTICAL_TO, "record": other, "role": "original"})
        return out

    def linked(self, a: str, b: str) -> bool:
        """Whether two records are linked by supersession (in one chain) or a duplicate mark."""
        if b in self.chain(a):
            return True
        sa, sb = self.state(a), self.state(b)
        return (
            sa.duplicate_of == b
            or sb.duplicate_of == a
            or (sa.duplicate_of is not None and sa.duplicate_of == sb.duplicate_of)
        )

    def record_fields(self, uuid: str, derived: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The catalogue's governance columns (:data:`FIELDS`) for ``uuid``.

        ``derived``: relations the record itself states (IsDerivedFrom, see
        :func:`eee.governance.relations.derived_from`), added to the ledger's."""
        st = self.state(uuid)
        reason = None
        if st.retraction is not None:
            reason = st.retraction.get("reason")
        elif st.supersession is not None:
            reason = st.supersession.get("reason")
        elif st.duplicate_event is not None:
            reason = st.duplicate_event.get("reason")
        relations = self.relations(uuid) + list(derived or [])
        flags = [{"rule": f.get("rule"), "path": f.get("path"), "reason": f.get("reason")} for f in st.open_flags]
        head = self.stands_on(uuid)
        return {
            "status": st.status,
            "lifecycle": st.lifecycle,
            "stands_on": head,
            "status_reason": reason,
            "superseded_by": st.superseded_by,
            "preceded_by": st.preceded_by,
            "dispute_reference": st.dispute.get("reference") if st.dispute else None,
            "flags": json.dumps(flags, ensure_ascii=False) if flags else None,
            "duplicate_of": st.duplicate_of,
            "is_duplicate": st.lifecycle == "duplicate",
            "last_resolution": st.resolution.get("outcome") if st.resolution else None,
            "relations": json.dumps(relations, ensure_ascii=False) if relations else None,
            "unverified_events": sum(1 for e in st.history if not self.signer(e)),
        }

    def signer(self, event: Event) -> str | None:
        """The principal that signed the commit adding ``event`` (None: unverified, uncommitted,
        or not asked: :attr:`signed`)."""
        commit = self.entry(event).commit
        return (self.signed or {}).get(commit) if commit else None

    def commits(self) -> list[str]:
        """The commits that added the events of the ledger."""
        return sorted({e.commit for e in self.entered.values() if e.commit})

    # --- effects ----------------------------------------------------------------------------

    def apply(self, event: Event) -> None:
        """The effects of ``event`` on the records it names. Whether it is legal is the
        ledger's rules' to say, first (:func:`eee.rules.ledger.check_event`, which
        :func:`eee.rules.ledger.fold` and the tools ask before they apply an event)."""
        uuid, action = event["record"], event["action"]
        st = self._get(uuid)
        st.history.append(event)
        step = MACHINE.get((st.lifecycle, action))
        if step is not None and step.allowed and step.becomes is not None:
            st.lifecycle = step.becomes  # the state machine says what the record becomes
        if action == "retract":
            st.retraction = event
            if st.duplicate_of is not None:  # a retracted duplicate's mark ends
                original = self._get(st.duplicate_of)
                original.duplicates = [d for d in original.duplicates if d != uuid]
                st.duplicate_of = st.duplicate_event = None
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
        elif action == "flag":
            st.flags.append(event)
            st.open_flags.append(event)
        elif action == "resolve":
            target = event.get("resolves")
            if target is None or (st.dispute is not None and st.dispute.get("id") == target):
                st.dispute = None
            st.open_flags = [] if target is None else [f for f in st.open_flags if f.get("id") != target]
            st.resolution = event
        elif action == "duplicate":
            of = event["of"]
            st.duplicate_of = of
            st.duplicate_event = event
            other = self._get(of)
            other.duplicates.append(uuid)
            other.history.append(event)
