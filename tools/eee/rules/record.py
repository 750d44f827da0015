"""The rules of an aggregate record: strict JSON, the schema of the version it declares, and
the store's checks beyond it (scores and bounds, result ids, folders from ``model_info.id``,
the benchmark folder, what it declares about its sidecar). :func:`check_record` applies
them all to one record of a tree."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import repeat
from operator import itemgetter, le
from typing import Any

from eee.reporting.findings import WARNING, FileResult, Finding
from eee.reporting.shown import command
from eee.rules.identity import record_findings as identity_findings
from eee.rules.layout import link_finding
from eee.rules.schema import document_findings
from eee.rules.sidecar import DEFAULT_CAP, declared_sidecar_findings
from eee.store import identity
from eee.store.identity import Registry as Names
from eee.store.identity import folder_spelt, strip_prefix
from eee.store.jsonpath import format_path
from eee.store.limits import RECORD_MAX_BYTES
from eee.store.paths import DATA_DIR, StorePath, canonical_folders, sidecar_path_for
from eee.store.schemas import EVAL, Registry
from eee.store.strictjson import JSONProblem, attach_lines, loads
from eee.store.tree import SYMLINK, Tree, Unreadable

_UNBOUNDED = {"Infinity": math.inf, "-Infinity": -math.inf}


def as_float(value: Any) -> float | None:
    """A score or score limit as a float: numbers, and the strings ``"Infinity"`` and
    ``"-Infinity"`` that unbounded limits use; None for anything else (absent, null, text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return _UNBOUNDED.get(value)
    return None


def _score_ptr(i: int) -> str:
    return f"$.evaluation_results[{i}].score_details.score"


_CONFIG = itemgetter("metric_config")
_DETAILS = itemgetter("score_details")
_SCORE = itemgetter("score")


def _plausible(results: list[Any]) -> bool:
    """Fast pre-check for schema-valid results: True when no score rule can fail.

    Runs once per result of every record of a whole store, so it avoids the detailed
    walk (and its allocations) in the common case: every result bounded by two numbers,
    looked at in C loops (``map``); else :func:`_plausible_each`.
    """
    configs = list(map(_CONFIG, results))
    los = list(map(dict.get, configs, repeat("min_score")))
    his = list(map(dict.get, configs, repeat("max_score")))
    if None in los or None in his or str in set(map(type, los)) | set(map(type, his)):
        return _plausible_each(results)
    scores = list(map(_SCORE, map(_DETAILS, results)))
    if not (all(map(le, los, scores)) and all(map(le, scores, his))):
        return False
    ids = [i for i in map(dict.get, results, repeat("evaluation_result_id")) if i is not None]
    return len(set(ids)) == len(ids)


def _plausible_each(results: list[Any]) -> bool:
    """:func:`_plausible`, result by result (results without two numeric bounds)."""
    seen: set[str] = set()
    for result in results:
        rid = result.get("evaluation_result_id")
        if rid is not None:
            if rid in seen:
                return False
            seen.add(rid)
        config = result["metric_config"]
        lo = config.get("min_score")
        hi = config.get("max_score")
        if lo is None and hi is None:
            if config.get("score_type") == "continuous":
                return False
            continue
        if lo is None or hi is None or lo.__class__ is str or hi.__class__ is str:
            return False
        score = result["score_details"]["score"]
        if not lo <= score <= hi:
            return False
    return True


def score_findings(doc: dict[str, Any], file: str, schema_valid: bool = False) -> list[Finding]:
    out: list[Finding] = []
    results = doc.get("evaluation_results")
    if not isinstance(results, list):
        return out
    if schema_valid and _plausible(results):
        return out
    seen_ids: dict[str, int] = {}
    for i, result in enumerate(results):
        if not isinstance(result, dict):
            continue
        rid = result.get("evaluation_result_id")
        if isinstance(rid, str):
            if rid in seen_ids:
                out.append(
                    Finding(
                        file,
                        format_path(["evaluation_results", i, "evaluation_result_id"]),
                        f"evaluation_result_id {rid!r} is also used by evaluation_results[{seen_ids[rid]}]",
                        "each result needs its own id; sidecar rows use it to name their result",
                        check="results",
                    )
                )
            else:
                seen_ids[rid] = i
        config = result.get("metric_config")
        details = result.get("score_details")
        if not isinstance(config, dict) or not isinstance(details, dict):
            continue
        score = details.get("score")
        if isinstance(score, (int, float)) and not isinstance(score, bool) and not math.isfinite(score):
            out.append(
                Finding(file, _score_ptr(i), f"score {score} is not finite", "write a finite number", check="score")
            )
            continue
        lo_raw, hi_raw = config.get("min_score"), config.get("max_score")
        lo, hi = as_float(lo_raw), as_float(hi_raw)
        if config.get("score_type") == "continuous":
            for name, raw in (("min_score", lo_raw), ("max_score", hi_raw)):
                if name in config and raw is None:
                    out.append(
                        Finding(
                            file,
                            format_path(["evaluation_results", i, "metric_config", name]),
                            f"continuous metric has {name} null",
                            'a continuous metric carries both bounds: a number, or "-Infinity"/"Infinity" when unbounded',
                            check="score",
                        )
                    )
        if lo is not None and hi is not None and lo > hi:
            out.append(
                Finding(
                    file,
                    format_path(["evaluation_results", i, "metric_config"]),
                    f"min_score {lo_raw} is greater than max_score {hi_raw}",
                    "swap the bounds",
                    check="score",
                )
            )
            continue
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            continue
        if (lo is not None and score < lo) or (hi is not None and score > hi):
            lo_text = "-inf" if lo is None else lo_raw
            hi_text = "inf" if hi is None else hi_raw
            hint = "fix the score or the declared bounds"
            if hi == 1.0 and 1.0 < score <= 100.0:
                hint = "the score looks like a percentage on a 0-1 metric: divide by 100, or declare max_score 100"
            out.append(
                Finding(
                    file,
                    _score_ptr(i),
                    f"score {score} is outside the declared range [{lo_text}, {hi_text}]",
                    hint,
                    check="score",
                )
            )
    return out


def folder_findings(
    doc: dict[str, Any], file: str, where: StorePath, severity: str = WARNING, spellings: Names | None = None
) -> list[Finding]:
    """The <developer>/<model> folders must come from model_info.id (a warning for the
    validator; the naming hook passes ``severity=ERROR`` for records being added). A model
    folder spelt by a convention of the identity registry (``spellings``: a dot as a dash,
    as the public datastore writes ``google/gemini-2-0-flash``) comes from it too."""
    info = doc.get("model_info")
    model_id = info.get("id") if isinstance(info, dict) else None
    if not isinstance(model_id, str) or where.developer is None:
        return []
    folders = canonical_folders(model_id)
    if folders is None:
        return [
            Finding(
                file,
                "$.model_info.id",
                f"model_info.id {model_id!r} has no developer part",
                "write the id as developer/model, for example meta-llama/Llama-3.1-8B; the folders come from it",
                severity=severity,
                check="naming",
            )
        ]
    if (where.developer, where.model) != folders:
        if (
            spellings is not None
            and where.developer == folders[0]
            and where.model is not None
            and folder_spelt(where.model, model_id.split("/", 1)[1], spellings)
        ):
            return []
        return [
            Finding(
                file,
                "$.model_info.id",
                f"folders {where.developer}/{where.model} do not match model_info.id {model_id!r}",
                f"move the record to data/{where.benchmark}/{folders[0]}/{folders[1]}/",
                severity=severity,
                check="naming",
            )
        ]
    return []


def sidecar_pointer_findings(doc: dict[str, Any], file: str, where: StorePath) -> list[Finding]:
    """``detailed_evaluation_results.file_path`` must name this record's own sidecar."""
    der = doc.get("detailed_evaluation_results")
    if not isinstance(der, dict):
        return []
    expected = sidecar_path_for(where.rel)
    file_path = der.get("file_path")
    out: list[Finding] = []
    if isinstance(file_path, str) and file_path != expected:
        problem = (
            "points outside the record's folder" if ".." in file_path.split("/") else "is not this record's sidecar"
        )
        out.append(
            Finding(
                file,
                "$.detailed_evaluation_results.file_path",
                f"file_path {file_path!r} {problem}",
                f"the sidecar shares the record's uuid and folder: {expected}",
                check="sidecar-path",
            )
        )
    fmt = der.get("format")
    if isinstance(fmt, str) and fmt != "jsonl":
        out.append(
            Finding(
                file,
                "$.detailed_evaluation_results.format",
                f"format {fmt!r}: the store keeps per-sample results as JSON Lines",
                "convert the file to JSON Lines and set format to 'jsonl'",
                check="sidecar-path",
            )
        )
    return out


# --- the benchmark folder ------------------------------------------------------------------------

_WORD = re.compile(r"[a-z]+|[0-9]+")


def name_tokens(name: str) -> tuple[str, ...]:
    """A benchmark name as words: case, punctuation, ``_``/``-`` and HELM's ``helm_`` prefix dropped."""
    words = tuple(_WORD.findall(name.casefold()))
    if len(words) > 1 and words[0] == "helm":
        words = words[1:]
    return words


def _starts(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    """Whether ``shorter`` spells the first words of ``longer`` (``reward-bench`` / ``RewardBench`` alike)."""
    joined = "".join(shorter)
    if not joined:
        return False
    text = ""
    for word in longer:
        text += word
        if text == joined:
            return True
        if len(text) >= len(joined):
            return False
    return False


@lru_cache(maxsize=65536)
def names_match(folder: str, name: str) -> bool:
    """A folder matches a name when one spells the other, or the first words of the other."""
    f, n = name_tokens(folder), name_tokens(name)
    return bool(f and n) and (_starts(n, f) or _starts(f, n))


def record_names(doc: dict[str, Any]) -> list[str]:
    """What a record calls its benchmark, main name first: its dataset name (the one most
    results use; when each of several is used once, as in a leaderboard's record listing its
    scenarios, the source's name, then the first result's), the first result's evaluation
    name and the source's name. A namespace (``inspect_evals/x``) adds ``x``. Names of the
    other results do not count: a HELM Lite record names MMLU among its scenarios but does
    not belong under mmlu."""
    datasets: dict[str, int] = {}
    first_dataset: str | None = None
    first_evaluation: str | None = None
    results = doc.get("evaluation_results")
    for result in results if isinstance(results, list) else []:
        if not isinstance(result, dict):
            continue
        source = result.get("source_data")
        name = source.get("dataset_name") if isinstance(source, dict) else None
        if isinstance(name, str) and name.strip():
            datasets[name] = datasets.get(name, 0) + 1
            first_dataset = first_dataset or name
        evaluation = result.get("evaluation_name")
        if first_evaluation is None and isinstance(evaluation, str) and evaluation.strip():
            first_evaluation = evaluation
    top = max(datasets.values(), default=0)
    out = [n for n, count in datasets.items() if count == top] if top > 1 else []
    meta = doc.get("source_metadata")
    source_name = meta.get("source_name") if isinstance(meta, dict) else None
    source_name = source_name if isinstance(source_name, str) and source_name.strip() else None
    if not out and len(datasets) > 1 and source_name is not None:
        out.append(source_name)  # a leaderboard's record: its name says more than its first scenario
    if first_dataset is not None:
        out.append(first_dataset)
    if first_evaluation is not None:
        out.append(first_evaluation)
    if source_name is not None:
        out.append(source_name)
    for name in list(out):
        if "/" in name:
            out.extend(part for part in name.split("/") if part.strip())
    return list(dict.fromkeys(out))


def _first_names(doc: dict[str, Any]) -> list[str]:
    """Some of :func:`record_names`, cheaply: the first result's dataset and evaluation names
    and the source's name (a match among them is a match among all)."""
    out: list[str] = []
    results = doc.get("evaluation_results")
    first = results[0] if isinstance(results, list) and results else None
    if isinstance(first, dict):
        source = first.get("source_data")
        name = source.get("dataset_name") if isinstance(source, dict) else None
        if isinstance(name, str) and name.strip():
            out.append(name)
        evaluation = first.get("evaluation_name")
        if isinstance(evaluation, str) and evaluation.strip():
            out.append(evaluation)
    meta = doc.get("source_metadata")
    source_name = meta.get("source_name") if isinstance(meta, dict) else None
    if isinstance(source_name, str) and source_name.strip():
        out.append(source_name)
    return out + [part for name in out if "/" in name for part in name.split("/") if part.strip()]


def main_folder(doc: dict[str, Any]) -> str | None:
    """The benchmark folder a record's main name asks for (None when it names none)."""
    names = record_names(doc)
    return _slug(names[0].split("/")[-1]) if names else None


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9._]+", "-", name.strip().casefold()).strip("-.") or "unknown"


def benchmark_findings(
    doc: dict[str, Any],
    file: str,
    where: StorePath,
    aliases: dict[str, list[str]] | None = None,
    folders: Callable[[], Iterable[str]] | None = None,
    registry: Names | None = None,
) -> list[Finding]:
    """A warning when the benchmark folder matches none of the names the record gives its benchmark.

    ``registry``: the identity registry, whose benchmark aliases a folder accepts
    (:meth:`eee.store.identity.Registry.benchmark_names`, unless ``aliases`` gives them) and
    whose folder prefixes (``hal-``) a folder may carry before the benchmark's name. The
    folder suggested is the registry's for the record's main name, else an existing
    benchmark folder (``folders()``, asked only when there is a warning) that matches it
    (with or without a registered prefix), else the main name written as a folder.
    """
    folder = where.benchmark
    if not folder:
        return []
    table = aliases if aliases is not None else registry.benchmark_names() if registry is not None else {}
    bare = strip_prefix(folder, registry) if registry is not None else None
    accepted = [folder, *table.get(folder, [])] + ([bare, *table.get(bare, [])] if bare else [])
    if any(names_match(a, n) for a in accepted for n in _first_names(doc)):
        return []  # the common case, without reading every result
    names = record_names(doc)
    if not names or any(names_match(a, n) for a in accepted for n in names):
        return []
    main = names[0]
    target = next((f for f, others in table.items() if any(names_match(a, main) for a in [f, *others])), None)
    if target is None and folders is not None:
        existing = sorted(f for f in folders() if f != folder)
        unprefixed = {f: (strip_prefix(f, registry) if registry is not None else None) or f for f in existing}
        tiers = (
            lambda f: "".join(_WORD.findall(f.casefold())) == "".join(_WORD.findall(main.casefold())),
            lambda f: name_tokens(f) == name_tokens(main),
            lambda f: names_match(f, main),
            lambda f: unprefixed[f] != f and names_match(unprefixed[f], main),
        )
        target = next((f for same in tiers for f in existing if same(f)), None)
    target = target or _slug(main.split("/")[-1])
    shown = ", ".join(repr(n) for n in names[:3]) + (", ..." if len(names) > 3 else "")
    rest = "/".join(p for p in (where.developer, where.model) if p)
    return [
        Finding(
            file,
            _where_named(doc, main),
            f"the benchmark folder {folder!r} matches none of the record's benchmark names ({shown}); "
            f"it probably belongs in data/{target}/",
            f"place the record under data/{target}/{rest + '/' if rest else ''} (the catalogue lists records by "
            f"folder); if {folder!r} is the right folder on purpose, a maintainer registers the record's name as "
            f"an alias of it: `{command('identity', 'alias', main, '--to', folder, '--kind', 'benchmark', '--commit')}`",
            severity=WARNING,
            check="benchmark",
        )
    ]


def _where_named(doc: dict[str, Any], name: str) -> str:
    """The JSON location where the record first gives ``name``."""
    results = doc.get("evaluation_results")
    for i, result in enumerate(results if isinstance(results, list) else []):
        if not isinstance(result, dict):
            continue
        source = result.get("source_data")
        if isinstance(source, dict) and source.get("dataset_name") == name:
            return f"$.evaluation_results[{i}].source_data.dataset_name"
    for i, result in enumerate(results if isinstance(results, list) else []):
        if isinstance(result, dict) and result.get("evaluation_name") == name:
            return f"$.evaluation_results[{i}].evaluation_name"
    return "$.source_metadata.source_name"


# --- one record, every rule ----------------------------------------------------------------------


def check_record(
    tree: Tree,
    rel: str,
    file: str,
    registry: Registry,
    result: FileResult,
    where: StorePath | None = None,
    repo_checks: bool = True,
    cap: int = DEFAULT_CAP,
) -> dict[str, Any] | None:
    """Check the record ``rel`` of ``tree`` into ``result``: strict JSON, an object, a known
    ``schema_version``, its schema (at most ``cap`` findings), and with ``repo_checks`` the
    store's rules (``where``: the path as :func:`eee.rules.layout.layout_findings` placed it).
    Schema errors beyond ``cap`` are counted in ``result.suppressed``. Returns the parsed
    document (None when it is unreadable)."""
    findings = result.findings
    try:
        data = tree.read(rel, RECORD_MAX_BYTES)  # never through a link: a link is refused here
    except Unreadable as exc:
        findings.append(link_finding(file, "record") if tree.mode(rel) == SYMLINK else exc.finding)
        return None
    try:
        doc = loads(data)
    except JSONProblem as problem:
        findings.append(Finding(file, problem.pointer, problem.message, problem.hint, line=problem.line, check="json"))
        attach_lines(findings[-1:], data)  # a duplicate key: the line of its object
        return None
    if doc.__class__ is not dict:
        findings.append(
            Finding(
                file,
                "$",
                f"a record must be a JSON object, not {'a list' if isinstance(doc, list) else type(doc).__name__}",
                "write one record per file as a JSON object",
                check="json",
            )
        )
        return None
    declared = doc.get("schema_version")
    version = registry.resolve(declared, EVAL)
    schema_valid = False
    if version is None:
        what = "has no schema_version" if declared is None else f"declares unknown schema_version {declared!r}"
        findings.append(
            Finding(
                file,
                "$.schema_version",
                f"record {what}; supported versions: {registry.supported_text()}",
                f"set schema_version to the version the record was written for (new records: {registry.current})",
                check="version",
            )
        )
    else:
        result.schema_version = version
        beyond: list[int] = []
        schema_valid, found = document_findings(registry, version, EVAL, doc, file, limit=cap, beyond=beyond)
        findings.extend(found)
        result.suppressed += sum(beyond)  # never shown, never accepted by a flag: always counted
    if repo_checks:
        findings.extend(score_findings(doc, file, schema_valid))
        if where is not None and where.kind == "record" and where.benchmark is not None:
            names = identity.read(tree)
            findings.extend(folder_findings(doc, file, where, spellings=names))
            findings.extend(
                benchmark_findings(doc, file, where, folders=lambda: benchmark_folders(tree), registry=names)
            )
            findings.extend(identity_findings(doc, file, where, tree, names))
            if "detailed_evaluation_results" in doc:
                findings.extend(sidecar_pointer_findings(doc, file, where))
        findings.extend(declared_sidecar_findings(doc, file))
    if findings:
        attach_lines(findings, data, doc)  # only files with findings pay for the line lookup
    return doc


def benchmark_folders(tree: Tree) -> list[str]:
    """The benchmark folders of a store (for the folder a record belongs in)."""
    return [name for name in tree.names(DATA_DIR) if not name.startswith(".")]
