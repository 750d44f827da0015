"""Who signed a commit, as the store's roles know it: git's own SSH signature verification.

A commit is verified against the allowed signers **of another commit** (its first parent,
for the audit; a merge's first parent, for what the merge brings in; the commit itself only
for the genesis of the roles): ``git -c gpg.ssh.allowedSignersFile=FILE log --format=%G?%GS``
(:func:`eee.git.cli.signatures`). FILE is written from the *parsed* signers
(:func:`eee.store.roles.parse_allowed_signers`), never from the raw blob, so a line the store
refuses (a time option, a CA key, a wildcard principal) can never reach ``ssh-keygen``: it
grants nothing. The files live in the git directory (``eee-signers/<sha256>``), named by
their content, written once (:func:`eee.store.fsutil.write_new`) and checked before use.

:class:`Verifier` caches the roles of each commit it is asked about (by the blob ids of the
two roles files) and the signature of each (commit, signers) pair, and verifies many commits
in one git call (:meth:`Verifier.prefetch`). Readers (``eee status``, the site) ask
:func:`commit_signers`: the principal that signed the commit adding each event, or None
(unverified). A store whose history never held ``governance/allowed_signers`` starts no
verification at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from eee.git.cli import GitError, Signature, batch_check, ever_held, git_dir, parents_of, signatures
from eee.store import roles as roles_mod
from eee.store.fsutil import write_replacing
from eee.store.roles import ALLOWED_SIGNERS, ROLES_FILE, Roles
from eee.store.tree import GitTree

SIGNERS_DIR = "eee-signers"
UNSIGNED = Signature("N", None, "")


class Verified(NamedTuple):
    """A commit's signature judged by the roles of the commit it is judged under."""

    signature: Signature
    principal: str | None  # a signer of those roles (None: unsigned, or a key they do not know)
    role: str | None  # the principal's role there


def signers_text(roles: Roles) -> bytes:
    """The allowed-signers file ssh-keygen is given: the parsed signers only, each limited to
    the git namespace."""
    return "".join(f'{s.principal} namespaces="git" {s.keytype} {s.key}\n' for s in roles.signers).encode()


def signers_file(cwd: Path, roles: Roles) -> Path:
    """The allowed-signers file of ``roles`` in the git directory (written once, checked each time)."""
    data = signers_text(roles)
    folder = git_dir(cwd) / SIGNERS_DIR
    folder.mkdir(exist_ok=True)
    path = folder / hashlib.sha256(data).hexdigest()
    try:
        if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
            return path
    except OSError:
        pass
    return write_replacing(path, data)


class Verifier:
    """Roles by commit and signatures by (commit, the commit whose roles judge it)."""

    def __init__(self, cwd: Path | str) -> None:
        self.cwd = Path(cwd)
        self._roles_by_blobs: dict[tuple[str | None, str | None], Roles | None] = {}
        self._blobs: dict[str, tuple[str | None, str | None]] = {}
        self._signatures: dict[tuple[str, bytes], Signature] = {}

    def preload(self, revs: Iterable[str]) -> None:
        """Learn which of ``revs`` hold roles, in one git call."""
        self._blob_ids(revs)

    def _blob_ids(self, revs: Iterable[str]) -> None:
        asked = [r for r in dict.fromkeys(revs) if r not in self._blobs]
        if not asked:
            return
        names = [f"{r}:{path}" for r in asked for path in (ALLOWED_SIGNERS, ROLES_FILE)]
        found = batch_check(names, self.cwd)
        for r in asked:
            ids = tuple(found[f"{r}:{p}"][0] if f"{r}:{p}" in found else None for p in (ALLOWED_SIGNERS, ROLES_FILE))
            self._blobs[r] = (ids[0], ids[1])

    def roles(self, rev: str | None) -> Roles | None:
        """The roles of the commit ``rev`` (None: no ``governance/allowed_signers`` there, or no commit)."""
        if rev is None:
            return None
        self._blob_ids([rev])
        key = self._blobs[rev]
        if key[0] is None:
            return None
        if key not in self._roles_by_blobs:
            with GitTree(self.cwd, rev) as tree:
                self._roles_by_blobs[key] = roles_mod.read(tree)
        return self._roles_by_blobs[key]

    def has_roles(self, rev: str | None) -> bool:
        if rev is None:
            return False
        self._blob_ids([rev])
        return self._blobs[rev][0] is not None

    def prefetch(self, pairs: Iterable[tuple[str, str | None]]) -> None:
        """Verify many (commit, judged-under) pairs at once: one git call per set of signers."""
        groups: dict[bytes, list[str]] = {}
        files: dict[bytes, Roles] = {}
        pairs = list(pairs)
        self._blob_ids([under for _, under in pairs if under is not None])
        for commit, under in pairs:
            found = self.roles(under)
            if found is None or not found.signers:
                continue
            text = signers_text(found)
            if (commit, text) not in self._signatures:
                groups.setdefault(text, []).append(commit)
                files[text] = found
        for text, commits in groups.items():
            try:
                got = signatures(list(dict.fromkeys(commits)), signers_file(self.cwd, files[text]), self.cwd)
            except (GitError, OSError):
                got = {}
            for commit in commits:
                self._signatures[(commit, text)] = got.get(commit, Signature("E", None, ""))

    def verify(self, commit: str, under: str | None) -> Verified:
        """``commit``'s signature judged by the roles of ``under``."""
        found = self.roles(under)
        if found is None or not found.signers:
            return Verified(UNSIGNED, None, None)
        text = signers_text(found)
        if (commit, text) not in self._signatures:
            self.prefetch([(commit, under)])
        sig = self._signatures[(commit, text)]
        principal = sig.principal if sig.status == "G" and sig.principal in found.principals() else None
        return Verified(sig, principal, found.role(principal))


def ever_had_roles(root: Path | str, rev: str = "HEAD") -> bool:
    """Whether any commit of ``rev``'s history holds ``governance/allowed_signers`` (one git call)."""
    return ever_held(rev, ALLOWED_SIGNERS, root)


def first_parents(commits: Iterable[str], root: Path | str) -> dict[str, str | None]:
    """commit -> its first parent (None for a root commit), one git call."""
    asked = list(dict.fromkeys(commits))
    if not asked:
        return {}
    return {commit: parents[0] if parents else None for commit, parents in parents_of(asked, root).items()}


def commit_signers(root: Path | str, commits: Iterable[str]) -> dict[str, str | None]:
    """commit -> the principal whose signature the roles of its first parent verify (None:
    unverified). Without roles anywhere in history: every commit unverified, no git call
    beyond one ``git log``."""
    asked = [c for c in dict.fromkeys(commits) if c]
    if not asked or not ever_had_roles(root):
        return dict.fromkeys(asked)
    parents = first_parents(asked, root)
    verifier = Verifier(Path(root))
    verifier.prefetch((c, parents.get(c)) for c in asked)
    return {c: verifier.verify(c, parents.get(c)).principal for c in asked}
