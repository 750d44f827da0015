"""Per-sample sidecars in DVC: add (checked against the aggregate, then ``dvc add`` and
staged), push and pull.

The aggregate record is the contract: before a sidecar enters DVC its sha256 and row count
must be what the record declares, and the pair must validate. DVC runs as a subprocess of
this interpreter (``python -m dvc``), so the same environment is used everywhere.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from eee.gitutil import GitError, git, toplevel
from eee.paths import POINTER_SUFFIX, SIDECAR_SUFFIX, record_path_for_sidecar
from eee.strictjson import JSONProblem, loads


class SamplesError(Exception):
    """A sidecar that cannot be added or fetched; the message says why and what to do."""


def sha256_and_rows(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    rows = 0
    rest = b""
    with open(path, "rb") as fh:
        while chunk := fh.read(8 * 1024 * 1024):
            digest.update(chunk)
            rows += chunk.count(b"\n")
            rest = chunk[-1:]
    if rest and rest != b"\n":
        rows += 1  # a last line without newline
    return digest.hexdigest(), rows


def dvc(*args: str, cwd: Path, capture: bool = True) -> subprocess.CompletedProcess[str]:
    """``python -m dvc ARGS`` in this environment (its output captured unless ``capture=False``)."""
    env = dict(os.environ, DVC_NO_ANALYTICS="1")
    # pipeline stage commands say `python`: make it this environment's interpreter
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run([sys.executable, "-m", "dvc", *args], cwd=cwd, capture_output=capture, text=True, env=env)


def _rel(path: Path, root: Path) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()


def check_against_aggregate(sidecar: Path, root: Path) -> None:
    """Raise SamplesError unless the aggregate declares exactly this file."""
    rel = _rel(sidecar, root)
    record = Path(record_path_for_sidecar(str(sidecar)))
    if not record.exists():
        raise SamplesError(f"{rel}: no aggregate record {record.name} beside it; write the record first")
    try:
        doc = loads(record.read_bytes())
    except JSONProblem as exc:
        raise SamplesError(f"{_rel(record, root)}: {exc.message}") from None
    der = doc.get("detailed_evaluation_results") if isinstance(doc, dict) else None
    if not isinstance(der, dict):
        raise SamplesError(f"{_rel(record, root)}: declares no detailed_evaluation_results for {sidecar.name}")
    digest, rows = sha256_and_rows(sidecar)
    problems = []
    if der.get("file_path") != rel:
        problems.append(f"file_path is {der.get('file_path')!r}, expected {rel!r}")
    if der.get("hash_algorithm", "sha256") != "sha256":
        problems.append(f"hash_algorithm is {der.get('hash_algorithm')!r}; the store uses sha256")
    if der.get("checksum") != digest:
        problems.append(f"checksum is {der.get('checksum')!r} but the file's sha256 is {digest}")
    if der.get("total_rows") != rows:
        problems.append(f"total_rows is {der.get('total_rows')!r} but the file has {rows} rows")
    if problems:
        raise SamplesError(
            f"{_rel(record, root)}::$.detailed_evaluation_results: "
            + "; ".join(problems)
            + " (hint: set them in the record before adding the sidecar)"
        )


def dvc_problem(root: Path) -> str | None:
    """Why sidecars cannot go into DVC in the store at ``root``, or None."""
    import importlib.util

    if not (root / ".dvc").is_dir():
        return f"{root}: DVC is not initialised in this store; run `python3 tools/dev.py setup` (or `dvc init`) first"
    if importlib.util.find_spec("dvc") is None:
        return "DVC is not installed in this environment; run `python3 tools/dev.py setup`"
    return None


def add(sidecar: Path, stage: bool = True, root: Path | None = None) -> Path:
    """Check, ``dvc add`` and stage one sidecar; returns its pointer path."""
    return add_many([sidecar], stage, root)[0]


def add_many(sidecars: list[Path], stage: bool = True, root: Path | None = None) -> list[Path]:
    """Check every sidecar against its record, then ``dvc add`` them all in one DVC run and
    stage the pointers; returns the pointer paths. Nothing enters DVC unless every check passes.

    One DVC run matters: each ``dvc add`` reads every pointer in the store first.
    """
    sidecars = [Path(s) for s in sidecars]
    for sidecar in sidecars:
        if not sidecar.name.endswith(SIDECAR_SUFFIX):
            raise SamplesError(f"{sidecar}: not a sidecar (expected <uuid>{SIDECAR_SUFFIX})")
        if not sidecar.is_file():
            raise SamplesError(f"{sidecar}: no such file")
    if not sidecars:
        return []
    try:
        root = root or toplevel(sidecars[0].parent)
    except GitError:
        raise SamplesError(f"{sidecars[0]}: not inside a git work tree (the store)") from None
    problem = dvc_problem(root)
    if problem:
        raise SamplesError(problem)
    for sidecar in sidecars:
        check_against_aggregate(sidecar, root)
    from eee.validate import run

    pairs = [str(p) for s in sidecars for p in (Path(record_path_for_sidecar(str(s))), s)]
    summary = run(pairs)
    errors = [f.one_line() for r in summary.results for f in r.findings if f.severity == "error"]
    if errors:
        raise SamplesError("the record and its sidecar do not validate:\n  " + "\n  ".join(errors[:10]))
    rels = [_rel(s, root) for s in sidecars]
    proc = dvc("add", "--quiet", *rels, cwd=root)
    if proc.returncode != 0:
        raise SamplesError(f"{', '.join(rels)}: dvc add failed: {proc.stderr.strip() or proc.stdout.strip()}")
    pointers = [s.with_name(s.name + POINTER_SUFFIX) for s in sidecars]
    if stage:
        ignores = {s.parent / ".gitignore" for s in sidecars}
        paths = [_rel(p, root) for p in pointers] + sorted(_rel(i, root) for i in ignores if i.exists())
        git("add", "--", *paths, cwd=root)
    return pointers


def _targets(paths: list[str], root: Path) -> list[str]:
    out = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(_rel(q, root) for q in sorted(path.rglob(f"*{SIDECAR_SUFFIX}{POINTER_SUFFIX}")))
        elif p.endswith(POINTER_SUFFIX):
            out.append(_rel(path, root))
        else:
            out.append(_rel(path.with_name(path.name + POINTER_SUFFIX), root))
    return out


def transfer(action: str, paths: list[str], root: Path) -> str:
    """``dvc push`` / ``dvc pull`` of the named sidecars (all when none are named)."""
    targets = _targets(paths, root)
    proc = dvc(action, *targets, cwd=root)
    if proc.returncode != 0:
        raise SamplesError(f"dvc {action} failed: {(proc.stderr or proc.stdout).strip()}")
    return (proc.stdout or proc.stderr).strip()
