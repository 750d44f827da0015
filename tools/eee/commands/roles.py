"""``eee roles``: who holds which role, and who may take which act.

- ``eee roles`` lists the principals (governance/allowed_signers, governance/roles.yaml),
  their roles and keys, the table of who may take which act (:func:`eee.governance.authority_of` the declared actions)
  and the paths each act writes (:data:`eee.governance.PROTECTED`); in a store without roles
  it says that anyone may act there.
- ``eee roles add NAME --key PUBKEY_FILE --role ROLE [--email E] [--forge HANDLE]`` adds a
  signer (or another key of one, or changes its role); ``eee roles remove NAME [--key FILE]``
  removes one; ``eee roles codeowners`` writes ``.github/CODEOWNERS`` from the roles (add and
  remove keep it current where it exists). Without ``--commit`` they write the files; with it,
  the signed commit (:mod:`eee.write.roles`); ``--dry-run`` writes nothing and says which
  principal and role the commit needs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from eee import governance
from eee.commands import EXIT_OK, OUTPUT_FORMATS, add_dry_run, add_format, add_store, parser
from eee.git.cli import GitError
from eee.governance import EVENT_ACT, PROTECTED, PROTECTED_PATH_ACT
from eee.reporting.findings import Refused, refusal
from eee.reporting.reporters import reporter
from eee.store.roles import ALLOWED_SIGNERS, ROLES, ROLES_FILE

DESCRIPTION = (
    "List who holds which role in the store (governance/allowed_signers: git's allowed-signers format; "
    "governance/roles.yaml: the roles) and who may take which act; add or remove a signer; write "
    ".github/CODEOWNERS from the roles. A store without roles lets anyone act (every event's actor is still "
    "who committed it)."
)


def build_parser() -> Any:
    p = parser("eee roles", DESCRIPTION)
    sub = p.add_subparsers(
        dest="action", metavar="ACTION", help="add, remove or codeowners (none: list the roles and the table)"
    )
    add = sub.add_parser(
        "add", help="add a signer, another key of one, or change its role", description="Add a signer."
    )
    add.add_argument("name", metavar="NAME", help="the principal (an email address, as signatures and events name it)")
    add.add_argument("--key", required=True, type=Path, metavar="PUBKEY_FILE", help="its SSH public key (a .pub file)")
    add.add_argument("--role", required=True, choices=ROLES, help="the role it holds")
    add.add_argument("--email", metavar="ADDRESS", help="the email its events name (default: NAME, when it is one)")
    add.add_argument("--forge", metavar="HANDLE", help="its forge handle (GitHub user or org/team), for CODEOWNERS")
    remove = sub.add_parser("remove", help="remove a signer (every key, or --key)", description="Remove a signer.")
    remove.add_argument("name", metavar="NAME", help="the principal")
    remove.add_argument("--key", type=Path, metavar="PUBKEY_FILE", help="remove only this key of it")
    owners = sub.add_parser(
        "codeowners", help="write .github/CODEOWNERS from the roles", description="Write CODEOWNERS."
    )
    for q in (add, remove, owners):
        add_dry_run(q, help="check and show what would be written and what the commit needs; write nothing")
        q.add_argument("--commit", action="store_true", help="commit the change, signed (git's SSH signing)")
        add_format(q, OUTPUT_FORMATS)
        add_store(q)
    add_format(p, OUTPUT_FORMATS)
    add_store(p)
    return p


def main(argv: list[str]) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.action is None:
        return _list(args.store, args.format)
    from eee.write import roles as writer

    try:
        if args.action == "add":
            plan = writer.plan_add(args.store, args.name, args.key, args.role, args.email, args.forge)
            subject = f"Roles: {args.name} holds {args.role}"
        elif args.action == "remove":
            plan = writer.plan_remove(args.store, args.name, args.key)
            subject = f"Roles: remove {args.name}" + (" (one key)" if args.key else "")
        else:
            plan = writer.plan_codeowners(args.store)
            subject = "Roles: CODEOWNERS from the roles"
        result = writer.apply(args.store, plan, subject, dry_run=args.dry_run, commit=args.commit)
    except (Refused, GitError) as error:
        exc = error if isinstance(error, Refused) else refusal(str(error), check="git")
        return reporter(args.format).refusal(f"eee roles {args.action}", exc.findings)
    reporter(args.format).result(result, lambda: _print_result(args.action, result))
    return EXIT_OK


def _print_result(action: str, result: dict[str, Any]) -> None:
    verb = "would write" if result["dry_run"] else "wrote"
    if result.get("unchanged"):
        print(f"eee roles {action}: nothing to change (the files already say this)")
        return
    for rel in result["files"]:
        print(f"  {verb} {rel}")
    print(f"  {result['signing']['said']}")
    if result["committed"]:
        print(f"  committed {result['commit'][:10]}")
    elif not result["dry_run"]:
        print(
            f"eee roles {action}: not committed yet: `git add {' '.join(result['files'])}` and a signed "
            "`git commit -S`, or run it with --commit",
            file=sys.stderr,
        )


def listing(root: Path) -> dict[str, Any]:
    """The store's roles (work tree), the authority table and the protected paths."""
    from eee.rules.authority import fingerprint
    from eee.store import roles as roles_mod
    from eee.store.tree import WorkTree

    found = roles_mod.read(WorkTree(root))
    principals = []
    if found is not None:
        for name in found.principals():
            principals.append(
                {
                    "principal": name,
                    "role": found.role(name),
                    "email": found.email(name),
                    "forge": found.forge(name),
                    "keys": [fingerprint(s.key) for s in found.keys_of(name)],
                }
            )
    return {
        "roles": found is not None,
        "files": [ALLOWED_SIGNERS, ROLES_FILE],
        "principals": principals,
        "problems": [p._asdict() for p in found.problems] if found is not None else [],
        "authority": [a._asdict() for a in governance.authority_of(governance.ACTIONS)],  # as declared now
        "protected": [{"path": path, "act": act} for path, act in PROTECTED]
        + [{"path": path, "act": PROTECTED_PATH_ACT} for path in _protected_paths(root)],
    }


