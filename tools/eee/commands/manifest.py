"""``eee manifest``: write the store manifest (``build/manifest/store.json``) that the
pipeline's stages depend on (see :mod:`eee.store.manifest`). It is the pipeline's first stage
(``always_changed`` in dvc.yaml): DVC runs it every time, and the stages after it rerun
only when the manifest's content changed."""

from __future__ import annotations

from pathlib import Path

from eee.commands import Parser, UsageError, add_store, store_of, usage_error
from eee.store.manifest import DEFAULT, write


def main(argv: list[str]) -> int:
    p = Parser(
        "eee manifest",
        "Write the manifest of the store's records, sidecar pointers, events and pulled sidecars (with their "
        "sha256), which the pipeline's stages depend on. Unchanged content is not rewritten.",
    )
    add_store(p)
    p.add_argument(
        "--out", type=Path, default=DEFAULT, metavar="FILE", help=f"where, relative to the store (default: {DEFAULT})"
    )
    args = p.parse_args(argv)
    try:
        root = store_of(args.store)
    except UsageError as exc:
        return usage_error("eee manifest", exc)
    path, changed = write(root, args.out)
    print(f"store manifest {'updated' if changed else 'unchanged'}: {path.relative_to(root).as_posix()}")
    return 0
