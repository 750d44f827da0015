"""``eee export hf-evals``: a model's active results as the Hugging Face Hub's
``.eval_results/*.yaml`` files, which the Hub shows on the model's page.

Each file is a YAML list of entries, written with huggingface_hub's own
``EvalResultEntry``, ``eval_result_entries_to_yaml`` and YAML writer (``yaml_dump``), and
read back with its parser (``yaml.safe_load`` and ``parse_eval_result_entries``) before it
is written: what the Hub reads is what was meant. One file per benchmark and variant (the
Hub task and the metric, when a benchmark has more than one); one entry per active result
of the model (every spelling the identity registry makes one model), each with the date of
the evaluation and a link back to the record's page on the published site (``site_url``, a
setting of the store: ``governance/settings.yaml``; unset, no entry links anywhere, never to
a placeholder). Results of one benchmark, task and metric that differ in split or
perturbation (HELM's valid and test, robustness and fairness) are variants: a file each,
their notes say which.

The Hub accepts benchmark datasets it knows only, so a benchmark maps to a Hub dataset (and
its results to task ids) in the identity registry (``hub`` in
``governance/identity/benchmarks.yaml``). A result whose benchmark has no mapping, or maps
to no task, is listed and skipped: never guessed.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eee.reporting.findings import Finding, Refused
from eee.store.identity import DEVELOPER, MODEL, Registry

EVAL_RESULTS = ".eval_results"
DEFAULT_OUT = "build/hub"  # + /<model>/ (a folder to upload: .eval_results/ inside it)


@dataclass
class Skipped:
    benchmark: str
    reason: str
    results: int = 0
    example: str | None = None  # a record path


@dataclass
class EvalExport:
    """What the export of one model holds: file name -> entries, and what it left out."""

    model: str  # the canonical id
    files: dict[str, list[Any]] = field(default_factory=dict)
    skipped: dict[tuple[str, str], Skipped] = field(default_factory=dict)
    records: int = 0  # active records of the model read
    left_out: int = 0  # records of the model that do not count (retracted, superseded, duplicate)

    def skip(self, benchmark: str, reason: str, rel: str) -> None:
        found = self.skipped.setdefault((benchmark, reason), Skipped(benchmark, reason, 0, rel))
        found.results += 1


def _hub() -> Any:
    try:
        import huggingface_hub
    except ImportError:
        from eee.reporting.findings import refusal

        raise refusal(
            "huggingface_hub is not installed: the Hub's own format writer is needed",
            "pip install 'eee-datastore[hub]' (or `pip install huggingface_hub`)",
            check="output",
        ) from None
    return huggingface_hub


def render(entries: list[Any]) -> str:
    """The text of an ``.eval_results`` file: the Hub's own serialisation of the entries."""
    hub = _hub()
    from huggingface_hub.utils import yaml_dump

    return yaml_dump(hub.eval_result_entries_to_yaml(entries), sort_keys=False)


def parse(text: str) -> list[Any]:
    """An ``.eval_results`` file read as the Hub reads it."""
    import yaml

    hub = _hub()
    data = yaml.safe_load(text)
    return hub.parse_eval_result_entries(data if isinstance(data, list) else [])


def _candidates(root: Path, names: Registry, wanted: str) -> Iterator[str]:
    """The records that may be of the model ``wanted`` (a canonical id): those in the
    developer folders of its developer (any spelling of it) and of its aliases."""
    developers = {names.canonical(DEVELOPER, wanted.partition("/")[0])}
    developers |= {a.name.partition("/")[0] for a in names[MODEL].aliases.values() if a.canonical == wanted}
    data = root / "data"
    for bench in sorted(p.name for p in data.iterdir() if p.is_dir()) if data.is_dir() else []:
        for dev in sorted(p.name for p in (data / bench).iterdir() if p.is_dir()):
            if dev not in developers and names.canonical(DEVELOPER, dev) not in developers:
                continue
            for model in sorted(p.name for p in (data / bench / dev).iterdir() if p.is_dir()):
                for path in sorted((data / bench / dev / model).glob("*.json")):
                    yield f"data/{bench}/{dev}/{model}/{path.name}"


