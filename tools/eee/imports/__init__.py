"""Importing a datastore snapshot: every source file ends with one outcome.

A snapshot (a folder, or a git repository at a revision) in the datastore layout is read
through a tree, planned against the store, validated through an overlay of the planned
files over the store's tree, and written (optionally committed in batches through the
hooks). Each import leaves a manifest under ``governance/imports/`` that traces every
source file to its outcome; manifests are immutable like events.

This module holds constants only: the hooks import it.
"""

from eee.store.paths import IMPORTS_DIR as IMPORTS_DIR  # named beside the other store folders
from eee.store.paths import MANIFEST_SUFFIX as MANIFEST_SUFFIX

MANIFEST_SCHEMA_VERSION = "1.0.0"
MANIFEST_SCHEMA = ("imports", "manifest.schema.json")  # (folder, file) under schemas/

IMPORTED = "imported"  # unchanged, at its own path
RELOCATED = "relocated"  # byte-identical, moved to its canonical path
FLAGGED = "flagged"  # unchanged, with flag events for the store rules it breaks
PRESENT = "already_present"  # identical content already in the store: skipped
REFUSED = "refused"  # invalid under its declared schema, unreadable, or not in the layout
OUTCOMES = (IMPORTED, RELOCATED, FLAGGED, PRESENT, REFUSED)
WRITTEN = (IMPORTED, RELOCATED, FLAGGED)  # outcomes that add a file to the store
