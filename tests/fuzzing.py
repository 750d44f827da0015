"""Deterministic fuzz cases for the store's readers: mutated records, sidecars and events.

:func:`build` writes a store under a folder: copies of real records (the project's
``data/``, ``tests/examples`` and, when present, ``../shared/reference``) and of real
record/sidecar pairs, each under a fresh uuid at its canonical path, plus governance events
for some of them, and then mutates a share of them. Every case says what the validator
must find:

- ``bad``: the mutation breaks the file by construction (cut before the end, a NUL or an
  invalid UTF-8 byte inserted, nesting past the cap, a 400+ digit integer, NaN, a BOM, a
  duplicate key, a FIFO, a link, an oversized file, YAML aliases or tags, any change of a
  sidecar's bytes, which its checksum catches, ...): at least one finding on that file;
- ``good``: the file is untouched, or changed in a way that keeps it valid (re-indented,
  keys sorted, strings escaped, a YAML comment): no finding at all;
- ``any``: a random change (bytes flipped or dropped, a field deleted or retyped): the
  outcome is not known in advance, but the file must be reported, and its findings must be
  the same whether it is checked alone or among all the others.

The site has a fuzz of its own (:func:`site_store`, :func:`site_problems`): records, events
and an import manifest whose text fields hold random pieces of the injection corpus
(``tests/injection.py``), every generated page rendered as MkDocs renders it and scanned:
no element, attribute, link or script of the corpus may come out.

Used by ``tests/test_fuzz.py`` (bounded, in CI) and ``benchmarks/fuzz.py`` (100,000 cases).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import uuid as uuidlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import EXAMPLES, PROJECT, reference_or_none
from mutations import apply as apply_structural
from mutations import walk

RECORD_SUFFIX = ".json"
SIDECAR_SUFFIX = "_samples.jsonl"


@dataclass
class Case:
    kind: str  # record, sidecar, event
    op: str  # the mutation
    rel: str  # store-relative path of the file the case is about
    expect: str  # bad, good, any


@dataclass
class Seed:
    bench: str
    doc: dict[str, Any]
    rows: bytes | None = None  # the sidecar's bytes, for a pair


def _uuid(rng: random.Random) -> str:
    return str(uuidlib.UUID(int=rng.getrandbits(128), version=4))


def _canonical(bench: str, model_id: str, record_uuid: str) -> str | None:
    from eee.store.paths import canonical_record_path

    try:
        return canonical_record_path(bench, model_id, record_uuid)
    except ValueError:
        return None


def _bench_of(path: Path) -> str:
    parts = path.parts
    if "data" in parts:
        i = len(parts) - 1 - parts[::-1].index("data")
        if len(parts) > i + 1:
            return parts[i + 1]
    return "bench"


def candidate_seeds(limit_bytes: int = 200_000) -> tuple[list[Seed], list[Seed]]:
    """Real records (no sidecar) and real record/sidecar pairs, not yet checked."""
    records: list[Seed] = []
    pairs: list[Seed] = []
    sources = [PROJECT / "data", EXAMPLES / "aggregate" / "valid"]
    root = reference_or_none()  # a failure, not a smaller corpus, where the run requires the material
    if root is not None:
        sources += [root / "records", root / "records-with-samples", root / "converter-outputs"]
    for top in sources:
        if not top.is_dir():
            continue
        for path in sorted(top.rglob("*.json")):
            if not path.is_file() or path.stat().st_size > limit_bytes:
                continue
            try:
                doc = json.loads(path.read_bytes())
            except ValueError:
                continue
            if not isinstance(doc, dict) or not isinstance(doc.get("model_info"), dict):
                continue
            sidecar = path.with_name(path.name[: -len(RECORD_SUFFIX)] + SIDECAR_SUFFIX)
            if isinstance(doc.get("detailed_evaluation_results"), dict):
                if sidecar.is_file() and sidecar.stat().st_size <= limit_bytes * 10:
                    pairs.append(Seed(_bench_of(path), doc, sidecar.read_bytes()))
                doc = {k: v for k, v in doc.items() if k != "detailed_evaluation_results"}
            records.append(Seed(_bench_of(path), doc))
    aggregate = json.loads((EXAMPLES / "instance" / "aggregate.json").read_text())
    for rows in sorted((EXAMPLES / "instance" / "valid").glob("*.jsonl")):
        pairs.append(Seed("qa-bench", aggregate, rows.read_bytes()))
    return records, pairs


def _pair_doc(seed: Seed, rel: str, rows: bytes) -> dict[str, Any]:
    doc = copy.deepcopy(seed.doc)
    der = doc["detailed_evaluation_results"]
    der["file_path"] = rel[: -len(RECORD_SUFFIX)] + SIDECAR_SUFFIX
    der["checksum"] = hashlib.sha256(rows).hexdigest()
    der["hash_algorithm"] = "sha256"
    der["total_rows"] = rows.count(b"\n") + (0 if rows.endswith(b"\n") or not rows else 1)
    return doc


def _dump(doc: Any) -> bytes:
    from eee.store.strictjson import canonical

    return canonical(doc)


def clean_seeds(scratch: Path) -> tuple[list[Seed], list[Seed]]:
    """The candidate seeds that validate without any finding at a canonical path."""
    from eee.validation.validate import run

    records, pairs = candidate_seeds()
    rng = random.Random(0)
    placed: dict[str, tuple[str, Seed]] = {}
    for kind, seeds in (("record", records), ("pair", pairs)):
        for seed in seeds:
            rel = _canonical(seed.bench, str(seed.doc["model_info"].get("id")), _uuid(rng))
            if rel is None:
                continue
            path = scratch / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "pair":
                path.with_name(path.name[: -len(RECORD_SUFFIX)] + SIDECAR_SUFFIX).write_bytes(seed.rows or b"")
                path.write_bytes(_dump(_pair_doc(seed, rel, seed.rows or b"")))
            else:
                path.write_bytes(_dump(seed.doc))
            placed[os.path.abspath(path)] = (kind, seed)
    summary = run([str(scratch)])
    dirty = set()
    for result in summary.results:
        if result.findings:
            absolute = os.path.abspath(result.file)
            dirty.add(absolute)
            if absolute.endswith(SIDECAR_SUFFIX):
                dirty.add(absolute[: -len(SIDECAR_SUFFIX)] + RECORD_SUFFIX)
    clean_records = [s for p, (k, s) in placed.items() if k == "record" and p not in dirty]
    clean_pairs = [s for p, (k, s) in placed.items() if k == "pair" and p not in dirty]
    return clean_records, clean_pairs


# --- byte-level mutations -----------------------------------------------------------------------


def _last_brace(data: bytes) -> int:
    return data.rstrip().rfind(b"}")


def _numbers(doc: Any) -> list[tuple[Any, ...]]:
    return [p for p, v in walk(doc) if p and isinstance(v, int | float) and not isinstance(v, bool)]


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(doc)
    node = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


_MARK = "__eee_fuzz_value__"  # a placeholder replaced in the serialised bytes


def _replace_value(doc: Any, rng: random.Random, raw: bytes) -> bytes:
    """``doc`` with one value (a number if any, else a string) replaced by the raw JSON text ``raw``."""
    paths = _numbers(doc) or [p for p, v in walk(doc) if p and isinstance(v, str)]
    path = rng.choice(paths)
    out = _dump(_set(doc, path, _MARK)).replace(json.dumps(_MARK).encode(), raw)
    assert raw in out
    return out


def record_mutation(doc: dict[str, Any], rng: random.Random) -> tuple[str, str, bytes | str]:
    """(op, expectation, bytes) for one mutation of a record's canonical bytes; bytes may be a
    special marker (``fifo``, ``devlink``, ``selflink``, ``oversized``) for the file itself."""
    data = _dump(doc)
    end = _last_brace(data)
    roll = rng.random()
    if roll < 0.45:
        op = rng.choice(
            [
                "truncate",
                "empty",
                "nul",
                "bad-utf8",
                "bom",
                "deep",
                "big-int",
                "nan",
                "infinity",
                "duplicate-key",
                "not-an-object",
                "no-schema-version",
                "unknown-version",
                "fifo",
                "devlink",
                "selflink",
                "oversized",
                "lone-surrogate",
            ]
        )
        if op == "truncate":
            return op, "bad", data[: rng.randrange(0, end)]
        if op == "empty":
            return op, "bad", rng.choice([b"", b"\n", b"   "])
        if op == "nul":
            at = rng.randrange(0, len(data))
            return op, "bad", data[:at] + b"\0" + data[at:]
        if op == "bad-utf8":
            at = rng.randrange(0, len(data))
            return op, "bad", data[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"]) + data[at:]
        if op == "bom":
            return op, "bad", b"\xef\xbb\xbf" + data
        if op == "deep":
            levels = rng.choice([65, 100, 255, 300, 1100, 50_000])
            return op, "bad", _replace_value(doc, rng, b"[" * levels + b"1" + b"]" * levels)
        if op == "big-int":
            digits = rng.choice([401, 4301, 20_000])
            return op, "bad", _replace_value(doc, rng, rng.choice([b"", b"-"]) + b"7" * digits)
        if op in ("nan", "infinity"):
            token = {"nan": b"NaN", "infinity": rng.choice([b"Infinity", b"-Infinity"])}[op]
            return op, "bad", _replace_value(doc, rng, token)
        if op == "duplicate-key":
            key = rng.choice(list(doc))
            return op, "bad", b"{" + json.dumps(key).encode() + b": 1," + data[data.index(b"{") + 1 :]
        if op == "not-an-object":
            return op, "bad", b"[" + data.rstrip() + b"]"
        if op == "no-schema-version":
            return op, "bad", _dump({k: v for k, v in doc.items() if k != "schema_version"})
        if op == "unknown-version":
            return op, "bad", _dump({**doc, "schema_version": rng.choice(["9.9.9", "0.3", 3, None])})
        if op == "lone-surrogate":
            return op, "bad", _replace_value(doc, rng, b'"\\ud800x"')
        return op, "bad", op  # fifo, devlink, selflink, oversized
    if roll < 0.65:
        op = rng.choice(["indent-4", "compact", "sorted", "ascii-escapes", "colon-escapes", "trailing-space"])
        if op == "indent-4":
            return op, "good", json.dumps(doc, indent=4, ensure_ascii=False).encode()
        if op == "compact":
            return op, "good", json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
        if op == "sorted":
            return op, "good", json.dumps(doc, sort_keys=True, ensure_ascii=False).encode()
        if op == "ascii-escapes":
            return op, "good", json.dumps(doc, ensure_ascii=True).encode()
        if op == "colon-escapes":
            text = json.dumps(doc, ensure_ascii=False)
            # a colon inside strings spelled \u003a: the duplicate-key check's slow path
            return op, "good", _escape_colons_in_strings(text).encode()
        return op, "good", data + b"  \n\n"
    op = rng.choice(["flip", "drop", "swap", "structural", "structural", "structural"])
    if op == "flip":
        at = rng.randrange(0, len(data))
        return op, "any", data[:at] + bytes([rng.randrange(32, 127)]) + data[at + 1 :]
    if op == "drop":
        at = rng.randrange(0, len(data))
        return op, "any", data[:at] + data[at + rng.randint(1, 8) :]
    if op == "swap":
        a, b = sorted(rng.sample(range(len(data)), 2))
        return op, "any", data[:a] + data[b : b + 1] + data[a + 1 : b] + data[a : a + 1] + data[b + 1 :]
    from mutations import _operations

    ops = _operations(doc)
    name, path = rng.choice(ops)
    return f"structural:{name}", "any", _dump(apply_structural(doc, name, path, rng))


def _escape_colons_in_strings(text: str) -> str:
    out = []
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
            elif c == ":":
                out.append("\\u003a")
                continue
        elif c == '"':
            in_string = True
        out.append(c)
    return "".join(out)


def sidecar_mutation(rows: bytes, rng: random.Random) -> tuple[str, bytes | str]:
    """(op, bytes or marker) for a change of a sidecar's bytes: always caught (the checksum)."""
    lines = rows.splitlines(keepends=True)
    op = rng.choice(
        [
            "truncate",
            "empty",
            "nul",
            "bad-utf8",
            "deep-row",
            "big-int-row",
            "blank-line",
            "duplicate-row",
            "drop-row",
            "flip",
            "not-an-object",
            "fifo",
            "devlink",
        ]
    )
    if op == "truncate":
        return op, rows[: rng.randrange(0, max(1, len(rows) - 1))]
    if op == "empty":
        return op, b""
    if op == "nul":
        at = rng.randrange(0, len(rows))
        return op, rows[:at] + b"\0" + rows[at:]
    if op == "bad-utf8":
        at = rng.randrange(0, len(rows))
        return op, rows[:at] + b"\xff" + rows[at:]
    if op == "deep-row":
        levels = rng.choice([65, 300, 2000])
        return op, rows + b'{"x": ' + b"[" * levels + b"]" * levels + b"}\n"
    if op == "big-int-row":
        return op, rows + b'{"n": ' + b"9" * rng.choice([401, 5000]) + b"}\n"
    if op == "blank-line":
        at = rng.randrange(0, len(lines) + 1)
        return op, b"".join([*lines[:at], b"\n", *lines[at:]])
    if op == "duplicate-row":
        at = rng.randrange(0, len(lines))
        return op, b"".join(
            [*lines[: at + 1], lines[at] if lines[at].endswith(b"\n") else lines[at] + b"\n", *lines[at + 1 :]]
        )
    if op == "drop-row" and len(lines) > 1:
        at = rng.randrange(0, len(lines))
        return op, b"".join(lines[:at] + lines[at + 1 :])
    if op == "not-an-object":
        return op, rows + b"[1, 2]\n"
    if op in ("fifo", "devlink"):
        return op, op
    at = rng.randrange(0, len(rows))
    flipped = bytes([rows[at] ^ (1 << rng.randrange(0, 8))])
    return "flip", rows[:at] + flipped + rows[at + 1 :]


