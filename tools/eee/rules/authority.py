"""Who may say what: every commit's acts judged along the mainline.

A commit *acts* by the paths it changes (:data:`eee.governance.PROTECTED`, then the store's
``protected_paths``): an event file is the act its action names (retract, dispute, ...), an
import manifest is ``import``, a file under ``schemas/`` is ``release-schema``, the settings
file ``settings``, the roles files ``roles``, ``.github/`` ``forge``, the identity registry
``identity``, a protected path (``mkdocs.yml``, ``tools/``, ...) ``protected-path``; a
record under ``data/`` is ``add``. Which role each act needs is
:data:`eee.governance.AUTHORITY`.

**The mainline** is the audited head's first-parent chain (at the server: the protected
branch's, which keeps the old head on it, :mod:`eee.rules.push`; in an audit: the trust
anchor stays on it, :mod:`eee.rules.history`). Every commit is judged by the roles and
settings of one commit of the mainline (:meth:`Judge.plan`): a commit of the mainline by its
first parent (the mainline commit before it: at the server, the push's first commit by the
old head); a commit a merge brings in by the first parent of the mainline merge that brought
it (the mainline commit it was merged onto), **never** by a parent of its own, which whoever
made it chose. A change of the roles within a push is itself judged by the roles before it,
so every roles file the mainline holds was granted by the one before. The rules (all of them
rules of the audit of a commit range, reading only git objects, so that they hold at the
server gate and in a forge's CI as they do in ``eee audit``):

- **authority**: in a store with roles (``governance/allowed_signers`` in the judging
  commit), a commit whose acts need the maintainer role is signed (git's SSH signing) by a
  principal that holds it, verified against the allowed signers **of the judging commit**
  (:mod:`eee.governance.signatures`): nobody grants themselves a role in the commit that
  uses it, and a key removed before a commit no longer signs it (one signed before stays
  valid: it was judged where it was made). A key the roles do not know counts as no
  signature. A commit's acts are its own changes (a merge's: content in no parent); a merge
  of the mainline also takes every **configuration** act (:data:`eee.governance.CONFIGURATION_ACTS`:
  roles, signers, settings, identity registry, schemas and their registry, the forge set-up,
  protected paths) against **any** of its parents, whichever parent the content came from.
  A contributor may supersede a record whose adding commits they signed: the mainline commit
  that first brought the record, every parent considered, or the commits of the side it came
  from (:func:`record_signed_by`, one answer for the audit, the server and the tools). With
  the setting ``require_signed_commits`` (read from the judging commit) every commit needs a
  known signature. What a merge of the mainline brings in from commits the audit does not
  judge in their own right (at the server: commits another ref already holds) is judged the
  same way and reported at the merge.
- **actor**: in every store, with roles or without, an added event's (and import
  manifest's) ``actor``, and an added experiment card's ``author``, is who committed it: the verified signer (its email, with the
  commit's committer name) where the commit is signed by a known principal, else the
  commit's committer (name and email), then shown as unverified by every reader.
- **roles**: a commit that changes a roles file leaves files the store can use
  (:mod:`eee.store.roles`).
- **genesis**: the first roles file (added where the judging commit has none) is trusted
  because its commit is at or below the trust anchor. Above the anchor it is refused (adopt
  roles by committing the genesis, then making it the anchor). With no anchor at all
  (``eee audit`` without ``--anchor``/``$EEE_AUDIT_ANCHOR``) a genesis signed by a
  maintainer it lists itself is accepted with one warning naming how to pin it; the server
  gate passes ``adopt_without_anchor=False``, so there it is refused.
- **before-roles**: events and manifests that entered history while the store had no roles
  (anyone could act) are reported once, as one warning line, when the audited head has roles.

The signing side (the user's configured key, which runs ``ssh-keygen``; what a commit about
to be made needs; the commit gate's check of the index) is the write side's:
:mod:`eee.write.signing` (:func:`eee.write.signing.gate_findings`,
:func:`eee.write.signing.requirement`, :func:`eee.write.signing.refusal_of`). It judges
through the rules here (:func:`acts_of`, :func:`actor_findings`, :func:`record_signed_by`);
this module only verifies what is committed.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from eee.git.cli import (
    Change,
    CommitInfo,
    GitError,
    batch_check,
    commit_changes,
    committers,
    first_parent_walk,
    is_ancestor,
    record_adding,
    rev_list,
)
from eee.governance import (
    ANYONE,
    AUTHORITY_BY_ACT,
    CONFIGURATION_ACTS,
    EVENT_ACT,
    MAINTAINER,
    PROTECTED,
    act_of_path,
    holds,
    role_for,
)
from eee.governance.signatures import Verified, Verifier, first_parents
from eee.reporting.findings import WARNING, Finding
from eee.reporting.shown import command
from eee.store import roles as roles_mod
from eee.store import settings as settings_mod
from eee.store.paths import EVENT, EVENT_SUFFIX, EVENTS_DIR, EXPERIMENTS_DIR, IMPORTS_DIR, MANIFEST_SUFFIX, file_kind
from eee.store.roles import ALLOWED_SIGNERS, ROLES_FILES, Roles
from eee.store.tree import MAX_READ, GitTree, Tree, Unreadable

Where = Callable[[str], str]

SIGNING_LINES = (
    "git config gpg.format ssh",
    "git config user.signingkey ~/.ssh/id_ed25519.pub",
)
SIGNING_TEXT = "; ".join(f"`{line}`" for line in SIGNING_LINES)


class Act(NamedTuple):
    """One act of a commit: its name (:data:`eee.governance.AUTHORITY`), the file, the record;
    ``against``: for a merge's configuration act that is no content of its own, the parent it
    changes the file against."""

    act: str
    path: str
    record: str | None = None
    against: str | None = None

    def what(self) -> str:
        found = AUTHORITY_BY_ACT.get(self.act)
        return found.what if found is not None else "change a governance event file"

    def how(self, first: str | None) -> str:
        """How a merge takes the act, when it is not its own content (``first``: its first parent)."""
        if self.against is None:
            return ""
        if self.against == first:
            return "the merge brings this change onto the mainline (whichever branch made it, landing it is the act): "
        return (
            f"the merge changes it against its parent {self.against[:10]} (a branch behind on it: bring the branch "
            "up to date first, or a maintainer signs the merge): "
        )


def _event(read: Callable[[str], bytes | None], path: str) -> dict[str, Any] | None:
    from eee.governance.events import EventFileError, load_bytes

    data = read(path)
    if data is None:
        return None
    try:
        return load_bytes(data, path.rsplit("/", 1)[-1])
    except (EventFileError, ValueError):
        return None


class Events:
    """Events parsed once per blob: through the git directory's cache of parsed events (the
    ledger's, :class:`eee.governance.events.EventCache`, keyed by blob id), else parsed here."""

    def __init__(self, cwd: Path | None = None) -> None:
        from eee.governance.events import EventCache, git_dir_of

        self.cache = EventCache(git_dir_of(cwd) if cwd is not None else None)
        self.memo: dict[str, dict[str, Any] | None] = {}

    def get(self, change: Change, read: Callable[[str], bytes | None]) -> dict[str, Any] | None:
        key = f"b:{change.new_blob}"
        if key not in self.memo:
            found = self.cache.get(key)
            if found is None:
                found = _event(read, change.path)
                if found is not None:
                    self.cache.put(key, found)
            self.memo[key] = found
        return self.memo[key]


