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
        found = naming_findings(path, doc, siblings)
        if found and doc is not None:  # the line of each finding's JSON location (errors only pay)
            from eee.strictjson import attach_lines  # lazy: orjson stays off this hook unless a finding needs its line

            with open(path, "rb") as fh:
                attach_lines(found, fh.read(), doc)
        findings += found
    return emit(findings)