# --- events ------------------------------------------------------------------------------------------


def event_for(record_uuid: str, i: int, rng: random.Random) -> tuple[str, str]:
    """(file name, YAML text) of a valid event about ``record_uuid`` (deterministic)."""
    from eee.governance.events import dumps

    seconds = 1_767_225_600 + i * 61  # 2026-01-01 onwards
    import datetime as dt

    when = dt.datetime.fromtimestamp(seconds, dt.UTC).replace(microsecond=i % 1_000_000)
    action = rng.choice(["retract", "dispute"])
    event_id = f"{when.strftime('%Y%m%dT%H%M%S.%fZ')}-{action}-{record_uuid[:8]}-{i % 0xFFFFFF:06x}"
    event: dict[str, Any] = {
        "event_schema": "1.0.0",
        "id": event_id,
        "action": action,
        "record": record_uuid,
        "reason": rng.choice(["built on the wrong split", "harness version contested", "the judge was misconfigured"]),
        "actor": {"name": "Fuzz Tester", "email": "fuzz@example.org"},
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }
    if action == "dispute":
        event["reference"] = "https://example.org/discussion/1"
    return f"{event_id}.yaml", dumps(event)


def event_mutation(name: str, text: str, rng: random.Random) -> tuple[str, str, str, bytes | str]:
    """(op, expectation, file name, bytes or marker) for one mutation of an event file."""
    data = text.encode()
    roll = rng.random()
    if roll < 0.6:
        op = rng.choice(
            [
                "alias",
                "anchor",
                "tag-binary",
                "tag-set",
                "tag-python",
                "tag-custom",
                "deep",
                "big-int",
                "bad-utf8",
                "truncate",
                "empty",
                "list",
                "duplicate-key",
                "renamed",
                "alias-bomb",
                "fifo",
                "devlink",
                "oversized",
                "unknown-key",
            ]
        )
        if op == "alias":
            return op, "bad", name, data.replace(b"actor:", b"actor: &a", 1) + b"copy: *a\n"
        if op == "anchor":
            return op, "bad", name, data.replace(b"reason: ", b"reason: &r ", 1)
        if op.startswith("tag-"):
            tag = {"tag-binary": b"!!binary", "tag-set": b"!!set", "tag-python": b"!!python/object:os.system"}.get(
                op, b"!retract"
            )
            return op, "bad", name, data.replace(b"reason: ", b"reason: " + tag + b" ", 1)
        if op == "deep":
            levels = rng.choice([17, 100, 5000])
            return op, "bad", name, data + b"extra: " + b"[" * levels + b"]" * levels + b"\n"
        if op == "big-int":
            return (
                op,
                "bad",
                name,
                data.replace(b"reason: ", b"reason: " + b"1" * rng.choice([401, 5000]) + b"\nx: ", 1),
            )
        if op == "bad-utf8":
            return op, "bad", name, data.replace(b"reason: ", b"reason: \xff\xfe", 1)
        if op == "truncate":
            cut = data.rstrip(b"\n").rfind(b"\n")  # before the last line (the timestamp): required field lost
            return op, "bad", name, data[: rng.randrange(0, max(1, cut))]
        if op == "empty":
            return op, "bad", name, b""
        if op == "list":
            return op, "bad", name, b"- " + data.replace(b"\n", b"\n  ")
        if op == "duplicate-key":
            return op, "bad", name, data + data.splitlines(keepends=True)[2]
        if op == "renamed":
            return op, "bad", name.replace(".yaml", "0.yaml"), data
        if op == "alias-bomb":
            bomb = (
                b"a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
            )
            return op, "bad", name, bomb
        if op == "unknown-key":
            return op, "bad", name, data + b"surprise: 1\n"
        return op, "bad", name, op  # fifo, devlink, oversized
    if roll < 0.8:
        op = rng.choice(["comment", "requote", "same"])
        if op == "comment":
            return op, "good", name, b"# a comment\n" + data
        if op == "requote":
            lines = data.splitlines(keepends=True)
            out = []
            for line in lines:
                if line.startswith(b"reason: ") and line[8:9] not in (b"'", b'"', b"|"):
                    line = b"reason: '" + line[8:].rstrip(b"\n").replace(b"'", b"''") + b"'\n"
                out.append(line)
            return op, "good", name, b"".join(out)
        return op, "good", name, data
    at = rng.randrange(0, len(data))
    return "flip", "any", name, data[:at] + bytes([rng.randrange(32, 127)]) + data[at + 1 :]


