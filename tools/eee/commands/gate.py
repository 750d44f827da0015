"""``eee gate run|install|uninstall``: the commit hooks without a runner's work-tree scans
(the default gate; see :mod:`eee.gate`)."""

from __future__ import annotations

from eee.commands import Parser, UsageError, add_store, store_of, usage_error
from eee.gate import check, install, uninstall


def main(argv: list[str]) -> int:
    p = Parser(
        "eee gate",
        "Run the store's commit hooks on what is staged, without a runner's work-tree scans "
        "(the hooks' report goes to stdout, as pre-commit's does).",
    )
    p.add_argument(
        "action",
        choices=("run", "install", "uninstall"),
        help="run the hooks now; install the lean git hook, or replace it by prek's",
    )
    add_store(p)
    args = p.parse_args(argv)
    try:
        root = store_of(args.store)
    except UsageError as exc:
        return usage_error("eee gate", exc)
    if args.action == "install":
        print(f"installed the lean gate as {install(root)}")
        return 0
    if args.action == "uninstall":
        uninstall(root)
        print("removed the lean gate; prek runs the hooks")
        return 0
    return check(root)
