"""The identity registry: one name for each developer, model, benchmark and metric.

Names are data. ``governance/identity/`` holds one plain YAML file per kind
(``developers.yaml``, ``models.yaml``, ``benchmarks.yaml``, ``metrics.yaml``; schema:
``schemas/identity/registry.schema.json``) giving each canonical id and its **aliases**, the
other spellings of the same thing. A rename is an alias, never a move: records keep their
paths, and readers (the catalogue's ``*_canonical`` columns, stats, compare, irt, dedup, the
site) group by the canonical id. Changing the registry is a maintainer's act.

- **Spellings.** A record's developer is the developer part of ``model_info.id`` (its
  folder), its model ``model_info.id``, its benchmark its benchmark folder, its metrics each
  result's ``metric_config.metric_id``. :meth:`Table.match` says how a spelling relates to
  the registry: canonical, an alias, the same but for case or punctuation (one normalised
  key, :func:`key`), or a near miss (one letter more, less or swapped), found by blocking
  on the key's one-letter deletions, never by comparing every pair.
- **Settled.** An alias may name the commit it was made at (``settled_at``): the records
  that commit holds under the alias were already there and are settled; a record added under
  it later is warned (:func:`settled`, asked of git: a path is in that commit or it is not,
  whatever dates a record declares).
- **Conventions** of a datastore's folder names, declared once: benchmark folder prefixes
  (``hal-`` for the HAL leaderboard's ``hal-assistantbench``) and how model folders spell
  characters of model ids (a dot as a dash: ``google/gemini-2-0-flash``).
- **Hub.** A benchmark may name its Hugging Face Hub dataset and task ids (``eee export
  hf-evals``).

The files are input written by someone else: read from a tree (:func:`read`), bounded
(:data:`eee.store.limits.IDENTITY_MAX_BYTES`), plain YAML (:mod:`eee.store.safeyaml`),
checked against the pinned schema and for consistency; each problem is a
:class:`Problem` naming the file, the place (with its line) and the fix, and a bad file is
left out (the others still count). The hooks read the registry at every commit: what a
file's bytes parse to is kept in the git directory, keyed by their sha256, so a commit
pays for the YAML parser only when the registry changed.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from eee.store.limits import IDENTITY_MAX_BYTES
from eee.store.tree import GitTree, Overlay, Tree, Unreadable, WorkTree

IDENTITY_DIR = "governance/identity"
DEVELOPER, MODEL, BENCHMARK, METRIC = "developer", "model", "benchmark", "metric"
KINDS = (DEVELOPER, MODEL, BENCHMARK, METRIC)
FILES = {kind: f"{IDENTITY_DIR}/{kind}s.yaml" for kind in KINDS}
KIND_OF_FILE = {rel: kind for kind, rel in FILES.items()}
SCHEMA = ("identity", "registry.schema.json")  # (folder, file) under schemas/, pinned: registry schema 1.0.0
# every released registry schema, by the version a file declares (registry_schema; none: 1.0.0)
SCHEMAS = {None: SCHEMA, "1.1.0": ("identity/1.1.0", "registry.schema.json")}
CACHE_NAME = "eee-identity.json"  # in the git directory: the parsed registry, by its files' sha256
CACHE_FORMAT = "eee-identity-cache/2"
NEAR_MIN = 6  # keys shorter than this have no near misses (gpt-4o, qwen: too many neighbours)
MATCHES_KEPT = 1 << 17  # spellings whose match a table keeps (then it starts afresh): memory stays bounded
_UNSEEN = object()

# how a spelling relates to the registry (Match.how)
CANONICAL, ALIAS, CASE, PUNCTUATION, NEAR = "canonical", "alias", "case", "punctuation", "near-miss"


def is_registry_file(rel: str) -> bool:
    """Whether ``rel`` lies in the registry's folder (every file there is the registry's)."""
    return rel.startswith(IDENTITY_DIR + "/")


_ASCII_KEY = re.compile(r"[^a-z0-9]+")


def key(name: str) -> str:
    """A name as the registry compares spellings: letters and digits only, case folded,
    accents dropped (``AlephAlpha``, ``aleph-alpha`` and ``Aleph_Alpha`` are one key)."""
    if name.isascii():
        return _ASCII_KEY.sub("", name.lower())
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFKD", name.casefold()) if c.isalnum())


def deletions(k: str) -> Iterator[str]:
    """``k`` with one letter (never a digit) left out: the blocks of the near-miss search."""
    for i, c in enumerate(k):
        if c.isalpha() and (i == 0 or k[i - 1] != c):  # a doubled letter gives one deletion
            yield k[:i] + k[i + 1 :]


def swaps(k: str) -> Iterator[str]:
    for i in range(len(k) - 1):
        a, b = k[i], k[i + 1]
        if a != b and a.isalpha() and b.isalpha():
            yield k[:i] + b + a + k[i + 2 :]


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


# --- reading a tree ------------------------------------------------------------------------


def repo_of(tree: Tree) -> str | None:
    """The git repository a tree's store lies in (None for a folder outside git)."""
    while isinstance(tree, Overlay):
        tree = tree.base
    if isinstance(tree, GitTree):  # a commit, or the index (IndexTree)
        return str(tree.repo)
    if isinstance(tree, WorkTree) and os.path.exists(os.path.join(tree.root, ".git")):
        return tree.root
    return None


