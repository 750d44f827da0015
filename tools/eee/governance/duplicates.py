"""Duplicates: a documented equivalence, an index over the whole store, the warning rule.

Two records are **duplicates** when either holds (governance/README.md, "Duplicates"):

1. **same evaluation**: they share a result with the same model (``model_info.id``, by its
   canonical id in the identity registry: two spellings of one model are one), benchmark
   (``source_data.dataset_name``, else ``evaluation_name``), metric
   (``metric_config.metric_id``, canonical, else ``metric_name``), configuration (``generation_config``
   and the eval library: HELM and lm-evaluation-harness runs are different evaluations) and
   ``evaluation_id``, whoever the evaluator (a differing evaluator is named in the warning);
2. **identical content**: their JSON is the same apart from ``evaluation_id``,
   ``retrieved_timestamp`` and the sidecar's ``file_path`` (which names the record's own
   uuid): the public datastore's normalised hash.

Each record gets keys (one content key, one key per result); records sharing a key are
duplicates. The keys live in an index (SQLite in the git directory, never committed)
that follows HEAD's ``data/`` tree by diffing trees (and is built again when HEAD's
identity registry changes, whose canonical ids the keys hold), so the hook checks a staged record
with a few lookups whatever the store's size. The rule that warns about them, and leaves
alone pairs linked by supersession (one version chain) or by a ``duplicate`` event, is
:mod:`eee.rules.duplicates`.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import itertools
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from eee.git.cli import BatchReader, batch_check, diff_tree_fields, git_dir_or_none, ls_tree_fields, resolve
from eee.store.fsutil import replace_file
from eee.store.limits import RECORD_MAX_BYTES, read_regular
from eee.store.strictjson import JSONProblem
from eee.store.strictjson import loads as strict_loads

RECORD_SUFFIX = ".json"
INDEX_FILE = "eee-duplicates.sqlite"
# the audit's own index (it follows the commit audited, so the hook's keeps following HEAD);
# in a bare repository the server gate builds it at install and keeps it at HEAD (post-receive)
AUDIT_INDEX_FILE = "eee-duplicates-audit.sqlite"
INDEX_VERSION = "3"  # bump when the keys or the layout change: the index is rebuilt
IGNORED = ("evaluation_id", "retrieved_timestamp")


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _h(parts: Any) -> str:
    try:  # orjson: 4-5x the standard library's speed, which the first build of the index feels
        text = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # a lone surrogate, an integer beyond 64 bits
        text = json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha256(text).hexdigest()[:32]


class Facts(NamedTuple):
    """What the index keeps about one record, for keys and for evidence."""

    uuid: str
    model: str
    evaluator: str
    library: str
    evaluation_id: str
    content: str  # the normalised hash
    results: list[tuple[str, str, str]]  # (key, benchmark, metric)


def normalised_hash(doc: dict[str, Any]) -> str:
    """sha256 (shortened) of the record without evaluation_id, retrieved_timestamp and the
    sidecar's file_path."""
    copy = {k: v for k, v in doc.items() if k not in IGNORED}
    details = copy.get("detailed_evaluation_results")
    if isinstance(details, dict) and "file_path" in details:
        copy["detailed_evaluation_results"] = {k: v for k, v in details.items() if k != "file_path"}
    return _h(copy)


def facts(uuid: str, doc: dict[str, Any], names: Any = None) -> Facts:
    """What the index keeps of a record; ``names``: the identity registry whose canonical
    model and metric ids the keys hold (none: the ids as written)."""
    info, source, library = _d(doc.get("model_info")), _d(doc.get("source_metadata")), _d(doc.get("eval_library"))
    model_id = info.get("id")
    model = str(names.canonical_model(model_id) if names is not None and isinstance(model_id, str) else model_id)
    lib = str(library.get("name", "unknown"))
    evaluation_id = str(doc.get("evaluation_id"))
    results = []
    for result in doc.get("evaluation_results") or []:
        if not isinstance(result, dict):
            continue
        data, config = _d(result.get("source_data")), _d(result.get("metric_config"))
        benchmark = str(data.get("dataset_name") or result.get("evaluation_name"))
        metric_id = config.get("metric_id")
        if names is not None and isinstance(metric_id, str):
            metric_id = names.canonical("metric", metric_id)
        metric = str(metric_id or config.get("metric_name") or result.get("evaluation_name"))
        key = "e" + _h([model, benchmark, metric, result.get("generation_config"), lib, evaluation_id])
        results.append((key, benchmark, metric))
    return Facts(
        uuid,
        model,
        str(source.get("source_organization_name")),
        lib,
        evaluation_id,
        "c" + normalised_hash(doc),
        sorted(set(results)),
    )


