"""The validator: check the files of a tree, return a :class:`Summary`.

:func:`validate_tree` reads a :class:`eee.store.tree.Tree` (the work tree, a git commit, planned
files over the store) and checks every file by the rules of its kind (:mod:`eee.rules`):
layout (:mod:`~eee.rules.layout`), records (:mod:`~eee.rules.record`), sidecars
(:mod:`~eee.rules.sidecar`), DVC pointers (:mod:`~eee.rules.pointer`) and governance events
(:mod:`~eee.rules.ledger`). :func:`run` is the command line's view: paths on disk, found by
:mod:`eee.validation.collect` in the work trees of the stores they belong to (and loose
files, checked on their own). :mod:`eee.validation.pool` schedules the checks, in chunks of
whole folders, on the machine's cores for a whole store.

This module only puts a file's rules together: it writes no finding itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eee.dvc.pointer import Pointer
from eee.reporting.findings import FileResult, Finding, Summary
from eee.rules.layout import layout_findings, link_finding
from eee.rules.pointer import orphan_pointer_finding, pointer_findings, read_pointer
from eee.rules.record import check_record
from eee.rules.sidecar import DEFAULT_CAP, NO_RECORD, check_sidecar, missing_sidecar_finding, pairing_findings
from eee.store.identity import is_registry_file
from eee.store.limits import RECORD_MAX_BYTES
from eee.store.paths import (
    DVC_POINTER,
    EVENT,
    POINTER_SUFFIX,
    file_kind,
    record_path_for_sidecar,
    sidecar_path_for,
)
from eee.store.schemas import Registry, RegistryError, default_registry
from eee.store.strictjson import JSONProblem, attach_lines, loads
from eee.store.tree import SYMLINK, Tree, Unreadable
from eee.validation.collect import Item, collect, items, store_files
from eee.validation.pool import (
    EVENTS,
    INPUT,
    Chunk,
    Progress,
    Sink,
    collect_less,
    plan_walk,
    run_planned,
    run_streamed,
)


@dataclass
class Options:
    repo_checks: bool = True  # layout, naming and pairing rules of the store
    cap: int = DEFAULT_CAP  # findings shown per file
    root: Path | None = None  # store root; found from each path when None
    case_clash: bool = True  # names against the tree; off where a commit rule checks them (the audit)
    jobs: int | None = None  # worker processes; None: the machine's cores for a whole store, 1 for a few files


class Store:
    """The registry and options of a run, plus caches shared by the checks of a chunk."""

    def __init__(self, registry: Registry, options: Options) -> None:
        self.registry = registry
        self.options = options
        self.aggregates: dict[tuple[int, str], dict[str, Any] | None] = {}
        self.pointers: dict[tuple[int, str], Any] = {}  # a chunk's DVC pointers, read once for sidecar and pointer

    def pointer(self, item: Item) -> Any:
        """The DVC pointer ``item`` parsed, or why it cannot be (:func:`eee.rules.pointer.read_pointer`)."""
        key = item.key()
        if key not in self.pointers:
            self.pointers[key] = read_pointer(item.tree, item.rel)
        return self.pointers[key]

    def read_before(self, item: Item) -> bool:
        """Whether ``item`` (a record) was read in this chunk, so exists (no need to ask the tree)."""
        return self.aggregates.get(item.key()) is not None

    def clear(self) -> None:
        self.aggregates.clear()
        self.pointers.clear()

    def aggregate(self, item: Item) -> dict[str, Any] | None:
        key = item.key()
        if key not in self.aggregates:
            try:
                doc = loads(item.tree.read(item.rel, RECORD_MAX_BYTES))
            except (Unreadable, JSONProblem):
                doc = None
            self.aggregates[key] = doc if isinstance(doc, dict) else None
        return self.aggregates[key]

    def layout(self, item: Item, file: str) -> tuple[Any, list[Finding]]:
        return layout_findings(item.tree, item.rel, file, item.in_store, self.options.case_clash)


def _check_records(
    store: Store, records: list[Item], queued: set[tuple[int, str]], extra: list[Item]
) -> list[FileResult]:
    """The records of a chunk; a sidecar beside one that the run does not name is queued in
    ``extra`` (a record and its sidecar are checked together)."""
    opts = store.options
    out = []
    for item in records:
        tree = item.tree
        file = tree.display(item.rel)
        result = FileResult(file, "record")
        out.append(result)
        where = None
        if opts.repo_checks:
            where, found = store.layout(item, file)
            result.findings.extend(found)
        doc = check_record(tree, item.rel, file, store.registry, result, where, opts.repo_checks, opts.cap)
        if doc is None:
            continue
        der = doc.get("detailed_evaluation_results")
        # keep whole documents only where a sidecar needs them; others shrink to a stub
        store.aggregates[item.key()] = doc if isinstance(der, dict) else {"evaluation_id": doc.get("evaluation_id")}
        if not (opts.repo_checks and isinstance(der, dict)):
            continue
        sidecar = item.beside(sidecar_path_for(item.rel))
        if sidecar.key() in queued or tree.exists(sidecar.rel):  # queued: the walk found it
            if sidecar.key() not in queued:
                queued.add(sidecar.key())
                extra.append(sidecar)
        elif not tree.exists(sidecar.rel + POINTER_SUFFIX):
            name = sidecar.rel.rsplit("/", 1)[-1]
            result.findings.append(missing_sidecar_finding(file, name, tree.display(sidecar.rel)))
            _attach_lines_from(result.findings, tree, item.rel)
    return out


def _attach_lines_from(findings: list[Finding], tree: Tree, rel: str) -> None:
    try:
        attach_lines(findings, tree.read(rel))
    except Unreadable:
        pass


def _check_sidecar_file(store: Store, item: Item, file: str) -> FileResult:
    options = store.options
    tree = item.tree
    result = FileResult(file, "sidecar")
    if options.repo_checks:
        result.findings.extend(store.layout(item, file)[1])
    if tree.mode(item.rel) == SYMLINK:
        result.findings.append(link_finding(file, "sidecar"))
        return result
    aggregate = None
    if options.repo_checks:
        record = item.beside(record_path_for_sidecar(item.rel))
        there = store.read_before(record) or tree.exists(record.rel)
        found, aggregate = pairing_findings(
            file, record.rel.rsplit("/", 1)[-1], store.aggregate(record) if there else NO_RECORD
        )
        result.findings.extend(found)
    pointer = store.pointer(item.beside(item.rel + POINTER_SUFFIX))
    check_sidecar(tree, item.rel, file, store.registry, aggregate, result, cap=options.cap, pointer=pointer)
    return result


def _check_other(store: Store, item: Item, file: str) -> FileResult | None:
    tree = item.tree
    kind = file_kind(item.rel)
    if not store.options.repo_checks:
        return FileResult(file, kind) if kind == DVC_POINTER else None
    result = FileResult(file, kind)
    where, found = store.layout(item, file)
    result.findings.extend(found)
    pointer = None
    if kind == DVC_POINTER and where is not None:
        pointer = store.pointer(item)
        result.findings.extend(pointer_findings(pointer, item.rel, file))
        record = item.beside(record_path_for_sidecar(item.rel[: -len(POINTER_SUFFIX)]))
        if not store.read_before(record) and not tree.exists(record.rel):
            result.findings.append(orphan_pointer_finding(file, record.rel.rsplit("/", 1)[-1]))
    if not isinstance(pointer, Pointer) and tree.mode(item.rel) == SYMLINK:  # a pointer read was no link
        result.findings.append(link_finding(file, "other"))
    return result


def check_chunk(
    store: Store, records: list[tuple[int, Item]], sidecars: list[tuple[int, Item]], others: list[tuple[int, Item]]
) -> Chunk:
    """Check a chunk of whole folders: its records, their sidecars, the other files. A sidecar
    named in the run lies in its record's folder, so in the same chunk (``queued``)."""
    store.clear()  # what pairing needs lies in the chunk: memory stays flat
    out = Chunk()
    queued = {item.key() for _, item in sidecars}
    extra: list[Item] = []
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