def _cache_path(repo: str | None) -> str | None:
    if repo is None:
        return None
    folder = os.path.join(repo, ".git")
    return os.path.join(folder, CACHE_NAME) if os.path.isdir(folder) else None


def read_files(tree: Tree) -> tuple[dict[str, bytes], list[Problem]]:
    """The registry files of ``tree`` (path -> bytes) and those that cannot be read."""
    found: dict[str, bytes] = {}
    problems: list[Problem] = []
    if not tree.exists(IDENTITY_DIR):
        return found, problems
    for rel in registry_paths(tree):
        if rel not in KIND_OF_FILE:
            continue  # the rule of the folder (eee.rules.identity) names it
        try:
            found[rel] = tree.read(rel, IDENTITY_MAX_BYTES)
        except Unreadable as exc:
            problems.append(Problem(tree.display(rel), "$", exc.finding.message, exc.finding.hint))
    return found, problems


def registry_paths(tree: Tree) -> list[str]:
    """Every path in the registry's folder of ``tree`` (files and anything else)."""
    return [f"{IDENTITY_DIR}/{name}" for name in sorted(tree.names(IDENTITY_DIR))]


_HOME: Registry | None = None  # the registry of the store a command runs in (home_registry)


@contextlib.contextmanager
def home_registry(store: str | os.PathLike[str] | None = None) -> Iterator[None]:
    """Within the block, a folder without a registry of its own (a datastore snapshot
    checked with `eee validate`) is read with the registry of the store ``store`` (default:
    the git work tree of the current folder): its conventions and canonical ids. Trees of
    git (a commit, the index) never are."""
    global _HOME
    from eee.git.cli import GitError, toplevel

    before = _HOME
    try:
        root = os.path.abspath(store) if store is not None else str(toplevel(os.getcwd()))
        home = WorkTree(root)
        files, _ = read_files(home)
        if files:
            _HOME = load(files, display=home.display, repo=repo_of(home))
    except GitError:
        pass
    try:
        yield
    finally:
        _HOME = before


def read(tree: Tree) -> Registry:
    """The registry of ``tree`` (empty where it has none, or the home registry:
    :func:`home_registry`), read once per tree."""
    cached = getattr(tree, "_eee_identity", None)
    if isinstance(cached, Registry):
        return cached
    files, unreadable = read_files(tree)
    if (
        not files
        and not unreadable
        and _HOME is not None
        and isinstance(tree, WorkTree)
        and not tree.exists(IDENTITY_DIR)
    ):
        reg = _HOME
        try:
            tree._eee_identity = reg  # type: ignore[attr-defined]
        except AttributeError:
            pass
        return reg
    reg = load(files, display=tree.display, repo=repo_of(tree)) if files or unreadable else EMPTY
    if unreadable:
        reg = Registry() if reg is EMPTY else copy.copy(reg)  # a parsed registry is shared: never changed
        reg.problems = [*unreadable, *reg.problems]
    try:
        tree._eee_identity = reg  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return reg


def digest_of(files: dict[str, bytes]) -> str:
    h = hashlib.sha256(CACHE_FORMAT.encode())
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    return h.hexdigest()


_PARSED: dict[str, Registry] = {}  # digest -> the registry those files parse to, in this process
PARSED_KEEP = 4


def load(files: dict[str, bytes], display: Any = None, repo: str | None = None) -> Registry:
    """The registry the files (path -> bytes) declare: parsed once per process (every chunk
    of a validation, every tree of an audit asks), else through the cache of ``repo``'s git
    directory when there is one (the cache keeps what the files parse to, problems included).
    The registry returned is shared: callers never change it."""
    digest = digest_of(files)
    reg = _PARSED.get(digest)
    if reg is None:
        reg = _load(files, digest, repo)
        if len(_PARSED) >= PARSED_KEEP:
            _PARSED.clear()
        _PARSED[digest] = reg
    if display is not None and reg.problems:  # the problems name files as this tree shows them
        reg = copy.copy(reg)
        reg.problems = [p._replace(file=display(p.file)) for p in reg.problems]
    return reg


