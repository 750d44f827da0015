"""Hook ``eee-naming``: layout, lowercase uuid4, portable names, no case-only collisions
with anything in the tree, ``<developer>/<model>`` folders taken from ``model_info.id``, and
one uuid for one record (no other record of the next commit holds a staged record's uuid:
:mod:`eee.rules.uuids`, through the duplicates index).

Names and records are read from the index (:class:`eee.store.staged.IndexTree`): what will be
committed, not the work tree."""

from __future__ import annotations

from eee.hooks import data_paths, emit
from eee.rules.commit import naming_findings
from eee.store import identity
from eee.store.jsonlite import tree_object
from eee.store.staged import index_tree


def main(argv: list[str]) -> int:
    paths = data_paths(argv)
    if not paths:
        return 0
    index = index_tree()
    names = identity.read(index)  # the registry the commit will hold: its folder conventions
    findings = []
    for path in paths:
        # an unreadable record gives None here; the validate hook says why
        doc = tree_object(index, path) if path.endswith(".json") else None
        found = naming_findings(path, doc, index.names, spellings=names)
        if found and doc is not None:  # the line of each finding's JSON location (errors only pay)
            from eee.store.strictjson import (
                attach_lines,  # lazy: orjson stays off this hook unless a finding needs its line
            )

            attach_lines(found, index.read(path), doc)
        findings += found
    records = [p for p in paths if p.endswith(".json")]
    if records:  # one uuid, one record: against the next commit's records (eee.rules.uuids)
        from eee.rules.uuids import index_holders, uuid_findings

        findings += uuid_findings(records, index_holders(index))
    if findings:  # a record flagged for this rule is accepted
        from eee.validation.flagged import without_flagged  # lazy: only when there is a finding

        findings = without_flagged(findings)
    return emit(findings)
