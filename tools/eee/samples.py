"""Per-sample sidecars in DVC: add (checked against the aggregate, then ``dvc add`` and
staged), push and pull.

The aggregate record is the contract: before a sidecar enters DVC the pair must validate
(its path, sha256 and row count are what the record declares). DVC runs as a subprocess of
this interpreter (``python -m dvc``), so the same environment is used everywhere.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from eee.gitutil import GitError, git, toplevel
from eee.paths import POINTER_SUFFIX, SIDECAR_SUFFIX, record_path_for_sidecar
from eee.tree import WorkTree
from eee.validate import validate_tree


class SamplesError(Exception):
    """A sidecar that cannot be added or fetched; the message says why and what to do."""


def dvc(*args: str, cwd: Path, capture: bool = True) -> subprocess.CompletedProcess[str]:
    """``python -m dvc ARGS`` in this environment (its output captured unless ``capture=False``)."""
    env = dict(os.environ, DVC_NO_ANALYTICS="1")
    # pipeline stage commands say `python`: make it this environment's interpreter
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run([sys.executable, "-m", "dvc", *args], cwd=cwd, capture_output=capture, text=True, env=env)


def _rel(path: Path, root: Path) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()


def check_pairs(sidecars: list[Path], root: Path) -> None:
    """Raise SamplesError unless every sidecar and its record validate together: the
    validator's one "sidecar matches its record" (path, checksum, row count, ids), each
    file read once."""
    rels = [_rel(s, root) for s in sidecars]
    pairs = [p for rel in rels for p in (record_path_for_sidecar(rel), rel)]
    summary = validate_tree(WorkTree(root), pairs)
    # a sidecar enters DVC only with a checksum to hold it to: its warning refuses here too
    errors = [
        f.one_line() for r in summary.results for f in r.findings if f.severity == "error" or f.check == "sidecar"
    ]
    if summary.fatal:
        errors.append(summary.fatal)
    if errors:
        raise SamplesError(
            "the record and its sidecar do not validate:\n  "
            + "\n  ".join(errors[:10])
            + "\n(hint: set detailed_evaluation_results in the record before adding the sidecar)"
        )


def dvc_problem(root: Path) -> str | None:
    """Why sidecars cannot go into DVC in the store at ``root``, or None."""
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
    check_pairs(sidecars, root)
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
