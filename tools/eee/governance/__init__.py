"""The governance ledger: events beside records, and the one status fold over them.

Records never change. What happens to one afterwards (retracted, superseded, disputed,
resolved, reinstated) is an event: one YAML file under ``governance/events/``, added and
never edited. :func:`eee.governance.status.fold` turns the events into each record's
status; the validator, the audit, the catalogue and the site all use it.
"""

from eee.paths import EVENT_SUFFIX, EVENTS_DIR  # where events live is a path rule of the store

__all__ = ["EVENTS_DIR", "EVENT_SUFFIX"]
