"""Planning an import: one outcome for every file of a source tree.

The source is any :class:`eee.store.tree.Tree` (a folder through ``WorkTree``, a git revision
through ``GitTree``); the store is read through a tree too. Records are taken in batches
(one benchmark, or ``batch`` records); each batch's planned files are validated through an
:class:`eee.store.tree.Overlay` over the store's tree, under the schema version each declares,
and nothing is copied anywhere to be checked. Only one batch's bytes are held at a time.

Outcomes (see :mod:`eee.imports`):

- refused: a source name that cannot be used nor shown as it is (a control, invisible or
  bidirectional character, a byte that is not UTF-8: :func:`eee.store.paths.name_problem`;
  a ``..``, ``.git`` or empty component a crafted git tree may hold; the report and the
  manifest show it escaped), unreadable, not strict JSON, invalid under its declared schema version, a file
  name that is not a uuid, not in the layout at all (no benchmark folder, not a record or
  sidecar), a uuid the store (or an earlier file of the source) holds with other content,
  a sidecar without its record or that does not match it;
- already present: the store (or an earlier file of the source) holds identical bytes;
- relocated: the path breaks the layout or portability rules, or its folders do not come
  from ``model_info.id``: the same bytes go to the canonical path;
- flagged: it breaks store rules beyond its schema (a score outside its bounds, a sidecar
  ``file_path`` that is not its own, a ``model_info.id`` without developer, ...): imported
  unchanged, with one flag per (rule, JSON path);
- imported: everything else, unchanged at its own path.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

from eee.governance.manifests import FLAGGED, IMPORTED, PRESENT, REFUSED, RELOCATED, WRITTEN
from eee.reporting.findings import ERROR, Finding
from eee.rules.registry import FLAGGABLE
from eee.store.paths import (
    DATA_DIR,
    POINTER_SUFFIX,
    RECORD_SUFFIX,
    SIDECAR_SUFFIX,
    UUID4_RE,
    canonical_folders,
    escaped,
    name_problem,
    portable_component,
    record_path_for_sidecar,
    sidecar_path_for,
    tree_path_problem,
)
from eee.store.strictjson import JSONProblem, loads

# Checks whose warnings in the validator are errors at the gate (the naming hook).
GATE_ERRORS = frozenset({"naming"})
# Records planned and validated at a time (bounds memory: one chunk's bytes are held);
# a batch (one commit) is one or more chunks.
CHUNK = 200


class Flag:
    """One store rule a record breaks: (rule, JSON path) and the finding's message."""

    __slots__ = ("event", "message", "path", "rule")

    def __init__(self, rule: str, path: str, message: str) -> None:
        self.rule = rule
        self.path = path
        self.message = message
        self.event: str | None = None  # the flag event's id, once written

    def to_dict(self) -> dict[str, str]:
        out = {"rule": self.rule, "path": self.path, "message": self.message}
        if self.event:
            out["event"] = self.event
        return out


class Entry:
    """One source file and what happens to it."""

    __slots__ = ("benchmark", "flags", "kind", "outcome", "reason", "sha256", "source", "store", "uuid")

    def __init__(self, source: str, kind: str) -> None:
        self.source = source  # path in the source tree
        self.kind = kind  # record, sidecar or other
        self.outcome: str | None = None
        self.store: str | None = None  # path in the store (None when refused)
        self.sha256: str | None = None
        self.reason: str | None = None
        self.flags: list[Flag] = []
        self.uuid: str | None = None
        self.benchmark: str | None = None

    def refuse(self, reason: str) -> Entry:
        self.outcome, self.store, self.reason = REFUSED, None, reason
        return self

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "kind": self.kind, "outcome": self.outcome}
        if self.store is not None:
            out["store"] = self.store
        if self.sha256 is not None:
            out["sha256"] = self.sha256
        if self.reason:
            out["reason"] = self.reason
        if self.flags:
            out["flags"] = [f.to_dict() for f in self.flags]
        return out