def acts_of(
    changes: Iterable[Change],
    read: Callable[[str], bytes | None],
    events: Events | None = None,
    protected_paths: tuple[str, ...] = settings_mod.PROTECTED_PATHS,
) -> list[Act]:
    """The acts of ``changes`` (``read(path)``: the bytes a change left, for the events;
    ``protected_paths``: the setting of the settings that judge them)."""
    events = events if events is not None else Events()
    out: list[Act] = []
    for c in changes:
        act = act_of_path(c.path, protected_paths)
        if act is None:
            continue
        if act == EVENT_ACT:
            record = None
            if c.status in ("A", "M", "T") and file_kind(c.path) == EVENT and c.path.endswith(EVENT_SUFFIX):
                event = events.get(c, read) if c.status == "A" else None
                if event is not None:
                    action, named = event.get("action"), event.get("record")
                    act = action if isinstance(action, str) and action in AUTHORITY_BY_ACT else EVENT_ACT
                    record = named if isinstance(named, str) else None
            out.append(Act(act, c.path, record))
        else:
            out.append(Act(act, c.path))
    return out


def needing_a_role(acts: Iterable[Act]) -> list[Act]:
    return [a for a in acts if role_for(a.act) != ANYONE]


def configuration_paths(protected_paths: tuple[str, ...]) -> list[str]:
    """The paths whose acts are configuration acts (:data:`eee.governance.CONFIGURATION_ACTS`):
    what a merge of the mainline is judged by against every parent."""
    paths = [where for where, act in PROTECTED if act in CONFIGURATION_ACTS]
    return list(dict.fromkeys([*paths, *protected_paths]))