def _protected_paths(root: Path) -> list[str]:
    """The store's protected_paths (its settings file, else the defaults), those no act above names."""
    from eee.governance import act_of_path
    from eee.store import settings
    from eee.store.tree import WorkTree

    try:
        paths = settings.read(WorkTree(root)).protected_paths
    except settings.SettingsProblem:
        paths = settings.PROTECTED_PATHS
    return [p for p in paths if act_of_path(p if not p.endswith("/") else p + "x", paths) == PROTECTED_PATH_ACT]


def _list(root: Path, fmt: str) -> int:
    found = listing(root)
    reporter(fmt).result(found, lambda: _print_list(found))
    return EXIT_OK


def _print_list(found: dict[str, Any]) -> None:
    if not found["roles"]:
        print(
            f"this store has no roles ({ALLOWED_SIGNERS} is absent): anyone may act here, and every event's "
            "actor is still who committed it"
        )
        print("  adopt roles: `eee roles add NAME --key KEY.pub --role maintainer --commit` (docs/guide/roles.md)")
    else:
        print(f"principals ({ALLOWED_SIGNERS}, {ROLES_FILE}):")
        width = max((len(x["principal"]) for x in found["principals"]), default=0)
        for x in found["principals"]:
            extra = "".join(
                [
                    f"  email {x['email']}" if x["email"] and x["email"] != x["principal"] else "",
                    f"  forge @{x['forge']}" if x["forge"] else "",
                ]
            )
            print(f"  {x['principal']:<{width}}  {x['role']:<11}  {', '.join(x['keys'])}{extra}")
        for problem in found["problems"]:
            where = problem["file"] + (f":{problem['line']}" if problem["line"] else "")
            print(f"  {where}: [roles] {problem['message']} (this grants nothing)", file=sys.stderr)
    print("who may take which act" + ("" if found["roles"] else " (once the store has roles)") + ":")
    width = max(len(a["act"]) for a in found["authority"])
    for a in found["authority"]:
        own = f"; {a['own']}" if a["own"] else ""
        print(f"  {a['act']:<{width}}  {a['role']:<10}  {a['what']}{own}")
    print("the paths each act writes (the first that matches):")
    width = max(len(x["path"]) for x in found["protected"])
    for x in found["protected"]:
        act = "the action of the event it holds" if x["act"] == EVENT_ACT else x["act"]
        print(f"  {x['path']:<{width}}  {act}")
