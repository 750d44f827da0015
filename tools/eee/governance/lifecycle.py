"""The ledger's state machine, declared once: for every status and every action, whether the
action is allowed, why not, and the status that results.

A record's status is a **lifecycle** value (:data:`LIFECYCLES`: active, superseded,
retracted, duplicate) plus **markers** (:data:`MARKERS`: disputed, flagged). Only an
active record *stands*: it counts in the statistics, the catalogue's active rows, the
comparison and the IRT fit. :data:`MACHINE` says, for each (lifecycle, action), what the
action does; markers matter to the actions that set or close them (:data:`MARKER_STEPS`);
:data:`CONDITIONS` are what an allowed step still asks of the other records. The rest of
the ledger implements this table and nothing else:

- the fold (:func:`eee.rules.ledger.fold`, through :func:`eee.rules.ledger.check_event`)
  refuses an event the table refuses, wherever it stands in history, and applies the
  lifecycle the table gives (:meth:`eee.governance.status.Ledger.apply`);
- the events hook and the audit report what the fold refuses (rule ``ledger``);
- the tools (``eee retract``, ...) ask the same check before they write an event;
- the governance card shows the table :func:`card_table` renders (a test holds the two
  the same).

Duplicates never point at a record that does not stand. A duplicate stands on the record
it repeats; when that record is superseded or is itself marked a duplicate, its duplicates
**move along** (they stand on the replacement, or on what it repeats:
:meth:`eee.governance.status.Ledger.stands_on`); retracting a record that duplicates stand
on is **refused** (they repeat it, so they are as faulty: retract them first); a
replacement and the record a duplicate repeats must stand when they are named.

Plain data and small functions: the hooks import this module.
"""

from __future__ import annotations

from itertools import product
from typing import NamedTuple

LIFECYCLES = ("active", "superseded", "retracted", "duplicate")
MARKERS = ("disputed", "flagged")
STANDS = "active"  # the one lifecycle value that stands
# the statuses readers show, in precedence order: the lifecycle when the record does not
# stand, else its first marker, else active
STATUSES = ("retracted", "superseded", "duplicate", "disputed", "flagged", "active")
OUTCOME_ACTS = {"retracted": "retract", "corrected": "supersede"}  # a resolution's outcome acts


class Step(NamedTuple):
    """What one action does to a record of one lifecycle value."""

    allowed: bool
    becomes: str | None = None  # the lifecycle after it (None: unchanged)
    why: str = ""  # refused: the reason ({uuid}, {superseded_by}, {duplicate_of} filled in); allowed: a note
    hint: str = ""
    unless: tuple[str, ...] = ()  # CONDITIONS that refuse it even so
    moves: bool = False  # the record's duplicates move along (they stand on what it now stands on)


def _refused(why: str, hint: str = "") -> Step:
    return Step(False, None, why, hint)


