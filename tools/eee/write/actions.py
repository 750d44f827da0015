"""The governance tools' work: check, write the events (and a corrected record), commit.

Every action runs in one transaction of :mod:`eee.write.commit` (one lock per store, a
journal, rollback), so the check ("is it already retracted?") and the write cannot
interleave: twenty tools on twenty records leave twenty events, two on the same record
leave one event and one clear error. Writes are atomic; on any error nothing is left
behind.

Records are found in the index as well as in HEAD (and, without ``--commit``, among the
untracked files). With ``commit=True`` the event exists exactly when its commit does: the
commit holds the event (and a corrected record) and the user's staged files the action
depends on (a staged record it names, with its sidecar or pointer), nothing else; a named
record that is neither committed nor staged is refused, naming it. Other staged files
stay staged and out of the commit.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eee.git.cli import batch_check, staged_changes
from eee.governance import ACTIONS_IN, BY_NAME, OUTCOMES
from eee.governance.events import (
    EVENT_SCHEMA_VERSION,
    BadText,
    EventFileError,
    clean_reason,
    dumps,
    load_all,
    make_event,
    path_for,
    schema_errors,
)
from eee.governance.history import entered
from eee.governance.index import PrefixProblem, RecordIndex, resolve_uuid
from eee.governance.relations import derived_from
from eee.governance.signatures import commit_signers
from eee.governance.status import Ledger
from eee.reporting.findings import Finding, Refused, refusal
from eee.reporting.shown import command
from eee.rules.ledger import IllegalEvent, check_event, fold
from eee.rules.settle import resolve_flag_command
from eee.store.jsonlite import load_object
from eee.store.limits import LOG_MAX_BYTES, RECORD_MAX_BYTES, Unreadable, read_regular
from eee.store.paths import (
    EVENTS_DIR,
    POINTER_SUFFIX,
    canonical_folders,
    component_problem,
    sidecar_path_for,
    uuid_problem,
)
from eee.store.strictjson import JSONProblem, loads
from eee.write import placement
from eee.write.commit import actor, locked, transaction


def load_ledger(root: Path) -> Ledger:
    """The store's ledger in history order; refused while any event file is unreadable."""
    events = []
    for path, loaded in load_all(root):
        if isinstance(loaded, EventFileError):
            raise refusal(
                str(loaded),
                f"the ledger must be readable before it grows; run `{command('validate', 'governance', cwd=root)}`",
                file=path.relative_to(root).as_posix(),
            )
        events.append(loaded)
    return fold(events, entered=entered(root) if events else {})


def check_event_schema(event: dict[str, Any]) -> None:
    errors = [f"{pointer}: {message}" for pointer, message in schema_errors(event)]
    if errors:
        raise refusal("the event would not be valid: " + "; ".join(errors))


def find_record(index: RecordIndex, text: str, what: str = "record") -> str:
    """The uuid ``text`` names (a uuid or a unique prefix of 8+ hex digits); Refused if none,
    or if the uuid names more than one record (the rule ``uuid``: an action on it would fall
    on an impostor too)."""
    try:
        uuid = resolve_uuid(index, text, what)
    except PrefixProblem as exc:
        raise refusal(exc.message, exc.hint) from None
    one_record(index, uuid, what)
    return uuid


def one_record(index: RecordIndex, uuid: str, what: str = "record") -> None:
    """Refused when ``uuid`` names more than one record of the store (:mod:`eee.rules.uuids`)."""
    from eee.rules.uuids import uuid_findings

    held = index.holders([uuid])[uuid]
    if len(held) < 2:
        return
    found = uuid_findings(
        held[1:],
        index.holders,
        hint="the audit reports the later record; no governance action is taken on a uuid two records share",
    )
    head = Finding(
        "",
        "$",
        f"{what} {uuid} names {len(held)} records ({', '.join(held)}): an action on it would fall on each; "
        "nothing was written",
        "a uuid names one record for ever: the record added later is an impostor (`eee audit` names it)",
        check="uuid",
    )
    raise Refused([head, *found])


