"""Groups of likely aliases across the store (``eee identity``), with the evidence.

Every record's spellings (:func:`eee.store.identity.record_spellings`: its developer, model
id, benchmark folder and metric ids) are counted in one streamed pass over ``data/``
(records are read one at a time; what is kept is one count and one example path per
distinct spelling, never per record). Spellings of one kind that share a normalised key
(:func:`eee.store.identity.key`: case and punctuation aside) are one group; for developers,
benchmarks and metrics, so are spellings one letter apart (a near miss), found by blocking
on the keys' one-letter deletions, never by comparing every pair. The registry's own
spellings join the groups, and a group says whether the registry already settles it: every
spelling one canonical id (an alias of it, or it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eee.store import identity
from eee.store.identity import KINDS, MODEL, Registry, key

NEAR_KINDS = ("developer", "benchmark", "metric")  # model ids: too many to block on, and grouped by their key


class Seen:
    """What the scan keeps of one spelling: how many records give it, and the first one's path."""

    __slots__ = ("example", "records")

    def __reduce__(self) -> Any:  # to and from a worker process
        return (_seen, (self.example, self.records))

    def __init__(self, example: str) -> None:
        self.records = 0
        self.example = example


def _seen(example: str, records: int) -> Seen:
    found = Seen(example)
    found.records = records
    return found