# --- writing a fuzz store -----------------------------------------------------------------------------


def _write(path: Path, data: bytes | str, target_for_link: Path | None = None) -> None:
    from eee.store.limits import EVENT_MAX_BYTES, RECORD_MAX_BYTES

    path.parent.mkdir(parents=True, exist_ok=True)
    if data == "fifo":
        os.mkfifo(path)
    elif data == "devlink":
        path.symlink_to("/dev/zero")
    elif data == "selflink":
        path.symlink_to(target_for_link or "/dev/null")
    elif data == "oversized":
        cap = EVENT_MAX_BYTES if path.suffix == ".yaml" else RECORD_MAX_BYTES
        with open(path, "wb") as fh:
            fh.truncate(cap + 1)  # sparse: nothing on disk
    else:
        assert isinstance(data, bytes)
        path.write_bytes(data)


def build(
    root: Path,
    seed: int,
    records: int,
    sidecars: int,
    events: int,
    seeds: tuple[list[Seed], list[Seed]],
) -> list[Case]:
    """Write ``records`` record cases, ``sidecars`` sidecar cases and ``events`` event cases
    (each event about a record of its own, which is an unmutated control) under ``root``."""
    rng = random.Random(seed)
    record_seeds, pair_seeds = seeds
    cases: list[Case] = []
    control: Path | None = None

    def place(seed_: Seed) -> tuple[str, Path] | None:
        rel = _canonical(seed_.bench, str(seed_.doc["model_info"].get("id")), _uuid(rng))
        return (rel, root / rel) if rel else None

    # controls first: one per event, each the target of that event
    targets: list[str] = []
    while len(targets) < max(events, 1):
        chosen = rng.choice(record_seeds)
        placed = place(chosen)
        if placed is None:
            continue
        rel, path = placed
        _write(path, _dump(chosen.doc))
        targets.append(rel)
        cases.append(Case("record", "control", rel, "good"))
        control = path
    targets = targets[:events]
    for _ in range(records):
        chosen = rng.choice(record_seeds)
        placed = place(chosen)
        if placed is None:
            continue
        rel, path = placed
        op, expect, data = record_mutation(chosen.doc, rng)
        _write(path, data, control)
        cases.append(Case("record", op, rel, expect))
    for _ in range(sidecars):
        chosen = rng.choice(pair_seeds)
        placed = place(chosen)
        if placed is None:
            continue
        rel, path = placed
        rows = chosen.rows or b""
        doc = _pair_doc(chosen, rel, rows)
        sidecar = path.with_name(path.name[: -len(RECORD_SUFFIX)] + SIDECAR_SUFFIX)
        if rng.random() < 0.15:  # the pair's record declares a checksum that cannot be checked, or no rows
            der = doc["detailed_evaluation_results"]
            op = rng.choice(["checksum-40", "checksum-not-hex", "checksum-wrong-length", "total-rows-0"])
            if op == "checksum-40":
                der.pop("hash_algorithm")
                der["checksum"] = der["checksum"][:40]
            elif op == "checksum-not-hex":
                der["checksum"] = "z" * 64
            elif op == "checksum-wrong-length":
                der["hash_algorithm"] = "md5"
            else:
                der["total_rows"] = 0
            _write(path, _dump(doc))
            _write(sidecar, rows)
            cases.append(Case("record", op, rel, "bad"))
            continue
        op, data = sidecar_mutation(rows, rng)
        _write(path, _dump(doc))
        _write(sidecar, data)
        srel = rel[: -len(RECORD_SUFFIX)] + SIDECAR_SUFFIX
        cases.append(Case("sidecar", op, srel, "bad" if data != rows else "good"))
    for i, target in enumerate(targets):
        record_uuid = target.rsplit("/", 1)[1][: -len(RECORD_SUFFIX)]
        name, text = event_for(record_uuid, i, rng)
        op, expect, name, data = event_mutation(name, text, rng)
        rel = f"governance/events/{name}"
        _write(root / rel, data)
        cases.append(Case("event", op, rel, expect))
    return cases


