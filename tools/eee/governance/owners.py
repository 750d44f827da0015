"""``.github/CODEOWNERS`` from the roles: every protected path owned by the principals that
hold the role its act needs.

A forge that hosts the store (pull requests only, branch protection, a required check: see
docs/guide/roles.md) asks the code owners of what a pull request changes for a review;
written from ``governance/roles.yaml`` (each principal's ``forge`` handle) by ``eee roles
codeowners`` and by ``eee roles add|remove`` where the file exists, it names, for each path of
:data:`eee.governance.PROTECTED` (and the folders ``governance/`` and ``schemas/`` whole) and
of the store's ``protected_paths`` (:mod:`eee.store.settings`), the handles of the maintainers. A forge reads CODEOWNERS from the pull request's base
branch, so a pull request cannot name its own reviewers.
"""

from __future__ import annotations

from eee.governance import PROTECTED
from eee.store.roles import MAINTAINER, Roles
from eee.store.settings import PROTECTED_PATHS

CODEOWNERS = ".github/CODEOWNERS"
HEADER = (
    "# Written by `eee roles codeowners` from governance/roles.yaml (each principal's forge handle):\n"
    "# every protected path is owned by the principals holding the role its act needs. Do not edit:\n"
    "# change the roles (`eee roles add|remove`) and it is written again.\n"
)


class NoOwners(ValueError):
    """No principal holding the role has a forge handle."""


def patterns(protected_paths: tuple[str, ...] = PROTECTED_PATHS) -> list[str]:
    """The CODEOWNERS patterns of the protected paths, broadest first (the last match wins)."""
    out = ["/governance/", "/schemas/"]
    for path in [*(p for p, _act in PROTECTED), *protected_paths]:
        pattern = "/" + path
        if pattern not in out:
            out.append(pattern)
    return out


def owners(roles: Roles) -> list[str]:
    """The ``@handle`` of every maintainer that has one, sorted."""
    return sorted({"@" + h for p in roles.holders(MAINTAINER) if (h := roles.forge(p))})


def codeowners(roles: Roles, protected_paths: tuple[str, ...] = PROTECTED_PATHS) -> bytes:
    """The CODEOWNERS file of ``roles``; :class:`NoOwners` when no maintainer has a forge handle."""
    handles = owners(roles)
    if not handles:
        raise NoOwners(
            "no maintainer has a forge handle: CODEOWNERS would own the protected paths by nobody "
            "(give one: `eee roles add NAME --key KEY.pub --role maintainer --forge HANDLE`)"
        )
    found = patterns(protected_paths)
    width = max(len(p) for p in found)
    lines = [f"{p:<{width}}  {' '.join(handles)}" for p in found]
    return (HEADER + "\n".join(lines) + "\n").encode("utf-8")
