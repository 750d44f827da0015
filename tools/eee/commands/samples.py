"""``eee samples add|push|pull``: per-sample sidecars in DVC."""

from __future__ import annotations

import argparse
from pathlib import Path

from eee.gitutil import GitError, toplevel
from eee.samples import SamplesError, add, transfer


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="eee samples", description="Keep per-sample sidecars in DVC.")
    sub = p.add_subparsers(dest="action", required=True)
    a = sub.add_parser("add", help="check a sidecar against its record, `dvc add` it and stage the pointer")
    a.add_argument("paths", nargs="+", metavar="PATH", help="<uuid>_samples.jsonl files")
    a.add_argument("--no-stage", action="store_true", help="do not `git add` the pointer")
    for name, text in (("push", "upload sidecars to the DVC remote"), ("pull", "fetch sidecars from the DVC remote")):
        t = sub.add_parser(name, help=text)
        t.add_argument("paths", nargs="*", metavar="PATH", help="sidecars, pointers or folders (default: all)")
    args = p.parse_args(argv)
    try:
        root = toplevel(Path.cwd())
    except GitError:
        print("eee samples: run it inside the store's git work tree")
        return 1
    try:
        if args.action == "add":
            for path in args.paths:
                pointer = add(Path(path), stage=not args.no_stage, root=root)
                print(
                    f"added {path} to DVC; {'staged' if not args.no_stage else 'wrote'} {pointer.relative_to(root.resolve()) if pointer.is_absolute() else pointer}"
                )
            return 0
        out = transfer(args.action, args.paths, root)
        print(out or f"dvc {args.action}: nothing to do")
        if args.action == "pull":
            from eee.validate import run

            summary = run([str(root / "data")] if not args.paths else args.paths)
            bad = [
                f.one_line()
                for r in summary.results
                for f in r.findings
                if f.check == "sidecar" and f.severity == "error"
            ]
            for line in bad:
                print(line)
            return 1 if bad else 0
        return 0
    except SamplesError as exc:
        print(f"eee samples: {exc}")
        return 1