def iter_findings(summary: Any, root: Path) -> Iterator[tuple[str, Any]]:
    """(store-relative path, FileResult) for every result of a validator run over ``root``."""
    prefix = os.path.abspath(root) + os.sep
    for result in summary.results:
        absolute = os.path.abspath(result.file)
        yield (absolute[len(prefix) :] if absolute.startswith(prefix) else result.file), result


# --- the site: the injection corpus in every field a page shows ----------------------------------


def hostile_text(rng: random.Random) -> str:
    """Random text from the injection corpus (``tests/injection.py``): one to three of its
    pieces, Markdown and HTML syntax, line breaks and odd characters, in random order."""
    import injection

    pieces = [*injection.TEXTS, *injection.NAMES, *injection.URLS, injection.VISIBLE]
    syntax = [
        "- ",
        "1. ",
        "# ",
        ": ",
        "> ",
        "    ",
        "\n",
        "\n\n",
        "|",
        "`",
        "{:",
        "}",
        "<",
        "&",
        "\\",
        "\x02",
        "\u2028",
    ]
    parts = [rng.choice(pieces) for _ in range(rng.randint(1, 3))]
    parts += [rng.choice(syntax) for _ in range(rng.randint(0, 3))]
    rng.shuffle(parts)
    return "".join(parts)


