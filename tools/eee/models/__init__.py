"""Typed reading API: pydantic v2 models generated from the current schema version.

The JSON Schema files stay the single source of truth for validity; these models are for
reading records in typed code (they do not enforce every rule: ``if/then/else`` is not
modelled). Regenerate them after a schema release with::

    python tools/dev.py models

which runs ``datamodel-codegen`` (pinned in pyproject.toml) with the options in
:data:`eee.models.generate.OPTIONS`. ``tests/test_models.py`` fails when they drift.
"""

from typing import Any

__all__ = ["EvaluationRecord", "InstanceLevelRow"]


def __getattr__(name: str) -> Any:  # imported lazily: pydantic costs ~0.4 s, kept off the hook path
    if name == "EvaluationRecord":
        from eee.models.eval_v0_3_0 import EvaluationRecord  # lazy: pydantic costs ~0.4 s, kept off the hook path

        return EvaluationRecord
    if name == "InstanceLevelRow":
        from eee.models.instance_level_eval_v0_3_0 import InstanceLevelRow  # lazy: as above

        return InstanceLevelRow
    raise AttributeError(name)
