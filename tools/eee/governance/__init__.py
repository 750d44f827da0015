"""The governance ledger: events beside records, and the one status fold over them.

Records never change. What happens to one afterwards (retracted, superseded, disputed,
resolved, reinstated) is an event: one YAML file under ``governance/events/``, added and
never edited. :func:`eee.governance.status.fold` turns the events into each record's
status; the validator, the audit, the catalogue and the site all use it.
"""

EVENTS_DIR = "governance/events"
EVENT_SUFFIX = ".yaml"  # one file per event: governance/events/<id>.yaml
ACTIONS = ("retract", "supersede", "dispute", "resolve", "reinstate")
