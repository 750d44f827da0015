"""The validator: check the files of a tree, return a :class:`Summary`.

:func:`validate_tree` reads a :class:`eee.store.tree.Tree` (the work tree, a git commit, planned
files over the store) and checks, in order, for every file: strict JSON, the schema of the
version the document declares, and the store's rules (layout, names, uuids, sidecar
pairing, scores). :func:`run` is the command line's view: paths on disk, collected into
the work trees of the stores they belong to (and loose files, checked on their own).

Paths are plain strings inside this module: it runs once per file of a whole store, where
pathlib's overhead would cost more than the checks.
"""

from __future__ import annotations

import gc
import glob
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eee.dvc.pointer import Pointer
from eee.reporting.findings import WARNING, FileResult, Finding, Summary, Tally
from eee.rules.layout import case_clash
from eee.rules.record import benchmark_findings, folder_findings, score_findings, sidecar_pointer_findings
from eee.rules.schema import document_findings
from eee.rules.sidecar import DEFAULT_CAP, check_sidecar, declared_sidecar_findings, read_pointer
from eee.store.limits import RECORD_MAX_BYTES
from eee.store.paths import (
    DATA_DIR,
    DVC_POINTER,
    EVENT,
    EVENT_SUFFIX,
    EVENTS_DIR,
    POINTER_SUFFIX,
    RECORD_SUFFIX,
    SIDECAR_SUFFIX,
    StorePath,
    clash_text,
    classify,
    file_kind,
    find_store_root,
    layout_problems,
    record_path_for_sidecar,
    sidecar_path_for,
)
from eee.store.schemas import EVAL, INSTANCE, Registry, RegistryError, default_registry
from eee.store.strictjson import JSONProblem, attach_lines, loads
from eee.store.tree import SYMLINK, Tree, Unreadable, WorkTree

_GLOB_CHARS = set("*?[")
Progress = Callable[[int, int], None]


@dataclass
class Options:
    repo_checks: bool = True  # layout, naming and pairing rules of the store
    cap: int = DEFAULT_CAP  # findings shown per file
    root: Path | None = None  # store root; found from each path when None
    case_clash: bool = True  # names against the tree; off where a commit rule checks them (the audit)
    jobs: int | None = None  # worker processes; None: the machine's cores for a whole store, 1 for a few files


class Display:
    """Absolute paths shown relative to the working directory when they lie below it."""

    def __init__(self) -> None:
        self.prefix = os.getcwd() + os.sep

    def __call__(self, absolute: str) -> str:
        return absolute[len(self.prefix) :] if absolute.startswith(self.prefix) else absolute


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
            if os.path.isdir(arg) and not os.path.islink(arg):
                below = _walk(arg, found.listings, found.problems)
                if not below:
                    found.problems.append(_nothing_here(arg))
                raw.extend(below)
            else:
                raw.append(arg)
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


def _nothing_here(folder: str) -> Finding:
    return Finding(
        folder,
        "$",
        "0 files checked: no records, sidecars, pointers or events in this folder",
        "check the path: a wrong path in CI would otherwise pass without checking anything",
        severity=WARNING,
        check="input",
    )


def _walk(top: str, listings: dict[str, list[str]], problems: list[Finding] | None = None) -> list[str]:
    """Files below ``top``, sorted: a store root means its data/ and governance/events/."""
    return list(walk(top, listings, problems))


def walk(
    top: str, listings: dict[str, list[str]] | None = None, problems: list[Finding] | None = None
) -> Iterator[str]:
    """The files below ``top`` in sorted order, as the walk reaches them (a store root means
    its data/ and governance/events/); each folder's names go to ``listings`` when given."""
    for directory, names in walk_folders(top, listings, problems):
        for name in names:
            yield os.path.join(directory, name)


def walk_folders(
    top: str, listings: dict[str, list[str]] | None = None, problems: list[Finding] | None = None
) -> Iterator[tuple[str, list[str]]]:
    """:func:`walk` as (folder, the names of consecutive files in it): the files of a folder
    come in one piece unless a subfolder's files sort between them.

    Depth first, each folder's entries in the order of their paths: a folder's name sorts
    as itself followed by "/", so the paths come out as ``sorted()`` would put them."""
    top = os.path.abspath(top)
    parts = top.split(os.sep)
    under_data = DATA_DIR in parts
    if not under_data and os.path.isdir(os.path.join(top, DATA_DIR)):
        yield from walk_folders(os.path.join(top, DATA_DIR), listings, problems)
        events = os.path.join(top, EVENTS_DIR)
        if os.path.isdir(events):
            yield from walk_folders(events, listings, problems)
        return
    if not under_data and parts[-1] == "governance" and os.path.isdir(os.path.join(top, "events")):
        yield from walk_folders(os.path.join(top, "events"), listings, problems)
        return
    in_events = top.endswith(os.sep + EVENTS_DIR.replace("/", os.sep))
    yield from _walk_folder(top, under_data, in_events, listings, problems)


