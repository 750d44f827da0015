"""Placing new records in the store: from a document to the files to write.

:func:`new_record` gives a document a fresh uuid and its canonical path (from the
benchmark and ``model_info.id``), and its sidecar rows their path and checksum;
:func:`check` validates what would be written through an :class:`eee.store.tree.Overlay` over
the store's work tree (nothing touches the disk); :func:`existing` names targets that
exist already. The files are then written, staged and committed (or all taken back) by a
transaction of :mod:`eee.write.commit`. ``eee convert``, ``supersede`` and ``eee import``
place records through here.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eee.reporting.findings import ERROR, Finding
from eee.store.paths import canonical_record_path, new_uuid, sidecar_path_for
from eee.store.strictjson import canonical
from eee.store.tree import EmptyTree, Overlay, WorkTree
from eee.validation.validate import Options, validate_tree

if TYPE_CHECKING:
    from eee.write.commit import Transaction


@dataclass
class NewRecord:
    """A record to place: its uuid, path and exact bytes, and its sidecar's."""

    uuid: str
    rel: str
    data: bytes
    doc: dict[str, Any]
    sidecar_rel: str | None = None
    sidecar_data: bytes | None = None

    def files(self) -> list[tuple[str, bytes]]:
        out = [(self.rel, self.data)]
        if self.sidecar_rel is not None and self.sidecar_data is not None:
            out.append((self.sidecar_rel, self.sidecar_data))
        return out


def new_record(
    benchmark: str, doc: dict[str, Any], sidecar: bytes | None = None, rows: int = 0, record_uuid: str | None = None
) -> NewRecord:
    """``doc`` under ``record_uuid`` (a fresh uuid when None) at
    ``data/<benchmark>/<developer>/<model>/<uuid>.json``.

    With ``sidecar`` (the rows' bytes, ``rows`` of them) the record declares it in
    ``detailed_evaluation_results`` (format, path, sha256, row count; any other key it
    declares there is kept). Raises ValueError when ``model_info.id`` is not of the form
    developer/model."""
    info = doc.get("model_info")
    model_id = info.get("id") if isinstance(info, dict) else None
    if not isinstance(model_id, str):
        raise ValueError("model_info.id is missing")
    record_uuid = record_uuid or new_uuid()
    rel = canonical_record_path(benchmark, model_id, record_uuid)
    sidecar_rel = None
    if sidecar is not None:
        sidecar_rel = sidecar_path_for(rel)
        declared = doc.get("detailed_evaluation_results")
        doc = {
            **doc,
            "detailed_evaluation_results": {
                **(declared if isinstance(declared, dict) else {}),  # what else it says of them stays
                "format": "jsonl",
                "file_path": sidecar_rel,
                "hash_algorithm": "sha256",
                "checksum": hashlib.sha256(sidecar).hexdigest(),
                "total_rows": rows,
            },
        }
    return NewRecord(record_uuid, rel, canonical(doc), doc, sidecar_rel, sidecar)


def check(root: Path | None, records: list[NewRecord]) -> tuple[list[Finding], list[Finding]]:
    """(errors, warnings) of the validator on the store at ``root`` as it would be with
    ``records`` placed (an :class:`~eee.store.tree.Overlay`; ``root`` None: on their own)."""
    planned = {rel: data for record in records for rel, data in record.files()}
    if not planned:
        return [], []
    overlay = Overlay(WorkTree(root) if root is not None else EmptyTree(), planned)
    summary = validate_tree(overlay, sorted(planned), Options())
    findings = [f for r in summary.results for f in r.findings]
    if summary.fatal:
        findings.append(Finding("schemas/registry.json", "$", summary.fatal, check="registry"))
    return [f for f in findings if f.severity == ERROR], [f for f in findings if f.severity != ERROR]


def write(tx: Transaction, records: list[NewRecord]) -> None:
    """Write ``records`` into the transaction ``tx`` (exclusively: never over a file), each
    record staged, each sidecar placed by the store's rule (:mod:`eee.write.samples`: checked
    against its record, then up to HEAD's ``sidecar_git_max_bytes`` staged in git, above it
    put in DVC with its pointer, the pointer and ``.gitignore`` staged). Raises OSError (a
    file that exists, a failed write) or Refused (DVC's refusal, unusable settings); the
    transaction takes back what was written."""
    from eee.write import samples

    sidecars = [
        (r.sidecar_rel, r.sidecar_data) for r in records if r.sidecar_rel is not None and r.sidecar_data is not None
    ]
    current = samples.store_settings(tx.root) if sidecars else None
    to_git = [(rel, data) for rel, data in sidecars if current is not None and samples.in_git(len(data), current)]
    to_dvc = [(rel, data) for rel, data in sidecars if (rel, data) not in to_git]
    tx.write([(record.rel, record.data) for record in records] + to_git)
    if not to_dvc:
        return
    tx.write(to_dvc, stage=False)
    paths = [tx.root / rel for rel, _ in to_dvc]
    problem = samples.dvc_problem(tx.root)
    if problem:
        from eee.reporting.findings import refusal

        raise refusal(problem, check="dvc")
    samples.check_pairs(paths, tx.root)
    assert current is not None
    samples.place(tx, paths, current)


def needs_dvc(root: Path, records: list[NewRecord]) -> bool:
    """Whether placing ``records`` puts a sidecar in DVC (one above HEAD's threshold)."""
    from eee.write import samples

    sizes = [len(r.sidecar_data) for r in records if r.sidecar_data is not None]
    if not sizes:
        return False
    current = samples.store_settings(root)
    return any(not samples.in_git(size, current) for size in sizes)


def existing(root: Path, records: list[NewRecord]) -> list[str]:
    """The paths of ``records`` that exist already below ``root`` (never overwritten)."""
    return [rel for record in records for rel, _ in record.files() if os.path.lexists(root / rel)]
