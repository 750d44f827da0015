"""The store's roles: who may sign, and which role each signer holds. Two files, read from a tree.

- ``governance/allowed_signers``: git's allowed-signers format, the file
  ``gpg.ssh.allowedSignersFile`` reads (``principal [options] keytype key [comment]``, one
  key per line; ``#`` comments and blank lines). The principal is the identity a signature
  is verified as. Parsed here strictly, line by line, bounded: one principal per line (a
  key that speaks for two would make the signer ambiguous), no wildcard, a key given once,
  only the option ``namespaces="..."`` (with ``git`` in it). The time options
  ``valid-after`` / ``valid-before`` are refused: a key's validity follows history order
  (the roles of each commit's first parent), never a date a signer controls; a CA key
  (``cert-authority``) is refused too (each principal signs with its own key).
- ``governance/roles.yaml``: which principal holds which role (``maintainer``; a signer
  without an entry is a ``contributor``), with its email (the identity its events name;
  the principal itself when it is an email address) and, optionally, its forge handle
  (for ``.github/CODEOWNERS``)::

      principals:
        alice@example.org:
          role: maintainer
          forge: alice

A store has roles when ``governance/allowed_signers`` exists; without it anyone may act
(every act is still judged by who committed it). Which role may take which act is declared
in :data:`eee.governance.AUTHORITY`; the rules that judge commits by it are
:mod:`eee.rules.authority`. Readers judge a commit by the roles of its first parent (the
callers pass that tree): nobody grants themselves a role in the commit that uses it.

A line that cannot be used grants nothing: it is a :class:`RolesProblem` (file, line,
message, hint), and the valid lines still count.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, NamedTuple

from eee.store.tree import Tree, Unreadable

ALLOWED_SIGNERS = "governance/allowed_signers"
ROLES_FILE = "governance/roles.yaml"
ROLES_FILES = (ALLOWED_SIGNERS, ROLES_FILE)

MAINTAINER = "maintainer"
CONTRIBUTOR = "contributor"
ROLES = (MAINTAINER, CONTRIBUTOR)  # a signer without an entry in roles.yaml is a contributor

MAX_BYTES = 256 * 1024  # either file: far beyond a store's signers
MAX_LINE = 16 * 1024  # one allowed-signers line (an RSA-16384 key is ~2,800 characters)
MAX_SIGNERS = 2000

KEY_TYPES = (
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
)
PRINCIPAL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")
EMAIL_RE = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+$")
FORGE_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9][A-Za-z0-9_.-]{0,99})?$")
TIME_OPTIONS = ("valid-after", "valid-before")

_SIGNERS_HINT = (
    "each line is `principal keytype key [comment]` (e.g. `alice@example.org ssh-ed25519 AAAA... alice`); "
    "write it with `eee roles add NAME --key KEY.pub --role ROLE`"
)


class Signer(NamedTuple):
    """One line of the allowed-signers file: a principal and one public key."""

    principal: str
    keytype: str
    key: str  # base64, as written
    comment: str
    line: int
    namespaces: str | None = None  # the namespaces="..." option as written, or None

    def public_key(self) -> str:
        return f"{self.keytype} {self.key}"

    def line_text(self) -> str:
        option = f' namespaces="{self.namespaces}"' if self.namespaces is not None else ""
        tail = f" {self.comment}" if self.comment else ""
        return f"{self.principal}{option} {self.keytype} {self.key}{tail}"


class Entry(NamedTuple):
    """A principal's entry in roles.yaml."""

    role: str
    email: str | None = None
    forge: str | None = None


class RolesProblem(NamedTuple):
    """A line (or key) of a roles file that cannot be used; it grants nothing."""

    file: str
    line: int | None
    pointer: str
    message: str
    hint: str


class KeyProblem(ValueError):
    """A public key that cannot be read (the message says why)."""


