"""The store's rules, one home each: pure functions over a path, a document and a tree.

Every check is a rule of :mod:`eee.rules.registry` (its id, severity, hint, whether a flag
may accept it); a finding names its rule. One module per kind of file or change:

- :mod:`eee.rules.layout`: where a file may be and how it is named (the path rules that need
  no tree are :mod:`eee.store.paths`), names that differ only in letter case, links.
- :mod:`eee.rules.schema`: a document against the schema of the version it declares, and
  near misses.
- :mod:`eee.rules.record`: an aggregate record (strict JSON, version, schema, scores, result
  ids, folders from ``model_info.id``, the benchmark folder, its sidecar's declaration).
- :mod:`eee.rules.sidecar`: a sidecar's rows (the one strict row parser,
  :func:`~eee.rules.sidecar.parse_row`) and its pairing with its record.
- :mod:`eee.rules.pointer`: a DVC pointer.
- :mod:`eee.rules.duplicates`: a record that repeats another one (the equivalence and its
  index are :mod:`eee.governance.duplicates`).
- :mod:`eee.rules.ledger`: governance events, each file and the ledger in history order.
- :mod:`eee.rules.flags`: what a flag accepts.
- :mod:`eee.rules.imports`: an import manifest.
- :mod:`eee.rules.commit`: what a commit may change (immutability, sidecars outside git,
  naming), for the hooks and the audit.
- :mod:`eee.rules.history`: what the audit guarantees about history itself (merges,
  rewritten history, replacements, crafted trees).

The validator (:mod:`eee.validation.validate`), the hooks, the audit and the tools call
these; none of them writes.
"""
