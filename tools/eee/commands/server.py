"""``eee server install|uninstall GIT_DIR``: the server gate of a bare repository
(:mod:`eee.hooks.server`); ``eee server pre-receive|post-receive``: what its hooks run.

``install`` writes ``hooks/pre-receive`` and ``hooks/post-receive`` (they run this
interpreter, by its absolute path, on the installed package) and builds the indexes the
audit reads; it refuses a path that is not a bare repository (exit 64) and a hook that eee
did not write (exit 1; ``--force`` replaces it). Installing again brings the hooks and the
indexes up to date. ``uninstall`` removes what ``install`` wrote.
"""

from __future__ import annotations

import sys
from pathlib import Path

from eee.commands import EXIT_ERRORS, EXIT_OK, Parser


def main(argv: list[str]) -> int:
    p = Parser(
        "eee server",
        "The server gate of a bare repository a store is pushed to: a pre-receive hook that refuses a push "
        "the audit finds an error in (every rule of `eee audit`, over the commits the push brings), or that "
        "deletes or rewrites a protected branch; a post-receive hook that keeps the audit's indexes at HEAD.",
    )
    p.add_argument(
        "action",
        choices=("install", "uninstall", "pre-receive", "post-receive"),
        help="install or uninstall the hooks; pre-receive and post-receive are what the hooks run "
        "(git's input on stdin, in the bare repository)",
    )
    p.add_argument(
        "git_dir", nargs="?", type=Path, metavar="GIT_DIR", help="the bare repository (default: the current folder)"
    )
    p.add_argument("--force", action="store_true", help="install: replace a hook that eee did not write (it is lost)")
    p.add_argument(
        "--dvc-dir",
        type=Path,
        metavar="DIR",
        help="install: the DVC folder whose config names the store's remote (and its credentials): the gate refuses "
        "a pushed pointer whose object is not there (kept as `git config eee.dvcDir`)",
    )
    args = p.parse_args(argv)

    from eee.git.cli import GitError, bare_git_dir
    from eee.hooks import server

    where = args.git_dir or Path.cwd()
    if args.action in ("pre-receive", "post-receive"):
        if sys.stdin.isatty():
            p.error(f"{args.action} reads git's `<old> <new> <ref>` lines on stdin: git runs it, as the hook")
        try:
            git_dir = bare_git_dir(where)
        except GitError as exc:
            print(f"{server.PREFIX}: the push is refused: {exc}", file=sys.stderr)
            return EXIT_ERRORS
        hook = server.pre_receive if args.action == "pre-receive" else server.post_receive
        return hook(git_dir, sys.stdin.buffer, sys.stderr)
    if args.git_dir is None:
        p.error(f"{args.action} needs GIT_DIR, the bare repository the store is pushed to")
    try:
        if args.action == "install":
            git_dir = server.install(args.git_dir, force=args.force, dvc_dir=args.dvc_dir)
            print(
                f"installed the server gate in {git_dir} (hooks/pre-receive, hooks/post-receive; "
                f"indexes built); it runs {sys.executable}"
            )
            return EXIT_OK
        git_dir, removed = server.uninstall(args.git_dir)
    except GitError as exc:  # the command line is right but for the folder it names: one line, exit 64
        p.store_error(
            f"{exc}: the server gate goes into the bare repository a store is pushed to "
            "(`git init --bare`, `git clone --bare`)"
        )
    except server.Refused as exc:
        print(f"eee server: {exc}", file=sys.stderr)
        return EXIT_ERRORS
    if removed:
        print(f"removed the server gate from {git_dir} ({', '.join(h.name for h in removed)} and its indexes)")
    else:
        print(f"the server gate is not installed in {git_dir}: nothing removed")
    return EXIT_OK