def record_signed_by(verifier: Verifier, record_uuid: str, principal: str, head: str) -> bool:
    """Whether the record ``record_uuid`` was added, on ``head``'s mainline, by commits that
    ``principal`` signed (:func:`eee.git.cli.record_adding`: the mainline commit that first
    brought it, every parent considered, or the commits of the side it came from), each
    verified by the roles of the mainline commit it was merged onto. The one answer for the
    audit, the server gate and the tools: whether a contributor may supersede it."""
    found = record_adding(record_uuid, head, verifier.cwd)
    if found is None:
        return False
    under = first_parents([found.mainline], verifier.cwd).get(found.mainline)
    verifier.prefetch((a, under) for a in found.adders)
    return all(verifier.verify(a, under).principal == principal for a in found.adders)


# --- the messages ----------------------------------------------------------------------------


def _who(verified: Verified | None, under: str | None) -> str:
    """What a refusal says of the signature (or its absence)."""
    sig = verified.signature if verified is not None else None
    if sig is None or sig.status == "N":
        return "the commit has no signature"
    roles_of = f"the roles of {under[:10]}" if under else "the store's roles"
    if verified is not None and verified.principal:
        return f"it is signed by {verified.principal}, who holds the {verified.role} role in {roles_of}"
    if sig.status == "B":
        return "its signature does not verify (bad signature): it counts as no signature"
    if sig.status in ("X", "Y", "R"):
        return f"its signature is expired or revoked (git says {sig.status}): it counts as no signature"
    if sig.status == "E":
        return "its signature cannot be checked (not an SSH signature of a listed key): it counts as no signature"
    key = f" ({sig.key})" if sig.key else ""
    return f"it is signed by a key{key} that {roles_of} do not know, which counts as no signature"


def _fix(role: str, verified: Verified | None) -> str:
    if verified is not None and verified.principal:
        return (
            f"a principal holding the {role} role makes this change (their own signed commit), or a maintainer gives "
            f"{verified.principal} the role: `{command('roles', 'add', verified.principal, '--key', 'KEY.pub', '--role', role, '--commit')}`"
        )
    return (
        f"sign the commit with the key of a principal holding the {role} role ({SIGNING_TEXT}, then `git commit -S`; "
        f"the tools' --commit signs with it; `{command('roles')}` lists who holds which role); an unpushed commit is "
        "signed again with `git commit --amend --no-edit -S`"
    )


# --- the audit -------------------------------------------------------------------------------


def _read(tree: Tree) -> Callable[[str], bytes | None]:
    """Events and roles files are small (64 KiB read); an import manifest names every file its
    import placed, so it is read as the manifest rules read it (the tree's cap): a large one
    is never passed over by the actor rule."""

    def read(path: str) -> bytes | None:
        try:
            return tree.read(path, MAX_READ if path.startswith(IMPORTS_DIR + "/") else 64 * 1024)
        except Unreadable:
            return None

    return read


