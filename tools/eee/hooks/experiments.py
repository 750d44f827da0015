"""Hook ``eee-experiments``: staged experiment cards are valid and name only what HEAD holds;
staged records that cite a card find it committed at HEAD (:mod:`eee.rules.experiments`).

What is checked is what will be committed (the index, :class:`eee.store.staged.IndexTree`);
"before" is HEAD, the commit the next one is made on (during a merge: the branch merged
onto). A card staged in the same commit as the results that cite it is refused: the card
comes first, in a commit of its own. The audit and the server gate judge the same order
along the mainline.
"""

from __future__ import annotations

from pathlib import Path

from eee.hooks import data_paths, emit
from eee.store.paths import EXPERIMENTS_DIR, RECORD_SUFFIX


def main(argv: list[str]) -> int:
    files = [p.replace("\\", "/") for p in argv]
    cards = [p for p in files if p.startswith(EXPERIMENTS_DIR + "/")]
    records = [p for p in data_paths(files) if p.endswith(RECORD_SUFFIX) and p.count("/") == 4]
    if not cards and not records:
        return 0
    from eee.governance.experiments import may_cite
    from eee.store.staged import index_tree
    from eee.store.strictjson import JSONProblem, loads
    from eee.store.tree import Unreadable

    tree = index_tree()
    citing = []
    for path in records:
        try:
            data = tree.read(path)
        except Unreadable:
            continue  # the validator reports it
        if not may_cite(data):
            continue  # the common record: no card named, nothing parsed
        try:
            citing.append((path, loads(data)))
        except JSONProblem:
            continue
    if not cards and not citing:
        return 0
    from eee.git.cli import has_commit
    from eee.rules.experiments import card_findings, citation_findings
    from eee.store.tree import GitTree

    root = Path.cwd()
    before = GitTree(root, "HEAD") if has_commit("HEAD", root) else None
    findings = citation_findings(citing, before, tree)
    if cards:
        holders = None
        if before is not None:
            from eee.rules.uuids import TreeRecords

            holders = TreeRecords(root).holders(["HEAD"], [])
        findings += card_findings(tree, cards, before, holders)
    return emit(findings)