def _walk_folder(
    directory: str,
    under_data: bool,
    in_events: bool,
    listings: dict[str, list[str]] | None,
    problems: list[Finding] | None,
) -> Iterator[tuple[str, list[str]]]:
    try:
        with os.scandir(directory) as it:
            entries = list(it)
    except OSError as exc:
        if problems is not None:
            problems.append(
                Finding(
                    directory, "$", f"cannot read the folder: {exc.strerror}", "check its permissions", check="input"
                )
            )
        return
    if listings is not None:
        listings[directory] = [e.name for e in entries]
    files: list[str] = []
    folders: list[str] = []
    for entry in entries:
        name = entry.name
        if entry.is_symlink():
            if under_data or in_events:
                files.append(name)
        elif entry.is_dir():
            if (under_data or not name.startswith(".")) and not in_events:
                folders.append(name)
        elif (
            under_data
            or name.endswith((RECORD_SUFFIX, SIDECAR_SUFFIX))
            or (in_events and name.endswith(EVENT_SUFFIX) and not name.startswith("."))
        ):
            files.append(name)
    del entries
    if not folders:  # a model's folder: its files, sorted
        if files:
            files.sort()
            yield directory, files
        return
    # a folder's name sorts as itself followed by "/" (its files' paths)
    keyed = sorted([(name, False) for name in files] + [(name + "/", True) for name in folders])
    run: list[str] = []
    for key, is_folder in keyed:
        if is_folder:
            if run:
                yield directory, run
                run = []
            yield from _walk_folder(os.path.join(directory, key[:-1]), under_data, in_events, listings, problems)
        else:
            run.append(key)
    if run:
        yield directory, run


class _Item:
    """One file to check: its tree, its path there, and whether it lies in a store."""

    __slots__ = ("in_store", "rel", "tree")

    def __init__(self, tree: Tree, rel: str, in_store: bool = True) -> None:
        self.tree = tree
        self.rel = rel
        self.in_store = in_store

    def key(self) -> tuple[int, str]:
        return id(self.tree), self.rel

    def beside(self, rel: str) -> _Item:
        return _Item(self.tree, rel, self.in_store)


class Store:
    """The registry and options of a run, plus caches shared by the checks."""

    def __init__(self, registry: Registry, options: Options) -> None:
        self.registry = registry
        self.options = options
        self.aggregates: dict[tuple[int, str], dict[str, Any] | None] = {}
        self.pointers: dict[tuple[int, str], Any] = {}  # a chunk's DVC pointers, read once for sidecar and pointer

    def pointer(self, item: _Item) -> Any:
        """The DVC pointer ``item`` parsed, or why it cannot be (:func:`read_pointer`)."""
        key = item.key()
        if key not in self.pointers:
            self.pointers[key] = read_pointer(item.tree, item.rel)
        return self.pointers[key]

    def read_before(self, item: _Item) -> bool:
        """Whether ``item`` (a record) was read in this chunk, so exists (no need to ask the tree)."""
        return self.aggregates.get(item.key()) is not None

    def clear(self) -> None:
        self.aggregates.clear()
        self.pointers.clear()

    def aggregate(self, item: _Item) -> dict[str, Any] | None:
        key = item.key()
        if key not in self.aggregates:
            try:
                doc = loads(item.tree.read(item.rel, RECORD_MAX_BYTES))
            except (Unreadable, JSONProblem):
                doc = None
            self.aggregates[key] = doc if isinstance(doc, dict) else None
        return self.aggregates[key]


def layout_findings(store: Store, item: _Item, file: str) -> tuple[StorePath | None, list[Finding]]:
    if not item.in_store:
        return None, [
            Finding(
                file,
                "$",
                "not inside a data/ folder of a store",
                "records live at data/<benchmark>/<developer>/<model>/<uuid>.json; use --schema-only for a loose file",
                check="layout",
            )
        ]
    where = classify(item.rel)
    out = [Finding(file, "$", msg, hint, check="layout") for msg, hint in layout_problems(where.rel, where)]
    clash = case_clash(item.tree, item.rel) if store.options.case_clash else None
    if clash:
        out.append(
            Finding(
                file,
                "$",
                f"{clash[0]!r} {clash_text(clash[0].rsplit('/', 1)[-1], clash[1].rsplit('/', 1)[-1])} {clash[1]!r} beside it",
                "two paths that differ only in case collide on macOS and Windows; use the existing spelling",
                check="layout",
            )
        )
    return where, out


