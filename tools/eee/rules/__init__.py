"""The store's rules, one home each, as pure functions over a path, a document and a tree.

- :mod:`eee.paths`: layout and names of a path (no tree needed), and the kind of a file.
- :mod:`eee.rules.layout`: names that differ only in case from what the tree holds.
- :mod:`eee.rules.sidecar`: a sidecar matches its record; the strict row parser.
- :mod:`eee.rules.commit`: what a commit may change (immutability, sidecars outside git,
  naming, duplicates), for the hooks and the audit.
- :mod:`eee.checks.schema`, :mod:`eee.checks.record`, :mod:`eee.checks.sidecar`,
  :mod:`eee.checks.events`: a record's schema and repository checks, a sidecar's rows,
  the governance events and ledger.

The validator, the hooks, the audit and the tools call these; none of them writes.
"""