class Judge:
    """The authority rules over the commits of one audit (see the module docstring).

    ``anchor``: the trust anchor's commit (None: no anchor known); ``adopt_without_anchor``:
    whether a genesis with no anchor known is accepted on its own signature (a warning) or
    refused (the server gate)."""

    def __init__(self, cwd: Path, anchor: str | None = None, adopt_without_anchor: bool = True) -> None:
        self.cwd = Path(cwd)
        self.anchor = anchor
        self.adopt_without_anchor = adopt_without_anchor
        self.verifier = Verifier(self.cwd)
        self._committers: dict[str, tuple[str, str]] = {}
        self._settings: dict[str, settings_mod.Settings] = {}
        self.before_roles: list[tuple[str, int]] = []  # (commit, governance files) judged while no roles existed
        self.events = Events(self.cwd)
        self.genesis: str | None = None
        # the mainline of the audited head (:meth:`plan`): which commit judges each audited commit
        self.audited: set[str] | None = None  # None: no plan (every commit judged by its own first parent)
        self.mainline: set[str] = set()
        self.point: dict[str, str | None] = {}  # commit -> the mainline commit whose roles and settings judge it
        self.brought: dict[str, str] = {}  # a side commit -> the mainline merge that brought it
        self._sides: dict[str, list[CommitInfo]] = {}  # a mainline merge -> the commits it brings in

    def plan(self, commits: list[CommitInfo], head: str) -> None:
        """The mainline of ``head`` (its first-parent chain) among ``commits``, and the
        commit that judges each: a mainline commit's first parent; a side commit's, the
        first parent of the mainline merge that brought it in (the oldest that holds it)."""
        by = {c.commit: c for c in commits}
        self.audited = set(by)
        chain: list[str] = []
        if head in by and not any(len(c.parents) > 1 for c in commits):
            # no merge among them: every audited commit is an ancestor of the head by first parents alone
            commit: str | None = head
            while commit in by:
                chain.append(commit)
                commit = by[commit].parent
        else:
            for commit in first_parent_walk(head, self.cwd):
                if commit not in by:
                    break  # the chain leaves the audited commits: everything older is outside them too
                chain.append(commit)
        self.mainline = set(chain)
        for commit in reversed(chain):  # oldest first: a side commit goes to the first merge that brings it
            info = by[commit]
            self.point[commit] = info.parent
            if len(info.parents) < 2:
                continue
            side = self._side(info)
            for other in side:
                if other.commit != commit and other.commit in by and other.commit not in self.point:
                    self.point[other.commit] = info.parent
                    self.brought[other.commit] = commit

    def _side(self, info: CommitInfo) -> list[CommitInfo]:
        """The commits the merge ``info`` brings onto its first parent (``first..merge``, the merge left out)."""
        if info.commit not in self._sides:
            try:
                found = rev_list(info.parent, info.commit, self.cwd)
            except GitError:
                found = []
            self._sides[info.commit] = [c for c in found if c.commit != info.commit]
        return self._sides[info.commit]

    def point_of(self, info: CommitInfo) -> str | None:
        """The commit whose roles and settings judge ``info`` (see :meth:`plan`)."""
        return self.point.get(info.commit, info.parent)

    def prepare(self, commits: list[CommitInfo], head: str | None = None) -> None:
        """Plan the mainline of ``head`` (:meth:`plan`), read the committers of ``commits``,
        which of them (and the commits judging them) hold roles and settings (one ``cat-file
        --batch-check``), and verify, in one git call per set of signers, the signatures the
        audit will ask about."""
        if head is not None:
            self.plan(commits, head)
        self._committers.update(committers([c.commit for c in commits], self.cwd))
        points = [self.point_of(c) for c in commits]
        revs = list(dict.fromkeys([r for c in commits for r in (c.commit, *c.parents)] + [p for p in points if p]))
        self.verifier.preload(revs)
        names = [f"{r}:{settings_mod.SETTINGS_PATH}" for r in revs if r not in self._settings]
        found = batch_check(names, self.cwd) if names else {}
        for r in revs:
            if r not in self._settings and f"{r}:{settings_mod.SETTINGS_PATH}" not in found:
                self._settings[r] = settings_mod.DEFAULTS  # no settings file: the defaults, no tree read
        pairs = [(c.commit, p) for c, p in zip(commits, points, strict=True) if p and self.verifier.has_roles(p)]
        self.verifier.prefetch(pairs)

    def committer(self, commit: str) -> tuple[str, str]:
        if commit not in self._committers:
            self._committers.update(committers([commit], self.cwd))
        return self._committers.get(commit, ("", ""))

    def settings(self, rev: str | None) -> settings_mod.Settings:
        if rev is None:
            return settings_mod.DEFAULTS
        if rev not in self._settings:
            try:
                with GitTree(self.cwd, rev) as tree:
                    self._settings[rev] = settings_mod.read(tree)
            except settings_mod.SettingsProblem:  # the settings' own rules report it; no setting is taken from it
                self._settings[rev] = settings_mod.DEFAULTS
        return self._settings[rev]

    # -- one commit --

    def commit_findings(
        self, info: CommitInfo, changes: list[Change], tree: GitTree, own: Callable[[Change], bool] | None = None
    ) -> list[Finding]:
        """The findings of the commit ``info`` (``changes``: against its first parent; ``own``:
        for a merge, whether a change is its own content, in no parent), judged by the roles
        and settings of :meth:`point_of`."""
        where = tree.display
        read = _read(tree)
        under = self.point_of(info)
        mainline_merge = len(info.parents) > 1 and info.commit not in self.brought
        acts = self.acts(info, changes, tree, own, under, mainline_merge)
        mine = [c for c in changes if own is None or own(c)]
        before = self.verifier.roles(under)
        out: list[Finding] = []

        touched = {c.path for c in mine if c.path in ROLES_FILES}
        if touched:
            out += roles_findings(roles_mod.read(tree), where, touched)
        genesis = before is None and self.verifier.has_roles(info.commit)
        if genesis:
            self.genesis = self.genesis or info.commit
            out += self._genesis(info, where)

        governance = [a for a in acts if a.path.startswith((EVENTS_DIR + "/", IMPORTS_DIR + "/"))]
        if before is None and not genesis and governance:
            self.before_roles.append((info.commit, len(governance)))
        merge = self.brought.get(info.commit)
        brought = f"brought onto the mainline by the merge {merge[:10]}: " if merge else ""
        lookup = self.brought.get(info.commit, info.commit)  # the mainline commit that brings this one
        out += self.who(info, acts, mine, read, under, where, brought, genesis, lookup)
        if mainline_merge:
            out += self._merge(info, where)
        return out

    def acts(
        self,
        info: CommitInfo,
        changes: list[Change],
        tree: GitTree,
        own: Callable[[Change], bool] | None,
        under: str | None,
        mainline_merge: bool,
    ) -> list[Act]:
        """The acts of a commit judged under ``under``: its own changes (a merge's: content
        in no parent); for a merge of the mainline, every change of a configuration path
        (:data:`eee.governance.CONFIGURATION_ACTS`) against any of its parents too, whichever
        parent it came from."""
        protected = self.settings(under).protected_paths
        acts = acts_of([c for c in changes if own is None or own(c)], _read(tree), self.events, protected)
        if not mainline_merge:
            return acts
        seen = {(a.act, a.path) for a in acts}
        paths = configuration_paths(protected)
        against = [(info.parents[0], changes)] + [(p, self._changes(info.commit, p, paths)) for p in info.parents[1:]]
        for parent, listed in against:
            for c in listed:
                act = act_of_path(c.path, protected)
                if act in CONFIGURATION_ACTS and (act, c.path) not in seen:
                    seen.add((act, c.path))
                    acts.append(Act(act, c.path, against=parent))
        return acts

    def _changes(self, commit: str, parent: str, paths: list[str]) -> list[Change]:
        try:
            return commit_changes(commit, self.cwd, parent, paths=paths)
        except GitError:
            return [Change("M", p.rstrip("/"), "", "", "", "") for p in paths]  # unreadable: judged as changed

    def who(
        self,
        info: CommitInfo,
        acts: list[Act],
        mine: list[Change],
        read: Callable[[str], bytes | None],
        under: str | None,
        where: Where,
        brought: str,
        genesis: bool = False,
        lookup: str | None = None,
    ) -> list[Finding]:
        """Who may have taken ``acts`` (the commit ``info``'s, judged by the roles and
        settings of ``under``): each act's role, a signature where the settings require one,
        the actor of each added event and manifest (the one judgement of every commit).
        ``lookup``: the mainline commit that brings ``info`` (itself, or the merge), along
        whose mainline a superseded record's adding commits are found."""
        roles = self.verifier.roles(under)
        verified = self.verifier.verify(info.commit, under) if roles is not None else None
        out: list[Finding] = []
        if roles is not None:
            out += self._judged(info, acts, roles, verified, under, where, brought, lookup or info.commit)
        out += self._signed_required(info, under, roles, verified, where, genesis, brought)
        out += actor_findings(mine, read, self.committer(info.commit), verified, roles, where, self.events)
        return out

    def _judged(
        self,
        info: CommitInfo,
        acts: list[Act],
        roles: Roles,
        verified: Verified | None,
        under: str | None,
        where: Where,
        brought: str,
        lookup: str,
    ) -> list[Finding]:
        """Each act needing a role, judged by ``roles`` (those of ``under``); a supersession
        also by who added the record, on ``lookup``'s mainline."""
        out = []
        for act in needing_a_role(acts):
            role = role_for(act.act)
            if verified is not None and verified.principal and holds(verified.role, role):
                continue
            if (
                act.act == "supersede"
                and verified is not None
                and verified.principal
                and act.record
                and record_signed_by(self.verifier, act.record, verified.principal, lookup)
            ):
                continue
            needs = f"{brought}{act.how(info.parent)}{act.what()} needs the {role} role"
            if act.act == "supersede":
                needs += " (or the signer of the commit that added the record)"
            out.append(
                Finding(
                    where(act.path),
                    "$",
                    f"{needs}: {_who(verified, under)}",
                    _fix(role, verified),
                    check="authority",
                )
            )
        return out

    def _signed_required(
        self,
        info: CommitInfo,
        under: str | None,
        before: Roles | None,
        verified: Verified | None,
        where: Where,
        genesis: bool,
        brought: str = "",
    ) -> list[Finding]:
        if under is None or not self.settings(under).require_signed_commits:
            return []
        if verified is not None and verified.principal:
            return []
        if genesis:
            own = self.verifier.verify(info.commit, info.commit)
            if own.principal and own.role == MAINTAINER:
                return []
        why = "but the store has no roles there: no key is known" if before is None else _who(verified, under)
        return [
            Finding(
                where(settings_mod.SETTINGS_PATH),
                "$.require_signed_commits",
                f"{brought}the store requires every commit to be signed by a known key (require_signed_commits, in "
                f"the settings of {under[:10]}), {why}",
                f"sign the commit ({SIGNING_TEXT}, then `git commit -S`) with a key in {ALLOWED_SIGNERS} "
                f"(`{command('roles')}` lists them)",
                check="authority",
            )
        ]

    def _genesis(self, info: CommitInfo, where: Where) -> list[Finding]:
        file = where(ALLOWED_SIGNERS)
        adopt = (
            f"adopt roles in two steps: a maintainer commits the genesis in a store without roles (`"
            f"{command('roles', 'add', 'NAME', '--key', 'KEY.pub', '--role', 'maintainer', '--commit')}`, signed), then "
            "makes that commit the trust anchor: `EEE_AUDIT_ANCHOR=<genesis commit>` (or `eee audit --anchor`) in CI, "
            "or push it to the bare repository before `eee server install` puts the gate there"
        )
        if self.anchor is not None:
            if info.commit == self.anchor or is_ancestor(info.commit, self.anchor, self.cwd):
                return []  # trusted: at or below the anchor
            return [
                Finding(
                    file,
                    "$",
                    f"the first roles file enters history here, above the trust anchor {self.anchor[:10]}: roles "
                    "cannot be adopted by a commit that is checked by roles it brings itself",
                    adopt,
                    check="genesis",
                )
            ]
        own = self.verifier.verify(info.commit, info.commit)
        if not self.adopt_without_anchor:
            return [
                Finding(
                    file,
                    "$",
                    "the first roles file enters history here and no trust anchor is known to trust it",
                    adopt,
                    check="genesis",
                )
            ]
        if own.principal and own.role == MAINTAINER:
            return [
                Finding(
                    file,
                    "$",
                    f"the roles are adopted here, trusted on the genesis's own signature ({own.principal}, a "
                    "maintainer it lists itself) because no trust anchor is known",
                    f"pin it as the trust anchor: `eee audit --anchor {info.commit[:10]}` or "
                    f"`EEE_AUDIT_ANCHOR={info.commit}` (the server gate: push it before `eee server install`)",
                    severity=WARNING,
                    check="genesis",
                )
            ]
        return [
            Finding(
                file,
                "$",
                f"the first roles file enters history here, with no trust anchor, and {_who(own, info.commit)}: "
                "a genesis is signed by a maintainer it lists itself",
                adopt,
                check="genesis",
            )
        ]

    def _merge(self, info: CommitInfo, where: Where) -> list[Finding]:
        """What a merge of the mainline brings in from commits this audit does not judge in
        their own right (at the server: commits another ref already holds), each judged as
        every commit is (:meth:`who`) by the roles and settings of the merge's first parent,
        the mainline commit it was merged onto, and reported at the merge."""
        first = info.parents[0]
        side = self._side(info)
        if self.audited is not None:
            side = [c for c in side if c.commit not in self.audited]
        if not side or (self.verifier.roles(first) is None and not self.settings(first).require_signed_commits):
            return []
        self.verifier.prefetch((c.commit, first) for c in side)
        self._committers.update(committers([c.commit for c in side], self.cwd))
        out: list[Finding] = []
        for other in side:
            try:
                changes = commit_changes(other.commit, self.cwd, other.parent)
            except GitError:
                continue
            with GitTree(self.cwd, other.commit) as tree:
                own = _own_of_merge(other, self.cwd) if len(other.parents) > 1 else None
                mine = [c for c in changes if own is None or own(c)]
                acts = self.acts(other, changes, tree, own, first, False)
                brought = f"brought in by the merge from {other.commit[:10]} ({_shown_subject(other.subject)}): "
                out += self.who(other, acts, mine, _read(tree), first, where, brought, lookup=info.commit)
        return out


