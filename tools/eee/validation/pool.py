"""How the validator runs: files in chunks of whole folders, here or on forked workers.

A run's files are cut into chunks of about :data:`CHUNK` records, each made of whole
folders (a record, its sidecar and its pointer are always checked together); a chunk is
checked in this process, or by one of the machine's cores once a run has
:data:`PARALLEL_MIN` files (work trees only: a git tree's reader cannot cross a fork). A
worker gets its chunk described as plain strings and reads the files through trees of its
own; the chunks' results come back in the one-process order, section by section (records,
sidecars, ...), to a :class:`Sink`. A whole folder (``eee validate .``) is planned as it is
walked (:func:`plan_walk`), so no list of the store is ever held.

What a chunk's check is comes from :mod:`eee.validation.validate` (``check``): this module
only schedules.
"""

from __future__ import annotations

import gc
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from eee.reporting.findings import FileResult, Finding, Summary, Tally
from eee.store.identity import is_registry_file
from eee.store.paths import DATA_DIR, EVENT, EVENT_SUFFIX, RECORD_SUFFIX, SIDECAR_SUFFIX, file_kind, find_store_root
from eee.store.schemas import EVAL, INSTANCE
from eee.store.tree import WorkTree
from eee.validation.collect import EVENTS_MARKER, IDENTITY_MARKER, LOOSE, Item, nothing_here, walk_folders

Progress = Callable[[int, int], None]
# the check of one chunk: (store, records, sidecars, others), each (index, item), -> its results
Check = Callable[[Any, list[tuple[int, Item]], list[tuple[int, Item]], list[tuple[int, Item]]], "Chunk"]


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


# -- the driver: records in chunks of whole folders, on several cores for a whole store ---------

GC_THRESHOLD = 50_000  # allocations between the cyclic collector's young-generation runs while checking


@contextmanager
def collect_less() -> Iterator[None]:
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


class Chunk:
    """The results of one chunk, each tagged with its place in the one-process order
    (streamed chunks: the sections' results in order, each tagged 0)."""

    __slots__ = ("count", "extras", "others", "records", "sidecars")

    def __init__(self) -> None:
        self.records: list[tuple[int, Any]] = []
        self.sidecars: list[tuple[int, Any]] = []
        self.extras: list[Any] = []  # sidecars found beside a record, not named in the run
        self.others: list[tuple[int, Any]] = []
        self.count = 0

    def cleaned(self) -> Chunk:
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

        out = Chunk()
        out.count = self.count
        out.records = [(0, p) for p in pieces([r for _, r in self.records])]
        out.sidecars = [(0, p) for p in pieces([r for _, r in self.sidecars])]
        out.extras = pieces(self.extras)
        out.others = [(0, p) for p in pieces([r for _, r in self.others])]
        return out


_Sections = tuple[list[tuple[int, Item]], list[tuple[int, Item]], list[tuple[int, Item]]]
_Described = tuple[list[tuple[str, str, bool, int]], list[tuple[str, str, bool, int]], list[tuple[str, str, bool, int]]]
_Names = dict[str, list[str]]  # absolute folder -> the names in it, as the walk listed them


def describe(sections: _Sections, names: _Names | None = None) -> tuple[_Described, _Names | None]:
    """Items as plain strings, for a worker: it reads the files through trees of its own and
    never touches this process's objects (whose pages it shares after the fork); ``names``:
    the folders of the chunk the walk has listed (the worker need not list them again)."""
    described = tuple(
        [(item.tree.root, item.rel, item.in_store, i) for i, item in section]  # type: ignore[attr-defined]
        for section in sections
    )
    return described, names  # type: ignore[return-value]


class Work:
    """The files of a run split into chunks of whole folders (a record and its sidecar in
    the same one), and the merge of the chunks' results back into the one-process order:
    every record, then every sidecar, then the other files (pointers, ...)."""

    def __init__(self, files: list[Item]) -> None:
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

    def sections(self, n: int) -> tuple[list[tuple[int, Item]], ...]:
        return tuple(
            [(i, items[i]) for i in ix]
            for items, ix in zip((self.records, self.sidecars, self.others), self.plan[n], strict=True)
        )

    def place(self, chunk: Chunk) -> None:
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


def jobs_for(wanted: int | None, files: list[Item]) -> int:
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


# the run a forked worker inherits: the check of a chunk, the run's store (registry, options,
# caches), and whether it sends files without findings as ready-made report entries
_RUN: tuple[Check, Any, bool] | None = None


