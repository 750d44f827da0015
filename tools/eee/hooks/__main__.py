"""``python -m eee.hooks NAME [NAME...] -- [FILES...]``: run hooks (what tools/hook calls).

All hooks share one process (.pre-commit-config.yaml has one entry): one interpreter
start instead of several, and one of the runner's work-tree scans. Each still runs as its
own ``main(argv)``, and the runner's ``SKIP`` variable skips any of them by id
(``SKIP=eee-duplicates git commit ...``); a skipped check says so.
"""

import importlib
import os
import sys

import eee.hooks
from eee.hooks import HOOKS
from eee.store.staged import session

USAGE = "usage: tools/hook NAME [NAME...] -- [FILES...]"


def _usage() -> int:
    print(f"{USAGE}   (names: {', '.join(HOOKS)})", file=sys.stderr)
    return 64  # a usage error (the exit-code table of eee.commands)


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(f"{USAGE}\n\nRun the store's commit hooks NAME... on FILES (what pre-commit calls).")
        print(f"hooks: {', '.join(HOOKS)}")
        print("exit codes: 0 clean, 1 errors (the commit is refused), 64 usage error")
        return 0
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
    with session():  # the hooks of this process ask git for the staged changes once, and read one index tree
        for name in names:
            if f"eee-{name}" in skip or name in skip:
                print(f"eee-{name}: skipped (SKIP)")
                continue
            code = max(code, importlib.import_module(f"eee.hooks.{name}").main(files))
    return code


if __name__ == "__main__":  # the lean gate imports this module and calls main itself
    sys.exit(main(sys.argv[1:]))
