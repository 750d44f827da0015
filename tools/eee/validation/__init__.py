"""Validation: the validator over a tree (:mod:`.validate`), its incremental cache for the
pipeline (:mod:`.cache`), the flags that accept findings (:mod:`.flagged`) and the audit
of a commit range (:mod:`.audit`). The rules themselves live in :mod:`eee.rules`."""
