"""Experiment cards: ``governance/experiments/<id>.yaml``, comparisons declared before their results.

A card is a governance file like an event or an import manifest: a small YAML document,
validated by a pinned schema (``schemas/experiments/card.schema.json``: :data:`CARD_SCHEMA`),
read through the store's one YAML reader (:mod:`eee.store.safeyaml`) with a size cap
(:data:`eee.store.limits.CARD_MAX_BYTES`), committed before the results that cite it and
never changed once published (:mod:`eee.rules.commit`); a change of plan is a new card that
names the old one (``amends``) and says why. Its rules are :mod:`eee.rules.experiments`; the
analysis it declares is :mod:`eee.analysis.experiment`.

A result cites a card in its own content: ``source_metadata.additional_details.eee_experiment``
(a free-form string field every schema version has, where the store already writes what it
knows of a record's provenance; :data:`CITES`). :func:`cited_card` is the one way to read it;
``eee convert ... --experiment ID`` writes it. A card with ``data: existing`` names results
already in the store by uuid instead (a registered analysis of existing data, not a
pre-registration): records are never rewritten to cite it.

This module reads, writes and relates cards; it judges nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from eee.store.paths import CARD_SUFFIX, EXPERIMENTS_DIR

CARD_SCHEMA_VERSION = "1.0.0"
CARD_SCHEMA = ("experiments", "card.schema.json")  # (folder, file) under schemas/
ID_RE = re.compile(r"^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,63}$")  # the schema's pattern
CITES = "eee_experiment"  # source_metadata.additional_details.<this>: the card a result cites
CITES_PATH = ("source_metadata", "additional_details", CITES)
NEW, EXISTING = "new", "existing"  # what `data` says: results to come (they cite the card), or in the store

# the order a card is written in (and shown in)
ORDER = (
    "card_schema",
    "id",
    "question",
    "author",
    "time",
    "data",
    "results",
    "models",
    "benchmark",
    "protocol",
    "samples_per_item",
    "primary_metric",
    "comparison",
    "subgroups",
    "stopping_rule",
    "analysis_plan",
    "amends",
)
# the protocol fields (eee.store.protocol.NAMES) a card declares under `benchmark`, by its own names
BENCHMARK_FIELDS = {"dataset": "dataset", "revision": "dataset_revision", "split": "split"}


class CardProblem(ValueError):
    """A card that cannot be read as a YAML mapping (the message says why)."""


def path_for(card_id: str) -> str:
    return f"{EXPERIMENTS_DIR}/{card_id}{CARD_SUFFIX}"


def is_card_path(path: str) -> bool:
    """Whether ``path`` is where a card lies: ``governance/experiments/<name>.yaml``, one level down."""
    return path.startswith(EXPERIMENTS_DIR + "/") and path.endswith(CARD_SUFFIX) and path.count("/") == 2


def id_of(path: str) -> str:
    """The id a card's path gives it (its file name without ``.yaml``)."""
    return path.rsplit("/", 1)[-1][: -len(CARD_SUFFIX)]


