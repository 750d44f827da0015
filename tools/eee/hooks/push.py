"""Hook ``eee-push`` (git's pre-push): what a push would publish is checked before it leaves.

git gives a pre-push hook the remote's name and URL as arguments and, on its standard input,
one line per ref pushed: ``<local ref> <local sha> <remote ref> <remote sha>`` (all zeros for
a ref the remote does not have yet, or one the push deletes). pre-commit and prek read those
lines themselves and hand a hook the range instead (``PRE_COMMIT_FROM_REF``,
``PRE_COMMIT_TO_REF``, ``PRE_COMMIT_LOCAL_BRANCH``, ``PRE_COMMIT_REMOTE_NAME``): this hook
reads either.

For each ref pushed, the commits it publishes (the remote's old head onwards; for a new
branch, what no remote-tracking branch of that remote holds) go through the audit
(:func:`eee.validation.audit.audit`), with the remote's old head as the trust anchor (on
a protected branch it stays on the pushed head's first-parent chain, as the server gate
asks), the settings read there (its ``dvc_remote`` names the DVC remote): the
commit rules on each commit's own changes, immutability of what is published (a change of
a file a published commit holds; history rewritten under the remote's head), and every DVC
pointer the commits add must have its object on the store's DVC remote, checked against the
pointer's md5 and the record's checksum (``--remote-objects``; :mod:`eee.rules.objects`).
Deleting a remote ref is not judged here (the server gate protects its branches).

Exit 0: the push goes on; 1: git refuses it, and the remote is left as it was.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

from eee.hooks import emit

_ZERO = frozenset({"0" * 40, "0" * 64})


class Update(NamedTuple):
    local_ref: str
    local_sha: str
    remote_ref: str
    remote_sha: str | None  # None: the remote does not have the ref (or its old head is unknown here)


def updates_from(lines: str) -> list[Update]:
    """The refs a push updates, from git's pre-push standard input (deletions left out)."""
    out = []
    for line in lines.splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[1] in _ZERO:
            continue
        local_ref, local_sha, remote_ref, remote_sha = parts
        out.append(Update(local_ref, local_sha, remote_ref, None if remote_sha in _ZERO else remote_sha))
    return out


def _updates() -> list[Update]:
    env = os.environ
    if env.get("PRE_COMMIT_TO_REF"):  # pre-commit / prek: the range of one ref
        return [
            Update(
                env.get("PRE_COMMIT_LOCAL_BRANCH", ""),
                env["PRE_COMMIT_TO_REF"],
                env.get("PRE_COMMIT_REMOTE_BRANCH", ""),
                env.get("PRE_COMMIT_FROM_REF") or None,
            )
        ]
    if env.get("PRE_COMMIT_LOCAL_BRANCH"):  # pre-commit's "the whole history is new to the remote"
        return [Update(env["PRE_COMMIT_LOCAL_BRANCH"], env["PRE_COMMIT_LOCAL_BRANCH"], "", None)]
    if sys.stdin is None or sys.stdin.isatty():
        return []
    return updates_from(sys.stdin.read())


def main(argv: list[str]) -> int:
    from eee.git.cli import resolve
    from eee.reporting.reporters import summary_line
    from eee.validation.audit import audit

    remote = os.environ.get("PRE_COMMIT_REMOTE_NAME") or (argv[0] if argv else None)
    root = Path.cwd()
    code = 0
    for update in _updates():
        start = update.remote_sha
        if start is not None and resolve(f"{start}^{{commit}}", root) is None:
            start = None  # the remote moved on since the last fetch: judged as new here
        settings = _settings(root, start or update.local_sha)
        summary = audit(
            start,
            update.local_sha,
            root,
            anchor=start,
            remote_objects=True,
            dvc_remote=settings.dvc_remote or None,
            not_remote=remote if start is None and remote and _plain(remote) else None,
            mainline=_branch(update.remote_ref) in settings.protected_branches,
        )
        target = update.remote_ref or update.local_ref
        if summary.fatal:
            print(f"eee-push: {target}: {summary.fatal}")
            code = 1
            continue
        found = [f for r in summary.results for f in r.findings]
        if found or summary.errors:
            print(f"eee-push: {target}: {summary_line(summary, what='commit')}")
        if emit(found) or summary.errors:
            code = 1
    if code:
        print("eee-push: the push was refused; nothing was published (fix what is reported, then push again)")
    return code


def _plain(name: str) -> bool:
    """A remote's name as ``--remotes=`` takes it (a URL pushed to directly has none)."""
    return not any(c in name for c in "*?[\\ :/") and not name.startswith("-")


def _settings(root: Path, rev: str) -> Any:
    """The store's settings at ``rev`` (the remote's old head, as the server gate reads them;
    the defaults where they cannot be used: the audit's own rules report that)."""
    from eee.store import settings

    try:
        return settings.of_commit(root, rev)
    except settings.SettingsProblem:
        return settings.DEFAULTS


def _branch(ref: str) -> str | None:
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else (ref or None)
