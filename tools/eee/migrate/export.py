"""The export behind ``eee migrate``: migrated copies of records and sidecars, written elsewhere.

For every record named (files, folders, globs; a sidecar named alone brings its record), the
record and the sidecar beside it are migrated together, as one unit, and written under the
output folder in the same layout (``OUT/data/<benchmark>/<developer>/<model>/<uuid>.json``;
a file outside any ``data/`` folder goes to ``OUT/<name>``), plus ``OUT/migration-report.json``.

- Nothing is written under a store's ``data/``: an output folder whose ``data/`` would lie in
  one (the input's store, or a git work tree's) is refused before anything is read.
- A unit is written whole or not at all: each file goes to a temporary name beside its
  destination and is renamed when the whole unit migrated. A refused record leaves nothing.
- A record (or sidecar) already at the target version is copied byte for byte, so migrating
  a migrated copy again is a no-op.
- When a sidecar's rows change, the copy of its record gets the new checksum (the old one is
  kept in ``eee_migration_derived``); the row count does not change.
- A record whose sidecar is present only as its DVC pointer is migrated alone, with a
  warning: the copy keeps the source sidecar's checksum (``dvc pull`` first to migrate it too).
- A record the store accepted through flags (:mod:`eee.rules.flags`: the flag events of its
  store's ledger, bound to its path and bytes) migrates when every finding that would refuse
  it is one its flags accept; the copy carries those flags (``eee_migration_flags``,
  :mod:`eee.migrate.provenance`, and the report's ``flags``), each at its JSON path in the
  copy. A flag whose finding the migration itself resolved is not carried (the report's
  ``flags_resolved``). A copy that is the record's own bytes (already at the target) says
  nothing in itself: the store's flags accept those bytes as they are.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from eee.migrate.chain import migrate, target_version
from eee.migrate.changes import Changes, MigrationRefused
from eee.migrate.files import SidecarCopy, read_record, write_rows
from eee.migrate.inputs import ORPHAN_UNIT, Inputs
from eee.migrate.provenance import carry_flags, stamp
from eee.migrate.report import MIGRATED, REPORT_NAME, UNCHANGED, ExportReport, Outcome
from eee.reporting.findings import ERROR, WARNING, Finding, Refused, refusal
from eee.reporting.shown import command
from eee.rules.sidecar import hash_algorithm
from eee.store.fsutil import replace_file
from eee.store.paths import (
    DATA_DIR,
    POINTER_SUFFIX,
    find_store_root,
    record_path_for_sidecar,
    sidecar_path_for,
)
from eee.store.schemas import EVAL, Registry, default_registry
from eee.store.strictjson import canonical
from eee.validation.collect import Display, collect

Progress = Callable[[int, int], None]
MIGRATION_CHECKS = ("score", "results")  # the rules a record is checked by before it migrates (eee.migrate.chain)


def forbidden_output(out: Path, store_roots: Iterable[str]) -> str | None:
    """The store ``data/`` folder the copies would land in, or None when ``out`` is safe.

    The copies go to ``OUT/data/...``; that folder, or any folder above it, must not be the
    ``data/`` of an input's store or of a git work tree.
    """
    roots = {os.path.realpath(r) for r in store_roots}
    here = os.path.realpath(out / DATA_DIR)
    while True:
        parent = os.path.dirname(here)
        if os.path.basename(here) == DATA_DIR and (parent in roots or os.path.exists(os.path.join(parent, ".git"))):
            return here
        if parent == here:
            return None
        here = parent


PROTECTED = (DATA_DIR, "governance", "schemas", ".git", ".dvc")  # what a store tracks or keeps


def protected_target(real: str, store_roots: Iterable[str]) -> str | None:
    """The store folder a write to the resolved path ``real`` would land in (None when safe):
    the tracked folders (data/, governance/, schemas/, .git/, .dvc/) of an input's store or
    of any git work tree above it."""
    roots = {os.path.realpath(r) for r in store_roots}
    here = real
    while True:
        parent = os.path.dirname(here)
        if parent == here:
            return None
        if os.path.basename(here) in PROTECTED and (parent in roots or os.path.exists(os.path.join(parent, ".git"))):
            return here
        here = parent


def relative_place(absolute: str, store: str | None = None) -> str:
    """Where a copy goes below the output folder: the path below the store root (``store``
    when the file lies in it, else the one found from the path), else the file name."""
    inside = store is not None and absolute.startswith(store.rstrip(os.sep) + os.sep)
    root = store if inside else find_store_root(absolute)
    if root is not None and absolute.startswith(root.rstrip(os.sep) + os.sep):
        rel = absolute[len(root.rstrip(os.sep)) + 1 :]
        return rel.replace(os.sep, "/")
    return os.path.basename(absolute)


class Folders:
    """The output folders known to exist, the most recent ones only (the copies come folder by
    folder, so a few suffice; mkdir of a folder that exists costs a system call)."""

    KEEP = 64

    def __init__(self) -> None:
        self._known: dict[Path, None] = {}

    def __contains__(self, folder: object) -> bool:
        return folder in self._known

    def add(self, folder: Path) -> None:
        self._known[folder] = None
        if len(self._known) > self.KEEP:
            del self._known[next(iter(self._known))]

    def discard(self, folder: Path) -> None:
        self._known.pop(folder, None)

    def __len__(self) -> int:
        return len(self._known)


def _temp_beside(dest: Path, made: Folders | None = None) -> tuple[int, Path]:
    """A new temporary file beside ``dest``, open for writing (``made``: folders known to exist; mkdir is costly)."""
    if made is None or dest.parent not in made:
        dest.parent.mkdir(parents=True, exist_ok=True)
        if made is not None:
            made.add(dest.parent)
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    return fd, Path(name)


def write_atomic(dest: Path, data: bytes, made: Folders | None = None) -> None:
    """Write ``data`` to ``dest`` through a temporary file renamed into place."""
    fd, tmp = _temp_beside(dest, made)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        replace_file(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class _SidecarCopy:
    """A migrated sidecar written to ``tmp``, renamed into place when its record is written."""

    def __init__(self, tmp: Path, dest: Path, rows: SidecarCopy, entry: dict[str, Any]) -> None:
        self.tmp = tmp
        self.dest = dest
        self.rows = rows
        self.entry = entry


def unsafe_write(out: Path, dest: Path, store_roots: Iterable[str]) -> str | None:
    """Why writing ``dest`` (below ``out``) is refused, or None: the copies are never written
    through a symbolic link (a folder below ``out``, or ``dest`` itself), and never where
    the path resolves into a store's tracked folders."""
    rel = dest.relative_to(out)
    here = out
    for part in rel.parts:
        here = here / part
        if here.is_symlink():
            return f"{here} is a symbolic link; migration never writes through a link"
        if not here.exists():
            break
    inside = protected_target(os.path.realpath(dest), store_roots)
    if inside is not None:
        return f"{dest} resolves into the store folder {inside}; migration never writes there"
    return None


