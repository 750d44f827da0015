"""Hook ``eee-imports``: a staged import manifest is valid, adds up, and names only what
is in the commit (records with their sha256, sidecar pointers, flag events)."""

from __future__ import annotations

from eee.hooks import emit
from eee.store.paths import IMPORTS_DIR, MANIFEST_SUFFIX


def main(argv: list[str]) -> int:
    paths = [
        p
        for p in (a.replace("\\", "/") for a in argv)
        if p.startswith(IMPORTS_DIR + "/") and p.endswith(MANIFEST_SUFFIX)
    ]
    if not paths:
        return 0
    from eee.rules.imports import check_manifests

    return emit(check_manifests(paths))