def parse_public_key(text: str) -> tuple[str, str, str]:
    """(keytype, base64 key, comment) of one OpenSSH public key line (a ``.pub`` file, or
    ``key::...``); :class:`KeyProblem` when it is not one this store accepts."""
    parts = text.strip().split(None, 2)
    if len(parts) < 2:
        raise KeyProblem("not an OpenSSH public key (`keytype base64-key [comment]`, as in a .pub file)")
    keytype, key = parts[0], parts[1]
    problem = key_problem(keytype, key)
    if problem:
        raise KeyProblem(problem)
    return keytype, key, parts[2].strip() if len(parts) > 2 else ""


def key_problem(keytype: str, key: str) -> str | None:
    """Why ``keytype key`` is not a public key this store accepts, or None."""
    if keytype not in KEY_TYPES:
        if keytype.startswith("-----BEGIN") or "PRIVATE" in keytype:
            return "this is a private key: give the public one (the .pub file)"
        return f"key type {_shown(keytype)} is not an SSH signing key type ({', '.join(KEY_TYPES)})"
    try:
        blob = base64.b64decode(key.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return "the key is not base64"
    if len(blob) < 4:
        return "the key is too short to be one"
    size = int.from_bytes(blob[:4], "big")
    if blob[4 : 4 + size] != keytype.encode("ascii"):
        return f"the key's data is not a {keytype} key (it names another type inside)"
    return None


def _shown(text: str) -> str:
    """Untrusted text as a message shows it: printable ASCII, at most 60 characters."""
    clean = "".join(c if 32 <= ord(c) < 127 else "?" for c in text[:60])
    return repr(clean + ("..." if len(text) > 60 else ""))


def _split_options(text: str) -> tuple[str, str] | None:
    """(options, rest) where ``text`` starts with an options field (quotes may hold spaces
    and commas); None when the quotes do not close."""
    quoted = False
    for i, c in enumerate(text):
        if c == '"':
            quoted = not quoted
        elif c in " \t" and not quoted:
            return text[:i], text[i:].lstrip(" \t")
    return None if quoted else (text, "")


def _options(field: str) -> tuple[str | None, str | None]:
    """(namespaces value, problem) of an options field."""
    parts: list[str] = []
    current, quoted = "", False
    for c in field:
        if c == '"':
            quoted = not quoted
        if c == "," and not quoted:
            parts.append(current)
            current = ""
        else:
            current += c
    parts.append(current)
    namespaces = None
    for part in parts:
        name, eq, value = part.partition("=")
        low = name.strip().lower()
        if low in TIME_OPTIONS:
            return None, (
                f"the time option {low} is refused: a key's validity follows history order (the roles of each "
                "commit's first parent), never a date the signer's own clock or commit can claim"
            )
        if low == "cert-authority":
            return None, "cert-authority is refused: every principal signs with its own key, listed here"
        if low != "namespaces" or not eq:
            return None, f'unknown option {_shown(name)} (only namespaces="git" is accepted)'
        if not (len(value) >= 2 and value[0] == value[-1] == '"'):
            return None, 'namespaces takes a quoted list, e.g. namespaces="git"'
        listed = [v.strip() for v in value[1:-1].split(",")]
        if "git" not in listed:
            return None, f'namespaces="{value[1:-1]}" leaves out git: this key could never sign a commit'
        if not all(re.fullmatch(r"[A-Za-z0-9._@-]+", v) for v in listed):
            return None, f"namespaces {_shown(value)} holds a character a namespace never has"
        namespaces = ",".join(listed)
    return namespaces, None


def parse_allowed_signers(data: bytes, file: str = ALLOWED_SIGNERS) -> tuple[list[Signer], list[RolesProblem]]:
    """The signers of an allowed-signers file and the problems of the lines that grant nothing."""
    problems: list[RolesProblem] = []

    def problem(line: int | None, message: str, hint: str = _SIGNERS_HINT) -> None:
        problems.append(RolesProblem(file, line, "$", message, hint))

    if len(data) > MAX_BYTES:
        problem(None, f"the file is larger than {MAX_BYTES} bytes: no allowed-signers file of a store is", "")
        return [], problems
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem(data.count(b"\n", 0, exc.start) + 1, "not UTF-8 text", "save the file as UTF-8 (keys are ASCII)")
        return [], problems
    signers: list[Signer] = []
    seen_keys: dict[str, int] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r").strip(" \t")
        if not line or line.startswith("#"):
            continue
        if len(raw) > MAX_LINE:
            problem(number, f"the line is longer than {MAX_LINE} characters")
            continue
        if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in line):
            problem(number, "the line holds a control character")
            continue
        principals, _, rest = line.partition(" ") if " " in line else line.partition("\t")
        rest = rest.lstrip(" \t")
        if principals.startswith('"'):
            problem(number, "a quoted principal is refused: write the principal plainly (letters, digits, ._@+-)")
            continue
        names = principals.split(",")
        if len(names) > 1:
            problem(
                number,
                f"the key is given to {len(names)} principals ({_shown(principals)}): one key speaks for one "
                "principal, or who signed is ambiguous",
                "list the key once, under one principal",
            )
            continue
        principal = names[0]
        if not PRINCIPAL_RE.match(principal):
            wild = any(c in principal for c in "*?!")
            problem(
                number,
                f"principal {_shown(principal)} "
                + ("is a pattern: wildcards are refused" if wild else "is not a plain name (letters, digits, ._@+-)"),
                "name one principal, e.g. alice@example.org",
            )
            continue
        namespaces = None
        if rest and rest.split(None, 1)[0] not in KEY_TYPES:
            split = _split_options(rest)
            if split is None:
                problem(number, "the options' quotes do not close")
                continue
            field, rest = split
            namespaces, bad = _options(field)
            if bad:
                problem(number, bad, "remove the option: `principal keytype key [comment]`")
                continue
        parts = rest.split(None, 2)
        if len(parts) < 2:
            problem(number, "no key: a line is `principal keytype key [comment]`")
            continue
        keytype, key = parts[0], parts[1]
        bad = key_problem(keytype, key)
        if bad:
            problem(number, bad)
            continue
        if key in seen_keys:
            problem(
                number,
                f"the key of line {seen_keys[key]} is listed again: one key, one line",
                "remove the repeated line",
            )
            continue
        if len(signers) >= MAX_SIGNERS:
            problem(number, f"more than {MAX_SIGNERS} keys: the rest are not read", "")
            break
        seen_keys[key] = number
        signers.append(Signer(principal, keytype, key, parts[2].strip() if len(parts) > 2 else "", number, namespaces))
    return signers, problems


