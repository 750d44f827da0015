"""Who may say what: every commit's acts judged by the roles of its first parent.

A commit *acts* by the paths it changes (:data:`eee.governance.PROTECTED`): an event file
is the act its action names (retract, dispute, ...), an import manifest is ``import``, a
file under ``schemas/`` is ``release-schema``, the settings file ``settings``, the roles
files ``roles``, ``.github/`` ``forge``; a record under ``data/`` is ``add``. Which role
each act needs is :data:`eee.governance.AUTHORITY`. The rules (all of them rules of the
audit of a commit range, reading only git objects, so that they hold at the server gate and
in a forge's CI as they do in ``eee audit``):

- **authority**: in a store with roles (``governance/allowed_signers`` in the commit's
  first parent), a commit whose acts need the maintainer role is signed (git's SSH signing)
  by a principal that holds it, verified against the allowed signers **of the first parent**
  (:mod:`eee.governance.signatures`): nobody grants themselves a role in the commit that uses
  it, and a key removed before a commit no longer signs it (one signed before stays valid:
  it was judged under its own parent's roles). A key the roles do not know counts as no
  signature. A contributor may supersede a record whose adding commit they signed. With the
  setting ``require_signed_commits`` (read from the first parent) every commit needs a known
  signature. A merge is judged by what it brings in: every commit of the other side
  (``first-parent..merge``) that acts must also hold under the roles of the merge's first
  parent (a maintainer removed on main cannot sign on an old side branch and be merged);
  content of the merge itself that is in no parent is judged as the merge's own.
- **actor**: in every store, with roles or without, an added event's (and import
  manifest's) ``actor`` is who committed it: the verified signer (its email, with the
  commit's author name) where the commit is signed by a known principal, else the commit's
  author (name and email), then shown as unverified by every reader.
- **roles**: a commit that changes a roles file leaves files the store can use
  (:mod:`eee.store.roles`).
- **genesis**: the first roles file (added where the first parent has none) is trusted
  because its commit is at or below the trust anchor. Above the anchor it is refused (adopt
  roles by committing the genesis, then making it the anchor). With no anchor at all
  (``eee audit`` without ``--anchor``/``$EEE_AUDIT_ANCHOR``) a genesis signed by a
  maintainer it lists itself is accepted with one warning naming how to pin it; the server
  gate passes ``adopt_without_anchor=False``, so there it is refused.
- **before-roles**: events and manifests that entered history while the store had no roles
  (anyone could act) are reported once, as one warning line, when the audited head has roles.

The commit gate applies what it can to the index (:func:`gate_findings`): the actor rule,
and the role of the configured signing key (a pre-commit hook cannot see the signature of
the commit being made; the audit checks it). The tools ask :func:`requirement` before they
write anything.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from eee.git.cli import (
    Change,
    CommitInfo,
    GitError,
    Signature,
    authors,
    batch_check,
    commit_changes,
    ident,
    is_ancestor,
    record_adding_commit,
    rev_list,
    signing_config,
    ssh_signing,
)
from eee.governance import ANYONE, AUTHORITY_BY_ACT, EVENT_ACT, MAINTAINER, act_of_path, role_for
from eee.governance.signatures import Verified, Verifier
from eee.reporting.findings import WARNING, Finding
from eee.reporting.shown import command
from eee.store import roles as roles_mod
from eee.store import settings as settings_mod
from eee.store.paths import EVENT, EVENT_SUFFIX, EVENTS_DIR, IMPORTS_DIR, MANIFEST_SUFFIX, file_kind
from eee.store.roles import ALLOWED_SIGNERS, ROLES_FILES, KeyProblem, Roles, parse_public_key
from eee.store.tree import MAX_READ, GitTree, Tree, Unreadable

Where = Callable[[str], str]

SIGNING_LINES = (
    "git config gpg.format ssh",
    "git config user.signingkey ~/.ssh/id_ed25519.pub",
)
SIGNING_TEXT = "; ".join(f"`{line}`" for line in SIGNING_LINES)


class Act(NamedTuple):
    """One act of a commit: its name (:data:`eee.governance.AUTHORITY`), the file, the record."""

    act: str
    path: str
    record: str | None = None

    def what(self) -> str:
        found = AUTHORITY_BY_ACT.get(self.act)
        return found.what if found is not None else "change a governance event file"


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


def acts_of(changes: Iterable[Change], read: Callable[[str], bytes | None], events: Events | None = None) -> list[Act]:
    """The acts of ``changes`` (``read(path)``: the bytes a change left, for the events)."""
    events = events if events is not None else Events()
    out: list[Act] = []
    for c in changes:
        act = act_of_path(c.path)
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
        self._authors: dict[str, tuple[str, str]] = {}
        self._settings: dict[str, settings_mod.Settings] = {}
        self.before_roles: list[tuple[str, int]] = []  # (commit, governance files) judged while no roles existed
        self.events = Events(self.cwd)
        self.genesis: str | None = None

    def prepare(self, commits: list[CommitInfo]) -> None:
        """Read the authors of ``commits``, which of them (and their parents) hold roles and
        settings (one ``cat-file --batch-check``), and verify, in one git call per set of
        signers, the signatures the audit will ask about."""
        self._authors.update(authors([c.commit for c in commits], self.cwd))
        revs = list(dict.fromkeys([r for c in commits for r in (c.commit, *c.parents)]))
        self.verifier.preload(revs)
        names = [f"{r}:{settings_mod.SETTINGS_PATH}" for r in revs if r not in self._settings]
        found = batch_check(names, self.cwd) if names else {}
        for r in revs:
            if r not in self._settings and f"{r}:{settings_mod.SETTINGS_PATH}" not in found:
                self._settings[r] = settings_mod.DEFAULTS  # no settings file: the defaults, no tree read
        pairs = [(c.commit, c.parent) for c in commits if c.parent is not None and self.verifier.has_roles(c.parent)]
        self.verifier.prefetch(pairs)

    def author(self, commit: str) -> tuple[str, str]:
        if commit not in self._authors:
            self._authors.update(authors([commit], self.cwd))
        return self._authors.get(commit, ("", ""))

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
        for a merge, whether a change is its own content, in no parent)."""
        where = tree.display
        read = _read(tree)
        mine = [c for c in changes if own is None or own(c)]
        acts = acts_of(mine, read, self.events)
        parent = info.parent
        before = self.verifier.roles(parent)
        out: list[Finding] = []

        touched = {c.path for c in mine if c.path in ROLES_FILES}
        if touched:
            out += roles_findings(roles_mod.read(tree), where, touched)
        genesis = before is None and self.verifier.has_roles(info.commit)
        verified: Verified | None = None
        if before is not None:
            verified = self.verifier.verify(info.commit, parent)
        if genesis:
            self.genesis = self.genesis or info.commit
            out += self._genesis(info, where)

        governance = [a for a in acts if a.act != "add"]
        if (
            before is None
            and not genesis
            and any(a.path.startswith((EVENTS_DIR + "/", IMPORTS_DIR + "/")) for a in governance)
        ):
            self.before_roles.append(
                (info.commit, sum(1 for a in governance if a.path.startswith((EVENTS_DIR + "/", IMPORTS_DIR + "/"))))
            )
        if before is not None:
            out += self._judged(info, acts, before, verified, parent, where, "")
        out += self._signed_required(info, parent, before, verified, where, genesis)
        author = self.author(info.commit)
        out += actor_findings(mine, read, author, verified, before, where, self.events)
        if len(info.parents) > 1:
            out += self._merge(info, where)
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
    ) -> list[Finding]:
        """Each act needing a role, judged by ``roles`` (those of ``under``)."""
        out = []
        for act in needing_a_role(acts):
            role = role_for(act.act)
            if verified is not None and verified.principal and verified.role == role:
                continue
            if (
                act.act == "supersede"
                and verified is not None
                and verified.principal
                and act.record
                and self._signed_adding(act.record, verified.principal, info.parent)
            ):
                continue
            needs = f"{brought}{act.what()} needs the {role} role"
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

    def _signed_adding(self, record_uuid: str, principal: str, head: str | None) -> bool:
        """Whether the commit that added the record was signed by ``principal`` (judged by its own first parent's roles)."""
        if head is None:
            return False
        adder = record_adding_commit(record_uuid, head, self.cwd)
        if adder is None:
            return False
        from eee.governance.signatures import first_parents

        parent = first_parents([adder], self.cwd).get(adder)
        return self.verifier.verify(adder, parent).principal == principal

    def _signed_required(
        self,
        info: CommitInfo,
        parent: str | None,
        before: Roles | None,
        verified: Verified | None,
        where: Where,
        genesis: bool,
    ) -> list[Finding]:
        if parent is None or not self.settings(parent).require_signed_commits:
            return []
        if verified is not None and verified.principal:
            return []
        if genesis:
            own = self.verifier.verify(info.commit, info.commit)
            if own.principal and own.role == MAINTAINER:
                return []
        why = "but the store has no roles at the parent: no key is known" if before is None else _who(verified, parent)
        return [
            Finding(
                where(settings_mod.SETTINGS_PATH),
                "$.require_signed_commits",
                f"the store requires every commit to be signed by a known key (require_signed_commits, in the settings "
                f"of {parent[:10]}), {why}",
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
        """What a merge brings in, judged by the roles of its first parent."""
        first = info.parents[0]
        roles = self.verifier.roles(first)
        strict = self.settings(first).require_signed_commits
        if roles is None and not strict:
            return []
        try:
            side = [c for c in rev_list(first, info.commit, self.cwd) if c.commit != info.commit]
        except GitError:
            return []
        self.verifier.prefetch((c.commit, first) for c in side)
        out: list[Finding] = []
        for other in side:
            try:
                changes = commit_changes(other.commit, self.cwd, other.parent)
            except GitError:
                continue
            with GitTree(self.cwd, other.commit) as tree:
                own = _own_of_merge(other, self.cwd) if len(other.parents) > 1 else None
                acts = acts_of([c for c in changes if own is None or own(c)], _read(tree), self.events)
            verified = self.verifier.verify(other.commit, first)
            brought = f"brought in by the merge from {other.commit[:10]} ({_shown_subject(other.subject)}): "
            if roles is not None:
                out += self._judged(other, acts, roles, verified, first, where, brought)
            if strict and not verified.principal:
                out.append(
                    Finding(
                        where(settings_mod.SETTINGS_PATH),
                        "$.require_signed_commits",
                        f"{brought}the store requires signed commits (the settings of the merge's first parent "
                        f"{first[:10]}), and {_who(verified, first)}",
                        f"every commit merged is signed by a key the roles of {first[:10]} know",
                        check="authority",
                    )
                )
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
    author: tuple[str, str],
    verified: Verified | None,
    roles: Roles | None,
    where: Where,
    events: Events | None = None,
) -> list[Finding]:
    """Every added event's and import manifest's actor is who committed it (the module docstring)."""
    events = events if events is not None else Events()
    out = []
    for c in changes:
        if c.status != "A":
            continue
        is_event = c.path.startswith(EVENTS_DIR + "/") and file_kind(c.path) == EVENT
        is_manifest = c.path.startswith(IMPORTS_DIR + "/") and c.path.endswith(MANIFEST_SUFFIX)
        if not (is_event or is_manifest):
            continue
        doc = events.get(c, read) if is_event else _manifest(read, c.path)
        actor = doc.get("actor") if isinstance(doc, dict) else None
        if not isinstance(actor, dict):
            continue  # the schema rules say what is wrong with it
        name, email = actor.get("name"), actor.get("email")
        what = "event" if is_event else "import manifest"
        named = _ident_text(name, email)
        if verified is not None and verified.principal and roles is not None:
            expected = roles.email(verified.principal) or ""
            if isinstance(email, str) and email.lower() == expected.lower() and name == author[0]:
                continue
            by = f"it is signed by {verified.principal} <{expected}> (committed as {_ident_text(*author)})"
        else:
            if name == author[0] and isinstance(email, str) and email.lower() == author[1].lower():
                continue
            by = f"it was committed by {_ident_text(*author)} (unsigned, or by a key the store does not know)"
        out.append(
            Finding(
                where(c.path),
                "$.actor",
                f"the {what} names {named} as its actor, but {by}: an {what}'s actor is who commits it",
                "write it with the tools (they take git's user.name and user.email, and --commit signs), and commit "
                "it as yourself; an event naming someone else is never accepted",
                check="actor",
            )
        )
    return out


def _ident_text(name: object, email: object) -> str:
    """``Name <email>`` as a message shows it: what a commit or an event says is input, its
    control and bidirectional characters escaped, at most 200 characters each."""
    from eee.store.paths import escaped

    return f"{escaped(str(name)[:200], quote=False)} <{escaped(str(email)[:200], quote=False)}>"


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


# --- signing, for the gate and the tools ----------------------------------------------------------


class Signing(NamedTuple):
    """The user's git signing configuration and who its key is in the store's roles."""

    configured: bool  # gpg.format ssh and a key (or a key command)
    key: str | None  # the configured public key (base64), when it can be told
    fingerprint: str | None
    source: str | None  # where the key was read from
    principal: str | None  # who that key signs as (None: not a signer of the roles)
    role: str | None
    always: bool  # commit.gpgsign: every commit is signed


def fingerprint(key: str) -> str:
    digest = hashlib.sha256(base64.b64decode(key)).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def configured_key(config: dict[str, str], cwd: Path) -> tuple[str | None, str | None]:
    """(base64 public key, where it came from) of ``user.signingkey``, when it can be told
    without the private key's passphrase."""
    value = config.get("user.signingkey", "").strip()
    if not value:
        return None, None
    text = value[len("key::") :] if value.startswith("key::") else value
    if text.split(None, 1)[0] in ("ssh-ed25519", "ssh-rsa") or text.startswith(("ecdsa-", "sk-")):
        try:
            return parse_public_key(text)[1], "user.signingkey"
        except KeyProblem:
            return None, "user.signingkey"
    path = Path(os.path.expanduser(text))
    if not path.is_absolute():
        path = cwd / path
    for candidate in (path, Path(str(path) + ".pub")):
        try:
            if candidate.is_file() and candidate.stat().st_size < 64 * 1024:
                return parse_public_key(candidate.read_text(errors="replace"))[1], str(candidate)
        except (KeyProblem, OSError, IndexError):
            continue
    try:  # a private key without a passphrase: its public half
        proc = subprocess.run(
            ["ssh-keygen", "-y", "-P", "", "-f", str(path)], capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        if proc.returncode == 0:
            return parse_public_key(proc.stdout)[1], str(path)
    except (OSError, KeyProblem, IndexError):
        pass
    return None, str(path)


def signing(cwd: Path, roles: Roles | None) -> Signing:
    config = signing_config(cwd)
    ssh = config.get("gpg.format", "").strip().lower() == "ssh"
    key, source = configured_key(config, cwd) if ssh else (None, None)
    principal = roles.principal_of_key(key) if roles is not None and key else None
    return Signing(
        ssh_signing(cwd, config),
        key,
        fingerprint(key) if key else None,
        source,
        principal,
        roles.role(principal) if roles is not None else None,
        config.get("commit.gpgsign", "").strip().lower() in ("true", "yes", "on", "1"),
    )


class Requirement(NamedTuple):
    """What the next commit of a tool (or of the user, at the gate) needs, judged by HEAD's roles."""

    has_roles: bool
    acts: list[Act]  # the acts needing a role
    role: str | None  # the role they need (None: none)
    require_signed: bool  # the settings at HEAD require every commit signed
    genesis: bool  # the commit adds the first roles
    signing: Signing

    @property
    def signed(self) -> bool:
        """Whether the commit must be signed."""
        return self.role is not None or self.require_signed or self.genesis

    def to_dict(self) -> dict[str, Any]:
        return {
            "roles": self.has_roles,
            "acts": sorted({a.act for a in self.acts}),
            "needs_role": self.role,
            "needs_signature": self.signed,
            "genesis": self.genesis,
            "signing_configured": self.signing.configured,
            "key": self.signing.fingerprint,
            "principal": self.signing.principal,
            "principal_role": self.signing.role,
        }

    def said(self) -> str:
        """One line: which principal and role the commit needs, and who the configured key is."""
        if not self.signed:
            where = "this store has no roles: anyone may act" if not self.has_roles else "no act of it needs a role"
            return f"the commit needs no signature ({where})"
        if self.genesis:
            need = "the genesis of the roles: signed by the maintainer key it adds"
        elif self.role is not None:
            acts = ", ".join(sorted({a.act for a in self.acts}))
            need = f"a signature by a principal holding the {self.role} role ({acts})"
        else:
            need = "a signature by a known key (require_signed_commits)"
        if not self.signing.configured:
            you = "no signing is configured"
        elif self.signing.principal:
            you = f"your key signs as {self.signing.principal} ({self.signing.role})"
        elif self.signing.fingerprint:
            you = f"your key ({self.signing.fingerprint}) is not in {ALLOWED_SIGNERS}"
        else:
            you = "your signing key cannot be told (user.signingkey names no public key)"
        return f"the commit needs {need}; {you}"


def requirement(
    root: Path,
    acts: list[Act],
    *,
    adds_roles: bool = False,
    roles: Roles | None = None,
    head: str = "HEAD",
) -> Requirement:
    """What a commit of ``acts`` on top of ``head`` needs (``adds_roles``: it writes the roles files)."""
    verifier = Verifier(root)
    from eee.git.cli import has_commit

    at = head if has_commit(head, root) else None
    current = verifier.roles(at) if at else None
    strict = False
    if at:
        try:
            with GitTree(root, at) as tree:
                strict = settings_mod.read(tree).require_signed_commits
        except settings_mod.SettingsProblem:
            strict = False  # the settings' own rules report it
    needed = needing_a_role(acts) if current is not None else []
    genesis = adds_roles and current is None
    return Requirement(
        current is not None,
        needed,
        MAINTAINER if needed else None,
        strict,
        genesis,
        signing(root, roles if genesis and roles is not None else current),
    )


def refusal_of(
    req: Requirement, root: Path, records_signed_by: Callable[[Act, str], bool] | None = None
) -> Finding | None:
    """Why the commit must not be made (the tools then write nothing), or None: a signature
    is needed and no signing is configured, or the configured key does not hold the role
    (for the genesis: is not a maintainer the new roles list)."""
    if not req.signed:
        return None
    if not req.signing.configured:
        return Finding(
            "",
            "$",
            req.said(),
            "configure git's SSH signing, then run the command again: " + SIGNING_TEXT,
            check="authority",
        )
    if req.genesis:
        if req.signing.role == MAINTAINER:
            return None
        return Finding(
            "",
            "$",
            req.said() + ": the genesis of the roles is signed by a maintainer it lists itself",
            "sign with the key you add as a maintainer: `git config user.signingkey PATH.pub` (its .pub file)",
            check="authority",
        )
    if req.role is None:
        return None if req.signing.principal else Finding("", "$", req.said(), _key_hint(req, root), check="authority")
    if req.signing.role == req.role:
        return None
    if (
        records_signed_by is not None
        and req.signing.principal
        and all(a.act == "supersede" and records_signed_by(a, req.signing.principal) for a in req.acts)
    ):
        return None
    return Finding("", "$", req.said(), _key_hint(req, root), check="authority")


def _key_hint(req: Requirement, root: Path) -> str:
    if req.signing.principal:
        return (
            f"a principal holding the {req.role} role does this (`{command('roles', cwd=root)}` lists them), or a "
            f"maintainer gives you the role: `{command('roles', 'add', req.signing.principal, '--key', 'KEY.pub', '--role', req.role or MAINTAINER, '--commit', cwd=root)}`"
        )
    return (
        f"sign with a key listed in {ALLOWED_SIGNERS} (`git config user.signingkey PATH.pub`), or ask a maintainer "
        f"to add yours: `{command('roles', 'add', 'NAME', '--key', 'KEY.pub', '--role', 'contributor', '--commit', cwd=root)}`"
    )


def own_record(root: Path) -> Callable[[Act, str], bool]:
    """Whether the record an act names was added by a commit ``principal`` signed (HEAD's history)."""
    verifier = Verifier(root)

    def signed(act: Act, principal: str) -> bool:
        if not act.record:
            return False
        adder = record_adding_commit(act.record, "HEAD", root)
        if adder is None:
            return False
        from eee.governance.signatures import first_parents

        return verifier.verify(adder, first_parents([adder], root).get(adder)).principal == principal

    return signed


def gate_findings(root: Path, changes: list[Change], tree: Tree) -> list[Finding]:
    """What the commit gate checks of the commit being made (``changes``: staged, ``tree``:
    the index): the actor of every added event and manifest is the author-to-be, and where
    the store has roles (at HEAD) and the staged acts need a role (or the settings require
    signed commits, or the first roles are added), that signing is configured and its key
    holds the role. The signature itself is the audit's: a hook cannot see it."""
    read = _read(tree)
    events = Events(root)
    acts = acts_of(changes, read, events)
    governance_files = [
        c for c in changes if c.status == "A" and c.path.startswith((EVENTS_DIR + "/", IMPORTS_DIR + "/"))
    ]
    touched = {c.path for c in changes if c.path in ROLES_FILES}
    settings_at_head = f"HEAD:{settings_mod.SETTINGS_PATH}"
    if not (governance_files or touched or needing_a_role(acts)) and settings_at_head not in batch_check(
        [settings_at_head], root
    ):
        return []  # the common commit (records only): signatures matter only where the settings require them
    out: list[Finding] = []
    new_roles = roles_mod.read(tree) if touched else None
    out += roles_findings(new_roles, lambda p: p, touched)
    req = requirement(
        root, acts, adds_roles=ALLOWED_SIGNERS in touched and tree.exists(ALLOWED_SIGNERS), roles=new_roles
    )
    if governance_files:
        me = ident(root) or ("", "")
        verified = None
        if req.has_roles and req.signing.principal:
            verified = Verified(Signature("G", req.signing.principal, ""), req.signing.principal, req.signing.role)
        out += actor_findings(governance_files, read, me, verified, Verifier(root).roles("HEAD"), lambda p: p, events)
    if not req.signed:
        return out
    first = req.acts[0].path if req.acts else ALLOWED_SIGNERS if req.genesis else settings_mod.SETTINGS_PATH
    problem = refusal_of(req, root, own_record(root) if any(a.act == "supersede" for a in req.acts) else None)
    if problem is not None:
        out.append(Finding(first, "$", problem.message, problem.hint, check="authority"))
    elif not req.signing.always and os.environ.get(SIGNED_ENV) != "1":
        out.append(
            Finding(
                first,
                "$",
                req.said() + "; make sure this commit is signed (`git commit -S`): the audit refuses it unsigned",
                "sign every commit: `git config commit.gpgsign true`",
                severity=WARNING,
                check="authority",
            )
        )
    return out


# The tools commit with -S and tell the gate so (:func:`eee.git.cli.commit`): it only spares a
# reminder, the audit checks the signature.
SIGNED_ENV = "EEE_COMMIT_SIGNED"
