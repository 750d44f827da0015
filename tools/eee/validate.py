"""The validator: collect files, check each, return a :class:`Summary`.

Checks, in order, for every file: strict JSON, the schema of the version the document
declares, and the repository rules (layout, names, uuids, sidecar pairing, scores).

Paths are plain absolute strings inside this module: it runs once per file of a whole
store, where pathlib's overhead would cost more than the checks.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eee.checks.record import folder_findings, score_findings, sidecar_pointer_findings
from eee.checks.schema import schema_findings
from eee.checks.sidecar import DEFAULT_CAP, check_sidecar
from eee.findings import ERROR, FileResult, Finding, Summary
from eee.governance import EVENT_SUFFIX, EVENTS_DIR
from eee.paths import (
    DATA_DIR,
    POINTER_SUFFIX,
    RECORD_SUFFIX,
    SIDECAR_SUFFIX,
    StorePath,
    classify,
    find_store_root,
    layout_problems,
    record_path_for_sidecar,
    sidecar_path_for,
)
from eee.schemas import EVAL, Registry, RegistryError, default_registry
from eee.strictjson import JSONProblem, loads

_GLOB_CHARS = set("*?[")
Progress = Callable[[int, int], None]


@dataclass
class Options:
    repo_checks: bool = True  # layout, naming and pairing rules of the store
    cap: int = DEFAULT_CAP  # findings shown per file
    root: Path | None = None  # store root; found from each path when None


class Display:
    """Absolute paths shown relative to the working directory when they lie below it."""

    def __init__(self) -> None:
        self.prefix = os.getcwd() + os.sep

    def __call__(self, absolute: str) -> str:
        return absolute[len(self.prefix) :] if absolute.startswith(self.prefix) else absolute


def display_path(path: str | Path) -> str:
    return Display()(os.path.abspath(path))


_EVENTS_MARKER = os.sep + EVENTS_DIR.replace("/", os.sep) + os.sep


def kind_of(path: str) -> str:
    if path.endswith(EVENT_SUFFIX) and _EVENTS_MARKER in path:
        return "event"
    if path.endswith(SIDECAR_SUFFIX + POINTER_SUFFIX):
        return "pointer"
    if path.endswith(SIDECAR_SUFFIX):
        return "sidecar"
    if path.endswith(RECORD_SUFFIX):
        return "record"
    return "other"


class Collected:
    """The files to check (absolute paths) and what walking the folders already listed."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.problems: list[Finding] = []
        self.listings: dict[str, list[str]] = {}


def collect(args: Iterable[str | Path]) -> Collected:
    """Files named by the arguments: files, globs and directories (recursively)."""
    found = Collected()
    raw: list[str] = []
    for arg in map(str, args):
        if os.path.lexists(arg):
            raw.extend(
                _walk(arg, found.listings, found.problems) if os.path.isdir(arg) and not os.path.islink(arg) else [arg]
            )
        elif _GLOB_CHARS & set(arg):
            matches = sorted(glob.glob(arg, recursive=True))
            if not matches:
                found.problems.append(
                    Finding(arg, "$", "no file matches this pattern", "check the pattern", check="input")
                )
            for m in matches:
                raw.extend(
                    _walk(m, found.listings, found.problems) if os.path.isdir(m) and not os.path.islink(m) else [m]
                )
        else:
            found.problems.append(Finding(arg, "$", "no such file or directory", "check the path", check="input"))
    seen: set[str] = set()
    for f in raw:
        absolute = os.path.abspath(f)
        if absolute not in seen:
            seen.add(absolute)
            found.files.append(absolute)
    return found