class Scan:
    """The spellings of a store, by kind."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, Seen]] = {kind: {} for kind in KINDS}
        self.records = 0
        self.unreadable: list[str] = []

    def add(self, kind: str, spelling: str, rel: str) -> None:
        table = self.seen[kind]
        found = table.get(spelling)
        if found is None:
            found = table[spelling] = Seen(rel)
        found.records += 1


def _names(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return sorted(e.name for e in it if not e.name.startswith("."))
    except OSError:
        return []


def developer_folders(root: Path) -> Iterator[str]:
    """``data/<benchmark>/<developer>`` of every developer folder, in sorted order."""
    data = os.path.join(root, "data")
    for benchmark in _names(data):
        for developer in _names(os.path.join(data, benchmark)):
            yield f"data/{benchmark}/{developer}"


def record_files(root: Path, folder: str) -> Iterator[str]:
    """The store-relative path of every record of one developer folder, model by model."""
    for model in _names(os.path.join(root, folder)):
        for name in _names(os.path.join(root, folder, model)):
            if name.endswith(".json"):
                yield f"{folder}/{model}/{name}"


def _scan_folder(root: str, folder: str) -> Scan:
    """The spellings of one developer folder's records. A record is read within the record
    cap and parsed as JSON (strictness is the validator's: a file it refuses is still
    counted here by what it says, or as unreadable)."""
    import orjson

    from eee.store.limits import RECORD_MAX_BYTES, Unreadable, read_regular

    out = Scan()
    benchmark = folder.split("/", 2)[1]
    for rel in record_files(Path(root), folder):
        try:
            doc = orjson.loads(read_regular(os.path.join(root, rel), RECORD_MAX_BYTES, "record"))
        except (Unreadable, OSError, orjson.JSONDecodeError) as exc:
            out.unreadable.append(f"{rel}: {exc}")
            continue
        out.records += 1
        if not isinstance(doc, dict):
            out.unreadable.append(f"{rel}: not a JSON object")
            continue
        for kind, spelling, _pointer in identity.record_spellings(doc, benchmark):
            out.add(kind, spelling, rel)
    return out


def _merge(into: Scan, part: Scan) -> None:
    into.records += part.records
    into.unreadable += part.unreadable
    for kind, seen in part.seen.items():
        mine = into.seen[kind]
        for spelling, found in seen.items():
            known = mine.get(spelling)
            if known is None:
                mine[spelling] = found
            else:
                known.records += found.records
                known.example = min(known.example, found.example)  # the first in path order, however run


def _worker(args: tuple[str, str]) -> Scan:
    return _scan_folder(*args)


def scan(root: Path, progress: Any = None, jobs: int = 1) -> Scan:
    """Every record's spellings, a developer folder at a time (in ``jobs`` worker processes
    when more than one); a record that cannot be read is counted in ``unreadable``, never
    silently dropped. Memory holds one count and one example per distinct spelling."""
    out = Scan()
    folders = ((str(root), folder) for folder in developer_folders(root))
    if jobs <= 1:
        parts: Iterator[Scan] = map(_worker, folders)
        pool = None
    else:
        import multiprocessing

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        pool = multiprocessing.get_context(method).Pool(jobs)
        parts = pool.imap(_worker, folders, chunksize=4)
    try:
        for part in parts:
            _merge(out, part)
            if progress is not None:
                progress(out.records)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return out


class _Union:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, a: str) -> str:
        root = a
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while self.parent.get(a, a) != root:
            self.parent[a], a = root, self.parent[a]
        return root

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def groups(found: Scan, reg: Registry, kinds: tuple[str, ...] = KINDS) -> list[dict[str, Any]]:
    """The groups of likely aliases, kind by kind, each with its evidence (see the module docstring)."""
    out: list[dict[str, Any]] = []
    for kind in kinds:
        table = reg[kind]
        seen = found.seen[kind]
        by_key: dict[str, set[str]] = {}
        for spelling in [*seen, *table.spellings()]:
            k = key(spelling)
            if k:
                by_key.setdefault(k, set()).add(spelling)
        union = _Union()
        if kind in NEAR_KINDS:
            blocks: dict[str, list[str]] = {}
            for k in by_key:
                if len(k) >= identity.NEAR_MIN:
                    for d in identity.deletions(k):
                        blocks.setdefault(d, []).append(k)
            for k in by_key:  # a key one letter shorter than another, or two with one deletion in common
                for other in [*blocks.get(k, []), *(o for d in identity.deletions(k) for o in blocks.get(d, []))]:
                    if other != k and _near(k, other):
                        union.join(k, other)
        clusters: dict[str, list[str]] = {}
        for k in by_key:
            clusters.setdefault(union.find(k), []).append(k)
        for keys in clusters.values():
            spellings = sorted({s for k in keys for s in by_key[k]})
            if len(spellings) < 2 or not any(s in seen for s in spellings):
                continue  # one spelling, or the registry's own spellings with no record
            out.append(_group(kind, sorted(keys), spellings, seen, reg))
    out.sort(key=lambda g: (KINDS.index(g["kind"]), not g["open"], -g["records"], g["key"]))
    return out


def _near(a: str, b: str) -> bool:
    """One letter apart: one more or less, or two swapped (substitutions are not near misses)."""
    if len(a) == len(b):
        return any(s == b for s in identity.swaps(a))
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return len(long) == len(short) + 1 and any(d == short for d in identity.deletions(long))


def _group(kind: str, keys: list[str], spellings: list[str], seen: dict[str, Seen], reg: Registry) -> dict[str, Any]:
    table = reg[kind]
    canonical = reg.canonical_model if kind == MODEL else table.canonical  # a model's developer counts too
    rows = []
    for s in spellings:
        found = seen.get(s)
        state = (
            "canonical"
            if s in table.entries
            else f"alias of {table.aliases[s].canonical}"
            if s in table.aliases
            else None
        )
        rows.append(
            {
                "id": s,
                "records": found.records if found else 0,
                "example": found.example if found else None,
                "registry": state,
                "canonical": canonical(s),
            }
        )
    canonicals = {r["canonical"] for r in rows}
    registered = [c for c in canonicals if c in table.entries]
    # settled: one canonical id, and the registry says so (an entry, or a spelling it maps to another)
    aliased = len(canonicals) == 1 and (bool(registered) or any(r["canonical"] != r["id"] for r in rows))
    if registered:
        target = sorted(registered)[0]
    elif aliased:
        target = next(iter(canonicals))
    else:
        target = max(rows, key=lambda r: (r["records"], r["id"] == r["id"].lower(), r["id"]))["id"]
    how = _how(keys, spellings)
    commands = []
    if not aliased:
        from eee.reporting.shown import command

        for r in rows:
            if r["canonical"] != target and r["id"] != target:
                commands.append(command("identity", "alias", r["id"], "--to", target, "--kind", kind, "--commit"))
    return {
        "kind": kind,
        "key": keys[0],
        "how": how,
        "spellings": rows,
        "records": sum(r["records"] for r in rows),
        "canonical": target,
        "aliased": aliased,
        "open": not aliased,
        "commands": commands,
    }


def _how(keys: list[str], spellings: list[str]) -> str:
    """What the spellings share: only case, case and punctuation, or (also) one letter."""
    if len(keys) > 1:
        return identity.NEAR
    folded = {s.casefold() for s in spellings}
    return identity.CASE if len(folded) == 1 else identity.PUNCTUATION


def summary(found: Scan, listed: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "records": found.records,
        "unreadable": found.unreadable,
        "spellings": {kind: len(found.seen[kind]) for kind in KINDS},
        "groups": listed,
        "open": sum(1 for g in listed if g["open"]),
        "total": len(listed),
    }
