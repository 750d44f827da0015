"""Synthetic stores of realistic size for the scale benchmark, built once from real records.

Templates: the public records in ../shared/reference/records (schema 0.2.0, 3-36 results
each) and the project's own valid examples (tests/examples), plus the reference record that
has a sidecar (../shared/reference/records-with-samples) for records with sidecars. Each
synthetic record is a template with a new model id, evaluation id and uuid, placed at its
canonical path; its results are padded (copies with distinct ids) or cut to the wanted
count. A record with a sidecar gets a small JSONL sidecar that matches it (ids, row count,
sha256) and the DVC pointer DVC would write for it.

Stores are cached under ``$TMPDIR/eee-bench-scale/<kind>-<size>`` (a ``.complete`` file
marks a finished build), so reruns are fast.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared" / "reference"
sys.path.insert(0, str(PROJECT / "tools"))

from eee.store.paths import canonical_record_path  # noqa: E402
from eee.store.strictjson import canonical  # noqa: E402

CACHE = Path(os.environ.get("EEE_BENCH_CACHE", Path(tempfile.gettempdir()) / "eee-bench-scale"))
ROWS_PER_SIDECAR = 3


def _clean(doc: dict[str, Any]) -> bool:
    """Valid under its schema and the store's score rule (some real records are not)."""
    from eee.rules.record import score_findings
    from eee.store.schemas import EVAL, default_registry

    registry = default_registry()
    version = registry.resolve(doc.get("schema_version"), EVAL)
    return bool(version) and registry.validator(version, EVAL).is_valid(doc) and not score_findings(doc, "t", True)


@functools.cache
def _templates() -> list[tuple[str, dict[str, Any]]]:
    """(benchmark folder, record) of every real record and valid example that is clean."""
    out: list[tuple[str, dict[str, Any]]] = []
    ref = SHARED / "records" / "data"
    if ref.is_dir():
        for path in sorted(ref.rglob("*.json")):
            if path.is_file():
                out.append((path.relative_to(ref).parts[0], json.loads(path.read_bytes())))
    for path in sorted((PROJECT / "tests" / "examples" / "aggregate" / "valid").glob("*.json")):
        out.append((path.stem.split("_", 1)[1].replace("_", "-"), json.loads(path.read_bytes())))
    return [(benchmark, doc) for benchmark, doc in out if _clean(doc)]


