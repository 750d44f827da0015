"""Every Eval Ever datastore tooling: validation, hooks, governance, migration, conversion."""

__version__ = "0.1.0"
