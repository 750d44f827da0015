"""One module per ``eee`` subcommand, each with ``main(argv) -> int``."""

from __future__ import annotations

from pathlib import Path


def store_root(given: Path | None) -> Path:
    """The store a command works on: ``--root`` if given, else the current folder when it
    holds ``data/``, else this checkout."""
    if given is not None:
        return given
    if (Path.cwd() / "data").is_dir():
        return Path.cwd()
    from eee.schemas import project_root

    return project_root()
