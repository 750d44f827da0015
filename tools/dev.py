#!/usr/bin/env python3
"""Set up and run the project with nothing but Python 3.11+, git and pip.

usage: python3 tools/dev.py {run,test,setup,models} [ARGS...]

    python3 tools/dev.py run      # the main job: set up what is missing, run the datastore pipeline
    python3 tools/dev.py test     # set up what is missing, run the test suite (on every core, the ten
                                  # slowest tests listed at the end; pytest's own options pass through)
    python3 tools/dev.py setup    # only set up (virtual environment, packages, git hooks)
    python3 tools/dev.py models   # regenerate the pydantic models from the current schema

Exit codes: those of the command run (0 clean, 1 errors, 2 warnings only), 64 for an
unknown command (with a suggestion when one is close). Progress goes to stderr; `run`'s
summary ends with the validation's findings grouped by rule.

Set-up is idempotent: the virtual environment lives in .venv and is reinstalled only
when pyproject.toml changes. Uses only the standard library, so it runs before anything
is installed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
STAMP = VENV / ".eee-installed"
COMMANDS = ("setup", "test", "run", "models")


def _say(msg: str) -> None:
    print(f"[dev] {msg}", file=sys.stderr, flush=True)


def _run(cmd: list[str], **kw: object) -> int:
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, **kw)  # type: ignore[arg-type]


def _check(cmd: list[str]) -> None:
    code = _run(cmd, stdout=sys.stderr)  # set-up is progress: stdout stays the command's report
    if code:
        _say(f"failed ({code}): {' '.join(map(str, cmd))}")
        sys.exit(code)


def setup() -> None:
    if not PY.exists():
        _say(f"creating the virtual environment in {VENV.relative_to(ROOT)}")
        venv.EnvBuilder(with_pip=True).create(VENV)
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not STAMP.exists() or STAMP.read_text().strip() != want:
        _say("installing the project and its dependencies (pip install -e '.[dev]')")
        _check([PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
        _check([PY, "-m", "pip", "install", "--quiet", "-e", ".[dev]"])
        STAMP.write_text(want + "\n")
    # the package's bytecode, written once here: a commit hook then starts without compiling
    # its sources (~70 ms a commit where PYTHONDONTWRITEBYTECODE keeps Python from caching them)
    _check([PY, "-m", "compileall", "-q", str(ROOT / "tools" / "eee")])
    _install_hooks()


def _install_hooks() -> None:
    """Install the commit gate: the lean gate (`eee gate install`), which runs the hooks of
    .pre-commit-config.yaml on what is staged and hands over to prek when a staged file has
    unstaged changes, with post-checkout and post-merge hooks that keep the duplicates index
    following HEAD and a pre-push hook that checks what a push publishes; then build that index (once per clone; a no-op outside a git work tree).
    prek and pre-commit run the same file unchanged (`prek install` / `pre-commit install`).
    A git hook that no runner wrote is kept: `eee gate install` refuses and says how to go on."""
    if not (ROOT / ".pre-commit-config.yaml").exists() or not (ROOT / ".git").exists():
        return
    missing = False
    for stage in ("pre-commit", "post-checkout", "post-merge", "pre-push"):
        path = subprocess.run(
            ["git", "rev-parse", "--git-path", f"hooks/{stage}"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        hook = ROOT / path if path else ROOT / ".git" / "hooks" / stage
        missing = missing or not (hook.exists() and "eee lean gate" in hook.read_text(errors="replace"))
    if missing:
        _say("installing the git hooks (eee gate install)")
        _check([BIN / "python", "-m", "eee", "gate", "install"])
    _say("bringing the duplicates index to HEAD (eee dedup --index)")
    _check([BIN / "python", "-m", "eee", "dedup", "--index"])


def test_options(rest: list[str]) -> list[str]:
    """What `test` adds to pytest's arguments, unless they say otherwise: the tests spread
    over the machine's cores by file (pytest-xdist: `-n auto --dist loadfile`, each file's
    fixtures built once; `-n 0` or `-p no:xdist` runs them in one process, as does a run of
    the files it names) and the ten
    slowest tests listed at the end (`--durations=10`; `--durations=0` lists them all)."""
    said = " ".join(rest)
    options = []
    parallel = not any(
        a in ("-n", "--numprocesses", "no:xdist") or a.startswith(("-n", "--numprocesses=")) for a in rest
    )
    named = any(not a.startswith("-") and (ROOT / a.split("::")[0]).exists() for a in rest)  # some files: one process
    if parallel and not named and (os.cpu_count() or 1) > 1:
        options += ["-n", "auto", "--dist", "loadfile"]
    if "--durations" not in said:
        options.append("--durations=10")
    return options


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "help"
    rest = argv[1:]
    if command in ("help", "-h", "--help"):
        print(__doc__)
        return 0
    if command not in COMMANDS:
        import difflib

        close = difflib.get_close_matches(command, COMMANDS, n=1)
        guess = f"; did you mean {close[0]!r}?" if close else ""
        print(f"[dev] unknown command {command!r}{guess}\n{__doc__}", file=sys.stderr)
        return 64  # a usage error, as for every eee command
    setup()
    if command == "setup":
        return 0
    if command == "test":
        return _run([PY, "-m", "pytest", *test_options(rest), *rest])
    if command == "models":
        return _run([PY, "-m", "eee.models.generate"])
    return _run([PY, "-m", "eee", "pipeline", *rest])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
