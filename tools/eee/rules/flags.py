"""Flags: a flag accepts a fact, not a file.

A ``flag`` event (an expression of concern) names a record (its uuid), a rule of the
registry that a flag may accept (:data:`eee.rules.registry.FLAGGABLE`), a JSON path, and
the exact content it accepts: the record's repository path (``record_path``) and the
sha256 of its bytes (``sha256``, event schema 1.2.0). A finding is *accepted* when it is
on that file, with that content, of that rule, at that JSON path; the hooks and the audit
then do not count it. Every other finding counts as before: on another file carrying the
same uuid, on the same path with other content, of a rule no flag may accept (JSON, schema,
version, identity, layout), or beyond a cap (a result's ``suppressed`` errors are never
accepted).

Flags written before 1.2.0 carry no path or sha256: each is bound to the record blob at
the commit that added it (the one path carrying its uuid in that commit, and that path's
blob; :func:`legacy_binding`). A flag not committed yet has no such commit: it binds
nothing.

:func:`accept_flagged` is pure: the findings, the flags and where each finding's file is
(its repository path and content) in; (kept, accepted) out. The hooks, ``eee validate``
and ``eee audit`` call it with the flags of the tree they check
(:mod:`eee.validation.flagged` reads them).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from eee.reporting.findings import FileResult, Finding
from eee.rules.registry import FLAGGABLE
from eee.store.paths import DATA_DIR, RECORD_SUFFIX, UUID4_RE, tree_path_problem

if TYPE_CHECKING:
    from eee.store.tree import Tree


class Flag(NamedTuple):
    """What one flag event accepts: ``rule`` at ``path`` of the record ``record`` (uuid) at
    ``record_path``, whose bytes have ``sha256`` (1.2.0) or git blob id ``blob`` (a flag
    bound at the commit that added it). Unbound (no record_path): it accepts nothing."""

    rule: str
    path: str
    record: str
    record_path: str | None
    sha256: str | None
    blob: str | None
    event: str


Located = tuple[str, tuple[str, str]]  # (repository path, (sha256, git blob id) of its content)


def flag_of(event: dict[str, Any]) -> Flag:
    """The flag a ``flag`` event declares, bound by its own fields (a flag of 1.1.0 or
    earlier: unbound until :func:`legacy_binding` binds it)."""
    record_path, sha256 = event.get("record_path"), event.get("sha256")
    bound = isinstance(record_path, str) and isinstance(sha256, str)
    return Flag(
        str(event.get("rule")),
        str(event.get("path")),
        str(event.get("record")),
        record_path if bound else None,
        sha256 if bound else None,
        None,
        str(event.get("id")),
    )


def flags_of(ledger: Any, uuid: str) -> list[Flag]:
    """The flags the ledger applied to record ``uuid`` (:func:`eee.rules.ledger.fold`).

    Every flag ever applied counts, open or resolved: a resolution settles the concern,
    but the record (which never changes) still breaks the rule, and the gate keeps
    accepting exactly the flagged findings."""
    return [
        flag_of(f)
        for f in ledger.state(uuid).flags
        if isinstance(f.get("rule"), str) and isinstance(f.get("path"), str)
    ]


def content_ids(data: bytes) -> tuple[str, str]:
    """(sha256, git blob id) of a file's bytes: what a flag of 1.2.0, and one bound at its
    commit, compare."""
    blob = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    blob.update(data)
    return hashlib.sha256(data).hexdigest(), blob.hexdigest()


def record_of(file: str) -> str | None:
    """The uuid of the record a finding's file names (``.../<uuid>.json``, any prefix)."""
    name = file.rsplit("/", 1)[-1]
    if not name.endswith(RECORD_SUFFIX):
        return None
    stem = name[: -len(RECORD_SUFFIX)]
    return stem if UUID4_RE.match(stem) else None


def records_of(findings: Iterable[Finding]) -> set[str]:
    """The uuids of the records the findings are about (whose flags are worth reading)."""
    return {u for u in (record_of(f.file) for f in findings) if u is not None}


def covers(flag: Flag, finding: Finding, where: Located | None) -> bool:
    """Whether ``flag`` accepts ``finding``, on the file ``where`` says (its repository
    path and content): the same flaggable rule and JSON path, the same file, the same bytes."""
    if where is None or flag.record_path is None:
        return False
    if flag.rule != finding.check or flag.path != finding.pointer or flag.rule not in FLAGGABLE:
        return False
    rel, (sha256, blob) = where
    if rel != flag.record_path:
        return False
    return sha256 == flag.sha256 if flag.sha256 is not None else blob == flag.blob


