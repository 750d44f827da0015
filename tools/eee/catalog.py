"""The catalogue: one Parquet table of every evaluation result in the store.

One row per result (``evaluation_results[i]`` of every record), with the record's
identity, provenance, metric and score, and its governance status from the one status
fold. Records are read as the current schema version where a migration exists, so the
columns mean the same thing for every row. DuckDB, pandas and polars read it directly::

    SELECT benchmark, model_id, metric_id, score FROM 'build/catalog/catalog.parquet'
    WHERE status = 'active';
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from eee.governance.status import Ledger
from eee.paths import RECORD_SUFFIX
from eee.rules.record import as_float as _f

CATALOG_FILE = "build/catalog/catalog.parquet"  # where the pipeline writes it (dvc.yaml)

# (column, arrow type, description): the table's contract; docs are generated from it
COLUMNS: list[tuple[str, str, str]] = [
    ("record_uuid", "string", "uuid of the record (its file name)"),
    ("record_path", "string", "repository path of the record"),
    ("benchmark", "string", "benchmark folder"),
    ("developer", "string", "developer folder (from model_info.id)"),
    ("model", "string", "model folder (from model_info.id)"),
    ("model_id", "string", "model_info.id"),
    ("model_name", "string", "model_info.name"),
    ("schema_version", "string", "the version the record declares"),
    ("read_as", "string", "the version the row was read as (the current one when a migration exists)"),
    ("migration_filled", "string", "JSON list of fields the migration had to fill with 'unknown' (null when none)"),
    ("evaluation_id", "string", "evaluation_id of the run"),
    ("source_type", "string", "documentation or evaluation_run"),
    ("source_name", "string", "source_metadata.source_name"),
    ("source_organization", "string", "source_metadata.source_organization_name"),
    ("evaluator_relationship", "string", "first_party, third_party, collaborative or other"),
    ("eval_library", "string", "eval_library.name (helm, lm_eval, inspect_ai, ...)"),
    ("eval_library_version", "string", "eval_library.version"),
    ("inference_platform", "string", "model_info.inference_platform"),
    ("evaluation_result_id", "string", "stable id of the result within its run"),
    ("evaluation_name", "string", "name of the evaluation"),
    ("dataset_name", "string", "source_data.dataset_name"),
    ("source_data_type", "string", "url, hf_dataset or other"),
    ("metric_id", "string", "metric_config.metric_id"),
    ("metric_name", "string", "metric_config.metric_name"),
    ("metric_kind", "string", "metric_config.metric_kind"),
    ("metric_unit", "string", "metric_config.metric_unit"),
    ("lower_is_better", "bool", "metric direction"),
    ("score_type", "string", "binary, continuous or levels"),
    ("min_score", "float64", "lowest possible score (-inf when unbounded)"),
    ("max_score", "float64", "highest possible score (inf when unbounded)"),
    ("score", "float64", "the score"),
    ("standard_error", "float64", "score_details.uncertainty.standard_error.value"),
    ("ci_lower", "float64", "lower end of the confidence interval"),
    ("ci_upper", "float64", "upper end of the confidence interval"),
    ("num_samples", "int64", "score_details.uncertainty.num_samples"),
    ("evaluation_timestamp", "string", "when the evaluation ran (as the record gives it)"),
    ("retrieved_timestamp", "string", "when the record was made"),
    ("has_samples", "bool", "whether the record has a per-sample sidecar"),
    ("status", "string", "active, retracted, superseded or disputed (the governance fold)"),
    ("status_reason", "string", "reason of the retraction (or of the supersession)"),
    ("superseded_by", "string", "uuid of the record that replaces this one"),
    ("preceded_by", "string", "uuid of the record this one replaces"),
    ("dispute_reference", "string", "URL of the open dispute"),
]
COLUMN_NAMES = [c[0] for c in COLUMNS]


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) else (None if value is None else str(value))


def _i(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def record_paths(root: Path) -> Iterator[tuple[str, str]]:
    """(uuid, repository path) of every record under ``root/data``, sorted."""
    data = root / "data"
    out = []
    for dirpath, _dirs, files in os.walk(data):
        for name in files:
            if name.endswith(RECORD_SUFFIX):
                rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                if rel.count("/") == 4:
                    out.append((name[: -len(RECORD_SUFFIX)], rel))
    yield from sorted(out, key=lambda t: t[1])


def rows_for(
    uuid: str,
    rel: str,
    doc: dict[str, Any],
    declared: str | None,
    read_as: str | None,
    filled: str | None,
    ledger: Ledger,
) -> list[dict[str, Any]]:
    _, benchmark, developer, model, _ = rel.split("/")
    info, source, library = _d(doc.get("model_info")), _d(doc.get("source_metadata")), _d(doc.get("eval_library"))
    state = ledger.state(uuid)
    reason = None
    if state.retraction is not None:
        reason = state.retraction.get("reason")
    elif state.supersession is not None:
        reason = state.supersession.get("reason")
    base = {
        "record_uuid": uuid,
        "record_path": rel,
        "benchmark": benchmark,
        "developer": developer,
        "model": model,
        "model_id": _s(info.get("id")),
        "model_name": _s(info.get("name")),
        "schema_version": declared,
        "read_as": read_as,
        "migration_filled": filled,
        "evaluation_id": _s(doc.get("evaluation_id")),
        "source_type": _s(source.get("source_type")),
        "source_name": _s(source.get("source_name")),
        "source_organization": _s(source.get("source_organization_name")),
        "evaluator_relationship": _s(source.get("evaluator_relationship")),
        "eval_library": _s(library.get("name")),
        "eval_library_version": _s(library.get("version")),
        "inference_platform": _s(info.get("inference_platform")),
        "evaluation_timestamp": _s(doc.get("evaluation_timestamp")),
        "retrieved_timestamp": _s(doc.get("retrieved_timestamp")),
        "has_samples": isinstance(doc.get("detailed_evaluation_results"), dict),
        "status": state.status,
        "status_reason": reason,
        "superseded_by": state.superseded_by,
        "preceded_by": state.preceded_by,
        "dispute_reference": state.dispute.get("reference") if state.dispute else None,
    }
    rows = []
    for result in doc.get("evaluation_results") or []:
        if not isinstance(result, dict):
            continue
        data, config, details = (
            _d(result.get("source_data")),
            _d(result.get("metric_config")),
            _d(result.get("score_details")),
        )
        uncertainty = _d(details.get("uncertainty"))
        ci = _d(uncertainty.get("confidence_interval"))
        rows.append(
            {
                **base,
                "evaluation_result_id": _s(result.get("evaluation_result_id")),
                "evaluation_name": _s(result.get("evaluation_name")),
                "dataset_name": _s(data.get("dataset_name")),
                "source_data_type": _s(data.get("source_type")),
                "metric_id": _s(config.get("metric_id")),
                "metric_name": _s(config.get("metric_name")),
                "metric_kind": _s(config.get("metric_kind")),
                "metric_unit": _s(config.get("metric_unit")),
                "lower_is_better": config.get("lower_is_better")
                if isinstance(config.get("lower_is_better"), bool)
                else None,
                "score_type": _s(config.get("score_type")),
                "min_score": _f(config.get("min_score")),
                "max_score": _f(config.get("max_score")),
                "score": _f(details.get("score")),
                "standard_error": _f(_d(uncertainty.get("standard_error")).get("value")),
                "ci_lower": _f(ci.get("lower")),
                "ci_upper": _f(ci.get("upper")),
                "num_samples": _i(uncertainty.get("num_samples")),
            }
        )
    return rows


Loader = Callable[[Path], tuple[dict[str, Any], str | None, str | None, str | None]]


def _filled(doc: dict[str, Any]) -> str | None:
    """What the migration filled, as the migrated copy records it (see :mod:`eee.migrate.provenance`)."""
    from eee.migrate.provenance import FILLED

    return _s(_d(_d(doc.get("source_metadata")).get("additional_details")).get(FILLED))


def default_loader() -> Loader:
    """Read a record as the current version (migrating in memory where a migration exists)."""
    from eee.migrate.chain import migrate_record
    from eee.schemas import default_registry
    from eee.strictjson import loads

    registry = default_registry()
    current = registry.current

    def load(path: Path) -> tuple[dict[str, Any], str | None, str | None, str | None]:
        raw = loads(path.read_bytes())
        declared = raw.get("schema_version") if isinstance(raw, dict) else None
        if declared == current or not isinstance(raw, dict):
            return raw, declared, declared, None
        try:
            doc = migrate_record(raw, current, registry, str(path)).doc
        except Exception:
            return raw, declared, declared, None
        return doc, declared, current, _filled(doc)

    return load


def build(root: Path, loader: Loader | None = None, ledger: Ledger | None = None) -> tuple[Any, list[str]]:
    """The catalogue table of the store at ``root``, and the records that could not be read.

    ``ledger``: the store's folded events, when the caller has already read them.
    """
    import pyarrow as pa

    from eee.governance.status import read_ledger
    from eee.strictjson import JSONProblem

    loader = loader or default_loader()
    ledger = ledger if ledger is not None else read_ledger(root)
    columns: dict[str, list[Any]] = {name: [] for name in COLUMN_NAMES}
    skipped: list[str] = []
    for uuid, rel in record_paths(root):
        try:
            doc, declared, read_as, filled = loader(root / rel)
        except (OSError, JSONProblem, ValueError) as exc:
            skipped.append(f"{rel}: {exc}")
            continue
        if not isinstance(doc, dict):
            skipped.append(f"{rel}: not a JSON object")
            continue
        for row in rows_for(uuid, rel, doc, declared, read_as, filled, ledger):
            for name in COLUMN_NAMES:
                columns[name].append(row.get(name))
    types = {"string": pa.string(), "bool": pa.bool_(), "float64": pa.float64(), "int64": pa.int64()}
    schema = pa.schema([pa.field(name, types[kind], metadata={"description": desc}) for name, kind, desc in COLUMNS])
    return pa.table(columns, schema=schema), skipped


def write(table: Any, out: Path) -> None:
    import pyarrow.parquet as pq

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, out)
