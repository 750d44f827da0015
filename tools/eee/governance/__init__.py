"""The governance ledger: events beside records, and the one status fold over them.

Records never change. What happens to one afterwards (retracted, superseded, disputed,
flagged, resolved, reinstated, marked duplicate) is an event: one YAML file under
``governance/events/``, added and never edited. :func:`eee.rules.ledger.fold` turns
the events into each record's status; the validator, the audit, the catalogue, the site
and the tools all use it.

The actions are declared once, here (:data:`ACTIONS`); the tools, the command table, the
commit subjects and the tests derive from it, and a test checks that the event schema's
``action`` enum says the same.

This module is imported by the hooks: it holds constants only (and the ledger's paths,
from :mod:`eee.store.paths`).
"""

from __future__ import annotations

from typing import NamedTuple

from eee.store.paths import EVENT_SUFFIX, EVENTS_DIR  # where events live is a path rule of the store

__all__ = ["ACTIONS", "EVENTS_DIR", "EVENT_SUFFIX", "LIFECYCLES", "MARKERS", "STATUSES"]

EVENT_SCHEMA_VERSIONS = ("1.0.0", "1.1.0", "1.2.0")  # every released event schema; the last is written
EVENT_SCHEMA_CURRENT = EVENT_SCHEMA_VERSIONS[-1]


class Action(NamedTuple):
    """One governance action: its event name, its command and what the tools say about it."""

    name: str  # the event's `action`
    command: str  # `eee <command>` and `tools/<command>`
    summary: str  # one line, for `eee --help`
    description: str  # the command's --help
    verb: str  # the commit subject: "<verb> <uuid8>: <reason>"
    since: str  # the first event schema version that has it
    reference: str  # "required", "optional" or "no"
    needs_other: bool = False  # names another record (`replacement` or `of`)


ACTIONS: tuple[Action, ...] = (
    Action(
        "retract",
        "retract",
        "mark a record retracted (governance event)",
        "Mark a record retracted: submitted in error or built on faulty source data. The record stays.",
        "Retract",
        "1.0.0",
        "optional",
    ),
    Action(
        "supersede",
        "supersede",
        "replace a record by a corrected one (governance event)",
        "Replace a record by a corrected one (a file, placed under a fresh uuid, or an existing uuid).",
        "Supersede",
        "1.0.0",
        "no",
        needs_other=True,
    ),
    Action(
        "dispute",
        "dispute",
        "mark a record's metadata as contested (governance event)",
        "Mark a record's metadata as contested, pointing at the discussion.",
        "Dispute",
        "1.0.0",
        "required",
    ),
    Action(
        "resolve",
        "resolve",
        "close a dispute or a flag, with an outcome that acts (governance event)",
        "Close a record's open dispute or flags, saying how it ended: upheld (the record stays), "
        "retracted (the retraction is written in the same commit) or corrected (the supersession "
        "by the given replacement is written in the same commit).",
        "Resolve",
        "1.0.0",
        "optional",
    ),
    Action(
        "reinstate",
        "reinstate",
        "undo a retraction made in error (governance event)",
        "Undo a retraction made in error (the retraction stays in the history).",
        "Reinstate",
        "1.0.0",
        "no",
    ),
    Action(
        "flag",
        "flag",
        "record a concern: a rule and JSON path a record breaks (governance event)",
        "Flag a record: an expression of concern naming the rule (the [id] of the finding) and the JSON path "
        "the record breaks, with a reason; the flag names the record's path and the sha256 of its bytes, "
        "and the gate accepts exactly that finding of that file. The record stays; its status is flagged "
        "until a resolution.",
        "Flag",
        "1.1.0",
        "optional",
    ),
    Action(
        "duplicate",
        "mark-duplicate",
        "mark a record as a duplicate of another, which stands (governance event)",
        "Mark a record as a duplicate of another record, which stands (IsIdenticalTo). The record stays.",
        "Mark duplicate",
        "1.1.0",
        "optional",
        needs_other=True,
    ),
)
BY_NAME = {a.name: a for a in ACTIONS}
BY_COMMAND = {a.command: a for a in ACTIONS}
ACTION_NAMES = tuple(a.name for a in ACTIONS)
ACTIONS_IN = {v: tuple(a.name for a in ACTIONS if a.since <= v) for v in EVENT_SCHEMA_VERSIONS}

# resolve outcomes: what the resolution does to the record
OUTCOMES = ("upheld", "retracted", "corrected")

# statuses, in precedence order: the lifecycle when the record does not stand, else its first
# marker, else active; which action moves a record from which state to which is the state
# machine of eee.governance.lifecycle (declared once, beside these actions)
from eee.governance.lifecycle import LIFECYCLES, MARKERS, STATUSES  # noqa: E402

# DataCite relation types used by the ledger and the records
IS_NEW_VERSION_OF = "IsNewVersionOf"
IS_PREVIOUS_VERSION_OF = "IsPreviousVersionOf"
IS_IDENTICAL_TO = "IsIdenticalTo"
IS_DERIVED_FROM = "IsDerivedFrom"
RELATION_TYPES = (IS_NEW_VERSION_OF, IS_PREVIOUS_VERSION_OF, IS_IDENTICAL_TO, IS_DERIVED_FROM)

# An event's declared time may differ from its commit's (author) time by at most this
# much; more is refused by the events hook and the audit (see governance/README.md).
MAX_CLOCK_SKEW_SECONDS = 86400
