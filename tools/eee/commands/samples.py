"""``eee samples add|push|pull``: per-sample sidecars in DVC, at the cost of what is named."""

from __future__ import annotations

from pathlib import Path

from eee.commands import Parser, add_store, refused
from eee.git.cli import GitError
from eee.reporting.findings import Refused, refusal
from eee.write.samples import add_many, check_pulled, move


def main(argv: list[str]) -> int:
    p = Parser("eee samples", "Keep per-sample sidecars in DVC: what was done goes to stdout, failures to stderr.")
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=Parser, help="what to do")
    a = sub.add_parser(
        "add",
        help="check sidecars against their records, put them in DVC's cache and stage their pointers",
        description="Check sidecars against their records, write them to DVC's cache with their "
        "pointers (what `dvc add` writes) and stage the pointers.",
    )
    a.add_argument("paths", nargs="+", metavar="PATH", help="<uuid>_samples.jsonl files")
    a.add_argument("--no-stage", action="store_true", help="do not `git add` the pointers")
    add_store(a)
    for name, text in (("push", "upload sidecars to the DVC remote"), ("pull", "fetch sidecars from the DVC remote")):
        t = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        t.add_argument("paths", nargs="*", metavar="PATH", help="sidecars, pointers or folders (default: all of data/)")
        t.add_argument("-r", "--remote", metavar="NAME", help="the DVC remote (default: core.remote of DVC's config)")
        add_store(t)
    args = p.parse_args(argv)
    root = args.store
    try:
        if args.action == "add":
            pointers = add_many([Path(path) for path in args.paths], stage=not args.no_stage, root=root)
            for path, pointer in zip(args.paths, pointers, strict=True):
                shown = pointer.relative_to(root) if pointer.is_absolute() else pointer
                print(f"added {path} to DVC; {'staged' if not args.no_stage else 'wrote'} {shown}")
            from eee.write.samples import push_command

            print(
                f"after the commit, upload the sidecars with `{push_command([Path(p).resolve() for p in args.paths])}`"
            )
            return 0
        done = move(args.action, args.paths, root, args.remote)
        verb = "pushed" if args.action == "push" else "pulled"
        print(f"{verb} {len(done.moved)} sidecar(s); {done.present} already there; {len(done.failed)} failed")
        bad = [*done.failed, *(check_pulled(done.moved, root) if args.action == "pull" else [])]
        for f in bad:
            f.file = _shown(f.file, root)
        return refused("eee samples", Refused(bad)) if bad else 0
    except Refused as exc:
        return refused("eee samples", exc)
    except GitError as exc:  # git's own refusal (e.g. of `git add`)
        return refused("eee samples", refusal(str(exc), check="git"))


def _shown(file: str, root: Path) -> str:
    try:
        return Path(file).relative_to(root).as_posix()
    except ValueError:
        return file
