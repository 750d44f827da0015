"""An experiment card's analysis (``eee experiment check|report ID``): exactly what the card
declares, on the cited active results, with every deviation a finding.

The card (:mod:`eee.governance.experiments`) names the models, the benchmark, the protocol
held fixed, the primary result, the pairing and clustering, a non-inferiority margin, the
subgroups and the stopping rule. The results are the records that cite it
(``source_metadata.additional_details.eee_experiment``; with ``data: existing``, those it
names by uuid), taken per model in the order they entered history, the first
``stopping_rule.results_per_model`` of them.

The comparison of the candidate with the reference is :func:`eee.analysis.compare.compare_samples`
(the same pairing, infrastructure errors left out and counted apart, paired clustered
bootstrap and non-inferiority verdict as ``eee compare``), on the sidecars read with the
card's cluster key: where the card's key is the records' own, the interval is ``eee
compare``'s on the same records, to the last digit. Subgroups are described (counts, means,
difference, a paired interval) without a verdict.

A deviation (a protocol field that differs from the card's, fewer items or samples than
declared, a result that is not active, more results than the stopping rule takes, a model
the card does not declare, a declared model without results, a result committed before
the card, a cluster key other than the card's) is listed, never dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eee.analysis.compare import compare_samples, non_inferiority_text, result_of
from eee.analysis.samples import (
    RowBudget,
    SidecarProblem,
    StoredRecord,
    TooManyRows,
    benchmark_folders,
    lifecycle,
    read_samples,
)
from eee.catalog.uncertainty import scale as score_scale
from eee.governance.experiments import (
    EXISTING,
    ORDER,
    Card,
    amendments,
    cited_card,
    declared_fields,
    declared_models,
    lineage,
    may_cite,
    path_for,
    read_cards,
)
from eee.reporting.findings import Finding, Refused
from eee.store import protocol
from eee.store.items import cluster_key_of
from eee.store.limits import RECORD_MAX_BYTES, Unreadable, read_regular
from eee.store.paths import escaped

DEVIATION = "experiment-deviation"
SHOWN = 160  # characters of a protocol value a deviation shows


def _deviation(file: str, pointer: str, message: str, hint: str | None = None) -> dict[str, Any]:
    return {"file": file, "pointer": pointer, "message": message, "hint": hint, "check": DEVIATION}


def deviation_findings(report: dict[str, Any]) -> list[Finding]:
    """The report's deviations as findings (warnings of the rule ``experiment-deviation``)."""
    return [
        Finding(d["file"], d["pointer"], d["message"], d["hint"], severity="warning", check=d["check"])
        for d in report["deviations"]
    ]


# --- history ---------------------------------------------------------------------------------


def _adding(root: Path, rel: str) -> dict[str, Any] | None:
    """The commit of HEAD's history that added ``rel``: its id, time (as the commit says) and
    committer; None when it is not committed."""
    from eee.git.cli import added_by

    found = added_by(rel, "HEAD", root)
    if found is None:
        return None
    return {"commit": found[0], "time": found[1], "committer": f"{found[2]} <{found[3]}>"}


def _before(root: Path, earlier: str, later: str) -> bool:
    """Whether ``earlier`` is a strict ancestor of ``later`` (came first in history)."""
    from eee.git.cli import is_ancestor

    return earlier != later and is_ancestor(earlier, later, root)


# --- the cited results ------------------------------------------------------------------------


def _read_doc(path: Path) -> dict[str, Any] | None:
    from eee.store.strictjson import JSONProblem, loads

    try:
        data = read_regular(path, RECORD_MAX_BYTES, "record")
    except (OSError, Unreadable):
        return None
    if not may_cite(data):
        return None
    try:
        doc = loads(data)
    except JSONProblem:
        return None
    return doc if isinstance(doc, dict) else None


