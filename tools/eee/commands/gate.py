"""``eee gate run|install|uninstall``: the commit hooks without pre-commit's work-tree scans
(for large stores; see :mod:`eee.gate`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from eee.gate import check, install, uninstall
from eee.gitutil import GitError, toplevel


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="eee gate",
        description="Run the store's commit hooks on what is staged, without pre-commit's work-tree scans.",
    )
    p.add_argument(
        "action", choices=("run", "install", "uninstall"), help="run the hooks now; install or remove the lean git hook"
    )
    args = p.parse_args(argv)
    try:
        root = toplevel(Path.cwd())
    except GitError:
        print("eee gate: run it inside the store's git work tree")
        return 1
    if args.action == "install":
        print(f"installed the lean gate as {install(root)}")
        return 0
    if args.action == "uninstall":
        uninstall(root)
        print("removed the lean gate; pre-commit runs the hooks again")
        return 0
    return check(root)
