"""Field fill rates: how often records fill the fields that make results comparable.

For each field, the share of records (overall, per source type, per eval library (the
source format), per developer and per benchmark, these two by their canonical ids in the
identity registry: one developer under two spellings is one row) that give it a real
value: present, not null, not ``unknown``. By default
only active records count (not retracted, superseded or duplicate, by the governance
fold); ``include_all`` counts every record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eee.catalog.table import LEFT_OUT, exclusion, record_paths


def _known(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return value.strip().lower() not in ("", "unknown", "none", "n/a")
    if isinstance(value, (dict, list)):
        return bool(value)
    return True


def _get(doc: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def _results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in doc.get("evaluation_results") or [] if isinstance(r, dict)]


def _any_result(doc: dict[str, Any], *path: str) -> bool:
    return any(_known(_get(r, *path)) for r in _results(doc))


def _details_key(doc: dict[str, Any], *needles: str) -> bool:
    details = _get(doc, "model_info", "additional_details")
    if not isinstance(details, dict):
        return False
    return any(any(n in str(k).lower() for n in needles) and _known(v) for k, v in details.items())


FIELDS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "inference_platform": lambda d: _known(_get(d, "model_info", "inference_platform")),
    "inference_engine": lambda d: _known(_get(d, "model_info", "inference_engine", "name")),
    "temperature": lambda d: _any_result(d, "generation_config", "generation_args", "temperature"),
    "max_tokens": lambda d: _any_result(d, "generation_config", "generation_args", "max_tokens"),
    "parameter_count": lambda d: _details_key(d, "param"),
    "license": lambda d: _details_key(d, "license"),
    "uncertainty": lambda d: _any_result(d, "score_details", "uncertainty"),
    "eval_library_version": lambda d: _known(_get(d, "eval_library", "version")),
    "evaluation_timestamp": lambda d: _known(d.get("evaluation_timestamp")) or _any_result(d, "evaluation_timestamp"),
    "deployment_type": lambda d: _known(_get(d, "model_info", "additional_details", "deployment_type")),
    "model_availability": lambda d: _known(_get(d, "model_info", "additional_details", "model_availability")),
    "metric_id": lambda d: (
        bool(_results(d)) and all(_known(_get(r, "metric_config", "metric_id")) for r in _results(d))
    ),
    "instance_level_data": lambda d: isinstance(d.get("detailed_evaluation_results"), dict),
}


def _facts(root: Path, rel: str) -> list[Any] | None:
    """What the fill rates need of one record: [source type, eval library, fields filled,
    the developer part of model_info.id], or None when it cannot be read."""
    from eee.store.limits import RECORD_MAX_BYTES, read_regular
    from eee.store.strictjson import JSONProblem, loads

    try:
        doc = loads(read_regular(root / rel, RECORD_MAX_BYTES, "record"))
    except (OSError, JSONProblem):
        return None
    if not isinstance(doc, dict):
        return None
    model_id = _get(doc, "model_info", "id")
    developer = model_id.split("/", 1)[0] if isinstance(model_id, str) and "/" in model_id else None
    return [
        str(_get(doc, "source_metadata", "source_type") or "unknown"),
        str(_get(doc, "eval_library", "name") or "unknown"),
        [field for field, test in FIELDS.items() if test(doc)],  # each test once per record
        developer,
    ]


def fill_rates(
    root: Path, include_all: bool = False, digests: dict[str, str] | None = None, cache: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The fill rates of the store at ``root``. ``digests``: the records' sha256 (from the
    store manifest) and ``cache``: what an earlier run read of each record, by path, as
    [sha256, facts]; with both, only records whose sha256 changed are read again, and
    ``cache`` is brought up to date in place (records gone are dropped)."""
    from eee.catalog.table import read_names
    from eee.rules.ledger import read_ledger
    from eee.store.identity import BENCHMARK, DEVELOPER

    ledger = read_ledger(root)
    names = read_names(root)
    seen: set[str] = set()
    # (dimension, value) -> [records, how many of them fill each field]
    groups: dict[tuple[str, str], tuple[list[int], Counter[str]]] = {}
    unreadable = 0
    left_out: Counter[str] = Counter()
    for uuid, rel in record_paths(root):
        seen.add(rel)
        why = None if include_all else exclusion(ledger.state(uuid))
        if why is not None:
            left_out[why] += 1
            continue
        digest = digests.get(rel) if digests is not None and cache is not None else None
        known = cache.get(rel) if cache is not None and digest else None
        if known and known[0] == digest:
            facts = known[1]
        else:
            facts = _facts(root, rel)
            if digest and cache is not None:
                cache[rel] = [digest, facts]
        if facts is None:
            unreadable += 1
            continue
        source_type, library, filled = facts[:3]
        said = facts[3] if len(facts) > 3 else None
        _, benchmark, developer = rel.split("/", 3)[:3]
        developer = names.canonical(DEVELOPER, said or developer)
        benchmark = names.canonical(BENCHMARK, benchmark)
        for key in (
            ("overall", ""),
            ("source_type", source_type),
            ("eval_library", library),
            ("developer", developer),
            ("benchmark", benchmark),
        ):
            count, fields = groups.setdefault(key, ([0], Counter()))
            count[0] += 1
            fields.update(filled)

    if cache is not None:
        for rel in set(cache) - seen:
            del cache[rel]

    def shares(key: tuple[str, str]) -> dict[str, Any]:
        (n,), fields = groups.get(key, ([0], Counter()))
        return {f: round(fields[f] / n, 4) if n else 0.0 for f in FIELDS}

    def by(dimension: str) -> dict[str, Any]:
        return {
            value: {"records": groups[(dim, value)][0][0], **shares((dim, value))}
            for dim, value in sorted(groups)
            if dim == dimension
        }

    return {
        "scope": "all records" if include_all else f"active records (not {', '.join(LEFT_OUT)})",
        "records": groups[("overall", "")][0][0] if ("overall", "") in groups else 0,
        "left_out": dict(sorted(left_out.items())),
        "unreadable": unreadable,
        "overall": shares(("overall", "")),
        "by_source_type": by("source_type"),
        "by_eval_library": by("eval_library"),
        "by_developer": by("developer"),  # canonical ids (the identity registry's)
        "by_benchmark": by("benchmark"),
    }
