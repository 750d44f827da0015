"""Running an import: plan each batch, write it, flag it, commit it through the hooks.

``import_snapshot`` drives :class:`eee.imports.plan.Planner`. Everything is written in one
transaction of :mod:`eee.write.commit` (journal, staging, rollback): for every batch the
records and sidecars (exclusive creates: nothing is ever overwritten), the sidecars added
to DVC in one run, one flag event per (rule, JSON path) a flagged record breaks; all of it
staged and, with ``commit``, committed through the hooks (never ``--no-verify``). The
manifest comes last, in its own commit. A batch the hooks refuse is taken back whole
(files, pointers, events, index) and the import stops; batches committed before it stay,
and importing again finds them already present. A record whose flag events the ledger
would refuse is refused on its own, never its batch.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eee.governance.manifests import OUTCOMES, REFUSED, WRITTEN, batch_line
from eee.governance.manifests import dumps as dump_manifest
from eee.governance.manifests import path_for as manifest_path
from eee.imports.plan import Batch, Entry, Planner
from eee.reporting.findings import Finding, Refused
from eee.reporting.shown import command
from eee.store.paths import POINTER_SUFFIX, SIDECAR_SUFFIX, escaped, sidecar_path_for
from eee.write.commit import Transaction, actor, transaction


class Report:
    """What an import did (or, on a dry run, would do)."""

    def __init__(self, import_id: str, source: str, revision: str | None, started: dt.datetime) -> None:
        self.id = import_id
        self.source = source
        self.revision = revision
        self.started = started
        self.entries: list[Entry] = []
        self.commits: list[str] = []
        self.manifest: str | None = None
        self.dry_run = False
        self.notes: list[str] = []
        self.signing: dict[str, Any] | None = None  # what the commits need (eee.write.signing.requirement)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(OUTCOMES, 0)
        for e in self.entries:
            out[e.outcome or REFUSED] += 1
        out["total"] = len(self.entries)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "import": self.id,
            "source": self.source,
            "revision": self.revision,
            "dry_run": self.dry_run,
            "counts": self.counts(),
            "records": {o: sum(1 for e in self.entries if e.kind == "record" and e.outcome == o) for o in OUTCOMES},
            "manifest": self.manifest,
            "commits": self.commits,
            "notes": self.notes,
            "signing": self.signing,
            "files": [e.to_dict() for e in self.entries],
        }


def _stamp(now: dt.datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_import_id(now: dt.datetime) -> str:
    return f"{now.strftime('%Y%m%dT%H%M%S.%fZ')}-import-{secrets.token_hex(3)}"


def flag_event(
    record: str, rule: str, path: str, reason: str, who: dict[str, str], record_path: str, sha256: str
) -> dict[str, Any]:
    """The flag event of one (rule, JSON path) of an imported record, naming the record's
    path and the sha256 of the bytes it accepts: the ledger's own
    (:func:`eee.governance.events.make_event`); characters the ledger refuses in a reason
    (controls, bidirectional marks: they come from source names and record text) are
    written escaped."""
    from eee.governance.events import make_event

    reason = escaped(reason, quote=False)
    return make_event("flag", record, reason, who, rule=rule, path=path, record_path=record_path, sha256=sha256)


class _Batch:
    """What the batch being written (one commit) holds so far."""

    def __init__(self) -> None:
        self.records = 0
        self.flagged = 0


def import_snapshot(
    root: Path,
    source: Any,
    source_label: str,
    revision: str | None = None,
    *,
    dry_run: bool = False,
    commit: bool = False,
    batch: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    store_tree: Callable[[], Any] | None = None,
) -> Report:
    """Import the snapshot read through ``source`` into the store at ``root``."""
    from eee.store.tree import WorkTree

    now = dt.datetime.now(dt.UTC)
    report = Report(new_import_id(now), source_label, revision, now)
    report.dry_run = dry_run
    who = None if dry_run else actor(root)
    from eee.rules.authority import Act
    from eee.write.signing import refusal_of, requirement

    # the manifest is an import (a maintainer's act where the store has roles); refused before anything is written
    req = requirement(root, [Act("import", manifest_path(report.id))])
    report.signing = {**req.to_dict(), "said": req.said()}
    if commit and not dry_run:
        problem = refusal_of(req, root)
        if problem is not None:
            raise Refused(problem)
    if not dry_run and _needs_dvc(source, root):
        from eee.write.samples import dvc_problem

        problem = dvc_problem(root)
        if problem:
            raise Refused(
                Finding(
                    source_label,
                    "$",
                    f"the source has sidecars, but {problem}",
                    "set up DVC in the store first",
                    check="import",
                )
            )
    from eee.governance.duplicates import DuplicateIndex

    index = DuplicateIndex(root)  # the duplicate rule's view of the store (HEAD), as the hooks see it
    index.sync()
    from eee.git.cli import GitError, git_dir

    try:
        keys = str(git_dir(root) / "eee-import-keys.sqlite")  # the plan's duplicate keys, off the heap
    except GitError:
        keys = ":memory:"
    planner = Planner(
        source,
        store_tree or (lambda: WorkTree(root)),
        batch=batch,
        progress=progress,
        store_duplicates=lambda path, facts: index.matches(path, facts),
        planned_keys=keys,
    )
    try:
        if dry_run:
            for _ in planner.batches():
                pass
            report.entries = planner.entries
            return report
        assert who is not None
        with transaction(root, stage=True, durable=False) as tx:
            return _run(tx, planner, report, who, commit)
    finally:
        index.close()
        planner.planned_facts.close()


def _needs_dvc(source: Any, root: Path) -> bool:
    """Whether a sidecar of the source would go to DVC (above HEAD's threshold)."""
    import os

    from eee.write.samples import in_git, store_settings

    sidecars = [p for p in source.files("data") if p.endswith(SIDECAR_SUFFIX)]
    if not sidecars:
        return False
    current = store_settings(root)
    for rel in sidecars:
        try:
            if hasattr(source, "git_size"):
                size = source.git_size(rel)
            elif hasattr(source, "path"):
                size = os.lstat(source.path(rel)).st_size
            else:
                size = len(source.read(rel))
        except Exception:  # unreadable: the plan refuses it on its own
            continue
        if size is not None and not in_git(size, current):
            return True
    return False


def _run(tx: Transaction, planner: Planner, report: Report, who: dict[str, str], commit: bool) -> Report:
    root = tx.root
    pointers: list[str] = []
    done = _Batch()
    for planned in planner.batches():
        pointers += _write_batch(tx, planned, who, report, done)
        if commit and planned.last and tx.staged:
            report.commits.append(
                tx.commit(
                    [_subject(planned.label, done, report), _body(done, report)],
                    refused_hint="nothing of this batch was kept; earlier batches stay committed "
                    "(importing again finds them already present)",
                )
            )
        if planned.last:
            done = _Batch()
    report.entries = planner.entries
    if not any(e.outcome in WRITTEN for e in report.entries):
        return report  # importing what is already there adds nothing, not even a manifest
    rel = manifest_path(report.id)
    tx.write([(rel, dump_manifest(_manifest(report, who)).encode("utf-8"))], durable=True)
    report.manifest = rel
    if commit:
        report.commits.append(tx.commit([f"Import {report.id}: manifest", _counts_line(report)]))
    if pointers:
        from eee.write.samples import dvc

        proc = dvc("push", "--quiet", *pointers, cwd=root)
        if proc.returncode != 0:
            report.notes.append(
                f"dvc push failed (run `{command('samples', 'push', *pointers, cwd=root)}` later): "
                f"{(proc.stderr or proc.stdout).strip()}"
            )
    return report


def _flag_events(planned: Batch, who: dict[str, str], report: Report) -> dict[str, list[dict[str, Any]]]:
    """The flag events of the batch's flagged records, by store path; a record whose events
    the ledger would refuse is refused here (with its sidecar), on its own."""
    from eee.governance.events import schema_errors

    out: dict[str, list[dict[str, Any]]] = {}
    for entry in planned.written():
        if not entry.flags:
            continue
        assert entry.uuid is not None and entry.store is not None
        events = []
        for flag in entry.flags:
            where = f"{report.source}:{entry.source}"
            if entry.source != entry.store:
                where += f" (relocated to {entry.store})"
            reason = f"Imported from {where} with a {flag.rule} finding at {flag.path}: {flag.message}"
            events.append(
                flag_event(entry.uuid, flag.rule, flag.path, reason, who, str(entry.store), str(entry.sha256))
            )
        problems = [f"{pointer}: {message}" for event in events for pointer, message in schema_errors(event)]
        if problems:
            entry.refuse(f"its flag event would not be valid ({problems[0]})")
            entry.flags = []
            side = sidecar_path_for(entry.store)
            for other in planned.entries:
                if other.store == side and other.outcome in WRITTEN:
                    other.refuse("its record is refused")
            continue
        out[entry.store] = events
    return out


def _write_batch(tx: Transaction, planned: Batch, who: dict[str, str], report: Report, done: _Batch) -> list[str]:
    """Write one chunk in the transaction: its files, its sidecars by the store's rule (in git
    up to ``sidecar_git_max_bytes``, into DVC above it), its flag events (all staged).
    Returns the sidecar pointers written."""
    from eee.governance.events import dumps, path_for

    root = tx.root
    flags = _flag_events(planned, who, report)
    written = {e.store: e for e in planned.written() if e.store is not None}
    files: list[tuple[str, bytes]] = []
    sidecars: list[str] = []
    for entry in written.values():
        if entry.kind != "record":
            continue
        assert entry.store is not None
        files.append((entry.store, planned.data[entry.store]))
        side = sidecar_path_for(entry.store)
        if side in written:
            sidecars.append(side)
        done.records += 1
        done.flagged += 1 if entry.flags else 0
    from eee.write.samples import in_git, store_settings

    current = store_settings(root) if sidecars else None  # the store's rule: git up to the threshold, DVC above
    kept = [side for side in sidecars if current is not None and in_git(len(planned.data[side]), current)]
    sidecars = [side for side in sidecars if side not in kept]
    try:
        tx.write(files + [(side, planned.data[side]) for side in kept])
        tx.write([(side, planned.data[side]) for side in sidecars], stage=False)  # DVC keeps them
    except OSError as exc:
        raise Refused(
            Finding(
                str(exc.filename or root / "data"),
                "$",
                f"cannot write the file: {exc.strerror}",
                "nothing of this batch was kept",
                check="import",
            )
        ) from None
    pointers = [rel + POINTER_SUFFIX for rel in sidecars]
    if sidecars:
        from eee.write.samples import dvc

        ignores = sorted({f"{rel.rpartition('/')[0]}/.gitignore" for rel in sidecars})
        with tx.others(new=pointers, changed=ignores):
            proc = dvc("add", "--quiet", *sidecars, cwd=root)
            if proc.returncode != 0:
                raise Refused(
                    Finding(
                        sidecars[0],
                        "$",
                        f"dvc add failed: {(proc.stderr or proc.stdout).strip()}",
                        "nothing of this batch was kept",
                        check="import",
                    )
                )
    events: list[tuple[str, bytes]] = []
    for entry in planned.written():
        for flag, event in zip(entry.flags, flags.get(str(entry.store), []), strict=True):
            events.append((path_for(root, event).relative_to(root).as_posix(), dumps(event).encode("utf-8")))
            flag.event = str(event["id"])
    tx.write(events)
    return pointers


def _counts_line(report: Report) -> str:
    counts = report.counts()
    return ", ".join(f"{counts[o]} {o.replace('_', ' ')}" for o in OUTCOMES) + f" of {counts['total']} source files"


def _subject(label: str, done: _Batch, report: Report) -> str:
    n = done.records
    return f"Import {label}: {n} record{'s' if n != 1 else ''} from {report.source}"[:100]


def _body(done: _Batch, report: Report) -> str:
    return f"{batch_line(report.id)}\n{done.flagged} flagged record(s) in this batch, each with its flag events."


def _manifest(report: Report, who: dict[str, str]) -> dict[str, Any]:
    from eee import __version__

    files = []
    for e in report.entries:
        item: dict[str, Any] = {"source": e.source, "kind": e.kind, "outcome": e.outcome or REFUSED}
        if e.store is not None and e.outcome != REFUSED:
            item["store"] = e.store
        if e.sha256:
            item["sha256"] = e.sha256
        if e.reason:
            item["reason"] = e.reason
        if e.flags and e.outcome in WRITTEN:
            item["flags"] = [{"rule": f.rule, "path": f.path, "event": f.event} for f in e.flags]
        files.append(item)
    return {
        "manifest_schema": "1.0.0",
        "id": report.id,
        "source": report.source,
        "revision": report.revision,
        "time": _stamp(report.started),
        "tool": f"eee {__version__}",
        "actor": who,
        "counts": report.counts(),
        "files": files,
    }