def uuid_of(path: str) -> str:
    return path.rsplit("/", 1)[-1][: -len(RECORD_SUFFIX)]


class Match(NamedTuple):
    path: str  # the other record
    other: Facts
    identical: bool  # same normalised content
    shared: list[tuple[str, str]]  # (benchmark, metric) of the shared evaluation keys


def compare(mine: Facts, other: Facts, other_path: str) -> Match | None:
    identical = mine.content == other.content
    keys = {k: (b, m) for k, b, m in other.results}
    shared = sorted({keys[k] for k, _, _ in mine.results if k in keys})
    if identical or shared:
        return Match(other_path, other, identical, shared)
    return None


def evidence(mine: Facts, match: Match) -> str:
    """The evidence for a match, as a sentence."""
    other = match.other
    if match.identical:
        text = "identical content apart from evaluation_id and retrieved_timestamp (the normalised hash)" + (
            "" if mine.evaluation_id != other.evaluation_id else ", and the same evaluation_id"
        )
    else:
        benchmark, metric = match.shared[0]
        more = f" (and {len(match.shared) - 1} more results)" if len(match.shared) > 1 else ""
        text = (
            f"the same evaluation: model {mine.model}, benchmark {benchmark}, metric {metric}{more}, "
            f"configuration, eval library {mine.library} and evaluation_id {mine.evaluation_id}"
        )
    if mine.evaluator != other.evaluator:
        text += f"; the evaluator differs ({mine.evaluator} here, {other.evaluator} there)"
    return text


# --- the index ------------------------------------------------------------------------------

HOOK_LIMIT = 1000  # records a hook may read to bring the index to HEAD; beyond, it says so and skips
REBUILD_AT = 20_000  # more changed records than this: build afresh (off the live file) instead


def build_command(cwd: str | Path | None = None) -> str:
    """The command that brings the duplicates index to HEAD, as a hint prints it (runnable from ``cwd``)."""
    from eee.reporting.shown import command

    return command("dedup", "--index", cwd=cwd)


_CHUNK = 1000  # blob ids per round trip to ``git cat-file`` (41 KB: fits an empty pipe, no deadlock)
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class Stale(Exception):
    """The index is further from the tree asked for than the caller allows to read (or is
    being written by another process); nothing was changed. The message says why."""


def is_record(path: str) -> bool:
    return path.startswith("data/") and path.endswith(RECORD_SUFFIX) and path.count("/") == 4


