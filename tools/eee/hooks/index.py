"""Hook ``eee-index`` (post-checkout, post-merge): the duplicates index follows HEAD, so that
the commit hook finds it ready (:mod:`eee.governance.duplicates`).

When that reads at most ``HOOK_LIMIT`` records (a few commits pulled, a branch switched) it
is done right here. Beyond (the first checkout of a large store, a pull of thousands of
records), ``eee dedup --index --quiet`` builds it in the background and one line says so:
git is never kept waiting, and a commit meanwhile says that its duplicates were checked only
among the staged records.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from eee.governance.duplicates import HOOK_LIMIT, DuplicateIndex, Stale, build_command


def main(argv: list[str]) -> int:
    return follow(Path.cwd())


def follow(root: Path) -> int:
    """Bring the duplicates index of the store at ``root`` to HEAD, here or in the background."""
    index = DuplicateIndex(root, timeout=2)
    try:
        index.sync(limit=HOOK_LIMIT)
        if index.has_uuid_index():
            return 0
        reason = "the duplicates index has no index by uuid yet (the gate's rule uuid scans it meanwhile)"
    except Stale as exc:
        reason = str(exc)
    finally:
        index.close()
    subprocess.Popen(
        [sys.executable, "-m", "eee", "dedup", "--index", "--quiet"],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # not in git's process group: it outlives the hook
    )
    print(f"eee-index: {reason}; building it in the background (`{build_command()}`)", file=sys.stderr)
    return 0
