"""The identity registry: one name for each developer, model, benchmark and metric.

Names are data. ``governance/identity/`` holds one plain YAML file per kind
(``developers.yaml``, ``models.yaml``, ``benchmarks.yaml``, ``metrics.yaml``; schema:
``schemas/identity/registry.schema.json``) giving each canonical id and its **aliases**, the
other spellings of the same thing. A rename is an alias, never a move: records keep their
paths, and readers (the catalogue's ``*_canonical`` columns, stats, compare, irt, dedup, the
site) group by the canonical id. Changing the registry is a maintainer's act.

- **Spellings.** A record's developer is the developer part of ``model_info.id`` (its
  folder), its model ``model_info.id``, its benchmark its benchmark folder, its metrics each
  result's ``metric_config.metric_id``. :meth:`Table.match` says how a spelling relates to
  the registry: canonical, an alias, the same but for case or punctuation (one normalised
  key, :func:`key`), or a near miss (one letter more, less or swapped), found by blocking
  on the key's one-letter deletions, never by comparing every pair.
- **Settled.** An alias may name the commit it was made at (``settled_at``): the records
  that commit holds under the alias were already there and are settled; a record added under
  it later is warned (:func:`settled`, asked of git: a path is in that commit or it is not,
  whatever dates a record declares).
- **Conventions** of a datastore's folder names, declared once: benchmark folder prefixes
  (``hal-`` for the HAL leaderboard's ``hal-assistantbench``) and how model folders spell
  characters of model ids (a dot as a dash: ``google/gemini-2-0-flash``).
- **Hub.** A benchmark may name its Hugging Face Hub dataset and task ids (``eee export
  hf-evals``).

The files are input written by someone else: read from a tree (:func:`read`), bounded
(:data:`eee.store.limits.IDENTITY_MAX_BYTES`), plain YAML (:mod:`eee.store.safeyaml`),
checked against the pinned schema and for consistency; each problem is a
:class:`Problem` naming the file, the place (with its line) and the fix, and a bad file is
left out (the others still count). The hooks read the registry at every commit: what a
file's bytes parse to is kept in the git directory, keyed by their sha256, so a commit
pays for the YAML parser only when the registry changed.

The parts (issue 34.5): :mod:`~eee.store.identity.model` (the tables and the registry),
:mod:`~eee.store.identity.near` (near-miss matching), :mod:`~eee.store.identity.parse` (the
YAML files and their schema), :mod:`~eee.store.identity.cache` (reading a tree, the JSON
cache) and :mod:`~eee.store.identity.settled` (the git checks). This package re-exports
their public names, so ``from eee.store.identity import Registry, read`` reads as before.
"""

from __future__ import annotations

from eee.store.identity.cache import (
    CACHE_FORMAT,
    CACHE_KEEP,
    CACHE_NAME,
    PARSED_KEEP,
    digest_of,
    home_registry,
    load,
    read,
    read_files,
    registry_paths,
    repo_of,
)
from eee.store.identity.model import (
    ALIAS,
    BENCHMARK,
    CANONICAL,
    CASE,
    DEVELOPER,
    EMPTY,
    FILES,
    IDENTITY_DIR,
    KIND_OF_FILE,
    KINDS,
    MATCHES_KEPT,
    METRIC,
    MODEL,
    NEAR,
    PUNCTUATION,
    SCHEMA,
    SCHEMAS,
    Alias,
    Match,
    Problem,
    Registry,
    Table,
    folder_spelt,
    is_registry_file,
    record_spellings,
    strip_prefix,
)
from eee.store.identity.near import (
    NEAR_MIN,
    deletions,
    key,
    swaps,
)
from eee.store.identity.parse import (
    parse,
)
from eee.store.identity.settled import (
    close_checkers,
    commit_known,
    settled,
)

__all__ = [
    "ALIAS",
    "BENCHMARK",
    "CACHE_FORMAT",
    "CACHE_KEEP",
    "CACHE_NAME",
    "CANONICAL",
    "CASE",
    "DEVELOPER",
    "EMPTY",
    "FILES",
    "IDENTITY_DIR",
    "KINDS",
    "KIND_OF_FILE",
    "MATCHES_KEPT",
    "METRIC",
    "MODEL",
    "NEAR",
    "NEAR_MIN",
    "PARSED_KEEP",
    "PUNCTUATION",
    "SCHEMA",
    "SCHEMAS",
    "Alias",
    "Match",
    "Problem",
    "Registry",
    "Table",
    "close_checkers",
    "commit_known",
    "deletions",
    "digest_of",
    "folder_spelt",
    "home_registry",
    "is_registry_file",
    "key",
    "load",
    "parse",
    "read",
    "read_files",
    "record_spellings",
    "registry_paths",
    "repo_of",
    "settled",
    "strip_prefix",
    "swaps",
]