def _parse(data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    try:  # strict, as the validator reads records: a lone surrogate, NaN or deep nesting is no record
        doc = strict_loads(data)
    except JSONProblem:
        return None
    return doc if isinstance(doc, dict) else None


def _kb(key: str) -> bytes:
    """A key as stored: its kind letter and 16 bytes (half the size of its hex)."""
    return key[:1].encode() + bytes.fromhex(key[1:])


def record_keys(path: str, data: bytes | None, names: Any = None) -> list[bytes] | None:
    """The stored keys of the record ``data`` at ``path`` (None when it is no record)."""
    doc = _parse(data)
    if doc is None:
        return None
    f = facts(uuid_of(path), doc, names)
    return sorted({_kb(f.content), *(_kb(r[0]) for r in f.results)})


def _listing(root: Path, tree: str) -> Iterator[tuple[str, str, str]]:
    """("A", path, blob) of every record of the ``data/`` tree ``tree``."""
    for entry in ls_tree_fields(tree, root):
        meta, _, name = entry.partition(b"\t")
        parts = meta.split()
        path = "data/" + name.decode("utf-8", "surrogateescape")
        if len(parts) == 3 and parts[1] == b"blob" and is_record(path):
            yield "A", path, parts[2].decode()


def _diff(root: Path, old: str, new: str) -> Iterator[tuple[str, str, str]]:
    """(status, path, new blob) of every record that differs between two ``data/`` trees."""
    raw = diff_tree_fields(old, new, root)
    for meta_field in raw:
        name = next(raw, None)
        if name is None:
            break
        meta = meta_field.decode().lstrip(":").split()
        path = "data/" + name.decode("utf-8", "surrogateescape")
        if len(meta) >= 5 and is_record(path):
            yield meta[4][0], path, meta[3]


def _first(items: Iterator[tuple[str, str, str]], limit: int) -> tuple[list[tuple[str, str, str]], bool]:
    """Up to ``limit`` items, and whether there were more (the rest is not read)."""
    taken = []
    for item in items:
        if len(taken) == limit:
            return taken, True
        taken.append(item)
    return taken, False


_worker_reader: BatchReader | None = None
_worker_names: Any = None


def _worker_start(root: str, names: dict[str, Any] | None, digest: str) -> None:
    global _worker_reader, _worker_names
    _worker_reader = BatchReader(root)
    if names is not None:
        from eee.store.identity import Registry

        _worker_names = Registry.from_json(names, digest)


def _worker_keys(items: list[tuple[str, str]]) -> list[tuple[str, str, list[bytes] | None]]:
    assert _worker_reader is not None
    blobs = _worker_reader.blobs([b for _, b in items], RECORD_MAX_BYTES)
    return [
        (path, blob, record_keys(path, data, _worker_names))
        for (path, blob), (_, data) in zip(items, blobs, strict=True)
    ]


def keyed(
    root: Path, items: Iterable[tuple[str, str]], jobs: int = 1, names: Any = None
) -> Iterator[tuple[str, str, list[bytes] | None]]:
    """(path, blob, keys) of each (path, blob), in order, read a chunk at a time; with
    ``jobs`` > 1 and more than one chunk, in that many worker processes (each with its own
    ``git cat-file``), a few chunks in flight: memory stays bounded."""
    it = iter(items)
    chunk = list(itertools.islice(it, _CHUNK))
    second = list(itertools.islice(it, _CHUNK))
    if not second or jobs <= 1:
        reader = BatchReader(root)
        try:
            while chunk:
                blobs = reader.blobs([b for _, b in chunk], RECORD_MAX_BYTES)  # a larger one is no record
                for (path, blob), (_, data) in zip(chunk, blobs, strict=True):
                    yield path, blob, record_keys(path, data, names)
                chunk, second = second, list(itertools.islice(it, _CHUNK))
        finally:
            reader.close()
        return
    import concurrent.futures
    import multiprocessing

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    shipped = (names.to_json(), names.digest) if names is not None else (None, "")
    with concurrent.futures.ProcessPoolExecutor(
        jobs, mp_context=multiprocessing.get_context(method), initializer=_worker_start, initargs=(str(root), *shipped)
    ) as pool:
        pending = collections.deque([pool.submit(_worker_keys, chunk), pool.submit(_worker_keys, second)])
        while pending:
            while len(pending) < 2 * jobs:
                more = list(itertools.islice(it, _CHUNK))
                if not more:
                    break
                pending.append(pool.submit(_worker_keys, more))
            yield from pending.popleft().result()


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT);"
    "CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, blob TEXT);"
    "CREATE TABLE IF NOT EXISTS keys (k BLOB NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (k, id)) WITHOUT ROWID;"
)
_KEY_INDEXES = "CREATE INDEX IF NOT EXISTS keys_id ON keys (id);"
# the records of a uuid (its file name: the last 41 characters of a record's path are
# "<uuid>.json"), for the gate's rule ``uuid`` (eee.rules.uuids). Built with the index, or
# added by ``eee dedup --index`` to an index built before it (0.8 s at 230,000 records:
# never in a hook, which meanwhile scans the table, 0.3 s there).
_UUID_EXPR = "lower(substr(path, -41, 36))"
_UUID_INDEX = f"CREATE INDEX IF NOT EXISTS records_uuid ON records ({_UUID_EXPR});"


