"""Signing, the write side of authority: the user's git signing configuration and who its
key is in the store's roles (:func:`signing`, which asks ``ssh-keygen`` for a private key's
public half), what the next commit needs (:func:`requirement`) and why it must not be made
(:func:`refusal_of`), asked by the tools before they write anything; and the commit gate's
check of what is staged (:func:`gate_findings`, hook ``eee-authority``): the actor rule, and
the role of the configured signing key (a pre-commit hook cannot see the signature of the
commit being made; the audit checks it).

Moved out of :mod:`eee.rules.authority` (issue 34.5), unchanged: the rules there only verify
what is committed (signatures through :mod:`eee.governance.signatures`); this module judges
the commit to be made through them (:func:`eee.rules.authority.acts_of`,
:func:`eee.rules.authority.actor_findings`, :func:`eee.rules.authority.record_signed_by`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from eee.git.cli import Change, Signature, batch_check, committer_ident, signing_config, ssh_signing
from eee.governance import MAINTAINER, holds, role_for
from eee.governance.signatures import Verified, Verifier
from eee.reporting.findings import WARNING, Finding
from eee.reporting.shown import command
from eee.rules.authority import (
    SIGNING_TEXT,
    Act,
    Events,
    _ident_text,
    _read,
    actor_findings,
    acts_of,
    fingerprint,
    needing_a_role,
    record_signed_by,
    roles_findings,
)
from eee.store import roles as roles_mod
from eee.store import settings as settings_mod
from eee.store.paths import EVENTS_DIR, EXPERIMENTS_DIR, IMPORTS_DIR
from eee.store.roles import ALLOWED_SIGNERS, ROLES_FILES, KeyProblem, Roles, parse_public_key
from eee.store.tree import GitTree, Tree


class Signing(NamedTuple):
    """The user's git signing configuration and who its key is in the store's roles."""

    configured: bool  # gpg.format ssh and a key (or a key command)
    key: str | None  # the configured public key (base64), when it can be told
    fingerprint: str | None
    source: str | None  # where the key was read from
    principal: str | None  # who that key signs as (None: not a signer of the roles)
    role: str | None
    always: bool  # commit.gpgsign: every commit is signed


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
    committer: tuple[str, str] | None = None  # who git will record as the committer (None: git cannot tell)
    signer_email: str | None = None  # the email the roles give the signing key's principal (its events name it)

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
            "committer": list(self.committer) if self.committer else None,
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
    """What a commit of ``acts`` on top of ``head`` needs (``adds_roles``: it writes the roles
    files), judged as the audit judges it: by the roles and settings of ``head``, the commit
    it is made on."""
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
    role = None
    if needed:  # the highest role the acts need (a maintainer's acts, else a known key's: an experiment card)
        role = MAINTAINER if any(role_for(a.act) == MAINTAINER for a in needed) else role_for(needed[0].act)
    genesis = adds_roles and current is None
    judged = roles if genesis and roles is not None else current
    found = signing(root, judged)
    return Requirement(
        current is not None,
        needed,
        role,
        strict,
        genesis,
        found,
        committer_ident(root),
        (judged.email(found.principal) or found.principal) if judged is not None and found.principal else None,
    )


def identity_refusal(req: Requirement) -> Finding | None:
    """Who acts is who commits: where the configured key signs as a principal of the roles,
    git's committer identity (``git var GIT_COMMITTER_IDENT``) carries that principal's
    email, else the event a tool writes names one person and its signature another (the
    audit refuses it). The exact ``git config`` line to run; None when they agree."""
    if req.signer_email is None or req.signing.principal is None:
        return None
    committer = req.committer or ("", "")
    if committer[1].lower() == req.signer_email.lower():
        return None
    lines = [f"git config user.email {shlex.quote(req.signer_email)}"]
    if os.environ.get("GIT_COMMITTER_EMAIL"):
        lines.append("unset GIT_COMMITTER_EMAIL")
    return Finding(
        "",
        "$",
        f"git commits as {_ident_text(*committer)} (git var GIT_COMMITTER_IDENT), but your signing key signs as "
        f"{req.signing.principal}, whose events name {req.signer_email}: who acts is who commits, so the two agree",
        "run: " + "; ".join(f"`{line}`" for line in lines) + " (then the command again); nothing was written",
        check="actor",
    )


def refusal_of(
    req: Requirement,
    root: Path,
    records_signed_by: Callable[[Act, str], bool] | None = None,
    *,
    identity: bool = True,
) -> Finding | None:
    """Why the commit must not be made (the tools then write nothing), or None: git's
    committer is not the signing key's principal (:func:`identity_refusal`, unless not
    ``identity``: the gate, where the actor rule reads the staged events themselves); a
    signature is needed and no signing is configured, or the configured key does not hold
    the role (for the genesis: is not a maintainer the new roles list)."""
    problem = identity_refusal(req) if identity else None
    if problem is not None:
        return problem
    if not req.signed:
        return None
    if not req.signing.configured:
        hint = "configure git's SSH signing, then run the command again: " + SIGNING_TEXT
        if req.role is not None:
            hint += _dispute_hint(req, root)
        return Finding("", "$", req.said(), hint, check="authority")
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
    if holds(req.signing.role, req.role):
        return None
    if (
        records_signed_by is not None
        and req.signing.principal
        and all(a.act == "supersede" and records_signed_by(a, req.signing.principal) for a in req.acts)
    ):
        return None
    return Finding("", "$", req.said(), _key_hint(req, root) + _dispute_hint(req, root), check="authority")


def _dispute_hint(req: Requirement, root: Path) -> str:
    """What anyone may do instead of an act that needs a role: raise a dispute."""
    records = sorted({a.record for a in req.acts if a.record})
    uuid = records[0] if len(records) == 1 else "UUID"
    dispute = command("dispute", uuid, "--reason", "...", "--reference", "URL", "--commit", cwd=root)
    return f"; anyone may contest a record instead, and a maintainer decides: `{dispute}`"


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


def own_record(root: Path, head: str = "HEAD") -> Callable[[Act, str], bool]:
    """Whether the record an act names was added by commits ``principal`` signed, on
    ``head``'s mainline (:func:`record_signed_by`, as the audit asks it)."""
    verifier = Verifier(root)

    def signed(act: Act, principal: str) -> bool:
        return bool(act.record) and record_signed_by(verifier, str(act.record), principal, head)

    return signed