def check_record(item: _Item, file: str, store: Store, result: FileResult) -> dict[str, Any] | None:
    """Check one aggregate record; returns the parsed document (None when unreadable)."""
    opts = store.options
    findings = result.findings
    where: StorePath | None = None
    if opts.repo_checks:
        where, found = layout_findings(store, item, file)
        findings.extend(found)
    try:
        data = item.tree.read(item.rel, RECORD_MAX_BYTES)  # never through a link: a link is refused here
    except Unreadable as exc:
        refused = exc.finding
        if item.tree.mode(item.rel) == SYMLINK:
            refused = Finding(
                file,
                "$",
                "is a symbolic link",
                "records must be regular files: copy the content in place of the link",
                check="layout",
            )
        findings.append(refused)
        return None
    try:
        doc = loads(data)
    except JSONProblem as problem:
        findings.append(Finding(file, problem.pointer, problem.message, problem.hint, line=problem.line, check="json"))
        attach_lines(findings[-1:], data)  # a duplicate key: the line of its object
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
        schema_valid, found = document_findings(store.registry, version, EVAL, doc, file, limit=opts.cap)
        findings.extend(found)
    if opts.repo_checks:
        findings.extend(score_findings(doc, file, schema_valid))
        if where is not None and where.kind == "record" and where.benchmark is not None:
            findings.extend(folder_findings(doc, file, where))
            findings.extend(benchmark_findings(doc, file, where, folders=lambda: _benchmark_folders(item.tree)))
            if "detailed_evaluation_results" in doc:
                findings.extend(sidecar_pointer_findings(doc, file, where))
        findings.extend(declared_sidecar_findings(doc, file))
    if findings:
        attach_lines(findings, data, doc)  # only files with findings pay for the line lookup
    return doc


def _benchmark_folders(tree: Tree) -> list[str]:
    """The benchmark folders of a store (for the folder a record belongs in)."""
    return [name for name in tree.names(DATA_DIR) if not name.startswith(".")]


def _check_records(
    store: Store, records: list[_Item], queued: set[tuple[int, str]], extra: list[_Item]
) -> Iterable[FileResult]:
    repo = store.options.repo_checks
    for item in records:
        tree = item.tree
        file = tree.display(item.rel)
        result = FileResult(file, "record")
        doc = check_record(item, file, store, result)
        if doc is not None:
            der = doc.get("detailed_evaluation_results")
            # keep whole documents only where a sidecar needs them; others shrink to a stub
            store.aggregates[item.key()] = doc if isinstance(der, dict) else {"evaluation_id": doc.get("evaluation_id")}
            if repo and isinstance(der, dict):
                sidecar = item.beside(sidecar_path_for(item.rel))
                name = sidecar.rel.rsplit("/", 1)[-1]
                if sidecar.key() in queued or tree.exists(sidecar.rel):  # queued: the walk found it
                    if sidecar.key() not in queued:  # a record and its sidecar are checked together
                        queued.add(sidecar.key())
                        extra.append(sidecar)
                elif not tree.exists(sidecar.rel + POINTER_SUFFIX):
                    result.findings.append(
                        Finding(
                            file,
                            "$.detailed_evaluation_results",
                            f"declares a sidecar but neither {name} nor its DVC pointer {name}.dvc exists",
                            f"add the sidecar with `eee samples add {tree.display(sidecar.rel)}`, or drop detailed_evaluation_results",
                            check="sidecar",
                        )
                    )
                    _attach_lines_from(result.findings, tree, item.rel)
        yield result


def _attach_lines_from(findings: list[Finding], tree: Tree, rel: str) -> None:
    try:
        attach_lines(findings, tree.read(rel))
    except Unreadable:
        pass


def _check_sidecar_file(store: Store, item: _Item, file: str) -> FileResult:
    options = store.options
    tree = item.tree
    result = FileResult(file, "sidecar")
    aggregate = None
    if options.repo_checks:
        result.findings.extend(layout_findings(store, item, file)[1])
    if tree.mode(item.rel) == SYMLINK:
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
        record = item.beside(record_path_for_sidecar(item.rel))
        record_name = record.rel.rsplit("/", 1)[-1]
        if not store.read_before(record) and not tree.exists(record.rel):
            result.findings.append(
                Finding(
                    file,
                    "$",
                    f"sidecar without aggregate: {record_name} does not exist beside it",
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
                        f"{record_name} does not declare this sidecar (no detailed_evaluation_results)",
                        "the record must point at its sidecar: set detailed_evaluation_results.file_path, checksum and total_rows",
                        check="sidecar",
                    )
                )
                aggregate = None
    pointer = store.pointer(item.beside(item.rel + POINTER_SUFFIX))
    check_sidecar(tree, item.rel, file, store.registry, aggregate, result, cap=options.cap, pointer=pointer)
    return result


