"""The audit: the commit rules applied to every commit of a range, after the fact.

``git commit --no-verify`` skips the hooks, and a push from elsewhere never ran them; the
audit checks each commit's own changes (against its first parent) with the same rules:
immutability, sidecars outside git, naming, validation of what the commit added or
modified, duplicate warnings. A merge is checked against every parent, a trust anchor
guards against rewritten history, and crafted tree entries are findings (:mod:`eee.rules.history`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from eee.git.cli import CommitInfo, GitError, commit_changes, git_dir, is_bare, rev_list, toplevel, verify_commit
from eee.git.published import Published, adding_commit
from eee.reporting.findings import FileResult, Finding, Summary
from eee.rules.authority import Judge, before_roles_finding
from eee.rules.commit import (
    REGISTRY,
    immutability_findings,
    naming_findings,
    registry_findings,
    released_versions,
    sample_findings,
    settings_finding,
    sidecar_replacements,
)
from eee.rules.duplicates import audit_duplicates, ledger_at
from eee.rules.history import anchor_findings, anchor_from, merge_findings, raw_changes, replacement_findings
from eee.rules.ledger import check_events
from eee.rules.push import Push
from eee.rules.settle import Settled, unsettled, with_committed_hints
from eee.rules.uuids import TreeRecords, record_uuid, uuid_findings
from eee.store import identity, settings
from eee.store.identity import is_registry_file
from eee.store.limits import RECORD_MAX_BYTES
from eee.store.paths import (
    DATA_DIR,
    DVC_POINTER,
    EVENT,
    EVENTS_DIR,
    IMPORTS_DIR,
    POINTER_SUFFIX,
    RECORD_SUFFIX,
    SIDECAR,
    file_kind,
    tree_path_problem,
)
from eee.store.strictjson import JSONProblem, loads
from eee.store.tree import GitTree, Tree, Unreadable
from eee.validation.flagged import in_commit, without_flagged
from eee.validation.validate import Options, validate_tree


def _doc(tree: Tree, path: str) -> dict[str, Any] | None:
    try:
        doc = loads(tree.read(path, RECORD_MAX_BYTES))
    except (Unreadable, JSONProblem):
        return None
    return doc if isinstance(doc, dict) else None


def _bytes(tree: Tree, path: str) -> bytes | None:
    try:
        return tree.read(path, RECORD_MAX_BYTES)
    except Unreadable:
        return None


def audit_commit(
    commit: str,
    parent: str | None,
    cwd: Path,
    parents: tuple[str, ...] = (),
    head: str = "HEAD",
    judge: Callable[[str], str | None] | None = None,
    objects: Objects | None = None,
    authority: Judge | None = None,
    subject: str = "",
    push: Push | None = None,
    published: Published | None = None,
    records: TreeRecords | None = None,
) -> tuple[list[Finding], int]:
    """The rules applied to ``commit``'s own changes against its first ``parent``; a merge
    also keeps every protected file of every parent (:func:`eee.rules.history.merge_findings`).
    Returns the findings and the number of errors the validator's cap left unshown (they
    count, and no flag accepts them).

    Both commits are read as :class:`eee.store.tree.GitTree`: blobs come from git's object
    store, nothing is written to disk, and findings name ``<short-commit>:path``. ``head``:
    the audited end, whose ledger settles warnings; ``judge``: what a changed accepted path
    was, for a commit not published yet (:func:`eee.rules.commit.immutability_findings`);
    ``objects``: how the objects of the DVC pointers the commit adds are checked
    (:class:`Objects`; default: with what this clone holds); ``authority``: who may say what
    (:class:`eee.rules.authority.Judge`; one is made for the commit when not given);
    ``push``: the ref update the server gate judges (None: a local audit). A rule that reads
    the store's settings, roles or remote reads them at :func:`eee.rules.push.judged_at`
    (``judged_at(parent, push)``: the push's basis at the server, never a pushed commit);
    ``published``: what is published, whose records the commit's may not share a uuid with
    (:mod:`eee.rules.uuids`; default: the parents' trees only)."""
    authority = authority if authority is not None else Judge(cwd)
    info = CommitInfo(commit, parent, subject, parents or ((parent,) if parent else ()))
    records = records or TreeRecords(cwd)
    with GitTree(cwd, commit) as tree:
        return _audit(
            tree,
            commit,
            parent,
            cwd,
            parents,
            head,
            judge,
            objects or Objects(cwd, head),
            authority,
            info,
            push,
            published,
            records,
        )


def _crafted(where: Any, path: str, problem: str) -> Finding:
    return Finding(
        where(path),
        "$",
        f"the commit's tree holds an entry no checkout can write: {problem}",
        "trees with such entries are crafted (git mktree, git hash-object); remove the commit",
        check="history",
    )


def _audit(
    tree: GitTree,
    commit: str,
    parent: str | None,
    cwd: Path,
    parents: tuple[str, ...],
    head: str = "HEAD",
    judge: Callable[[str], str | None] | None = None,
    objects: Objects | None = None,
    authority: Judge | None = None,
    info: CommitInfo | None = None,
    push: Push | None = None,
    published: Published | None = None,
    records: TreeRecords | None = None,
) -> tuple[list[Finding], int]:
    where = tree.display
    objects = objects or Objects(cwd, head)
    findings: list[Finding] = []
    try:
        listed = commit_changes(commit, cwd, parent)
    except GitError:  # a tree git's own walker refuses (a crafted entry): walk the raw objects instead
        listed = raw_changes(parent, commit, cwd)
    changes = []
    for c in listed:  # a crafted path is a finding, never a file name
        problem = tree_path_problem(c.path)
        if problem is None:
            changes.append(c)
        else:
            findings.append(_crafted(where, c.path, problem))

    if len(parents) > 1:
        findings += merge_findings(commit, list(parents), cwd, where, lambda rev: _released(cwd, rev), _reader(cwd))
    elif parent is not None:
        with GitTree(cwd, parent) as before:
            old_registry = _bytes(before, REGISTRY)
            replaced, refused = sidecar_replacements(changes, before, tree, where)
        released = set(released_versions(old_registry))
        findings += refused + immutability_findings(changes, released, where, judge, replaced)
        if any(c.path == REGISTRY for c in changes):
            findings += registry_findings(old_registry, _bytes(tree, REGISTRY), where(REGISTRY))

    # events new against the first parent, checked against the ledger and the records at this
    # commit (for a merge: both sides' ledgers together, where a conflict between them shows)
    present = [c for c in changes if c.status in ("A", "M", "T")]
    added_events = [c.path for c in present if c.path.startswith(EVENTS_DIR + "/") and file_kind(c.path) == EVENT]
    if added_events:
        findings += [f for result in check_events(tree, added_events) for f in result.findings]

    clash_only: set[str] = set()
    inherited: set[str] = set()
    if len(parents) > 1:
        # what a merge brings in from its other parents was audited in their own commits;
        # content in no parent (an "evil merge") is new here, and names brought in from both
        # sides can collide in letter case only here
        inherited = {c.path for c in present if _in_a_parent(c, parents[1:], cwd)}
        clash_only = inherited
    if authority is not None and info is not None:  # who may say what: the roles of the first parent
        findings += authority.commit_findings(
            info, changes, tree, (lambda c: c.path not in inherited) if inherited else None
        )
    own = [c.path for c in present if c.path not in clash_only]
    kept = [p for p in own if p.startswith(DATA_DIR + "/") and file_kind(p) in (SIDECAR, DVC_POINTER)]
    if kept:  # where the sidecars are kept, judged by the settings of the commit before
        try:
            before_settings = settings.of_commit(cwd, parent)
        except settings.SettingsProblem as exc:
            findings.append(settings_finding(exc, parent or commit))
        else:
            findings += sample_findings(
                kept, tree.git_size, lambda p: tree.git_size(p) is not None, before_settings, where
            )
        added_pointers = [
            c.path for c in present if c.path in kept and c.status in ("A", "T") and c.path.endswith(POINTER_SUFFIX)
        ]
        if added_pointers:
            findings += objects.findings(tree, added_pointers, where)
    added_manifests = [c.path for c in present if c.path.startswith(IMPORTS_DIR + "/")]
    if added_manifests:  # import manifests: schema, arithmetic, what they name is in the commit
        from eee.rules.imports import check_manifests

        brought = {c.path for c in present if c.path in added_manifests and _in_a_parent(c, parents[1:], cwd)}
        findings += check_manifests(added_manifests, commit, cwd, where, inherited=brought)
    findings += _experiment_findings(tree, present, inherited, cwd, parent, authority, info, where)
    added_names = [c.path for c in present if is_registry_file(c.path)]
    if added_names:  # the identity registry's files: plain YAML, schema, consistency, settled_at in history
        from eee.rules.identity import check_files

        findings += [f for result in check_files(tree, added_names) for f in result.findings]
    data_changes = [c.path for c in present if c.path.startswith(DATA_DIR + "/")]
    gone = [c.path for c in changes if c.status == "D" and record_uuid(c.path)]
    if not data_changes:
        if gone and records is not None:
            records.forget(gone)
        return findings, 0
    names = identity.read(tree)

    # one uuid, one record: against the parents' records and the published ones they grew
    # from (records are never deleted from published history), git objects only
    if any(record_uuid(p) for p in data_changes):
        revs = list(parents) or ([parent] if parent is not None else [])
        if parent is not None and published is not None:
            revs += published.boundary(parent)
        holders = (records or TreeRecords(cwd)).holders(revs, data_changes)
        findings += uuid_findings(data_changes, holders, where)
    if gone and records is not None:
        records.forget(gone)

    tree.prefetch(data_changes)  # every folder above them listed in a few git calls, not one a folder
    tree.read_ahead([p for p in data_changes if p.endswith(RECORD_SUFFIX)], RECORD_MAX_BYTES)  # one batch
    docs: dict[str, dict[str, Any] | None] = {}
    for path in data_changes:
        if path in clash_only:
            findings += [f for f in naming_findings(path, None, tree, where) if f.message.endswith("in the tree")]
            continue
        docs[path] = _doc(tree, path) if path.endswith(RECORD_SUFFIX) else None
        findings += naming_findings(
            path, docs[path], tree, where, spellings=names
        )  # the tree keeps its folders' case index
    data_changes = [p for p in data_changes if p not in clash_only]
    if not data_changes:
        return findings, 0

    # validation of what the commit added or modified, read from the commit itself (names
    # that differ only in case are the naming rule's, above)
    summary = validate_tree(tree, data_changes, Options(case_clash=False))
    findings += [f for result in summary.results for f in result.findings]

    # duplicates against the whole store at that commit, through the ledger's index
    found = {p: doc for p, doc in docs.items() if doc is not None}
    findings += audit_duplicates(commit, list(found), cwd, where, head=head, docs=found)
    return findings, sum(r.suppressed for r in summary.results)


def _experiment_findings(
    tree: GitTree,
    present: list[Any],
    inherited: set[str],
    cwd: Path,
    parent: str | None,
    authority: Judge | None,
    info: CommitInfo | None,
    where: Callable[[str], str],
) -> list[Finding]:
    """Experiment cards the commit adds (valid, naming only what came before) and records it
    adds that cite a card: each needs the card in the commit before it **on the mainline**
    (:meth:`eee.rules.authority.Judge.point_of`). A commit a merge brings in is judged at
    that merge (against the merge's first parent), with what the merge brings."""
    from eee.governance.experiments import may_cite
    from eee.store.paths import EXPERIMENTS_DIR

    cards = [c.path for c in present if c.path.startswith(EXPERIMENTS_DIR + "/") and c.path not in inherited]
    if authority is not None and info is not None and info.commit in authority.brought:
        records: list[str] = []  # judged at the mainline merge that brings them
    else:
        records = [
            c.path
            for c in present
            if c.status == "A" and c.path.startswith(DATA_DIR + "/") and c.path.endswith(RECORD_SUFFIX)
        ]
    citing = []
    for path in records:
        data = _bytes(tree, path)
        if data is not None and may_cite(data):
            doc = _doc(tree, path)
            if doc is not None:
                citing.append((path, doc))
    if not cards and not citing:
        return []
    from eee.rules.experiments import card_findings, citation_findings

    point = authority.point_of(info) if authority is not None and info is not None else parent
    before = GitTree(cwd, point) if point is not None else None
    try:
        out = citation_findings(citing, before, tree, where)
        if cards:
            holders = TreeRecords(cwd).holders([point], []) if point is not None else None
            out += card_findings(tree, cards, before, holders, where)
        return out
    finally:
        if before is not None:
            before.close()


def _released(cwd: Path, rev: str) -> set[str]:
    with GitTree(cwd, rev) as before:
        return set(released_versions(_bytes(before, REGISTRY)))


def _reader(cwd: Path) -> Any:
    trees: dict[str, GitTree] = {}

    def read(rev: str, path: str) -> bytes | None:
        if rev not in trees:
            trees[rev] = GitTree(cwd, rev)
        return _bytes(trees[rev], path)

    return read


def _in_a_parent(change: Any, parents: tuple[str, ...], cwd: Path) -> bool:
    """Whether a merge's change against its first parent is one of its other parents' files, as is."""
    for p in parents:
        with GitTree(cwd, p) as other:
            if other.blob(change.path) == change.new_blob:
                return True
    return False


class Objects:
    """How the audit checks the objects of the DVC pointers a commit adds
    (:mod:`eee.rules.objects`): with the copies this clone holds (the sidecar committed to git
    at the audited head, the work tree, DVC's cache), and with ``remote`` the store's DVC
    remote too, where each object must be (``--remote-objects``: the pre-push hook and the
    server gate). ``dvc_dir``: the folder of the DVC config that names the remote (default:
    the store's ``.dvc``; a bare repository's server gate names its own); ``note``: how the
    remote was named, added to a finding that it lacks an object or cannot be asked;
    ``setup``: what gives (``remote_name``, ``dvc_dir``, ``note``) when first needed (the
    server gate: only a push that brings a pointer reads them). Nothing is asked of git or DVC
    before a pointer is."""

    def __init__(
        self,
        cwd: Path,
        head: str,
        remote: bool = False,
        remote_name: str | None = None,
        dvc_dir: Path | None = None,
        note: str | None = None,
        setup: Callable[[], tuple[str | None, Path | None, str | None]] | None = None,
    ) -> None:
        self.cwd = cwd
        self.remote = remote
        self.note = note
        self._named = (remote_name, dvc_dir, note)
        self._setup = setup
        self._finder: Any = None
        self.head = GitTree(cwd, head)

    @property
    def finder(self) -> Any:
        """The :class:`eee.dvc.objects.ObjectFinder`, made when a pointer is first checked."""
        if self._finder is None:
            from eee.dvc.objects import ObjectFinder

            remote_name, dvc_dir, self.note = self._setup() if self._setup is not None else self._named
            bare = is_bare(self.cwd)
            root = None if bare else Path(toplevel(self.cwd))
            self._finder = ObjectFinder(root, remote=self.remote, remote_name=remote_name, dvc_dir=dvc_dir)
        return self._finder

    def known(self, sidecar: str) -> list[tuple[str, Any]]:
        """The sidecar committed to git at the audited head (after its ``sidecar-to-git``)."""
        if self.head.git_size(sidecar) is None:
            return []
        return [(f"the sidecar in git at {self.head.short}", lambda: self.head.chunks(sidecar))]

    def findings(self, tree: Tree, pointers: list[str], where: Callable[[str], str]) -> list[Finding]:
        from eee.rules.objects import object_findings

        finder = self.finder
        found = object_findings(tree, pointers, finder, where, self.known, publish=self.remote)
        if self.remote:
            if self.note:  # where the remote could not be asked, or lacks the object: how it was named
                for f in found:
                    if f.check == "pointer-unverified":
                        f.message += f" ({self.note})"
            return found
        # without the remote, a pointer is judged by what this clone holds: none of it is no finding
        return [f for f in found if not (f.check == "pointer-unverified" and "could not be checked" in f.message)]


def audit(
    start: str | None,
    end: str,
    cwd: Path,
    anchor: str | None = None,
    *,
    remote_objects: bool = False,
    dvc_remote: str | None = None,
    dvc_dir: Path | None = None,
    not_remote: str | None = None,
    adopt_without_anchor: bool = True,
    commits: list[CommitInfo] | None = None,
    push: Push | None = None,
    mainline: bool = True,
    remote_note: str | None = None,
    remote_setup: Callable[[], tuple[str | None, Path | None, str | None]] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Summary:
    """The commits of ``start..end``; the trust anchor (``anchor``, else ``$EEE_AUDIT_ANCHOR``)
    must be an ancestor of ``end`` and, with ``mainline`` (a protected branch's audit: the
    default), stay on its first-parent chain (see :mod:`eee.rules.history`).

    Every commit's acts are judged along the mainline, ``end``'s first-parent chain
    (:mod:`eee.rules.authority`): a commit of it by the roles and settings of its first
    parent, a commit a merge brings in by those of the mainline commit it was merged onto:
    signatures, the actor of each event, the genesis of the roles (trusted at or below the
    anchor; with no anchor known, on its own signature with a warning unless
    ``adopt_without_anchor`` is False, as the server gate asks).

    The server gate (:mod:`eee.hooks.server`) passes the ``commits`` a push brings (those
    no ref of the bare repository reaches, oldest first) instead of a range, and ``push``
    (:class:`eee.rules.push.Push`): every ref of the repository is then published, and
    every rule runs as it runs here, told the push (``audit_commit(..., push=)``).

    What the ledger at ``end`` settles is left out: a record's findings that its flags accept
    (the flag came with the record, or after it), and its warnings once it no longer counts
    (retracted, superseded, a duplicate: :mod:`eee.rules.settle`); the hints of the others
    are the actions a committed record allows. A change of an accepted file in a commit not
    yet published (not reachable from the anchor, the upstream or a remote branch:
    :mod:`eee.git.published`) whose file no published commit holds is still an error, with
    the way to fold it into the commit that added the file.

    The objects of the DVC pointers each commit adds are checked with what this clone holds
    (:class:`Objects`); ``remote_objects``: on the store's DVC remote too (``dvc_remote``: its
    name; ``dvc_dir``: the DVC folder whose config names it), where each must be;
    ``remote_note``: how the remote was named, said where it cannot be asked; ``remote_setup``:
    what gives the remote's name, DVC folder and note when a pointer first asks (the server
    gate: the setting ``dvc_remote`` and its ``eee.dvcDir``). ``not_remote``: leave out the commits that remote's
    tracking branches hold (a push to a new branch)."""
    try:
        git_dir(cwd)
    except GitError:
        return Summary([], fatal=f"{cwd} is not a git repository: the audit reads commits")
    try:
        head = verify_commit(end, cwd, "--to")
        if commits is None:
            commits = rev_list(start, end, cwd, not_remote=not_remote)
    except GitError as exc:
        return Summary([], fatal=f"cannot list commits: {exc}")
    objects = Objects(cwd, head, remote_objects, dvc_remote, dvc_dir, note=remote_note, setup=remote_setup)
    results = []
    trust = anchor_from(anchor)
    history = anchor_findings(trust, head, cwd, mainline=mainline) + replacement_findings(cwd)
    if history:
        results.append(FileResult("history", "history", findings=history))
    published = Published(cwd, trust[0] if trust else None, refs=push is not None)
    unpublished = published.unpublished(head)
    settled = Settled(ledger_at(cwd, head), names=GitTree(cwd, head))
    anchored = _anchor_commit(trust, cwd)
    authority = Judge(cwd, anchored, adopt_without_anchor=adopt_without_anchor)
    authority.prepare(commits, head)
    records = TreeRecords(cwd, indexed=push is not None)  # the server gate's git directory is its own
    for done, info in enumerate(commits):
        if progress is not None:
            progress(done, len(commits))
        judge = _judge(published, head, info.parent, cwd) if info.commit in unpublished else None
        found, suppressed = audit_commit(
            info.commit,
            info.parent,
            cwd,
            info.parents,
            head,
            judge,
            objects,
            authority,
            info.subject,
            push,
            published=published,
            records=records,
        )
        findings = without_flagged(found, (info.commit, head), cwd, in_commit(info.commit, cwd))
        findings = unsettled(findings, settled, _rel)
        findings = with_committed_hints(findings, _rel, cwd)
        name = f"{info.commit[:10]} {info.subject.strip()}"
        results.append(FileResult(name, "commit", findings=findings, suppressed=suppressed))
    if progress is not None:
        progress(len(commits), len(commits))
    if authority.verifier.has_roles(head):
        before = before_roles_finding(authority)
        if before:
            results.append(FileResult("history before the roles", "history", findings=before))
    return Summary(results)


def _anchor_commit(trust: tuple[str, str] | None, cwd: Path) -> str | None:
    """The trust anchor's commit id, when it names one (else :mod:`eee.rules.history` reports it)."""
    if trust is None:
        return None
    try:
        return verify_commit(trust[0], cwd, "the trust anchor")
    except GitError:
        return None


def _rel(finding: Finding) -> str | None:
    """The repository path of an audit finding's file (``<short-commit>:path``)."""
    commit, sep, rel = finding.file.partition(":")
    return rel if sep and commit else None


def _judge(published: Published, head: str, parent: str | None, cwd: Path) -> Callable[[str], str | None]:
    """For a commit not published yet: a changed path is accepted when published history
    holds it, else it was added by an unpublished commit (never :data:`FREE`: history shows
    every commit's change)."""

    def judge(path: str) -> str | None:
        if path in published.accepted([path], head) or parent is None:
            return None
        return adding_commit(path, parent, cwd) or parent

    return judge
