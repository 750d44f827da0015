"""The governance tools' work: check, write the events (and a corrected record), commit.

Every action runs under one lock per work tree, so the check ("is it already retracted?")
and the write cannot interleave: twenty tools on twenty records leave twenty events, two
on the same record leave one event and one clear error. Writes are atomic; on any error
nothing is left behind.

With ``commit=True`` the event exists exactly when its commit does: the files are
written with a journal in the git directory, the commit is built from a temporary index
(``GIT_INDEX_FILE``: HEAD plus exactly the new files, whatever else is staged) through
the hooks, and ``git commit`` moves the branch only if it still points where it did.
A run killed on the way leaves the journal; the next governance tool (any of them, even
``status``) finishes what was committed and removes what was not (:func:`recover`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eee.git.cli import GitError, config, git, git_dir, has_commit
from eee.governance import BY_NAME, OUTCOMES
from eee.governance.events import (
    BadText,
    EventFileError,
    clean_reason,
    dumps,
    load_all,
    make_event,
    path_for,
    schema_errors,
    write,
)
from eee.governance.history import entered
from eee.governance.index import PrefixProblem, RecordIndex, resolve_uuid
from eee.governance.relations import derived_from
from eee.governance.status import Ledger, fold
from eee.reporting.findings import Finding, Refused, refusal
from eee.rules.ledger import IllegalEvent
from eee.store.jsonlite import load_object
from eee.store.limits import RECORD_MAX_BYTES, Unreadable, read_regular
from eee.store.paths import EVENTS_DIR, canonical_folders
from eee.store.strictjson import JSONProblem, loads
from eee.write import placement


def actor(root: Path) -> dict[str, str]:
    name, email = config("user.name", root), config("user.email", root)
    if not name or not email:
        raise refusal(
            "git config user.name and user.email must be set: events record who acted",
            "git config user.name 'Your Name'; git config user.email you@example.org",
        )
    return {"name": name, "email": email}


def _git_folder(root: Path) -> Path:
    try:
        return git_dir(root)
    except GitError:
        return root


@contextlib.contextmanager
def ledger_lock(root: Path) -> Iterator[None]:
    """An exclusive lock per work tree (in the git dir, never committed); a dead run's
    leftovers are finished or undone first (:func:`recover`)."""
    lock = _git_folder(root) / "eee-ledger.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        recover(root)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


# --- the journal of a commit in progress ------------------------------------------------------

JOURNAL = "eee-pending.json"


def _journal(root: Path) -> Path:
    return _git_folder(root) / JOURNAL


def _blob_id(path: Path) -> str:
    return git("hash-object", "--", str(path), cwd=path.parent).decode().strip()


def _bytes_id(root: Path, data: bytes) -> str:
    return git("hash-object", "--stdin", cwd=root, input=data).decode().strip()


def _write_journal(root: Path, files: dict[str, str]) -> None:
    journal = _journal(root)
    tmp = journal.with_suffix(".tmp")
    tmp.write_text(json.dumps({"files": files}), encoding="utf-8")
    os.replace(tmp, journal)


def _committed_blob(root: Path, rel: str) -> str | None:
    proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"HEAD:{rel}"], cwd=root, capture_output=True)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def recover(root: Path) -> list[str]:
    """Finish or undo what a governance tool killed during ``--commit`` left.

    Files its commit contains are staged in the real index (the commit happened); files it
    does not contain are removed (the commit never happened), so the event exists exactly
    when its commit does. Returns one line per file saying what was done."""
    journal = _journal(root)
    try:
        pending = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        pending = {"files": {}}
    done: list[str] = []
    finished = []
    for rel, blob in dict(pending.get("files") or {}).items():
        target = root / rel
        if _committed_blob(root, rel) == blob:
            finished.append(rel)
            done.append(f"finished: {rel} is committed")
        elif target.is_file() and not target.is_symlink() and _blob_id(target) == blob:
            target.unlink()
            done.append(f"undone: {rel} was never committed, removed")
    if finished:
        git("update-index", "--add", "--", *finished, cwd=root, check=False)
    journal.unlink(missing_ok=True)
    return done


def load_ledger(root: Path) -> Ledger:
    """The store's ledger in history order; refused while any event file is unreadable."""
    events = []
    for path, loaded in load_all(root):
        if isinstance(loaded, EventFileError):
            raise refusal(
                str(loaded),
                "the ledger must be readable before it grows; run `eee validate governance`",
                file=path.relative_to(root).as_posix(),
            )
        events.append(loaded)
    return fold(events, entered=entered(root) if events else {})


