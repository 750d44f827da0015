"""Running an import: plan each batch, write it, flag it, commit it through the hooks.

``import_snapshot`` drives :class:`eee.imports.plan.Planner`. For every batch it writes
the records and sidecars (exclusive creates: nothing is ever overwritten), adds the
sidecars to DVC in one run, writes one flag event per (rule, JSON path) a flagged record
breaks, stages all of it and, with ``commit``, commits it through the hooks (never
``--no-verify``). The manifest comes last, in its own commit. A batch the hooks refuse is
taken back whole (files, pointers, events) and the import stops; batches committed
before it stay, and importing again finds them already present.
"""

from __future__ import annotations

import datetime as dt
import secrets
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eee.imports import OUTCOMES, REFUSED, WRITTEN
from eee.imports.manifest import dumps as dump_manifest
from eee.imports.manifest import path_for as manifest_path
from eee.imports.plan import Batch, Entry, Planner
from eee.reporting.findings import Finding, Refused
from eee.store.paths import POINTER_SUFFIX, SIDECAR_SUFFIX, sidecar_path_for


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
            "files": [e.to_dict() for e in self.entries],
        }


def _stamp(now: dt.datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_import_id(now: dt.datetime) -> str:
    return f"{now.strftime('%Y%m%dT%H%M%S.%fZ')}-import-{secrets.token_hex(3)}"


def write_flag(
    root: Path, record: str, rule: str, path: str, reason: str, who: dict[str, str], record_path: str, sha256: str
) -> str:
    """Write one flag event (the one place an import writes the ledger); returns its id. The
    flag names the record's path and the sha256 of the bytes it accepts.

    The ledger's own event (:func:`eee.governance.events.make_event`, dumped only when it
    reads back), written like the import's records: exclusive and atomic, no fsync (the
    durable copy is the git object store it is staged into)."""
    from eee.governance.events import dumps, make_event, path_for
    from eee.store.fsutil import write_new

    event = make_event("flag", record, reason, who, rule=rule, path=path, record_path=record_path, sha256=sha256)
    target = path_for(root, event)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_new(target, dumps(event).encode("utf-8"), durable=False)
    return str(event["id"])


def _git(root: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, input=input)


class _Written:
    """What one batch put in the work tree, to take back if its commit is refused."""

    def __init__(self) -> None:
        self.files: list[Path] = []
        self.staged: list[str] = []
        self.ignores: dict[Path, bytes | None] = {}
        self.folders: list[Path] = []
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
    who = None if dry_run else _actor(root)
    has_sidecars = any(p.endswith(SIDECAR_SUFFIX) for p in source.files("data"))
    if has_sidecars and not dry_run:
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
        return _run(root, planner, report, who, dry_run, commit)
    finally:
        index.close()
        planner.planned_facts.close()


def _run(
    root: Path, planner: Planner, report: Report, who: dict[str, str] | None, dry_run: bool, commit: bool
) -> Report:
    pointers: list[str] = []
    done = _Written()  # what the current batch (one commit) has written so far
    pending = [done]  # what is written and not committed: taken back whole on a failure
    for planned in planner.batches():
        if dry_run:
            continue
        assert who is not None
        try:
            staged = _write_batch(root, planned, who, report, done)
            done.records += sum(1 for e in planned.written() if e.kind == "record")
            done.flagged += sum(1 for e in planned.written() if e.flags)
            if commit and planned.last and done.staged:
                subject = _subject(planned.label, done, report)
                report.commits.append(_commit(root, subject, _body(done, report), done.staged))
                pending.clear()
        except BaseException:
            for written in reversed(pending):
                _take_back(root, written)
            raise
        pointers += [p for p in staged if p.endswith(SIDECAR_SUFFIX + POINTER_SUFFIX)]
        if planned.last:
            done = _Written()
            pending.append(done)
    report.entries = planner.entries
    if dry_run or not any(e.outcome in WRITTEN for e in report.entries):
        return report  # importing what is already there adds nothing, not even a manifest
    assert who is not None
    rel = manifest_path(report.id)
    text = dump_manifest(_manifest(report, who))
    from eee.store.fsutil import make_folders, write_new

    make_folders(root, rel.rpartition("/")[0])
    write_new(root / rel, text.encode("utf-8"))
    report.manifest = rel
    staged = [rel]
    _stage(root, staged)
    if commit:
        try:
            report.commits.append(_commit(root, f"Import {report.id}: manifest", _counts_line(report), staged))
        except BaseException:
            _git(root, "reset", "-q", "--", rel)
            (root / rel).unlink(missing_ok=True)
            raise
    if pointers:
        from eee.write.samples import dvc

        proc = dvc("push", "--quiet", *pointers, cwd=root)
        if proc.returncode != 0:
            report.notes.append(
                f"dvc push failed (run `eee samples push` later): {(proc.stderr or proc.stdout).strip()}"
            )
    return report


def _actor(root: Path) -> dict[str, str]:
    from eee.git.cli import config

    name, email = config("user.name", root), config("user.email", root)
    if not name or not email:
        raise Refused(
            Finding(
                str(root),
                "$",
                "git config user.name and user.email must be set: the manifest and flag events record who imported",
                "git config user.name 'Your Name'; git config user.email you@example.org",
                check="import",
            )
        )
    return {"name": name, "email": email}


def _write_batch(root: Path, planned: Batch, who: dict[str, str], report: Report, done: _Written) -> list[str]:
    """Write one chunk: its files, its sidecars into DVC, its flag events; stage them.
    Returns the paths staged (also added to ``done``)."""
    from eee.write.placement import NewRecord, WriteFailed, write

    staged: list[str] = []
    written = {e.store: e for e in planned.written() if e.store is not None}
    records = []
    for entry in written.values():
        if entry.kind != "record":
            continue
        assert entry.store is not None and entry.uuid is not None
        side = sidecar_path_for(entry.store)
        has_side = side in written
        records.append(
            NewRecord(
                entry.uuid,
                entry.store,
                planned.data[entry.store],
                {},
                side if has_side else None,
                planned.data[side] if has_side else None,
            )
        )
        staged.append(entry.store)
    # the one placement: exclusive, atomic, undone on failure; the durable copy is the git
    # object store the files are staged into below, so no fsync per file
    try:
        files, folders = write(root, records, durable=False)
    except WriteFailed as exc:
        raise Refused(
            Finding(
                exc.path,
                "$",
                f"cannot write the file: {exc.error.strerror}",
                "nothing of this batch was kept",
                check="import",
            )
        ) from None
    done.files += files
    done.folders += folders
    sidecars = [r.sidecar_rel for r in records if r.sidecar_rel is not None]
    if sidecars:
        from eee.write.samples import dvc

        ignores = []
        for rel in sidecars:
            ignore = (root / rel).parent / ".gitignore"
            ignores.append(ignore)
            if ignore not in done.ignores:
                done.ignores[ignore] = ignore.read_bytes() if ignore.exists() else None
        proc = dvc("add", "--quiet", *sidecars, cwd=root)
        done.files += [root / (rel + POINTER_SUFFIX) for rel in sidecars]
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
        staged += [rel + POINTER_SUFFIX for rel in sidecars]
        staged += sorted({str(p.relative_to(root)) for p in ignores if p.exists()})
    for entry in planned.written():
        assert entry.uuid is not None or not entry.flags
        for flag in entry.flags:
            where = f"{report.source}:{entry.source}"
            if entry.source != entry.store:
                where += f" (relocated to {entry.store})"
            reason = f"Imported from {where} with a {flag.rule} finding at {flag.path}: {flag.message}"
            flag.event = write_flag(
                root, str(entry.uuid), flag.rule, flag.path, reason, who, str(entry.store), str(entry.sha256)
            )
            rel = f"governance/events/{flag.event}.yaml"
            done.files.append(root / rel)
            staged.append(rel)
    _stage(root, staged)
    done.staged += staged
    return staged


def _stage(root: Path, paths: list[str]) -> None:
    if not paths:
        return
    proc = _git(root, "add", "--pathspec-from-file=-", "--pathspec-file-nul", input="\0".join(paths).encode())
    if proc.returncode != 0:
        raise Refused(
            Finding(
                paths[0], "$", f"git add failed: {proc.stderr.decode(errors='replace').strip()}", None, check="import"
            )
        )


def _take_back(root: Path, done: _Written) -> None:
    from eee.write.placement import remove

    if done.staged:
        _git(
            root, "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul", input="\0".join(done.staged).encode()
        )
    for ignore, before in done.ignores.items():
        if before is None:
            ignore.unlink(missing_ok=True)
        else:
            ignore.write_bytes(before)
    remove(done.files, done.folders)


def _commit(root: Path, subject: str, body: str, paths: list[str]) -> str:
    """Commit exactly ``paths`` through the hooks; returns the new commit's id."""
    proc = subprocess.run(
        ["git", "commit", "-q", "-m", subject, "-m", body, "--pathspec-from-file=-", "--pathspec-file-nul"],
        cwd=root,
        capture_output=True,
        input="\0".join(paths).encode("utf-8", "surrogateescape"),
    )
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).decode(errors="replace").strip()
        raise Refused(
            Finding(
                paths[0] if paths else str(root),
                "$",
                "the commit was refused by the hooks:\n" + output,
                "nothing of this batch was kept; earlier batches stay committed (importing again finds them already present)",
                check="import",
            )
        )
    return _git(root, "rev-parse", "HEAD").stdout.decode().strip()


def _counts_line(report: Report) -> str:
    counts = report.counts()
    return ", ".join(f"{counts[o]} {o.replace('_', ' ')}" for o in OUTCOMES) + f" of {counts['total']} source files"


def _subject(label: str, done: _Written, report: Report) -> str:
    n = done.records
    return f"Import {label}: {n} record{'s' if n != 1 else ''} from {report.source}"[:100]


def _body(done: _Written, report: Report) -> str:
    return (
        f"Import {report.id} (its manifest {manifest_path(report.id)} follows).\n"
        f"{done.flagged} flagged record(s) in this batch, each with its flag events."
    )


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
