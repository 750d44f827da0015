"""The identity registry's model: the kinds of ids, a table of one kind (canonical ids, aliases
and how a spelling matches them: :meth:`Table.match`), the whole registry (:class:`Registry`),
and what a record calls itself (:func:`record_spellings`, :func:`folder_spelt`,
:func:`strip_prefix`). Reading the files is :mod:`eee.store.identity.cache` and
:mod:`eee.store.identity.parse`; near misses :mod:`eee.store.identity.near`; the settled
records :mod:`eee.store.identity.settled`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from eee.store.identity.near import NEAR_MIN, deletions, key, swaps

IDENTITY_DIR = "governance/identity"


DEVELOPER, MODEL, BENCHMARK, METRIC = "developer", "model", "benchmark", "metric"


KINDS = (DEVELOPER, MODEL, BENCHMARK, METRIC)


FILES = {kind: f"{IDENTITY_DIR}/{kind}s.yaml" for kind in KINDS}


KIND_OF_FILE = {rel: kind for kind, rel in FILES.items()}


SCHEMA = ("identity", "registry.schema.json")  # (folder, file) under schemas/, pinned: registry schema 1.0.0
# every released registry schema, by the version a file declares (registry_schema; none: 1.0.0)
SCHEMAS = {None: SCHEMA, "1.1.0": ("identity/1.1.0", "registry.schema.json")}


MATCHES_KEPT = 1 << 17  # spellings whose match a table keeps (then it starts afresh): memory stays bounded


_UNSEEN = object()

# how a spelling relates to the registry (Match.how)


CANONICAL, ALIAS, CASE, PUNCTUATION, NEAR = "canonical", "alias", "case", "punctuation", "near-miss"


def is_registry_file(rel: str) -> bool:
    """Whether ``rel`` lies in the registry's folder (every file there is the registry's)."""
    return rel.startswith(IDENTITY_DIR + "/")


class Alias(NamedTuple):
    name: str
    canonical: str
    settled_at: str | None = None  # the commit whose records under this spelling are settled
    why: str | None = None
    position: int = 0  # its place in its entry's list of aliases


class Match(NamedTuple):
    value: str  # the spelling asked about
    canonical: str  # the registry's id it stands for (or looks like)
    how: str  # CANONICAL, ALIAS, CASE, PUNCTUATION or NEAR
    spelled: str  # the registry's spelling it matched (the canonical id or an alias)
    alias: Alias | None = None  # when ``how`` is ALIAS


class Problem(NamedTuple):
    """Something wrong with a registry file: where, what, how to fix it."""

    file: str
    pointer: str
    message: str
    hint: str | None = None
    line: int | None = None


class Table:
    """The registry's ids of one kind: canonical ids, aliases, and the index of their keys."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.entries: dict[str, dict[str, Any]] = {}  # canonical id -> {"why": ..., "hub": ...}
        self.aliases: dict[str, Alias] = {}
        self._keys: dict[str, list[str]] | None = None
        self._lengths: set[int] = set()  # of the keys
        self._blocks: dict[str, set[str]] | None = None
        self._matched: dict[str, Match | None] = {}  # spelling -> match: a store repeats its spellings

    def canonical(self, value: str) -> str:
        """The canonical id of ``value``: itself unless it is an alias (never a guess)."""
        alias = self.aliases.get(value)
        return alias.canonical if alias is not None else value

    def spellings(self) -> Iterator[str]:
        yield from self.entries
        yield from self.aliases

    def keys(self) -> dict[str, list[str]]:
        """key -> the registry's spellings with that key, canonical ids first."""
        if self._keys is None:
            found: dict[str, list[str]] = {}
            for name in self.spellings():
                k = key(name)
                if k:
                    found.setdefault(k, []).append(name)
            self._keys = found
            self._lengths = {len(k) for k in found}
        return self._keys

    def blocks(self) -> dict[str, set[str]]:
        """one-letter deletion of a key -> the keys it comes from."""
        if self._blocks is None:
            found: dict[str, set[str]] = {}
            for k in self.keys():
                if len(k) >= NEAR_MIN:
                    for d in deletions(k):
                        found.setdefault(d, set()).add(k)
            self._blocks = found
        return self._blocks

    def near(self, k: str) -> list[str]:
        """The registry's keys one letter from ``k`` (one more, one less, two swapped), found
        through the blocks (a few dictionary look-ups, whatever the registry's size)."""
        if len(k) < NEAR_MIN - 1:
            return []
        keys, blocks = self.keys(), self.blocks()
        if not self._lengths & {len(k) - 1, len(k), len(k) + 1}:
            return []  # no key of the registry is one letter longer, shorter or as long
        found = {d for d in deletions(k) if d in keys and len(d) >= NEAR_MIN}  # k has a letter more
        found |= blocks.get(k, set())  # k has a letter less
        if len(k) >= NEAR_MIN:
            found |= {s for s in swaps(k) if s in keys}
        found.discard(k)
        return sorted(found)

    def match(self, value: str) -> Match | None:
        """How ``value`` relates to the registry; None when it is like nothing there. Worked
        out once per distinct spelling (a store of 230,000 records spells a few thousand
        developers and benchmarks, a few dozen metrics), kept for :data:`MATCHES_KEPT`."""
        found = self._matched.get(value, _UNSEEN)
        if found is _UNSEEN:
            if len(self._matched) >= MATCHES_KEPT:
                self._matched.clear()
            found = self._matched[value] = self._match(value)
        return found  # type: ignore[return-value]

    def _match(self, value: str) -> Match | None:
        if value in self.entries:
            return Match(value, value, CANONICAL, value)
        alias = self.aliases.get(value)
        if alias is not None:
            return Match(value, alias.canonical, ALIAS, value, alias)
        k = key(value)
        if not k:
            return None
        same = self.keys().get(k)
        if same:
            spelled = same[0]
            how = CASE if spelled.casefold() == value.casefold() else PUNCTUATION
            return Match(value, self.canonical(spelled), how, spelled)
        near = self.near(k)
        if near:
            spelled = self.keys()[near[0]][0]
            return Match(value, self.canonical(spelled), NEAR, spelled)
        return None