@dataclass
class Corrected:
    """A corrected record that ``supersede`` (or ``resolve --outcome corrected``) places: its
    document (read from ``path`` when not given), its per-sample rows (a JSON Lines file
    ``sidecar``, or the ``rows`` themselves, ``count`` of them: a converted log's), the uuid
    it gets (default: a fresh one) and its benchmark folder (default: the one of the record
    it corrects). ``source`` names it in messages."""

    source: str
    path: Path | None = None
    doc: dict[str, Any] | None = None
    sidecar: Path | None = None
    rows: bytes | None = None
    count: int = 0
    uuid: str | None = None
    benchmark: str | None = None


def _read_doc(new: Corrected) -> dict[str, Any]:
    if new.doc is not None:
        return new.doc
    assert new.path is not None
    try:  # a regular file (a link to one is followed), at most a record's size
        doc = loads(read_regular(new.path, RECORD_MAX_BYTES, "record", follow=True))
    except Unreadable as exc:
        raise refusal(f"cannot read the corrected record: {exc.message}", exc.hint, file=new.source) from None
    except OSError as exc:
        raise refusal(f"cannot read the corrected record: {exc.strerror}", file=new.source) from None
    except JSONProblem as exc:
        raise refusal(exc.message, exc.hint, file=new.source, pointer=exc.pointer) from None
    if not isinstance(doc, dict):
        raise refusal("a record is a JSON object", file=new.source)
    return doc


def _read_rows(new: Corrected) -> tuple[bytes | None, int]:
    """The corrected record's per-sample rows and their count (None: it has none)."""
    if new.rows is not None:
        return new.rows, new.count
    if new.sidecar is None:
        return None, 0
    try:
        data = read_regular(new.sidecar, LOG_MAX_BYTES, "sidecar", follow=True)
    except Unreadable as exc:
        raise refusal(f"cannot read the sidecar: {exc.message}", exc.hint, file=str(new.sidecar)) from None
    except OSError as exc:
        raise refusal(f"cannot read the sidecar: {exc.strerror}", file=str(new.sidecar)) from None
    if not data.strip():
        raise refusal(
            "the sidecar is empty: a record without per-sample results has no sidecar",
            "leave out --sidecar",
            file=str(new.sidecar),
        )
    from eee.rules.sidecar import iter_lines  # the one line splitter of sidecars

    try:
        return data, sum(1 for _ in iter_lines([data]))
    except Unreadable as exc:  # a row over the cap
        raise refusal(f"cannot read the sidecar: {exc.message}", exc.hint, file=str(new.sidecar)) from None


