"""Event files: make, name, write (atomically, with ruamel.yaml) and read (eee.store.safeyaml).

Reasons are text people read in ten years: :func:`clean_reason` normalises them (NFC,
``\\r\\n`` to ``\\n``, outer whitespace stripped) and refuses what is not printable text,
and :func:`dumps` checks that the YAML it writes reads back to the same event (falling
back to a double-quoted scalar where a block scalar would not).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import secrets
import unicodedata
from pathlib import Path
from typing import Any

from eee.git.cli import git_dir_or_none
from eee.governance import EVENT_SCHEMA_CURRENT, EVENT_SCHEMA_VERSIONS, IS_IDENTICAL_TO, IS_PREVIOUS_VERSION_OF
from eee.store.fsutil import write_new, write_replacing
from eee.store.jsonpath import format_path
from eee.store.limits import EVENT_MAX_BYTES, Unreadable, read_regular, too_big
from eee.store.paths import EVENT_SUFFIX, EVENTS_DIR

EVENT_SCHEMA_VERSION = EVENT_SCHEMA_CURRENT
FIELD_ORDER = (
    "event_schema",
    "id",
    "action",
    "record",
    "replacement",
    "of",
    "relation",
    "rule",
    "path",
    "record_path",
    "sha256",
    "reason",
    "outcome",
    "resolves",
    "reference",
    "actor",
    "timestamp",
)


class EventFileError(ValueError):
    """An event file that cannot be read as one event."""


class BadText(ValueError):
    """Text (a reason) that cannot be written to the ledger; the message says why."""


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# bidirectional embedding, override and isolate controls: they reorder what a reader sees
_BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def text_problem(value: str, what: str = "the reason") -> str | None:
    """Why ``value`` is not printable text (None when it is). Newlines are allowed."""
    for i, ch in enumerate(value):
        code = ord(ch)
        if ch == "\n":
            continue
        if 0xD800 <= code <= 0xDFFF:
            byte = f" (byte 0x{code - 0xDC00:02x})" if 0xDC80 <= code <= 0xDCFF else ""
            return f"{what} is not valid UTF-8 text{byte} at character {i + 1}"
        cat = unicodedata.category(ch)
        name = unicodedata.name(ch, "")
        label = f"U+{code:04X} ({name})" if name else f"U+{code:04X}"
        if cat == "Cc" or cat in ("Zl", "Zp"):
            return f"{what} contains the control character {label} at character {i + 1}"
        if code in _BIDI or code == 0xFEFF:
            return f"{what} contains the invisible control {label} at character {i + 1}"
        if cat == "Cn":
            return f"{what} contains U+{code:04X}, which is not an assigned character, at character {i + 1}"
    return None


def clean_reason(value: str | bytes | None, what: str = "the reason") -> str:
    """The reason as it will be stored: NFC, newlines as ``\\n``, stripped; or BadText."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadText(f"{what} is not valid UTF-8 text (byte 0x{value[exc.start]:02x})") from None
    value = (value or "").replace("\r\n", "\n").replace("\r", "\n")
    problem = text_problem(value, what)  # before NFC: normalising must not hide a lone surrogate
    if problem:
        raise BadText(problem)
    value = unicodedata.normalize("NFC", value).strip()
    problem = text_problem(value, what)
    if problem:
        raise BadText(problem)
    return value


def new_event_id(action: str, record: str, now: dt.datetime) -> str:
    return f"{now.strftime('%Y%m%dT%H%M%S.%fZ')}-{action}-{record[:8]}-{secrets.token_hex(3)}"