def _shown_subject(subject: str) -> str:
    from eee.store.paths import escaped

    return escaped(subject.strip()[:60], quote=False)


def _own_of_merge(info: CommitInfo, cwd: Path) -> Callable[[Change], bool]:
    """For a merge: whether a change (against its first parent) is content of none of its other parents."""
    trees = [GitTree(cwd, p) for p in info.parents[1:]]

    def own(change: Change) -> bool:
        return not any(t.blob(change.path) == change.new_blob for t in trees)

    return own


def roles_findings(roles: Roles | None, where: Where, changed: set[str]) -> list[Finding]:
    """The problems of the roles files a commit leaves, when it changed one of them."""
    if roles is None or not changed:
        return []
    out = []
    for p in roles.problems:
        out.append(Finding(where(p.file), p.pointer, p.message, p.hint or None, line=p.line, check="roles"))
    return out


def actor_findings(
    changes: Iterable[Change],
    read: Callable[[str], bytes | None],
    committer: tuple[str, str],
    verified: Verified | None,
    roles: Roles | None,
    where: Where,
    events: Events | None = None,
) -> list[Finding]:
    """Every added event's and import manifest's actor is who committed it (the module
    docstring): ``committer``, the commit's committer (name, email)."""
    events = events if events is not None else Events()
    out = []
    for c in changes:
        if c.status != "A":
            continue
        is_event = c.path.startswith(EVENTS_DIR + "/") and file_kind(c.path) == EVENT
        is_manifest = c.path.startswith(IMPORTS_DIR + "/") and c.path.endswith(MANIFEST_SUFFIX)
        is_card = c.path.startswith(EXPERIMENTS_DIR + "/") and c.path.endswith(".yaml")
        if not (is_event or is_manifest or is_card):
            continue
        doc = events.get(c, read) if is_event else _manifest(read, c.path) if is_manifest else _card(read, c.path)
        actor = doc.get("author" if is_card else "actor") if isinstance(doc, dict) else None
        if not isinstance(actor, dict):
            continue  # the schema rules say what is wrong with it
        name, email = actor.get("name"), actor.get("email")
        what = "event" if is_event else "import manifest" if is_manifest else "experiment card"
        named = _ident_text(name, email)
        if verified is not None and verified.principal and roles is not None:
            expected = roles.email(verified.principal) or ""
            if isinstance(email, str) and email.lower() == expected.lower() and name == committer[0]:
                continue
            by = f"it is signed by {verified.principal} <{expected}> (committed as {_ident_text(*committer)})"
        else:
            if name == committer[0] and isinstance(email, str) and email.lower() == committer[1].lower():
                continue
            by = f"it was committed by {_ident_text(*committer)} (unsigned, or by a key the store does not know)"
        out.append(
            Finding(
                where(c.path),
                "$.author" if is_card else "$.actor",
                f"the {what} names {named} as its {'author' if is_card else 'actor'}, but {by}: "
                f"an {what}'s {'author' if is_card else 'actor'} is who commits it",
                "write it with the tools (they write git's committer identity, `git var GIT_COMMITTER_IDENT`, and "
                "--commit signs), and commit it as yourself; an event naming someone else is never accepted",
                check="actor",
            )
        )
    return out