def citing_records(root: Path, card: dict[str, Any], names: Any, ledger: Any) -> list[StoredRecord]:
    """The records that cite the card (in its benchmark's folders, every alias's: only the
    records whose bytes hold the citation key are parsed), and with ``data: existing`` those
    it names by uuid (found by name, anywhere under ``data/``), sorted by path."""
    from eee.catalog.table import record_paths
    from eee.store.strictjson import JSONProblem, loads

    card_id = card["id"]
    found: dict[str, StoredRecord] = {}
    data = root / "data"
    if not data.is_dir():
        return []

    def add(rel: str, uuid: str, doc: Any) -> None:
        if isinstance(doc, dict):
            found[rel] = StoredRecord(uuid, rel, root / rel, doc, lifecycle(ledger.state(uuid)))

    for bench in benchmark_folders(root, card["benchmark"]["id"], names):
        for path in sorted((data / bench).glob("*/*/*.json")):
            doc = _read_doc(path)
            if doc is not None and cited_card(doc) == card_id:
                add(path.relative_to(root).as_posix(), path.name[: -len(".json")], doc)
    wanted = set(card.get("results") or []) if card.get("data") == EXISTING else set()
    if wanted:
        for uuid, rel in record_paths(root):
            if uuid in wanted and rel not in found:
                try:
                    add(rel, uuid, loads(read_regular(root / rel, RECORD_MAX_BYTES, "record")))
                except (OSError, Unreadable, JSONProblem):
                    continue
    return [found[k] for k in sorted(found)]


# --- subgroups --------------------------------------------------------------------------------


def _subgroups(a: StoredRecord, b: StoredRecord, ka: str, kb: str, key: str) -> dict[str, Any]:
    """The paired difference within each value of the item metadata ``key`` (A's value): the
    items both hold, infrastructure errors left out; counts, means and a paired interval."""
    import numpy as np

    from eee.analysis.compare import _match
    from eee.stats.paired import paired

    sa_all = read_samples(a.sidecar, RowBudget(), key).get(ka)
    sb_all = read_samples(b.sidecar, RowBudget(), key).get(kb)
    if sa_all is None or sb_all is None:
        return {"key": key, "groups": [], "note": "a result was not found in a sidecar"}
    _by, ia, ib = _match(sa_all, sb_all)
    keep = ~(sa_all.infra_mask()[ia] | sb_all.infra_mask()[ib])
    ia, ib = ia[keep], ib[keep]
    labels = [sa_all.cluster_names[c] for c in sa_all.clusters[ia].tolist()] if sa_all.clusters is not None else []
    va, vb = sa_all.valid_scores()[ia], sb_all.valid_scores()[ib]
    groups = []
    for value in sorted({str(x) for x in labels}, key=lambda s: s):
        mask = np.array([str(x) == value for x in labels], dtype=bool)
        n = int(mask.sum())
        entry: dict[str, Any] = {"value": value, "items": n, "mean_a": float(va[mask].mean())}
        entry["mean_b"] = float(vb[mask].mean())
        entry["difference"] = entry["mean_a"] - entry["mean_b"]
        if n >= 2:
            r = paired(va[mask], vb[mask], None)
            entry["difference_ci"] = [r.low, r.high]
        else:
            entry["difference_ci"] = None
        groups.append(entry)
    missing = int(sum(1 for x in labels if x is None))
    out: dict[str, Any] = {"key": key, "groups": groups}
    if missing:
        out["note"] = f"{missing} items have no value for {key} (the group 'None')"
    return out


# --- the report -------------------------------------------------------------------------------


def _reproducibility(recs: list[StoredRecord], results: list[dict[str, Any] | None]) -> dict[str, Any]:
    """What the stored material reproduces: the analysis always (stored per-item scores);
    the scores from stored responses where the grader is fixed and deterministic; never new
    calls to a hosted model."""
    judged = any(
        isinstance(r, dict)
        and isinstance(r.get("metric_config"), dict)
        and isinstance(r["metric_config"].get("llm_scoring"), dict)
        for r in results
    )
    sidecars = all(rec.sidecar_state() is None for rec in recs)
    if not sidecars:
        level = "aggregates"
        said = (
            "a result's per-item scores are not in the work tree: only the aggregate scores are stored here; "
            "the paired analysis cannot be run again from this store as it is"
        )
    elif judged:
        level = "stored-scores"
        said = (
            "the per-item scores and responses are stored: this analysis reproduces exactly from the store; "
            "scoring the stored responses again calls a hosted judge model, which does not reproduce its scores "
            "exactly, and new calls to a hosted model under evaluation do not reproduce its responses"
        )
    else:
        level = "stored-responses"
        said = (
            "the per-item scores and responses are stored and the grader is declared fixed: this analysis and the "
            "scores reproduce from the store; new calls to a hosted model under evaluation do not reproduce its "
            "responses"
        )
    return {"level": level, "statement": said}