class Registry:
    """The whole registry as read from a tree (see the module docstring)."""

    def __init__(self) -> None:
        self.tables: dict[str, Table] = {kind: Table(kind) for kind in KINDS}
        self.folder_prefixes: list[tuple[str, str]] = []  # (prefix, why)
        self.folder_spellings: list[tuple[str, str, str]] = []  # (character, written as, why)
        self.problems: list[Problem] = []
        self.digest = ""  # of the files it was read from ("" when there are none)
        self.files: list[str] = []  # the registry files found
        self._benchmark_names: dict[str, list[str]] | None = None

    def __getitem__(self, kind: str) -> Table:
        return self.tables[kind]

    def canonical(self, kind: str, value: str | None) -> str | None:
        return None if value is None else self.tables[kind].canonical(value)

    def canonical_model(self, model_id: str | None) -> str | None:
        """A model id's canonical id: the registry's for it, else the id with its developer
        part canonical (``qwen/x`` -> ``Qwen/x`` once ``qwen`` is an alias of ``Qwen``)."""
        if model_id is None:
            return None
        table = self.tables[MODEL]
        if model_id in table.entries or model_id in table.aliases:
            return table.canonical(model_id)
        developer, sep, rest = model_id.partition("/")
        if not sep:
            return model_id
        return f"{self.tables[DEVELOPER].canonical(developer)}/{rest}"

    def hub(self, benchmark: str) -> dict[str, Any] | None:
        """The Hub mapping of a benchmark (through its canonical id), or None."""
        entry = self.tables[BENCHMARK].entries.get(self.tables[BENCHMARK].canonical(benchmark))
        hub = entry.get("hub") if entry else None
        return hub if isinstance(hub, dict) else None

    def benchmark_names(self) -> dict[str, list[str]]:
        """benchmark folder -> the other names its records may give the benchmark: a
        canonical id's aliases, and an alias's canonical id and fellow aliases (worked out
        once: every record asks)."""
        if self._benchmark_names is None:
            self._benchmark_names = self._names_of_benchmarks()
        return self._benchmark_names

    def _names_of_benchmarks(self) -> dict[str, list[str]]:
        table = self.tables[BENCHMARK]
        by_canonical: dict[str, list[str]] = {c: [] for c in table.entries}
        for alias in table.aliases.values():
            by_canonical.setdefault(alias.canonical, []).append(alias.name)
        out: dict[str, list[str]] = {}
        for canonical, names in by_canonical.items():
            out[canonical] = list(names)
            for name in names:
                out[name] = [canonical, *(n for n in names if n != name)]
        return out

    # --- the cache's form ------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "tables": {
                kind: {
                    "entries": t.entries,
                    "aliases": [list(a) for a in t.aliases.values()],
                }
                for kind, t in self.tables.items()
            },
            "folder_prefixes": self.folder_prefixes,
            "folder_spellings": self.folder_spellings,
            "problems": [list(p) for p in self.problems],
            "files": self.files,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], digest: str) -> Registry:
        reg = cls()
        for kind, t in data["tables"].items():
            table = reg.tables[kind]
            table.entries = {str(k): dict(v) for k, v in t["entries"].items()}
            table.aliases = {a[0]: Alias(*a) for a in t["aliases"]}
        reg.folder_prefixes = [tuple(p) for p in data["folder_prefixes"]]  # type: ignore[misc]
        reg.folder_spellings = [tuple(s) for s in data["folder_spellings"]]  # type: ignore[misc]
        reg.problems = [Problem(*p) for p in data["problems"]]
        reg.files = list(data["files"])
        reg.digest = digest
        return reg


