"""Importing a datastore snapshot: every source file ends with one outcome.

A snapshot (a folder, or a git repository at a revision) in the datastore layout is read
through a tree, planned against the store (:mod:`eee.imports.plan`), validated through an
overlay of the planned files over the store's tree, and written (optionally committed in
batches through the hooks: :mod:`eee.imports.run`). Each import leaves a manifest under
``governance/imports/`` that traces every source file to its outcome
(:mod:`eee.governance.manifests`, where the outcomes are named); manifests are immutable
like events, and their rules are :mod:`eee.rules.imports`.
"""
