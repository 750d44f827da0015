"""The governance card's generated parts, rendered from the declarations when asked.

``governance/README.md`` is written by hand around blocks the code declares: the table of who
may take which act (between ``<!-- authority: ... -->`` and ``<!-- /authority -->``, from
:func:`eee.governance.authority_of` the actions declared now) and the state machine (between
``<!-- state machine: ... -->`` and ``<!-- end of the state machine -->``, from
:func:`eee.governance.lifecycle.card_table`). :func:`render` puts them in again from the
declarations as they are at call time: the site publishes the card through it, so an action
declared alone (:func:`eee.governance.declare`) shows on the published card; the committed
card is the same bytes as long as it holds what the code declares (tests/test_roles.py and
tests/test_ledger_machine.py keep it so).
"""

from __future__ import annotations

import re

import eee.governance as governance
from eee.governance.lifecycle import card_table

CARD = "governance/README.md"  # the governance card, a repository document the site publishes
AUTHORITY_BLOCK = re.compile(r"(<!-- authority:[^>]*-->\n)(.*?)(<!-- /authority -->)", re.S)
MACHINE_BLOCK = re.compile(r"(<!-- state machine:[^>]*-->\n)(.*?)(<!-- end of the state machine -->)", re.S)


def authority_table(authority: tuple[governance.Authority, ...] | None = None) -> str:
    """The table of who may take which act, as the card shows it (Markdown, ending with a
    newline); ``authority``: default the table of the actions declared now."""
    rows = governance.authority_of(governance.ACTIONS) if authority is None else authority
    lines = ["| act | who may | what it is |", "| --- | --- | --- |"]
    lines += [f"| `{a.act}` | {a.role} | {a.what}{f'; {a.own}' if a.own else ''} |" for a in rows]
    return "\n".join(lines) + "\n"


def render(text: str) -> str:
    """The card ``text`` with its generated blocks rendered from the declarations now (a
    block the text does not hold is left out: the text is returned as it is there)."""
    text = AUTHORITY_BLOCK.sub(lambda m: m.group(1) + authority_table() + m.group(3), text, count=1)
    return MACHINE_BLOCK.sub(lambda m: m.group(1) + card_table() + "\n" + m.group(3), text, count=1)