def check_event_schema(event: dict[str, Any]) -> None:
    errors = [f"{pointer}: {message}" for pointer, message in schema_errors(event)]
    if errors:
        raise refusal("the event would not be valid: " + "; ".join(errors))


def find_record(index: RecordIndex, text: str, what: str = "record") -> str:
    """The uuid ``text`` names (a uuid or a unique prefix of 8+ hex digits); Refused if none."""
    try:
        return resolve_uuid(index, text, what)
    except PrefixProblem as exc:
        raise refusal(exc.message, exc.hint) from None


def _place_record(root: Path, source: Path, old_rel: str, dry_run: bool) -> tuple[str, str, Path | None]:
    """Put a corrected record at its canonical path under a fresh uuid, validated.

    Returns (uuid, repository path, placed file or None on a dry run).
    """
    try:  # a regular file (a link to one is followed), at most a record's size
        doc = loads(read_regular(source, RECORD_MAX_BYTES, "record", follow=True))
    except Unreadable as exc:
        raise refusal(f"cannot read the corrected record: {exc.message}", exc.hint, file=str(source)) from None
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
        head = Finding(
            str(source), "$", f"the corrected record does not validate ({len(errors)} errors)", check="refused"
        )
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


def _check_flag(rule: str | None, path: str | None) -> None:
    """A flag names a registered rule and a JSON path as findings write it; else Refused."""
    from eee.rules.registry import IDS, unknown_text
    from eee.store.jsonpath import well_formed

    if not rule or not path:
        raise refusal("flag needs --rule ID and --json-path '$.json.path'")
    if rule not in IDS:
        raise refusal(unknown_text(rule))
    if not well_formed(path):
        raise refusal(f"{path!r} is not a JSON path as findings write it", "copy the JSON path from the finding")


def _flagged_bytes(root: Path, rel: str) -> dict[str, str]:
    """What a flag of the record at ``rel`` accepts: its path and the sha256 of its bytes as
    committed (HEAD's blob; a record not committed yet: the index's, else the work tree's)."""
    import hashlib

    for spec in (f"HEAD:{rel}", f":{rel}"):
        try:
            data = git("cat-file", "blob", spec, cwd=root)
            break
        except GitError:
            continue
    else:
        try:
            data = read_regular(root / rel, RECORD_MAX_BYTES, "record")
        except (Unreadable, OSError) as exc:
            raise refusal(f"cannot read the record to flag: {exc}", file=rel) from None
    return {"record_path": rel, "sha256": hashlib.sha256(data).hexdigest()}


def _unmatched(root: Path, event: dict[str, Any]) -> list[dict[str, Any]]:
    """A warning when the flag accepts no finding of the record it names (its rule is not
    broken at its JSON path): the flag is written, and the gate says the same."""
    from eee.rules.flags import record_findings
    from eee.store.tree import WorkTree

    rel = str(event["record_path"])
    found = record_findings(WorkTree(root), rel, str(event["rule"]))
    if found is None or (event["rule"], event["path"]) in found:
        return []
    warning = Finding(
        rel,
        str(event["path"]),
        f"the flag accepts nothing: the record has no [{event['rule']}] finding at {event['path']}",
        "flag the finding as `eee validate` shows it: its [rule] and JSON path",
        severity="warning",
        check="flag-unmatched",
    )
    return [warning.to_dict()]


def _later(now: dt.datetime, step: int) -> dt.datetime:
    return now + dt.timedelta(microseconds=step)