def build(root: Path, card_id: str, *, analyse: bool = True, max_rows: int | None = None) -> dict[str, Any]:
    """The report of the card ``card_id`` of the store at ``root`` (the work tree; history
    from HEAD). ``analyse``: False for ``check`` (what was declared against what is held,
    no statistics). Raises :class:`Refused` when the card is not there or not valid."""
    from eee.analysis.samples import MAX_ROWS
    from eee.catalog.table import read_names
    from eee.rules.experiments import doc_findings
    from eee.rules.ledger import read_ledger
    from eee.store.tree import WorkTree

    tree = WorkTree(root)
    cards = read_cards(tree)
    path = path_for(card_id)
    found = cards.get(card_id)
    if found is None:
        raise Refused(
            Finding(
                path,
                "$",
                f"no experiment card {card_id!r} in the store",
                "`eee experiment new ID ...` registers one; the cards are governance/experiments/*.yaml",
                check="experiment",
            )
        )
    if found.doc is None:
        raise Refused(Finding(path, "$", f"unreadable experiment card: {found.problem}", None, check="experiment"))
    problems = [f for f in doc_findings(found.doc, path, tree) if f.check == "experiment"]
    problems = [f for f in problems if f.pointer != "$.amends.card" and f.pointer != "$.results"]
    if problems:
        raise Refused(problems)
    card = found.doc
    names = read_names(root)
    ledger = read_ledger(root)
    deviations: list[dict[str, Any]] = []
    history = _history(root, cards, card_id)
    card_commit = history[0]["commit"] if history and history[0]["commit"] else None

    recs = citing_records(root, card, names, ledger)
    models = declared_models(card)
    canon = {names.canonical_model(m) or m: m for m in models}
    per_model: dict[str, list[dict[str, Any]]] = {m: [] for m in models}
    results_info: list[dict[str, Any]] = []
    for rec in recs:
        added = _adding(root, rec.rel)
        model = canon.get(names.canonical_model(rec.model_id) or rec.model_id)
        info: dict[str, Any] = {
            "uuid": rec.uuid,
            "path": rec.rel,
            "model_id": rec.model_id,
            "declared_model": model,
            "status": rec.status,
            "added": added,
            "used": False,
        }
        results_info.append(info)
        if model is None:
            deviations.append(
                _deviation(
                    rec.rel,
                    "$.model_info.id",
                    f"the result is of {escaped(rec.model_id)}, a model the card does not declare: left out",
                    "cite a card only from results of its models",
                )
            )
            continue
        if added is None:
            deviations.append(
                _deviation(rec.rel, "$", "the result is not committed: left out (the analysis takes committed results)")
            )
            continue
        if card.get("data") != EXISTING and card_commit and not _before(root, card_commit, added["commit"]):
            deviations.append(
                _deviation(
                    rec.rel,
                    "$.source_metadata.additional_details.eee_experiment",
                    f"the result (commit {added['commit'][:10]}) was not committed after the card (commit "
                    f"{card_commit[:10]}): it is no result of the pre-registration; left out",
                    "the gate and the audit refuse such a commit; commit results after their card",
                )
            )
            continue
        if rec.status not in ("active", "flagged", "disputed"):
            deviations.append(
                _deviation(rec.rel, "$", f"the result is {rec.status}: not active, left out of the analysis")
            )
            continue
        per_model[model].append(info)
    limit = int(card["stopping_rule"]["results_per_model"])
    order: dict[str, int] = {}
    if any(per_model.values()):
        order = _history_order(root)
    for model, infos in per_model.items():
        infos.sort(key=lambda i: (order.get(i["added"]["commit"], 1 << 30), i["path"]))
        for extra in infos[limit:]:
            deviations.append(
                _deviation(
                    extra["path"],
                    "$",
                    f"one more result of {escaped(model)} than the stopping rule takes ({limit} per model): left out",
                    "the stopping rule takes the first results committed",
                )
            )
        for used in infos[:limit]:
            used["used"] = True
        if not infos:
            deviations.append(
                _deviation(
                    path,
                    "$.models",
                    f"the declared model {escaped(model)} has no active committed result citing the card",
                    "convert its results with `eee convert ... --experiment " + card_id + "` and commit them",
                )
            )
    by_rel = {r.rel: r for r in recs}
    key = card["primary_metric"]["result"]
    checked = []
    for info in results_info:
        if not info["used"]:
            continue
        rec = by_rel[info["path"]]
        result = result_of(rec.doc, key)
        entry = {"uuid": rec.uuid, "path": rec.rel, "model_id": rec.model_id, "result": key, "fields": {}}
        if result is None:
            deviations.append(
                _deviation(
                    rec.rel, "$.evaluation_results", f"the result has no evaluation result {escaped(key)!s}", None
                )
            )
            checked.append(entry)
            continue
        held = protocol.fields_of(rec.doc, result, rec.benchmark, names)
        for field, value in declared_fields(card).items():
            entry["fields"][field] = {
                "declared": protocol.shown(value, SHOWN),
                "held": protocol.shown(held.get(field), SHOWN),
            }
            if held.get(field) != value:
                deviations.append(
                    _deviation(
                        rec.rel,
                        "$.evaluation_results",
                        f"protocol field {field}: the card holds {protocol.shown(value, SHOWN)!r}, the result "
                        f"{protocol.shown(held.get(field), SHOWN)!r}",
                        "a result of another protocol is a deviation from the card; the report shows it",
                    )
                )
        entry["protocol_id"] = protocol.protocol_id(held)
        entry["not_held_fixed"] = [f for f in protocol.NAMES if f not in declared_fields(card) and f != "benchmark"]
        declared_cluster = card["comparison"].get("cluster_key")
        own_cluster = cluster_key_of(rec.doc)
        if declared_cluster is not None and own_cluster is not None and own_cluster != declared_cluster:
            deviations.append(
                _deviation(
                    rec.rel,
                    "$.detailed_evaluation_results.additional_details.cluster_key",
                    f"the result declares the cluster key {escaped(own_cluster)}, the card {escaped(declared_cluster)}: "
                    "the card's is used",
                )
            )
        checked.append(entry)

    report: dict[str, Any] = {
        "card": card_id,
        "path": path,
        "question": card["question"],
        "data": card["data"],
        "history": history,
        "results": results_info,
        "checked": checked,
        "analysis": None,
        "deviations": deviations,
        "notes": [],
    }
    if card["data"] == EXISTING:
        report["notes"].append(
            "data: existing: the card analyses results that were in the store before it; they may have been seen "
            "before the plan was written (a registered analysis, not a pre-registration)"
        )
    later = [h for h in history[1:] if h.get("after_results")]
    for h in later:
        report["notes"].append(f"the amendment {h['card']} was committed after results citing the card")
    comparison = card["comparison"]
    sides = []
    for side in ("candidate", "reference"):
        used = [i for i in per_model.get(comparison[side], []) if i["used"]]
        sides.append(by_rel[used[0]["path"]] if used else None)
    a, b = sides
    compared = {r.rel for r in sides if r is not None} if analyse else set()
    for entry in checked:  # what each result holds: the compared pair is read by the analysis below
        rel = f"{entry['path']}"
        if rel not in compared and "fields" in entry and result_of(by_rel[rel].doc, key) is not None:
            _holdings(card, by_rel[rel], None, deviations)
    if not analyse:
        return report
    if a is None or b is None:
        report["notes"].append("no analysis: the candidate or the reference has no result to compare")
        return report
    report["analysis"] = _analyse(card, a, b, key, max_rows or MAX_ROWS, deviations)
    if report["analysis"] is not None:
        report["reproducibility"] = _reproducibility([a, b], [result_of(a.doc, key), result_of(b.doc, key)])
    return report