def _iso(value: Any) -> str | None:
    if isinstance(value, _dt.datetime):
        return value.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def build(root: Path, model: str) -> EvalExport:
    """The files of ``model``'s active results (see the module docstring)."""
    hub = _hub()
    from eee.catalog.table import default_loader, exclusion, read_names, rows_for
    from eee.rules.ledger import read_ledger
    from eee.site.context import published_record_url
    from eee.site.docstree import read_config
    from eee.store.paths import RECORD_SUFFIX, UUID4_RE
    from eee.store.strictjson import JSONProblem

    names = read_names(root)
    ledger = read_ledger(root)
    config = read_config(root)
    site_url = site_address(root)
    site_name = str(config.get("site_name") or "Every Eval Ever datastore")
    opts = ((config.get("extra") or {}).get("catalogue") or {}) if isinstance(config.get("extra"), dict) else {}
    limit = int(opts.get("record_pages", 2000)) if isinstance(opts, dict) else 2000
    directory_urls = config.get("use_directory_urls", True) is not False
    named = sum(1 for p in (root / "data").glob("*/*/*/*.json") if UUID4_RE.match(p.name[: -len(RECORD_SUFFIX)]))
    wanted = names.canonical_model(model) or model
    out = EvalExport(wanted)
    loader = default_loader()
    variants: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    for rel in _candidates(root, names, wanted):
        uuid = rel.rsplit("/", 1)[1][: -len(RECORD_SUFFIX)]
        try:
            doc, declared, read_as, filled = loader(root / rel)
        except (OSError, JSONProblem, ValueError):
            continue  # `eee validate` reports it
        if not isinstance(doc, dict):
            continue
        info = doc.get("model_info") if isinstance(doc.get("model_info"), dict) else {}
        if names.canonical_model(info.get("id") if isinstance(info.get("id"), str) else None) != wanted:
            continue
        state = ledger.state(uuid)
        if exclusion(state) is not None:
            out.left_out += 1
            continue
        out.records += 1
        own = named <= limit or bool(getattr(state, "history", None))
        link = published_record_url(site_url, uuid, own, directory_urls) if site_url else None
        details = _result_details(doc)
        for row in rows_for(uuid, rel, doc, declared, read_as, filled, ledger, names):
            bench = row["benchmark_canonical"] or row["benchmark"]
            mapping = names.hub(bench)
            if mapping is None:
                out.skip(bench, "no Hub dataset for this benchmark in the identity registry", rel)
                continue
            tasks = mapping.get("tasks") or {}
            task = tasks.get(row["evaluation_name"]) or tasks.get(row["dataset_name"]) or mapping.get("task")
            if task is None:
                out.skip(bench, f"result {row['evaluation_name']!r} maps to no Hub task of {mapping['dataset']}", rel)
                continue
            if row["score"] is None:
                out.skip(bench, "a result without a numeric score", rel)
                continue
            metric = row["metric_id_canonical"] or row["metric_name"] or row["evaluation_name"] or "score"
            library = " ".join(
                str(x) for x in (row["eval_library"], row["eval_library_version"]) if x and x != "unknown"
            )
            variant = _variant(row, details)
            notes = (
                f"{metric}"
                + (f", {variant}" if variant else "")
                + (f" ({library})" if library else "")
                + f"; Every Eval Ever record {uuid}"
            )
            entry = hub.EvalResultEntry(
                dataset_id=mapping["dataset"],
                task_id=task,
                value=row["score"],
                date=_iso(row["evaluation_timestamp"]),
                source_url=link,
                source_name=site_name if link else None,  # the Hub's entry names a source only with its address
                notes=notes,
            )
            variants[(bench, task, metric, variant)].append((row["evaluation_timestamp_raw"] or "", uuid, entry))
    tasks_of: dict[str, set[str]] = defaultdict(set)
    metrics_of: dict[tuple[str, str], set[str]] = defaultdict(set)
    kinds_of: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for bench, task, metric, variant in variants:
        tasks_of[bench].add(task)
        metrics_of[(bench, task)].add(metric)
        kinds_of[(bench, task, metric)].add(variant)
    from eee.site.mdtext import slug

    for (bench, task, metric, variant), found in sorted(variants.items()):
        parts = [bench]
        if len(tasks_of[bench]) > 1:
            parts.append(task)
        if len(metrics_of[(bench, task)]) > 1:
            parts.append(metric)
        if len(kinds_of[(bench, task, metric)]) > 1:
            parts.append(variant or "main")
        name = slug("--".join(parts)) + ".yaml"
        out.files[name] = [entry for _, _, entry in sorted(found, key=lambda f: (f[0], f[1]))]
    return out


