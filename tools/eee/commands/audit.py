"""``eee audit [--from REV] [--to REV] [--anchor REV]``: the commit rules over a range of commits.

Default range: the whole history of HEAD. Same formats and exit codes as ``eee validate``.
A trust anchor (``--anchor`` or ``$EEE_AUDIT_ANCHOR``) must be an ancestor of ``--to``
(see :mod:`eee.rules.history`).
"""

from __future__ import annotations

from eee.commands import Parser, add_format, add_store
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
    add_format(p, help="report format")
    add_store(p)
    args = p.parse_args(argv)
    summary = audit(args.start, args.end, args.store, anchor=args.anchor)
    render(summary, args.format, what="commit")
    return summary.exit_code()
