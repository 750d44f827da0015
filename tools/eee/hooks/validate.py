"""Hook ``eee-validate``: every staged record, sidecar and pointer through the validator, and
the staged files of the identity registry (``governance/identity/``).

What is validated is what will be committed: the index's blobs (:class:`eee.store.staged.IndexTree`),
not the work-tree files. Errors block the commit; warnings are shown and let it through.
Names that differ only in case from one in the tree are the ``eee-naming`` hook's to say (it
reads the index's tree), so the validator leaves them out here: said once, not twice.
"""

from __future__ import annotations

from eee.hooks import data_paths, emit_summary
from eee.store.identity import is_registry_file
from eee.store.staged import index_tree
from eee.validation.validate import Options, validate_tree


def main(argv: list[str]) -> int:
    paths = data_paths(argv) + [p.replace("\\", "/") for p in argv if is_registry_file(p.replace("\\", "/"))]
    if not paths:
        return 0
    from eee.validation.flagged import (
        summary_without_flagged,  # lazy: the gate's flag acceptance, after the argument check
    )

    return emit_summary(summary_without_flagged(validate_tree(index_tree(), paths, Options(case_clash=False))))