def parse_roles_yaml(data: bytes, file: str = ROLES_FILE) -> tuple[dict[str, Entry], list[RolesProblem]]:
    """Each principal's entry in roles.yaml, and the problems (an entry with one grants nothing)."""
    hint = (
        "roles.yaml is `principals:` then, for each principal, `role: maintainer|contributor` and optionally "
        "`email:` and `forge:`; write it with `eee roles add`"
    )
    problems: list[RolesProblem] = []
    if len(data) > MAX_BYTES:
        return {}, [RolesProblem(file, None, "$", f"the file is larger than {MAX_BYTES} bytes", hint)]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {}, [RolesProblem(file, None, "$", "not UTF-8 text", "save the file as UTF-8")]
    from eee.store.safeyaml import YAMLRefused, load  # lazy: only where roles exist

    try:
        doc = load(text)
    except YAMLRefused as exc:
        return {}, [RolesProblem(file, None, "$", f"not plain YAML: {exc}", hint)]
    if doc is None:
        return {}, []
    if not isinstance(doc, dict) or set(doc) - {"principals"}:
        extra = sorted(str(k) for k in doc) if isinstance(doc, dict) else []
        return {}, [
            RolesProblem(file, None, "$", f"the file is a mapping with one key, principals (found {extra})", hint)
        ]
    listed = doc.get("principals") or {}
    if not isinstance(listed, dict):
        return {}, [RolesProblem(file, None, "$.principals", "principals is a mapping of principal: entry", hint)]
    entries: dict[str, Entry] = {}
    for name, value in listed.items():
        where = f"$.principals[{_shown(str(name))}]"
        if not isinstance(name, str) or not PRINCIPAL_RE.match(name):
            problems.append(RolesProblem(file, None, where, f"principal {_shown(str(name))} is not a plain name", hint))
            continue
        where = f"$.principals.{name}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else f'$.principals["{name}"]'
        if not isinstance(value, dict):
            problems.append(RolesProblem(file, None, where, "an entry is a mapping (role, email, forge)", hint))
            continue
        unknown = sorted(str(k) for k in value if k not in ("role", "email", "forge"))
        role, email, forge = value.get("role"), value.get("email"), value.get("forge")
        if unknown:
            problems.append(RolesProblem(file, None, where, f"unknown key(s) {', '.join(unknown)}", hint))
            continue
        if role not in ROLES:
            problems.append(
                RolesProblem(
                    file, None, where + ".role", f"role {_shown(str(role))} is not one of {', '.join(ROLES)}", hint
                )
            )
            continue
        if email is not None and not (isinstance(email, str) and EMAIL_RE.match(email)):
            problems.append(
                RolesProblem(file, None, where + ".email", f"email {_shown(str(email))} is not an address", hint)
            )
            continue
        if forge is not None and not (isinstance(forge, str) and FORGE_RE.match(forge.removeprefix("@"))):
            problems.append(
                RolesProblem(
                    file,
                    None,
                    where + ".forge",
                    f"forge handle {_shown(str(forge))} is not a forge user or org/team",
                    hint,
                )
            )
            continue
        entries[name] = Entry(role, email, forge.removeprefix("@") if isinstance(forge, str) else None)
    return entries, problems