def _analyse(
    card: dict[str, Any], a: StoredRecord, b: StoredRecord, key: str, max_rows: int, deviations: list[dict[str, Any]]
) -> dict[str, Any] | None:
    comparison = card["comparison"]
    cluster = comparison.get("cluster_key")
    budget = RowBudget(max_rows)
    groups = []
    for rec in (a, b):
        state = rec.sidecar_state()
        if state is not None:
            deviations.append(
                _deviation(rec.rel, "$.detailed_evaluation_results", f"the per-item results are not readable ({state})")
            )
            return None
        try:
            groups.append(read_samples(rec.sidecar, budget, cluster))
        except (OSError, SidecarProblem, TooManyRows) as exc:
            deviations.append(_deviation(rec.rel, "$", f"the sidecar cannot be read: {exc}"))
            return None
    ga, gb = groups
    if key not in ga or key not in gb:
        missing = [r.rel for r, g in ((a, ga), (b, gb)) if key not in g]
        deviations.append(_deviation(missing[0], "$", f"the sidecar holds no rows of the result {escaped(key)}"))
        return None
    x, y = ga[key], gb[key]
    config = (result_of(a.doc, key) or {}).get("metric_config")
    config = config if isinstance(config, dict) else {}
    scale = score_scale(config)
    out = compare_samples(
        x,
        y,
        None,
        margin=comparison.get("margin"),
        scale=scale,
        lower_is_better=config.get("lower_is_better") is True,
    )
    out["candidate"] = {"uuid": a.uuid, "path": a.rel, "model_id": a.model_id}
    out["reference"] = {"uuid": b.uuid, "path": b.rel, "model_id": b.model_id}
    out["cluster_key"] = cluster
    for rec, rs in ((a, x), (b, y)):
        _holdings(card, rec, rs, deviations)
    if cluster is not None and out.get("bootstrap", {}).get("clusters") is None and "difference" in out:
        deviations.append(
            _deviation(
                a.rel, "$", f"the items have no value for the cluster key {escaped(cluster)}: resampled on their own"
            )
        )
    out["subgroups"] = []
    for sub in card.get("subgroups") or []:
        try:
            out["subgroups"].append(_subgroups(a, b, x.key, y.key, sub))
        except (OSError, SidecarProblem, TooManyRows) as exc:
            out["subgroups"].append({"key": sub, "groups": [], "note": f"not read: {exc}"})
    return out


