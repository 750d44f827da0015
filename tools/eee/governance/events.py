"""Event files: make, name, write (atomically, with ruamel.yaml) and read."""

from __future__ import annotations

import datetime as dt
import io
import secrets
from pathlib import Path
from typing import Any

from eee.fsutil import write_new
from eee.paths import EVENT_SUFFIX, EVENTS_DIR

EVENT_SCHEMA_VERSION = "1.0.0"
FIELD_ORDER = (
    "event_schema",
    "id",
    "action",
    "record",
    "replacement",
    "reason",
    "outcome",
    "reference",
    "actor",
    "timestamp",
)


class EventFileError(ValueError):
    """An event file that cannot be read as one event."""


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def make_event(
    action: str,
    record: str,
    reason: str,
    actor: dict[str, str],
    *,
    replacement: str | None = None,
    reference: str | None = None,
    outcome: str | None = None,
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """A new event; its id orders it in time and never collides with another."""
    now = (now or utc_now()).astimezone(dt.UTC)
    event_id = f"{now.strftime('%Y%m%dT%H%M%S.%fZ')}-{action}-{record[:8]}-{secrets.token_hex(3)}"
    event: dict[str, Any] = {
        "event_schema": EVENT_SCHEMA_VERSION,
        "id": event_id,
        "action": action,
        "record": record,
        "replacement": replacement,
        "reason": reason,
        "outcome": outcome,
        "reference": reference,
        "actor": {"name": actor["name"], "email": actor["email"]},
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }
    return {k: event[k] for k in FIELD_ORDER if event.get(k) is not None}


def _yaml() -> Any:
    from ruamel.yaml import YAML  # lazy: ruamel.yaml costs ~50 ms; only when an event is read or written

    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = 100
    return yaml


def dumps(event: dict[str, Any]) -> str:
    """The event as YAML; strings that YAML would read as something else are quoted."""
    from ruamel.yaml.comments import CommentedMap  # lazy: ruamel.yaml, only when an event is written
    from ruamel.yaml.scalarstring import (  # lazy: ruamel.yaml, only when an event is written
        DoubleQuotedScalarString,
        LiteralScalarString,
    )

    doc = CommentedMap()
    for key in FIELD_ORDER:
        if key not in event:
            continue
        value = event[key]
        if key == "timestamp" or key == "event_schema":
            value = DoubleQuotedScalarString(value)
        elif key == "reason" and "\n" in value:
            value = LiteralScalarString(value)
        elif key == "actor":
            value = CommentedMap([("name", event["actor"]["name"]), ("email", event["actor"]["email"])])
        doc[key] = value
    buf = io.StringIO()
    _yaml().dump(doc, buf)
    return buf.getvalue()


def path_for(root: Path, event: dict[str, Any]) -> Path:
    return root / EVENTS_DIR / f"{event['id']}.yaml"


def write(root: Path, event: dict[str, Any]) -> Path:
    """Write one new event, exclusively and atomically (:func:`eee.fsutil.write_new`)."""
    target = path_for(root, event)
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_new(target, dumps(event).encode("utf-8"))


def load_text(text: str, name: str = "<event>") -> dict[str, Any]:
    from ruamel.yaml import YAML  # lazy: ruamel.yaml costs ~50 ms; only when an event is read
    from ruamel.yaml.error import YAMLError  # lazy: with the loader above

    try:
        doc = YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        raise EventFileError(f"not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise EventFileError("an event is a YAML mapping")
    # YAML may read unquoted timestamps as datetimes: give them back as text
    return {str(k): (v.isoformat() if isinstance(v, dt.datetime | dt.date) else v) for k, v in doc.items()}


def load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise EventFileError("not UTF-8 text") from None
    return load_text(text, path.name)


def event_files(root: Path) -> list[Path]:
    folder = root / EVENTS_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix == EVENT_SUFFIX and not p.name.startswith("."))


def load_all(root: Path) -> list[tuple[Path, dict[str, Any] | EventFileError]]:
    out: list[tuple[Path, dict[str, Any] | EventFileError]] = []
    for path in event_files(root):
        try:
            out.append((path, load(path)))
        except EventFileError as exc:
            out.append((path, exc))
    return out