def site_store(root: Path, seed: int, records: int, with_analysis: bool = True) -> list[str]:
    """A store under ``root`` (schemas, ``data/``, the ledger, an import manifest; no git)
    of ``records`` records whose text fields hold random corpus text (:func:`hostile_text`),
    under corpus benchmark and model names, with events about a third of them (as the
    tools write them, and as files the schema refuses), an import manifest naming them and,
    with ``with_analysis``, records with sidecars for the analysis pages. Returns the uuids."""
    import datetime as dt
    import shutil

    import injection
    from eee.governance.events import EventFileError, make_event
    from eee.governance.events import write as write_event
    from eee.governance.manifests import dumps as manifest_dumps

    rng = random.Random(seed)
    shutil.copytree(PROJECT / "schemas", root / "schemas")
    (root / "governance" / "events").mkdir(parents=True)
    (root / "governance" / "imports").mkdir()
    base = json.loads((EXAMPLES / "aggregate" / "valid" / "v0.3.0_perplexity_unbounded.json").read_text())
    benchmarks = ["wikitext", *(hostile_text(rng)[:80] for _ in range(3))]  # a folder name: bounded
    placed: list[tuple[str, str]] = []
    for _ in range(records):
        doc = copy.deepcopy(base)
        for path in (
            ("evaluation_id",),
            ("model_info", "name"),
            ("source_metadata", "source_organization_name"),
            ("source_metadata", "source_name"),
            ("eval_library", "name"),
            ("eval_library", "version"),
            ("evaluation_results", 0, "evaluation_name"),
            ("evaluation_results", 0, "evaluation_result_id"),
            ("evaluation_results", 0, "metric_config", "metric_id"),
            ("evaluation_results", 0, "metric_config", "metric_name"),
            ("evaluation_results", 0, "metric_config", "metric_unit"),
        ):
            if rng.random() < 0.7:
                doc = _set(doc, path, hostile_text(rng))
        if rng.random() < 0.3:  # a second result of the same metric: told apart on the pages
            doc["evaluation_results"].append(copy.deepcopy(doc["evaluation_results"][0]))
            doc["evaluation_results"][1]["evaluation_result_id"] = hostile_text(rng)
        record_uuid = _uuid(rng)
        for _attempt in range(5):
            doc["model_info"]["id"] = f"{hostile_text(rng)[:80]}/{hostile_text(rng)[:80]}"
            rel = _canonical(rng.choice(benchmarks), doc["model_info"]["id"], record_uuid)
            if rel:
                break
        else:
            doc["model_info"]["id"] = "eeepwn/fallback"
            rel = _canonical("wikitext", "eeepwn/fallback", record_uuid)
        assert rel is not None
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(_dump(doc))
        placed.append((record_uuid, rel))
    uuids = [u for u, _ in placed]
    now = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    for i, record_uuid in enumerate(uuids[: max(1, records // 3)]):
        when = now + dt.timedelta(seconds=i)
        actor = {"name": hostile_text(rng), "email": "fuzz@example.org"}
        action = rng.choice(["retract", "dispute", "flag", "duplicate", "supersede", "raw"])
        other = rng.choice(uuids)
        if action == "raw":  # a file the schema refuses: every field hostile (as with --no-verify)
            event_id = f"{when.strftime('%Y%m%dT%H%M%S.%fZ')}-{rng.choice(['dispute', 'retract', 'flag'])}-{record_uuid[:8]}-{i:06x}"
            event = {
                "event_schema": "1.0.0",
                "id": event_id,
                "action": rng.choice(["dispute", "retract", "flag", "resolve", hostile_text(rng)]),
                "record": record_uuid,
                "timestamp": rng.choice([when.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), hostile_text(rng)]),
                **{
                    k: hostile_text(rng)
                    for k in ("reason", "reference", "rule", "path", "outcome", "relation")
                    if rng.random() < 0.8
                },
                "actor": {"name": hostile_text(rng), "email": hostile_text(rng)},
            }
            if rng.random() < 0.5:
                event["reference"] = rng.choice(injection.URLS)
            text = json.dumps(event, ensure_ascii=False, indent=1) + "\n"
            (root / "governance" / "events" / f"{event_id}.yaml").write_text(text, encoding="utf-8")
            continue
        extra: dict[str, Any] = {}
        if action == "dispute":
            extra["reference"] = rng.choice([u for u in injection.URLS if u.startswith("https://")])
        elif action == "flag":
            extra.update(rule="naming", path=hostile_text(rng))
        elif action == "duplicate":
            extra["of"] = other
        elif action == "supersede":
            extra["replacement"] = other
        event = make_event(action, record_uuid, hostile_text(rng), actor, now=when, **extra)
        try:
            write_event(root, event)
        except EventFileError:  # text YAML cannot hold as the tools write it: a file as JSON
            text = json.dumps(event, ensure_ascii=False, indent=1) + "\n"
            (root / "governance" / "events" / f"{event['id']}.yaml").write_text(text, encoding="utf-8")
    manifest_id = "20260601T000000.000000Z-import-f0f0f0"
    manifest = {
        "manifest_schema": "1.0.0",
        "id": manifest_id,
        "source": hostile_text(rng),
        "revision": hostile_text(rng),
        "time": "2026-06-01T00:00:00.000000Z",
        "tool": hostile_text(rng),
        "actor": {"name": hostile_text(rng), "email": "fuzz@example.org"},
        "counts": {"imported": 0, "relocated": 0, "flagged": 0, "already_present": 0, "refused": 0, "total": 0},
        "files": [
            {
                "source": f"data/{hostile_text(rng)}",
                "kind": "record",
                "outcome": rng.choice(["imported", "relocated", "flagged"]),
                "store": rel,
                "reason": hostile_text(rng),
            }
            for _u, rel in placed
        ],
    }
    (root / "governance" / "imports" / f"{manifest_id}.yaml").write_text(manifest_dumps(manifest), encoding="utf-8")
    if with_analysis:
        from analysis_store import record_doc, sidecar_bytes

        bench = rng.choice(benchmarks[1:])
        ids = [hostile_text(rng) for _ in range(16)]
        for m in range(4):
            model_id = f"eeepwn/{hostile_text(rng)[:80]}"
            record_uuid = _uuid(rng)
            rel = _canonical(bench, model_id, record_uuid) or _canonical(bench, f"eeepwn/m{m}", record_uuid)
            assert rel is not None
            scores = [float(rng.random() < 0.3 + 0.15 * m) for _ in ids]
            data = sidecar_bytes(model_id, scores, ids)
            doc = record_doc(model_id, hostile_text(rng), sum(scores) / len(scores))
            sidecar = rel[: -len(RECORD_SUFFIX)] + SIDECAR_SUFFIX
            doc["detailed_evaluation_results"].update(
                file_path=sidecar, checksum=hashlib.sha256(data).hexdigest(), total_rows=data.count(b"\n")
            )
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / sidecar).write_bytes(data)
            (root / rel).write_bytes(_dump(doc))
            uuids.append(record_uuid)
    return uuids


def site_problems(root: Path) -> tuple[int, dict[str, list[str]]]:
    """(pages read, problems by page) of the store at ``root``: every page ``eee site pages``
    generates (catalogue, schema reference) and every analysis page, rendered with the
    Markdown extensions of the project's mkdocs.yml, scanned by ``injection.scan``; a page
    title must carry no markup and every plot must be well-formed XML."""
    import xml.etree.ElementTree as ET

    import injection
    from eee.analysis.pages import write_pages
    from eee.site.generate import generate

    md = injection.markdown_renderer(PROJECT)
    sources: dict[str, str] = {}
    gen = generate(root, "https://example.org/repo", {"catalogue": {"record_pages": 40}})
    sources.update((p.src_uri, p.content) for p in gen.pages)
    out = root / "build" / "analysis"
    write_pages(root, out)
    for page in sorted((out / "pages").glob("*.md")):
        sources[f"analysis/{page.name}"] = page.read_text(encoding="utf-8")
    problems: dict[str, list[str]] = {}
    for name, text in sources.items():
        meta, html = injection.render_page(md, text)
        found = injection.scan(html)
        if any(c in str(meta.get("title", "")) for c in '<>"'):
            found.append(f"a title with markup: {meta['title']!r}")
        if found:
            problems[name] = found
    for svg in sorted((out / "pages").glob("*.svg")):
        try:
            ET.fromstring(svg.read_text(encoding="utf-8"))
        except ET.ParseError as exc:
            problems[f"analysis/{svg.name}"] = [f"not well-formed: {exc}"]
    return len(sources), problems


# --- event sequences: the ledger's state machine ---------------------------------------------

LEDGER_RECORDS = tuple(f"{i:08x}-0000-4000-8000-{i:012x}" for i in range(1, 6))
_ME = {"name": "Fuzz", "email": "fuzz@example.org"}


def random_event(rng: random.Random, records: tuple[str, ...], i: int) -> dict[str, Any]:
    """One governance event of any action on one of ``records``, legal or not."""
    import datetime as dt

    from eee.governance import ACTION_NAMES, OUTCOMES
    from eee.governance.events import make_event

    action = rng.choice(ACTION_NAMES)
    record = rng.choice(records)
    kw: dict[str, Any] = {}
    if action == "supersede":
        kw["replacement"] = rng.choice(records)
    elif action == "duplicate":
        kw["of"] = rng.choice(records)
    elif action == "dispute":
        kw["reference"] = f"https://example.org/d/{i}"
    elif action == "flag":
        kw.update(
            rule=rng.choice(["score", "naming"]),
            path=rng.choice(["$.evaluation_results[0]", "$.model_info.id"]),
            record_path=f"data/bench/acme/widget-7b/{record}.json",
            sha256="0" * 64,
        )
    elif action == "resolve":
        kw["outcome"] = rng.choice(OUTCOMES)
        if kw["outcome"] == "corrected":
            kw["replacement"] = rng.choice(records)
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    return make_event(action, record, f"step {i}", _ME, now=t0 + dt.timedelta(seconds=i), **kw)


def event_sequence(rng: random.Random, length: int, records: tuple[str, ...] = LEDGER_RECORDS) -> list[dict[str, Any]]:
    """``length`` random events on ``records``; a resolution that acts is mostly followed by
    its act (the retraction or supersession its outcome names), as the tools write it."""
    import datetime as dt

    from eee.governance.events import make_event

    events: list[dict[str, Any]] = []
    i = 0
    while len(events) < length:
        event = random_event(rng, records, i)
        events.append(event)
        i += 1
        outcome = event.get("outcome")
        if event["action"] == "resolve" and outcome in ("retracted", "corrected") and rng.random() < 0.8:
            t = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i)
            act = "retract" if outcome == "retracted" else "supersede"
            extra = {"replacement": event["replacement"]} if act == "supersede" else {}
            events.append(make_event(act, event["record"], f"step {i}", _ME, now=t, **extra))
            i += 1
    return events