def _holdings(card: dict[str, Any], rec: StoredRecord, rs: Any, deviations: list[dict[str, Any]]) -> None:
    """The result's items and samples against the card's ``benchmark.items`` and
    ``samples_per_item`` (``rs``: its samples; None: read here, within the row limit)."""
    key = card["primary_metric"]["result"]
    if rs is None:
        if rec.sidecar_state() is not None:
            return  # no per-item data: the report says so where it analyses
        try:
            rs = read_samples(rec.sidecar, RowBudget()).get(key)
        except (OSError, SidecarProblem, TooManyRows) as exc:
            deviations.append(_deviation(rec.rel, "$", f"the sidecar cannot be read: {exc}"))
            return
        if rs is None:
            deviations.append(_deviation(rec.rel, "$", f"the sidecar holds no rows of the result {escaped(key)}"))
            return
    items = card["benchmark"].get("items")
    k = int(card.get("samples_per_item") or 1)
    if items is not None and len(rs) < items:
        deviations.append(
            _deviation(rec.rel, "$", f"the result holds {len(rs)} items, fewer than the {items} the card declares")
        )
    short = _items_short(rec, rs.key, k) if k > 1 else 0
    if short:
        deviations.append(
            _deviation(
                rec.rel,
                "$",
                f"{short} of the result's {len(rs)} items hold fewer than the {k} samples per item the card "
                "declares (their samples are averaged as they are)",
            )
        )


def _items_short(rec: StoredRecord, key: str, k: int) -> int:
    """How many items of the result ``key`` hold fewer than ``k`` rows (samples), read again
    from the sidecar as a stream (only where the card declares more than one sample)."""
    from collections import Counter

    from eee.analysis.samples import _rows

    counts: Counter[str] = Counter(sid for _n, rkey, sid, *_rest in _rows(rec.sidecar) if rkey == key)
    return sum(1 for n in counts.values() if n < k)


def _history_order(root: Path) -> dict[str, int]:
    """Each commit of HEAD's history by its place (0: the oldest), topological."""
    from eee.git.cli import topological_order

    return topological_order("HEAD", root)


def _history(root: Path, cards: dict[str, Card], card_id: str) -> list[dict[str, Any]]:
    """The card and its amendments: each with the commit that added it and, for an
    amendment, its reason and whether results citing the earlier cards came before it."""
    out = []
    chain = lineage(cards, card_id)  # this card and those it amends
    later = amendments(cards, card_id)  # the cards that amend it
    result_commits: list[str] = []
    for ident in [*reversed(chain), *later]:
        c = cards.get(ident)
        added = _adding(root, path_for(ident))
        entry: dict[str, Any] = {
            "card": ident,
            "role": "this card" if ident == card_id else "amended by this card" if ident in chain else "amendment",
            "commit": added["commit"] if added else None,
            "time": added["time"] if added else None,
            "committer": added["committer"] if added else None,
        }
        doc = c.doc if c is not None else None
        amends = doc.get("amends") if isinstance(doc, dict) else None
        if isinstance(amends, dict):
            entry["amends"] = amends.get("card")
            entry["reason"] = amends.get("reason")
        out.append(entry)
    # whether each amendment came after results were committed (results citing any card of the lineage)
    if len(out) > 1:
        from eee.catalog.table import read_names
        from eee.rules.ledger import read_ledger

        names, ledger = read_names(root), read_ledger(root)
        for ident in [e["card"] for e in out]:
            c = cards.get(ident)
            if c is None or c.doc is None or not isinstance(c.doc.get("benchmark"), dict):
                continue
            for rec in citing_records(root, c.doc, names, ledger):
                added = _adding(root, rec.rel)
                if added:
                    result_commits.append(added["commit"])
        for entry in out:
            if entry.get("amends") and entry["commit"]:
                entry["after_results"] = any(_before(root, rc, entry["commit"]) for rc in result_commits)
    out.sort(key=lambda e: (e["card"] != card_id, e["time"] or ""))
    return out