EMPTY = Registry()


def record_spellings(doc: dict[str, Any], benchmark: str | None) -> list[tuple[str, str, str]]:
    """(kind, spelling, JSON path) of each id a record gives: its developer and model (from
    ``model_info.id``), its benchmark folder, and each distinct metric id of its results."""
    out: list[tuple[str, str, str]] = []
    info = doc.get("model_info")
    model_id = info.get("id") if isinstance(info, dict) else None
    if isinstance(model_id, str) and model_id.strip():
        developer, sep, rest = model_id.partition("/")
        if sep and developer.strip() and rest.strip():
            out.append((DEVELOPER, developer, "$.model_info.id"))
        out.append((MODEL, model_id, "$.model_info.id"))
    if benchmark:
        out.append((BENCHMARK, benchmark, "$"))
    seen: set[str] = set()
    results = doc.get("evaluation_results")
    for i, result in enumerate(results if isinstance(results, list) else []):
        config = result.get("metric_config") if isinstance(result, dict) else None
        metric = config.get("metric_id") if isinstance(config, dict) else None
        if isinstance(metric, str) and metric.strip() and metric not in seen:
            seen.add(metric)
            out.append((METRIC, metric, f"$.evaluation_results[{i}].metric_config.metric_id"))
    return out


def folder_spelt(model_folder: str, raw_model: str, reg: Registry) -> str | None:
    """The registry's convention (its ``why``) under which ``model_folder`` spells
    ``raw_model``, the model part of ``model_info.id`` (a dot written as a dash: folder
    ``gemini-2-0-flash`` for ``gemini-2.0-flash``), or None. Each convention is tried alone,
    then all of them together."""
    if not reg.folder_spellings:
        return None
    from eee.store.paths import portable_component

    folder = portable_component(raw_model.replace("/", "_"))  # the canonical folder
    every, every_folder = raw_model, folder
    for character, written_as, why in reg.folder_spellings:
        every, every_folder = every.replace(character, written_as), every_folder.replace(character, written_as)
        spelt = raw_model.replace(character, written_as).replace("/", "_")
        if model_folder in (portable_component(spelt), folder.replace(character, written_as)):
            return why
    if model_folder in (portable_component(every.replace("/", "_")), every_folder):
        return "; ".join(why for _c, _w, why in reg.folder_spellings)
    return None


def strip_prefix(folder: str, reg: Registry) -> str | None:
    """The benchmark a folder names after one of the registry's folder prefixes
    (``hal-assistantbench`` -> ``assistantbench``), or None."""
    for prefix, _why in reg.folder_prefixes:
        if folder.startswith(prefix) and len(folder) > len(prefix):
            return folder[len(prefix) :]
    return None
