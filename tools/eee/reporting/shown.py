"""Commands as hints print them: so that they run as printed.

The README's setup puts the tools in the project's virtual environment (``.venv``), not on
PATH, so a hint that says ``eee samples push ...`` does not run where it is read. Every
hint that names a command of the tools writes it with :func:`shown_command` (``.venv/bin/eee``
from the store's root; an absolute path from elsewhere) and quotes each argument
(:func:`command`): pasted into a shell, it runs.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

_SHOWN_AS: str | None = None  # set by show_as(): how hints name the tools where they are read elsewhere


def show_as(text: str | None) -> None:
    """From now on hints name the tools ``text`` (None: as they run here). The server gate's
    findings are read in the pusher's clone, not on the server: there the tools are
    ``.venv/bin/eee`` from the store's root (the README's setup), never the server's path."""
    global _SHOWN_AS
    _SHOWN_AS = text


def shown_command(cwd: str | Path | None = None) -> str:
    """``eee`` as a hint prints it, so that it runs as printed from ``cwd``: this environment's
    own ``eee`` executable (``.venv/bin/eee`` from the store's root in the README's setup; an
    absolute path from elsewhere), else ``python -m eee`` with this interpreter (``eee`` itself
    is not on PATH); what :func:`show_as` said, when it said something."""
    if _SHOWN_AS is not None:
        return _SHOWN_AS
    here = os.path.abspath(cwd or os.getcwd())
    exe = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "eee")
    if os.path.isfile(exe) and os.access(exe, os.X_OK):
        inside = exe.startswith(here.rstrip(os.sep) + os.sep)
        return shlex.quote(os.path.relpath(exe, here) if inside else exe)
    return f"{shlex.quote(sys.executable)} -m eee"


def command(*args: str | Path, cwd: str | Path | None = None) -> str:
    """``eee ARGS`` as a hint prints it, runnable from ``cwd`` (default: the current folder):
    :func:`shown_command`, then each argument quoted for a POSIX shell (a uuid or a plain path
    stays as it is). A :class:`~pathlib.Path` argument is shown relative to ``cwd`` when it
    lies below it."""
    here = os.path.abspath(cwd or os.getcwd())
    shown = []
    for arg in args:
        if isinstance(arg, Path):
            absolute = os.path.abspath(arg)
            arg = os.path.relpath(absolute, here) if absolute.startswith(here.rstrip(os.sep) + os.sep) else absolute
        shown.append(shlex.quote(arg))
    return " ".join([shown_command(here), *shown])
