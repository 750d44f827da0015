"""The duplicate rule (``duplicates``, a warning): a record that repeats another one.

What makes two records duplicates (the same evaluation, or identical content) and the index
that finds a record's candidates among the whole store are :mod:`eee.governance.duplicates`;
this module warns about each pair found, unless the ledger links them (one version chain, or
a ``duplicate`` event), for the hook (:func:`staged_findings`), the audit
(:func:`audit_duplicates`), the import's planning and documents in hand (:func:`duplicate_findings`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from eee.git.cli import ls_tree_raw, read_blobs, resolve
from eee.governance.duplicates import (
    AUDIT_INDEX_FILE,
    HOOK_LIMIT,
    DuplicateIndex,
    Facts,
    Match,
    Stale,
    build_command,
    compare,
    evidence,
    facts,
    is_record,
    uuid_of,
)
from eee.reporting.findings import WARNING, Finding
from eee.store.limits import EVENT_MAX_BYTES
from eee.store.paths import EVENT_SUFFIX, EVENTS_DIR


def finding(
    path: str, mine: Facts, match: Match, where: Callable[[str], str] = lambda p: p, committed: bool = False
) -> Finding:
    """The warning for ``path`` repeating ``match``: before the commit, the hint says how to
    leave the copy out; once both are committed (``committed``: the audit), it gives the
    maintainer's commands that settle it (:mod:`eee.rules.settle`), full uuids filled in."""
    if committed:
        return _committed(path, mine, match, where)
    import shlex

    from eee.rules.settle import mark_duplicate_command, supersede_command

    new, old = mine.uuid, match.other.uuid
    if match.identical:
        message = f"duplicates {match.path}: {evidence(mine, match)}"
        hint = (
            "the same result submitted twice, not a re-run: leave this copy out "
            f"(`git rm --cached {shlex.quote(path)}`); once both are committed, a maintainer marks it: "
            f"`{mark_duplicate_command(new, old, f'the same result as {old}')}`"
        )
    else:
        message = f"repeats the evaluation of {match.path}: {evidence(mine, match)}"
        hint = (
            "if it corrects the other, commit it with the supersession (a maintainer's act, or yours where you "
            f"added the other record signed): `{supersede_command(old, new, f'corrected by {new}')}`; if it is the "
            "same run again, leave "
            "it out, or once both are committed a maintainer marks it: "
            f"`{mark_duplicate_command(new, old, f'the same result as {old}')}`; a different run has its own "
            "evaluation_id (see governance/README.md, Duplicates)"
        )
    return Finding(where(path), "$", message, hint, severity=WARNING, check="duplicates")


def _committed(path: str, mine: Facts, match: Match, where: Callable[[str], str]) -> Finding:
    from eee.rules.settle import mark_duplicate_command, supersede_command

    new, old = mine.uuid, match.other.uuid
    mark = mark_duplicate_command(new, old, f"the same result as {old}")
    if match.identical:
        message = f"duplicates {match.path}: {evidence(mine, match)}"
        hint = (
            f"both are committed (records never change): a maintainer marks this copy a duplicate of the one that "
            f"stands: `{mark}`"
        )
    else:
        message = f"repeats the evaluation of {match.path}: {evidence(mine, match)}"
        hint = (
            f"both are committed (records never change): if this record corrects the other, a maintainer supersedes "
            f"it: `{supersede_command(old, new, f'corrected by {new}')}`; if it is the same run again, a maintainer "
            f"marks it: `{mark}`"
        )
    return Finding(where(path), "$", message, hint, severity=WARNING, check="duplicates")


def settled_pair(ledger: Any, a: str, b: str) -> bool:
    """Whether the ledger settles a pair of duplicates: linked (one version chain, a duplicate
    mark), or one side no longer counts (retracted, superseded, a duplicate: :mod:`eee.rules.settle`)."""
    from eee.rules.settle import counts

    return ledger.linked(a, b) or not counts(ledger.state(a)) or not counts(ledger.state(b))


# --- the rule -------------------------------------------------------------------------------


def staged_findings(
    root: Path,
    paths: Iterable[str],
    load: Callable[[str], dict[str, Any] | None],
    where: Callable[[str], str] = lambda p: p,
    index: DuplicateIndex | None = None,
    ledger: Any = None,
    limit: int | None = None,
    notice: Callable[[str], None] | None = None,
) -> list[Finding]:
    """Warnings for the records ``paths`` (repository paths) about to be committed: each
    against every record of HEAD (through the index) and the others staged with it.
    ``ledger`` (read only when a match is found): pairs it links are not warned about.
    ``limit``: read at most that many records to bring the index to HEAD (what the hook
    allows); when it would need more, the staged records are checked only against each
    other and ``notice`` is told why, in one line that names the command that builds it."""
    docs: dict[str, dict[str, Any]] = {}
    for path in paths:
        if is_record(path):
            doc = load(path)
            if doc is not None:
                docs[path] = doc
    if not docs:
        return []
    own = index is None
    found: list[tuple[str, Facts, Match]] = []
    names: Any = None
    try:
        index = index or DuplicateIndex(root, timeout=2 if limit is not None else 30)
        index.sync(limit=limit)
        names = index.names
    except Stale as exc:
        names = index.names if index is not None else None
        if own and index is not None:
            index.close()
        own, index = False, None
        if notice:
            notice(
                f"not checked against the committed records: {exc}; build it with `{build_command()}` "
                "(the staged records were checked against each other)"
            )
    mine = {path: facts(uuid_of(path), doc, names) for path, doc in docs.items()}  # the index's canonical ids
    try:
        for path, f in mine.items():
            if index is not None:
                found += [(path, f, m) for m in index.matches(path, f) if m.path not in mine]
            for other, theirs in mine.items():
                if other != path and other < path:  # staged together: warn on the later path
                    m = compare(f, theirs, other)
                    if m:
                        found.append((path, f, m))
    finally:
        if own and index is not None:
            index.close()
    if not found:
        return []
    if ledger is None:
        from eee.rules.fold import read_ledger  # lazy: the ledger (YAML) is read only when a match needs it

        ledger = read_ledger(root)
    return [finding(path, f, m, where) for path, f, m in found if not settled_pair(ledger, f.uuid, m.other.uuid)]