class Batch:
    """One chunk of a batch: its records (with their sidecars) and the bytes to write.
    ``last`` is set on the batch's last chunk (where a commit goes)."""

    def __init__(self, label: str) -> None:
        self.label = label  # the benchmark, or "records i-j"
        self.last = True
        self.entries: list[Entry] = []
        self.data: dict[str, bytes] = {}  # store path -> bytes, for the files to write
        self.docs: dict[str, dict[str, Any]] = {}  # store path -> parsed record (this chunk only)

    def written(self) -> list[Entry]:
        return [e for e in self.entries if e.outcome in (IMPORTED, RELOCATED, FLAGGED)]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def target_path(rel: str, doc: dict[str, Any]) -> tuple[str | None, str | None]:
    """(canonical store path, None) for a source record, or (None, why it has none).

    The benchmark is the first folder under data/, the uuid the file name (lowercased),
    ``<developer>/<model>`` come from ``model_info.id``. When the id has no developer and
    model part, the record's own folders are kept at the right depth (portably spelled);
    otherwise the id's parts (or ``model_info.developer``) are used, ``unknown`` for an
    empty one. Either way the naming rule then flags the record."""
    parts = rel.split("/")
    stem = parts[-1][: -len(RECORD_SUFFIX)]
    uuid = stem if UUID4_RE.match(stem) else stem.lower() if UUID4_RE.match(stem.lower()) else None
    if uuid is None:
        return None, f"not in the layout: the file name {parts[-1]!r} is not <uuid4>.json"
    if len(parts) < 3:
        return None, "not in the layout: no benchmark folder (data/<benchmark>/<developer>/<model>/<uuid>.json)"
    benchmark = portable_component(parts[1])
    info = doc.get("model_info")
    info = info if isinstance(info, dict) else {}
    model_id = info.get("id")
    folders = canonical_folders(model_id) if isinstance(model_id, str) else None
    if not isinstance(model_id, str):  # the schema says what is wrong, where the record stands
        if len(parts) != 5:
            return None, "not in the layout, and model_info.id is missing (nothing to place it by)"
        folders = (portable_component(parts[2]), portable_component(parts[3]))
    elif folders is None:
        if len(parts) == 5:
            folders = (portable_component(parts[2]), portable_component(parts[3]))
        else:
            if "/" in model_id:
                developer, model = model_id.split("/", 1)
            else:
                given = info.get("developer")
                developer, model = (given if isinstance(given, str) else ""), model_id
            folders = (portable_component(developer), portable_component(model.replace("/", "_")))
    return f"{DATA_DIR}/{benchmark}/{folders[0]}/{folders[1]}/{uuid}{RECORD_SUFFIX}", None


