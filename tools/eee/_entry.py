"""Entry point of the thin executables in tools/ (tools/validate, tools/retract, ...).

They run with whatever ``python3`` is first on PATH; when that interpreter lacks the
project's dependencies, re-run under the project's virtual environment (.venv).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _project_python() -> str | None:
    for candidate in (os.environ.get("EEE_PYTHON"), Path(__file__).resolve().parents[2] / ".venv" / "bin" / "python"):
        if not candidate or not Path(candidate).exists():
            continue
        env = Path(candidate).parent.parent
        if os.path.realpath(env) != os.path.realpath(sys.prefix):
            return str(candidate)
    return None


def run(command: str) -> int:
    try:
        import jsonschema_rs  # noqa: F401
        import orjson  # noqa: F401
    except ImportError:
        python = _project_python()
        if python is None:
            print(
                "eee: the project's dependencies are not installed; run `python3 tools/dev.py setup` first",
                file=sys.stderr,
            )
            return 1
        os.execv(python, [python, "-m", "eee", command, *sys.argv[1:]])
    from eee.cli import main

    return main([command, *sys.argv[1:]])