def _walk(top: str, listings: dict[str, list[str]], problems: list[Finding] | None = None) -> list[str]:
    """Files below ``top``: a store root means its data/ and governance/events/."""
    top = os.path.abspath(top)
    parts = top.split(os.sep)
    under_data = DATA_DIR in parts
    if not under_data and os.path.isdir(os.path.join(top, DATA_DIR)):
        out = _walk(os.path.join(top, DATA_DIR), listings, problems)
        events = os.path.join(top, EVENTS_DIR)
        return out + (_walk(events, listings, problems) if os.path.isdir(events) else [])
    if not under_data and parts[-1] == "governance" and os.path.isdir(os.path.join(top, "events")):
        return _walk(os.path.join(top, "events"), listings, problems)
    in_events = top.endswith(os.sep + EVENTS_DIR.replace("/", os.sep))
    out: list[str] = []
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as exc:
            if problems is not None:
                problems.append(
                    Finding(
                        directory,
                        "$",
                        f"cannot read the folder: {exc.strerror}",
                        "check its permissions",
                        check="input",
                    )
                )
            continue
        listings[directory] = [e.name for e in entries]
        for entry in entries:
            if entry.is_symlink():
                if under_data or in_events:
                    out.append(entry.path)
            elif entry.is_dir():
                if (under_data or not entry.name.startswith(".")) and not in_events:
                    stack.append(entry.path)
            elif (
                under_data
                or entry.name.endswith((RECORD_SUFFIX, SIDECAR_SUFFIX))
                or (in_events and entry.name.endswith(EVENT_SUFFIX) and not entry.name.startswith("."))
            ):
                out.append(entry.path)
    out.sort()
    return out


class Store:
    """Where each file sits in its store, plus caches shared by the checks."""

    def __init__(self, registry: Registry, options: Options, listings: dict[str, list[str]] | None = None) -> None:
        self.registry = registry
        self.options = options
        self._names = listings or {}
        self._listing: dict[str, dict[str, list[str]]] = {}
        self._roots: dict[str, str | None] = {}  # directory -> store root
        self.aggregates: dict[str, dict[str, Any] | None] = {}

    def locate(self, absolute: str) -> tuple[str, StorePath] | None:
        directory = os.path.dirname(absolute)
        try:
            root = self._roots[directory]
        except KeyError:
            root = os.path.abspath(self.options.root) if self.options.root else find_store_root(absolute)
            self._roots[directory] = root
        if root is None or not absolute.startswith(root + os.sep):
            return None
        rel = absolute[len(root) + 1 :]
        if os.sep != "/":  # pragma: no cover - POSIX in practice
            rel = rel.replace(os.sep, "/")
        return root, classify(rel)

    def siblings_by_case(self, directory: str) -> dict[str, list[str]]:
        found = self._listing.get(directory)
        if found is None:
            names = self._names.get(directory)
            if names is None:
                try:
                    names = os.listdir(directory)
                except OSError:
                    names = []
            found = {}
            for name in names:
                key = name.casefold()
                if key in found:
                    found[key].append(name)
                else:
                    found[key] = [name]
            self._listing[directory] = found
        return found

    def case_clash(self, root: str, rel: str) -> tuple[str, str] | None:
        """The first component of ``rel`` that differs only in case from a sibling on disk."""
        directory = root
        for part in rel.split("/"):
            names = self.siblings_by_case(directory).get(part.casefold())
            if names and (len(names) > 1 or names[0] != part):
                other = next(n for n in names if n != part)
                here = os.path.join(directory, part)[len(root) + 1 :]
                return here, other
            directory = directory + os.sep + part
        return None

    def aggregate(self, absolute: str) -> dict[str, Any] | None:
        if absolute not in self.aggregates:
            try:
                with open(absolute, "rb") as fh:
                    doc = loads(fh.read())
            except (OSError, JSONProblem):
                doc = None
            self.aggregates[absolute] = doc if isinstance(doc, dict) else None
        return self.aggregates[absolute]


def layout_findings(store: Store, absolute: str, file: str) -> tuple[StorePath | None, list[Finding]]:
    located = store.locate(absolute)
    if located is None:
        return None, [
            Finding(
                file,
                "$",
                "not inside a data/ folder of a store",
                "records live at data/<benchmark>/<developer>/<model>/<uuid>.json; use --schema-only for a loose file",
                check="layout",
            )
        ]
    root, where = located
    out = [Finding(file, "$", msg, hint, check="layout") for msg, hint in layout_problems(where.rel, where)]
    clash = store.case_clash(root, where.rel)
    if clash:
        out.append(
            Finding(
                file,
                "$",
                f"{clash[0]!r} differs only in letter case from {clash[1]!r} beside it",
                "two paths that differ only in case collide on macOS and Windows; use the existing spelling",
                check="layout",
            )
        )
    return where, out