def _check_events(events: list[Item]) -> list[FileResult]:
    """Event files and the identity registry's files, grouped by the store they belong to
    (the ledger and the registry are per store)."""
    by_tree: dict[int, tuple[Tree, list[str], list[str]]] = {}
    for item in events:
        entry = by_tree.setdefault(id(item.tree), (item.tree, [], []))
        (entry[2] if is_registry_file(item.rel) else entry[1]).append(item.rel)
    if not by_tree:
        return []
    out: list[FileResult] = []
    for tree, rels, names in sorted(by_tree.values(), key=lambda entry: entry[0].display("")):
        if rels:
            from eee.rules.ledger import check_events  # lazy: the ledger's modules load only when an event is checked

            out.extend(check_events(tree, rels))
        if names:
            from eee.rules.identity import check_files

            out.extend(check_files(tree, names))
    return out


def validate_tree(
    tree: Tree,
    paths: Iterable[str] | None = None,
    options: Options | None = None,
    progress: Progress | None = None,
    registry: Registry | None = None,
) -> Summary:
    """Check ``paths`` of ``tree`` (default: the whole store: data/ and the events)."""
    rels = store_files(tree) if paths is None else list(dict.fromkeys(paths))
    return _validate([Item(tree, rel) for rel in rels], options or Options(), progress, registry)


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
    named = list(items(found.files, options.root, found.listings))
    return _validate(named, options, progress, registry, found.problems, sink)


def _validate(
    named: Iterable[Item],
    options: Options,
    progress: Progress | None = None,
    registry: Registry | None = None,
    problems: list[Finding] | None = None,
    sink: Sink | None = None,
    walked: str | None = None,
) -> Summary:
    """Check the items ``named``, or the files below the folder ``walked`` as the walk
    reaches them, chunk after chunk, none of them (nor the folders' names) held for the whole run."""
    sink = sink if sink is not None else Sink()
    try:
        registry = registry or default_registry()
    except RegistryError as exc:
        sink.fatal = str(exc)
        return sink.summary()
    store = Store(registry, options)
    events: list[Item] = []
    with collect_less():
        if walked is not None:
            problems = problems if problems is not None else []
            run_streamed(check_chunk, store, plan_walk(walked, options.root, events, problems), sink)
        else:
            files: list[Item] = []
            for item in named:
                governance = file_kind(item.rel) == EVENT or (item.in_store and is_registry_file(item.rel))
                (events if governance else files).append(item)
            run_planned(check_chunk, store, files, len(files) + len(events), progress, sink)
    if problems:
        sink.add(INPUT, [FileResult(p.file, "input", findings=[p]) for p in problems])
    sink.add(EVENTS, _check_events(events))
    return sink.summary()