def _e(value: Any) -> str:
    """A value of a card or record as a terminal shows it: every control character escaped."""
    return escaped(str(value), quote=False)


# --- readable output --------------------------------------------------------------------------


def _fmt(x: Any, digits: int = 4) -> str:
    return "n/a" if x is None else f"{x:+.{digits}f}" if isinstance(x, float) else str(x)


def render(report: dict[str, Any], listed: int = 20) -> str:
    """The report as text (every value from the card or records escaped for a terminal)."""
    out = [f"experiment {report['card']}  ({report['path']})", f"  question: {_e(report['question'])}"]
    out.append("history:")
    for h in report["history"]:
        when = f"commit {h['commit'][:10]} {h['time']}" if h["commit"] else "not committed"
        line = f"  {h['card']} ({h['role']}): {when}"
        if h.get("amends"):
            line += f"; amends {h['amends']}: {_e(str(h.get('reason')))}"
            if h.get("after_results"):
                line += "  [AFTER RESULTS were committed]"
        out.append(line)
    out.append("results citing the card:")
    if not report["results"]:
        out.append("  none")
    for r in report["results"]:
        added = f"commit {r['added']['commit'][:10]}" if r["added"] else "not committed"
        used = "used" if r["used"] else "left out"
        out.append(f"  {r['uuid']}  {_e(r['model_id'])}  {r['status']}  {added}  {used}")
    for c in report.get("checked") or []:
        out.append(f"declared vs held, {c['uuid'][:8]} ({_e(c['model_id'])}), result {_e(c['result'])}:")
        for field, pair in c["fields"].items():
            mark = "ok" if pair["declared"] == pair["held"] else "DIFFERS"
            out.append(f"  {field}: {mark}  declared {_e(str(pair['declared']))}  held {_e(str(pair['held']))}")
        if c.get("not_held_fixed"):
            out.append("  not held fixed by the card: " + ", ".join(c["not_held_fixed"]))
    a = report.get("analysis")
    if a is not None:
        scale = a.get("score_scale", 1.0)
        cand, ref = a["candidate"], a["reference"]
        out.append(f"analysis: candidate {_e(cand['model_id'])} minus reference {_e(ref['model_id'])}")
        den = a["denominators"]
        infra = den["infrastructure_errors"]
        out.append(
            f"  items: {a['samples_a']} and {a['samples_b']}, {den['shared']} shared (paired by {a['matched_by']}), "
            f"{den['valid_shared']} compared; {den['only_a']} only in the candidate, {den['only_b']} only in the reference"
        )
        out.append(
            f"  infrastructure errors (left out, counted apart): candidate {infra['a']}, reference {infra['b']}, "
            f"{infra['shared_left_out']} shared items left out"
        )
        errs = den.get("error_samples") or {}
        fmt = {s: {k: v for k, v in (errs.get(s) or {}).items() if k != "infrastructure"} for s in ("a", "b")}
        out.append(
            "  format and content errors (scored as the model's, counted apart): "
            f"candidate {fmt['a'] or 'none'}, reference {fmt['b'] or 'none'}"
        )
        if "difference" in a:
            lo, hi = a["difference_ci"]
            boot = a["bootstrap"]
            clustered = f", {boot['clusters']} clusters of {a['cluster_key']} resampled" if boot.get("clusters") else ""
            out.append(
                f"  primary metric: {a['mean_a'] * scale:.4g} vs {a['mean_b'] * scale:.4g}; difference "
                f"{a['difference'] * scale:+.4g} ({int(a['ci_level'] * 100)}% paired bootstrap CI "
                f"{lo * scale:+.4g} .. {hi * scale:+.4g}{clustered})"
            )
            ni = a.get("non_inferiority")
            if ni:
                out.append("  " + non_inferiority_text(ni))
            else:
                out.append("  non-inferiority: no margin declared (no verdict)")
            if "binary" in a:
                t = a["binary"]
                out.append(
                    f"  right/wrong ({t['on']}): both right {t['both_correct']}, only the candidate "
                    f"{t['only_a_correct']}, only the reference {t['only_b_correct']}, both wrong {t['both_wrong']}"
                )
            shown = a.get("disagreeing_samples") or []
            what = "one right and the other wrong" if "binary" in a else "with different scores"
            out.append(
                f"  items {what}: {a.get('disagreeing', 0)}" + (f", first {min(listed, len(shown))}:" if shown else "")
            )
            for s in shown[:listed]:
                out.append(f"    {_e(str(s['sample_id']))}: candidate {s['score_a']:g}, reference {s['score_b']:g}")
        for sub in a.get("subgroups") or []:
            out.append(f"  subgroups by {_e(sub['key'])}:")
            for g in sub["groups"]:
                ci = g.get("difference_ci")
                ci_text = f" ({ci[0] * scale:+.4g} .. {ci[1] * scale:+.4g})" if ci else ""
                out.append(
                    f"    {_e(g['value'])}: n = {g['items']}, {g['mean_a'] * scale:.4g} vs {g['mean_b'] * scale:.4g}, "
                    f"difference {g['difference'] * scale:+.4g}{ci_text}"
                )
            if sub.get("note"):
                out.append(f"    note: {sub['note']}")
        for note in a.get("notes") or []:
            out.append(f"  note: {note}")
    if report.get("reproducibility"):
        r = report["reproducibility"]
        out.append(f"reproducibility: {r['level']}: {r['statement']}")
    out.append(f"deviations: {len(report['deviations'])}")
    for d in report["deviations"]:
        out.append(f"  {d['file']}::{d['pointer']}: [{d['check']}] {d['message']}")
    for note in report["notes"]:
        out.append(f"note: {note}")
    return "\n".join(out) + "\n"


