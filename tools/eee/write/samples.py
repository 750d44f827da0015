"""Per-sample sidecars placed by the store's rule: add (checked against the aggregate, then
kept in git up to the store's ``sidecar_git_max_bytes``, or written to DVC's cache with its
pointer above it, and staged), push and pull (of those in DVC).

The placement rule is one: :func:`in_git` (the settings of HEAD, :mod:`eee.store.settings`);
``eee samples add``, ``eee convert``, ``supersede``/``resolve --outcome corrected`` and
``eee import`` place sidecars through here (:mod:`eee.write.placement`). The aggregate
record is the contract: before a sidecar is placed the pair must validate (its path,
sha256 and row count are what the record declares). The DVC side is
:mod:`eee.dvc.store`: DVC's own libraries, without loading the repository's index, so a
command costs what it touches, not the number of sidecars in the store. ``dvc()`` runs
stock DVC as a subprocess of this interpreter (``python -m dvc``) for the pipeline.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from eee.dvc.store import DvcStore, Target, Transfer, pointers_under, read_pointer
from eee.git.cli import GitError, toplevel
from eee.reporting.findings import Finding, Refused, refusal
from eee.store import settings
from eee.store.paths import POINTER_SUFFIX, SIDECAR_SUFFIX, record_path_for_sidecar
from eee.store.settings import Settings
from eee.store.tree import WorkTree
from eee.validation.validate import validate_tree

if TYPE_CHECKING:
    from eee.write.commit import Transaction


def dvc(*args: str, cwd: Path, capture: bool = True) -> subprocess.CompletedProcess[str]:
    """``python -m dvc ARGS`` in this environment (its output captured unless ``capture=False``)."""
    env = dict(os.environ, DVC_NO_ANALYTICS="1")
    # pipeline stage commands say `python`: make it this environment's interpreter
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run([sys.executable, "-m", "dvc", *args], cwd=cwd, capture_output=capture, text=True, env=env)


def _rel(path: Path, root: Path) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()


def check_pairs(sidecars: list[Path], root: Path) -> None:
    """Raise :class:`~eee.reporting.findings.Refused` unless every sidecar and its record validate
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


class Placed(NamedTuple):
    """Where ``eee samples add`` put one sidecar: in git (``pointer`` None), or in DVC with its
    pointer; ``replaced``: a DVC pointer was replaced by the file (``sidecar-to-git``)."""

    sidecar: Path
    pointer: Path | None = None
    replaced: bool = False

    @property
    def in_git(self) -> bool:
        return self.pointer is None


def store_settings(root: Path) -> Settings:
    """The settings the tools place sidecars by: HEAD's (the defaults before the first commit);
    Refused (``settings``) when HEAD's file cannot be used."""
    from eee.git.cli import has_commit

    try:
        return settings.of_commit(root, "HEAD") if has_commit("HEAD", root) else settings.DEFAULTS
    except settings.SettingsProblem as exc:
        from eee.rules.commit import settings_finding

        raise Refused(settings_finding(exc, "HEAD")) from None


def in_git(size: int, current: Settings) -> bool:
    """The one placement rule (:func:`eee.store.settings.git_keeps`): git up to
    ``sidecar_git_max_bytes``, DVC above it."""
    return settings.git_keeps(size, current)


def add(sidecar: Path, stage: bool = True, root: Path | None = None) -> Placed:
    """Check, place and stage one sidecar (see :func:`add_many`)."""
    return add_many([sidecar], stage, root)[0]


def add_many(sidecars: list[Path], stage: bool = True, root: Path | None = None) -> list[Placed]:
    """Check every sidecar against its record, then place each by the store's rule: up to
    HEAD's ``sidecar_git_max_bytes`` in git (staged as a plain file; a DVC pointer beside it,
    which must track exactly this file, is replaced by it: ``sidecar-to-git``, and its line
    of the folder's ``.gitignore`` goes), above it in DVC's cache with its pointer (what
    ``dvc add`` writes, :mod:`eee.dvc.store`). One transaction of :mod:`eee.write.commit`
    does it (with ``stage``, the sidecars, pointers, deletions and ``.gitignore`` files
    staged), or takes it all back. Nothing is placed unless every check passes.

    Nothing here reads the store's other pointers: the cost is the sidecars' own."""
    sidecars = [Path(s) for s in sidecars]
    for sidecar in sidecars:
        if not sidecar.name.endswith(SIDECAR_SUFFIX):
            raise refusal(f"not a sidecar (expected <uuid>{SIDECAR_SUFFIX})", file=str(sidecar), check="sidecar")
        if not sidecar.is_file() or sidecar.is_symlink():
            raise refusal("no such file", file=str(sidecar), check="sidecar")
    if not sidecars:
        return []
    try:
        root = root or toplevel(sidecars[0].parent)
    except GitError:
        raise refusal("not inside a git work tree (the store)", file=str(sidecars[0]), check="sidecar") from None
    current = store_settings(root)
    to_git = [s for s in sidecars if in_git(s.stat().st_size, current)]
    to_dvc = [s for s in sidecars if s not in to_git]
    if to_dvc:
        problem = dvc_problem(root)
        if problem:
            raise refusal(problem, check="dvc")
    check_pairs(sidecars, root)
    from eee.write.commit import transaction

    with transaction(root, stage=stage) as tx:
        return place(tx, sidecars, current)


