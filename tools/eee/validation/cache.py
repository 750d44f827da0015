"""Whole-store validation that checks again only the folders that changed (the pipeline's
``validate`` stage: ``eee validate . --cache FILE``).

A layer over :mod:`eee.validation.validate`, which it does not change: the store's files are split
into record folders (``data/<benchmark>/<developer>/<model>/``, or whatever folder a stray
file lies in), and each folder's results are kept in ``FILE`` under a key made of

- the path and sha256 of every file in the folder (from the store manifest when given),
- what the folder's checks read beyond it: the benchmark folders of the store (the folder
  rule) and, at every level of the folder's path, the sibling names that differ only in
  case (the case-clash rule),
- the validator's code and schemas (:func:`eee.store.manifest.code_digest`) and the options.

A record and its sidecar and pointer always share a folder, so every check of a file reads
only its own folder and those names: a folder whose key is unchanged would give the same
results. Folders whose key changed are validated together in one run (on the machine's
cores), the governance events are always checked again (the ledger is store-wide), and the
results are put back in the order of a full run: the report is the same, byte for byte
(a test compares them).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from eee.reporting.findings import FileResult, Finding, Summary
from eee.store.fsutil import write_replacing
from eee.store.paths import DATA_DIR, RECORD_SUFFIX, SIDECAR_SUFFIX
from eee.store.tree import WorkTree
from eee.validation.collect import collect
from eee.validation.pool import EVENTS, INPUT, OTHERS, RECORDS, SIDECARS, Sink
from eee.validation.validate import Options, validate_tree

FORMAT = "eee-validate-cache/1"
_FINDING = ("file", "pointer", "message", "hint", "line", "severity", "check")


def _dump(result: FileResult) -> list[Any]:
    return [
        result.file,
        result.kind,
        result.schema_version,
        result.rows,
        [[getattr(f, k) for k in _FINDING] for f in result.findings],
        result.suppressed,
    ]


def _load(data: list[Any]) -> FileResult:
    file, kind, version, rows, findings, suppressed = data
    return FileResult(
        file, kind, version, rows, [Finding(**dict(zip(_FINDING, f, strict=True))) for f in findings], suppressed
    )


def store_root(paths: list[str], options: Options) -> Path | None:
    """The store when ``paths`` name exactly one store root (what the pipeline validates)
    and the run checks the store's rules; None otherwise (the cache is not used)."""
    if len(paths) != 1 or not options.repo_checks or not options.case_clash:
        return None
    root = Path(os.path.abspath(paths[0]))
    if not (root / DATA_DIR).is_dir() or os.path.islink(paths[0]):
        return None
    if options.root is not None and Path(os.path.abspath(options.root)) != root:
        return None
    return root


def _case_context(tree: WorkTree, folder: str, memo: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    out = []
    parts = folder.split("/")
    for depth in range(len(parts)):
        parent = "/".join(parts[:depth])
        if parent not in memo:
            groups: dict[str, list[str]] = defaultdict(list)
            for name in tree.names(parent):
                groups[name.casefold()].append(name)
            memo[parent] = groups
        out.append(sorted(memo[parent].get(parts[depth].casefold(), [])))
    return out


def run_cached(
    root: Path,
    options: Options,
    cache_file: Path,
    digests: dict[str, str] | None = None,
    registry: Any = None,
    sink: Sink | None = None,
    progress: Any = None,
) -> tuple[Summary, int]:
    """The whole-store validation of ``root`` (as :func:`eee.validation.validate.run` gives it for the
    store root), checking again only the folders whose key changed; its results go to
    ``sink`` by section (default: all kept); returns the summary and how many files were
    checked again. ``cache_file`` is read and rewritten. ``progress(done, total)``: told as
    the files checked again are checked."""
    from eee.store.manifest import code_digest, sha256_file

    found = collect([str(root)])
    tree = WorkTree(str(root), found.listings)
    rels: list[str] = []
    for absolute in found.files:
        rel = tree.rel(absolute)
        if rel is None:  # cannot happen for files below the root; be safe: no cache
            from eee.validation.validate import run

            return run([str(root)], options, registry, sink=sink), len(found.files)
        rels.append(rel)
    data = [r for r in rels if r.startswith(DATA_DIR + "/")]
    events = [r for r in rels if not r.startswith(DATA_DIR + "/")]
    by_folder: dict[str, list[str]] = defaultdict(list)
    for rel in data:
        by_folder[rel.rsplit("/", 1)[0]].append(rel)
    benchmarks = sorted(n for n in tree.names(DATA_DIR) if not n.startswith("."))
    from eee.store import identity

    # the identity registry judges every record (aliases, folder conventions): a change of it checks all again
    names = identity.read(tree).digest
    common = json.dumps([FORMAT, code_digest(FORMAT), options.cap, options.repo_checks, benchmarks, names])
    digests = digests or {}
    memo: dict[str, dict[str, list[str]]] = {}

    def digest(rel: str) -> str:
        known = digests.get(rel)
        return known if known is not None else sha256_file(root / rel)

    try:
        old = json.loads(cache_file.read_text())
        old = old["folders"] if old.get("format") == FORMAT else {}
    except (OSError, ValueError, KeyError, AttributeError):
        old = {}
    keys: dict[str, str] = {}
    results: dict[str, FileResult] = {}
    stale: list[str] = []
    for folder, files in by_folder.items():
        key = hashlib.sha256(
            json.dumps([common, folder, _case_context(tree, folder, memo), [[r, digest(r)] for r in files]]).encode()
        ).hexdigest()
        keys[folder] = key
        known = old.get(folder)
        if known and known[0] == key:
            for rel, dumped in known[1].items():
                results[rel] = _load(dumped)
        else:
            stale.extend(files)
    display = {tree.display(rel): rel for rel in data}
    if stale:
        fresh = validate_tree(tree, stale, options, progress, registry=registry)
        if fresh.fatal:
            return _fatal(sink, fresh), len(stale)
        for r in fresh.results:
            results[display.get(r.file, r.file)] = r
    checked = validate_tree(tree, events, options, registry=registry) if events else Summary([])
    if checked.fatal:
        return _fatal(sink, checked), len(stale)
    cache: dict[str, Any] = {}
    for folder, files in by_folder.items():
        cache[folder] = [keys[folder], {rel: _dump(results[rel]) for rel in files if rel in results}]
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    write_replacing(cache_file, json.dumps({"format": FORMAT, "folders": cache}).encode(), durable=False)
    sink = sink if sink is not None else Sink()
    sink.add(INPUT, [FileResult(p.file, "input", findings=[p]) for p in found.problems])
    sink.add(RECORDS, [results[rel] for rel in data if rel.endswith(RECORD_SUFFIX) and rel in results])
    sink.add(SIDECARS, [results[rel] for rel in data if rel.endswith(SIDECAR_SUFFIX) and rel in results])
    others = (RECORD_SUFFIX, SIDECAR_SUFFIX)
    sink.add(OTHERS, [results[rel] for rel in data if not rel.endswith(others) and rel in results])
    sink.add(EVENTS, checked.results)
    return sink.summary(), len(stale)


def _fatal(sink: Sink | None, summary: Summary) -> Summary:
    """A run that could not start (the schema registry): said once, to ``sink`` too."""
    if sink is not None:
        sink.fatal = summary.fatal
    return summary