# --- the site: one page per card ---------------------------------------------------------------

PAGES_FOLDER = "experiments"  # under the analysis step's pages/: analysis/experiments/<id>.md on the site
MAX_LISTED = 200  # items one model gets right and the other wrong, listed on a page


def page(report: dict[str, Any], card: dict[str, Any]) -> str:
    """A card's page: the card (every value escaped for Markdown), its history, its report."""
    from eee.site.mdtext import code, meta, table, text

    n = lambda x: "" if x is None else f"{x:.4g}"  # noqa: E731
    out = [
        f"---\ntitle: {meta('Experiment card ' + report['card'])}\n---\n",
        f"# Experiment card {code(report['card'])}\n",
    ]
    out.append(f"**Question.** {text(card.get('question'))}\n")
    if card.get("data") == EXISTING:
        out.append(
            "*A registered analysis of results already in the store (data: existing), not a pre-registration.*\n"
        )
    out.append("## The card\n")
    rows = []
    for key in ORDER[ORDER.index("author") :]:  # the card's order; its results are the report's
        if key == "results":
            continue
        if key in card:
            value = card[key]
            shown = value if isinstance(value, str) else json_text(value)
            rows.append([code(key), text(shown)])
    out.append(table(["field", "declared"], rows))
    out.append(
        f"\nThe card's file: {code(report['path'])}, validated by the pinned schema `schemas/experiments/card.schema.json`.\n"
    )
    out.append("## History\n")
    hist = []
    for h in report["history"]:
        late = "yes" if h.get("after_results") else ("no" if h.get("amends") else "")
        hist.append(
            [
                code(h["card"]),
                text(h["role"]),
                code(h["commit"][:12]) if h["commit"] else "not committed",
                text(h["time"] or ""),
                text(h.get("reason") or ""),
                late,
            ]
        )
    out.append(table(["card", "role", "commit", "committed", "amendment's reason", "after results"], hist))
    out.append("\n## Results citing the card\n")
    res = [
        [
            code(r["uuid"]),
            text(r["model_id"]),
            text(r["status"]),
            code(r["added"]["commit"][:12]) if r["added"] else "not committed",
            "used" if r["used"] else "left out",
        ]
        for r in report["results"]
    ]
    out.append(table(["record", "model", "status", "commit", "in the analysis"], res) if res else "None yet.\n")
    a = report.get("analysis")
    out.append("\n## Report\n")
    if a is None or "difference" not in a:
        out.append("No analysis: " + text("; ".join(report["notes"]) or "the results are not there yet") + "\n")
    else:
        scale = a.get("score_scale", 1.0)
        den = a["denominators"]
        lo, hi = a["difference_ci"]
        boot = a["bootstrap"]
        rows = [
            ["candidate", text(a["candidate"]["model_id"]), n(a["mean_a"] * scale)],
            ["reference", text(a["reference"]["model_id"]), n(a["mean_b"] * scale)],
        ]
        out.append(table(["", "model", "primary metric"], rows))
        clustered = (
            f", {boot['clusters']} clusters of {code(a['cluster_key'])} resampled" if boot.get("clusters") else ""
        )
        out.append(
            f"\nDifference (candidate minus reference): **{n(a['difference'] * scale)}**, "
            f"{int(a['ci_level'] * 100)}% paired bootstrap interval {n(lo * scale)} .. {n(hi * scale)}{clustered}; "
            f"{den['valid_shared']} items compared of {den['shared']} shared "
            f"({den['only_a']} only in the candidate, {den['only_b']} only in the reference).\n"
        )
        infra = den["infrastructure_errors"]
        out.append(
            f"\nInfrastructure errors, left out and counted apart: candidate {infra['a']}, reference {infra['b']} "
            f"({infra['shared_left_out']} shared items left out). Format and content errors, scored as the model's: "
            f"{text(json_text(den.get('error_samples') or {}))}.\n"
        )
        ni = a.get("non_inferiority")
        if ni:
            out.append(f"\n**Non-inferiority** (margin {n(ni['margin'])}): **{text(ni['verdict'])}**.\n")
        else:
            out.append("\nNo non-inferiority margin was declared: no verdict.\n")
        for sub in a.get("subgroups") or []:
            out.append(f"\n### Subgroups by {code(sub['key'])}\n")
            rows = []
            for g in sub["groups"]:
                ci = g.get("difference_ci")
                rows.append(
                    [
                        text(g["value"]),
                        str(g["items"]),
                        n(g["mean_a"] * scale),
                        n(g["mean_b"] * scale),
                        n(g["difference"] * scale),
                        f"{n(ci[0] * scale)} .. {n(ci[1] * scale)}" if ci else "",
                    ]
                )
            out.append(table(["value", "items", "candidate", "reference", "difference", "95% interval"], rows))
        listed = (a.get("disagreeing_samples") or [])[:MAX_LISTED]
        what = "one model right and the other wrong" if "binary" in a else "the two scores differ"
        out.append(f"\n### Items where {what}: {a.get('disagreeing', 0)}\n")
        if listed:
            rows = [[code(s["sample_id"]), n(s["score_a"]), n(s["score_b"])] for s in listed]
            out.append(table(["item", "candidate", "reference"], rows))
    if report.get("reproducibility"):
        r = report["reproducibility"]
        out.append(f"\n**Reproducibility:** {code(r['level'])}: {text(r['statement'])}\n")
    out.append(f"\n## Deviations: {len(report['deviations'])}\n")
    if report["deviations"]:
        rows = [[code(d["file"]), code(d["pointer"]), text(d["message"])] for d in report["deviations"]]
        out.append(table(["file", "where", "deviation"], rows))
    for note in report["notes"]:
        out.append(f"\nNote: {text(note)}\n")
    return "\n".join(out)


def json_text(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def write_pages(root: Path, pages: Path) -> list[str]:
    """One page per card of the store under ``pages/experiments/`` (written fresh each run;
    cards are few). A card that cannot be reported gets a page saying why. Returns the ids."""
    import shutil

    from eee.store.tree import WorkTree

    folder = pages / PAGES_FOLDER
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder)
    cards = read_cards(WorkTree(root))
    if not cards:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    done = []
    from eee.governance.experiments import ID_RE

    for card_id, found in sorted(cards.items()):
        if found.doc is None or not ID_RE.match(card_id):
            continue  # the card rules report it; a page is named by a safe id only
        try:
            report = build(root, card_id)
        except Refused:
            continue  # an invalid card: the gate and the audit report it
        (folder / f"{card_id}.md").write_text(page(report, found.doc), encoding="utf-8")
        done.append(card_id)
    return done
