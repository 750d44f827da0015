"""Schema migration: every historical record readable as the current version.

Records stay valid under the version they were written in and are never rewritten; readers
and exports see them *as* a newer version through a chain of small, pure steps, one per
released version step and record kind (:mod:`eee.migrate.steps`):

    0.2.0 -> 0.2.1 -> 0.2.2 -> 0.2.3 -> 0.3.0   (aggregate records and instance-level rows)

Rules every step follows:

- Nothing is guessed silently. A required field with no source is written as ``unknown``
  and listed as *filled*; a value the newer version types as a string is written as its JSON
  text (``7`` -> ``"7"``, ``{"a": 1}`` -> ``"{\\"a\\":1}"``, ``null`` -> ``"null"``,
  ``true`` -> ``"true"``) and listed as *converted*; a field the newer version has no place
  for moves into a free-form string map and is listed as *moved*; a value computed from
  another field is listed as *derived*. The copy records all of it, and the version it came
  from, in ``source_metadata.additional_details`` (records) or ``metadata`` (rows) under
  ``eee_migrated_from`` and ``eee_migration_*`` keys (:mod:`eee.migrate.provenance`).
- What cannot be migrated losslessly is refused with the reason (:class:`MigrationRefused`),
  never returned or written half-done. A document must also be valid where it stands: the
  schema of its declared version and, for records, the validator's score rules (a score
  outside its declared bounds, a result id used twice) block, because the steps are written
  for valid documents and must not repair one silently. The validator's layout and naming
  findings do not block: they concern where a file lies, and a copy keeps the input's
  layout. The copy must be valid under the target version, or it is refused too.
- Downgrades are refused. A document already at the target passes through unchanged, so
  migrating a migrated copy again is a no-op.

Entry points: :func:`load_record` / :func:`load_rows` (also ``eee.load_record``) read as a
version in memory; :func:`migrate_record` / :func:`migrate_row` migrate parsed documents;
``eee migrate --to VERSION PATH... --out DIR`` writes copies (:mod:`eee.migrate.export`).
"""

from __future__ import annotations

from eee.migrate.chain import Result, migrate, migrate_record, migrate_row, plan
from eee.migrate.changes import Changes, MigrationRefused
from eee.migrate.files import load_record, load_rows
from eee.migrate.steps import STEPS, Step

__all__ = [
    "STEPS",
    "Changes",
    "MigrationRefused",
    "Result",
    "Step",
    "load_record",
    "load_rows",
    "migrate",
    "migrate_record",
    "migrate_row",
    "plan",
]
