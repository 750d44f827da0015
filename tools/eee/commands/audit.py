"""``eee audit [--from REV] [--to REV] [--anchor REV] [--remote-objects]``: the commit rules over a range of commits.

Default range: the whole history of HEAD. Same formats and exit codes as ``eee validate``.
A trust anchor (``--anchor`` or ``$EEE_AUDIT_ANCHOR``) must be an ancestor of ``--to``
(see :mod:`eee.rules.history`).
"""

from __future__ import annotations

from pathlib import Path

from eee.commands import Parser, add_format, add_no_progress, add_store
from eee.reporting.reporters import render
from eee.validation.audit import audit


def main(argv: list[str]) -> int:
    p = Parser(
        "eee audit",
        "Check every commit in a range against the store's rules (catches `git commit --no-verify`). "
        "The report goes to stdout.",
    )
    p.add_argument("--from", dest="start", metavar="REV", help="exclusive start (default: the first commit)")
    p.add_argument("--to", dest="end", metavar="REV", default="HEAD", help="inclusive end (default: HEAD)")
    p.add_argument(
        "--anchor",
        metavar="REV",
        help="trust anchor: an accepted commit (the last audited or published head) that must be an ancestor "
        "of --to, else an error (default: $EEE_AUDIT_ANCHOR when set)",
    )
    p.add_argument(
        "--remote-objects",
        action="store_true",
        help="every DVC pointer the commits add must have its object on the store's DVC remote, checked against "
        "the pointer's md5 and the record's checksum (fetched when this clone has no copy); what the pre-push hook "
        "and the server gate run (default: objects are checked with the copies this clone holds)",
    )
    p.add_argument("--dvc-remote", metavar="NAME", help="with --remote-objects: the DVC remote (default: core.remote)")
    p.add_argument(
        "--dvc-dir",
        metavar="DIR",
        type=Path,
        help="with --remote-objects: the folder of the DVC config that names the remote and its credentials "
        "(default: the store's .dvc; a bare repository's server gate names its own)",
    )
    add_format(p, help="report format")
    add_store(p)
    add_no_progress(p)
    args = p.parse_args(argv)
    from contextlib import nullcontext

    from eee.reporting.progress import shown

    # a bar on a terminal (from 20 commits), progress lines when the pipeline asks for them
    with nullcontext() if args.no_progress else shown("auditing commits", min_total=20) as update:
        summary = audit(
            args.start,
            args.end,
            args.store,
            anchor=args.anchor,
            remote_objects=args.remote_objects,
            dvc_remote=args.dvc_remote,
            dvc_dir=args.dvc_dir,
            progress=update,
        )
    render(summary, args.format, what="commit")
    return summary.exit_code()
