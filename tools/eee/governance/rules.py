"""The ledger's rules that are pure functions, shared by the fold, the events hook and
the audit (which pass what they know: the commit's time, or now for a staged event)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from eee.governance import MAX_CLOCK_SKEW_SECONDS


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
