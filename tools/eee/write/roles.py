"""Changing the roles: ``eee roles add|remove|codeowners`` through the one commit stack.

The two roles files (:mod:`eee.store.roles`) and, where it exists (or when asked),
``.github/CODEOWNERS`` (:mod:`eee.governance.owners`) are written whole, each validated
before anything is written: the new files must parse without a problem, keep at least one
maintainer, and (for CODEOWNERS) give the protected paths an owner. With ``commit`` the
change is one commit through the hooks, signed (:meth:`eee.write.commit.Transaction.commit`);
before anything is written the commit's requirement is checked (:func:`eee.write.signing.requirement`):
a change of the roles needs a maintainer of the roles at HEAD, and the first roles (the
genesis, in a store without them) a signature by the maintainer key they add.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eee.governance.owners import CODEOWNERS, NoOwners, codeowners
from eee.reporting.findings import Finding, Refused, refusal
from eee.rules.authority import Act, fingerprint
from eee.store import roles as roles_mod
from eee.store.roles import (
    ALLOWED_SIGNERS,
    EMAIL_RE,
    FORGE_RE,
    MAINTAINER,
    PRINCIPAL_RE,
    ROLES,
    ROLES_FILE,
    Entry,
    KeyProblem,
    Roles,
    Signer,
    parse_allowed_signers,
    parse_public_key,
    parse_roles_yaml,
)
from eee.store.tree import WorkTree
from eee.write.commit import transaction
from eee.write.signing import refusal_of, requirement

KEY_MAX_BYTES = 64 * 1024


def current(root: Path) -> tuple[bytes | None, bytes | None, Roles | None]:
    """The roles files of the work tree (bytes or None) and their roles; Refused when they cannot be used."""
    tree = WorkTree(root)
    found = roles_mod.read(tree)
    if found is not None and found.problems:
        raise Refused(
            [Finding(p.file, p.pointer, p.message, p.hint or None, line=p.line, check="roles") for p in found.problems]
        )

    def raw(rel: str) -> bytes | None:
        return tree.read(rel, roles_mod.MAX_BYTES) if tree.exists(rel) else None

    return raw(ALLOWED_SIGNERS), raw(ROLES_FILE), found


def read_key(path: Path) -> tuple[str, str, str]:
    """(keytype, key, comment) of a public key file; Refused naming the file."""
    try:
        data = path.read_bytes() if path.is_file() and path.stat().st_size <= KEY_MAX_BYTES else None
    except OSError as exc:
        raise refusal(f"cannot read the key: {exc.strerror}", file=str(path)) from None
    if data is None:
        raise refusal("no such key file (a public key, e.g. ~/.ssh/id_ed25519.pub)", file=str(path))
    try:
        return parse_public_key(data.decode("utf-8", "replace"))
    except KeyProblem as exc:
        raise refusal(str(exc), "give the public key: the .pub file beside the private one", file=str(path)) from None


def _principal(name: str) -> str:
    if not PRINCIPAL_RE.match(name):
        raise refusal(
            f"principal {name!r} is not a plain name (letters, digits and ._@+-, at most 128)",
            "name the principal by an email address, e.g. alice@example.org",
        )
    return name


def plan_add(
    root: Path, name: str, key_file: Path, role: str, email: str | None = None, forge: str | None = None
) -> dict[str, Any]:
    """What ``eee roles add`` writes: the files and their new content, and what changes."""
    name = _principal(name)
    if role not in ROLES:
        raise refusal(f"role {role!r} is not one of {', '.join(ROLES)}")
    if email is not None and not EMAIL_RE.match(email):
        raise refusal(f"--email {email!r} is not an email address")
    if forge is not None and not FORGE_RE.match(forge.removeprefix("@")):
        raise refusal(f"--forge {forge!r} is not a forge user (or org/team)")
    keytype, key, comment = read_key(key_file)
    signers_bytes, roles_bytes, found = current(root)
    entries = dict(found.entries) if found is not None else {}
    known = found.principal_of_key(key) if found is not None else None
    if known is not None and known != name:
        raise refusal(
            f"this key is already listed for {known}: one key speaks for one principal",
            f"remove it first (`eee roles remove {known} --key {key_file}`) or give another key",
        )
    add = [] if known == name else [Signer(name, keytype, key, comment or name, 0)]
    old = entries.get(name)
    email = email if email is not None else (old.email if old else None)
    forge = forge.removeprefix("@") if forge is not None else (old.forge if old else None)
    if role == MAINTAINER or email or forge or not EMAIL_RE.match(name):
        entries[name] = Entry(role, email, forge)
    else:
        entries.pop(name, None)  # a contributor needs no entry
    new_signers = roles_mod.render_signers(signers_bytes, add, set())
    plan = _plan(root, new_signers, entries, roles_bytes)
    plan["change"] = {
        "add": name,
        "role": role,
        "key": fingerprint(key),
        "new_key": bool(add),
        "was": (found.role(name) if found is not None else None),
    }
    return plan


def plan_remove(root: Path, name: str, key_file: Path | None = None) -> dict[str, Any]:
    """What ``eee roles remove`` writes: every key of ``name`` (or the one given) gone, its
    entry too when no key is left."""
    signers_bytes, roles_bytes, found = current(root)
    if found is None or name not in found.principals():
        raise refusal(f"{name!r} is not a principal of the store's roles", "`eee roles` lists them")
    keys = {s.key for s in found.keys_of(name)}
    if key_file is not None:
        _, key, _ = read_key(key_file)
        if key not in keys:
            raise refusal(f"this key is not one of {name}'s", file=str(key_file))
        keys = {key}
    entries = dict(found.entries)
    if keys == {s.key for s in found.keys_of(name)}:
        entries.pop(name, None)
    new_signers = roles_mod.render_signers(signers_bytes, [], keys)
    plan = _plan(root, new_signers, entries, roles_bytes)
    plan["change"] = {"remove": name, "keys": sorted(fingerprint(k) for k in keys), "was": found.role(name)}
    return plan


def _protected_paths(root: Path) -> tuple[str, ...]:
    """The store's protected_paths (its settings file; the defaults where it has none or it cannot be used)."""
    from eee.store import settings

    try:
        return settings.read(WorkTree(root)).protected_paths
    except settings.SettingsProblem:
        return settings.PROTECTED_PATHS


