"""The identity registry's files parsed and checked: plain YAML (:mod:`eee.store.safeyaml`),
the pinned schema (``schemas/identity/registry.schema.json``) and the registry's own
consistency; each problem a :class:`eee.store.identity.model.Problem` with its line."""

from __future__ import annotations

import re
from typing import Any

from eee.store.identity.model import BENCHMARK, FILES, KIND_OF_FILE, MODEL, SCHEMAS, Alias, Problem, Registry


def parse(files: dict[str, bytes]) -> Registry:
    """The registry the files declare, every problem of each file in ``problems``; a file
    with a problem of its own (not YAML, not the schema) is left out whole."""
    reg = Registry()
    for rel in sorted(files):
        kind = KIND_OF_FILE.get(rel)
        if kind is None:
            continue
        doc, problems = _document(rel, files[rel])
        reg.problems += problems
        if doc is None:
            continue
        reg.files.append(rel)
        _take(reg, kind, rel, doc, files[rel])
    return reg


def _document(rel: str, data: bytes) -> tuple[dict[str, Any] | None, list[Problem]]:
    from eee.store.jsonpath import format_path
    from eee.store.safeyaml import YAMLRefused, lines, load

    kind = KIND_OF_FILE[rel]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [Problem(rel, "$", "not UTF-8 text", "save the file as UTF-8", line)]
    try:
        doc = load(text)
    except YAMLRefused as exc:
        found = re.search(r"\(line (\d+)\)", str(exc))
        hint = "write plain YAML: mappings, lists and strings only (no anchors, aliases or tags)"
        return None, [Problem(rel, "$", f"not plain YAML: {exc}", hint, int(found.group(1)) if found else None)]
    if doc is None:
        doc = {}
    from eee.store.schemas import default_registry

    declared = doc.get("registry_schema") if isinstance(doc, dict) else None
    version = declared if isinstance(declared, str) and declared in SCHEMAS else None
    if version is None and isinstance(doc, dict) and "registry_schema" in doc:
        at = lines(text)
        known = ", ".join(v for v in SCHEMAS if v)
        return None, [
            Problem(
                rel,
                "$.registry_schema",
                f"registry_schema {declared!r} is not a released identity registry schema (released: {known})",
                f'write registry_schema: "{known.split(", ")[-1]}" in quotes, or leave it out for 1.0.0',
                at.get(("registry_schema",)),
            )
        ]
    validator = default_registry().other_validator(*SCHEMAS[version])
    errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.instance_path])[:20]
    if errors:
        at = lines(text)
        out = []
        for err in errors:
            path = tuple(err.instance_path)
            out.append(
                Problem(
                    rel,
                    format_path(list(path)),
                    f"{_schema_message(err)} (identity registry schema)",
                    _schema_hint(kind, path),
                    _line_of(at, path),
                )
            )
        return None, out
    if doc.get("kind") != kind:
        at = lines(text)
        return None, [
            Problem(
                rel,
                "$.kind",
                f"kind {doc.get('kind')!r} in {rel.rsplit('/', 1)[-1]}, which holds the {kind} ids",
                f"write kind: {kind} (each kind has its own file: {', '.join(f.rsplit('/', 1)[-1] for f in FILES.values())})",
                at.get(("kind",)),
            )
        ]
    return doc, []


def _schema_message(err: Any) -> str:
    text = str(err.message)
    return text if len(text) <= 300 else text[:297] + "..."


def _schema_hint(kind: str, path: tuple[Any, ...]) -> str:
    if "settled_at" in path or (len(path) >= 4 and path[-2] == "aliases"):
        return (
            "an alias is a name, or a mapping of name, settled_at and why; settled_at is the full id of a commit, "
            "in quotes ('...'): `eee identity alias` writes it"
        )
    if "hub" in path:
        return (
            "hub is a benchmark's Hugging Face dataset id (org/name) with its task ids and, from registry schema "
            "1.1.0 on, its source: {url: <the page that shows the id>, note: <what it shows>} (docs/guide/hub.md)"
        )
    return (
        f"an entry is `<canonical id>: {{aliases: [...], why: ...}}` under entries; see governance/README.md, "
        f"'The identity registry' (this file holds the {kind} ids)"
    )


def _line_of(at: dict[tuple[Any, ...], int], path: tuple[Any, ...]) -> int | None:
    for n in range(len(path), 0, -1):
        if path[:n] in at:
            return at[path[:n]]
    return None


def _take(reg: Registry, kind: str, rel: str, doc: dict[str, Any], data: bytes) -> None:
    """Add a schema-valid file's entries; consistency problems go to ``reg.problems``."""
    table = reg.tables[kind]
    at: dict[tuple[Any, ...], int] | None = None

    def problem(path: tuple[Any, ...], message: str, hint: str) -> None:
        nonlocal at
        from eee.store.jsonpath import format_path
        from eee.store.safeyaml import lines

        if at is None:
            at = lines(data.decode("utf-8"))
        reg.problems.append(Problem(rel, format_path(list(path)), message, hint, _line_of(at, path)))

    entries: dict[str, Any] = doc.get("entries") or {}
    for canonical, entry in entries.items():
        table.entries[canonical] = {k: v for k, v in (entry or {}).items() if k in ("why", "hub")}
    owners: dict[str, str] = {}
    for canonical, entry in entries.items():
        for i, raw in enumerate((entry or {}).get("aliases") or []):
            alias = (
                Alias(raw, canonical, position=i)
                if isinstance(raw, str)
                else Alias(raw["name"], canonical, raw.get("settled_at"), raw.get("why"), i)
            )
            path = ("entries", canonical, "aliases", i)
            if alias.name == canonical:
                problem(path, f"{alias.name!r} is listed as an alias of itself", "remove it from its own aliases")
                continue
            if alias.name in entries:
                problem(
                    path,
                    f"{alias.name!r} is both a canonical id and an alias of {canonical!r}",
                    f"merge the two entries: `{_command('alias', alias.name, '--to', canonical, '--kind', kind)}` "
                    "moves its aliases over",
                )
                continue
            if alias.name in owners:
                other = owners[alias.name]
                problem(
                    path,
                    f"{alias.name!r} is an alias of {other!r} already"
                    + ("" if other != canonical else " (listed twice)"),
                    "an alias stands for one canonical id: keep one of the two",
                )
                continue
            owners[alias.name] = canonical
            table.aliases[alias.name] = alias
    if kind == BENCHMARK:
        reg.folder_prefixes = [(p["prefix"], p["why"]) for p in doc.get("folder_prefixes") or []]
    if kind == MODEL:
        reg.folder_spellings = [(s["character"], s["written_as"], s["why"]) for s in doc.get("folder_spellings") or []]


def _command(*args: str) -> str:
    from eee.reporting.shown import command

    return command("identity", *args)