# (lifecycle, action) -> Step. Actions are eee.governance.ACTIONS' names; resolve is
# MARKER_STEPS' (its outcomes act as retract or supersede).
MACHINE: dict[tuple[str, str], Step] = {
    # --- retract -------------------------------------------------------------------------------
    ("active", "retract"): Step(
        True, "retracted", "markers stay (a dispute or flag can still be resolved)", unless=("stood-on",)
    ),
    ("superseded", "retract"): _refused(
        "record {uuid} is superseded by {superseded_by}: it no longer counts, and a superseded record is not retracted",
        "retract the record that replaced it if the evaluation itself is faulty",
    ),
    ("retracted", "retract"): _refused(
        "record {uuid} is already retracted", "a retraction stands until `tools/reinstate` undoes it"
    ),
    ("duplicate", "retract"): Step(
        True, "retracted", "its duplicate mark ends (the event stays in its history)", unless=("stood-on",)
    ),
    # --- supersede (the record replaced; the replacement is CONDITIONS' "replacement-*") -------
    ("active", "supersede"): Step(
        True,
        "superseded",
        "the replacement stands in its place; the record's duplicates move along to it",
        unless=("replacement-stands", "replacement-free", "no-cycle"),
        moves=True,
    ),
    ("superseded", "supersede"): _refused(
        "record {uuid} is already superseded by {superseded_by}", "supersede {superseded_by} instead"
    ),
    ("retracted", "supersede"): _refused(
        "record {uuid} is retracted; a retracted record is not superseded",
        "reinstate it first if the retraction was an error",
    ),
    ("duplicate", "supersede"): _refused(
        "record {uuid} is a duplicate of {duplicate_of}: it does not stand, and a duplicate is not superseded",
        "supersede {duplicate_of}, the record that stands (its duplicates move along)",
    ),
    # --- dispute, flag (markers: MARKER_STEPS) -------------------------------------------------
    ("active", "dispute"): Step(True, None, "marked disputed"),
    ("superseded", "dispute"): Step(True, None, "marked disputed"),
    ("retracted", "dispute"): _refused("record {uuid} is retracted; there is nothing left to dispute"),
    ("duplicate", "dispute"): Step(True, None, "marked disputed"),
    ("active", "flag"): Step(True, None, "marked flagged", unless=("same-finding",)),
    ("superseded", "flag"): Step(True, None, "marked flagged", unless=("same-finding",)),
    ("retracted", "flag"): _refused("record {uuid} is retracted; there is nothing left to flag"),
    ("duplicate", "flag"): Step(True, None, "marked flagged", unless=("same-finding",)),
    # --- reinstate -----------------------------------------------------------------------------
    ("active", "reinstate"): _refused("record {uuid} is not retracted; there is nothing to reinstate"),
    ("superseded", "reinstate"): _refused("record {uuid} is not retracted; there is nothing to reinstate"),
    ("retracted", "reinstate"): Step(True, "active", "markers stay"),
    ("duplicate", "reinstate"): _refused("record {uuid} is not retracted; there is nothing to reinstate"),
    # --- mark a duplicate (the record marked; the one it repeats is CONDITIONS' "original-*") --
    ("active", "duplicate"): Step(
        True,
        "duplicate",
        "it stands on the record it repeats; its own duplicates move along to that one",
        unless=("not-itself", "original-stands"),
        moves=True,
    ),
    ("superseded", "duplicate"): _refused(
        "record {uuid} is superseded by {superseded_by}: it no longer counts, and is not marked a duplicate",
        "mark {superseded_by}, the record that stands, if it repeats another",
    ),
    ("retracted", "duplicate"): _refused(
        "record {uuid} is retracted: it no longer counts, and is not marked a duplicate"
    ),
    ("duplicate", "duplicate"): _refused("record {uuid} is already marked a duplicate of {duplicate_of}"),
}

# resolve and the marker actions: what each needs of the markers, and does to them
MARKER_STEPS: dict[str, tuple[str, str]] = {
    # action: (needs, does)
    "dispute": ("not disputed", "sets disputed"),
    "flag": ("-", "sets flagged (one flag per rule and JSON path)"),
    "resolve": ("disputed or flagged", "clears the dispute or flag it resolves (all of them when it names none)"),
}

# what an allowed step still asks: name -> (refusal, hint); {uuid}, {other}, {lifecycle},
# {head}, {names} filled in by the fold
CONDITIONS: dict[str, tuple[str, str]] = {
    "stood-on": (
        "records marked duplicates stand on {uuid} ({names}): they repeat it and would point at a record that does "
        "not stand",
        "retract each of them first (they repeat it, so they are as faulty), then {uuid}",
    ),
    "replacement-stands": (
        "the replacement {other} is {lifecycle}: it does not stand",
        "supersede with a record that stands{head}",
    ),
    "replacement-free": ("the replacement {other} already replaces {names}", "a replacement replaces one record"),
    "no-cycle": ("superseding would make a cycle: {names}", "a replacement must be a new record"),
    "original-stands": (
        "the record {other} is {lifecycle}: it does not stand",
        "name a record that stands{head}",
    ),
    "not-itself": ("a record cannot duplicate itself", ""),
    "same-finding": ("record {uuid} is already flagged for {names}", "resolve the open flag first"),
}

# the other record an action names: its field in the event and the condition that it stands
OTHER: dict[str, tuple[str, str]] = {
    "supersede": ("replacement", "replacement-stands"),
    "duplicate": ("of", "original-stands"),
}


def markers_of(disputed: bool, flagged: bool) -> tuple[str, ...]:
    """The markers of a record, in :data:`MARKERS` order."""
    return tuple(m for m, on in zip(MARKERS, (disputed, flagged), strict=True) if on)


def status_of(lifecycle: str, markers: tuple[str, ...]) -> str:
    """The one word readers show: the lifecycle when the record does not stand, else its
    first marker, else active (:data:`STATUSES`)."""
    if lifecycle != STANDS:
        return lifecycle
    return next((m for m in MARKERS if m in markers), STANDS)


