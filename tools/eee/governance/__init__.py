"""The governance ledger: events beside records, and the one status fold over them.

Records never change. What happens to one afterwards (retracted, superseded, disputed,
flagged, resolved, reinstated, marked duplicate) is an event: one YAML file under
``governance/events/``, added and never edited. :func:`eee.rules.ledger.fold` turns
the events into each record's status; the validator, the audit, the catalogue, the site
and the tools all use it.

The actions are declared once, here (:data:`ACTIONS`); the tools, the command table, the
commit subjects and the tests derive from it, and a test checks that the event schema's
``action`` enum says the same. :func:`declare` declares one more for a while (a test's
"embargo": ``eee --help``, the table of authority, the governance card and the site show it). Beside them: who may take each act (:data:`AUTHORITY`, the
actions and the acts that are no event: import, release a schema, change the settings, the
roles, the forge set-up, an experiment card) and which paths each act writes (:data:`PROTECTED`); the audit
judges every commit by them (:mod:`eee.rules.authority`), the governance card prints them.

This module is imported by the hooks: it holds constants only (and the ledger's paths,
from :mod:`eee.store.paths`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from eee.store.paths import (  # where governance files live is a path rule of the store
    EVENT_SUFFIX,
    EVENTS_DIR,
    EXPERIMENTS_DIR,
    IMPORTS_DIR,
)
from eee.store.roles import ALLOWED_SIGNERS, CONTRIBUTOR, MAINTAINER, ROLES_FILE
from eee.store.settings import PROTECTED_PATHS, SETTINGS_PATH, is_protected

__all__ = ["ACTIONS", "AUTHORITY", "EVENTS_DIR", "EVENT_SUFFIX", "LIFECYCLES", "MARKERS", "PROTECTED", "STATUSES"]

EVENT_SCHEMA_VERSIONS = ("1.0.0", "1.1.0", "1.2.0")  # every released event schema; the last is written
EVENT_SCHEMA_CURRENT = EVENT_SCHEMA_VERSIONS[-1]


ANYONE = "anyone"  # no role needed (and no signature)
# what an act may need: nothing, a contributor (any principal of the roles: a signature by a
# known key, a maintainer's too) or a maintainer
WHO = (ANYONE, CONTRIBUTOR, MAINTAINER)


class Option(NamedTuple):
    """One option of an action's command beyond those every action has (``--reason``,
    ``--reference``, ...): the command's parser adds it as declared, and its value goes to
    :func:`eee.write.actions.perform` as the keyword ``dest`` (unless ``passed`` is False: the
    command reads it itself)."""

    flag: str  # "--of"
    dest: str  # the keyword of perform() (and the parsed argument's name)
    metavar: str | None
    help: str
    required: bool = False
    choices: tuple[str, ...] = ()
    passed: bool = True


class Action(NamedTuple):
    """One governance action, declared as one unit: its event name, its command, what the
    tools say about it and who may take it (:data:`AUTHORITY`'s row of it is made from here)."""

    name: str  # the event's `action`
    command: str  # `eee <command>` and `tools/<command>`
    summary: str  # one line, for `eee --help`
    description: str  # the command's --help
    verb: str  # the commit subject: "<verb> <uuid8>: <reason>"
    since: str  # the first event schema version that has it
    reference: str  # "required", "optional" or "no"
    needs_other: bool = False  # names another record (`replacement` or `of`)
    role: str = MAINTAINER  # who may take it: ANYONE or MAINTAINER
    what: str = ""  # what the act is, for messages and the governance card's table of authority
    own: str = ""  # the exception to the role, when there is one (said as the card says it)
    options: tuple[Option, ...] = ()  # its command's own options, in --help order


# resolve outcomes: what the resolution does to the record
OUTCOMES = ("upheld", "retracted", "corrected")

ACTIONS: tuple[Action, ...] = (
    Action(
        "retract",
        "retract",
        "mark a record retracted (governance event)",
        "Mark a record retracted: submitted in error or built on faulty source data. The record stays.",
        "Retract",
        "1.0.0",
        "optional",
        what="retract a record (an event)",
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
        what="supersede a record by a corrected one (an event)",
        own="a contributor may supersede a record whose adding commit they signed themselves",
    ),
    Action(
        "dispute",
        "dispute",
        "mark a record's metadata as contested (governance event)",
        "Mark a record's metadata as contested, pointing at the discussion.",
        "Dispute",
        "1.0.0",
        "required",
        role=ANYONE,
        what="raise a dispute (an event)",
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
        what="resolve a dispute or a flag (an event)",
        options=(
            Option(
                "--outcome",
                "outcome",
                None,
                "upheld: the record stays; retracted: the retraction is written in the same commit; "
                "corrected: the supersession by --replacement is written in the same commit",
                required=True,
                choices=OUTCOMES,
            ),
            Option(
                "--replacement",
                "replacement",
                "NEW",
                "with --outcome corrected: the corrected record (a JSON file, or a uuid or prefix in the store)",
                passed=False,  # a file or a uuid: the command reads it (eee.commands.governance)
            ),
            Option(
                "--event", "resolves", "ID", "the one open dispute or flag event to close (default: every open one)"
            ),
        ),
    ),
    Action(
        "reinstate",
        "reinstate",
        "undo a retraction made in error (governance event)",
        "Undo a retraction made in error (the retraction stays in the history).",
        "Reinstate",
        "1.0.0",
        "no",
        what="reinstate a retracted record (an event)",
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
        what="flag a record: accept one finding of it (an event)",
        options=(
            Option(
                "--rule",
                "rule",
                "ID",
                "the rule the record breaks: the [id] its finding shows (`eee rules` lists them)",
                required=True,
            ),
            Option(
                "--json-path",
                "path",
                "JSONPATH",
                "the JSON path of the finding, as the finding writes it, e.g. '$.a.b[0]'",
                required=True,
            ),
        ),
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
        what="mark a record a duplicate of another (an event)",
        options=(Option("--of", "of", "UUID", "the record that stands (uuid or unique prefix)", required=True),),
    ),
)
BY_NAME = {a.name: a for a in ACTIONS}
BY_COMMAND = {a.command: a for a in ACTIONS}
ACTION_NAMES = tuple(a.name for a in ACTIONS)
ACTIONS_IN = {v: tuple(a.name for a in ACTIONS if a.since <= v) for v in EVENT_SCHEMA_VERSIONS}


# statuses, in precedence order: the lifecycle when the record does not stand, else its first
# marker, else active; which action moves a record from which state to which is the state
# machine of eee.governance.lifecycle (declared once, beside these actions)
from eee.governance.lifecycle import LIFECYCLES, MACHINE, MARKERS, STATUSES, Step  # noqa: E402

# DataCite relation types used by the ledger and the records
IS_NEW_VERSION_OF = "IsNewVersionOf"
IS_PREVIOUS_VERSION_OF = "IsPreviousVersionOf"
IS_IDENTICAL_TO = "IsIdenticalTo"
IS_DERIVED_FROM = "IsDerivedFrom"
IS_PART_OF = "IsPartOf"  # a result citing an experiment card is part of that experiment
RELATION_TYPES = (IS_NEW_VERSION_OF, IS_PREVIOUS_VERSION_OF, IS_IDENTICAL_TO, IS_DERIVED_FROM, IS_PART_OF)

# An event's declared time may differ from its commit's (author) time by at most this
# much; more is refused by the events hook and the audit (see governance/README.md).
MAX_CLOCK_SKEW_SECONDS = 86400


# --- authority: who may take which act ----------------------------------------------------


def holds(role: str | None, needed: str) -> bool:
    """Whether a principal holding ``role`` (None: no known key) may take an act needing
    ``needed``: anyone for :data:`ANYONE`, any principal of the roles for ``contributor``, a
    maintainer for ``maintainer``."""
    if needed == ANYONE:
        return True
    if needed == CONTRIBUTOR:
        return role in (CONTRIBUTOR, MAINTAINER)
    return role == needed


class Authority(NamedTuple):
    """Who may take one act: an action of :data:`ACTIONS` or an act that is no event."""

    act: str  # an action's name, or add / import / release-schema / settings / roles / forge
    role: str  # ANYONE or MAINTAINER
    what: str  # what the act is, for messages and the governance card
    own: str = ""  # the exception, when there is one (said as the card says it)


def authority_of(actions: tuple[Action, ...]) -> tuple[Authority, ...]:
    """The table of who may take which act: adding records, then ``actions`` as each
    declares it (those anyone may take first, then the maintainers'), then the acts that are
    no event (:data:`OTHER_ACTS`)."""
    return (
        Authority("add", ANYONE, "add records and their sidecars (data/)"),
        *(Authority(a.name, a.role, a.what, a.own) for who in WHO for a in actions if a.role == who),
        *OTHER_ACTS,
    )


OTHER_ACTS: tuple[Authority, ...] = (
    Authority("import", MAINTAINER, f"write an import manifest ({IMPORTS_DIR}/)"),
    Authority(
        "experiment",
        CONTRIBUTOR,
        f"register an experiment card ({EXPERIMENTS_DIR}/): a new card, never an edit; in a store with roles "
        "signed by its author's known key",
    ),
    Authority("release-schema", MAINTAINER, "release a schema (schemas/, schemas/registry.json)"),
    Authority("settings", MAINTAINER, f"change the store's settings ({SETTINGS_PATH})"),
    Authority("roles", MAINTAINER, f"change the roles ({ALLOWED_SIGNERS}, {ROLES_FILE}, .github/CODEOWNERS)"),
    Authority("forge", MAINTAINER, "change the forge set-up (.github/: the audit workflow)"),
    Authority("identity", MAINTAINER, "change the identity registry (governance/identity/: canonical ids, aliases)"),
    Authority(
        "protected-path",
        MAINTAINER,
        f"change a protected path: what the tools run or check (protected_paths in {SETTINGS_PATH})",
    ),
)
AUTHORITY = authority_of(ACTIONS)
AUTHORITY_BY_ACT = {a.act: a for a in AUTHORITY}
PROTECTED_PATH_ACT = "protected-path"
# The acts that change what judges the store rather than what it holds: a merge on the mainline takes
# them against every parent, whatever parent its content came from (eee.rules.authority).
CONFIGURATION_ACTS = frozenset({"release-schema", "settings", "roles", "forge", "identity", PROTECTED_PATH_ACT})

EVENT_ACT = "event"  # a path whose act is the action of the event it holds
# The paths each act writes: a folder (ending in /) or one file; the first entry that matches
# a path is its act. A path no entry matches is "add" under data/ and free elsewhere. A new
# protected file or folder is one line here (naming an act of AUTHORITY).
PROTECTED: tuple[tuple[str, str], ...] = (
    (EVENTS_DIR + "/", EVENT_ACT),
    (IMPORTS_DIR + "/", "import"),
    (EXPERIMENTS_DIR + "/", "experiment"),
    ("schemas/", "release-schema"),
    (SETTINGS_PATH, "settings"),
    (ALLOWED_SIGNERS, "roles"),
    (ROLES_FILE, "roles"),
    (".github/CODEOWNERS", "roles"),
    (".github/", "forge"),
    ("governance/identity/", "identity"),
)


def act_of_path(path: str, protected_paths: tuple[str, ...] | list[str] = PROTECTED_PATHS) -> str | None:
    """The act a change of ``path`` is (:data:`EVENT_ACT` for an event file: its action says
    which), ``add`` under data/, ``protected-path`` for a path of the store's
    ``protected_paths`` setting (``protected_paths``: those of the settings that judge the
    commit; default :data:`eee.store.settings.PROTECTED_PATHS`), None for a path no act protects."""
    for where, act in PROTECTED:
        if path == where or (where.endswith("/") and path.startswith(where)):
            return act
    if path.startswith("data/"):
        return "add"
    return PROTECTED_PATH_ACT if is_protected(path, protected_paths) else None


@contextmanager
def declare(action: Action, steps: dict[str, Step] | None = None) -> Iterator[Action]:
    """Declare one more governance action, as one unit, for as long as the ``with`` block
    lasts: its command (``eee --help``, dispatch, its parser), its row of the table of who may
    take which act (:data:`AUTHORITY`: the audit and the gate judge it by its role, ``eee
    roles``, the governance card and the site print it) all come from ``action``; ``steps``
    (a :class:`~eee.governance.lifecycle.Step` for each of :data:`LIFECYCLES`) are its rows of
    the state machine (the fold applies them, the card shows them); without them every event of
    it is refused. On leaving, the declarations are as they were (a test declares an action and
    undoes it).

    The event schema's ``action`` enum is a released schema and does not change: an event of
    a new action is written only once a new event schema version names it (until then the
    events hook, the fold and the audit refuse such an event as unknown)."""
    global ACTIONS, ACTION_NAMES, AUTHORITY
    if action.name in BY_NAME or action.command in BY_COMMAND or action.name in AUTHORITY_BY_ACT:
        raise ValueError(f"an action {action.name!r} (command {action.command!r}) or an act of that name is declared")
    if action.role not in WHO:
        raise ValueError(f"action {action.name!r}: role {action.role!r} is none of {', '.join(WHO)}")
    if steps is not None and set(steps) != set(LIFECYCLES):
        raise ValueError(
            f"action {action.name!r}: its steps name {sorted(steps)}, not the lifecycles {list(LIFECYCLES)}"
        )
    before = (ACTIONS, ACTION_NAMES, AUTHORITY)
    rows = {(lifecycle, action.name): s for lifecycle, s in (steps or {}).items()}
    MACHINE.update(rows)  # in place, as the dicts below: the fold and the card read it when asked
    ACTIONS = (*ACTIONS, action)
    ACTION_NAMES = (*ACTION_NAMES, action.name)
    AUTHORITY = authority_of(ACTIONS)
    BY_NAME[action.name] = BY_COMMAND[action.command] = action  # the dicts change in place: importers see it
    AUTHORITY_BY_ACT.clear()
    AUTHORITY_BY_ACT.update({a.act: a for a in AUTHORITY})
    try:
        yield action
    finally:
        ACTIONS, ACTION_NAMES, AUTHORITY = before
        del BY_NAME[action.name], BY_COMMAND[action.command]
        for row in rows:
            del MACHINE[row]
        AUTHORITY_BY_ACT.clear()
        AUTHORITY_BY_ACT.update({a.act: a for a in AUTHORITY})


def role_for(act: str) -> str:
    """The role an act needs (:data:`ANYONE` or :data:`MAINTAINER`); an act not declared
    (an event whose action is unknown) needs the maintainer role. An action's role is its
    declaration's (:data:`BY_NAME`, read when asked: an action declared alone is judged by it)."""
    declared = BY_NAME.get(act)
    if declared is not None:
        return declared.role
    found = AUTHORITY_BY_ACT.get(act)
    return found.role if found is not None else MAINTAINER


__all__ += ["ANYONE", "CONTRIBUTOR", "MAINTAINER"]