def plan_codeowners(root: Path) -> dict[str, Any]:
    _, _, found = current(root)
    if found is None:
        raise refusal("the store has no roles: CODEOWNERS is written from them", "add them first: `eee roles add ...`")
    try:
        data = codeowners(found, _protected_paths(root))
    except NoOwners as exc:
        raise refusal(str(exc)) from None
    return {"files": {CODEOWNERS: data}, "roles": found, "change": {"codeowners": True}}


def _plan(root: Path, new_signers: bytes, entries: dict[str, Entry], roles_bytes: bytes | None) -> dict[str, Any]:
    signers, problems = parse_allowed_signers(new_signers)
    parsed_entries, more = parse_roles_yaml(roles_mod.render_roles(entries))
    new = Roles(signers, parsed_entries, problems + more)
    if new.problems:
        raise Refused(
            [Finding(p.file, p.pointer, p.message, p.hint or None, line=p.line, check="roles") for p in new.problems]
        )
    if not new.holders(MAINTAINER):
        raise refusal(
            "the roles would have no maintainer left: nobody could change them again",
            "add another maintainer first (`eee roles add NAME --key KEY.pub --role maintainer --commit`)",
        )
    files: dict[str, bytes] = {ALLOWED_SIGNERS: new_signers, ROLES_FILE: roles_mod.render_roles(entries)}
    if (root / CODEOWNERS).is_file():
        try:
            files[CODEOWNERS] = codeowners(new, _protected_paths(root))
        except NoOwners as exc:
            raise refusal(f"{CODEOWNERS} is kept from the roles, but {exc}") from None
    tree = WorkTree(root)
    files = {rel: data for rel, data in files.items() if not (tree.exists(rel) and tree.read(rel) == data)}
    return {"files": files, "roles": new}


def apply(
    root: Path, plan: dict[str, Any], subject: str, *, dry_run: bool = False, commit: bool = False
) -> dict[str, Any]:
    """Write (and with ``commit`` commit) a plan; refused before anything is written when the
    commit would need a signature that is not configured or a role the key does not hold."""
    files: dict[str, bytes] = plan["files"]
    acts = [Act("roles", rel) for rel in files]
    # the first roles (HEAD has none) are the genesis: signed by a maintainer they list themselves
    req = requirement(root, acts, adds_roles=True, roles=plan["roles"])
    result: dict[str, Any] = {
        **plan["change"],
        "files": sorted(files),
        "dry_run": dry_run,
        "committed": False,
        "commit": None,
        "signing": {**req.to_dict(), "said": req.said()},
    }
    if not files:
        result["unchanged"] = True
        return result
    if commit and not dry_run:
        problem = refusal_of(req, root)
        if problem is not None:
            raise Refused(problem)
    if dry_run:
        return result
    with transaction(root, stage=commit) as tx:
        tx.replace(sorted(files.items()))
        if commit:
            result["commit"] = tx.commit([subject, "Roles: " + ", ".join(sorted(files)) + "."])
            result["committed"] = True
    return result
