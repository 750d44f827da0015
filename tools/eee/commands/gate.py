"""``eee gate run|install|uninstall``: the commit hooks without a runner's work-tree scans
(the default gate; see :mod:`eee.hooks.gate`)."""

from __future__ import annotations

import sys

from eee.commands import EXIT_ERRORS, Parser, add_store
from eee.hooks.gate import STAGES, Refused, check, install, uninstall


def main(argv: list[str]) -> int:
    p = Parser(
        "eee gate",
        "Run the store's commit hooks on what is staged, without a runner's work-tree scans "
        "(the hooks' report goes to stdout, as pre-commit's does).",
    )
    p.add_argument(
        "action",
        choices=("run", "install", "uninstall"),
        help="run the hooks now; install the lean git hooks, or replace them by prek's",
    )
    p.add_argument(
        "--hook-stage", choices=STAGES, default="pre-commit", help="run: the hooks of this stage (default: pre-commit)"
    )
    p.add_argument(
        "--force", action="store_true", help="install: replace a git hook that no runner installed (it is lost)"
    )
    add_store(p)
    given: list[str] = []
    if "--" in argv:  # what git gives the hook, after --: a pre-push hook's remote name and URL
        given = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    args = p.parse_args(argv)
    root = args.store
    try:
        if args.action == "install":
            print(
                f"installed the lean gate as {install(root, force=args.force)} (and post-checkout, post-merge, pre-push)"
            )
            return 0
        if args.action == "uninstall":
            uninstall(root)
            print("removed the lean gate; prek runs the hooks")
            return 0
    except Refused as exc:
        print(f"eee gate: {exc}", file=sys.stderr)
        return EXIT_ERRORS
    return check(root, args.hook_stage, given)
