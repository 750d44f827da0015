"""The store manifest the pipeline depends on: content, not timestamps."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import EXAMPLES, place_with_sidecar
from eee.store.manifest import write

ROWS = (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()


def test_manifest_follows_content_not_mtimes(tmp_path: Path) -> None:
    record, sidecar = place_with_sidecar(tmp_path, ROWS)
    path, changed = write(tmp_path)
    assert changed
    first = path.read_text()
    manifest = json.loads(first)
    assert record.relative_to(tmp_path).as_posix() in manifest["files"]
    assert sidecar.relative_to(tmp_path).as_posix() in manifest["sidecars_present"]
    os.utime(sidecar, ns=(1, 1))  # a fresh clone, a pull: new mtimes, same bytes
    assert write(tmp_path) == (path, False)
    assert path.read_text() == first
    sidecar.write_bytes(ROWS.replace(b'"q1"', b'"q2"'))  # same size, other bytes
    assert write(tmp_path)[1] is True
    sidecar.unlink()  # not pulled
    assert write(tmp_path)[1] is True
    assert json.loads(path.read_text())["sidecars_present"] == {}
