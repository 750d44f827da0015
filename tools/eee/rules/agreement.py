"""The rule ``items-agree``: a result's stated score is what its own items give.

A record with a sidecar states each result's score and keeps the rows it came from. The
validator feeds the sidecar's rows, as it reads them anyway, to a
:class:`eee.store.aggregation.Tally`; once the file is read, every result of the record is
checked by :func:`eee.store.aggregation.check` (the one function the catalogue's
``items_agree`` column calls too, so the rule and the catalogue cannot disagree). A result
whose items give another score, beyond one item's worth and the stated score's rounding, is
a finding on the **record** (its path, ``$.evaluation_results[i].score_details.score``),
naming both numbers and the item count: a flag may accept it like any record finding.
Results that cannot be recomputed are skipped, never guessed (the reasons:
:data:`eee.store.aggregation.SKIPS`).

Only a record with a sidecar the tree holds is checked (a sidecar kept in DVC and not
pulled is not read); the sidecar is read once, by the validator's own pass.
"""

from __future__ import annotations

from typing import Any

from eee.reporting.findings import Finding
from eee.store.aggregation import DISAGREES, Tally

RULE = "items-agree"


def score_path(index: int) -> str:
    """The JSON path of a result's stated score, as findings and flags name it."""
    return f"$.evaluation_results[{index}].score_details.score"


def hint(index: int) -> str:
    """How a finding at result ``index`` is fixed (a committed record's hint is the settle
    command, :mod:`eee.rules.settle`)."""
    return (
        "recompute the score from the sidecar's rows (or fix the rows) before the commit; the items of result "
        f"{index} are averaged per item first; a committed record is superseded by a corrected one, or a "
        "maintainer flags it when the record is what its source published "
        f"(`eee flag <uuid> --rule {RULE} --json-path {score_path(index)} --reason ... --commit`)"
    )


def agreement_findings(doc: dict[str, Any], tally: Tally, record_file: str) -> list[Finding]:
    """A finding for every result of ``doc`` whose stated score its items (``tally``, the
    rows of its sidecar) do not give; ``record_file``: the record as the report names it."""
    out = []
    for index, verdict in tally.checks(doc):
        if verdict.status == DISAGREES:
            out.append(Finding(record_file, score_path(index), verdict.message(), hint(index), check=RULE))
    return out


def worth_checking(doc: dict[str, Any] | None) -> bool:
    """Whether any result of ``doc`` could be checked against items (a finite stated score
    and an aggregation the store knows): else the validator gathers nothing."""
    if not doc:
        return False
    from eee.store.aggregation import aggregation_of

    results = doc.get("evaluation_results")
    if not isinstance(results, list):
        return False
    for r in results:
        if not isinstance(r, dict):
            continue
        config = r.get("metric_config")
        details = r.get("score_details")
        score = details.get("score") if isinstance(details, dict) else None
        number = isinstance(score, int | float) and not isinstance(score, bool)
        if number and isinstance(config, dict) and aggregation_of(config)[0] is not None:
            return True
    return False


def record_agreement(tree: Any, rel: str) -> set[tuple[str, str]] | None:
    """(rule, JSON path) of the ``items-agree`` findings of the record ``rel`` of ``tree``
    (what a flag of it may accept), from its sidecar in the tree; None when the tree does
    not hold the sidecar (kept in DVC): nothing can be said."""
    from eee.store.limits import RECORD_MAX_BYTES, SIDECAR_MAX_BYTES, split_lines
    from eee.store.limits import Unreadable as Refused
    from eee.store.paths import sidecar_path_for
    from eee.store.strictjson import JSONProblem, loads, loads_row
    from eee.store.tree import Unreadable

    try:
        doc = loads(tree.read(rel, RECORD_MAX_BYTES))
    except (Unreadable, JSONProblem):
        return set()
    side = sidecar_path_for(rel)
    if not isinstance(doc, dict) or not tree.exists(side):
        return None
    tally = Tally(doc)
    try:
        for line in split_lines(tree.chunks(side, SIDECAR_MAX_BYTES)):
            if not line.strip():
                continue
            try:
                row = loads_row(line)
            except JSONProblem:
                continue
            if isinstance(row, dict):
                tally.add(row)
    except (Unreadable, Refused):  # an unreadable sidecar: the sidecar rule says why
        return None
    return {(f.check, f.pointer) for f in agreement_findings(doc, tally, rel)}