def _load(files: dict[str, bytes], digest: str, repo: str | None) -> Registry:
    cache = _cache_path(repo)
    kept: dict[str, Any] = {}
    if cache is not None:
        try:
            with open(cache, encoding="utf-8") as handle:
                data = json.load(handle)
            kept = data["registries"] if data.get("format") == CACHE_FORMAT else {}
            if digest in kept:
                return Registry.from_json(kept[digest], digest)
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            kept = {}
    reg = parse(files)
    reg.digest = digest
    if cache is not None:
        _write_cache(cache, digest, reg, kept)
    return reg


CACHE_KEEP = 4  # registries kept (HEAD's and the index's differ while a change of it is staged)


def _write_cache(path: str, digest: str, reg: Registry, kept: dict[str, Any]) -> None:
    from eee.store.fsutil import write_replacing

    if not isinstance(kept, dict):
        kept = {}
    kept = {k: v for k, v in list(kept.items())[-(CACHE_KEEP - 1) :] if k != digest}
    kept[digest] = reg.to_json()  # the newest last
    data = json.dumps({"format": CACHE_FORMAT, "registries": kept}).encode()
    try:
        write_replacing(path, data, durable=False)
    except OSError:
        pass  # a read-only git directory: the next run parses again


# --- parsing and checking ------------------------------------------------------------------


def parse(files: dict[str, bytes]) -> Registry:
    """The registry the files declare, every problem of each file in ``problems``; a file
    with a problem of its own (not YAML, not the schema) is left out whole."""
    reg = Registry()
    for rel in sorted(files):
        kind = KIND_OF_FILE.get(rel)
        if kind is None:
            continue
        doc, problems = _document(rel, files[rel])
        reg.problems += problems
        if doc is None:
            continue
        reg.files.append(rel)
        _take(reg, kind, rel, doc, files[rel])
    return reg


def _document(rel: str, data: bytes) -> tuple[dict[str, Any] | None, list[Problem]]:
    from eee.store.jsonpath import format_path
    from eee.store.safeyaml import YAMLRefused, lines, load

    kind = KIND_OF_FILE[rel]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [Problem(rel, "$", "not UTF-8 text", "save the file as UTF-8", line)]
    try:
        doc = load(text)
    except YAMLRefused as exc:
        found = re.search(r"\(line (\d+)\)", str(exc))
        hint = "write plain YAML: mappings, lists and strings only (no anchors, aliases or tags)"
        return None, [Problem(rel, "$", f"not plain YAML: {exc}", hint, int(found.group(1)) if found else None)]
    if doc is None:
        doc = {}
    from eee.store.schemas import default_registry

    declared = doc.get("registry_schema") if isinstance(doc, dict) else None
    version = declared if isinstance(declared, str) and declared in SCHEMAS else None
    if version is None and isinstance(doc, dict) and "registry_schema" in doc:
        at = lines(text)
        known = ", ".join(v for v in SCHEMAS if v)
        return None, [
            Problem(
                rel,
                "$.registry_schema",
                f"registry_schema {declared!r} is not a released identity registry schema (released: {known})",
                f'write registry_schema: "{known.split(", ")[-1]}" in quotes, or leave it out for 1.0.0',
                at.get(("registry_schema",)),
            )
        ]
    validator = default_registry().other_validator(*SCHEMAS[version])
    errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.instance_path])[:20]
    if errors:
        at = lines(text)
        out = []
        for err in errors:
            path = tuple(err.instance_path)
            out.append(
                Problem(
                    rel,
                    format_path(list(path)),
                    f"{_schema_message(err)} (identity registry schema)",
                    _schema_hint(kind, path),
                    _line_of(at, path),
                )
            )
        return None, out
    if doc.get("kind") != kind:
        at = lines(text)
        return None, [
            Problem(
                rel,
                "$.kind",
                f"kind {doc.get('kind')!r} in {rel.rsplit('/', 1)[-1]}, which holds the {kind} ids",
                f"write kind: {kind} (each kind has its own file: {', '.join(f.rsplit('/', 1)[-1] for f in FILES.values())})",
                at.get(("kind",)),
            )
        ]
    return doc, []


def _schema_message(err: Any) -> str:
    text = str(err.message)
    return text if len(text) <= 300 else text[:297] + "..."


