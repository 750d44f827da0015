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

from eee.findings import Finding, Refused, refusal
from eee.gitutil import GitError, git, toplevel
from eee.paths import POINTER_SUFFIX, SIDECAR_SUFFIX, record_path_for_sidecar
from eee.tree import WorkTree
from eee.validate import validate_tree


def dvc(*args: str, cwd: Path, capture: bool = True) -> subprocess.CompletedProcess[str]:
    """``python -m dvc ARGS`` in this environment (its output captured unless ``capture=False``)."""
    env = dict(os.environ, DVC_NO_ANALYTICS="1")
    # pipeline stage commands say `python`: make it this environment's interpreter
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run([sys.executable, "-m", "dvc", *args], cwd=cwd, capture_output=capture, text=True, env=env)


def _rel(path: Path, root: Path) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()


def check_pairs(sidecars: list[Path], root: Path) -> None:
    """Raise :class:`~eee.findings.Refused` unless every sidecar and its record validate
    together: the validator's one "sidecar matches its record" (path, checksum, row count,
    ids), each file read once."""
    rels = [_rel(s, root) for s in sidecars]
    pairs = [p for rel in rels for p in (record_path_for_sidecar(rel), rel)]
    summary = validate_tree(WorkTree(root), pairs)
    # a sidecar enters DVC only with a checksum to hold it to: its warning refuses here too
    errors: list[Finding] = [
        f for r in summary.results for f in r.findings if f.severity == "error" or f.check == "sidecar"
    ]
    if summary.fatal:
        errors.append(Finding("", "$", summary.fatal, check="registry"))
    if errors:
        head = Finding(
            rels[0] if len(rels) == 1 else ", ".join(rels),
            "$",
            "the record and its sidecar do not validate",
            "set detailed_evaluation_results in the record before adding the sidecar",
            check="sidecar",
        )
        raise Refused([head, *errors])


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
            raise refusal(f"not a sidecar (expected <uuid>{SIDECAR_SUFFIX})", file=str(sidecar), check="sidecar")
        if not sidecar.is_file():
            raise refusal("no such file", file=str(sidecar), check="sidecar")
    if not sidecars:
        return []
    try:
        root = root or toplevel(sidecars[0].parent)
    except GitError:
        raise refusal("not inside a git work tree (the store)", file=str(sidecars[0]), check="sidecar") from None
    problem = dvc_problem(root)
    if problem:
        raise refusal(problem, check="dvc")
    check_pairs(sidecars, root)
    rels = [_rel(s, root) for s in sidecars]
    proc = dvc("add", "--quiet", *rels, cwd=root)
    if proc.returncode != 0:
        raise refusal(
            f"dvc add failed: {proc.stderr.strip() or proc.stdout.strip()}", file=", ".join(rels), check="dvc"
        )
    pointers = [s.with_name(s.name + POINTER_SUFFIX) for s in sidecars]
    ignore_in_git(sidecars)
    if stage:
        ignores = {s.parent / ".gitignore" for s in sidecars}
        paths = [_rel(p, root) for p in pointers] + sorted(_rel(i, root) for i in ignores if i.exists())
        git("add", "--", *paths, cwd=root)
    return pointers


def ignore_in_git(sidecars: list[Path]) -> None:
    """List each sidecar in the ``.gitignore`` beside it, as DVC does when it drives git.

    The store's DVC runs without git (``core.no_scm``: DVC refuses a git-ignored dvc.lock
    otherwise, see dvc.yaml), so it no longer writes these entries itself."""
    by_folder: dict[Path, list[str]] = {}
    for sidecar in sidecars:
        by_folder.setdefault(sidecar.parent, []).append(f"/{sidecar.name}")
    for folder, entries in by_folder.items():
        ignore = folder / ".gitignore"
        text = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
        missing = [e for e in entries if e not in text.splitlines()]
        if missing:
            if text and not text.endswith("\n"):
                text += "\n"
            ignore.write_text(text + "".join(f"{e}\n" for e in missing), encoding="utf-8")


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
        raise refusal(f"dvc {action} failed: {(proc.stderr or proc.stdout).strip()}", check="dvc")
    return (proc.stdout or proc.stderr).strip()
