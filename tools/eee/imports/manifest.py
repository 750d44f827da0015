"""The import manifest: ``governance/imports/<id>.yaml``, one per import, never edited.

It traces every source file of an import to its outcome: source, revision, time, tool
version, who ran it, the counts, and per file its source path, store path, sha256,
outcome (with the reason, and for a flagged record its flags and their events).

Written here as block YAML whose strings are all double-quoted (with escapes for what is
not printable), which is fast to write and reads back identically; read with the YAML
loader like every governance file. :func:`manifest_findings` is the one check, for the hook and the audit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from eee.imports import (
    IMPORTS_DIR,
    MANIFEST_SCHEMA,
    MANIFEST_SCHEMA_VERSION,
    MANIFEST_SUFFIX,
    OUTCOMES,
    PRESENT,
    REFUSED,
)
from eee.reporting.findings import Finding

ID_RE = re.compile(r"^[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-import-[0-9a-f]{6}$")
TOP_ORDER = ("manifest_schema", "id", "source", "revision", "time", "tool", "actor", "counts", "files")
FILE_ORDER = ("source", "kind", "outcome", "store", "sha256", "reason", "flags")


def path_for(import_id: str) -> str:
    return f"{IMPORTS_DIR}/{import_id}{MANIFEST_SUFFIX}"


def _printable(code: int) -> bool:
    """YAML's printable set, less the characters a reader may take for a line break."""
    return (
        code in (0x09,)
        or 0x20 <= code <= 0x7E
        or (0xA0 <= code <= 0xD7FF and code not in (0x2028, 0x2029))
        or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
        or 0x10000 <= code <= 0x10FFFF
    )


def quote(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that reads back to exactly ``text``."""
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
    """A manifest read back (ValueError when it is not a YAML mapping)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        doc = YAML(typ="safe", pure=True).load(text)
    except (YAMLError, RecursionError, TypeError, ValueError) as exc:
        raise ValueError(f"not valid YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    if not isinstance(doc, dict):
        raise ValueError("a manifest is a YAML mapping")
    return doc


def manifest_findings(
    doc: dict[str, Any],
    rel: str,
    exists: Callable[[str], bool],
    sha256_of: Callable[[str], str | None],
    file: str | None = None,
) -> list[Finding]:
    """Everything wrong with the manifest ``doc`` at ``rel``: its schema, its id, its
    arithmetic, and references to what is not in the tree (``exists``: a path of the
    tree; ``sha256_of``: a file's sha256 in the tree, None when it cannot say)."""
    from eee.store.jsonpath import format_path
    from eee.store.schemas import default_registry

    file = file or rel
    out: list[Finding] = []
    validator = default_registry().other_validator(*MANIFEST_SCHEMA)
    for err in list(validator.iter_errors(doc))[:10]:
        out.append(
            Finding(
                file,
                format_path(list(err.instance_path)),
                f"{err.message} (import manifest schema)",
                None,
                check="import",
            )
        )
    if out:
        return out
    stem = rel.rsplit("/", 1)[-1][: -len(MANIFEST_SUFFIX)]
    if doc["id"] != stem or not rel.startswith(IMPORTS_DIR + "/") or rel.count("/") != 2:
        out.append(
            Finding(
                file,
                "$.id",
                f"id {doc['id']!r} differs from the file name",
                f"a manifest is {IMPORTS_DIR}/<id>{MANIFEST_SUFFIX}",
                check="import",
            )
        )
    files = doc["files"]
    counted = {o: 0 for o in OUTCOMES}
    for item in files:
        counted[item["outcome"]] += 1
    declared = doc["counts"]
    for outcome in OUTCOMES:
        if declared.get(outcome) != counted[outcome]:
            out.append(
                Finding(
                    file,
                    f"$.counts.{outcome}",
                    f"counts {declared.get(outcome)} {outcome} files, the list holds {counted[outcome]}",
                    "the counts are the files' outcomes, counted",
                    check="import",
                )
            )
    if declared.get("total") != len(files):
        out.append(
            Finding(
                file,
                "$.counts.total",
                f"total {declared.get('total')} differs from the {len(files)} files listed",
                None,
                check="import",
            )
        )
    for i, item in enumerate(files):
        store = item.get("store")
        if item["outcome"] == REFUSED:
            continue
        where = format_path(["files", i, "store"])
        if item["kind"] == "sidecar":
            if not (exists(store) or exists(store + ".dvc")):
                out.append(
                    Finding(
                        file,
                        where,
                        f"names sidecar {store}, which has no DVC pointer in the tree",
                        "commit the manifest with (or after) the files it lists",
                        check="import",
                    )
                )
            continue
        if not exists(store):
            out.append(
                Finding(
                    file,
                    where,
                    f"names {store}, which is not in the tree",
                    "commit the manifest with (or after) the files it lists",
                    check="import",
                )
            )
            continue
        if item["outcome"] != PRESENT or item.get("sha256"):
            actual = sha256_of(store)
            if actual is not None and actual != item.get("sha256"):
                out.append(
                    Finding(
                        file,
                        format_path(["files", i, "sha256"]),
                        f"sha256 differs from {store}'s ({actual})",
                        "a manifest names the exact bytes it imported",
                        check="import",
                    )
                )
        for j, flag in enumerate(item.get("flags", [])):
            event = f"governance/events/{flag['event']}.yaml"
            if not exists(event):
                out.append(
                    Finding(
                        file,
                        format_path(["files", i, "flags", j, "event"]),
                        f"names flag event {flag['event']}, which is not in the tree",
                        "commit the flag events with the records they flag",
                        check="import",
                    )
                )
    return out


__all__ = ["ID_RE", "MANIFEST_SCHEMA_VERSION", "dumps", "loads", "manifest_findings", "path_for"]
