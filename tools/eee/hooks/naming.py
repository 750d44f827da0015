"""Hook ``eee-naming``: layout, lowercase uuid4, portable names, no case-only collisions
with anything in the tree, and ``<developer>/<model>`` folders taken from ``model_info.id``."""

from __future__ import annotations

from functools import cache

from eee.gitutil import has_commit, tree_children
from eee.hooks import data_paths, emit
from eee.jsonlite import load_object
from eee.rules.commit import naming_findings


def main(argv: list[str]) -> int:
    paths = data_paths(argv)
    if not paths:
        return 0
    head = has_commit("HEAD")
    # the other staged paths that can collide: pre-commit passes every staged data path
    staged = paths

    @cache
    def siblings(directory: str) -> frozenset[str]:
        names = set(tree_children("HEAD", directory)) if head else set()
        prefix = directory + "/"
        names.update(p[len(prefix) :].split("/", 1)[0] for p in staged if p.startswith(prefix))
        return frozenset(names)

    findings = []
    for path in paths:
        # an unreadable record gives None here; the validate hook says why
        doc = load_object(path) if path.endswith(".json") else None
        findings += naming_findings(path, doc, siblings)
    from eee.flagged import without_flagged

    return emit(without_flagged(findings))