def _check_other(store: Store, item: _Item, file: str) -> FileResult | None:
    tree = item.tree
    kind = file_kind(item.rel)
    if not store.options.repo_checks:
        return FileResult(file, kind) if kind == DVC_POINTER else None
    result = FileResult(file, kind)
    where, found = layout_findings(store, item, file)
    result.findings.extend(found)
    pointer = None
    if kind == DVC_POINTER and where is not None:
        pointer = store.pointer(item)
        result.findings.extend(_pointer_findings(pointer, item.rel, file))
        record = item.beside(record_path_for_sidecar(item.rel[: -len(POINTER_SUFFIX)]))
        if not store.read_before(record) and not tree.exists(record.rel):
            result.findings.append(
                Finding(
                    file,
                    "$",
                    f"DVC pointer without aggregate: {record.rel.rsplit('/', 1)[-1]} does not exist beside it",
                    "add the record or remove the pointer",
                    check="sidecar",
                )
            )
    if not isinstance(pointer, Pointer) and tree.mode(item.rel) == SYMLINK:  # a pointer read was no link
        result.findings.append(Finding(file, "$", "is a symbolic link", "use regular files only", check="layout"))
    return result


_EMPTY_MD5 = "d41d8cd98f00b204e9800998ecf8427e"


def _pointer_findings(pointer: Any, rel: str, file: str) -> list[Finding]:
    """A DVC pointer (as :func:`read_pointer` read it) must be one, and name its own sidecar."""
    sidecar_name = rel.rsplit("/", 1)[-1][: -len(POINTER_SUFFIX)]
    if isinstance(pointer, Exception):
        problem = pointer.finding.message if isinstance(pointer, Unreadable) else str(pointer)
        return [
            Finding(
                file, "$", f"unreadable DVC pointer: {problem}", "re-create it with `eee samples add`", check="sidecar"
            )
        ]
    if pointer.size == 0 or pointer.md5 == _EMPTY_MD5:
        return [
            Finding(
                file,
                "$.outs[0].size",
                "the pointer tracks an empty sidecar (0 bytes)",
                "a sidecar holds at least one row; a record without per-sample results has no sidecar and no pointer",
                check="sidecar",
            )
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


def store_files(tree: Tree) -> list[str]:
    """What validating a whole store checks: every file under data/ and the event files."""
    events = [
        rel
        for rel in tree.files(EVENTS_DIR)
        if "/" not in rel[len(EVENTS_DIR) + 1 :]
        and (tree.mode(rel) == SYMLINK or (rel.endswith(EVENT_SUFFIX) and not rel.rsplit("/", 1)[-1].startswith(".")))
    ]
    return tree.files(DATA_DIR) + events


def validate_tree(
    tree: Tree,
    paths: Iterable[str] | None = None,
    options: Options | None = None,
    progress: Progress | None = None,
    registry: Registry | None = None,
) -> Summary:
    """Check ``paths`` of ``tree`` (default: the whole store: data/ and the events)."""
    rels = store_files(tree) if paths is None else list(dict.fromkeys(paths))
    return _validate([_Item(tree, rel) for rel in rels], options or Options(), progress, registry)


# The sections of a run's results, in the order a report lists them.
INPUT, RECORDS, SIDECARS, EXTRAS, OTHERS, EVENTS = range(6)
SECTIONS = 6


class Sink:
    """Where a run's results go: each section's results arrive in order, a batch at a time
    (sections may interleave). This one keeps them all, for a :class:`Summary`;
    :class:`eee.reporting.reporters.Streamed` writes them to the report as they come. ``clean`` says
    whether workers may send the report entries of files without findings ready-made."""

    clean = False

    def __init__(self) -> None:
        self.sections: list[list[FileResult]] = [[] for _ in range(SECTIONS)]
        self.fatal: str | None = None

    def add(self, section: int, batch: Iterable[Any]) -> None:
        self.sections[section].extend(batch)

    def summary(self) -> Summary:
        return Summary([r for section in self.sections for r in section], self.fatal)


def _validate(
    items: Iterable[_Item],
    options: Options,
    progress: Progress | None = None,
    registry: Registry | None = None,
    problems: list[Finding] | None = None,
    sink: Sink | None = None,
    walked: str | None = None,
) -> Summary:
    """Check ``items``, or the files below the folder ``walked`` as the walk reaches them,
    chunk after chunk, none of them (nor the folders' names) held for the whole run."""
    sink = sink if sink is not None else Sink()
    try:
        registry = registry or default_registry()
    except RegistryError as exc:
        sink.fatal = str(exc)
        return sink.summary()
    store = Store(registry, options)
    events: list[_Item] = []
    with _collect_less():
        if walked is not None:
            problems = problems if problems is not None else []
            _run_streamed(store, _plan_walk(walked, options, events, problems), sink)
        else:
            files: list[_Item] = []
            for item in items:
                (events if file_kind(item.rel) == EVENT else files).append(item)
            _run_planned(store, files, len(files) + len(events), progress, sink)
    if problems:
        sink.add(INPUT, [FileResult(p.file, "input", findings=[p]) for p in problems])
    sink.add(EVENTS, _check_events(events))
    return sink.summary()


# -- the driver: records in chunks of whole folders, on several cores for a whole store ---------

GC_THRESHOLD = 50_000  # allocations between the cyclic collector's young-generation runs while checking


@contextmanager
def _collect_less() -> Iterator[None]:
    """The cyclic garbage collector run less often while files are checked: parsed documents
    are trees (no cycles, freed by their reference counts) and a chunk keeps some of them,
    so the default (every 700 allocations, each run walking the survivors) costs ~10% of
    a whole-store run for nothing. Forked workers inherit the setting."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], GC_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


PARALLEL_MIN = 2_000  # files; fewer (a hook's few staged files) are checked in this process
CHUNK = 250  # records per chunk: a folder's record and sidecar always share one


def _folder(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


class _Chunk:
    """The results of one chunk, each tagged with its place in the one-process order
    (streamed chunks: the sections' results in order, each tagged 0)."""

    __slots__ = ("count", "extras", "others", "records", "sidecars")

    def __init__(self) -> None:
        self.records: list[tuple[int, Any]] = []
        self.sidecars: list[tuple[int, Any]] = []
        self.extras: list[Any] = []  # sidecars found beside a record, not named in the run
        self.others: list[tuple[int, Any]] = []
        self.count = 0

    def cleaned(self) -> _Chunk:
        """The chunk as a worker sends it to a report: each run of files without findings
        as one :class:`eee.reporting.reporters.Clean` piece (their entries written here, on this core)."""
        from eee.reporting.reporters import Clean, file_bytes

        def pieces(results: list[Any]) -> list[Any]:
            out: list[Any] = []
            run: list[bytes] = []
            tally = Tally()
            for result in results:
                if result.findings or result.suppressed:
                    if run:
                        out.append(Clean(b"".join(run), tally))
                        run, tally = [], Tally()
                    out.append(result)
                else:
                    run.append(file_bytes(result))
                    tally.add(result)
            if run:
                out.append(Clean(b"".join(run), tally))
            return out

        out = _Chunk()
        out.count = self.count
        out.records = [(0, p) for p in pieces([r for _, r in self.records])]
        out.sidecars = [(0, p) for p in pieces([r for _, r in self.sidecars])]
        out.extras = pieces(self.extras)
        out.others = [(0, p) for p in pieces([r for _, r in self.others])]
        return out


_Sections = tuple[list[tuple[int, _Item]], list[tuple[int, _Item]], list[tuple[int, _Item]]]
_Described = tuple[list[tuple[str, str, bool, int]], list[tuple[str, str, bool, int]], list[tuple[str, str, bool, int]]]
_Names = dict[str, list[str]]  # absolute folder -> the names in it, as the walk listed them


def _describe(sections: _Sections, names: _Names | None = None) -> tuple[_Described, _Names | None]:
    """Items as plain strings, for a worker: it reads the files through trees of its own and
    never touches this process's objects (whose pages it shares after the fork); ``names``:
    the folders of the chunk the walk has listed (the worker need not list them again)."""
    described = tuple(
        [(item.tree.root, item.rel, item.in_store, i) for i, item in section]  # type: ignore[attr-defined]
        for section in sections
    )
    return described, names  # type: ignore[return-value]


class _Work:
    """The files of a run split into chunks of whole folders (a record and its sidecar in
    the same one), and the merge of the chunks' results back into the one-process order:
    every record, then every sidecar, then the other files (pointers, ...)."""

    def __init__(self, store: Store, files: list[_Item]) -> None:
        self.store = store
        self.records = [i for i in files if i.rel.endswith(RECORD_SUFFIX)]
        self.sidecars = [i for i in files if i.rel.endswith(SIDECAR_SUFFIX)]
        self.others = [i for i in files if not i.rel.endswith((RECORD_SUFFIX, SIDECAR_SUFFIX))]
        # chunk of each folder: consecutive records, cut at a folder boundary past CHUNK
        chunk_of: dict[tuple[int, str], int] = {}  # only while planning: a store has ~one folder a record
        count = n = 0
        for item in self.records:
            key = (id(item.tree), _folder(item.rel))
            if key not in chunk_of:
                if count >= CHUNK:
                    n, count = n + 1, 0
                chunk_of[key] = n
            count += 1
        self.chunks = n + 1
        self.plan: list[tuple[list[int], list[int], list[int]]] = [([], [], []) for _ in range(self.chunks)]
        for section, items in enumerate((self.records, self.sidecars, self.others)):
            for index, item in enumerate(items):
                where = chunk_of.get((id(item.tree), _folder(item.rel)), self.chunks - 1)
                self.plan[where][section].append(index)
        self._records: list[FileResult | None] = [None] * len(self.records)
        self._sidecars: list[FileResult | None] = [None] * len(self.sidecars)
        self._others: list[FileResult | None] = [None] * len(self.others)
        self._extras: list[list[FileResult]] = [[] for _ in range(self.chunks)]
        self._placed = 0

    def sections(self, n: int) -> tuple[list[tuple[int, _Item]], ...]:
        return tuple(
            [(i, items[i]) for i in ix]
            for items, ix in zip((self.records, self.sidecars, self.others), self.plan[n], strict=True)
        )

    def place(self, chunk: _Chunk) -> None:
        for index, result in chunk.records:
            self._records[index] = result
        for index, result in chunk.sidecars:
            self._sidecars[index] = result
        for index, result in chunk.others:
            self._others[index] = result
        self._extras[self._placed] = chunk.extras
        self._placed += 1

    def emit(self, sink: Sink) -> None:
        sink.add(RECORDS, [r for r in self._records if r is not None])
        sink.add(SIDECARS, [r for r in self._sidecars if r is not None])
        sink.add(EXTRAS, [r for extras in self._extras for r in extras])
        sink.add(OTHERS, [r for r in self._others if r is not None])


def _check_chunk(
    store: Store, records: list[tuple[int, _Item]], sidecars: list[tuple[int, _Item]], others: list[tuple[int, _Item]]
) -> _Chunk:
    """Check a chunk of whole folders: its records, their sidecars, the other files. A sidecar
    named in the run lies in its record's folder, so in the same chunk (``queued``)."""
    store.clear()  # what pairing needs lies in the chunk: memory stays flat
    out = _Chunk()
    queued = {item.key() for _, item in sidecars}
    extra: list[_Item] = []
    checked = _check_records(store, [item for _, item in records], queued, extra)
    for (index, _item), result in zip(records, checked, strict=True):
        out.records.append((index, result))
    for index, item in sidecars:
        out.sidecars.append((index, _check_sidecar_file(store, item, item.tree.display(item.rel))))
    for item in extra:
        out.extras.append(_check_sidecar_file(store, item, item.tree.display(item.rel)))
    for index, item in others:
        result = _check_other(store, item, item.tree.display(item.rel))
        if result is not None:
            out.others.append((index, result))
    out.count = len(records) + len(sidecars) + len(others) + len(extra)
    store.clear()
    return out


def _jobs(wanted: int | None, files: list[_Item]) -> int:
    """Worker processes for a run: one for a few files, else the machine's cores (work
    trees only: a git tree's reader process cannot be shared across a fork)."""
    if wanted is not None and wanted <= 1:
        return 1
    if (wanted is None and len(files) < PARALLEL_MIN) or not all(isinstance(i.tree, WorkTree) for i in files):
        return 1
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1  # pragma: no cover - Windows
    return wanted or os.cpu_count() or 1


_STORE: Store | None = None  # the run a forked worker inherits
_CLEAN = False  # whether a worker sends files without findings as ready-made report entries


def _check_described(store: Store, task: tuple[_Described, _Names | None]) -> _Chunk:
    """Check a described chunk through trees of its own (one per store root, for this chunk
    only: their listings go with it, and memory stays flat)."""
    described, names = task
    names = names if names is not None else {}
    trees: dict[str, WorkTree] = {}

    def items(entries: list[tuple[str, str, bool, int]]) -> list[tuple[int, _Item]]:
        out = []
        for root, rel, in_store, index in entries:
            if root not in trees:
                trees[root] = WorkTree(root, names)
            out.append((index, _Item(trees[root], rel, in_store)))
        return out

    records, sidecars, others = described
    return _check_chunk(store, items(records), items(sidecars), items(others))


def _in_worker(task: tuple[_Described, _Names | None]) -> _Chunk:
    assert _STORE is not None
    chunk = _check_described(_STORE, task)
    return chunk.cleaned() if _CLEAN else chunk


@contextmanager
def _pool(store: Store, jobs: int, clean: bool) -> Iterator[Any]:
    """``jobs`` forked workers that inherit the run (its registry and options)."""
    import multiprocessing

    from eee.rules.schema import screen

    for version in store.registry.versions:  # compiled once, here: the workers inherit them
        for kind in (EVAL, INSTANCE):
            if store.registry.schema_path(version, kind).is_file():
                screen(store.registry, version, kind)
    global _STORE, _CLEAN
    _STORE, _CLEAN = store, clean
    gc.freeze()  # what the workers inherit is never walked by their collectors (nor copied for it)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            yield pool
    finally:
        gc.unfreeze()
        _STORE, _CLEAN = None, False


def _run_planned(store: Store, files: list[_Item], total: int, progress: Progress | None, sink: Sink) -> None:
    """Check a list of files (any order): planned in chunks of whole folders, checked here
    or by forked workers, merged back into the one-process order."""
    work = _Work(store, files)
    jobs = min(_jobs(store.options.jobs, files), work.chunks)
    done = 0
    with ExitStack() as stack:
        if jobs <= 1:
            chunks: Iterable[_Chunk] = (_check_chunk(store, *work.sections(n)) for n in range(work.chunks))
        else:
            pool = stack.enter_context(_pool(store, jobs, clean=False))
            chunks = pool.imap(_in_worker, (_describe(work.sections(n)) for n in range(work.chunks)))
        for chunk in chunks:
            work.place(chunk)
            done += chunk.count
            total = max(total, done)
            if progress:
                progress(done, total)
    work.emit(sink)


def _plan_walk(
    top: str, options: Options, events: list[_Item], problems: list[Finding]
) -> Iterator[tuple[_Described, _Names]]:
    """The files below ``top`` as the walk reaches them (sorted), in chunks of whole folders
    of about CHUNK records, described for a worker with the names of the folders the walk
    listed meanwhile; events set aside. Each file's store and path as :func:`run` gives
    them (:func:`_items`), found once per folder.

    A folder's own files need not be consecutive in sorted order (``m/a.json``,
    ``m/b/x.json``, ``m/c.json``): a chunk is cut only where no folder of it can come back,
    at a folder that is neither one of the chunk's nor below one of them."""
    listed: _Names = {}
    trees: dict[str, WorkTree] = {}

    def tree_at(root: str) -> WorkTree:
        if root not in trees:
            trees[root] = WorkTree(root)
        return trees[root]

    fixed = os.path.abspath(options.root) if options.root else None
    sections: _Described = ([], [], [])
    count = 0
    current = None
    folders: set[str] = set()  # of the chunk
    empty = True
    known: tuple[Any, str | None] = (None, None)  # (the parent of the last folder, ...), its store root
    for directory, names in walk_folders(top, listed, problems):
        empty = False
        if directory != current:
            if count >= CHUNK and directory not in folders and not any(f in folders for f in _above(directory)):
                # the folder just reached was listed for the next chunk (which lists those above it itself)
                ahead = {directory: listed.pop(directory)} if directory in listed else {}
                yield sections, dict(listed)
                listed.clear()
                listed.update(ahead)
                sections, count = ([], [], []), 0
                folders.clear()
            current = directory
            folders.add(directory)
        inside = directory + os.sep
        marker = inside.rfind(_EVENTS_MARKER)
        parent, _, name = directory.rpartition(os.sep)
        if fixed:
            root = fixed
        elif (parent, name == DATA_DIR) != known[0]:  # siblings share their store root
            known = ((parent, name == DATA_DIR), find_store_root(os.path.join(directory, names[0])))
            root = known[1]
        else:
            root = known[1]
        for name in names:
            here = inside[:marker] if marker >= 0 and name.endswith(EVENT_SUFFIX) else root
            base = here + os.sep if here and here != os.sep else here
            if here and inside.startswith(base):
                tree, rel, in_store = tree_at(here), inside[len(base) :] + name, True
            else:
                tree, rel, in_store = tree_at(_LOOSE), (inside + name).lstrip(os.sep), False
            if file_kind(rel) == EVENT:
                events.append(_Item(tree, rel, in_store))
            elif rel.endswith(RECORD_SUFFIX):
                sections[0].append((tree.root, rel, in_store, 0))
                count += 1
            elif rel.endswith(SIDECAR_SUFFIX):
                sections[1].append((tree.root, rel, in_store, 0))
            else:
                sections[2].append((tree.root, rel, in_store, 0))
    if any(sections):
        yield sections, dict(listed)
    if empty:
        problems.append(_nothing_here(top))


def _above(path: str) -> Iterator[str]:
    """The folders above the absolute ``path``, nearest first."""
    while (cut := path.rfind(os.sep)) > 0:
        path = path[:cut]
        yield path


def _emit(sink: Sink, chunk: _Chunk) -> None:
    sink.add(RECORDS, [r for _, r in chunk.records])
    sink.add(SIDECARS, [r for _, r in chunk.sidecars])
    if chunk.extras:
        sink.add(EXTRAS, chunk.extras)
    sink.add(OTHERS, [r for _, r in chunk.others])


def _run_streamed(store: Store, planned: Iterator[tuple[_Described, _Names]], sink: Sink) -> None:
    """Check chunks as the walk yields them and hand their results to the sink in order:
    here for a few files, else on forked workers once PARALLEL_MIN files are seen (the
    walk then feeds the workers as it goes; ``imap`` keeps the chunks' order)."""
    ahead: list[tuple[_Described, _Names]] = []
    seen = 0
    for task in planned:
        ahead.append(task)
        seen += sum(len(s) for s in task[0])
        if seen >= PARALLEL_MIN:
            break
    wanted = store.options.jobs
    jobs = 1 if wanted is not None and wanted <= 1 else wanted or os.cpu_count() or 1
    if seen < PARALLEL_MIN and wanted is None:
        jobs = 1
    if jobs > 1:
        import multiprocessing

        if "fork" not in multiprocessing.get_all_start_methods():
            jobs = 1  # pragma: no cover - Windows
    described = itertools.chain(ahead, planned)
    if jobs <= 1:
        for one in described:  # through trees of the chunk's own, as a worker: memory stays flat
            _emit(sink, _check_described(store, one))
        return
    with _pool(store, jobs, clean=sink.clean) as pool:
        for chunk in pool.imap(_in_worker, described):
            _emit(sink, chunk)


def _check_events(events: list[_Item]) -> list[FileResult]:
    """Event files, grouped by the store they belong to (the ledger is per store)."""
    by_tree: dict[int, tuple[Tree, list[str]]] = {}
    for item in events:
        by_tree.setdefault(id(item.tree), (item.tree, []))[1].append(item.rel)
    if not by_tree:
        return []
    from eee.rules.events import check_events  # lazy: the ledger's modules load only when an event is checked

    out: list[FileResult] = []
    for tree, rels in sorted(by_tree.values(), key=lambda entry: entry[0].display("")):
        out.extend(check_events(tree, rels))
    return out


_EVENTS_MARKER = os.sep + EVENTS_DIR.replace("/", os.sep) + os.sep
_LOOSE = "/"  # loose files are read through a work tree of the file system's root


def run(
    args: Iterable[str | Path],
    options: Options | None = None,
    registry: Registry | None = None,
    progress: Progress | None = None,
    sink: Sink | None = None,
) -> Summary:
    """Validate the files named on the command line (files, folders, globs).

    Each file is read through the work tree of the store it belongs to (``options.root``,
    or found from its path); a file outside any store is checked on its own. One folder
    (``eee validate .``, what the pipeline runs) is checked as it is walked, chunk after
    chunk, without listing the store first, when no progress bar needs the total; its
    results go to ``sink`` (default: all kept, for the :class:`Summary`)."""
    options = options or Options()
    args = [str(a) for a in args]
    if progress is None and len(args) == 1 and os.path.isdir(args[0]) and not os.path.islink(args[0]):
        return _validate((), options, progress, registry, [], sink, walked=args[0])
    found = collect(args)
    items = list(_items(found.files, options, found.listings))
    return _validate(items, options, progress, registry, found.problems, sink)


def _items(files: Iterable[str], options: Options, listings: dict[str, list[str]] | None) -> Iterator[_Item]:
    """Absolute paths as items of the trees of their stores (loose files: the file system's)."""
    trees: dict[str, WorkTree] = {}

    def tree_at(root: str) -> WorkTree:
        if root not in trees:
            trees[root] = WorkTree(root, listings)
        return trees[root]

    fixed = os.path.abspath(options.root) if options.root else None
    last: tuple[str | None, str | None] = (None, None)  # a folder and its store root (files come by folder)
    for absolute in files:
        if absolute.endswith(EVENT_SUFFIX) and _EVENTS_MARKER in absolute:
            root: str | None = absolute[: absolute.rindex(_EVENTS_MARKER)]
        elif fixed:
            root = fixed
        else:
            folder = os.path.dirname(absolute)
            if folder != last[0]:
                last = (folder, find_store_root(absolute))
            root = last[1]
        rel = tree_at(root).rel(absolute) if root else None
        if rel is None:
            yield _Item(tree_at(_LOOSE), absolute.lstrip(os.sep), in_store=False)
        else:
            yield _Item(tree_at(root), rel)