def perform(
    root: Path,
    action: str,
    record: str,
    reason: str | bytes | None,
    *,
    replacement: str | None = None,
    new_record: Path | None = None,
    reference: str | None = None,
    outcome: str | None = None,
    rule: str | None = None,
    path: str | None = None,
    of: str | None = None,
    resolves: str | None = None,
    dry_run: bool = False,
    commit: bool = False,
) -> dict[str, Any]:
    """Record one governance action; returns what was (or would be) written.

    ``record``, ``replacement`` and ``of`` may be unique uuid prefixes (8+ hex digits).
    ``resolve`` with ``outcome`` retracted also writes the retraction, with corrected the
    supersession by ``replacement`` (or ``new_record``, placed first): same commit."""
    if action not in BY_NAME:
        raise refusal(f"unknown action {action!r}")
    try:
        reason = clean_reason(reason)
    except BadText as exc:
        raise refusal(f"--reason: {exc}", "write the reason as plain text (line breaks are fine)") from None
    if not reason:
        raise refusal("--reason is empty: every event says why", "--reason 'what was wrong, and how we know'")
    if action == "resolve":
        if outcome not in OUTCOMES:
            raise refusal(
                f"resolve needs --outcome, one of {', '.join(OUTCOMES)}",
                "upheld: the record stays; retracted: it is retracted; corrected: a replacement supersedes it",
            )
        if outcome == "corrected" and replacement is None and new_record is None:
            raise refusal(
                "the outcome corrected needs the replacement: --replacement UUID, or a corrected record file",
                "tools/resolve <uuid> --outcome corrected --replacement <new-uuid> --reason ...",
            )
        if outcome != "corrected" and (replacement is not None or new_record is not None):
            raise refusal(f"a replacement goes with the outcome corrected, not {outcome}")
    if action == "flag":
        _check_flag(rule, path)
    who = actor(root)
    written: list[Path] = []
    with ledger_lock(root):
        ledger = load_ledger(root)
        index = RecordIndex(root)
        record = find_record(index, record)
        old_rel = index.path(record)
        assert old_rel is not None
        if of is not None:
            of = find_record(index, of, "the record that stands (--of)")
        new_rel = None
        try:
            if new_record is not None:
                replacement, new_rel, placed = _place_record(root, new_record, old_rel, dry_run)
                if placed is not None:
                    written.append(placed)
                index.add(replacement, new_rel)
            elif replacement is not None:
                replacement = find_record(index, replacement, "replacement")
                new_rel = index.path(replacement)
            now = dt.datetime.now(dt.UTC)
            common = {"reference": reference}
            if action == "resolve":
                events = [
                    make_event(
                        "resolve",
                        record,
                        reason,
                        who,
                        outcome=outcome,
                        replacement=replacement,
                        resolves=resolves,
                        now=now,
                        **common,
                    )
                ]
                if outcome == "retracted":
                    events.append(make_event("retract", record, reason, who, now=_later(now, 1), **common))
                elif outcome == "corrected":
                    events.append(
                        make_event("supersede", record, reason, who, replacement=replacement, now=_later(now, 1))
                    )
            else:
                events = [
                    make_event(
                        action,
                        record,
                        reason,
                        who,
                        replacement=replacement,
                        of=of,
                        rule=rule,
                        path=path,
                        now=now,
                        reference=None if BY_NAME[action].reference == "no" else reference,
                        **(_flagged_bytes(root, old_rel) if action == "flag" else {}),
                    )
                ]
            for event in events:
                check_event_schema(event)
                try:
                    ledger.apply(event, exists=index.exists)
                except IllegalEvent as exc:
                    raise refusal(exc.message, exc.hint) from None
            event_paths = [path_for(root, e) for e in events]
            result = {
                "action": action,
                "record": record,
                "record_path": old_rel,
                "replacement": replacement,
                "replacement_path": new_rel,
                "of": of,
                "event": events[0],
                "event_path": event_paths[0].relative_to(root).as_posix(),
                "events": events,
                "event_paths": [p.relative_to(root).as_posix() for p in event_paths],
                "dry_run": dry_run,
                "committed": False,
                "warnings": _unmatched(root, events[0]) if action == "flag" else [],
            }
            if dry_run:
                return result
            if commit:
                # the journal names every file (and its blob) before the file is written, so a
                # run killed at any point is finished or undone by the next tool
                planned = {
                    p.relative_to(root).as_posix(): _bytes_id(root, dumps(e).encode())
                    for p, e in zip(event_paths, events, strict=True)
                }
                planned.update({p.relative_to(root).as_posix(): _blob_id(p) for p in written})
                _write_journal(root, planned)
            for event in events:
                written.append(write(root, event))
            if commit:
                result["commit"] = _commit(root, action, record, reason, events, written)
                result["committed"] = True
                recover(root)  # stages the committed files in the real index, drops the journal
                written = []
            return result
        except BaseException:
            for written_path in written:
                with contextlib.suppress(FileNotFoundError):
                    written_path.unlink()
            if commit:
                _journal(root).unlink(missing_ok=True)
            raise