def machine_problems(events: list[dict[str, Any]], records: tuple[str, ...] = LEDGER_RECORDS) -> list[str]:
    """What breaks the ledger's state machine (eee.governance.lifecycle) in the fold of
    ``events``; empty when nothing does:

    - every event the fold applied was allowed by the machine in the state the events
      before it left (its step, in the record's lifecycle and markers);
    - folding only the applied events applies them all and reaches the same states (what is
      refused has no effect), and every refused event is refused again after them;
    - each record's lifecycle says what its fields say, and its status word is the
      machine's (lifecycle, else its first marker);
    - a duplicate stands on a record that stands; a superseded record's chain ends at one
      that stands, or at a retracted replacement (the evaluation withdrawn with it)."""
    from eee.governance.lifecycle import OUTCOME_ACTS, status_of, step
    from eee.rules.ledger import fold

    out: list[str] = []
    ledger = fold(events)
    refused = {id(e) for e, _ in ledger.problems}
    applied = [e for e in events if id(e) not in refused]
    again = fold(applied)
    if again.problems:
        out.append(f"the applied events refused when folded alone: {again.problems[0][1].message}")
    for u in records:
        a, b = ledger.state(u), again.state(u)
        if (a.lifecycle, a.markers, a.superseded_by, a.duplicate_of) != (
            b.lifecycle,
            b.markers,
            b.superseded_by,
            b.duplicate_of,
        ):
            out.append(f"{u}: refused events had an effect ({a.lifecycle}/{a.markers} vs {b.lifecycle}/{b.markers})")
    for k, event in enumerate(applied):
        before = fold(applied[:k]).state(event["record"])
        outcome = event.get("outcome") if event.get("action") == "resolve" else None
        verdict = step(before.lifecycle, before.markers, event["action"], outcome if outcome in OUTCOME_ACTS else None)
        if not verdict.allowed:
            out.append(f"applied {event['action']} of {event['record']} in {before.lifecycle}/{before.markers}")
    for event in events:
        if id(event) in refused:
            i = events.index(event)
            trial = fold([e for e in events[:i] if id(e) not in refused] + [event] + events[i + 1 : i + 2])
            if not any(e is event for e, _ in trial.problems):
                out.append(f"refused {event['action']} of {event['record']} is applied after the same events")
    for u in records:
        st = ledger.state(u)
        fields = (
            "retracted"
            if st.retraction is not None
            else "superseded"
            if st.superseded_by is not None
            else "duplicate"
            if st.duplicate_of is not None
            else "active"
        )
        if fields != st.lifecycle:
            out.append(f"{u}: lifecycle {st.lifecycle}, but its fields say {fields}")
        if st.status != status_of(st.lifecycle, st.markers):
            out.append(f"{u}: status {st.status} is not the machine's")
        head = ledger.stands_on(u)
        if st.lifecycle == "duplicate" and (head is None or not ledger.state(head).stands):
            out.append(f"{u}: a duplicate of {st.duplicate_of} stands on no record that stands")
        if st.lifecycle == "superseded" and head is None:
            last = ledger.chain(u)[-1]
            if ledger.state(last).lifecycle != "retracted":
                out.append(f"{u}: superseded, and its chain ends at {last} ({ledger.state(last).lifecycle})")
        if st.stands and head != u:
            out.append(f"{u}: stands, but stands on {head}")
    return out