class Roles:
    """The roles of one tree: its signers and their entries (see the module docstring)."""

    def __init__(self, signers: list[Signer], entries: dict[str, Entry], problems: list[RolesProblem]) -> None:
        self.signers = signers
        self.problems = list(problems)
        keyed = {s.principal for s in signers}
        self.entries: dict[str, Entry] = {}
        for name, entry in entries.items():
            if name not in keyed:
                self.problems.append(
                    RolesProblem(
                        ROLES_FILE,
                        None,
                        f"$.principals[{name!r}]",
                        f"{name} holds the role {entry.role} but has no key in {ALLOWED_SIGNERS}: it could never sign",
                        f"add the key (`eee roles add {name} --key KEY.pub --role {entry.role}`) or remove the entry",
                    )
                )
                continue
            self.entries[name] = entry
        for name in sorted(keyed):
            if self.email(name) is None:
                self.problems.append(
                    RolesProblem(
                        ROLES_FILE,
                        None,
                        "$.principals",
                        f"principal {name} is no email address and {ROLES_FILE} gives it none: its events could not "
                        "be tied to it",
                        f"give it an email: `eee roles add {name} --key KEY.pub --role ROLE --email ADDRESS`",
                    )
                )
        self._by_key = {s.key: s.principal for s in signers}

    def principals(self) -> list[str]:
        return sorted({s.principal for s in self.signers})

    def role(self, principal: str | None) -> str | None:
        """The principal's role (None: not a signer of the store)."""
        if principal is None or principal not in self._principals():
            return None
        entry = self.entries.get(principal)
        return entry.role if entry is not None else CONTRIBUTOR

    def _principals(self) -> set[str]:
        return {s.principal for s in self.signers}

    def email(self, principal: str) -> str | None:
        """The email the principal's events name: its entry's, else the principal itself when it is an address."""
        entry = self.entries.get(principal)
        if entry is not None and entry.email:
            return entry.email
        return principal if EMAIL_RE.match(principal) else None

    def forge(self, principal: str) -> str | None:
        entry = self.entries.get(principal)
        return entry.forge if entry is not None else None

    def holders(self, role: str) -> list[str]:
        return [p for p in self.principals() if self.role(p) == role]

    def principal_of_key(self, key: str) -> str | None:
        """The principal a base64 public key is listed for."""
        return self._by_key.get(key)

    def keys_of(self, principal: str) -> list[Signer]:
        return [s for s in self.signers if s.principal == principal]


