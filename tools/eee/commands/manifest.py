"""``eee manifest``: write the store manifest (``build/manifest/store.json``) that the
pipeline's stages depend on (see :mod:`eee.store.manifest`). It is the pipeline's first stage
(``always_changed`` in dvc.yaml): DVC runs it every time, and the stages after it rerun
only when the manifest's content changed."""

from __future__ import annotations

from eee.commands import Parser, add_out, add_store
from eee.store.manifest import DEFAULT, write


def main(argv: list[str]) -> int:
    p = Parser(
        "eee manifest",
        "Write the manifest of the store's records, sidecar pointers, events and pulled sidecars (with their "
        "sha256), which the pipeline's stages depend on. Unchanged content is not rewritten.",
    )
    add_store(p)
    add_out(p, "FILE", help=f"where, relative to the store (default: {DEFAULT})", default=DEFAULT)
    args = p.parse_args(argv)
    root = args.store
    path, changed = write(root, args.out)
    print(f"store manifest {'updated' if changed else 'unchanged'}: {path.relative_to(root).as_posix()}")
    return 0