class Planner:
    """Plans the import of ``source`` into the store read through ``store_tree()``.

    ``store_tree`` is called once per batch (a fresh view: earlier batches may have been
    written). Batches are yielded validated; the caller writes them (or not, on a dry run)
    before asking for the next one."""

    def __init__(
        self,
        source: Any,
        store_tree: Callable[[], Any],
        batch: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        store_duplicates: Callable[[str, Any], list[Any]] | None = None,
        planned_keys: str = ":memory:",
    ) -> None:
        self.source = source
        self.store_tree = store_tree
        self.batch = batch
        self.progress = progress
        # the duplicate rule: matches in the store as it was (path, Facts -> Matches), and
        # the facts of every record planned so far, by duplicate key
        self.store_duplicates = store_duplicates
        self.planned_facts = PlannedKeys(planned_keys)
        self.group = 0  # the batch (commit) being planned
        self.entries: list[Entry] = []  # every source file, in source order at the end
        self.claimed: dict[str, tuple[str, str]] = {}  # uuid -> (store path, sha256) planned earlier
        self.planned_paths: set[str] = set()  # store paths planned by earlier batches
        self._store_records: dict[str, list[str]] | None = None
        self.spelling: dict[str, str] = {}  # folder path, case-folded -> its spelling in the store or plan

    # --- the store as it was before the import --------------------------------------

    def store_records(self, tree: Any) -> dict[str, list[str]]:
        """uuid -> every record path of the store holding it (the rule ``uuid``'s holders)."""
        if self._store_records is None:
            from eee.rules.uuids import by_uuid

            listed = tree.files(DATA_DIR)
            for rel in listed:
                self._spell(rel.rsplit("/", 1)[0])
            self._store_records = by_uuid(listed)
        return self._store_records

    def _spell(self, folder: str) -> str:
        """``folder`` as the store (or an earlier planned file) already spells it: two
        paths that differ only in case collide on macOS and Windows."""
        out = ""
        for part in folder.split("/"):
            path = f"{out}/{part}" if out else part
            out = self.spelling.setdefault(path.casefold(), path)
        return out

    # --- the plan -------------------------------------------------------------------

    def batches(self) -> Iterator[Batch]:
        everything = self.source.files(DATA_DIR)
        total = len(everything)
        done = 0
        listing = []
        order: dict[str, int] = {}
        for rel in everything:
            problem = name_problem(rel) or tree_path_problem(rel)
            order[rel if problem is None else shown(rel)] = len(order)
            if problem is None:
                listing.append(rel)
                continue
            kind = "record" if rel.endswith(RECORD_SUFFIX) else "sidecar" if rel.endswith(SIDECAR_SUFFIX) else "other"
            entry = Entry(rel, kind)
            self._sha_of(entry)
            entry.source = shown(rel)
            entry.refuse(f"unusable source name: {problem}; rename it in the source")
            self.entries.append(entry)
            done += 1
        records = [p for p in listing if p.endswith(RECORD_SUFFIX)]
        record_set = set(records)
        sidecars = {p for p in listing if p.endswith(SIDECAR_SUFFIX)}
        for rel in listing:
            if rel in record_set or rel in sidecars:
                continue
            entry = Entry(rel, "other")
            if rel.endswith(SIDECAR_SUFFIX + POINTER_SUFFIX):
                entry.refuse("a DVC pointer, not the sidecar itself: pull the sidecars in the source first (dvc pull)")
            else:
                entry.refuse(
                    "not in the layout: data/ holds <uuid>.json records and <uuid>_samples.jsonl sidecars only"
                )
            self._sha_of(entry)
            self.entries.append(entry)
            done += 1
        for rel in sorted(sidecars):
            if record_path_for_sidecar(rel) not in record_set:
                entry = Entry(rel, "sidecar").refuse("a sidecar without its record <uuid>.json beside it")
                self._sha_of(entry)
                self.entries.append(entry)
                done += 1
        if self.progress:
            self.progress(done, total)
        for label, group in self._groups(records):
            self.group += 1
            for i in range(0, len(group), CHUNK):
                batch = self._plan_batch(label, group[i : i + CHUNK], sidecars)
                batch.last = i + CHUNK >= len(group)
                done += len(batch.entries)
                if self.progress:
                    self.progress(done, total)
                yield batch
                batch.data.clear()
                batch.docs.clear()
        self.entries.sort(key=lambda e: order.get(e.source, len(order)))

    def _groups(self, records: list[str]) -> Iterator[tuple[str, list[str]]]:
        if self.batch:
            for i in range(0, len(records), self.batch):
                chunk = records[i : i + self.batch]
                yield f"records {i + 1}-{i + len(chunk)}", chunk
            return
        by_benchmark: dict[str, list[str]] = {}
        for rel in records:
            parts = rel.split("/")
            key = portable_component(parts[1]) if len(parts) >= 3 else ""
            by_benchmark.setdefault(key, []).append(rel)
        for key in sorted(by_benchmark):
            yield key or "(no benchmark)", by_benchmark[key]

    def _sha_of(self, entry: Entry) -> bytes | None:
        from eee.store.tree import Unreadable

        try:
            data = self.source.read(entry.source)
        except Unreadable as exc:
            if entry.outcome is None:
                entry.refuse(f"unreadable: {exc.finding.message}")
            return None
        entry.sha256 = _sha256(data)
        return data

    def _plan_batch(self, label: str, records: list[str], sidecars: set[str]) -> Batch:
        from eee.store.tree import Overlay

        store = self.store_tree()
        known = self.store_records(store)
        batch = Batch(label)
        pairs: list[tuple[Entry, Entry | None]] = []
        for rel in records:
            entry = Entry(rel, "record")
            data = self._sha_of(entry)
            side_rel = sidecar_path_for(rel)
            side = Entry(side_rel, "sidecar") if side_rel in sidecars else None
            side_data = self._sha_of(side) if side is not None else None
            self.entries.append(entry)
            if side is not None:
                self.entries.append(side)
            batch.entries.append(entry)
            if side is not None:
                batch.entries.append(side)
            if data is None:
                self._pair_refused(entry, side)
                continue
            doc = self._place(entry, data, known, store)
            if entry.outcome is None and side is not None and side_data is None:
                entry.refuse(f"its sidecar {side.source.rsplit('/', 1)[-1]} is unreadable: {side.reason}")
            if entry.outcome is not None:
                self._pair_settled(entry, side, store)
                continue
            assert entry.store is not None and doc is not None
            batch.data[entry.store] = data
            batch.docs[entry.store] = doc
            if side is not None and side_data is not None:
                side.store = sidecar_path_for(entry.store)
                batch.data[side.store] = side_data
            pairs.append((entry, side))
        if pairs:
            self._validate(batch, pairs, Overlay(store, {**dict.fromkeys(self.planned_paths, b""), **batch.data}))
        keep: set[str] = set()  # the bytes of what was refused during validation are dropped
        for entry, side in pairs:
            if entry.outcome in WRITTEN and entry.store:
                keep.add(entry.store)
                if side is not None and side.store:
                    keep.add(side.store)
        for path in list(batch.data):
            if path not in keep:
                del batch.data[path]
        for entry, _ in pairs:
            if entry.outcome != REFUSED and entry.uuid and entry.store and entry.sha256:
                self.claimed[entry.uuid] = (entry.store, entry.sha256)
        self.planned_paths.update(batch.data)
        return batch

    def _place(self, entry: Entry, data: bytes, known: dict[str, str], store: Any) -> dict[str, Any] | None:
        """Decide where a readable record goes, or settle it (refused / already present);
        returns the parsed record."""
        name = entry.source.rsplit("/", 1)[-1]
        stem = name[: -len(RECORD_SUFFIX)]
        if not UUID4_RE.match(stem.lower()):
            entry.refuse(f"not in the layout: the file name {name!r} is not <uuid4>.json")
            return None
        try:
            doc = loads(data)
        except JSONProblem as problem:
            where = f" (line {problem.line})" if problem.line else ""
            entry.refuse(f"not strict JSON{where}: {problem.message}")
            return None
        if not isinstance(doc, dict):
            entry.refuse("not a record: a record is one JSON object")
            return None
        target, why = target_path(entry.source, doc)
        if target is None:
            entry.refuse(why or "not in the layout")
            return None
        folder, name = target.rsplit("/", 1)
        uuid = name[: -len(RECORD_SUFFIX)]
        entry.uuid = uuid
        entry.benchmark = target.split("/")[1]
        earlier = self.claimed.get(uuid)
        if earlier is not None and earlier[1] == entry.sha256:
            entry.outcome, entry.store = PRESENT, earlier[0]
            entry.reason = "identical to an earlier file of this source"
            return None
        held = known.get(uuid, [])
        if held:
            from eee.store.tree import Unreadable

            for existing in held:
                try:
                    same = _sha256(store.read(existing)) == entry.sha256
                except Unreadable:
                    same = False
                if same:  # the very record: already present, wherever the store holds it
                    entry.outcome, entry.store = PRESENT, existing
                    entry.reason = None if existing == target else "identical content already in the store"
                    return None
        if held or earlier is not None:  # one uuid, one record: never another file under a taken uuid
            from eee.rules.uuids import merged, uuid_findings

            planned = {uuid: [earlier[0]]} if earlier is not None else {}
            taken = uuid_findings([target], merged(known, planned))
            where = "the store holds it" if held else "an earlier file of this source holds it"
            if taken:
                entry.refuse(f"{taken[0].message} ({where}); give this record a fresh uuid in the source")
            else:  # its very path, with other bytes
                entry.refuse(f"the store already holds another record at {target}; records never change")
            return None
        entry.store = f"{self._spell(folder)}/{name}"
        return doc

    def _pair_refused(self, entry: Entry, side: Entry | None) -> None:
        if side is not None and side.outcome is None:
            side.refuse("its record is refused")

    def _pair_settled(self, entry: Entry, side: Entry | None, store: Any) -> None:
        """The sidecar of a record that is refused or already present."""
        if side is None or side.outcome is not None:
            return
        if entry.outcome == REFUSED:
            side.refuse("its record is refused")
            return
        assert entry.store is not None
        where = sidecar_path_for(entry.store)
        if store.exists(where) or store.exists(where + POINTER_SUFFIX) or where in self.planned_paths:
            side.outcome, side.store = PRESENT, where
        else:
            side.refuse(f"its record is already in the store ({entry.store}) without a sidecar")

    def _duplicates(self, entry: Entry, doc: dict[str, Any] | None) -> list[Finding]:
        """The duplicate rule's warnings the commit of ``entry`` will get, as the hooks and
        the audit give them: against the store, against records committed before it (an
        earlier batch), and against records of its own batch whose path sorts first."""
        if doc is None or entry.store is None:
            return []
        from eee.governance.duplicates import compare, facts
        from eee.rules.duplicates import finding

        mine = facts(str(entry.uuid), doc)
        matches = list(self.store_duplicates(entry.store, mine)) if self.store_duplicates else []
        seen = {m.path for m in matches}
        for group, path, theirs in self.planned_facts.matching(_keys(mine)):
            if path in seen or not (group < self.group or path < entry.store):
                continue
            found = compare(mine, theirs, path)
            if found:
                seen.add(path)
                matches.append(found)
        self.planned_facts.add(self.group, entry.store, mine)
        return [finding(entry.store, mine, m) for m in sorted(matches)[:1]]  # one flag: (duplicates, $)

    def _validate(self, batch: Batch, pairs: list[tuple[Entry, Entry | None]], tree: Any) -> None:
        """Validate the batch's planned files through ``tree`` (an overlay over the store in
        which earlier batches' files appear by name only) and settle every pair."""
        from eee.validation.validate import Options, validate_tree

        paths = [p for e, s in pairs for p in ((e.store,) if s is None or s.store is None else (e.store, s.store))]
        summary = validate_tree(tree, paths, Options(cap=1000))
        by_file: dict[str, list[Finding]] = {}
        suppressed: dict[str, int] = {}
        versions: dict[str, str | None] = {}
        for result in summary.results:
            by_file.setdefault(result.file, []).extend(result.findings)
            versions[result.file] = result.schema_version
            suppressed[result.file] = suppressed.get(result.file, 0) + result.suppressed
        fatal = summary.fatal
        accepted: list[tuple[Entry, Entry | None, list[Finding]]] = []
        for entry, side in pairs:
            assert entry.store is not None
            if fatal:
                entry.refuse(f"cannot validate: {fatal}")
                self._pair_refused(entry, side)
                continue
            findings = [f for f in by_file.get(tree.display(entry.store), []) if _blocks(f)]
            if side is not None and side.store is not None:
                side_errors = [f for f in by_file.get(tree.display(side.store), []) if _blocks(f)]
                if side_errors or suppressed.get(tree.display(side.store)):
                    first = side_errors[0] if side_errors else None
                    what = f"{first.pointer}: {first.message}" if first else "too many errors"
                    entry.refuse(f"its sidecar does not validate: {what}")
                    side.refuse(f"does not validate against its record: {what}")
                    continue
            # an error no flag may accept (not JSON, invalid under its version, a layout,
            # identity or sidecar error) refuses the record; the store's other rules are flagged
            refusing = [f for f in findings if f.check not in FLAGGABLE]
            if refusing or suppressed.get(tree.display(entry.store)):
                first = refusing[0] if refusing else None
                what = f"{first.pointer}: {first.message}" if first else "more errors than the validator lists"
                if first is not None and first.check == "schema":
                    entry.refuse(
                        f"invalid under its declared schema version {versions.get(tree.display(entry.store))}: {what}"
                    )
                elif first is not None and first.check == "version":
                    entry.refuse(f"no known schema version: {what}")
                else:
                    entry.refuse(f"invalid: {what}")
                self._pair_refused(entry, side)
                continue
            accepted.append((entry, side, findings))
        # the duplicate rule, in path order (the hooks warn on the later path of a pair)
        for entry, side, findings in sorted(accepted, key=lambda a: str(a[0].store)):
            findings = findings + self._duplicates(entry, batch.docs.get(str(entry.store)))
            seen: set[tuple[str, str]] = set()
            for f in findings:
                key = (f.check, f.pointer)
                if key not in seen:
                    seen.add(key)
                    entry.flags.append(Flag(f.check, f.pointer, f.message))
            moved = entry.store != entry.source
            if entry.flags:
                entry.outcome = FLAGGED
                if moved:
                    entry.reason = f"relocated from {entry.source}"
            else:
                entry.outcome = RELOCATED if moved else IMPORTED
            if side is not None and side.store is not None:
                side.outcome = RELOCATED if side.store != side.source else IMPORTED