def site_address(root: Path) -> str | None:
    """The address the store's site is published at (``site_url`` in the store's settings,
    ``governance/settings.yaml``), or None: then no exported result links to a site."""
    from eee.store import settings
    from eee.store.tree import WorkTree

    try:
        return settings.read(WorkTree(str(root))).site_url
    except settings.SettingsProblem as exc:
        raise Refused([Finding(settings.SETTINGS_PATH, exc.pointer, exc.message, exc.hint, check="settings")]) from None


_VARIANT_KEYS = (("split", "split"), ("perturbation", "perturbation"), ("perturbation_computed_on", "computed on"))


def _result_details(doc: dict[str, Any]) -> dict[str, dict[str, str]]:
    """evaluation_result_id -> what sets the result apart within its evaluation: the split
    and the perturbation a harness names (HELM's valid, test, robustness, fairness)."""
    out: dict[str, dict[str, str]] = {}
    for result in doc.get("evaluation_results") or []:
        if not isinstance(result, dict) or not isinstance(result.get("evaluation_result_id"), str):
            continue
        score = result.get("score_details") if isinstance(result.get("score_details"), dict) else {}
        details = score.get("details") if isinstance(score.get("details"), dict) else {}
        out[result["evaluation_result_id"]] = {
            label: str(details[k])
            for k, label in _VARIANT_KEYS
            if isinstance(details.get(k), (str, int)) and details[k]
        }
    return out


def _variant(row: dict[str, Any], details: dict[str, dict[str, str]]) -> str:
    """What tells this result apart from the other results of its benchmark, task and metric:
    its split and perturbation (the results the registry maps to one task are one evaluation)."""
    return ", ".join(f"{k} {v}" for k, v in (details.get(row.get("evaluation_result_id") or "") or {}).items())


def write(out_dir: Path, export: EvalExport) -> tuple[list[Path], list[str]]:
    """Write the export's files into ``out_dir/.eval_results/`` (each atomically, read back
    with the Hub's parser first); returns them, and the files already there that this export
    did not write (left as they were)."""
    from eee.store.fsutil import replace_file, write_new

    folder = Path(out_dir) / EVAL_RESULTS
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise Refused([Finding(str(folder), "$", f"{folder} is not a folder", check="output")])
    texts: dict[str, str] = {}
    for name, entries in export.files.items():
        text = render(entries)
        if parse(text) != entries:  # never a file the Hub would read otherwise
            raise Refused(
                [
                    Finding(
                        name,
                        "$",
                        "the Hub's parser reads the written file otherwise; nothing was written",
                        check="output",
                    )
                ]
            )
        texts[name] = text
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in texts.items():
        target = folder / name
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise Refused([Finding(str(target), "$", f"{target} is not a regular file: left alone", check="output")])
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        write_new(tmp, text.encode("utf-8"), durable=False)
        try:
            replace_file(tmp, target)
        finally:
            if tmp.exists():
                tmp.unlink()
        written.append(target)
    others = sorted(p.name for p in folder.iterdir() if p.name not in texts and not p.name.startswith("."))
    return written, others


def model_folder(model: str) -> str:
    """The default output folder's name for a model id."""
    from eee.site.mdtext import slug

    return slug(model.replace("/", "--"))