def make_event(
    action: str,
    record: str,
    reason: str,
    actor: dict[str, str],
    *,
    replacement: str | None = None,
    reference: str | None = None,
    outcome: str | None = None,
    of: str | None = None,
    rule: str | None = None,
    path: str | None = None,
    record_path: str | None = None,
    sha256: str | None = None,
    resolves: str | None = None,
    now: dt.datetime | None = None,
    schema: str = EVENT_SCHEMA_VERSION,
) -> dict[str, Any]:
    """A new event; its id never collides with another's. A flag names ``rule`` at ``path``
    of the record at ``record_path`` whose bytes have ``sha256`` (event schema 1.2.0)."""
    now = (now or utc_now()).astimezone(dt.UTC)
    relation = None
    if schema != "1.0.0":
        relation = {"supersede": IS_PREVIOUS_VERSION_OF, "duplicate": IS_IDENTICAL_TO}.get(action)
    event: dict[str, Any] = {
        "event_schema": schema,
        "id": new_event_id(action, record, now),
        "action": action,
        "record": record,
        "replacement": replacement,
        "of": of,
        "relation": relation,
        "rule": rule,
        "path": path,
        "record_path": record_path,
        "sha256": sha256,
        "reason": reason,
        "outcome": outcome,
        "resolves": resolves,
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
    yaml.allow_unicode = True
    return yaml


def _dump(event: dict[str, Any], quote_all: bool) -> str:
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
        if key == "actor":
            value = CommentedMap(
                [
                    ("name", DoubleQuotedScalarString(value["name"]) if quote_all else value["name"]),
                    ("email", DoubleQuotedScalarString(value["email"]) if quote_all else value["email"]),
                ]
            )
        elif isinstance(value, str) and (quote_all or key in ("timestamp", "event_schema")):
            value = DoubleQuotedScalarString(value)
        elif key == "reason" and "\n" in value:
            value = LiteralScalarString(value)
        doc[key] = value
    buf = io.StringIO()
    _yaml().dump(doc, buf)
    return buf.getvalue()


def dumps(event: dict[str, Any]) -> str:
    """The event as YAML that reads back to ``event``; strings YAML would misread are quoted.

    Raises EventFileError when even a fully double-quoted document would not read back
    (it cannot happen for events the tools make; it guards the promise)."""
    text = _dump(event, quote_all=False)
    if _reads_back(text, event):
        return text
    text = _dump(event, quote_all=True)
    if _reads_back(text, event):
        return text
    raise EventFileError("the event would not read back to the same value")


def _reads_back(text: str, event: dict[str, Any]) -> bool:
    try:
        return load_text(text) == event
    except EventFileError:
        return False


def path_for(root: Path, event: dict[str, Any]) -> Path:
    return root / EVENTS_DIR / f"{event['id']}{EVENT_SUFFIX}"


def write(root: Path, event: dict[str, Any]) -> Path:
    """Write one new event, exclusively and atomically (:func:`eee.store.fsutil.write_new`);
    only an event that reads back to itself is written (:func:`dumps`)."""
    text = dumps(event)
    target = path_for(root, event)
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_new(target, text.encode("utf-8"))


def load_text(text: str, name: str = "<event>") -> dict[str, Any]:
    """One event from its YAML text: plain data only (no aliases, anchors or tags; see
    :mod:`eee.store.safeyaml`)."""
    from eee.store.safeyaml import YAMLRefused  # lazy: PyYAML costs ~35 ms; only when an event is read
    from eee.store.safeyaml import load as load_yaml  # lazy: with the loader above

    try:
        doc = load_yaml(text)
    except YAMLRefused as exc:
        raise EventFileError(str(exc)) from None
    if not isinstance(doc, dict):
        raise EventFileError("an event is a YAML mapping")
    return {str(k): v for k, v in doc.items()}  # an unquoted timestamp stays the text written


def load_bytes(data: bytes, name: str = "<event>") -> dict[str, Any]:
    """One event from the bytes of its file (at most EVENT_MAX_BYTES, UTF-8)."""
    if len(data) > EVENT_MAX_BYTES:
        raise EventFileError(too_big(len(data), EVENT_MAX_BYTES, "governance event")[0])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EventFileError("not UTF-8 text") from None
    return load_text(text, name)


def load(path: Path) -> dict[str, Any]:
    """One event file: a regular file (never a link, pipe or device) of at most EVENT_MAX_BYTES."""
    try:
        data = read_regular(path, EVENT_MAX_BYTES, "governance event")
    except Unreadable as exc:
        raise EventFileError(exc.message) from None
    return load_bytes(data, path.name)


def event_files(root: Path) -> list[Path]:
    folder = root / EVENTS_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix == EVENT_SUFFIX and not p.name.startswith("."))


