"""Import manifests: ``governance/imports/<id>.yaml``, one per import, never edited.

It traces every source file of an import (:mod:`eee.imports`) to its outcome: source,
revision, time, tool version, who ran it, the counts, and per file its source path, store
path, sha256, outcome (one of :data:`OUTCOMES`, with the reason, and for a flagged record
its flags and their events). A governance file like the events: the importer writes it,
the hooks and the audit check it, the site shows it.

Written here as block YAML whose strings are all double-quoted (with escapes for what is
not printable), which is fast to write and reads back identically; read with the store's
YAML reader (:mod:`eee.store.safeyaml`) like every governance file. Its rules (what a
manifest must say, and name) are :mod:`eee.rules.imports`.
"""

from __future__ import annotations

import re
from typing import Any

from eee.store.paths import IMPORTS_DIR, MANIFEST_SUFFIX

MANIFEST_SCHEMA_VERSION = "1.0.0"
MANIFEST_SCHEMA = ("imports", "manifest.schema.json")  # (folder, file) under schemas/

# what happens to a source file
IMPORTED = "imported"  # unchanged, at its own path
RELOCATED = "relocated"  # byte-identical, moved to its canonical path
FLAGGED = "flagged"  # unchanged, with flag events for the store rules it breaks
PRESENT = "already_present"  # identical content already in the store: skipped
REFUSED = "refused"  # invalid under its declared schema, unreadable, or not in the layout
OUTCOMES = (IMPORTED, RELOCATED, FLAGGED, PRESENT, REFUSED)
WRITTEN = (IMPORTED, RELOCATED, FLAGGED)  # outcomes that add a file to the store

ID_RE = re.compile(r"^[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-import-[0-9a-f]{6}$")
TOP_ORDER = ("manifest_schema", "id", "source", "revision", "time", "tool", "actor", "counts", "files")
FILE_ORDER = ("source", "kind", "outcome", "store", "sha256", "reason", "flags")


def path_for(import_id: str) -> str:
    return f"{IMPORTS_DIR}/{import_id}{MANIFEST_SUFFIX}"


def batch_line(import_id: str) -> str:
    """The line of a batch commit's message that says which import it belongs to (the
    commits of one import come right before the commit of its manifest: what a manifest
    names as imported is what they, and its own commit, add: :mod:`eee.rules.imports`)."""
    return f"Import {import_id} (its manifest {path_for(import_id)} follows)."


def of_import(message: str, import_id: str) -> bool:
    """Whether a commit message is one of a batch of the import ``import_id``."""
    return batch_line(import_id) in message.splitlines()


def _printable(code: int) -> bool:
    """YAML's printable set, less the characters a reader may take for a line break."""
    return (
        code in (0x09,)
        or 0x20 <= code <= 0x7E
        or (0xA0 <= code <= 0xD7FF and code not in (0x2028, 0x2029))
        or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
        or 0x10000 <= code <= 0x10FFFF
    )


_PLAIN = re.compile(r"[\t\x20\x21\x23-\x5b\x5d-\x7e]*")  # printable ASCII and tab, less " and \\


def quote(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that reads back to exactly ``text``."""
    if _PLAIN.fullmatch(text):  # the common string (a path, a sha256): nothing to escape
        return f'"{text}"'
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif _printable(code):
            out.append(ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:  # pragma: no cover - every code point above 0xFFFF is printable
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return quote(str(value))


def dumps(manifest: dict[str, Any]) -> str:
    """The manifest as block YAML (strings double-quoted with JSON's escapes)."""
    out: list[str] = []
    for key in TOP_ORDER:
        if key not in manifest or manifest[key] is None:
            continue
        value = manifest[key]
        if key in ("actor", "counts"):
            out.append(f"{key}:")
            out.extend(f"  {k}: {_scalar(v)}" for k, v in value.items())
        elif key == "files":
            out.append("files:" if value else "files: []")
            for item in value:
                lead = "  - "
                for field in FILE_ORDER:
                    if field not in item:
                        continue
                    if field == "flags":
                        out.append(f"{lead}flags:")
                        for flag in item["flags"]:
                            mark = "      - "
                            for k in ("rule", "path", "event"):
                                out.append(f"{mark}{k}: {_scalar(flag[k])}")
                                mark = "        "
                    else:
                        out.append(f"{lead}{field}: {_scalar(item[field])}")
                    lead = "    "
        else:
            out.append(f"{key}: {_scalar(value)}")
    return "\n".join(out) + "\n"


def loads(text: str) -> dict[str, Any]:
    """A manifest read back (ValueError when it is not a plain YAML mapping): the store's one
    YAML reader (:mod:`eee.store.safeyaml`: libyaml, no aliases, tags or duplicate keys). A
    1,000-file manifest (280 KB) reads in some 30 ms."""
    from eee.store.safeyaml import YAMLRefused, load

    try:
        doc = load(text)
    except YAMLRefused as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(doc, dict):
        raise ValueError("a manifest is a YAML mapping")
    return doc


__all__ = ["ID_RE", "MANIFEST_SCHEMA", "MANIFEST_SCHEMA_VERSION", "OUTCOMES", "WRITTEN", "dumps", "loads", "path_for"]
