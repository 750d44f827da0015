"""Hook ``eee-events``: staged governance events are valid and legal.

Each staged event is checked against the event schema of its version, its file name, and
the ledger in history order (:func:`eee.rules.ledger.fold`): the record exists, the
action is legal in the record's state at that point, no supersession or duplicate cycle,
no retracted replacement, a resolution's retraction or supersession in the same commit,
and a declared time no earlier than the record's previous event and within a day of now
(:func:`eee.rules.ledger.time_problem`). Events, ledger and records are read from the index (:class:`eee.store.staged.IndexTree`): what
will be committed, not the work tree.
"""

from __future__ import annotations

from eee.hooks import emit_summary
from eee.store.paths import EVENT_SUFFIX, EVENTS_DIR
from eee.store.staged import index_tree
from eee.validation.validate import validate_tree


def main(argv: list[str]) -> int:
    paths = [
        p.replace("\\", "/")
        for p in argv
        if p.replace("\\", "/").startswith(EVENTS_DIR + "/") and p.endswith(EVENT_SUFFIX)
    ]
    if not paths:
        return 0
    return emit_summary(validate_tree(index_tree(), paths))