class _Exporter:
    def __init__(
        self,
        out: Path,
        target: str,
        registry: Registry,
        display: Callable[[str], str],
        roots: Iterable[str] = (),
        store: str | None = None,
    ) -> None:
        self.roots = set(roots)
        self.store = store
        self.out = out
        self.target = target
        self.registry = registry
        self.display = display
        # copies of one store's records cannot meet (distinct paths below one root); a copy
        # named by its file name alone can, and so can copies from several stores
        self.claim_all = len(self.roots) > 1
        self.claimed: set[str] = set()
        self.made = Folders()
        self.flags = _StoreFlags(store)

    def record(self, absolute: str) -> Outcome:
        """Migrate one record with its sidecar and write both, or neither."""
        file = self.display(absolute)
        outcome = Outcome(file, "record", self.target)
        rel = relative_place(absolute, self.store)
        outcome.output = rel
        dest = self.out / rel
        try:
            self._claim(rel, dest, absolute, file)
            for place in (dest, Path(sidecar_path_for(str(dest)))):
                refused = unsafe_write(self.out, place, self.roots)
                if refused is not None:
                    raise MigrationRefused(
                        [
                            Finding(
                                file, "$", refused, "choose an output folder without links into a store", check="output"
                            )
                        ]
                    )
            data, doc = read_record(absolute, file)
            flags = self.flags.of(absolute, rel)
            accept = _acceptor(flags, rel, data) if flags else None
            result = migrate(doc, EVAL, self.target, self.registry, file, accept)
            outcome.source = result.source
            outcome.changes.extend(result.changes)
            copy, changed = result.doc, result.changed
            der = copy.get("detailed_evaluation_results")
            side = self._sidecar(absolute, dest, rel, file, der)
        except MigrationRefused as refused:
            outcome.source = outcome.source or refused.source
            outcome.findings.extend(refused.findings)
            return outcome
        if side is not None:
            outcome.sidecar = side.entry
            if side.rows.changed and isinstance(der, dict) and isinstance(der.get("checksum"), str):
                # the record's copy is ours to change: either the chain's copy or the document read from the file
                changed = self._new_checksum(copy, side, hash_algorithm(der) or "sha256", outcome) or changed
        elif isinstance(der, dict) and os.path.lexists(sidecar_path_for(absolute) + POINTER_SUFFIX):
            outcome.findings.append(
                Finding(
                    file,
                    "$.detailed_evaluation_results",
                    "the sidecar is not in the working tree (only its DVC pointer): it was not migrated, and the "
                    "copy keeps the source sidecar's checksum",
                    f"fetch it (`{command('samples', 'pull', Path(sidecar_path_for(absolute)))}`) and migrate again to "
                    "migrate its rows too",
                    severity=WARNING,
                    check="sidecar",
                )
            )
        if flags:
            outcome.flags, outcome.flags_resolved = _carried(flags, result, file, rel, data)
            if changed and outcome.flags:
                carry_flags(copy, outcome.flags)
        try:
            write_atomic(dest, canonical(copy) if changed else data, self.made)
        except BaseException:
            if side is not None:
                side.tmp.unlink(missing_ok=True)
            raise
        if side is not None:
            replace_file(side.tmp, side.dest)
        outcome.status = MIGRATED if changed else UNCHANGED
        return outcome

    def _claim(self, rel: str, dest: Path, absolute: str, file: str) -> None:
        if rel in self.claimed:
            raise MigrationRefused(
                [
                    Finding(
                        file,
                        "$",
                        f"another input is also copied to {rel}",
                        "migrate the two in separate runs",
                        check="migrate",
                    )
                ]
            )
        if self.claim_all or not rel.startswith(DATA_DIR + "/"):
            self.claimed.add(rel)
        # a copy inside data/ cannot meet its source (the output folder is checked); a loose file can
        if not rel.startswith(DATA_DIR + "/") and os.path.realpath(dest) == os.path.realpath(absolute):
            raise MigrationRefused(
                [
                    Finding(
                        file, "$", "the copy would overwrite this file", "choose another output folder", check="output"
                    )
                ]
            )

    def _sidecar(self, absolute: str, dest: Path, rel: str, file: str, der: Any) -> _SidecarCopy | None:
        """The record's sidecar migrated to a temporary file (None when there is none beside it)."""
        sidecar = sidecar_path_for(absolute)
        if not os.path.isfile(sidecar):
            return None
        side_dest = Path(sidecar_path_for(str(dest)))
        side_file = self.display(sidecar)
        fd, tmp = _temp_beside(side_dest, self.made)
        try:
            with os.fdopen(fd, "wb") as fh:
                rows = write_rows(sidecar, fh, self.target, self.registry, side_file, hash_algorithm(der) or "sha256")
            if not rows.changed:
                shutil.copyfile(sidecar, tmp)  # byte for byte: the record's checksum stays true
        except MigrationRefused as refused:
            tmp.unlink(missing_ok=True)
            self._prune(tmp.parent)
            first = refused.findings[0]
            summary = Finding(
                file,
                "$.detailed_evaluation_results",
                f"its sidecar cannot be migrated (line {first.line}, {first.pointer}): {first.message}",
                "a record and its sidecar migrate together (the sidecar's findings follow); "
                "fix the sidecar, or add a corrected record and supersede this one",
                check=first.check,
            )
            raise MigrationRefused([summary, *refused.findings]) from None
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        entry = {
            "file": side_file,
            "output": sidecar_path_for(rel),
            "rows": rows.rows,
            "status": MIGRATED if rows.changed else UNCHANGED,
            "by_source_version": dict(sorted(rows.sources.items())),
        }
        return _SidecarCopy(tmp, side_dest, rows, entry)

    @staticmethod
    def _new_checksum(copy: dict[str, Any], side: _SidecarCopy, alg: str, outcome: Outcome) -> bool:
        """Point the record's copy at the migrated sidecar's checksum; True when it changed."""
        der = copy["detailed_evaluation_results"]
        if der["checksum"] == side.rows.checksum:
            return False
        old = der["checksum"]
        der["checksum"] = side.rows.checksum
        extra = Changes()
        extra.derived["$.detailed_evaluation_results.checksum"] = (
            f"{alg} of the migrated sidecar (the source sidecar's was {old})"
        )
        stamp(copy, EVAL, None, extra)
        outcome.changes.extend(extra)
        return True

    def _prune(self, folder: Path) -> None:
        """Remove folders left empty below the output folder (a refused unit leaves nothing)."""
        while folder != self.out and self.out in folder.parents:
            try:
                folder.rmdir()
            except OSError:
                return
            self.made.discard(folder)
            folder = folder.parent

    def orphan(self, absolute: str) -> Outcome:
        file = self.display(absolute)
        outcome = Outcome(file, "sidecar", self.target)
        record = os.path.basename(record_path_for_sidecar(absolute))
        outcome.findings.append(
            Finding(
                file,
                "$",
                f"sidecar without aggregate: {record} does not exist beside it",
                "a sidecar migrates with the record of the same uuid in the same folder",
                check="sidecar",
            )
        )
        return outcome


