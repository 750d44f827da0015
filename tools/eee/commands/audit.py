"""``eee audit [--from REV] [--to REV]``: the commit rules over a range of commits.

Default range: the whole history of HEAD. Same formats and exit codes as ``eee validate``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from eee.audit import audit
from eee.gitutil import GitError, toplevel
from eee.report import FORMATS, render


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="eee audit",
        description="Check every commit in a range against the store's rules (catches `git commit --no-verify`).",
    )
    p.add_argument("--from", dest="start", metavar="REV", help="exclusive start (default: the first commit)")
    p.add_argument("--to", dest="end", metavar="REV", default="HEAD", help="inclusive end (default: HEAD)")
    p.add_argument("--format", choices=FORMATS, default="rich")
    p.add_argument("--repo", type=Path, default=None, help="the repository (default: the current one)")
    args = p.parse_args(argv)
    try:
        repo = toplevel(args.repo or Path.cwd())
    except GitError as exc:
        print(f"eee audit: not a git repository: {exc}")
        return 1
    summary = audit(args.start, args.end, repo)
    render(summary, args.format, what="commit")
    return summary.exit_code()
