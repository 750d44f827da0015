"""``eee rules [ID] [--format rich|json]``: the rules the store checks (:mod:`eee.rules.registry`).

Without an id: every rule, one line each (its id, severity, whether a flag may accept a
finding of it, its summary). With an id: what the rule means, why it exists and how a
finding of it is settled. An unknown id (a word people use for a rule included) is a usage
error with a did-you-mean (exit 64).
"""

from __future__ import annotations

import textwrap

from eee.commands import EXIT_OK, OUTPUT_FORMATS, add_format, parser
from eee.reporting.reporters import reporter
from eee.reporting.shown import shown_command
from eee.rules.registry import BY_ID, RULES, Rule, unknown_text


def _dict(rule: Rule) -> dict[str, object]:
    out = rule._asdict()
    out["words"] = list(rule.words)
    return out


def _explain(rule: Rule) -> str:
    flag = "a flag may accept a finding of it" if rule.flaggable else "never flagged"
    lines = [f"{rule.id} ({rule.severity}, {rule.kind}; {flag})", f"  {rule.summary}"]
    if rule.words:
        lines.append(f"  also called: {', '.join(rule.words)}")
    for title, text in (
        ("What it means", rule.means),
        ("Why it exists", rule.why),
        ("How a finding is settled", rule.settle),
        ("Hint", rule.hint),
    ):
        lines.append("")
        lines.append(f"{title}:")
        shown = text.replace("`eee ", f"`{shown_command()} ")  # the commands as they run here
        lines.extend(textwrap.wrap(shown, 96, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False))
    return "\n".join(lines)


def _table() -> str:
    width = max(len(r.id) for r in RULES)
    lines = [f"{'rule':<{width}}  {'severity':<8}  {'flag':<4}  summary"]
    for rule in RULES:
        lines.append(f"{rule.id:<{width}}  {rule.severity:<8}  {'yes' if rule.flaggable else 'no':<4}  {rule.summary}")
    lines.append("")
    eee = shown_command()
    lines.append(f"`{eee} rules ID` explains one; `flag` yes: a flag event may accept a finding of it (`{eee} flag`).")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    p = parser(
        "eee rules",
        "List the rules the store checks (the [id] of every finding), or explain one: what it means, "
        "why it exists, how a finding of it is settled.",
    )
    p.add_argument("rule", nargs="?", metavar="ID", help="the rule to explain (default: list them all)")
    add_format(p, OUTPUT_FORMATS)
    args = p.parse_args(argv)
    if args.rule is None:
        reporter(args.format).result({"rules": [_dict(r) for r in RULES]}, lambda: print(_table()))
        return EXIT_OK
    rule = BY_ID.get(args.rule)
    if rule is None:
        p.error(unknown_text(args.rule))  # exit 64
    reporter(args.format).result(_dict(rule), lambda: print(_explain(rule)))
    return EXIT_OK