class _StoreFlags:
    """The flags of the records' stores: each store's ledger read once, when a record of it
    is first migrated (a store outside git, or without events, has none)."""

    def __init__(self, store: str | None) -> None:
        self.store = store
        self._ledgers: dict[str, Any] = {}

    def of(self, absolute: str, rel: str) -> list[Any]:
        """The flags of the record at ``absolute`` (``rel`` below its store), bound to the
        record path and bytes they accept."""
        from eee.rules.flags import flag_of, legacy_binding, record_of

        uuid = record_of(rel)
        inside = self.store is not None and absolute.startswith(self.store.rstrip(os.sep) + os.sep)
        root = self.store if inside else find_store_root(absolute)
        if uuid is None or root is None or not rel.startswith(DATA_DIR + "/"):
            return []
        ledger = self._ledger(root)
        if ledger is None:
            return []
        out = []
        for event in ledger.state(uuid).flags:
            if not (isinstance(event.get("rule"), str) and isinstance(event.get("path"), str)):
                continue
            flag = flag_of(event)
            if flag.record_path is None:
                flag = legacy_binding(flag, root, ledger.entry(event).commit)
            out.append(flag)
        return out

    def _ledger(self, root: str) -> Any:
        if root not in self._ledgers:
            from eee.rules.ledger import read_ledger

            folder = Path(root) / "governance" / "events"
            self._ledgers[root] = read_ledger(Path(root)) if folder.is_dir() else None
        return self._ledgers[root]


