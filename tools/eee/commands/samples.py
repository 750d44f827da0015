"""``eee samples add|push|pull``: per-sample sidecars in DVC."""

from __future__ import annotations

import sys
from pathlib import Path

from eee.commands import Parser, UsageError, add_store, refused, store_of, usage_error
from eee.findings import Refused, refusal
from eee.gitutil import GitError
from eee.samples import add, transfer


def main(argv: list[str]) -> int:
    p = Parser(
        "eee samples", "Keep per-sample sidecars in DVC: what was done goes to stdout, DVC's own output to stderr."
    )
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=Parser, help="what to do")
    a = sub.add_parser(
        "add",
        help="check a sidecar against its record, `dvc add` it and stage the pointer",
        description="Check sidecars against their records, `dvc add` them and stage the pointers.",
    )
    a.add_argument("paths", nargs="+", metavar="PATH", help="<uuid>_samples.jsonl files")
    a.add_argument("--no-stage", action="store_true", help="do not `git add` the pointer")
    add_store(a)
    for name, text in (("push", "upload sidecars to the DVC remote"), ("pull", "fetch sidecars from the DVC remote")):
        t = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        t.add_argument("paths", nargs="*", metavar="PATH", help="sidecars, pointers or folders (default: all)")
        add_store(t)
    args = p.parse_args(argv)
    try:
        root = store_of(args.store)
    except UsageError as exc:
        return usage_error("eee samples", exc)
    try:
        if args.action == "add":
            for path in args.paths:
                pointer = add(Path(path), stage=not args.no_stage, root=root)
                shown = pointer.relative_to(root) if pointer.is_absolute() else pointer
                print(f"added {path} to DVC; {'staged' if not args.no_stage else 'wrote'} {shown}")
            return 0
        out = transfer(args.action, args.paths, root)
        if out:
            print(out, file=sys.stderr)
        print(f"dvc {args.action}: done" if out else f"dvc {args.action}: nothing to do")
        if args.action == "pull":
            from eee.validate import run

            summary = run([str(root / "data")] if not args.paths else args.paths)
            bad = [f for r in summary.results for f in r.findings if f.check == "sidecar" and f.severity == "error"]
            if bad:
                return refused("eee samples", Refused(bad))
        return 0
    except Refused as exc:
        return refused("eee samples", exc)
    except GitError as exc:  # git's own refusal (e.g. of `git add`)
        return refused("eee samples", refusal(str(exc), check="git"))