def loads(data: bytes | str) -> dict[str, Any]:
    """A card's bytes (at most :data:`eee.store.limits.CARD_MAX_BYTES`) as data, through the
    store's one YAML reader; :class:`CardProblem` when it is not UTF-8, not plain YAML or not
    a mapping."""
    from eee.store.limits import CARD_MAX_BYTES
    from eee.store.safeyaml import YAMLRefused, load

    if len(data) > CARD_MAX_BYTES:
        raise CardProblem(f"a card is at most {CARD_MAX_BYTES // 1024} KiB ({len(data):,} bytes)")
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise CardProblem(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        doc = load(text)
    except YAMLRefused as exc:
        raise CardProblem(str(exc)) from None
    if not isinstance(doc, dict):
        raise CardProblem("a card is a YAML mapping")
    return doc


def schema_errors(doc: dict[str, Any], limit: int = 20) -> list[tuple[tuple[str | int, ...], str, str]]:
    """(path parts, JSON path, message) of each way ``doc`` breaks the pinned card schema."""
    from eee.store.jsonpath import format_path
    from eee.store.schemas import default_registry

    validator = default_registry().other_validator(*CARD_SCHEMA)
    out = []
    for e in list(validator.iter_errors(doc))[:limit]:
        parts = tuple(e.instance_path)
        extra = _UNEXPECTED.search(e.message)
        if extra is not None and "," not in extra.group(1):  # point at the one field not allowed
            parts = (*parts, extra.group(1))
        out.append((parts, format_path(list(parts)), e.message))
    return out


_UNEXPECTED = re.compile(r"\('([^']{1,200})' was unexpected\)")


def line_of(text: str | bytes | None, parts: tuple[str | int, ...]) -> int | None:
    """The line (1-based) of the YAML node at ``parts`` in a card's text (or of the nearest
    node above it), for messages; None when unknown."""
    if text is None:
        return None
    from eee.store.safeyaml import lines

    at = lines(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)
    found = next((at[parts[:n]] for n in range(len(parts), 0, -1) if parts[:n] in at), None)
    return found if found is not None else (min(at.values()) if at else None)  # the document's first line


# --- writing --------------------------------------------------------------------------------


def _scalar(value: Any) -> str:
    from eee.governance.manifests import quote

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    # a line break as \\n (quote() writes \\x0a): each line quoted on its own, joined
    return '"' + "\\n".join(quote(line)[1:-1] for line in str(value).split("\n")) + '"'


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                out.append(f"{pad}{key}:")
                out += _lines(item, indent + 2)
            else:
                out.append(f"{pad}{key}: {_empty(item) if isinstance(item, dict | list) else _scalar(item)}")
    else:
        for item in value:
            if isinstance(item, dict | list) and item:
                inner = _lines(item, indent + 2)
                out.append(f"{pad}- {inner[0].lstrip()}")
                out += inner[1:]
            else:
                out.append(f"{pad}- {_empty(item) if isinstance(item, dict | list) else _scalar(item)}")
    return out


def _empty(value: Any) -> str:
    return "{}" if isinstance(value, dict) else "[]"


def dumps(card: dict[str, Any]) -> str:
    """The card as block YAML, its keys in :data:`ORDER` (strings double-quoted with escapes),
    reading back to exactly ``card`` (:class:`CardProblem` otherwise: it guards the promise)."""
    ordered = {k: card[k] for k in ORDER if k in card}
    ordered.update({k: v for k, v in card.items() if k not in ordered})
    head = (
        "# An experiment card (governance/experiments/): declared before its results, never edited once "
        "published;\n# amend it with a new card (`eee experiment new NEW --amends THIS --reason ...`).\n"
    )
    text = head + "\n".join(_lines(ordered, 0)) + "\n"
    if loads(text) != card:
        raise CardProblem("the card would not read back to the same value")
    return text


# --- reading a record's citation -----------------------------------------------------------------


def cited_card(doc: Any) -> str | None:
    """The card a record cites (``source_metadata.additional_details.eee_experiment``), or None."""
    source = doc.get("source_metadata") if isinstance(doc, dict) else None
    details = source.get("additional_details") if isinstance(source, dict) else None
    found = details.get(CITES) if isinstance(details, dict) else None
    return found if isinstance(found, str) and found else None


def may_cite(data: bytes) -> bool:
    """Whether a record's bytes may cite a card (a cheap test before parsing: the key is there)."""
    return CITES.encode() in data


# --- the cards of a store ------------------------------------------------------------------------


class Card(NamedTuple):
    """A card of a tree: its path, its document (None when it cannot be read) and why not."""

    path: str
    doc: dict[str, Any] | None
    problem: str | None = None

    @property
    def id(self) -> str:
        return id_of(self.path)

    def amends(self) -> str | None:
        found = (self.doc or {}).get("amends")
        card = found.get("card") if isinstance(found, dict) else None
        return card if isinstance(card, str) else None


def card_paths(tree: Any) -> list[str]:
    """The cards' paths in ``tree`` (a :class:`eee.store.tree.Tree`), sorted."""
    if not tree.exists(EXPERIMENTS_DIR):
        return []
    return sorted(p for p in (f"{EXPERIMENTS_DIR}/{n}" for n in tree.names(EXPERIMENTS_DIR)) if is_card_path(p))


def read_card(tree: Any, path: str) -> Card:
    """One card of ``tree``, read within its cap (a link or a folder is no card)."""
    from eee.store.limits import CARD_MAX_BYTES
    from eee.store.tree import SYMLINK, Unreadable

    if tree.mode(path) == SYMLINK:
        return Card(path, None, "a symbolic link is no card")
    try:
        return Card(path, loads(tree.read(path, CARD_MAX_BYTES)))
    except (Unreadable, CardProblem) as exc:
        return Card(path, None, str(exc))


def read_cards(tree: Any) -> dict[str, Card]:
    """Every card of ``tree`` by id."""
    return {id_of(p): read_card(tree, p) for p in card_paths(tree)}


def lineage(cards: dict[str, Card], card_id: str) -> list[str]:
    """``card_id`` and the cards it amends, newest first (a cycle, which the rules refuse, stops the walk)."""
    out = [card_id]
    while True:
        found = cards.get(out[-1])
        earlier = found.amends() if found is not None else None
        if earlier is None or earlier in out:
            return out
        out.append(earlier)


def amendments(cards: dict[str, Card], card_id: str) -> list[str]:
    """Every card that amends ``card_id``, directly or through another amendment, in the order of their ids' discovery (breadth first)."""
    out: list[str] = []
    frontier = [card_id]
    while frontier:
        nxt = sorted(c.id for c in cards.values() if c.amends() in frontier and c.id not in out and c.id != card_id)
        out += nxt
        frontier = nxt
    return out


def declared_models(doc: dict[str, Any]) -> list[str]:
    return [m["id"] for m in doc.get("models") or [] if isinstance(m, dict) and isinstance(m.get("id"), str)]


def declared_fields(doc: dict[str, Any]) -> dict[str, str]:
    """The protocol fields the card holds fixed (:data:`eee.store.protocol.NAMES` -> value):
    its ``protocol`` section and the dataset, revision and split of its ``benchmark``."""
    out: dict[str, str] = {}
    bench = doc.get("benchmark") if isinstance(doc.get("benchmark"), dict) else {}
    for own, field in BENCHMARK_FIELDS.items():
        if isinstance(bench.get(own), str):
            out[field] = bench[own]
    protocol = doc.get("protocol") if isinstance(doc.get("protocol"), dict) else {}
    out.update({k: v for k, v in protocol.items() if isinstance(v, str)})
    return out


def iter_citations(docs: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, str]]:
    """(path, card id) of each record among ``docs`` (path, parsed document) that cites a card."""
    for path, doc in docs:
        card = cited_card(doc)
        if card is not None:
            yield path, card