def accept_flagged(
    findings: Iterable[Finding],
    flags: Callable[[str], Collection[Flag]],
    locate: Callable[[str], Located | None],
) -> tuple[list[Finding], list[Finding]]:
    """(kept, accepted): a finding is accepted when a flag of its record covers it
    (:func:`covers`). ``flags``: a record uuid's flags; ``locate``: a finding's file as
    (repository path, content ids) in the tree checked, None when it is no record there."""
    kept: list[Finding] = []
    accepted: list[Finding] = []
    located: dict[str, Located | None] = {}
    for f in findings:
        uuid = record_of(f.file)
        mine = flags(uuid) if uuid is not None else ()
        if mine and f.file not in located:
            located[f.file] = locate(f.file)
        if mine and any(covers(flag, f, located[f.file]) for flag in mine):
            accepted.append(f)
        else:
            kept.append(f)
    return kept, accepted


def record_findings(tree: Tree, rel: str, rule: str) -> set[tuple[str, str]] | None:
    """(rule, JSON path) of the findings of the record ``rel`` of ``tree``: its own rules
    (:func:`eee.rules.record.check_record`), or for ``duplicates`` the duplicate rule against
    the store (None when no duplicates index can answer here); ``pointer-unverified`` is
    judged where the objects are, so a tree can only say that the record has no DVC pointer
    (a flag of it then accepts nothing), else None."""
    if rule == "pointer-unverified":  # judged where the objects are (gate, pre-push, server), not from a tree
        from eee.store.paths import POINTER_SUFFIX, sidecar_path_for

        return None if tree.exists(sidecar_path_for(rel) + POINTER_SUFFIX) else set()
    if rule == "items-agree":  # judged against the record's sidecar, where the tree holds it
        from eee.rules.agreement import record_agreement

        return record_agreement(tree, rel)
    if rule == "duplicates":
        from eee.rules.duplicates import duplicate_warnings

        warnings = duplicate_warnings(tree, rel)
        return None if warnings is None else {(f.check, f.pointer) for f in warnings}
    from eee.rules.layout import layout_findings
    from eee.rules.record import check_record
    from eee.store.schemas import default_registry

    file = tree.display(rel)
    where, found = layout_findings(tree, rel, file, clash=False)
    result = FileResult(file, "record", findings=found)
    check_record(tree, rel, file, default_registry(), result, where, True, cap=1_000_000)
    return {(f.check, f.pointer) for f in result.findings}


# --- flags written before 1.2.0: bound at the commit that added them ----------------------------


@functools.lru_cache(maxsize=32)
def _records_at(cwd: str, commit: str) -> dict[str, list[tuple[str, str]]]:
    """uuid -> [(path, blob id)] of every record of ``commit`` (``git ls-tree``, once per commit)."""
    from eee.git.cli import ls_tree_raw  # lazy: only a flag of 1.1.0 or earlier needs it

    out: dict[str, list[tuple[str, str]]] = {}
    listing = ls_tree_raw(commit, cwd, under=DATA_DIR + "/")
    for entry in listing.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        parts = meta.split()
        path = name.decode("utf-8", "surrogateescape")
        if (
            len(parts) == 3
            and parts[1] == b"blob"
            and path.count("/") == 4
            and path.endswith(RECORD_SUFFIX)
            and tree_path_problem(path) is None
        ):
            uuid = record_of(path)
            if uuid is not None:
                out.setdefault(uuid, []).append((path, parts[2].decode()))
    return out


def legacy_binding(flag: Flag, cwd: str | Path, commit: str | None) -> Flag:
    """A flag of 1.1.0 or earlier bound to the record blob at ``commit``, the commit that
    added it: the one path carrying its uuid there, and that path's blob. Unbound when the
    flag is not committed, or when no path, or two, carry the uuid at that commit."""
    if flag.record_path is not None or commit is None:
        return flag
    found = _records_at(str(cwd), commit).get(flag.record, [])
    if len(found) != 1:
        return flag
    path, blob = found[0]
    return flag._replace(record_path=path, blob=blob)
