"""The governance tools' work: check, write the event (and a corrected record), commit.

Every action runs under one lock per work tree, so the check ("is it already retracted?")
and the write cannot interleave: twenty tools on twenty records leave twenty events, two
on the same record leave one event and one clear error. Writes are atomic; on any error
nothing is left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eee import placement
from eee.findings import Finding, Refused, refusal
from eee.gitutil import GitError, config, git, git_dir
from eee.governance.events import EventFileError, load_all, make_event, path_for, write
from eee.governance.index import RecordIndex
from eee.governance.status import IllegalEvent, Ledger, fold
from eee.paths import EVENTS_DIR, canonical_folders, uuid_problem
from eee.schemas import default_registry
from eee.strictjson import JSONProblem, loads


def actor(root: Path) -> dict[str, str]:
    name, email = config("user.name", root), config("user.email", root)
    if not name or not email:
        raise refusal(
            "git config user.name and user.email must be set: events record who acted",
            "git config user.name 'Your Name'; git config user.email you@example.org",
        )
    return {"name": name, "email": email}


@contextlib.contextmanager
def ledger_lock(root: Path) -> Iterator[None]:
    """An exclusive lock per work tree (in the git dir, never committed)."""
    try:
        folder = git_dir(root)
    except GitError:
        folder = root
    lock = folder / "eee-ledger.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def load_ledger(root: Path) -> Ledger:
    """The store's ledger; refused while any event file is unreadable."""
    events = []
    for path, loaded in load_all(root):
        if isinstance(loaded, EventFileError):
            raise refusal(
                str(loaded),
                "the ledger must be readable before it grows; run `eee validate governance`",
                file=path.relative_to(root).as_posix(),
            )
        events.append(loaded)
    return fold(events)


def check_event_schema(event: dict[str, Any]) -> None:
    reg = default_registry()
    validator = reg.other_validator("governance", "event.schema.json")
    errors = [f"{'/'.join(map(str, e.instance_path)) or '$'}: {e.message}" for e in validator.iter_errors(event)]
    if errors:
        raise refusal("the event would not be valid: " + "; ".join(errors))


def _check_uuid(value: str, what: str) -> None:
    problem = uuid_problem(value)
    if problem:
        raise refusal(f"{what}: {problem}")


def _place_record(root: Path, source: Path, old_rel: str, dry_run: bool) -> tuple[str, str, Path | None]:
    """Put a corrected record at its canonical path under a fresh uuid, validated.

    Returns (uuid, repository path, placed file or None on a dry run).
    """
    try:
        doc = loads(source.read_bytes())
    except OSError as exc:
        raise refusal(f"cannot read the corrected record: {exc.strerror}", file=str(source)) from None
    except JSONProblem as exc:
        raise refusal(exc.message, exc.hint, file=str(source), pointer=exc.pointer) from None
    if not isinstance(doc, dict):
        raise refusal("a record is a JSON object", file=str(source))
    info = doc.get("model_info")
    model_id = info.get("id") if isinstance(info, dict) else None
    if not isinstance(model_id, str) or canonical_folders(model_id) is None:
        raise refusal("missing or not of the form developer/model", file=str(source), pointer="$.model_info.id")
    new = placement.new_record(old_rel.split("/")[1], doc)
    # validated on the store as it would be (an overlay): nothing is placed unless it is valid
    errors, _ = placement.check(root, [new])
    if errors:
        head = Finding(str(source), "$", f"the corrected record does not validate ({len(errors)} errors)")
        raise Refused(
            [head, *(Finding(str(source), f.pointer, f.message, f.hint, f.line, check=f.check) for f in errors)]
        )
    if dry_run:
        return new.uuid, new.rel, None
    try:
        written, _ = placement.write(root, [new])
    except placement.WriteFailed as exc:
        raise refusal(f"cannot write the corrected record: {exc.error.strerror}", file=str(exc.path)) from None
    return new.uuid, new.rel, written[0]


COMMIT_VERB = {
    "retract": "Retract",
    "supersede": "Supersede",
    "dispute": "Dispute",
    "resolve": "Resolve dispute on",
    "reinstate": "Reinstate",
}


def perform(
    root: Path,
    action: str,
    record: str,
    reason: str | None,
    *,
    replacement: str | None = None,
    new_record: Path | None = None,
    reference: str | None = None,
    outcome: str | None = None,
    dry_run: bool = False,
    commit: bool = False,
) -> dict[str, Any]:
    """Record one governance action; returns what was (or would be) written."""
    reason = (reason or "").strip()
    if not reason:
        raise refusal("--reason is empty: every event says why", "--reason 'what was wrong, and how we know'")
    _check_uuid(record, "record")
    if replacement is not None:
        _check_uuid(replacement, "replacement")
    who = actor(root)
    written: list[Path] = []
    with ledger_lock(root):
        ledger = load_ledger(root)
        index = RecordIndex(root)
        old_rel = index.path(record)
        if old_rel is None:
            raise refusal(
                f"no record {record} in {root / 'data'}", "check the uuid; `tools/status <uuid>` finds a record"
            )
        new_rel = None
        try:
            if new_record is not None:
                replacement, new_rel, placed = _place_record(root, new_record, old_rel, dry_run)
                if placed is not None:
                    written.append(placed)
                index.add(replacement, new_rel)
            elif replacement is not None:
                new_rel = index.path(replacement)
            event = make_event(
                action, record, reason, who, replacement=replacement, reference=reference, outcome=outcome
            )
            try:
                ledger.check(event, exists=index.exists)
            except IllegalEvent as exc:
                raise refusal(exc.message, exc.hint) from None
            check_event_schema(event)
            event_path = path_for(root, event)
            result = {
                "action": action,
                "record": record,
                "record_path": old_rel,
                "replacement": replacement,
                "replacement_path": new_rel,
                "event": event,
                "event_path": event_path.relative_to(root).as_posix(),
                "dry_run": dry_run,
                "committed": False,
            }
            if dry_run:
                return result
            written.append(write(root, event))
            if commit:
                _commit(root, action, record, reason, event, written)
                result["committed"] = True
            return result
        except BaseException:
            for path in written:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            raise


def _commit(root: Path, action: str, record: str, reason: str, event: dict[str, Any], paths: list[Path]) -> None:
    rels = [p.relative_to(root).as_posix() for p in paths]
    git("add", "--", *rels, cwd=root)
    first = reason.splitlines()[0]
    subject = f"{COMMIT_VERB[action]} {record[:8]}: {first}"[:100]
    body = f"Governance event {event['id']} ({action} of record {record})."
    if event.get("replacement"):
        body += f"\nReplacement: {event['replacement']}"
    proc = subprocess.run(
        ["git", "commit", "-q", "-m", subject, "-m", body, "--", *rels], cwd=root, capture_output=True, text=True
    )
    if proc.returncode != 0:
        subprocess.run(["git", "reset", "-q", "--", *rels], cwd=root, capture_output=True)
        raise refusal(
            "the commit was refused:\n" + (proc.stdout + proc.stderr).strip(),
            "nothing was written; fix what the hooks report",
        )


def status(root: Path, record: str) -> dict[str, Any]:
    _check_uuid(record, "record")
    ledger = load_ledger(root)
    index = RecordIndex(root)
    rel = index.path(record)
    if rel is None:
        raise refusal(f"no record {record} in {root / 'data'}", "check the uuid")
    state = ledger.state(record).to_dict()
    chain = ledger.chain(record)
    return {
        "record": record,
        "path": rel,
        **{k: v for k, v in state.items() if k != "record"},
        "chain": chain,
        "events_dir": EVENTS_DIR,
    }