def plan_corrected(root: Path, new: Corrected, old_rel: str, index: RecordIndex) -> placement.NewRecord:
    """The corrected record placed: its uuid (given, or fresh), its canonical path (the
    benchmark folder given, else the old record's; the developer/model folders from its
    ``model_info.id``), ``detailed_evaluation_results`` pointing at its own sidecar with the
    sidecar's sha256 and row count, validated with its sidecar on the store as it would be
    (an overlay). Refused, naming the file, when it would not be valid, its uuid is taken,
    or it declares per-sample data that is not given."""
    if new.uuid is not None:
        problem = uuid_problem(new.uuid)
        if problem:
            raise refusal(f"--uuid {problem}")
    benchmark = new.benchmark or old_rel.split("/")[1]
    problem = "it names more than one folder" if "/" in benchmark else component_problem(benchmark)
    if problem:
        raise refusal(f"--benchmark {benchmark!r}: {problem}", "name one benchmark folder, e.g. --benchmark mmlu")
    doc = _read_doc(new)
    info = doc.get("model_info")
    model_id = info.get("id") if isinstance(info, dict) else None
    if not isinstance(model_id, str) or canonical_folders(model_id) is None:
        raise refusal("missing or not of the form developer/model", file=new.source, pointer="$.model_info.id")
    rows, count = _read_rows(new)
    if rows is None and isinstance(doc.get("detailed_evaluation_results"), dict):
        old_sidecar = sidecar_path_for(old_rel)
        raise refusal(
            "the corrected record declares per-sample results (detailed_evaluation_results), but no sidecar is given",
            f"give its rows with --sidecar FILE (the corrected record's own, or the old record's {old_sidecar}); "
            "the tool writes file_path, checksum and total_rows for them",
            file=new.source,
            pointer="$.detailed_evaluation_results",
        )
    planned = placement.new_record(benchmark, doc, rows, count, new.uuid)
    if new.uuid is not None:  # a uuid given: no record of the store may hold it (eee.rules.uuids)
        from eee.rules.uuids import uuid_findings

        taken = uuid_findings(
            [planned.rel],
            index.holders,
            hint="leave out --uuid (a fresh one is drawn), or give one no record has",
            new=True,
        )
        if taken:
            raise Refused(taken)
    # validated on the store as it would be (an overlay): nothing is placed unless it is valid
    errors, _ = placement.check(root, [planned])
    if errors:
        head = Finding(
            new.source, "$", f"the corrected record does not validate ({len(errors)} errors)", check="refused"
        )
        raise Refused([head, *errors])
    return planned


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

    from eee.git.cli import blob

    data = blob(f"HEAD:{rel}", root)
    if data is None:
        data = blob(f":{rel}", root)
    if data is None:
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
        f"flag the finding as `{command('validate', rel, cwd=root)}` shows it: its [rule] and JSON path; "
        f"once this flag is committed, a maintainer resolves it: "
        f"`{resolve_flag_command(str(event['record']), str(event['id']), cwd=root)}`",
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
    new_record: Corrected | None = None,
    reference: str | None = None,
    outcome: str | None = None,
    rule: str | None = None,
    path: str | None = None,
    of: str | None = None,
    resolves: str | None = None,
    fields: dict[str, Any] | None = None,
    dry_run: bool = False,
    commit: bool = False,
) -> dict[str, Any]:
    """Record one governance action; returns what was (or would be) written.

    ``record``, ``replacement`` and ``of`` may be unique uuid prefixes (8+ hex digits).
    ``resolve`` with ``outcome`` retracted also writes the retraction, with corrected the
    supersession by ``replacement`` (or ``new_record``, placed first with its sidecar:
    :func:`plan_corrected`, :func:`eee.write.placement.write`): same commit. A dry run checks
    everything and returns what the real run writes (the corrected record's uuid and paths
    included), writing nothing.

    ``fields``: the values of options an action declared since (:func:`eee.governance.declare`)
    that no parameter here takes: an event of such an action is refused until an event schema
    version names the action (the event schemas are released, never edited)."""
    if action not in BY_NAME:
        raise refusal(f"unknown action {action!r}")
    if action not in ACTIONS_IN[EVENT_SCHEMA_VERSION] or fields:
        raise refusal(
            f"no event schema names the action {action} (event schema {EVENT_SCHEMA_VERSION} is the latest): "
            "an event of it cannot be written yet",
            "release an event schema version whose `action` enum names it (and its fields), then write the event",
        )
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
    with transaction(root, stage=commit and not dry_run) as tx:
        ledger = load_ledger(root)
        index = RecordIndex(root)
        record = find_record(index, record)
        old_rel = index.path(record)
        assert old_rel is not None
        if of is not None:
            of = find_record(index, of, "the record that stands (--of)")
        new_rel = planned = None
        if new_record is not None:
            planned = plan_corrected(root, new_record, old_rel, index)
            replacement, new_rel = planned.uuid, planned.rel
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
                events.append(make_event("supersede", record, reason, who, replacement=replacement, now=_later(now, 1)))
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
                check_event(ledger, event, exists=index.exists)
                ledger.apply(event)
            except IllegalEvent as exc:
                raise refusal(exc.message, exc.hint) from None
        event_paths = [path_for(root, e) for e in events]
        result = {
            "action": action,
            "record": record,
            "record_path": old_rel,
            "replacement": replacement,
            "replacement_path": new_rel,
            "replacement_sidecar": planned.sidecar_rel if planned is not None else None,
            "replacement_rows": new_record_rows(planned),
            "of": of,
            "event": events[0],
            "event_path": event_paths[0].relative_to(root).as_posix(),
            "events": events,
            "event_paths": [p.relative_to(root).as_posix() for p in event_paths],
            "dry_run": dry_run,
            "committed": False,
            "warnings": _unmatched(root, events[0]) if action == "flag" else [],
        }
        result["signing"] = _signing(root, events, result["event_paths"])
        if dry_run:
            return result
        named = [index.path(u) for u in (record, None if new_record is not None else replacement, of) if u]
        depends = _staged_dependencies(root, [rel for rel in named if rel]) if commit else []
        if planned is not None:
            try:
                placement.write(tx, [planned])
            except OSError as exc:
                where = str(exc.filename or planned.rel)
                raise refusal(f"cannot write the corrected record: {exc.strerror}", file=where) from None
        tx.write([(rel, dumps(e).encode("utf-8")) for rel, e in zip(result["event_paths"], events, strict=True)])
        if commit:
            result["commit"] = tx.commit(_message(action, record, reason, events), include=depends)
            result["committed"] = True
            result["included"] = depends
        return result


