"""``eee stats [--out FILE] [--all]``: field fill rates across the store, as a metrics file."""

from __future__ import annotations

import json
import sys

from eee.commands import EXIT_ERRORS, EXIT_OK, add_all, add_manifest, add_out, add_store, parser


def main(argv: list[str]) -> int:
    p = parser(
        "eee stats",
        "Field fill rates: the share of records that fill each field, over the active records "
        "(not retracted, superseded or marked duplicate) unless --all is given.",
    )
    add_store(p)
    add_out(p, "FILE", help="write the JSON here (default: print it)")
    add_all(p, help="count every record, whatever its governance status (default: active ones)")
    add_manifest(
        p,
        help="the store manifest (eee manifest) of the store as it is now: only records whose sha256 changed since "
        "the last run are read (what the pipeline does; the cache is kept beside --out)",
    )
    args = p.parse_args(argv)
    root = args.store
    from eee.catalog.stats import fill_rates

    digests = cache = None
    cache_file = args.out.with_name(f".{args.out.name}.records.json") if args.out else None
    if args.manifest is not None:
        from eee.catalog.table import code_version
        from eee.store.manifest import read_manifest

        try:
            digests = read_manifest(root / args.manifest).get("files") or {}
        except ValueError as exc:
            p.error(f"--manifest: {exc}")
        version = code_version()
        try:
            kept = json.loads(cache_file.read_text()) if cache_file else {}
        except (OSError, ValueError):
            kept = {}
        cache = kept.get("records") if isinstance(kept, dict) and kept.get("code") == version else None
        cache = cache if isinstance(cache, dict) else {}
    text = json.dumps(fill_rates(root, include_all=args.all, digests=digests, cache=cache), indent=2) + "\n"
    if cache is not None and cache_file is not None:
        from eee.catalog.table import atomic_write_text

        atomic_write_text(cache_file, json.dumps({"code": version, "records": cache}))
    if args.out:
        from eee.catalog.table import atomic_write_text

        try:
            atomic_write_text(args.out, text)
        except OSError as exc:
            print(f"{args.out}: cannot write: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_ERRORS
        print(f"fill rates -> {args.out}")
    else:
        print(text, end="")
    return EXIT_OK