def gate_findings(root: Path, changes: list[Change], tree: Tree) -> list[Finding]:
    """What the commit gate checks of the commit being made (``changes``: staged, ``tree``:
    the index): the actor of every added event and manifest is the committer-to-be, and where
    the store has roles (at HEAD) and the staged acts need a role (or the settings require
    signed commits, or the first roles are added), that signing is configured and its key
    holds the role. The signature itself is the audit's: a hook cannot see it."""
    read = _read(tree)
    events = Events(root)
    settings_at_head = f"HEAD:{settings_mod.SETTINGS_PATH}"
    has_settings = settings_at_head in batch_check([settings_at_head], root)
    protected = settings_mod.PROTECTED_PATHS
    if has_settings:
        try:
            protected = settings_mod.of_commit(root, "HEAD").protected_paths
        except settings_mod.SettingsProblem:
            pass  # the settings' own rules report it; the defaults protect meanwhile
    acts = acts_of(changes, read, events, protected)
    governance_files = [
        c
        for c in changes
        if c.status == "A" and c.path.startswith((EVENTS_DIR + "/", IMPORTS_DIR + "/", EXPERIMENTS_DIR + "/"))
    ]
    touched = {c.path for c in changes if c.path in ROLES_FILES}
    if not (governance_files or touched or needing_a_role(acts)) and not has_settings:
        return []  # the common commit (records only): signatures matter only where the settings require them
    out: list[Finding] = []
    new_roles = roles_mod.read(tree) if touched else None
    out += roles_findings(new_roles, lambda p: p, touched)
    req = requirement(
        root, acts, adds_roles=ALLOWED_SIGNERS in touched and tree.exists(ALLOWED_SIGNERS), roles=new_roles
    )
    if governance_files:
        me = req.committer or ("", "")
        verified = None
        if req.has_roles and req.signing.principal:
            verified = Verified(Signature("G", req.signing.principal, ""), req.signing.principal, req.signing.role)
        out += actor_findings(governance_files, read, me, verified, Verifier(root).roles("HEAD"), lambda p: p, events)
    if not req.signed:
        return out
    first = req.acts[0].path if req.acts else ALLOWED_SIGNERS if req.genesis else settings_mod.SETTINGS_PATH
    signed_by = own_record(root) if any(a.act == "supersede" for a in req.acts) else None
    problem = refusal_of(req, root, signed_by, identity=False)  # the actor rule above reads the events themselves
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
