"""Reading records and sidecars *as* a version, in memory: :func:`load_record`, :func:`load_rows`.

Nothing here writes a file. The export (``eee migrate``) writes migrated copies elsewhere
with the same functions underneath, so a reader and an export see the same documents.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from eee.migrate.chain import Result, migrate
from eee.migrate.changes import MigrationRefused
from eee.reporting.findings import Finding
from eee.rules.sidecar import parse_row
from eee.store.limits import RECORD_MAX_BYTES, iter_lines, problem_of, read_regular
from eee.store.schemas import EVAL, INSTANCE, Registry, default_registry
from eee.store.strictjson import JSONProblem, canonical_row, loads

PathLike = str | os.PathLike[str]


def read_record(path: PathLike, file: str | None = None) -> tuple[bytes, Any]:
    """The bytes and the strict-JSON document of one record file (refused when not strict JSON)."""
    file = file or str(path)
    try:
        data = read_regular(path, RECORD_MAX_BYTES, "record")
    except OSError as exc:
        raise MigrationRefused([Finding(file, "$", *problem_of(exc), check="input")]) from None
    try:
        return data, loads(data)
    except JSONProblem as problem:
        raise MigrationRefused(
            [Finding(file, problem.pointer, problem.message, problem.hint, line=problem.line, check="json")]
        ) from None


def migrate_file(
    path: PathLike, to: str | None = None, registry: Registry | None = None, file: str | None = None
) -> Result:
    """Read one aggregate record and migrate it (see :func:`eee.migrate.chain.migrate`)."""
    file = file or str(path)
    _data, doc = read_record(path, file)
    return migrate(doc, EVAL, to, registry, file)


def load_record(path: PathLike, as_version: str | None = None, registry: Registry | None = None) -> dict[str, Any]:
    """The aggregate record at ``path`` as ``as_version`` (default: the current version).

    A record already at that version comes back as written; an older one as its migrated
    copy, which records what migration filled, converted or moved (see
    :mod:`eee.migrate.provenance`). Raises :class:`~eee.migrate.changes.MigrationRefused`
    with the reason when the record cannot be migrated (a downgrade included), ValueError
    for an unknown version. The checksum of a sidecar is not touched here: it still names
    the sidecar as stored, whose rows :func:`load_rows` reads.
    """
    return migrate_file(path, as_version, registry).doc


def _lines(path: PathLike, file: str | None = None) -> Iterator[bytes]:
    """The sidecar's lines: a regular file, never through a link, every line within its cap."""
    try:
        yield from iter_lines(Path(path))
    except OSError as exc:
        raise MigrationRefused([Finding(file or str(path), "$", *problem_of(exc), check="input")]) from None


def _row(line: bytes, file: str, lineno: int) -> Any:
    row, problem = parse_row(line, file, lineno)
    if problem is not None:
        raise MigrationRefused([problem])
    return row


def migrate_rows(
    path: PathLike, to: str | None = None, registry: Registry | None = None, file: str | None = None
) -> Iterator[tuple[bytes, Result]]:
    """Each line of a sidecar with its migrated row; refuses (with the line number) at the first bad row."""
    registry = registry or default_registry()
    file = file or str(path)
    for lineno, line in enumerate(_lines(path, file), start=1):
        row = _row(line, file, lineno)
        try:
            result = migrate(row, INSTANCE, to, registry, file)
        except MigrationRefused as refused:
            raise refused.for_file(file, lineno) from None
        yield line, result


def load_rows(
    path: PathLike, as_version: str | None = None, registry: Registry | None = None
) -> Iterator[dict[str, Any]]:
    """The rows of the sidecar at ``path`` as ``as_version`` (default: current), one at a time.

    Raises :class:`~eee.migrate.changes.MigrationRefused` at the first row that cannot be
    migrated; the finding carries its line number.
    """
    for _line, result in migrate_rows(path, as_version, registry):
        yield result.doc


class SidecarCopy:
    """What writing a migrated sidecar produced: rows, whether any changed, the new checksum."""

    __slots__ = ("changed", "checksum", "rows", "sources")

    def __init__(self) -> None:
        self.rows = 0
        self.changed = False
        self.checksum: str | None = None
        self.sources: dict[str, int] = {}  # source version -> rows


def write_rows(
    path: PathLike,
    out: IO[bytes],
    to: str | None,
    registry: Registry,
    file: str,
    algorithm: str = "sha256",
) -> SidecarCopy:
    """Write the migrated rows of ``path`` to ``out``: a changed row in canonical form, others as written.

    When no row changes, the caller should copy the file verbatim instead (the copy keeps
    the bytes, so the record's checksum stays true).
    """
    copy = SidecarCopy()
    digest = hashlib.new(algorithm)
    for line, result in migrate_rows(path, to, registry, file):
        data = canonical_row(result.doc) if result.changed else line + b"\n"
        out.write(data)
        digest.update(data)
        copy.rows += 1
        copy.changed = copy.changed or result.changed
        copy.sources[result.source] = copy.sources.get(result.source, 0) + 1
    copy.checksum = digest.hexdigest()
    return copy
