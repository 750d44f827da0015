"""``eee audit [--from REV] [--to REV] [--anchor REV]``: the commit rules over a range of commits.

Default range: the whole history of HEAD. Same formats and exit codes as ``eee validate``.
A trust anchor (``--anchor`` or ``$EEE_AUDIT_ANCHOR``) must be an ancestor of ``--to``
(see :mod:`eee.rules.history`).
"""

from __future__ import annotations

from eee.commands import Parser, UsageError, add_store, store_of, usage_error
from eee.reporting.reporters import FORMATS, render
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
        "--format",
        choices=FORMATS,
        default="rich",
        help="report format: rich text, JSON or GitHub annotations (default: rich)",
    )
    add_store(p)
    args = p.parse_args(argv)
    try:
        repo = store_of(args.store)
    except UsageError as exc:
        return usage_error("eee audit", exc)
    summary = audit(args.start, args.end, repo, anchor=args.anchor)
    render(summary, args.format, what="commit")
    return summary.exit_code()