def _sidecar_template() -> tuple[dict[str, Any], dict[str, Any]]:
    folder = SHARED / "records-with-samples" / "data"
    if folder.is_dir():
        record = next(p for p in sorted(folder.rglob("*.json")) if p.is_file())
        row = json.loads(next(folder.rglob("*_samples.jsonl")).read_bytes().splitlines()[0])
        return json.loads(record.read_bytes()), row
    record = json.loads((PROJECT / "tests" / "examples" / "instance" / "aggregate.json").read_bytes())
    line = (PROJECT / "tests" / "examples" / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()
    return record, json.loads(line.splitlines()[0])


def _results(doc: dict[str, Any], count: int) -> None:
    base = doc["evaluation_results"]
    out = list(base[:count])
    k = 0
    while len(out) < count:
        extra = copy.deepcopy(base[k % len(base)])
        k += 1
        extra["evaluation_name"] = f"{extra['evaluation_name']} #{k}"
        if "evaluation_result_id" in extra:
            extra["evaluation_result_id"] = f"{extra['evaluation_result_id']}#{k}"
        out.append(extra)
    doc["evaluation_results"] = out


def _identity(doc: dict[str, Any], benchmark: str, i: int) -> str:
    model_id = f"org{i % 400}/model-{(i // 400) % 50}-{i % 7}"
    info = doc["model_info"]
    info["id"] = model_id
    info["name"] = model_id.split("/")[1]
    if "developer" in info:
        info["developer"] = model_id.split("/")[0]
    doc["evaluation_id"] = f"{benchmark}/{model_id.replace('/', '_')}/{1770000000 + i}"
    doc["retrieved_timestamp"] = str(1770000000 + i)
    return str(uuid.UUID(int=i + 1, version=4))


def records(size: int, results: int | None = None, sidecars: int = 0) -> Iterator[tuple[str, bytes]]:
    """(store-relative path, bytes) of ``size`` records (and ``sidecars`` of them with a
    sidecar and its pointer), about ``results`` evaluation results in all."""
    templates = _templates()
    side_record, side_row = _sidecar_template()
    per_record = max(1, round(results / size)) if results else None
    for i in range(size):
        if i < sidecars:
            doc = copy.deepcopy(side_record)
            benchmark = "demo-source"
        else:
            benchmark, doc = templates[i % len(templates)]
            doc = copy.deepcopy(doc)
        rid = _identity(doc, benchmark, i)
        if per_record:
            _results(doc, per_record)
        rel = canonical_record_path(benchmark, doc["model_info"]["id"], rid)
        if i < sidecars:
            side_rel = rel[: -len(".json")] + "_samples.jsonl"
            rows = []
            for n in range(ROWS_PER_SIDECAR):
                row = dict(side_row)
                row.update(
                    evaluation_id=doc["evaluation_id"],
                    model_id=doc["model_info"]["id"],
                    evaluation_result_id=doc["evaluation_results"][0].get("evaluation_result_id"),
                    evaluation_name=doc["evaluation_results"][0]["evaluation_name"],
                    sample_id=f"s{n:04d}",
                )
                rows.append(json.dumps(row, ensure_ascii=False))
            data = ("\n".join(rows) + "\n").encode()
            doc["detailed_evaluation_results"] = {
                "format": "jsonl",
                "file_path": side_rel,
                "hash_algorithm": "sha256",
                "checksum": hashlib.sha256(data).hexdigest(),
                "total_rows": ROWS_PER_SIDECAR,
            }
            name = side_rel.rsplit("/", 1)[1]
            pointer = (
                f"outs:\n- md5: {hashlib.md5(data, usedforsecurity=False).hexdigest()}\n"
                f"  size: {len(data)}\n  hash: md5\n  path: {name}\n"
            )
            yield side_rel, data
            yield side_rel + ".dvc", pointer.encode()
        yield rel, canonical(doc)


def one_record(i: int) -> tuple[str, bytes]:
    """A record not in any store built here (for a one-record commit)."""
    benchmark, doc = _templates()[-1]
    doc = copy.deepcopy(doc)
    rid = _identity(doc, benchmark, 10_000_000 + i)
    return canonical_record_path(benchmark, doc["model_info"]["id"], rid), canonical(doc)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def store(kind: str, size: int, results: int | None = None, sidecars: int = 0, git: bool = False) -> Path:
    """The cached store ``kind-size``: a folder with data/ (and a git repository with the
    project's hooks and everything committed, when ``git``)."""
    root = CACHE / f"{kind}-{size}"
    if (root / ".complete").exists():
        return root
    build = CACHE / f".{kind}-{size}.building-{os.getpid()}"
    if build.exists():
        shutil.rmtree(build)
    build.mkdir(parents=True)
    for rel, data in records(size, results, sidecars):
        path = build / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    shutil.copytree(PROJECT / "schemas", build / "schemas")
    (build / "governance" / "events").mkdir(parents=True)
    (build / ".gitignore").write_text("*_samples.jsonl\n.complete\n")
    if git:
        _git(build, "init", "-q", "-b", "main")
        _git(build, "config", "user.name", "bench")
        _git(build, "config", "user.email", "bench@example.org")
        _git(build, "config", "gc.auto", "0")  # no background gc racing the measurements
        shutil.copyfile(PROJECT / ".pre-commit-config.yaml", build / ".pre-commit-config.yaml")
        (build / "tools").mkdir()
        shutil.copy2(PROJECT / "tools" / "hook", build / "tools" / "hook")
        _git(build, "add", "-A")
        _git(build, "commit", "-q", "--no-verify", "-m", f"{size} records")
    (build / ".complete").write_text(json.dumps({"size": size, "results": results, "sidecars": sidecars}))
    if root.exists():
        shutil.rmtree(root)
    build.rename(root)
    return root
