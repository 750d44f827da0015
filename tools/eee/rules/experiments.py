"""The rules of experiment cards (``governance/experiments/<id>.yaml``) and of the results
that cite them, for the gate (:mod:`eee.hooks.experiments`) and the audit
(:mod:`eee.validation.audit`, which the server gate runs).

- ``experiment`` (:func:`card_findings`): a card is plain YAML within its cap, valid under
  the pinned schema, its ``id`` is its file name; the candidate and reference of its
  comparison are among its models; and what it names was committed **before** it: the card
  it amends, and (``data: existing``) the results it analyses. ``before`` is the tree of the
  commit it is judged after: HEAD at the gate, the mainline commit before it in the audit.
- ``experiment-order`` (:func:`citation_findings`): a record that cites a card
  (:func:`eee.governance.experiments.cited_card`) is added only where the commit before it
  **on the mainline** holds the card: at the gate HEAD; in the audit (and at the server) the
  first parent of the mainline commit that brings the record, every parent of a merge
  considered, so that a card and its results that arrive by one merge are refused (the card
  was not on the mainline first). Never the times the files declare.
- Immutability of a published card is :mod:`eee.rules.commit` (``experiment card``); who may
  write one is :data:`eee.governance.AUTHORITY` (``experiment``), its ``author`` is who
  commits it (:mod:`eee.rules.authority`, the actor rule).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from eee.governance.experiments import (
    EXISTING,
    ID_RE,
    CardProblem,
    cited_card,
    declared_models,
    id_of,
    is_card_path,
    line_of,
    loads,
    path_for,
    schema_errors,
)
from eee.reporting.findings import Finding
from eee.reporting.shown import command
from eee.store.paths import EXPERIMENTS_DIR, escaped

Where = Callable[[str], str]
Holders = Callable[[list[str]], Mapping[str, Iterable[str]]]
NEW_CARD = "`eee experiment new ID --question ... --model A --model B --benchmark B ... --commit`"


def _finding(
    file: str, pointer: str, message: str, hint: str | None, check: str = "experiment", line: int | None = None
) -> Finding:
    return Finding(file, pointer, message, hint, check=check, line=line)


SCHEMA_HINT = (
    "the card schema (schemas/experiments/card.schema.json) describes every field; `eee experiment new --template` "
    "prints a valid card to start from"
)


def card_findings(
    tree: Any, paths: Iterable[str], before: Any, holders: Holders | None = None, where: Where = lambda p: p
) -> list[Finding]:
    """The ``experiment`` findings of the cards ``paths`` of ``tree`` (the commit, or the index,
    that adds them), judged against ``before`` (the tree they must find what they name in; None:
    nothing is committed before them) and ``holders`` (uuid -> the record paths of ``before``
    carrying it: :mod:`eee.rules.uuids`; None: no record is)."""
    from eee.store.limits import CARD_MAX_BYTES
    from eee.store.tree import SYMLINK, Unreadable

    out: list[Finding] = []
    for path in paths:
        file = where(path)
        if not is_card_path(path):
            out.append(
                _finding(
                    file,
                    "$",
                    f"{escaped(path)} is not an experiment card: {EXPERIMENTS_DIR}/ holds <id>.yaml files only",
                    "move it out of the folder",
                )
            )
            continue
        if tree.mode(path) == SYMLINK:
            out.append(_finding(file, "$", "a symbolic link is no experiment card", "commit the card itself"))
            continue
        try:
            data = tree.read(path, CARD_MAX_BYTES)
            doc = loads(data)
        except (Unreadable, CardProblem) as exc:
            out.append(_finding(file, "$", f"unreadable experiment card: {exc}", f"write it with {NEW_CARD}"))
            continue
        out += doc_findings(doc, path, before, holders, file, data)
    return out


def doc_findings(
    doc: dict[str, Any],
    path: str,
    before: Any,
    holders: Holders | None = None,
    file: str | None = None,
    text: bytes | str | None = None,
) -> list[Finding]:
    """Everything wrong with the card ``doc`` at ``path`` (see :func:`card_findings`);
    ``text``: its bytes, for the line each finding names."""
    file = file or path
    found = _doc_findings(doc, path, before, holders, file, text)
    for f in found:
        if f.line is None and text is not None:
            f.line = line_of(text, _parts(f.pointer))
    return found


def _parts(pointer: str) -> tuple[str | int, ...]:
    return tuple(p for p in pointer.lstrip("$").split(".") if p)


def _doc_findings(
    doc: dict[str, Any], path: str, before: Any, holders: Holders | None, file: str, text: bytes | str | None
) -> list[Finding]:
    errors = schema_errors(doc)
    if errors:
        return [
            _finding(file, pointer, escaped(message, quote=False)[:600], SCHEMA_HINT, line=line_of(text, parts))
            for parts, pointer, message in errors
        ]
    out: list[Finding] = []
    card_id = doc["id"]
    if card_id != id_of(path):
        out.append(
            _finding(file, "$.id", f"id {card_id!r} differs from the file name", f"a card is {path_for('<id>')}")
        )
    models = declared_models(doc)
    twice = sorted({m for m in models if models.count(m) > 1})
    if twice:
        out.append(_finding(file, "$.models", f"model {twice[0]!r} is declared twice", "declare each model once"))
    comparison = doc["comparison"]
    for side in ("candidate", "reference"):
        if comparison[side] not in models:
            out.append(
                _finding(
                    file,
                    f"$.comparison.{side}",
                    f"the {side} {comparison[side]!r} is not one of the card's models",
                    "name in the comparison two of the models the card declares",
                )
            )
    if comparison["candidate"] == comparison["reference"]:
        out.append(
            _finding(file, "$.comparison", "the candidate and the reference are the same model", "compare two models")
        )
    amends = doc.get("amends")
    if isinstance(amends, dict):
        old = amends["card"]
        if old == card_id:
            out.append(_finding(file, "$.amends.card", "a card cannot amend itself", "name the earlier card"))
        elif before is None or not before.exists(path_for(old)):
            out.append(
                _finding(
                    file,
                    "$.amends.card",
                    f"amends the card {old!r}, which is not in the store before this commit",
                    "an amendment names a card committed earlier (`eee experiment show ID` shows one)",
                )
            )
    if doc["data"] == EXISTING:
        held = holders(list(doc["results"])) if holders is not None else {}
        missing = [u for u in doc["results"] if not held.get(u)]
        if missing:
            shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            out.append(
                _finding(
                    file,
                    "$.results",
                    f"names results that are not in the store before this commit: {shown}",
                    "a card on existing data names records already committed (their uuids); results still to come "
                    "cite the card instead (data: new, `eee convert ... --experiment ID`)",
                )
            )
    return out


def citation_findings(
    records: Iterable[tuple[str, Any]], before: Any, now: Any, where: Where = lambda p: p
) -> list[Finding]:
    """The ``experiment-order`` findings of the added records ``records`` (path, parsed
    document): each that cites a card needs the card in ``before`` (the commit before on the
    mainline; None: no commit before). ``now``: the tree that adds the records (to tell a card
    in the same commit from one that is nowhere)."""
    out: list[Finding] = []
    for path, doc in records:
        card = cited_card(doc)
        if card is None:
            continue
        pointer = "$.source_metadata.additional_details.eee_experiment"
        if not ID_RE.match(card):
            out.append(
                _finding(
                    where(path),
                    pointer,
                    f"cites {escaped(card)}, which is no experiment card id",
                    "a card id is lowercase letters, digits and hyphens (the card's file name)",
                    check="experiment-order",
                )
            )
            continue
        card_path = path_for(card)
        if before is not None and before.exists(card_path):
            continue
        if now is not None and now.exists(card_path):
            message = (
                f"cites the experiment card {card!r}, which comes in the same commit (or the same merge): a card is "
                "committed before the results that cite it, on the mainline"
            )
            hint = (
                f"commit {card_path} first, in a commit of its own (and on the protected branch before a merge brings "
                "the results), then the results"
            )
        else:
            message = f"cites the experiment card {card!r}, which is not in the store"
            hint = f"register the card first ({NEW_CARD}), or convert without --experiment"
        out.append(_finding(where(path), pointer, message, hint, check="experiment-order"))
    return out


def show_hint(card_id: str) -> str:
    return f"`{command('experiment', 'show', card_id)}`"