def duplicate_findings(
    path: str,
    doc: dict[str, Any],
    others: dict[str, dict[str, Any]],
    where: Callable[[str], str] = lambda p: p,
    linked: Callable[[str, str], bool] | None = None,
) -> list[Finding]:
    """The rule on documents in hand: ``doc`` (at ``path``) against ``others`` (path -> doc)."""
    mine = facts(uuid_of(path), doc)
    out = []
    for other_path, other in sorted(others.items()):
        if other_path == path:
            continue
        theirs = facts(uuid_of(other_path), other)
        m = compare(mine, theirs, other_path)
        if m and not (linked and linked(mine.uuid, theirs.uuid)):
            out.append(finding(path, mine, m, where))
    return out


def audit_duplicates(
    commit: str,
    paths: list[str],
    cwd: Path,
    where: Callable[[str], str],
    ledger: Any = None,
    head: str = "HEAD",
    docs: dict[str, dict[str, Any]] | None = None,
) -> list[Finding]:
    """The rule for the records ``paths`` a commit added, against the whole store at that
    commit (its own index file, so the hook's index keeps following HEAD). A pair is
    settled when the ledger at that commit or at ``head`` (the audited end) settles it
    (:func:`settled_pair`); the hints are those for committed records. ``docs``: the
    records already parsed, by path (else each is read again from its blob)."""
    paths = [p for p in paths if is_record(p)]
    if not paths:
        return []
    index = DuplicateIndex(cwd, name=AUDIT_INDEX_FILE)
    try:
        index.sync(commit)
        found: list[tuple[str, Facts, Match]] = []
        for path in paths:
            doc = docs.get(path) if docs is not None else None
            f = facts(uuid_of(path), doc) if doc is not None else index.facts_of(path)
            if f is None:
                continue
            found += [(path, f, m) for m in index.matches(path, f) if not (m.path in paths and m.path > path)]
    finally:
        index.close()
    if not found:
        return []
    ledgers = [ledger] if ledger is not None else [ledger_at(cwd, commit), ledger_at(cwd, head)]
    # settled at that commit, or later (a pair settled since is never warned about again)
    return [
        finding(path, f, m, where, committed=True)
        for path, f, m in found
        if not any(settled_pair(led, f.uuid, m.other.uuid) for led in ledgers)
    ]


def ledger_at(cwd: Path, rev: str) -> Any:
    """The ledger as it stood at ``rev`` (its events, in history order)."""
    return _ledger_at(str(cwd), resolve(f"{rev}^{{commit}}", cwd) or rev)


@functools.lru_cache(maxsize=16)
def _ledger_at(cwd_text: str, commit: str) -> Any:
    cwd = Path(cwd_text)
    from eee.governance.events import EventFileError, load_text  # lazy: only when a match needs the ledger
    from eee.governance.history import entered  # lazy: with the above
    from eee.rules.fold import fold  # lazy: with the above

    listing = ls_tree_raw(f"{commit}:{EVENTS_DIR}", cwd, recursive=False)
    blobs = []
    for entry in listing.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob" and name.decode(errors="replace").endswith(EVENT_SUFFIX):
            blobs.append(parts[2].decode())
    events = []
    for _, data in read_blobs(blobs, cwd, EVENT_MAX_BYTES):  # a larger one is no event (the ledger rule says so)
        try:
            events.append(load_text((data or b"").decode("utf-8")))
        except (EventFileError, UnicodeDecodeError):
            continue
    return fold(events, entered=entered(cwd, commit))


def duplicate_warnings(tree: Any, rel: str) -> list[Finding] | None:
    """The duplicate rule's warnings for the record ``rel`` of ``tree`` as the gate or the
    audit would give them: a commit's tree (:class:`eee.store.tree.GitTree`) against the store
    at that commit, the index or a git work tree against HEAD's records; None where no
    duplicates index can answer (outside git, or an index too far behind HEAD)."""
    from eee.store.jsonlite import tree_object
    from eee.store.staged import IndexTree
    from eee.store.tree import GitTree, WorkTree

    if isinstance(tree, GitTree) and not isinstance(tree, IndexTree):
        return audit_duplicates(tree.commit, [rel], Path(tree.repo), tree.display)
    root = tree.repo if isinstance(tree, IndexTree) else tree.root if isinstance(tree, WorkTree) else None
    if root is None or not (Path(root) / ".git").exists():
        return None
    stale: list[str] = []
    found = staged_findings(
        Path(root), [rel], lambda path: tree_object(tree, path), tree.display, limit=HOOK_LIMIT, notice=stale.append
    )
    return None if stale else found