def _has_uuid_index(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'records_uuid'").fetchone()
    return row is not None


def _paths_of(db: sqlite3.Connection, uuids: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {u: [] for u in uuids}
    for i in range(0, len(uuids), 500):
        chunk = [u.lower() for u in uuids[i : i + 500]]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(  # through records_uuid, or one scan of the table without it
            f"SELECT {_UUID_EXPR}, path FROM records WHERE {_UUID_EXPR} IN ({marks})", chunk
        )
        for uuid, path in rows:
            out.setdefault(uuid, []).append(path)
    return {u: sorted(p) for u, p in out.items()}


def indexed_paths(git_dir: str | Path, tree: str, uuids: list[str]) -> dict[str, list[str]] | None:
    """uuid -> the record paths of the ``data/`` tree ``tree`` that carry it, from the audit's
    index (:data:`AUDIT_INDEX_FILE` in ``git_dir``) when it holds exactly that tree, by uuid;
    None otherwise (no such index, another tree, an older layout, no uuid index). Read only:
    never creates, changes or waits for an index. The index is rows of that tree's listing
    (every record blob, parsed or not), so the answer is the listing's."""
    target = Path(git_dir) / AUDIT_INDEX_FILE
    if not target.is_file():
        return None
    try:
        db = sqlite3.connect(f"{target.as_uri()}?mode=ro", uri=True, timeout=0.5)
    except sqlite3.Error:
        return None
    try:
        meta = dict(db.execute("SELECT k, v FROM meta WHERE k IN ('version', 'tree')").fetchall())
        if meta.get("version") != INDEX_VERSION or meta.get("tree") != tree:
            return None
        if not _has_uuid_index(db):
            return None
        return _paths_of(db, uuids)
    except sqlite3.Error:  # a cache being replaced, damaged or locked: the caller reads git's objects
        return None
    finally:
        db.close()


class DuplicateIndex:
    """The duplicate keys of every record of HEAD's ``data/`` tree: key -> path, in SQLite in
    the git directory (``eee-duplicates.sqlite``, never committed; in memory outside git).

    It follows HEAD by ``git diff-tree`` between the tree it holds and HEAD's, reading only
    the records that changed. Built from scratch (once per clone: ``eee dedup --index``,
    which ``tools/dev.py setup`` runs) by streaming the tree's blobs through ``git
    cat-file`` in chunks, into a new file that then replaces the old one: memory stays
    bounded and a hook never waits for a build. A record's facts (for the evidence) are read
    from its blob when it matches."""

    def __init__(self, root: Path, name: str = INDEX_FILE, timeout: float = 30) -> None:
        self.root = Path(root)
        git_dir = git_dir_or_none(self.root)
        self.git = git_dir is not None
        self.target = os.path.join(git_dir, name) if git_dir is not None else ":memory:"
        self.timeout = timeout
        self._reader: BatchReader | None = None
        self.names: Any = None  # the identity registry of the tree the index follows (set by sync)
        try:
            self.db = self._open(self.target)
        except sqlite3.DatabaseError:  # a damaged cache, or the older layout: it is only a cache, start again
            self._remove(self.target)
            self.db = self._open(self.target)

    @staticmethod
    def _remove(target: str) -> None:
        for leftover in (target, target + "-wal", target + "-shm", target + "-journal"):
            if leftover != ":memory:" and os.path.exists(leftover):
                os.unlink(leftover)

    def _open(self, target: str) -> sqlite3.Connection:
        db = sqlite3.connect(target, timeout=self.timeout, isolation_level=None)
        try:
            # pages kept in memory across lookups (default: 2 MB): a sync of thousands of
            # records (a large push at the server gate) inserts keys all over the index
            db.execute("PRAGMA cache_size = -65536")
            db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
            row = db.execute("SELECT v FROM meta WHERE k = 'version'").fetchone()
            fresh = not row or row[0] != INDEX_VERSION
            if fresh:  # new, or of an older layout: start again
                db.executescript("DROP TABLE IF EXISTS records; DROP TABLE IF EXISTS keys; DELETE FROM meta;")
                db.execute("INSERT INTO meta (k, v) VALUES ('version', ?)", (INDEX_VERSION,))
            db.executescript(_SCHEMA + _KEY_INDEXES + (_UUID_INDEX if fresh else ""))  # empty: free to index
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def close(self) -> None:
        self.db.close()
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return row[0] if row else None

    def _data_tree(self, rev: str) -> str:
        """The id of ``rev``'s ``data/`` tree (the empty tree when it has none)."""
        return resolve(f"{rev}:data", self.root) or _EMPTY_TREE

    def sync(
        self,
        rev: str = "HEAD",
        limit: int | None = None,
        jobs: int = 1,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Bring the index to the ``data/`` tree of ``rev`` (outside git: the work tree) and
        return how many records were (re)read. With ``limit``, read at most that many:
        when more would be needed, raise :class:`Stale` and change nothing (what a hook does)."""
        from eee.store import identity
        from eee.store.tree import GitTree, WorkTree

        if not self.git:
            self.names = identity.read(WorkTree(str(self.root)))
            return self._sync_folder()
        if limit is None:
            self.db.executescript(_UUID_INDEX)  # an index built before the uuid index gets it here
        self.names = identity.EMPTY
        if resolve(f"{rev}^{{commit}}", self.root):
            tree = GitTree(self.root, rev)
            try:
                self.names = identity.read(tree)
            finally:
                tree.close()
        if self._meta("tree") is not None and self._meta("names") != self.names.digest:
            # built for another identity registry: every key changes, so it is built again (never by a hook)
            if limit is not None:
                raise Stale(f"the duplicates index was built for another identity registry than {rev}'s")
            self.db.executescript("DELETE FROM records; DELETE FROM keys; DELETE FROM meta WHERE k = 'tree';")
        if self._meta("names") != self.names.digest:
            self.db.execute("INSERT OR REPLACE INTO meta (k, v) VALUES ('names', ?)", (self.names.digest,))
        current = self._data_tree(rev)
        old = self._meta("tree")
        if old == current:
            return 0
        if old is not None and old != _EMPTY_TREE and old not in batch_check([old], self.root):
            # the tree it holds is gone (read from a push the server gate refused: its objects
            # were dropped with git's quarantine): nothing to diff from, so it is built afresh
            self.db.executescript("DELETE FROM records; DELETE FROM keys; DELETE FROM meta WHERE k = 'tree';")
            old = None
        if old is None:  # never built (a new clone, or an index of an older layout)
            if limit is None:
                return self._build(current, jobs, progress)
            listing, more = _first(_listing(self.root, current), limit)  # a small store: built right here
            if more:
                raise Stale(f"this clone has no duplicates index yet (HEAD has more than {limit:,} records)")
            return self._apply(current, listing, progress)
        changes, more = _first(_diff(self.root, old, current), limit if limit is not None else REBUILD_AT)
        if more:
            if limit is not None:
                raise Stale(f"the duplicates index is more than {limit:,} records behind {rev}")
            return self._build(current, jobs, progress)
        return self._apply(current, changes, progress, jobs)

    def _apply(
        self,
        tree: str,
        changes: list[tuple[str, str, str]],
        progress: Callable[[int], None] | None,
        jobs: int = 1,
    ) -> int:
        """The changed records into the live index, in one transaction."""
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:  # another process writes it (a build replaces it, never holds it)
            raise Stale(f"the duplicates index is being written by another process ({exc})") from None
        try:
            for status, path, _ in changes:
                row = db.execute("SELECT id FROM records WHERE path = ?", (path,)).fetchone()
                if row:
                    db.execute("DELETE FROM keys WHERE id = ?", row)
                    if status == "D":
                        db.execute("DELETE FROM records WHERE id = ?", row)
            wanted = [(p, b) for s, p, b in changes if s != "D"]
            n = self._insert(db, keyed(self.root, wanted, jobs, self.names), progress)
            db.execute("INSERT OR REPLACE INTO meta (k, v) VALUES ('tree', ?)", (tree,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return n

    @staticmethod
    def _insert(
        db: sqlite3.Connection,
        rows: Iterable[tuple[str, str, list[bytes] | None]],
        progress: Callable[[int], None] | None,
    ) -> int:
        n = 0
        for path, blob, keys in rows:
            cur = db.execute(
                "INSERT INTO records (path, blob) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET blob = excluded.blob"
                " RETURNING id",
                (path, blob),
            )
            (rid,) = cur.fetchone()
            if keys:
                db.executemany("INSERT OR IGNORE INTO keys (k, id) VALUES (?, ?)", [(k, rid) for k in keys])
            n += 1
            if progress and n % _CHUNK == 0:
                progress(n)
        if progress:
            progress(n)
        return n

    def _build(self, tree: str, jobs: int, progress: Callable[[int], None] | None) -> int:
        """The index of ``tree`` from scratch, streamed into a new file that replaces the live
        one when complete (a hook meanwhile reads the old one, or finds none)."""
        if self.target == ":memory:":
            self.db.executescript("DELETE FROM records; DELETE FROM keys;")
            return self._apply(tree, list(_listing(self.root, tree)), progress, jobs)
        tmp = f"{self.target}.build-{os.getpid()}"
        self._remove(tmp)
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + _SCHEMA)
            db.execute("BEGIN")
            listed = ((p, b) for _, p, b in _listing(self.root, tree))
            n = self._insert(db, keyed(self.root, listed, jobs, self.names), progress)
            db.execute("COMMIT")
            db.executescript(_KEY_INDEXES + _UUID_INDEX)  # after the rows: one sort instead of an update a row
            digest = self.names.digest if self.names is not None else ""
            db.executemany(
                "INSERT INTO meta (k, v) VALUES (?, ?)", [("version", INDEX_VERSION), ("tree", tree), ("names", digest)]
            )
            db.close()
            self.db.close()
            for leftover in (self.target + "-wal", self.target + "-shm", self.target + "-journal"):
                if os.path.exists(leftover):  # the old file's journals (an older layout wrote a WAL)
                    os.unlink(leftover)
            replace_file(tmp, self.target)
        except BaseException:
            db.close()
            self._remove(tmp)
            raise
        finally:
            self.db = self._open(self.target)
        return n

    def _sync_folder(self) -> int:
        n = 0
        data = self.root / "data"
        self.db.executescript("DELETE FROM records; DELETE FROM keys;")
        for dirpath, _, files in os.walk(data):
            for name in sorted(files):
                rel = os.path.relpath(os.path.join(dirpath, name), self.root).replace(os.sep, "/")
                if is_record(rel):
                    try:
                        raw = read_regular(Path(self.root, rel), RECORD_MAX_BYTES, "record")
                    except OSError:
                        continue
                    self._local[rel] = raw
                    self._insert(self.db, [(rel, "", record_keys(rel, raw, self.names))], None)
                    n += 1
        return n

    @functools.cached_property
    def _local(self) -> dict[str, bytes]:
        return {}  # outside git: the records read from the folder (no object store to read them again from)

    def facts_of(self, path: str) -> Facts | None:
        """The facts of the indexed record at ``path``, read from its blob."""
        row = self.db.execute("SELECT blob FROM records WHERE path = ?", (path,)).fetchone()
        if not row:
            return None
        if not self.git:
            data: bytes | None = self._local.get(path)
        else:
            if self._reader is None:
                self._reader = BatchReader(self.root)
            ((_, data),) = self._reader.blobs([row[0]], RECORD_MAX_BYTES)
        doc = _parse(data)
        return facts(uuid_of(path), doc, self.names) if doc is not None else None

    def has_uuid_index(self) -> bool:
        """Whether the index by uuid is there (else :meth:`paths_of` scans the table)."""
        return _has_uuid_index(self.db)

    def paths_of(self, uuids: list[str]) -> dict[str, list[str]]:
        """uuid -> the indexed record paths whose file name is that uuid (any letter case)."""
        return _paths_of(self.db, uuids)

    def matches(self, path: str, mine: Facts) -> list[Match]:
        """Records of the index that duplicate ``mine`` (at ``path``, left out)."""
        keys = [_kb(mine.content), *(_kb(r[0]) for r in mine.results)]
        marks = ",".join("?" * len(keys))
        rows = self.db.execute(
            f"SELECT DISTINCT r.path FROM keys k JOIN records r ON r.id = k.id WHERE k.k IN ({marks})", keys
        ).fetchall()
        out = []
        for (other,) in rows:
            if other == path:
                continue
            theirs = self.facts_of(other)
            if theirs is not None and theirs.uuid != mine.uuid:
                found = compare(mine, theirs, other)
                if found:
                    out.append(found)
        return sorted(out)

    def groups(self) -> list[list[str]]:
        """Paths of records that duplicate each other (each group has two or more)."""
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        rows = self.db.execute(
            "SELECT k.k, r.path FROM keys k JOIN records r ON r.id = k.id"
            " WHERE k.k IN (SELECT k FROM keys GROUP BY k HAVING COUNT(*) > 1) ORDER BY k.k"
        )
        first: dict[bytes, str] = {}
        for key, path in rows:
            if key in first:
                a, b = find(first[key]), find(path)
                if a != b:
                    parent[max(a, b)] = min(a, b)
            else:
                first[key] = path
                find(path)
        out: dict[str, list[str]] = {}
        for path in parent:
            out.setdefault(find(path), []).append(path)
        return sorted(sorted(g) for g in out.values() if len(g) > 1)
