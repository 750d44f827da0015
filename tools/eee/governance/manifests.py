"""Import manifests: ``governance/imports/<id>.yaml``, one per import, never edited.

It traces every source file of an import (:mod:`eee.imports`) to its outcome: source,
revision, time, tool version, who ran it, the counts, and per file its source path, store
path, sha256, outcome (one of :data:`OUTCOMES`, with the reason, and for a flagged record
its flags and their events). A governance file like the events: the importer writes it,
the hooks and the audit check it, the site shows it.

Written here as block YAML whose strings are all double-quoted (with escapes for what is
not printable), which is fast to write and reads back identically; read with the YAML
loader like every governance file. Its rules (what a manifest must say, and name) are
:mod:`eee.rules.imports`.
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


_ESCAPE = re.compile(r'\\(?:(["\\])|x([0-9a-f]{2})|u([0-9a-f]{4})|U([0-9a-f]{8}))')
_INT = re.compile(r"-?[1-9][0-9]*|0")
_KEY = re.compile(r"[a-z][a-z0-9_]*")  # a key YAML reads as itself (a plain scalar, none of null/true/false)


def _key(text: str) -> str:
    if not _KEY.fullmatch(text) or text in ("null", "true", "false"):
        raise KeyError(text)
    return text


def _unquoted(text: str) -> Any:
    """A scalar as :func:`_scalar` writes it (KeyError for anything else)."""
    if text.startswith('"') and text.endswith('"') and len(text) > 1:
        body = text[1:-1]  # what is not quote()'s (a bare quote or backslash) fails the comparison after
        return _ESCAPE.sub(lambda m: m.group(1) or chr(int(m.group(2) or m.group(3) or m.group(4), 16)), body)
    if text in ("null", "true", "false"):
        return {"null": None, "true": True, "false": False}[text]
    if _INT.fullmatch(text):
        return int(text)
    raise KeyError(text)


def _as_written(text: str) -> dict[str, Any] | None:
    """The manifest ``text`` when it is exactly what :func:`dumps` writes (checked: it is
    written again and compared), else None. A 5,000-file manifest is some 1.2 MB of YAML
    that a pure-Python loader reads in seconds, and the audit reads each manifest it meets
    (the server gate, on the push of an import); read this way, it takes a few milliseconds,
    and the document is the one the YAML loader gives for that text (what :func:`dumps`
    writes reads back identically). Anything else, edited or crafted, goes to the loader."""
    if not text.endswith("\n") or "\r" in text:
        return None
    doc: dict[str, Any] = {}
    mapping: dict[str, Any] | None = None  # actor, counts: the mapping being read
    items: list[dict[str, Any]] | None = None  # files: the list being read
    flags: list[dict[str, Any]] | None = None  # an item's flags being read
    try:
        for line in text[:-1].split("\n"):
            if line.startswith("      - ") or line.startswith("        "):
                key, value = line[8:].split(": ", 1)
                if line[6] == "-":
                    flags.append({})  # type: ignore[union-attr]
                flags[-1][_key(key)] = _unquoted(value)  # type: ignore[index]
            elif line.startswith("  - ") or line.startswith("    "):
                if line[2] == "-":
                    items.append({})  # type: ignore[union-attr]
                if line[4:].endswith(":"):
                    if line[4:] != "flags:":
                        return None
                    flags = items[-1]["flags"] = []  # type: ignore[index]
                    continue
                key, value = line[4:].split(": ", 1)
                items[-1][_key(key)] = _unquoted(value)  # type: ignore[index]
            elif line.startswith("  "):
                key, value = line[2:].split(": ", 1)
                mapping[_key(key)] = _unquoted(value)  # type: ignore[index]
            elif line.endswith(":"):
                key = line[:-1]
                if key == "files":
                    items = doc[key] = []
                elif key in ("actor", "counts"):
                    mapping = doc[key] = {}
                else:
                    return None
            else:
                key, value = line.split(": ", 1)
                doc[_key(key)] = [] if key == "files" and value == "[]" else _unquoted(value)
    except (KeyError, ValueError, AttributeError, TypeError, IndexError):
        return None
    # a key with nothing under it (``actor:``, an item's ``flags:``) is null to YAML, written again the same
    if doc.get("actor") == {} or doc.get("counts") == {} or any(i.get("flags") == [] for i in doc.get("files") or []):
        return None
    try:
        return doc if dumps(doc) == text else None
    except (KeyError, TypeError, AttributeError):
        return None


def loads(text: str) -> dict[str, Any]:
    """A manifest read back (ValueError when it is not a YAML mapping): as written by
    :func:`dumps` (:func:`_as_written`), else with the YAML loader."""
    written = _as_written(text)
    if written is not None:
        return written
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        doc = YAML(typ="safe", pure=True).load(text)
    except (YAMLError, RecursionError, TypeError, ValueError) as exc:
        raise ValueError(f"not valid YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    if not isinstance(doc, dict):
        raise ValueError("a manifest is a YAML mapping")
    return doc


__all__ = ["ID_RE", "MANIFEST_SCHEMA", "MANIFEST_SCHEMA_VERSION", "OUTCOMES", "WRITTEN", "dumps", "loads", "path_for"]