def _commit(root: Path, action: str, record: str, reason: str, events: list[dict[str, Any]], paths: list[Path]) -> str:
    """Commit exactly ``paths`` on top of HEAD through the hooks, from a temporary index."""
    rels = [p.relative_to(root).as_posix() for p in paths]
    first = reason.splitlines()[0]
    verb = BY_NAME[action].verb
    if action == "resolve":
        verb = f"Resolve ({events[0].get('outcome')})"
    subject = f"{verb} {record[:8]}: {first}"[:100]
    body = "\n".join(f"Governance event {e['id']} ({e['action']} of record {record})." for e in events)
    if events[-1].get("replacement"):
        body += f"\nReplacement: {events[-1]['replacement']}"
    if events[0].get("of"):
        body += f"\nDuplicate of: {events[0]['of']}"
    folder = _git_folder(root)
    index_file = str(folder / f"eee-index-{os.getpid()}")  # under the ledger lock: one per run
    with contextlib.suppress(FileNotFoundError):
        os.unlink(index_file)  # a dead run's; git creates it afresh
    env = {**os.environ, "GIT_INDEX_FILE": index_file}
    try:
        if has_commit("HEAD", root):
            subprocess.run(["git", "read-tree", "HEAD"], cwd=root, env=env, check=True, capture_output=True)
        subprocess.run(
            ["git", "update-index", "--add", "--", *rels], cwd=root, env=env, check=True, capture_output=True
        )
        proc = subprocess.run(
            ["git", "commit", "-q", "--no-edit", "-m", subject, "-m", body],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise refusal(
                "the commit was refused:\n" + (proc.stdout + proc.stderr).strip(),
                "nothing was written; fix what the hooks report",
            )
        head = git("rev-parse", "HEAD", cwd=root).decode().strip()
    except subprocess.CalledProcessError as exc:
        raise refusal(f"git could not stage the event: {exc.stderr.decode(errors='replace').strip()}") from None
    finally:
        for leftover in (index_file, index_file + ".lock"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
    return head


def status(root: Path, record: str) -> dict[str, Any]:
    with ledger_lock(root):
        ledger = load_ledger(root)
        index = RecordIndex(root)
        record = find_record(index, record)
    rel = index.path(record)
    state = ledger.state(record).to_dict()
    history = []
    for event in state.pop("history"):
        entry = ledger.entry(event)
        history.append({**event, "commit": entry.commit, "uncommitted": entry.commit is None})
    problems = [{"event": e.get("id"), "message": p.message} for e, p in ledger.problems if record in _named(e)]
    return {
        "record": record,
        "path": rel,
        **{k: v for k, v in state.items() if k != "record"},
        "history": history,
        "uncommitted": sum(1 for h in history if h["uncommitted"]),
        "chain": ledger.chain(record),
        "relations": ledger.relations(record) + _derived(root, rel),
        "ignored_events": problems,
        "events_dir": EVENTS_DIR,
    }


def _derived(root: Path, rel: str | None) -> list[dict[str, Any]]:
    """The IsDerivedFrom relations the record states itself."""
    doc = load_object(str(root / rel)) if rel else None
    return derived_from(doc) if doc is not None else []


def _named(event: dict[str, Any]) -> set[str]:
    return {v for k in ("record", "replacement", "of") if isinstance(v := event.get(k), str)}
