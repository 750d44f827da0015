"""Registering an experiment card (``eee experiment new ID``): the card made from its options
(or a drafted file), checked by the card rules against HEAD, written as a new file and, with
``commit``, committed on its own through the one commit stack (signed where git signs; in a
store with roles, refused before anything is written unless the signing key is a known
principal's: :func:`eee.rules.authority.requirement`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from eee.governance.experiments import CARD_SCHEMA_VERSION, dumps, path_for
from eee.reporting.findings import Refused, refusal
from eee.rules.authority import Act
from eee.write.commit import actor, transaction
from eee.write.signing import refusal_of, requirement

# what `eee experiment new --template` prints: a card every field of which is filled in
TEMPLATE: dict[str, Any] = {
    "card_schema": CARD_SCHEMA_VERSION,
    "id": "concise-no-worse",
    "question": "Is gpt-3.5-turbo-1106 asked to be concise no worse than gpt-3.5-turbo-1106 on AlpacaEval 2.0 "
    "by more than 2 points of win rate?",
    "author": {"name": "Your Name", "email": "you@example.org"},
    "time": "2026-01-01T00:00:00Z",
    "data": "new",
    "models": [
        {"id": "openai/gpt-3.5-turbo-1106_concise", "revision": "2023-11-06"},
        {"id": "openai/gpt-3.5-turbo-1106", "revision": "2023-11-06"},
    ],
    "benchmark": {
        "id": "alpaca_eval_2",
        "dataset": "tatsu-lab/alpaca_eval",
        "split": "eval",
        "items": 805,
    },
    "protocol": {
        "metric": "alpaca_eval.win_rate.weighted_alpaca_eval_gpt4_turbo",
        "reference": "gpt4_1106_preview",
    },
    "samples_per_item": 1,
    "primary_metric": {"result": "win_rate", "infrastructure_errors": "left_out", "format_errors": "scored"},
    "comparison": {
        "candidate": "openai/gpt-3.5-turbo-1106_concise",
        "reference": "openai/gpt-3.5-turbo-1106",
        "paired_by": "item",
        "cluster_key": "dataset",
        "level": 0.95,
        "margin": 2,
    },
    "subgroups": ["dataset"],
    "stopping_rule": {"text": "one run of each model on every instruction; no interim look", "results_per_model": 1},
    "analysis_plan": "Paired by instruction on the instructions both runs hold, clustered by source dataset; "
    "the 95% paired cluster bootstrap interval of the win-rate difference (candidate minus reference) is compared "
    "with -2 points: non-inferior when its lower end is above.",
}


def now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def register(root: Path, card: dict[str, Any], *, commit: bool, dry_run: bool = False) -> dict[str, Any]:
    """Check ``card`` (author and time set here: git's committer, now), then write it (and
    with ``commit`` commit it). Refused before anything is written when a rule refuses it,
    the file exists or the commit needs a signature that is not configured."""
    from eee.git.cli import has_commit
    from eee.rules.experiments import doc_findings
    from eee.rules.uuids import TreeRecords
    from eee.store.tree import GitTree

    card = dict(card)
    card["author"] = actor(root)
    card.setdefault("time", now())
    rel = path_for(str(card.get("id")))
    if (root / rel).exists() or (root / rel).is_symlink():
        raise refusal(
            f"{rel} exists: a card id names one card for ever",
            "choose another id; to change a card, amend it with a new card (--amends OLD --reason ...)",
            file=rel,
            check="experiment",
        )
    text = dumps(card)
    before = GitTree(root, "HEAD") if has_commit("HEAD", root) else None
    holders = TreeRecords(root).holders(["HEAD"], []) if before is not None else None
    problems = doc_findings(card, rel, before, holders, rel, text)
    if problems:
        raise Refused(problems)
    req = requirement(root, [Act("experiment", rel)])
    result: dict[str, Any] = {
        "card": card["id"],
        "path": rel,
        "dry_run": dry_run,
        "committed": False,
        "commit": None,
        "signing": {**req.to_dict(), "said": req.said()},
        "text": text,
    }
    if commit and not dry_run:
        problem = refusal_of(req, root)
        if problem is not None:
            raise Refused(problem)
    if dry_run:
        return result
    with transaction(root, stage=True) as tx:
        tx.write([(rel, text.encode("utf-8"))])
        if commit:
            subject = f"Experiment card {card['id']}" + (
                f" (amends {card['amends']['card']})" if card.get("amends") else ""
            )
            result["commit"] = tx.commit([subject, f"Registers {rel} before the results that will cite it."])
            result["committed"] = True
    return result
