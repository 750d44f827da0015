"""The store manifest: what the pipeline's stages depend on.

DVC cannot depend on ``data/`` itself: the folder holds DVC-tracked sidecars, and in a
fresh clone (sidecars not pulled) DVC refuses to hash it ("missing data"). The manifest
lists what git tracks there (records, sidecar pointers, governance events) with their
sha256, plus which sidecars are present in the work tree, so a stage reruns exactly when
one of them changes and works whether or not the sidecars were pulled.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from eee.governance import EVENTS_DIR
from eee.paths import POINTER_SUFFIX, RECORD_SUFFIX, SIDECAR_SUFFIX

DEFAULT = Path("build/manifest/store.json")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(root: Path) -> dict[str, Any]:
    files: dict[str, str] = {}
    sidecars: dict[str, list[int]] = {}
    for top in (root / "data", root / EVENTS_DIR):
        for dirpath, _dirs, names in os.walk(top):
            for name in names:
                path = Path(dirpath, name)
                rel = path.relative_to(root).as_posix()
                if name.endswith(SIDECAR_SUFFIX):
                    st = path.stat()
                    sidecars[rel] = [st.st_size, st.st_mtime_ns]
                elif name.endswith((RECORD_SUFFIX, POINTER_SUFFIX, ".yaml")) or top.name != "data":
                    files[rel] = _digest(path)
    return {
        "format": "eee-store-manifest/1",
        "files": dict(sorted(files.items())),
        "sidecars_present": dict(sorted(sidecars.items())),
    }


def write(root: Path, out: Path | None = None) -> tuple[Path, bool]:
    """Write the manifest; returns (path, whether it changed). Unchanged bytes are not rewritten."""
    out = root / (out or DEFAULT)
    text = json.dumps(build(root), indent=1) + "\n"
    if out.exists() and out.read_text() == text:
        return out, False
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, out)
    return out, True