def place(tx: Transaction, sidecars: list[Path], current: Settings) -> list[Placed]:
    """Place the sidecars (files of the work tree, checked against their records) in the
    transaction ``tx`` by the rule: :func:`into_git` up to ``current``'s threshold, DVC's cache
    and a pointer above it (journaled and staged as files DVC writes for the run)."""
    root = tx.root
    to_git = [s for s in sidecars if in_git(s.stat().st_size, current)]
    to_dvc = [s for s in sidecars if s not in to_git]
    placed = {s: p for s, p in zip(to_git, into_git(tx, [_rel(s, root) for s in to_git]), strict=True)}
    if to_dvc:
        rels = [_rel(s, root) for s in to_dvc]
        ignores = sorted({f"{rel.rpartition('/')[0]}/.gitignore" for rel in rels})
        with tx.others(new=[rel + POINTER_SUFFIX for rel in rels], changed=ignores):
            for s, pointer in zip(to_dvc, _into_dvc(to_dvc, root), strict=True):
                placed[s] = Placed(s, pointer)
    return [placed[s] for s in sidecars]


def into_git(tx: Transaction, rels: list[str]) -> list[Placed]:
    """Keep the sidecars ``rels`` (in the work tree) in git, in the transaction ``tx``: each
    staged as a file, its line in the folder's ``.gitignore`` removed (the file removed when
    nothing else is left in it), and a DVC pointer beside it deleted (the caller checked that
    it tracks this very file: ``sidecar-to-git``)."""
    root = tx.root
    by_folder: dict[str, list[str]] = {}
    for rel in rels:
        by_folder.setdefault(rel.rpartition("/")[0], []).append(rel.rpartition("/")[2])
    for folder, names in by_folder.items():
        ignore = f"{folder}/.gitignore"
        path = root / ignore
        if not path.is_file() or path.is_symlink():
            continue
        lines = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        listed = {f"/{n}" for n in names} | set(names)
        kept = [line for line in lines if line.strip() not in listed]
        if kept == lines:
            continue
        if any(line.strip() for line in kept):
            with tx.others(new=[], changed=[ignore]):
                _replace_text(path, "".join(f"{line}\n" for line in kept))
        else:
            tx.remove([ignore])
    pointers = [rel + POINTER_SUFFIX for rel in rels if (root / (rel + POINTER_SUFFIX)).is_file()]
    tx.remove(pointers)
    with tx.others(new=[], changed=rels):  # the sidecars are there already: staged, or put back as they were
        pass
    return [Placed(root / rel, None, rel + POINTER_SUFFIX in pointers) for rel in rels]


def _replace_text(path: Path, text: str) -> None:
    from eee.store.fsutil import write_replacing

    write_replacing(path, text.encode("utf-8", "surrogateescape"))


def _into_dvc(sidecars: list[Path], root: Path) -> list[Path]:
    try:
        return DvcStore(root).add([s.resolve() for s in sidecars])
    except OSError as exc:
        raise refusal(
            f"adding to DVC's cache failed: {exc}", file=", ".join(_rel(s, root) for s in sidecars), check="dvc"
        ) from None


def targets(paths: list[str], root: Path) -> list[Target]:
    """The sidecars named (pointers, sidecars or folders; all under ``data/`` when none)."""
    return [read_pointer(p) for p in pointers_under(root, paths)]


def move(action: str, paths: list[str], root: Path, remote: str | None = None) -> Transfer:
    """Push or pull the named sidecars (all when none are named); the objects only, each
    checked once on the remote. Raises :class:`~eee.reporting.findings.Refused` when the remote
    cannot be reached or set up; per-sidecar failures are in the result."""
    named = targets(paths, root)
    try:
        store = DvcStore(root)
        return store.push(named, remote) if action == "push" else store.pull(named, remote)
    except Refused:
        raise
    except Exception as exc:  # the remote's own errors (botocore, HTTP, auth, ...) are reported, not raised
        said = str(exc).strip().splitlines()[0][:500] if str(exc).strip() else ""
        raise refusal(f"{action} failed: {type(exc).__name__}: {said}", check="dvc") from None


def check_pulled(pulled: list[Target], root: Path) -> list[Finding]:
    """The validator's sidecar errors for the pulled sidecars and their records."""
    rels = [_rel(t.sidecar, root) for t in pulled]
    if not rels:
        return []
    pairs = [p for rel in rels for p in (record_path_for_sidecar(rel), rel)]
    summary = validate_tree(WorkTree(root), pairs)
    return [f for r in summary.results for f in r.findings if f.check == "sidecar" and f.severity == "error"]


def push_command(sidecars: list[Path], cwd: Path | None = None, most: int = 3) -> str:
    """The exact ``eee samples push ...`` that uploads these sidecars (absolute paths), written
    relative to ``cwd`` and runnable as printed there (:func:`eee.reporting.shown.shown_command`); with
    more than ``most`` of them, their benchmark folders instead."""
    from eee.reporting.shown import shown_command

    here = cwd or Path.cwd()
    targets = sorted({str(s) for s in sidecars})
    if len(targets) > most:
        # data/<benchmark>/<developer>/<model>/<file>: push takes folders too
        targets = sorted({str(Path(t).parents[2]) for t in targets})
    shown = [os.path.relpath(t, here) if Path(t).is_absolute() else t for t in targets]
    return f"{shown_command(here)} samples push " + " ".join(shlex.quote(t) for t in shown)