class PlannedKeys:
    """The duplicate keys of the records planned so far, in SQLite (in the git dir: the
    import's memory stays flat however many records it plans)."""

    def __init__(self, target: str = ":memory:") -> None:
        import sqlite3

        self.target = target
        self.db = sqlite3.connect(target, isolation_level=None)
        self.db.executescript(
            "PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY;"  # a cache of this run, rebuilt each time
            "DROP TABLE IF EXISTS planned; DROP TABLE IF EXISTS planned_keys;"
            "CREATE TABLE planned (path TEXT PRIMARY KEY, grp INTEGER, facts TEXT);"
            "CREATE TABLE planned_keys (k TEXT, path TEXT); CREATE INDEX planned_k ON planned_keys (k);"
        )

    def add(self, group: int, path: str, facts: Any) -> None:
        import json

        self.db.execute("INSERT OR REPLACE INTO planned VALUES (?, ?, ?)", (path, group, json.dumps(facts)))
        self.db.executemany("INSERT INTO planned_keys VALUES (?, ?)", [(k, path) for k in set(_keys(facts))])

    def matching(self, keys: list[str]) -> list[tuple[int, str, Any]]:
        import json

        from eee.governance.duplicates import Facts

        marks = ",".join("?" * len(keys))
        rows = self.db.execute(
            f"SELECT DISTINCT p.grp, p.path, p.facts FROM planned_keys k JOIN planned p ON p.path = k.path "
            f"WHERE k.k IN ({marks}) ORDER BY p.path",
            keys,
        ).fetchall()
        out = []
        for group, path, raw in rows:
            f = json.loads(raw)
            out.append((group, path, Facts(*f[:6], [tuple(r) for r in f[6]])))
        return out

    def close(self) -> None:
        import os

        self.db.close()
        if self.target != ":memory:":
            try:
                os.unlink(self.target)
            except OSError:
                pass


def shown(rel: str) -> str:
    """A source path that cannot be shown as it is (:func:`eee.store.paths.name_problem`),
    escaped: what the report and the manifest name it by."""
    return escaped(rel)[1:-1]


def _keys(facts: Any) -> list[str]:
    return [facts.content, *(r[0] for r in facts.results)]


def _blocks(f: Finding) -> bool:
    """An error at the gate: the validator's errors, and the warnings the hooks raise."""
    return f.severity == ERROR or f.check in GATE_ERRORS
