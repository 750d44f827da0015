"""Every Eval Ever datastore tooling: validation, hooks, governance, migration, conversion.

``import eee`` stays cheap (hooks import it): the reading API below loads on first use.

- ``eee.load_record(path, as_version=None)``: an aggregate record as a schema version
  (default: the current one), migrated in memory when it is older (see :mod:`eee.migrate`).
- ``eee.load_rows(path, as_version=None)``: the rows of a sidecar, the same way.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {"load_record": "eee.migrate.files", "load_rows": "eee.migrate.files"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'eee' has no attribute {name!r}")
    import importlib  # lazy: load_record/load_rows load migration on first use

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