def _ident_text(name: object, email: object) -> str:
    """``Name <email>`` as a message shows it: what a commit or an event says is input, its
    control and bidirectional characters escaped, at most 200 characters each."""
    from eee.store.paths import escaped

    return f"{escaped(str(name)[:200], quote=False)} <{escaped(str(email)[:200], quote=False)}>"


def _card(read: Callable[[str], bytes | None], path: str) -> dict[str, Any] | None:
    data = read(path)
    if data is None:
        return None
    from eee.governance.experiments import CardProblem, loads

    try:
        return loads(data)
    except CardProblem:  # the card rules report an unreadable card
        return None


def _manifest(read: Callable[[str], bytes | None], path: str) -> dict[str, Any] | None:
    data = read(path)
    if data is None:
        return None
    try:
        from eee.governance.manifests import loads

        doc = loads(data.decode("utf-8"))
    except Exception:  # the manifest rules report an unreadable manifest
        return None
    return doc if isinstance(doc, dict) else None


def before_roles_finding(judge: Judge) -> list[Finding]:
    """The one line of history written before the roles (see the module docstring)."""
    if not judge.before_roles:
        return []
    files = sum(n for _, n in judge.before_roles)
    first, last = judge.before_roles[0][0], judge.before_roles[-1][0]
    span = first[:10] if first == last else f"{first[:10]}..{last[:10]}"
    since = f" (the roles were adopted in {judge.genesis[:10]})" if judge.genesis else ""
    return [
        Finding(
            "history",
            "$",
            f"{files} governance file(s) in {len(judge.before_roles)} commit(s) ({span}) entered history before the "
            f"store had roles{since}: anyone could act then; their actors are unverified",
            "nothing to fix: this is the history before the roles; audit from the trust anchor (`eee audit --from "
            "ANCHOR`), as the server gate and CI do, to leave it out",
            severity=WARNING,
            check="before-roles",
        )
    ]


def fingerprint(key: str) -> str:
    """A public key's fingerprint as ssh-keygen prints it (``SHA256:...``)."""
    digest = hashlib.sha256(base64.b64decode(key)).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")
