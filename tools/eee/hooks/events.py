"""Hook ``eee-events``: staged governance events are valid and legal.

Each staged event is checked against the event schema, its file name, and the ledger:
the record exists, the action is legal in the record's state at that time, no
supersession cycle, no retracted replacement.
"""

from __future__ import annotations

from eee.hooks import emit_summary
from eee.paths import EVENT_SUFFIX, EVENTS_DIR
from eee.validate import run


def main(argv: list[str]) -> int:
    paths = [p for p in argv if p.replace("\\", "/").startswith(EVENTS_DIR + "/") and p.endswith(EVENT_SUFFIX)]
    if not paths:
        return 0
    return emit_summary(run(paths))