def check_described(check: Check, store: Any, task: tuple[_Described, _Names | None]) -> Chunk:
    """Check a described chunk through trees of its own (one per store root, for this chunk
    only: their listings go with it, and memory stays flat)."""
    described, names = task
    names = names if names is not None else {}
    trees: dict[str, WorkTree] = {}

    def items(entries: list[tuple[str, str, bool, int]]) -> list[tuple[int, Item]]:
        out = []
        for root, rel, in_store, index in entries:
            if root not in trees:
                trees[root] = WorkTree(root, names)
            out.append((index, Item(trees[root], rel, in_store)))
        return out

    records, sidecars, others = described
    return check(store, items(records), items(sidecars), items(others))


def _in_worker(task: tuple[_Described, _Names | None]) -> Chunk:
    assert _RUN is not None
    check, store, clean = _RUN
    chunk = check_described(check, store, task)
    return chunk.cleaned() if clean else chunk


@contextmanager
def _pool(check: Check, store: Any, jobs: int, clean: bool) -> Iterator[Any]:
    """``jobs`` forked workers that inherit the run (its check, registry and options)."""
    import multiprocessing

    from eee.rules.schema import screen

    for version in store.registry.versions:  # compiled once, here: the workers inherit them
        for kind in (EVAL, INSTANCE):
            if store.registry.schema_path(version, kind).is_file():
                screen(store.registry, version, kind)
    global _RUN
    _RUN = (check, store, clean)
    gc.freeze()  # what the workers inherit is never walked by their collectors (nor copied for it)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            yield pool
    finally:
        gc.unfreeze()
        _RUN = None


def run_planned(check: Check, store: Any, files: list[Item], total: int, progress: Progress | None, sink: Sink) -> None:
    """Check a list of files (any order): planned in chunks of whole folders, checked here
    or by forked workers, merged back into the one-process order."""
    work = Work(files)
    jobs = min(jobs_for(store.options.jobs, files), work.chunks)
    done = 0
    with ExitStack() as stack:
        if jobs <= 1:
            chunks: Iterable[Chunk] = (check(store, *work.sections(n)) for n in range(work.chunks))
        else:
            pool = stack.enter_context(_pool(check, store, jobs, clean=False))
            chunks = pool.imap(_in_worker, (describe(work.sections(n)) for n in range(work.chunks)))
        for chunk in chunks:
            work.place(chunk)
            done += chunk.count
            total = max(total, done)
            if progress:
                progress(done, total)
    work.emit(sink)


def plan_walk(
    top: str, root: str | Path | None, events: list[Item], problems: list[Finding]
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

    fixed = os.path.abspath(root) if root else None
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
        marker = inside.rfind(EVENTS_MARKER)
        names_marker = inside.rfind(IDENTITY_MARKER)
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
            if names_marker >= 0 and inside.endswith(IDENTITY_MARKER):
                here = inside[:names_marker]  # the identity registry of the store above it
            base = here + os.sep if here and here != os.sep else here
            if here and inside.startswith(base):
                tree, rel, in_store = tree_at(here), inside[len(base) :] + name, True
            else:
                tree, rel, in_store = tree_at(LOOSE), (inside + name).lstrip(os.sep), False
            if file_kind(rel) == EVENT or (in_store and is_registry_file(rel)):
                events.append(Item(tree, rel, in_store))  # governance files: checked by the store they belong to
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
        problems.append(nothing_here(top))


def _above(path: str) -> Iterator[str]:
    """The folders above the absolute ``path``, nearest first."""
    while (cut := path.rfind(os.sep)) > 0:
        path = path[:cut]
        yield path


def emit(sink: Sink, chunk: Chunk) -> None:
    sink.add(RECORDS, [r for _, r in chunk.records])
    sink.add(SIDECARS, [r for _, r in chunk.sidecars])
    if chunk.extras:
        sink.add(EXTRAS, chunk.extras)
    sink.add(OTHERS, [r for _, r in chunk.others])


def run_streamed(check: Check, store: Any, planned: Iterator[tuple[_Described, _Names]], sink: Sink) -> None:
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
            emit(sink, check_described(check, store, one))
        return
    with _pool(check, store, jobs, clean=sink.clean) as pool:
        for chunk in pool.imap(_in_worker, described):
            emit(sink, chunk)