CACHE_FILE = "eee-events-cache.json"  # in the git directory, never committed


def load_all(root: Path, cache: bool = True) -> list[tuple[Path, dict[str, Any] | EventFileError]]:
    """Every event file of the store at ``root``, read (or the reason it cannot be); parsed
    events come from the :class:`EventCache` when the file is unchanged."""
    files = event_files(root)
    store = EventCache(git_dir_of(root) if cache and files else None)
    out: list[tuple[Path, dict[str, Any] | EventFileError]] = []
    for path in files:
        try:
            st = path.lstat()
            key = f"f:{path.name}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
            event = store.get(key)
            if event is None:
                event = load(path)
                store.put(key, event)
            out.append((path, event))
        except (OSError, EventFileError) as exc:
            out.append((path, exc if isinstance(exc, EventFileError) else EventFileError(str(exc))))
    store.save()
    return out


def schema_location(version: object) -> tuple[str, str] | None:
    """(folder, file) of the event schema of ``version`` under schemas/ (None: unknown)."""
    if version == "1.0.0":
        return ("governance", "event.schema.json")
    if isinstance(version, str) and version in EVENT_SCHEMA_VERSIONS:
        return (f"governance/{version}", "event.schema.json")
    return None


def schema_errors(event: dict[str, Any], registry: Any = None) -> list[tuple[str, str]]:
    """(JSON path, message) of everything wrong with ``event`` under the schema it declares."""
    location = schema_location(event.get("event_schema"))
    if location is None:
        known = ", ".join(EVENT_SCHEMA_VERSIONS)
        return [("$.event_schema", f"unknown event schema version {event.get('event_schema')!r} (known: {known})")]
    if registry is None:
        from eee.store.schemas import (
            default_registry,  # lazy: the registry (orjson, pins) only when an event is checked
        )

        registry = default_registry()
    validator = registry.other_validator(*location)
    return [(format_path(list(e.instance_path)), e.message) for e in validator.iter_errors(event)]


class EventCache:
    """Parsed events kept between runs in the git directory (``eee-events-cache.json``,
    never committed), keyed by what identifies a file's bytes: its blob id in a commit, or
    name, size, modification time and inode in a work tree. Events never change, and YAML
    parsing is most of the cost of reading a ledger of thousands of events. Only events
    that parsed are kept; a damaged cache is ignored and rewritten."""

    def __init__(self, git_dir: Path | None) -> None:
        self.path = Path(git_dir, CACHE_FILE) if git_dir is not None else None
        self.known: dict[str, Any] = {}
        self.used: dict[str, Any] = {}
        if self.path is not None:
            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
                self.known = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self.known = {}

    def get(self, key: str | None) -> dict[str, Any] | None:
        if key is None:
            return None
        hit = self.known.get(key)
        if isinstance(hit, dict):
            self.used[key] = hit
            return hit
        return None

    def put(self, key: str | None, event: dict[str, Any]) -> None:
        if key is not None:
            self.used[key] = event

    def save(self) -> None:
        """Keep the blob entries and this run's file entries."""
        if self.path is None:
            return
        keep = {k: v for k, v in self.known.items() if k.startswith("b:")}
        keep.update(self.used)
        if keep == self.known:
            return
        try:
            write_replacing(self.path, json.dumps(keep, ensure_ascii=False).encode("utf-8"), durable=False)
        except (OSError, TypeError, ValueError):  # only a cache: never a reason to fail
            pass


def git_dir_of(folder: Path | str) -> Path | None:
    return git_dir_or_none(folder)