def check_record(absolute: str, file: str, store: Store, result: FileResult) -> dict[str, Any] | None:
    """Check one aggregate record; returns the parsed document (None when unreadable)."""
    opts = store.options
    findings = result.findings
    where: StorePath | None = None
    if opts.repo_checks:
        where, found = layout_findings(store, absolute, file)
        findings.extend(found)
    if os.path.islink(absolute):
        findings.append(
            Finding(
                file,
                "$",
                "is a symbolic link",
                "records must be regular files: copy the content in place of the link",
                check="layout",
            )
        )
        return None
    try:
        with open(absolute, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        findings.append(Finding(file, "$", f"cannot read the file: {exc.strerror}", None, check="input"))
        return None
    try:
        doc = loads(data)
    except JSONProblem as problem:
        findings.append(Finding(file, problem.pointer, problem.message, problem.hint, line=problem.line, check="json"))
        return None
    if doc.__class__ is not dict:
        findings.append(
            Finding(
                file,
                "$",
                f"a record must be a JSON object, not {'a list' if isinstance(doc, list) else type(doc).__name__}",
                "write one record per file as a JSON object",
                check="json",
            )
        )
        return None
    declared = doc.get("schema_version")
    version = store.registry.resolve(declared, EVAL)
    schema_valid = False
    if version is None:
        what = "has no schema_version" if declared is None else f"declares unknown schema_version {declared!r}"
        findings.append(
            Finding(
                file,
                "$.schema_version",
                f"record {what}; supported versions: {store.registry.supported_text()}",
                f"set schema_version to the version the record was written for (new records: {store.registry.current})",
                check="version",
            )
        )
    else:
        result.schema_version = version
        validator = store.registry.validator(version, EVAL)
        schema_valid = validator.is_valid(doc)
        if not schema_valid:
            findings.extend(schema_findings(validator, doc, file, version, limit=opts.cap))
    if opts.repo_checks:
        findings.extend(score_findings(doc, file, schema_valid))
        if where is not None and where.kind == "record" and where.benchmark is not None:
            findings.extend(folder_findings(doc, file, where))
            if "detailed_evaluation_results" in doc:
                findings.extend(sidecar_pointer_findings(doc, file, where))
    return doc


def _check_records(
    store: Store, records: list[str], display: Display, queued: set[str], extra: list[str]
) -> Iterable[FileResult]:
    repo = store.options.repo_checks
    for absolute in records:
        file = display(absolute)
        result = FileResult(file, "record")
        doc = check_record(absolute, file, store, result)
        if doc is not None:
            der = doc.get("detailed_evaluation_results")
            # keep whole documents only where a sidecar needs them; others shrink to a stub
            store.aggregates[absolute] = doc if isinstance(der, dict) else {"evaluation_id": doc.get("evaluation_id")}
            if repo and isinstance(der, dict):
                sidecar = sidecar_path_for(absolute)
                name = os.path.basename(sidecar)
                if os.path.exists(sidecar):
                    if sidecar not in queued:  # a record and its sidecar are checked together
                        queued.add(sidecar)
                        extra.append(sidecar)
                elif not os.path.lexists(sidecar + POINTER_SUFFIX):
                    result.findings.append(
                        Finding(
                            file,
                            "$.detailed_evaluation_results",
                            f"declares a sidecar but neither {name} nor its DVC pointer {name}.dvc exists",
                            f"add the sidecar with `eee samples add {display(sidecar)}`, or drop detailed_evaluation_results",
                            check="sidecar",
                        )
                    )
        yield result


def _check_sidecar_file(store: Store, absolute: str, file: str) -> FileResult:
    options = store.options
    result = FileResult(file, "sidecar")
    aggregate = None
    if options.repo_checks:
        result.findings.extend(layout_findings(store, absolute, file)[1])
    if os.path.islink(absolute):
        result.findings.append(
            Finding(
                file,
                "$",
                "is a symbolic link",
                "sidecars must be regular files (DVC keeps them; do not link them)",
                check="layout",
            )
        )
        return result
    if options.repo_checks:
        record = record_path_for_sidecar(absolute)
        if not os.path.exists(record):
            result.findings.append(
                Finding(
                    file,
                    "$",
                    f"sidecar without aggregate: {os.path.basename(record)} does not exist beside it",
                    "a sidecar belongs to the record with the same uuid in the same folder; add the record or remove the file",
                    check="sidecar",
                )
            )
        else:
            aggregate = store.aggregate(record)
            if aggregate is not None and not isinstance(aggregate.get("detailed_evaluation_results"), dict):
                result.findings.append(
                    Finding(
                        file,
                        "$",
                        f"{os.path.basename(record)} does not declare this sidecar (no detailed_evaluation_results)",
                        "the record must point at its sidecar: set detailed_evaluation_results.file_path, checksum and total_rows",
                        check="sidecar",
                    )
                )
                aggregate = None
    try:
        check_sidecar(Path(absolute), file, store.registry, aggregate, result, cap=options.cap)
    except OSError as exc:
        result.findings.append(Finding(file, "$", f"cannot read the file: {exc.strerror}", None, check="input"))
    return result


def _check_other(store: Store, absolute: str, file: str) -> FileResult | None:
    kind = kind_of(absolute)
    if not store.options.repo_checks:
        return FileResult(file, kind) if kind == "pointer" else None
    result = FileResult(file, kind)
    where, found = layout_findings(store, absolute, file)
    result.findings.extend(found)
    if kind == "pointer" and where is not None:
        result.findings.extend(_pointer_findings(absolute, file))
        record = record_path_for_sidecar(absolute[: -len(POINTER_SUFFIX)])
        if not os.path.exists(record):
            result.findings.append(
                Finding(
                    file,
                    "$",
                    f"DVC pointer without aggregate: {os.path.basename(record)} does not exist beside it",
                    "add the record or remove the pointer",
                    check="sidecar",
                )
            )
    if os.path.islink(absolute):
        result.findings.append(Finding(file, "$", "is a symbolic link", "use regular files only", check="layout"))
    return result


def _pointer_findings(absolute: str, file: str) -> list[Finding]:
    """A DVC pointer must be one, and name its own sidecar."""
    from eee.dvcpointer import PointerError, parse

    sidecar_name = os.path.basename(absolute)[: -len(POINTER_SUFFIX)]
    try:
        with open(absolute, encoding="utf-8") as fh:
            pointer = parse(fh.read())
    except (OSError, UnicodeDecodeError, PointerError) as exc:
        return [
            Finding(file, "$", f"unreadable DVC pointer: {exc}", "re-create it with `eee samples add`", check="sidecar")
        ]
    if pointer.path != sidecar_name:
        return [
            Finding(
                file,
                "$.outs[0].path",
                f"the pointer tracks {pointer.path!r}, not {sidecar_name!r}",
                "a pointer sits beside its sidecar and names it; re-create it with `eee samples add`",
                check="sidecar",
            )
        ]
    return []


def run(
    args: Iterable[str | Path],
    options: Options | None = None,
    registry: Registry | None = None,
    progress: Progress | None = None,
) -> Summary:
    options = options or Options()
    try:
        registry = registry or default_registry()
    except RegistryError as exc:
        return Summary([], fatal=str(exc))
    found = collect(args)
    results = [FileResult(p.file, "input", findings=[p]) for p in found.problems]
    store = Store(registry, options, found.listings)
    display = Display()
    events: list[str] = []
    files: list[str] = []
    for f in found.files:
        (events if kind_of(f) == "event" else files).append(f)
    records = [f for f in files if f.endswith(RECORD_SUFFIX)]
    sidecars = [f for f in files if f.endswith(SIDECAR_SUFFIX)]
    others = [f for f in files if not f.endswith((RECORD_SUFFIX, SIDECAR_SUFFIX))]
    queued = set(sidecars)
    total = len(found.files)

    done = 0
    for result in _check_records(store, records, display, queued, sidecars):
        results.append(result)
        done += 1
        if progress:
            progress(done, total)
    total = len(records) + len(sidecars) + len(others)
    for absolute in sidecars:
        results.append(_check_sidecar_file(store, absolute, display(absolute)))
        done += 1
        if progress:
            progress(done, total)
    for absolute in others:
        result = _check_other(store, absolute, display(absolute))
        if result is not None:
            results.append(result)
        done += 1
        if progress:
            progress(done, total)
    results.extend(_check_events(events, display))
    return Summary(results)


def _check_events(events: list[str], display: Display) -> list[FileResult]:
    """Event files, grouped by the store they belong to (the ledger is per store)."""
    if not events:
        return []
    from eee.checks.events import check_events

    by_root: dict[str, list[str]] = {}
    for path in events:
        root = path[: path.rindex(_EVENTS_MARKER)]
        by_root.setdefault(root, []).append(path)
    out: list[FileResult] = []
    for root, paths in sorted(by_root.items()):
        out.extend(check_events(paths, root, display))
    return out


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity == ERROR for f in findings)
