"""``python -m eee.hooks NAME [NAME...] -- [FILES...]``: run hooks (what tools/hook calls).

Several hooks can share one process (one interpreter start instead of several: that
keeps the gate under a second). Each still runs as its own ``main(argv)``, and pre-commit's
``SKIP`` variable skips any of them by id (``SKIP=eee-duplicates git commit ...``).
"""

import importlib
import os
import sys

import eee.hooks
from eee.hooks import HOOKS


def _usage() -> int:
    print(f"usage: python -m eee.hooks NAME [NAME...] -- [FILES...]   (names: {', '.join(HOOKS)})", file=sys.stderr)
    return 2


def main(argv: list[str]) -> int:
    if "--" in argv:
        cut = argv.index("--")
        names, files = argv[:cut], argv[cut + 1 :]
    else:
        names, files = argv[:1], argv[1:]
    if not names or any(n not in HOOKS for n in names):
        return _usage()
    skip = {s.strip() for s in os.environ.get("SKIP", "").split(",") if s.strip()}
    eee.hooks.shown = set()  # one message once, whichever hook finds it first
    code = 0
    for name in names:
        if f"eee-{name}" in skip or name in skip:
            continue
        code = max(code, importlib.import_module(f"eee.hooks.{name}").main(files))
    return code


sys.exit(main(sys.argv[1:]))
