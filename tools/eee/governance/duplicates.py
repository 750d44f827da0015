"""Duplicates: a documented equivalence, an index over the whole store, the warning rule.

Two records are **duplicates** when either holds (governance/README.md, "Duplicates"):

1. **same evaluation**: they share a result with the same model (``model_info.id``),
   benchmark (``source_data.dataset_name``, else ``evaluation_name``), metric
   (``metric_config.metric_id``, else ``metric_name``), configuration (``generation_config``
   and the eval library: HELM and lm-evaluation-harness runs are different evaluations) and
   ``evaluation_id``, whoever the evaluator (a differing evaluator is named in the warning);
2. **identical content**: their JSON is the same apart from ``evaluation_id``,
   ``retrieved_timestamp`` and the sidecar's ``file_path`` (which names the record's own
   uuid): the public datastore's normalised hash.

Each record gets keys (one content key, one key per result); records sharing a key are
duplicates. The keys live in an index (SQLite in the git directory, never committed)
that follows HEAD's ``data/`` tree by diffing trees, so the hook checks a staged record
with a few lookups whatever the store's size. Pairs linked by supersession (one version
chain) or by a ``duplicate`` event are never warned about again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
import subprocess
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from eee.findings import WARNING, Finding
from eee.limits import RECORD_MAX_BYTES, read_regular
from eee.paths import EVENT_SUFFIX, EVENTS_DIR
from eee.strictjson import JSONProblem
from eee.strictjson import loads as strict_loads

RECORD_SUFFIX = ".json"
INDEX_FILE = "eee-duplicates.sqlite"
INDEX_VERSION = "1"  # bump when the keys change: the index is rebuilt
IGNORED = ("evaluation_id", "retrieved_timestamp")


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _h(parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


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


def facts(uuid: str, doc: dict[str, Any]) -> Facts:
    info, source, library = _d(doc.get("model_info")), _d(doc.get("source_metadata")), _d(doc.get("eval_library"))
    model = str(info.get("id"))
    lib = str(library.get("name", "unknown"))
    evaluation_id = str(doc.get("evaluation_id"))
    results = []
    for result in doc.get("evaluation_results") or []:
        if not isinstance(result, dict):
            continue
        data, config = _d(result.get("source_data")), _d(result.get("metric_config"))
        benchmark = str(data.get("dataset_name") or result.get("evaluation_name"))
        metric = str(config.get("metric_id") or config.get("metric_name") or result.get("evaluation_name"))
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


def _uuid_of(path: str) -> str:
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


def finding(path: str, mine: Facts, match: Match, where: Callable[[str], str] = lambda p: p) -> Finding:
    new, old = mine.uuid[:8], match.other.uuid[:8]
    if match.identical:
        message = f"duplicates {match.path}: {evidence(mine, match)}"
        hint = (
            "the same result submitted twice, not a re-run: leave this copy out "
            f"(git rm --cached {path}); once both are committed, mark it: "
            f"tools/mark-duplicate {new} --of {old} --reason ..."
        )
    else:
        message = f"repeats the evaluation of {match.path}: {evidence(mine, match)}"
        hint = (
            f"if it corrects the other, supersede it (tools/supersede {old} <this record> --reason ...); "
            f"if it is the same run again, mark it (tools/mark-duplicate {new} --of {old} --reason ...); "
            "a different run has its own evaluation_id (see governance/README.md, Duplicates)"
        )
    return Finding(where(path), "$", message, hint, severity=WARNING, check="duplicates")


# --- the index ------------------------------------------------------------------------------


def _git(root: Path, *args: str, input: bytes | None = None) -> bytes | None:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, input=input)
    return proc.stdout if proc.returncode == 0 else None


def _is_record(path: str) -> bool:
    return path.startswith("data/") and path.endswith(RECORD_SUFFIX) and path.count("/") == 4


def read_blobs(root: Path, blobs: list[str]) -> Iterator[tuple[str, bytes | None]]:
    """(blob id, bytes) of each blob, through one ``git cat-file --batch``."""
    if not blobs:
        return
    out = _git(root, "cat-file", "--batch", input="".join(b + "\n" for b in blobs).encode()) or b""
    pos = 0
    for blob in blobs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            yield blob, None
            continue
        size = int(header[2])
        yield blob, out[pos : pos + size]
        pos += size + 1


def _parse(data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    try:  # strict, as the validator reads records: a lone surrogate, NaN or deep nesting is no record
        doc = strict_loads(data)
    except JSONProblem:
        return None
    return doc if isinstance(doc, dict) else None


class DuplicateIndex:
    """The duplicate keys of every record of a tree, by path. Backed by SQLite in the git
    directory (``eee-duplicates.sqlite``; in memory outside git)."""

    def __init__(self, root: Path, name: str = INDEX_FILE) -> None:
        self.root = Path(root)
        git_dir = _git(self.root, "rev-parse", "--absolute-git-dir")
        self.git = git_dir is not None
        target = os.path.join(git_dir.decode().strip(), name) if git_dir else ":memory:"
        try:
            self.db = self._open(target)
        except sqlite3.DatabaseError:  # a damaged cache: it is only a cache, start again
            for leftover in (target, target + "-wal", target + "-shm"):
                if leftover != ":memory:" and os.path.exists(leftover):
                    os.unlink(leftover)
            self.db = self._open(target)

    def _open(self, target: str) -> sqlite3.Connection:
        db = sqlite3.connect(target, timeout=30, isolation_level=None)
        try:
            if self.git:
                db.execute("PRAGMA journal_mode=WAL")
            db.executescript(
                "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT);"
                "CREATE TABLE IF NOT EXISTS records (path TEXT PRIMARY KEY, blob TEXT, facts TEXT);"
                "CREATE TABLE IF NOT EXISTS keys (k TEXT, path TEXT);"
                "CREATE INDEX IF NOT EXISTS keys_k ON keys (k);"
                "CREATE INDEX IF NOT EXISTS keys_path ON keys (path);"
            )
            row = db.execute("SELECT v FROM meta WHERE k = 'version'").fetchone()
            if not row or row[0] != INDEX_VERSION:
                db.executescript("DELETE FROM records; DELETE FROM keys; DELETE FROM meta;")
                db.execute("INSERT INTO meta (k, v) VALUES ('version', ?)", (INDEX_VERSION,))
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def close(self) -> None:
        self.db.close()

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)", (key, value))

    def _put(self, path: str, blob: str, doc: dict[str, Any] | None) -> None:
        self.db.execute("DELETE FROM keys WHERE path = ?", (path,))
        if doc is None:
            self.db.execute("INSERT OR REPLACE INTO records (path, blob, facts) VALUES (?, ?, NULL)", (path, blob))
            return
        f = facts(_uuid_of(path), doc)
        self.db.execute(
            "INSERT OR REPLACE INTO records (path, blob, facts) VALUES (?, ?, ?)", (path, blob, json.dumps(f))
        )
        self.db.executemany(
            "INSERT INTO keys (k, path) VALUES (?, ?)", [(k, path) for k in {f.content, *(r[0] for r in f.results)}]
        )

    def _drop(self, path: str) -> None:
        self.db.execute("DELETE FROM keys WHERE path = ?", (path,))
        self.db.execute("DELETE FROM records WHERE path = ?", (path,))

    def sync(self, rev: str = "HEAD") -> int:
        """Bring the index to the ``data/`` tree of ``rev`` (outside git: the work tree).
        Returns how many records were (re)read."""
        if not self.git:
            return self._sync_folder()
        out = _git(self.root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{tree}}")
        if out is None:
            return 0
        tree = (_git(self.root, "rev-parse", "--verify", "--quiet", f"{out.decode().strip()}:data") or b"").strip()
        current = tree.decode() or "none"
        old = self._meta("tree")
        if old == current:
            return 0
        changes: list[tuple[str, str, str | None]] = []  # (status, path, blob)
        if old and old != "none" and current != "none":
            raw = _git(self.root, "diff-tree", "-r", "-z", "--no-renames", "--raw", old, current) or b""
            fields = raw.split(b"\0")
            for i in range(0, len(fields) - 1, 2):
                meta = fields[i].decode().lstrip(":").split()
                if len(meta) < 5:
                    continue
                path = "data/" + fields[i + 1].decode("utf-8", "surrogateescape")
                if _is_record(path):
                    changes.append((meta[4][0], path, meta[3]))
        else:
            self.db.executescript("DELETE FROM records; DELETE FROM keys;")
            if current != "none":
                listing = _git(self.root, "ls-tree", "-r", "-z", current) or b""
                for entry in listing.split(b"\0"):
                    if not entry:
                        continue
                    meta, _, name = entry.partition(b"\t")
                    parts = meta.split()
                    path = "data/" + name.decode("utf-8", "surrogateescape")
                    if len(parts) == 3 and parts[1] == b"blob" and _is_record(path):
                        changes.append(("A", path, parts[2].decode()))
        wanted = [(p, b) for s, p, b in changes if s != "D" and b]
        self.db.execute("BEGIN")
        try:
            for status, path, _ in changes:
                if status == "D":
                    self._drop(path)
            blobs = dict(read_blobs(self.root, [b for _, b in wanted]))
            for path, blob in wanted:
                self._put(path, blob, _parse(blobs.get(blob)))
            self._set("tree", current)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return len(wanted)

    def _sync_folder(self) -> int:
        n = 0
        data = self.root / "data"
        for dirpath, _, files in os.walk(data):
            for name in files:
                rel = os.path.relpath(os.path.join(dirpath, name), self.root).replace(os.sep, "/")
                if _is_record(rel):
                    try:
                        self._put(rel, "", _parse(read_regular(Path(self.root, rel), RECORD_MAX_BYTES, "record")))
                    except OSError:
                        continue
                    n += 1
        return n

    def facts_of(self, path: str) -> Facts | None:
        row = self.db.execute("SELECT facts FROM records WHERE path = ?", (path,)).fetchone()
        if not row or row[0] is None:
            return None
        f = json.loads(row[0])
        return Facts(*f[:6], [tuple(r) for r in f[6]])  # type: ignore[misc]

    def matches(self, path: str, mine: Facts) -> list[Match]:
        """Records of the index that duplicate ``mine`` (at ``path``, left out)."""
        keys = [mine.content, *(r[0] for r in mine.results)]
        marks = ",".join("?" * len(keys))
        rows = self.db.execute(f"SELECT DISTINCT path FROM keys WHERE k IN ({marks})", keys).fetchall()
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
            "SELECT k, path FROM keys WHERE k IN (SELECT k FROM keys GROUP BY k HAVING COUNT(*) > 1) ORDER BY k"
        )
        first: dict[str, str] = {}
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


# --- the rule -------------------------------------------------------------------------------


def staged_findings(
    root: Path,
    paths: Iterable[str],
    load: Callable[[str], dict[str, Any] | None],
    where: Callable[[str], str] = lambda p: p,
    index: DuplicateIndex | None = None,
    ledger: Any = None,
) -> list[Finding]:
    """Warnings for the records ``paths`` (repository paths) about to be committed: each
    against every record of HEAD (through the index) and the others staged with it.
    ``ledger`` (read only when a match is found): pairs it links are not warned about."""
    mine: dict[str, Facts] = {}
    for path in paths:
        if _is_record(path):
            doc = load(path)
            if doc is not None:
                mine[path] = facts(_uuid_of(path), doc)
    if not mine:
        return []
    own = index is None
    index = index or DuplicateIndex(root)
    try:
        index.sync()
        found: list[tuple[str, Facts, Match]] = []
        for path, f in mine.items():
            found += [(path, f, m) for m in index.matches(path, f) if m.path not in mine]
            for other, theirs in mine.items():
                if other != path and other < path:  # staged together: warn on the later path
                    m = compare(f, theirs, other)
                    if m:
                        found.append((path, f, m))
    finally:
        if own:
            index.close()
    if not found:
        return []
    if ledger is None:
        from eee.governance.status import read_ledger  # lazy: the ledger (YAML) is read only when a match needs it

        ledger = read_ledger(root)
    return [finding(path, f, m, where) for path, f, m in found if not ledger.linked(f.uuid, m.other.uuid)]


def duplicate_findings(
    path: str,
    doc: dict[str, Any],
    others: dict[str, dict[str, Any]],
    where: Callable[[str], str] = lambda p: p,
    linked: Callable[[str, str], bool] | None = None,
) -> list[Finding]:
    """The rule on documents in hand: ``doc`` (at ``path``) against ``others`` (path -> doc)."""
    mine = facts(_uuid_of(path), doc)
    out = []
    for other_path, other in sorted(others.items()):
        if other_path == path:
            continue
        theirs = facts(_uuid_of(other_path), other)
        m = compare(mine, theirs, other_path)
        if m and not (linked and linked(mine.uuid, theirs.uuid)):
            out.append(finding(path, mine, m, where))
    return out


def audit_duplicates(
    commit: str, paths: list[str], cwd: Path, where: Callable[[str], str], ledger: Any = None
) -> list[Finding]:
    """The rule for the records ``paths`` a commit added, against the whole store at that
    commit (its own index file, so the hook's index keeps following HEAD)."""
    paths = [p for p in paths if _is_record(p)]
    if not paths:
        return []
    index = DuplicateIndex(cwd, name="eee-duplicates-audit.sqlite")
    try:
        index.sync(commit)
        found: list[tuple[str, Facts, Match]] = []
        for path in paths:
            f = index.facts_of(path)
            if f is None:
                continue
            found += [(path, f, m) for m in index.matches(path, f) if not (m.path in paths and m.path > path)]
    finally:
        index.close()
    if not found:
        return []
    ledgers = [ledger] if ledger is not None else [ledger_at(cwd, commit), ledger_at(cwd, "HEAD")]
    # linked at that commit, or later (a pair marked since is never warned about again)
    return [
        finding(path, f, m, where)
        for path, f, m in found
        if not any(led.linked(f.uuid, m.other.uuid) for led in ledgers)
    ]


def ledger_at(cwd: Path, rev: str) -> Any:
    """The ledger as it stood at ``rev`` (its events, in history order)."""
    sha = (_git(cwd, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}") or b"").strip()
    return _ledger_at(str(cwd), sha.decode() or rev)


@functools.lru_cache(maxsize=16)
def _ledger_at(cwd_text: str, commit: str) -> Any:
    cwd = Path(cwd_text)
    from eee.governance.events import EventFileError, load_text  # lazy: only when a match needs the ledger
    from eee.governance.history import entered  # lazy: with the above
    from eee.governance.status import fold  # lazy: with the above

    listing = _git(cwd, "ls-tree", "-z", f"{commit}:{EVENTS_DIR}") or b""
    blobs = []
    for entry in listing.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob" and name.decode(errors="replace").endswith(EVENT_SUFFIX):
            blobs.append(parts[2].decode())
    events = []
    for _, data in read_blobs(cwd, blobs):
        try:
            events.append(load_text((data or b"").decode("utf-8")))
        except (EventFileError, UnicodeDecodeError):
            continue
    return fold(events, entered=entered(cwd, commit))
