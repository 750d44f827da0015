"""The store's rules, one home each: pure functions over a path, a document and a tree.

- :mod:`eee.store.paths`: layout and names of a path (no tree needed), and :func:`~eee.store.paths.file_kind`.
- :mod:`eee.rules.layout`: :func:`~eee.rules.layout.case_clash`, names that differ only in
  case from what the tree holds (the validator, the naming hook, the audit, convert).
- :mod:`eee.rules.schema`: a document against the schema of the version it declares.
- :mod:`eee.rules.record`: a record's checks beyond its schema (scores, folders, its sidecar's path).
- :mod:`eee.rules.sidecar`: a sidecar's rows (the one strict row parser,
  :func:`~eee.rules.sidecar.parse_row`) and :func:`~eee.rules.sidecar.matches_record`.
- :mod:`eee.rules.events`: governance events and the ledger they fold into.
- :mod:`eee.rules.commit`: what a commit may change (immutability, sidecars outside git,
  naming), for the hooks and the audit; the duplicate rule lives with the ledger
  (:mod:`eee.governance.duplicates`).

The validator, the hooks, the audit and the tools call these; none of them writes.
"""
