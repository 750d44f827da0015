"""Hook ``eee-duplicates``: warn (never block) when a staged record duplicates one already
in the store, or another staged with it: the same evaluation (model, benchmark, metric,
configuration and evaluation_id, whoever the evaluator) or identical content apart from
evaluation_id and retrieved_timestamp (:mod:`eee.rules.duplicates`).

The whole store is checked through an index in the git directory that follows HEAD
(a few lookups per staged record); pairs linked by supersession or a duplicate event are
not warned about. The hook never does store-sized work: it brings the index to HEAD only
when that reads at most ``HOOK_LIMIT`` records (a small store, or a few commits since the
index last followed HEAD); otherwise it says so in one line on stderr, naming ``eee dedup
--index`` (which ``tools/dev.py setup`` and the post-checkout/post-merge hooks run), and
checks the staged records against each other only. The staged records are read from the index (:mod:`eee.store.staged`): what
will be committed, not the work tree.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from eee.governance.duplicates import HOOK_LIMIT
from eee.hooks import data_paths, emit
from eee.rules.duplicates import staged_findings
from eee.store.jsonlite import tree_object
from eee.store.staged import index_tree


def main(argv: list[str]) -> int:
    index = index_tree()
    load = functools.cache(lambda path: tree_object(index, path))
    findings = staged_findings(
        Path.cwd(),
        data_paths(argv),
        load,
        limit=HOOK_LIMIT,
        notice=lambda text: print(f"eee-duplicates: {text}", file=sys.stderr),
    )
    if findings:  # a record flagged for this rule is not warned about again
        from eee.validation.flagged import without_flagged  # lazy: only when there is something to warn about

        findings = without_flagged(findings)
    emit(findings)
    return 0