def step(lifecycle: str, markers: tuple[str, ...], action: str, outcome: str | None = None) -> Step:
    """What ``action`` does to a record of ``lifecycle`` with ``markers`` (a resolution with
    an ``outcome`` that acts: as that act, once the markers are closed)."""
    if action == "resolve":
        if not markers:
            return _refused("record {uuid} has no open dispute or flag; there is nothing to resolve")
        act = OUTCOME_ACTS.get(outcome or "")
        if act is None:
            return Step(True, None, "closes the dispute or flag (upheld: the record stays as it is)")
        acted = MACHINE[(lifecycle, act)]
        if not acted.allowed:
            return acted
        return acted._replace(why=f"closes the dispute or flag and {act}s it ({acted.why})", becomes=None)
    if action == "dispute" and "disputed" in markers:
        base = MACHINE[(lifecycle, action)]
        if base.allowed:
            return _refused(
                "record {uuid} is already disputed ({dispute})", "add to the open discussion, or resolve it first"
            )
        return base
    declared = MACHINE.get((lifecycle, action))
    if declared is None:  # an action declared without its steps (eee.governance.declare) takes none
        return _refused(
            f"action {action} declares no step of the state machine for a record that is {lifecycle}",
            "declare its steps in eee.governance.lifecycle.MACHINE before an event of it is written",
        )
    return declared


def states() -> list[tuple[str, tuple[str, ...]]]:
    """Every (lifecycle, markers) state, lifecycles in order, then without and with each marker."""
    combos = [markers_of(d, f) for d, f in product((False, True), repeat=2)]
    combos.sort(key=len)
    return [(lc, m) for lc in LIFECYCLES for m in combos]


def state_text(lifecycle: str, markers: tuple[str, ...]) -> str:
    return " + ".join((lifecycle, *markers))


def _cell(lifecycle: str, markers: tuple[str, ...], action: str, outcome: str | None = None) -> str:
    s = step(lifecycle, markers, action, outcome)
    if not s.allowed:
        return "refused"
    act = OUTCOME_ACTS.get(outcome or "") if action == "resolve" else None
    acted = MACHINE[(lifecycle, act)] if act else s
    after = set(markers)
    if action in ("dispute", "flag"):
        after.add("disputed" if action == "dispute" else "flagged")
    elif action == "resolve":
        after = set()
    text = state_text(acted.becomes or lifecycle, tuple(m for m in MARKERS if m in after))
    notes = sorted({_NOTE_KEYS[c] for c in acted.unless}) + (["m"] if acted.moves else [])
    notes += ["c"] if action == "resolve" else []
    return "→ " + text + "".join(f" [{n}]" for n in notes)


_NOTE_KEYS = {
    "stood-on": "s",
    "replacement-stands": "r",
    "replacement-free": "r",
    "no-cycle": "r",
    "original-stands": "o",
    "not-itself": "o",
    "same-finding": "f",
}
_NOTES = (
    ("s", "refused while records marked duplicates stand on it: retract them first (they repeat it)"),
    ("r", "the replacement must stand (active), replace no other record and make no cycle"),
    ("o", "the record it repeats must stand (active) and be another record"),
    ("f", "one open flag per rule and JSON path"),
    ("m", "its duplicates move along: they stand on the replacement (or on the record it repeats)"),
    (
        "c",
        "a resolution closes the dispute or flag it names (everything open when it names none), and its "
        "outcome retracted or corrected is the retraction or supersession in the same commit",
    ),
)

COLUMNS = (
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


def card_table() -> str:
    """The state machine as the governance card shows it (Markdown): every state, every
    action, the state that results (refused where the table refuses), and the notes. Two
    tables: the actions on a record's lifecycle, then the markers' (a page is too narrow
    for ten columns); a third for the actions declared with steps of their own since
    (:func:`eee.governance.declare`), read when asked."""
    lines: list[str] = []
    named = {a for a, _ in COLUMNS}
    declared = tuple((a, None) for a in dict.fromkeys(a for _, a in MACHINE) if a not in named)
    groups = (COLUMNS[:4], COLUMNS[4:]) + ((declared,) if declared else ())  # an action declared since: a third
    for group in groups:  # two tables: ten columns do not fit a page
        heads = ["status"] + [
            ("mark-duplicate" if a == "duplicate" else a) + (f" ({o})" if o else "") for a, o in group
        ]
        lines += ["| " + " | ".join(heads) + " |", "|" + " --- |" * len(heads)]
        for lifecycle, markers in states():
            cells = [state_text(lifecycle, markers)] + [_cell(lifecycle, markers, a, o) for a, o in group]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += [f"[{key}] {text}." for key, text in _NOTES]
    lines.append("")
    lines.append("Why each refusal (the message the tools, the events hook and the audit give):")
    lines.append("")
    for (lifecycle, action), s in MACHINE.items():
        if not s.allowed:
            name = "mark-duplicate" if action == "duplicate" else action
            why = s.why.format(uuid="R", superseded_by="S", duplicate_of="D")
            lines.append(f"- {name}, {lifecycle}: {why}.")
    lines.append("- dispute, disputed: record R is already disputed.")
    lines.append("- resolve, no marker: record R has no open dispute or flag; there is nothing to resolve.")
    return "\n".join(lines)
