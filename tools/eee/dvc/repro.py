"""``python -m eee.dvc.repro [ARGS...]``: stock ``dvc repro ARGS`` whose stage index leaves
out the store's ``data/`` folder.

Before it runs anything, DVC builds its index of every stage in the repository: it walks the
work tree and parses every ``.dvc`` file it finds as YAML. In a store the sidecar pointers
under ``data/`` are such files, one per sidecar, so at 10,000 sidecars that load alone takes
about 10 s (nine tenths of a ``dvc repro`` that has nothing to do), on every run. None of the
pipeline's stages reads those pointers as DVC stages: they depend on the store manifest
(``build/manifest/store.json``), not on ``data/``. So this runs DVC's own command line with
its index walk told to skip ``data/`` at the top of the repository, and nothing else changed:
the same ``dvc.yaml``, ``dvc.lock``, decisions and output. Stock ``dvc pull`` and ``dvc push``
(and ``eee samples``) still see every pointer; ``dvc repro`` alone still works, only slower.

When DVC's internals are not what this expects, it says so on stderr and runs stock DVC.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from eee.store.paths import DATA_DIR

SKIPPED = (DATA_DIR,)  # top-level folders the stage index does not walk


def prune_index_walk(skipped: tuple[str, ...] = SKIPPED) -> bool:
    """Make DVC's stage collection skip ``skipped`` top-level folders; False when DVC's
    internals do not have the shape this relies on (nothing is changed then)."""
    try:
        import dvc.repo.index as index
    except ImportError:  # pragma: no cover - DVC is a dependency
        return False
    original = getattr(index, "collect_files", None)
    if original is None or getattr(original, "_eee_pruned", False):
        return original is not None

    def collect_files(repo: Any, onerror: Any = None) -> Iterator[Any]:
        ignore = repo.dvcignore
        walk = ignore.walk
        top = repo.root_dir

        def pruned(fs: Any, path: str, **kwargs: Any) -> Iterator[Any]:
            for root, dirs, files in walk(fs, path, **kwargs):
                if root == top:
                    for name in skipped:
                        if isinstance(dirs, dict):
                            dirs.pop(name, None)
                        elif name in dirs:
                            dirs.remove(name)
                yield root, dirs, files

        ignore.walk = pruned
        try:
            yield from original(repo, onerror=onerror)
        finally:
            del ignore.walk

    collect_files._eee_pruned = True  # type: ignore[attr-defined]
    index.collect_files = collect_files
    return True


def main(argv: list[str]) -> int:
    if not prune_index_walk():
        print("eee.dvc.repro: DVC's stage collection is not as expected; running stock dvc repro", file=sys.stderr)
    from dvc.cli import main as dvc_main

    return int(dvc_main(["repro", *argv]) or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
