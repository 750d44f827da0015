"""``eee samples add|push|pull``: per-sample sidecars placed by the store's rule (git up to
``sidecar_git_max_bytes``, DVC above it), those in DVC moved to and from its remote, at the
cost of what is named."""

from __future__ import annotations

from pathlib import Path

from eee.commands import Parser, add_store, refused
from eee.git.cli import GitError
from eee.reporting.findings import Refused, refusal
from eee.write.samples import add_many, check_pulled, move


def main(argv: list[str]) -> int:
    p = Parser(
        "eee samples",
        "Place per-sample sidecars by the store's rule (git up to sidecar_git_max_bytes of governance/settings.yaml, "
        "1 MiB by default; DVC above it) and move those in DVC: what was done goes to stdout, failures to stderr.",
    )
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=Parser, help="what to do")
    a = sub.add_parser(
        "add",
        help="check sidecars against their records and place them: in git (staged) up to the store's threshold, "
        "in DVC's cache with a staged pointer above it",
        description="Check sidecars against their records, then place each by the store's rule: up to "
        "sidecar_git_max_bytes (HEAD's governance/settings.yaml, 1 MiB by default) staged in git as a plain file "
        "(a DVC pointer beside it that tracks this very file is replaced by it), above it written to DVC's cache "
        "with its pointer (what `dvc add` writes) and the pointer staged.",
    )
    a.add_argument("paths", nargs="+", metavar="PATH", help="<uuid>_samples.jsonl files")
    a.add_argument("--no-stage", action="store_true", help="do not `git add` the sidecars or pointers")
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
            placed = add_many([Path(path) for path in args.paths], stage=not args.no_stage, root=root)
            staged = "staged" if not args.no_stage else "not staged (--no-stage)"
            for path, done_ in zip(args.paths, placed, strict=True):
                if done_.pointer is None:
                    how = "replaced its DVC pointer by the file, in git" if done_.replaced else "kept in git"
                    print(f"added {path}: {how} (up to sidecar_git_max_bytes), {staged}")
                else:
                    shown = done_.pointer.relative_to(root) if done_.pointer.is_absolute() else done_.pointer
                    print(f"added {path} to DVC (above sidecar_git_max_bytes); {staged} its pointer {shown}")
            in_dvc = [Path(p).resolve() for p, d in zip(args.paths, placed, strict=True) if d.pointer is not None]
            if in_dvc:
                from eee.write.samples import push_command

                print(f"after the commit, upload the sidecars in DVC with `{push_command(in_dvc)}`")
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