def _schema_hint(kind: str, path: tuple[Any, ...]) -> str:
    if "settled_at" in path or (len(path) >= 4 and path[-2] == "aliases"):
        return (
            "an alias is a name, or a mapping of name, settled_at and why; settled_at is the full id of a commit, "
            "in quotes ('...'): `eee identity alias` writes it"
        )
    if "hub" in path:
        return (
            "hub is a benchmark's Hugging Face dataset id (org/name) with its task ids and, from registry schema "
            "1.1.0 on, its source: {url: <the page that shows the id>, note: <what it shows>} (docs/guide/hub.md)"
        )
    return (
        f"an entry is `<canonical id>: {{aliases: [...], why: ...}}` under entries; see governance/README.md, "
        f"'The identity registry' (this file holds the {kind} ids)"
    )


def _line_of(at: dict[tuple[Any, ...], int], path: tuple[Any, ...]) -> int | None:
    for n in range(len(path), 0, -1):
        if path[:n] in at:
            return at[path[:n]]
    return None


def _take(reg: Registry, kind: str, rel: str, doc: dict[str, Any], data: bytes) -> None:
    """Add a schema-valid file's entries; consistency problems go to ``reg.problems``."""
    table = reg.tables[kind]
    at: dict[tuple[Any, ...], int] | None = None

    def problem(path: tuple[Any, ...], message: str, hint: str) -> None:
        nonlocal at
        from eee.store.jsonpath import format_path
        from eee.store.safeyaml import lines

        if at is None:
            at = lines(data.decode("utf-8"))
        reg.problems.append(Problem(rel, format_path(list(path)), message, hint, _line_of(at, path)))

    entries: dict[str, Any] = doc.get("entries") or {}
    for canonical, entry in entries.items():
        table.entries[canonical] = {k: v for k, v in (entry or {}).items() if k in ("why", "hub")}
    owners: dict[str, str] = {}
    for canonical, entry in entries.items():
        for i, raw in enumerate((entry or {}).get("aliases") or []):
            alias = (
                Alias(raw, canonical, position=i)
                if isinstance(raw, str)
                else Alias(raw["name"], canonical, raw.get("settled_at"), raw.get("why"), i)
            )
            path = ("entries", canonical, "aliases", i)
            if alias.name == canonical:
                problem(path, f"{alias.name!r} is listed as an alias of itself", "remove it from its own aliases")
                continue
            if alias.name in entries:
                problem(
                    path,
                    f"{alias.name!r} is both a canonical id and an alias of {canonical!r}",
                    f"merge the two entries: `{_command('alias', alias.name, '--to', canonical, '--kind', kind)}` "
                    "moves its aliases over",
                )
                continue
            if alias.name in owners:
                other = owners[alias.name]
                problem(
                    path,
                    f"{alias.name!r} is an alias of {other!r} already"
                    + ("" if other != canonical else " (listed twice)"),
                    "an alias stands for one canonical id: keep one of the two",
                )
                continue
            owners[alias.name] = canonical
            table.aliases[alias.name] = alias
    if kind == BENCHMARK:
        reg.folder_prefixes = [(p["prefix"], p["why"]) for p in doc.get("folder_prefixes") or []]
    if kind == MODEL:
        reg.folder_spellings = [(s["character"], s["written_as"], s["why"]) for s in doc.get("folder_spellings") or []]


def _command(*args: str) -> str:
    from eee.reporting.shown import command

    return command("identity", *args)


# --- settled records ----------------------------------------------------------------------

_checkers: dict[tuple[int, str], Any] = {}
_commits: dict[tuple[str, str], bool] = {}


def _checker(repo: str) -> Any:
    from eee.git.cli import BatchCheck

    k = (os.getpid(), repo)  # a forked worker asks through its own process
    found = _checkers.get(k)
    if found is None:
        found = _checkers[k] = BatchCheck(repo)
    return found


def commit_known(tree: Tree, commit: str) -> bool | None:
    """Whether the store's git repository has ``commit`` (None outside git)."""
    repo = repo_of(tree)
    if repo is None:
        return None
    k = (repo, commit)
    if k not in _commits:
        _commits[k] = _checker(repo).kind(f"{commit}^{{commit}}") == "commit"
    return _commits[k]


def settled(tree: Tree, alias: Alias, rel: str) -> bool:
    """Whether the record ``rel`` was under ``alias`` when it became one: the commit the
    alias names holds it. False without such a commit, outside git, or when the clone lacks
    the commit (:func:`commit_known` tells which)."""
    if alias.settled_at is None:
        return False
    repo = repo_of(tree)
    if repo is None:
        return False
    return _checker(repo).kind(f"{alias.settled_at}:{rel}") == "blob"


def close_checkers() -> None:
    for k in [k for k in _checkers if k[0] == os.getpid()]:
        _checkers.pop(k).close()


# --- what a record calls itself ------------------------------------------------------------


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
