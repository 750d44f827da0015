"""What a sidecar row says about its item, read one way by every reader (the items table,
``eee compare``, ``eee leaderboard``, the rules that check a score against its items).

- **Which item.** A row's item is its ``sample_id``, else its ``sample_hash``
  (:func:`item_id`); the result it belongs to is its ``evaluation_result_id``, else its
  ``evaluation_name`` (:func:`result_key`). Rows repeating an item within one result are
  repeated samples (epochs, completions), numbered 0, 1, ... in the order they come.
- **Clusters.** Items that share a source (a passage, a source dataset) are not
  independent. A record declares which ``metadata`` key of its rows holds the cluster
  (``detailed_evaluation_results.additional_details.cluster_key``, :func:`cluster_key_of`);
  a row's cluster is that key's value. Nothing is guessed from other keys.
- **Error classes** (:func:`error_class`), from the row's ``error`` and its answer
  attribution: ``infrastructure`` (the run failed: a timeout, an API or sandbox error; not
  the model's doing, so counted apart), ``content`` (a refusal or a content filter: the
  model's answer), ``format`` (no error, but no answer could be taken from the output: no
  answer attribution, or an empty or ``[invalid]`` extracted value). None for a row without
  an error of either kind: a wrong answer is a score, not an error.
- **Cost and time** (:func:`usage`): tokens from ``token_usage``, latency from
  ``performance.latency_ms``, the model's cost from ``metadata.cost_usd``, a judge's cost and
  latency from ``metadata.judge_cost_usd`` and ``metadata.judge_latency_ms``.
"""

from __future__ import annotations

import re
from typing import Any

CLUSTER_KEY = "cluster_key"  # detailed_evaluation_results.additional_details.<this>: the metadata key of the cluster
INFRASTRUCTURE, CONTENT, FORMAT = "infrastructure", "content", "format"
ERROR_CLASSES = (INFRASTRUCTURE, CONTENT, FORMAT)
NO_ANSWER = ("", "[invalid]")  # extracted values that mean no answer was found (lm-eval's filters write [invalid])
_CONTENT = re.compile(
    r"refus|content[ _-]?filter|content[ _-]?policy|safety (?:system|filter)|moderation|flagged as (?:harmful|unsafe)",
    re.IGNORECASE,
)
ERROR_SCAN_CHARS = 4000  # the start of an error message read for its class


def item_id(row: dict[str, Any]) -> str | None:
    """The row's item: its sample_id (a number written as text), else its sample_hash."""
    sid = row.get("sample_id")
    if isinstance(sid, str) and sid:
        return sid
    if isinstance(sid, int) and not isinstance(sid, bool):
        return str(sid)
    h = row.get("sample_hash")
    return h if isinstance(h, str) and h else None


def result_key(row: dict[str, Any]) -> str:
    """The result a row belongs to: its evaluation_result_id, else its evaluation_name."""
    key = row.get("evaluation_result_id") or row.get("evaluation_name") or ""
    return key if isinstance(key, str) else str(key)


def result_lookup(doc: dict[str, Any]) -> tuple[dict[str, int], int | None]:
    """Which result of a record a row belongs to: (result key -> result index, the index a
    row whose key names no result falls to). A key is a result's ``evaluation_result_id``,
    else an ``evaluation_name`` no other result of the record carries; a row of a record
    with a single result belongs to it whatever its key (None: the row belongs to none)."""
    results = doc.get("evaluation_results")
    results = results if isinstance(results, list) else []
    out: dict[str, int] = {}
    names: dict[str, list[int]] = {}
    for i, r in enumerate(results):
        if not isinstance(r, dict):
            continue
        if isinstance(r.get("evaluation_result_id"), str):
            out.setdefault(r["evaluation_result_id"], i)
        if isinstance(r.get("evaluation_name"), str):
            names.setdefault(r["evaluation_name"], []).append(i)
    for name, at in names.items():
        if len(at) == 1:
            out.setdefault(name, at[0])
    only = 0 if sum(1 for r in results if isinstance(r, dict)) == 1 else None
    return out, only


def cluster_key_of(doc: dict[str, Any]) -> str | None:
    """The ``metadata`` key that holds each row's cluster, as the record declares it."""
    details = doc.get("detailed_evaluation_results")
    extra = details.get("additional_details") if isinstance(details, dict) else None
    key = extra.get(CLUSTER_KEY) if isinstance(extra, dict) else None
    return key if isinstance(key, str) and key else None


def cluster_of(row: dict[str, Any], key: str | None) -> str | None:
    if key is None:
        return None
    meta = row.get("metadata")
    value = meta.get(key) if isinstance(meta, dict) else None
    return value if isinstance(value, str) and value else None


def error_class(row: dict[str, Any]) -> str | None:
    """``infrastructure``, ``content``, ``format`` or None (see the module's text)."""
    error = row.get("error")
    if isinstance(error, str) and error.strip():
        return CONTENT if _CONTENT.search(error[:ERROR_SCAN_CHARS]) else INFRASTRUCTURE
    attribution = row.get("answer_attribution")
    ev = row.get("evaluation")
    if not isinstance(attribution, list) or (isinstance(ev, dict) and ev.get("is_correct") is True):
        return None  # a correct answer was found, whatever the attribution says
    if not attribution:
        return FORMAT
    last = attribution[-1]
    for entry in attribution:
        if isinstance(entry, dict) and entry.get("is_terminal") is True:
            last = entry
    value = last.get("extracted_value") if isinstance(last, dict) else None
    if value is None or (isinstance(value, str) and value.strip() in NO_ANSWER):
        return FORMAT
    return None


def _number(value: Any) -> float | None:
    kind = type(value)
    if kind is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if kind is int:
        return float(value)
    if kind is str:
        try:
            number = float(value)
        except ValueError:
            return None
        return number if number == number and number not in (float("inf"), float("-inf")) else None
    return None


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "latency_ms",
    "cost_usd",
    "judge_cost_usd",
    "judge_latency_ms",
)
_NO_USAGE = (None,) * len(USAGE_KEYS)


def usage_values(row: dict[str, Any]) -> tuple[Any, ...]:
    """:func:`usage` as a tuple in :data:`USAGE_KEYS` order (what the items table writes)."""
    tokens, perf, meta = row.get("token_usage"), row.get("performance"), row.get("metadata")
    tokens = tokens if type(tokens) is dict else None
    perf = perf if type(perf) is dict else None
    meta = meta if type(meta) is dict else None
    if tokens is None and perf is None and (meta is None or not meta.keys() & _META):
        return _NO_USAGE
    tokens, perf, meta = tokens or {}, perf or {}, meta or {}
    return (
        _count(tokens.get("input_tokens")),
        _count(tokens.get("output_tokens")),
        _count(tokens.get("total_tokens")),
        _number(perf.get("latency_ms")),
        _number(meta.get("cost_usd")),
        _number(meta.get("judge_cost_usd")),
        _number(meta.get("judge_latency_ms")),
    )


_META = frozenset(("cost_usd", "judge_cost_usd", "judge_latency_ms"))


def usage(row: dict[str, Any]) -> dict[str, Any]:
    """input_tokens, output_tokens, total_tokens, latency_ms, cost_usd, judge_cost_usd,
    judge_latency_ms of a row (None where it does not say)."""
    return dict(zip(USAGE_KEYS, usage_values(row), strict=True))