def _signing(root: Path, events: list[dict[str, Any]], paths: list[str]) -> dict[str, Any]:
    """What the commit of ``events`` needs (the principal and role, judged by HEAD's roles:
    :func:`eee.write.signing.requirement`); Refused before anything is written, committed
    or not (a dry run too: it says what the real run does), when git's committer is not the
    signing key's principal, or the act needs a role and signing is not configured or the
    committer's key does not hold it: an event its writer could never commit is no event."""
    from eee.rules.authority import Act
    from eee.write.signing import own_record, refusal_of, requirement

    acts = [Act(str(e["action"]), rel, e.get("record")) for e, rel in zip(events, paths, strict=True)]
    req = requirement(root, acts)
    problem = refusal_of(req, root, own_record(root) if any(a.act == "supersede" for a in acts) else None)
    if problem is not None:
        raise Refused(problem)
    return {**req.to_dict(), "said": req.said()}


def new_record_rows(planned: placement.NewRecord | None) -> int | None:
    """The row count a placed record declares for its sidecar (None without one)."""
    if planned is None or planned.sidecar_rel is None:
        return None
    der = planned.doc.get("detailed_evaluation_results")
    return der.get("total_rows") if isinstance(der, dict) else None


def _staged_dependencies(root: Path, records: list[str]) -> list[str]:
    """The user's staged files the commit of an action on ``records`` needs: each record
    that is staged (added) rather than committed, with its staged sidecar or pointer (and
    the ``.gitignore`` beside a pointer). Refused, naming it, when a record is neither."""
    staged = {c.path: c.status for c in staged_changes(root) if c.status != "D"}
    at_head = batch_check([f"HEAD:{rel}" for rel in records], root)
    out: list[str] = []
    for rel in dict.fromkeys(records):
        if staged.get(rel) == "A":
            out.append(rel)
            side = sidecar_path_for(rel)
            out += [p for p in (side, side + POINTER_SUFFIX) if p in staged]
            ignore = f"{rel.rpartition('/')[0]}/.gitignore"
            if side + POINTER_SUFFIX in staged and ignore in staged:
                out.append(ignore)
        elif f"HEAD:{rel}" not in at_head:
            raise refusal(
                f"{rel} is neither committed nor staged: the commit of the event would name a record it does not hold",
                f"stage it first (git add {rel}), or run without --commit",
                file=rel,
            )
    return out


def _message(action: str, record: str, reason: str, events: list[dict[str, Any]]) -> list[str]:
    """The commit message of an action: a subject and a body naming every event."""
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
    return [subject, body]


def status(root: Path, record: str) -> dict[str, Any]:
    with locked(root):
        ledger = load_ledger(root)
        index = RecordIndex(root)
        record = find_record(index, record)
    rel = index.path(record)
    state = ledger.state(record).to_dict()
    history = []
    events = state.pop("history")
    signers = commit_signers(root, [c for e in events if (c := ledger.entry(e).commit)])
    for event in events:
        entry = ledger.entry(event)
        signer = signers.get(entry.commit) if entry.commit else None
        history.append(
            {
                **event,
                "commit": entry.commit,
                "uncommitted": entry.commit is None,
                "signed_by": signer,
                "verified": bool(signer),
            }
        )
    problems = [{"event": e.get("id"), "message": p.message} for e, p in ledger.problems if record in _named(e)]
    return {
        "record": record,
        "path": rel,
        **{k: v for k, v in state.items() if k != "record"},
        "history": history,
        "uncommitted": sum(1 for h in history if h["uncommitted"]),
        "stands_on": ledger.stands_on(record),
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
