"""What an export migrates, one input at a time: the records named, and sidecars without a record.

:class:`Inputs` yields the same records, in the same order, as planning from
:func:`eee.validation.collect.collect` did (files, folders walked recursively, globs; paths sorted
within each folder walked; a sidecar named alone brings its record; the sidecars without a
record come last), without holding the store's paths: a folder is listed when the walk
reaches it, and only the listings of the folders above the current one are kept.

Duplicates: one folder walked (or one file) never yields a record twice; the only twin is a
record reached both directly and through its sidecar, which lie in one folder, so that
folder's own set of records catches it. Several inputs (or a glob) may overlap, so then every
path seen is remembered, as collect did.

Walking again is cheap next to migrating: the export iterates twice (once to count the
inputs and find their stores, once to migrate), and a problem with an input (a missing
path, an empty or unreadable folder) is reported from :func:`eee.validation.collect.collect` itself, so
the findings are the validator's, word for word.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from pathlib import Path

from eee.reporting.findings import Finding
from eee.store.paths import RECORD, SIDECAR, file_kind, record_path_for_sidecar
from eee.validation.collect import walk_folders

_GLOB_CHARS = set("*?[")
RECORD_UNIT, ORPHAN_UNIT = "record", "orphan"


class Inputs:
    """The records to migrate under ``paths`` (iterate: ``(RECORD_UNIT | ORPHAN_UNIT, absolute path)``).

    ``problems`` is True after an iteration met a path that does not exist, a glob without a
    match, a folder with no files, or a folder it could not read (collect names them).
    """

    def __init__(self, paths: list[str | Path] | tuple[str | Path, ...]) -> None:
        self.paths = [str(p) for p in paths]
        self.problems = False

    def _sources(self) -> Iterator[tuple[str, bool, bool]]:
        """Each path to take in turn (globs expanded, sorted), whether it is a folder to walk,
        and whether it was named itself (a folder named must hold files; a glob's need not)."""
        for arg in self.paths:
            if os.path.lexists(arg):
                yield arg, os.path.isdir(arg) and not os.path.islink(arg), True
            elif _GLOB_CHARS & set(arg):
                matches = sorted(glob.glob(arg, recursive=True))
                if not matches:
                    self.problems = True
                for m in matches:
                    yield m, os.path.isdir(m) and not os.path.islink(m), False
            else:
                self.problems = True

    def _files(self) -> Iterator[tuple[str, set[str] | None]]:
        """Every file collect would list, in its order, with the record set of its folder (None
        when the inputs may overlap: then every path is remembered here instead)."""
        overlap = len(self.paths) > 1 or any(not os.path.lexists(a) for a in self.paths)
        seen: set[str] | None = set() if overlap else None
        for arg, folder, named in self._sources():
            if folder:
                found = False
                for path, records in self._walk(arg):
                    found = True
                    if seen is None:
                        yield path, records
                    elif path not in seen:
                        seen.add(path)
                        yield path, None
                if named and not found:
                    self.problems = True  # collect: "0 files checked"
            else:
                path = os.path.abspath(arg)
                if seen is None:
                    yield path, set()
                elif path not in seen:
                    seen.add(path)
                    yield path, None

    def __iter__(self) -> Iterator[tuple[str, str]]:
        self.problems = False
        orphans: list[str] = []
        everywhere: set[str] = set()  # records yielded, when the inputs may overlap
        for absolute, records in self._files():
            kind = file_kind(absolute)
            if kind == SIDECAR:
                record = record_path_for_sidecar(absolute)
                if not os.path.exists(record):
                    orphans.append(absolute)
                    continue
                absolute = record
            elif kind != RECORD:
                continue  # DVC pointers and other files have nothing to migrate
            seen = everywhere if records is None else records
            if absolute not in seen:
                seen.add(absolute)
                yield RECORD_UNIT, absolute
        for absolute in orphans:
            yield ORPHAN_UNIT, absolute

    def _walk(self, top: str) -> Iterator[tuple[str, set[str]]]:
        """The files below ``top`` as the validator's walk lists them (:func:`eee.validation.collect.walk_folders`:
        a store root means its data/ and governance/events/, in sorted order), each with the
        record set of its folder, kept only while the walk is inside that folder."""
        problems: list[Finding] = []
        open_folders: list[tuple[str, set[str]]] = []  # the current folder and those above it
        for folder, names in walk_folders(top, problems=problems):
            while open_folders and not (folder + os.sep).startswith(open_folders[-1][0] + os.sep):
                open_folders.pop()
            if not open_folders or open_folders[-1][0] != folder:
                open_folders.append((folder, set()))
            records = open_folders[-1][1]
            for name in names:
                yield os.path.join(folder, name), records
        if problems:
            self.problems = True