def _acceptor(flags: list[Any], rel: str, data: bytes) -> Callable[[Finding], bool]:
    """Whether one of ``flags`` accepts a finding of the record at ``rel`` with bytes ``data``."""
    from eee.rules.flags import content_ids, covers

    located = (rel, content_ids(data))
    return lambda finding: any(covers(flag, finding, located) for flag in flags)


def _carried(
    flags: list[Any], result: Any, file: str, rel: str, data: bytes
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(carried, resolved): the flags bound to this record's bytes, each at its path in the
    copy. A flag of a rule the migration checks (scores, result ids) is carried when it
    accepted a finding of the source that the copy still has (the checks run again on the
    copy), resolved when the copy no longer has it; a flag of another rule (a warning's:
    folders, a misspelt field, a duplicate) is carried as it is."""
    from eee.rules.flags import content_ids
    from eee.rules.record import score_findings

    sha256, blob = content_ids(data)
    still = {(f.check, f.pointer) for f in score_findings(result.doc, file, True) if f.severity == ERROR}
    accepted = {(f.check, f.pointer) for f in result.accepted}
    carried: list[dict[str, str]] = []
    resolved: list[dict[str, str]] = []
    for flag in flags:
        if flag.record_path != rel or not (sha256 == flag.sha256 if flag.sha256 is not None else blob == flag.blob):
            continue  # bound to other bytes: it accepts nothing here
        path = result.changes.moved.get(flag.path, flag.path)
        entry = {"event": flag.event, "rule": flag.rule, "path": path}
        if flag.rule not in MIGRATION_CHECKS:
            carried.append(entry)
        elif (flag.rule, flag.path) in accepted:
            (carried if (flag.rule, path) in still else resolved).append(entry)
    return carried, resolved


def export(
    paths: Iterable[str | Path],
    out: str | Path,
    to: str | None = None,
    registry: Registry | None = None,
    progress: Progress | None = None,
    store: str | Path | None = None,
) -> ExportReport:
    """Write migrated copies of the records (and sidecars) under ``paths`` to ``out``, and the report.

    Raises :class:`~eee.reporting.findings.Refused` before writing anything when the target version is unknown,
    an input does not exist, or the output folder lies inside a store's ``data/``.

    ``store``: the store the records belong to (``eee migrate --store``): the copies are
    placed as below it, and its folders are protected like those of the stores found from
    the paths.

    One record at a time: read, migrate, write, count, drop. The inputs are walked twice
    (:class:`~eee.migrate.inputs.Inputs`: first to count them and find their stores, then to
    migrate), and the report is written as the records go (:class:`ExportReport`), so memory
    does not grow with the number of records (only with the findings of those that have some).
    """
    registry = registry or default_registry()
    try:
        target = target_version(to, registry)
    except ValueError as exc:
        raise refusal(str(exc), check="migrate") from None
    out = Path(out).absolute()
    paths = list(paths)
    inputs = Inputs(paths)
    total, roots = _survey(inputs)
    store = os.path.realpath(store) if store is not None else None
    if store is not None and store not in {os.path.realpath(r) for r in roots}:
        roots.add(store)
    if inputs.problems:
        raise Refused(collect(paths).problems)  # the validator's own findings, in its order
    inside = forbidden_output(out, roots)
    if inside is not None:
        raise refusal(
            f"the output folder would put the copies inside the store folder {inside}: migration never "
            "writes under data/",
            "choose a folder outside the store",
            file=str(out),
            check="migrate",
        )
    if out.exists() and not out.is_dir():
        raise refusal("the output exists and is not a folder", file=str(out), check="migrate")
    inside = protected_target(os.path.realpath(out), roots)
    if inside is not None:
        raise refusal(
            f"the output folder resolves into the store folder {inside}",
            "choose a folder outside the store",
            file=str(out),
            check="migrate",
        )
    out.mkdir(parents=True, exist_ok=True)
    refused = unsafe_write(out, out / REPORT_NAME, roots)
    if refused is not None:
        raise refusal(refused, "choose an output folder without links into a store", file=str(out), check="migrate")
    report = ExportReport(out, target)
    exporter = _Exporter(out, target, registry, Display(), roots, store)
    try:
        done = 0
        for unit, absolute in inputs:
            if unit == ORPHAN_UNIT:
                report.add(exporter.orphan(absolute))
                continue
            report.add(exporter.record(absolute))
            done += 1
            if progress is not None:
                progress(done, total)
        if inputs.problems:  # a folder that became unreadable since the survey
            raise Refused(collect(paths).problems)
        fd, tmp = _temp_beside(out / REPORT_NAME)
        try:
            with os.fdopen(fd, "wb") as fh:
                report.write(fh)
            replace_file(tmp, out / REPORT_NAME)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    finally:
        report.close()
    return report


def _survey(inputs: Inputs) -> tuple[int, set[str]]:
    """How many inputs there are (records and sidecars without one) and the stores they lie in."""
    total = 0
    roots: set[str] = set()
    folder = None
    for _unit, absolute in inputs:
        total += 1
        here = os.path.dirname(absolute)
        if here != folder:  # the store root depends on the folder only
            folder = here
            root = find_store_root(absolute)
            if root is not None:
                roots.add(root)
    return total, roots