def read(tree: Tree) -> Roles | None:
    """The roles of ``tree`` (None: the store has no ``governance/allowed_signers``, so
    anyone may act); a file that cannot be read is a problem of the result, granting nothing."""
    if not tree.exists(ALLOWED_SIGNERS):
        if tree.exists(ROLES_FILE):
            return Roles(
                [],
                {},
                [
                    RolesProblem(
                        ROLES_FILE,
                        None,
                        "$",
                        f"{ROLES_FILE} is there but {ALLOWED_SIGNERS} is not: roles without keys grant nothing",
                        "add the keys with `eee roles add NAME --key KEY.pub --role ROLE`",
                    )
                ],
            )
        return None
    signers, problems = _parsed(tree, ALLOWED_SIGNERS, parse_allowed_signers)
    entries: dict[str, Entry] = {}
    if tree.exists(ROLES_FILE):
        entries, more = _parsed(tree, ROLES_FILE, parse_roles_yaml)
        problems += more
    return Roles(signers, entries, problems)


def _parsed(tree: Tree, rel: str, parse: Any) -> Any:
    try:
        data = tree.read(rel, MAX_BYTES)
    except Unreadable as exc:
        empty: Any = [] if rel == ALLOWED_SIGNERS else {}
        return empty, [RolesProblem(rel, None, "$", exc.finding.message, exc.finding.hint or "")]
    return parse(data, rel)


# --- writing --------------------------------------------------------------------------------

SIGNERS_HEADER = (
    "# Who may sign: git's allowed-signers format (gpg.ssh.allowedSignersFile), one key per line.\n"
    "# `eee roles` lists the roles; `eee roles add|remove` writes this file and governance/roles.yaml.\n"
    "# No valid-after/valid-before: a key's validity follows history, never a date.\n"
)


def render_signers(existing: bytes | None, add: list[Signer], remove: set[str]) -> bytes:
    """The allowed-signers file with the lines of ``add`` appended and every key of
    ``remove`` (base64 keys) left out; comments and other lines kept as they were."""
    lines = existing.decode("utf-8").split("\n") if existing else SIGNERS_HEADER.rstrip("\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    kept = []
    for raw in lines:
        text = raw.strip()
        if text and not text.startswith("#"):
            parts = text.split()
            if any(p in remove for p in parts[1:]):
                continue
        kept.append(raw)
    kept += [s.line_text() for s in add]
    return ("\n".join(kept) + "\n").encode("utf-8")


ROLES_HEADER = (
    "# Which principal holds which role (a signer without an entry is a contributor).\n"
    "# The keys are in governance/allowed_signers; `eee roles` lists both, `eee roles add|remove` writes them.\n"
)


def render_roles(entries: dict[str, Entry]) -> bytes:
    """roles.yaml for ``entries`` (principals sorted; every value quoted as JSON, which YAML reads)."""
    import json

    out = [ROLES_HEADER.rstrip("\n"), "principals:"]
    if not entries:
        out[-1] = "principals: {}"
    for name in sorted(entries):
        entry = entries[name]
        out.append(f"  {json.dumps(name)}:")
        out.append(f"    role: {json.dumps(entry.role)}")
        if entry.email:
            out.append(f"    email: {json.dumps(entry.email)}")
        if entry.forge:
            out.append(f"    forge: {json.dumps(entry.forge)}")
    return ("\n".join(out) + "\n").encode("utf-8")
