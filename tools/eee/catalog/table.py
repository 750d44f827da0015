"""The catalogue: one typed Parquet dataset of every evaluation result in the store.

One row per result (``evaluation_results[i]`` of every record), with the record's
identity, provenance, metric and score, and its governance status from the one status
fold. Records are read as the current schema version where a migration exists, so the
columns mean the same thing for every row. Timestamps are UTC timestamps (the record's
own string kept beside them); ``score_normalised`` puts every score with known bounds and
direction on [0, 1], higher is better.

Every row has its protocol (``protocol_id``, a hash of the fields that make two results
comparable, and the fields themselves, ``protocol_<field>``: :mod:`eee.store.protocol`) and
an uncertainty with its source (``se``, ``ci_low``, ``ci_high``, ``ci_level``,
``uncertainty_source``: record, items, count or none; :mod:`eee.catalog.uncertainty`).

The dataset is partitioned by benchmark in the hive layout,
``build/catalog/benchmark=<benchmark>/part-0.parquet`` (the value percent-encoded), written
record by record in row groups, so memory stays flat in the number of records. Beside it,
``build/catalog/items/`` holds the items table (:mod:`eee.catalog.items`), written in the
same pass: each record's sidecar is read once, for its items and for the uncertainty of its
results. DuckDB, polars, pandas (pyarrow), Spark and Trino read each folder as one table::

    SELECT benchmark, model_id, metric_id, score_normalised, ci_low, ci_high, uncertainty_source
    FROM read_parquet('build/catalog/benchmark=*/*.parquet', hive_partitioning = true,
                      hive_types = {'benchmark': 'VARCHAR'})
    WHERE lifecycle = 'active';

:func:`read_catalog` reads it back as one pyarrow table.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import urllib.parse
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from eee.catalog import items as item_table
from eee.catalog import uncertainty
from eee.governance.relations import derived_from
from eee.governance.status import FIELDS as GOVERNANCE_FIELDS
from eee.governance.status import Ledger
from eee.rules.record import as_float as _f
from eee.store import identity, protocol
from eee.store.fsutil import replace_file, replace_folder
from eee.store.identity import Registry as Names
from eee.store.paths import RECORD_SUFFIX, SIDECAR_SUFFIX

CATALOG_DIR = "build/catalog"  # where the pipeline writes it (dvc.yaml): one folder, hive-partitioned
CATALOG_FILE = CATALOG_DIR  # the old name, kept for readers that import it (it is a folder now)
PARTITION = item_table.PARTITION  # the partition column: in the folder names, not inside the files
PART_FILE = "part-0.parquet"
ROW_GROUP_ROWS = 50_000  # rows buffered before a row group is written

# (column, arrow type, description): the table's contract; docs are generated from it
COLUMNS: list[tuple[str, str, str]] = [
    ("record_uuid", "string", "uuid of the record (its file name)"),
    ("record_path", "string", "repository path of the record"),
    ("benchmark", "string", "benchmark folder"),
    ("benchmark_canonical", "string", "the benchmark's canonical id (the identity registry's for the folder)"),
    ("developer", "string", "developer folder (from model_info.id)"),
    (
        "developer_canonical",
        "string",
        "the developer's canonical id (the identity registry's for the developer part of model_info.id)",
    ),
    ("model", "string", "model folder (from model_info.id)"),
    ("model_id", "string", "model_info.id"),
    (
        "model_id_canonical",
        "string",
        "the model's canonical id (the identity registry's, else model_info.id with its developer canonical)",
    ),
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
    ("metric_id_canonical", "string", "the metric's canonical id (the identity registry's for metric_id)"),
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
    (
        "score_normalised",
        "float64",
        "the score on [0, 1], higher is better: (score - min) / (max - min), flipped when lower_is_better; "
        "null unless both bounds are finite and the direction is given (never guessed)",
    ),
    ("evaluation_timestamp", "timestamp", "when the evaluation ran, UTC (the result's own time, else the record's)"),
    ("evaluation_timestamp_raw", "string", "the evaluation time as the record gives it"),
    ("retrieved_timestamp", "timestamp", "when the record was made, UTC"),
    ("retrieved_timestamp_raw", "string", "the record time as the record gives it"),
    ("has_samples", "bool", "whether the record declares a per-sample sidecar"),
    (
        "protocol_id",
        "string",
        "the result's protocol: a hash of the fields that make two results comparable (eee.store.protocol)",
    ),
    *[(f"{protocol.COLUMN_PREFIX}{f.name}", "string", f"protocol field {f.name}: {f.reason}") for f in protocol.FIELDS],
    # se, ci_low, ci_high, ci_level, uncertainty_source, ...: eee.catalog.uncertainty.COLUMNS
    *uncertainty.COLUMNS,
    # the governance columns (status, flags, duplicates, relations): eee.governance.status.FIELDS
    *GOVERNANCE_FIELDS,
]
COLUMN_NAMES = [c[0] for c in COLUMNS]


# What takes a record out of the statistics, the comparison and the IRT fit by default:
# its lifecycle (the ledger's state machine, eee.governance.lifecycle): withdrawn
# (retracted, superseded) or a repeat of another record (a duplicate). Disputed and flagged
# records still stand (their status column says so): "active" is one meaning everywhere.
WITHDRAWN = ("retracted", "superseded")
LEFT_OUT = (*WITHDRAWN, "duplicate")


def read_names(root: Path) -> Names:
    """The identity registry of the store at ``root`` (its work tree): the canonical ids the
    catalogue's ``*_canonical`` columns give."""
    from eee.store.tree import WorkTree

    return identity.read(WorkTree(str(root)))


def exclusion(state: Any) -> str | None:
    """Why a record with this ledger state is left out of the default statistics
    (``retracted``, ``superseded``, ``duplicate``: its lifecycle), or None when it counts."""
    lifecycle = getattr(state, "lifecycle", "active")
    return None if lifecycle == "active" else str(lifecycle)


def is_active(state: Any) -> bool:
    """Whether a record with this ledger state counts in the default statistics."""
    return exclusion(state) is None


def check_replaceable(out: Path, ours: Callable[[str], bool], what: str) -> None:
    """Refuse to replace ``out`` unless it is absent or a folder of ours (every entry named
    as ``ours`` says): an output folder is replaced whole, so a mistyped ``--out`` must never
    take a folder of something else with it."""
    from eee.reporting.findings import Finding, Refused

    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise Refused(
            Finding(str(out), "$", f"{out} exists and is not a folder; {what} is written as a folder", check="output")
        )
    strange = sorted(name for name in os.listdir(out) if not ours(name))
    if strange:
        raise Refused(
            Finding(
                str(out),
                "$",
                f"{out} holds {', '.join(strange[:3])}{', ...' if len(strange) > 3 else ''}: not {what}, left alone",
                hint="give --out a new folder or one this command wrote (it is replaced whole)",
                check="output",
            )
        )


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it (never half-written)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text)
        replace_file(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) else (None if value is None else str(value))


def _i(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _sorted_names(folder: Path, dirs: bool) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return sorted(
                e.name for e in it if (e.is_dir(follow_symlinks=False) if dirs else e.is_file(follow_symlinks=False))
            )
    except OSError:
        return []


def record_paths(root: Path) -> Iterator[tuple[str, str]]:
    """(uuid, repository path) of every record under ``root/data``, benchmark by benchmark
    (folders in sorted order). A generator that lists one folder at a time: memory does not
    grow with the number of records."""
    data = root / "data"
    for benchmark in _sorted_names(data, dirs=True):
        for developer in _sorted_names(data / benchmark, dirs=True):
            for model in _sorted_names(data / benchmark / developer, dirs=True):
                for name in _sorted_names(data / benchmark / developer / model, dirs=False):
                    if name.endswith(RECORD_SUFFIX):
                        yield name[: -len(RECORD_SUFFIX)], f"data/{benchmark}/{developer}/{model}/{name}"


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def parse_timestamp(value: Any) -> _dt.datetime | None:
    """A record's timestamp as an aware UTC datetime, or None when it cannot be read.

    Accepted: epoch seconds as a number or as a string of an int or float (``"1768964383"``,
    ``"1742533660.0"``) and ISO 8601 (``2026-05-01T12:00:00Z``, with an offset, or a date);
    an ISO time without an offset is taken as UTC, which the schema prescribes. Anything
    else, and times outside years 1-9999, give None (the original string stays beside it).
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        seconds: float | None = float(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            seconds = float(text) if text and text.lstrip("+-").replace(".", "", 1).isdigit() else None
        except ValueError:
            seconds = None
        if seconds is None:
            iso = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
            try:
                parsed = _dt.datetime.fromisoformat(iso)
            except ValueError:
                return None
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=_dt.UTC)
            return parsed.astimezone(_dt.UTC)
    else:
        return None
    if seconds is None or seconds != seconds or seconds in (float("inf"), float("-inf")):
        return None
    try:
        return _EPOCH + _dt.timedelta(seconds=seconds)
    except OverflowError:
        return None


def normalised_score(
    score: float | None, lo: float | None, hi: float | None, lower_is_better: bool | None
) -> float | None:
    """``score`` on [0, 1] with higher better, or None where that would be a guess: a bound
    missing or unbounded, an empty range, no declared direction, or a score outside its bounds."""
    if score is None or lo is None or hi is None or not isinstance(lower_is_better, bool):
        return None
    if not (abs(lo) < float("inf") and abs(hi) < float("inf")) or hi <= lo:
        return None
    if not lo <= score <= hi:
        return None
    norm = (score - lo) / (hi - lo)
    return 1.0 - norm if lower_is_better else norm


def rows_for(
    uuid: str,
    rel: str,
    doc: dict[str, Any],
    declared: str | None,
    read_as: str | None,
    filled: str | None,
    ledger: Ledger,
    names: Names | None = None,
    items: dict[int, Any] | None = None,
) -> list[dict[str, Any]]:
    """The catalogue rows of one record (``items``: what its sidecar's rows gave per result
    index, :func:`eee.catalog.items.scan`)."""
    _, benchmark, developer, model, _ = rel.split("/")
    info, source, library = _d(doc.get("model_info")), _d(doc.get("source_metadata")), _d(doc.get("eval_library"))
    names = names if names is not None else identity.EMPTY
    model_id = _s(info.get("id"))
    said_developer = model_id.split("/", 1)[0] if model_id and "/" in model_id else developer
    base = {
        "record_uuid": uuid,
        "record_path": rel,
        "benchmark": benchmark,
        "benchmark_canonical": names.canonical(identity.BENCHMARK, benchmark),
        "developer": developer,
        "developer_canonical": names.canonical(identity.DEVELOPER, said_developer),
        "model": model,
        "model_id": model_id,
        "model_id_canonical": names.canonical_model(model_id),
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
        "evaluation_timestamp_raw": _s(doc.get("evaluation_timestamp")),
        "retrieved_timestamp": parse_timestamp(doc.get("retrieved_timestamp")),
        "retrieved_timestamp_raw": _s(doc.get("retrieved_timestamp")),
        "has_samples": isinstance(doc.get("detailed_evaluation_results"), dict),
        # status, status_reason, superseded_by, ..., duplicate_of, relations: the one fold
        **ledger.record_fields(uuid, derived_from(doc)),
    }
    rows = []
    for i, result in enumerate(doc.get("evaluation_results") or []):
        if not isinstance(result, dict):
            continue
        fields = protocol.fields_of(doc, result, benchmark, names)
        data, config, details = (
            _d(result.get("source_data")),
            _d(result.get("metric_config")),
            _d(result.get("score_details")),
        )
        given = _d(details.get("uncertainty"))
        ci = _d(given.get("confidence_interval"))
        lower_is_better = config.get("lower_is_better") if isinstance(config.get("lower_is_better"), bool) else None
        lo, hi, score = _f(config.get("min_score")), _f(config.get("max_score")), _f(details.get("score"))
        when = result.get("evaluation_timestamp")
        when_raw = _s(when) if when is not None else base["evaluation_timestamp_raw"]
        rows.append(
            {
                **base,
                "evaluation_result_id": _s(result.get("evaluation_result_id")),
                "evaluation_name": _s(result.get("evaluation_name")),
                "dataset_name": _s(data.get("dataset_name")),
                "source_data_type": _s(data.get("source_type")),
                "metric_id": _s(config.get("metric_id")),
                "metric_id_canonical": names.canonical(identity.METRIC, _s(config.get("metric_id"))),
                "metric_name": _s(config.get("metric_name")),
                "metric_kind": _s(config.get("metric_kind")),
                "metric_unit": _s(config.get("metric_unit")),
                "lower_is_better": lower_is_better,
                "score_type": _s(config.get("score_type")),
                "min_score": lo,
                "max_score": hi,
                "score": score,
                "score_normalised": normalised_score(score, lo, hi, lower_is_better),
                "evaluation_timestamp": parse_timestamp(when_raw),
                "evaluation_timestamp_raw": when_raw,
                "standard_error": _f(_d(given.get("standard_error")).get("value")),
                "ci_lower": _f(ci.get("lower")),
                "ci_upper": _f(ci.get("upper")),
                "num_samples": _i(given.get("num_samples")),
                "protocol_id": protocol.protocol_id(fields),
                **protocol.readable(fields),
                **uncertainty.choose(score, result, (items or {}).get(i)),
            }
        )
    return rows


def protocol_ids(doc: dict[str, Any], benchmark: str, names: Names | None = None) -> list[str | None]:
    """The protocol id of each of a record's results (None for a result that is not an object)."""
    names = names if names is not None else identity.EMPTY
    return [
        protocol.protocol_id(protocol.fields_of(doc, r, benchmark, names)) if isinstance(r, dict) else None
        for r in doc.get("evaluation_results") or []
    ]


Loader = Callable[[Path], tuple[dict[str, Any], str | None, str | None, str | None]]


def _filled(doc: dict[str, Any]) -> str | None:
    """What the migration filled, as the migrated copy records it (see :mod:`eee.migrate.provenance`)."""
    from eee.migrate.provenance import FILLED

    return _s(_d(_d(doc.get("source_metadata")).get("additional_details")).get(FILLED))


def default_loader() -> Loader:
    """Read a record as the current version (migrating in memory where a migration exists)."""
    from eee.migrate.chain import migrate_record
    from eee.store.limits import RECORD_MAX_BYTES, read_regular
    from eee.store.schemas import default_registry
    from eee.store.strictjson import loads

    registry = default_registry()
    current = registry.current

    def load(path: Path) -> tuple[dict[str, Any], str | None, str | None, str | None]:
        raw = loads(read_regular(path, RECORD_MAX_BYTES, "record"))
        declared = raw.get("schema_version") if isinstance(raw, dict) else None
        if declared == current or not isinstance(raw, dict):
            return raw, declared, declared, None
        try:
            doc = migrate_record(raw, current, registry, str(path)).doc
        except Exception:
            return raw, declared, declared, None
        return doc, declared, current, _filled(doc)

    return load


def _arrow_schema(with_partition: bool) -> Any:
    return item_table.arrow_schema(c for c in COLUMNS if with_partition or c[0] != PARTITION)


class ItemsSink:
    """Where :func:`iter_rows` sends the items-table rows of active records (a
    :class:`eee.catalog.items.Writer` once the writer of the catalogue has opened one) and
    the records whose sidecar could not be read (``path: why``)."""

    def __init__(self) -> None:
        self.writer: item_table.Writer | None = None


def record_items(
    root: Path,
    uuid: str,
    rel: str,
    doc: dict[str, Any],
    names: Names,
    emit: Any = None,
    skipped: list[str] | None = None,
) -> dict[int, Any] | None:
    """What the record's sidecar in the work tree gives per result (None: no sidecar there,
    or one that cannot be read, said in ``skipped``); its rows to ``emit`` when given."""
    sidecar = root / rel[: -len(RECORD_SUFFIX)]
    sidecar = sidecar.with_name(sidecar.name + SIDECAR_SUFFIX)
    if not sidecar.is_file() or sidecar.is_symlink():
        return None
    benchmark = rel.split("/")[1]
    info = _d(doc.get("model_info"))
    model = names.canonical_model(_s(info.get("id")))
    try:
        return item_table.scan(sidecar, doc, uuid, model, protocol_ids(doc, benchmark, names), emit)
    except item_table.SidecarUnreadable as exc:
        if skipped is not None:
            skipped.append(f"{rel[: -len(RECORD_SUFFIX)]}{SIDECAR_SUFFIX}: {exc} (its items are left out)")
        return None


def iter_rows(
    root: Path,
    loader: Loader | None = None,
    ledger: Ledger | None = None,
    skipped: list[str] | None = None,
    paths: Iterable[tuple[str, str]] | None = None,
    items: ItemsSink | None = None,
) -> Iterator[dict[str, Any]]:
    """Every catalogue row of the store, record by record (benchmark folders in order), or
    of the records ``paths`` ((uuid, path) as :func:`record_paths` gives them). Each
    record's sidecar, where the work tree has it, is read once: for the uncertainty of its
    results and, when ``items`` has a writer and the record is active, for the items table.
    Records that cannot be read are appended to ``skipped`` (``path: why``)."""
    from eee.rules.ledger import read_ledger
    from eee.store.strictjson import JSONProblem

    loader = loader or default_loader()
    ledger = with_signers(root, ledger if ledger is not None else read_ledger(root))
    names = read_names(root)
    for uuid, rel in record_paths(root) if paths is None else paths:
        try:
            doc, declared, read_as, filled = loader(root / rel)
        except (OSError, JSONProblem, ValueError) as exc:
            if skipped is not None:
                skipped.append(f"{rel}: {exc}")
            continue
        if not isinstance(doc, dict):
            if skipped is not None:
                skipped.append(f"{rel}: not a JSON object")
            continue
        emit = None
        writer = items.writer if items is not None else None
        if writer is not None and is_active(ledger.state(uuid)):
            writer.start(rel.split("/")[1])
            emit = writer.add
        stats = record_items(root, uuid, rel, doc, names, emit, skipped)
        yield from rows_for(uuid, rel, doc, declared, read_as, filled, ledger, names, stats)


def _table(rows: list[dict[str, Any]], schema: Any) -> Any:
    import pyarrow as pa

    return pa.table({f.name: [r.get(f.name) for r in rows] for f in schema}, schema=schema)


def with_signers(root: Path, ledger: Ledger) -> Ledger:
    """``ledger`` knowing who signed each event's commit (the ``unverified_events`` column):
    one ``git log`` in a store whose history never had roles."""
    if ledger.signed is None:
        from eee.governance.signatures import commit_signers

        ledger.signed = commit_signers(root, ledger.commits()) if ledger.entered else {}
    return ledger


def build(root: Path, loader: Loader | None = None, ledger: Ledger | None = None) -> tuple[Any, list[str]]:
    """The whole catalogue as one in-memory pyarrow table (``benchmark`` a column), and the
    records that could not be read. For small stores and tests; the pipeline streams with
    :func:`write_catalog`.

    ``ledger``: the store's folded events, when the caller has already read them.
    """
    skipped: list[str] = []
    rows = list(iter_rows(root, loader, ledger, skipped))
    return _table(rows, _arrow_schema(with_partition=True)), skipped


partition_folder = item_table.partition_folder  # the hive folder of a benchmark


class Written:
    """What :func:`write_catalog` wrote."""

    def __init__(self) -> None:
        self.rows = 0
        self.records = 0  # a record's rows are consecutive: counted as the uuid changes
        self.benchmarks = 0
        self.skipped: list[str] = []
        self.rewritten: list[str] = []  # benchmarks whose partition was written (update_catalog)
        self.removed: list[str] = []  # benchmarks whose partition was removed (update_catalog)
        self.items = 0  # rows of the items table written


def write_rows(
    rows: Iterable[dict[str, Any]], out: Path, row_group_rows: int = ROW_GROUP_ROWS, items: ItemsSink | None = None
) -> Written:
    """Write catalogue rows (grouped by benchmark, as :func:`iter_rows` yields them) to the
    hive-partitioned folder ``out``: one Parquet file per benchmark, row groups of at most
    ``row_group_rows``; with ``items`` (the sink ``rows`` was made with), the items table in
    ``out/items/``. Written into a fresh folder beside ``out`` that replaces it at the
    end, so a reader never sees half a catalogue and a failure leaves the old one."""
    import pyarrow.parquet as pq

    schema = _arrow_schema(with_partition=False)
    out = Path(out)
    check_replaceable(out, _ours, "a catalogue")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    if items is not None:
        (tmp / item_table.ITEMS_DIR).mkdir()
        items.writer = item_table.Writer(tmp / item_table.ITEMS_DIR)
    done = Written()
    writer: Any = None
    current: str | None = None
    buffer: list[dict[str, Any]] = []
    last_record: str | None = None

    def flush() -> None:
        if buffer:
            writer.write_table(_table(buffer, schema), row_group_size=row_group_rows)
            buffer.clear()

    try:
        for row in rows:
            bench = row[PARTITION]
            if bench != current:
                if writer is not None:
                    flush()
                    writer.close()
                folder = tmp / partition_folder(bench)
                if folder.exists():
                    raise ValueError(f"rows of benchmark {bench!r} are not together")
                folder.mkdir()
                writer = pq.ParquetWriter(folder / PART_FILE, schema, compression="zstd")
                current = bench
                done.benchmarks += 1
            buffer.append(row)
            done.rows += 1
            if row["record_uuid"] != last_record:
                done.records += 1
                last_record = row["record_uuid"]
            if len(buffer) >= row_group_rows:
                flush()
        if writer is not None:
            flush()
            writer.close()
            writer = None
        if items is not None and items.writer is not None:
            items.writer.close()
            done.items = items.writer.rows
        replace_folder(tmp, out)
    finally:
        if writer is not None:
            writer.close()
        if items is not None and items.writer is not None:
            items.writer.abort()
            items.writer = None
        if tmp.exists():
            shutil.rmtree(tmp)
    return done


def _ours(name: str) -> bool:
    return name.startswith(f"{PARTITION}=") or name in (KEYS_FILE, item_table.ITEMS_DIR)


def write_catalog(
    root: Path,
    out: Path,
    loader: Loader | None = None,
    ledger: Ledger | None = None,
    row_group_rows: int = ROW_GROUP_ROWS,
) -> Written:
    """Stream the store's catalogue into the hive-partitioned folder ``out``, and its items
    table into ``out/items/``."""
    skipped: list[str] = []
    sink = ItemsSink()
    done = write_rows(iter_rows(root, loader, ledger, skipped, items=sink), out, row_group_rows, sink)
    done.skipped = skipped
    return done


# -- the pipeline's catalogue: only the partitions whose records changed are written ----------

KEYS_FILE = ".partitions.json"  # in the catalogue folder: benchmark -> what its partition was built from
KEYS_FORMAT = "eee-catalog-partitions/1"


def code_version() -> str:
    """A digest of the code and schemas the rows are made by (:func:`eee.store.manifest.code_digest`):
    a partition built by other code is rebuilt."""
    from eee.store.manifest import code_digest

    return code_digest(KEYS_FORMAT)


def partition_keys(manifest: dict[str, Any], ledger: Ledger, code: str) -> dict[str, str]:
    """benchmark -> the digest of what its partition is built from: every record's path and
    sha256 (from the store manifest), every record's governance columns from the ledger, the
    sidecars present in the work tree (their items and the uncertainty they give), and
    ``code``. Equal keys, equal partition."""
    import hashlib

    per: dict[str, list[Any]] = defaultdict(list)
    for rel, digest in (manifest.get("files") or {}).items():
        parts = rel.split("/")
        if len(parts) == 5 and parts[0] == "data" and parts[4].endswith(RECORD_SUFFIX):
            uuid = parts[4][: -len(RECORD_SUFFIX)]
            per[parts[1]].append([rel, digest, ledger.record_fields(uuid)])
    for rel, digest in (manifest.get("sidecars_present") or {}).items():
        parts = rel.split("/")
        if len(parts) == 5 and parts[0] == "data" and parts[1] in per:
            per[parts[1]].append([rel, digest, {}])
    return {
        bench: hashlib.sha256(json.dumps([code, sorted(items)], sort_keys=True, default=str).encode()).hexdigest()
        for bench, items in per.items()
    }


def _read_keys(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((out / KEYS_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != KEYS_FORMAT or not isinstance(data.get("partitions"), dict):
        return {}
    return dict(data["partitions"])


def update_catalog(
    root: Path,
    out: Path,
    manifest: dict[str, Any],
    loader: Loader | None = None,
    ledger: Ledger | None = None,
    row_group_rows: int = ROW_GROUP_ROWS,
) -> Written:
    """The catalogue of the store in ``out``, writing only the partitions whose key
    (:func:`partition_keys`, from the store ``manifest``) changed since the last run, and
    removing those of benchmarks that are gone. Each partition is written beside its folder
    and renamed over it; the keys (with each partition's counts and skipped records) are
    written last, so an interrupted run rewrites what it had not finished. The result is the
    same folder :func:`write_catalog` writes, plus the keys file (which readers ignore: its
    name starts with a dot)."""
    from eee.rules.ledger import read_ledger

    out = Path(out)
    check_replaceable(out, _ours, "a catalogue")
    ledger = with_signers(root, ledger if ledger is not None else read_ledger(root))
    # the canonical columns follow the identity registry: a change of it rewrites every partition
    keys = partition_keys(manifest, ledger, code_version() + read_names(root).digest)
    old = _read_keys(out)
    out.mkdir(parents=True, exist_ok=True)
    items_out = out / item_table.ITEMS_DIR
    items_out.mkdir(exist_ok=True)
    done = Written()
    fresh: dict[str, Any] = {}
    by_bench: dict[str, list[tuple[str, str]]] = defaultdict(list)
    stale = {b for b, key in keys.items() if (old.get(b) or {}).get("key") != key}
    stale |= {
        b for b in keys if (old.get(b) or {}).get("rows") and not (out / partition_folder(b) / PART_FILE).is_file()
    }
    stale |= {
        b
        for b in keys
        if (old.get(b) or {}).get("items")
        and not (items_out / item_table.partition_folder(b) / item_table.PART_FILE).is_file()
    }
    if stale:
        for uuid, rel in record_paths(root):
            bench = rel.split("/", 2)[1]
            if bench in stale:
                by_bench[bench].append((uuid, rel))
    for bench in sorted(keys):
        if bench not in stale:
            fresh[bench] = old[bench]
            continue
        skipped: list[str] = []
        tmp = out / f".{partition_folder(bench)}.tmp-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        sink = ItemsSink()
        part = write_rows(
            iter_rows(root, loader, ledger, skipped, by_bench.get(bench, []), items=sink), tmp, row_group_rows, sink
        )
        for written, folder in (
            (tmp / partition_folder(bench), out / partition_folder(bench)),
            (
                tmp / item_table.ITEMS_DIR / item_table.partition_folder(bench),
                items_out / item_table.partition_folder(bench),
            ),
        ):
            if written.exists():
                replace_folder(written, folder)
            else:
                shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
        fresh[bench] = {
            "key": keys[bench],
            "rows": part.rows,
            "records": part.records,
            "items": part.items,
            "skipped": skipped,
        }
        done.rewritten.append(bench)
    for bench in sorted(set(old) - set(keys)):
        shutil.rmtree(out / partition_folder(bench), ignore_errors=True)
        shutil.rmtree(items_out / item_table.partition_folder(bench), ignore_errors=True)
        done.removed.append(bench)
    for folder in (out, items_out):  # partitions no key names (written by write_catalog, or left half-done)
        for name in os.listdir(folder):
            if name.startswith(f"{PARTITION}=") and urllib.parse.unquote(name.split("=", 1)[1]) not in keys:
                shutil.rmtree(folder / name, ignore_errors=True)
    for bench in sorted(fresh):
        entry = fresh[bench]
        done.rows += int(entry.get("rows", 0))
        done.items += int(entry.get("items", 0))
        done.records += int(entry.get("records", 0))
        done.benchmarks += 1 if entry.get("rows") else 0
        done.skipped.extend(entry.get("skipped") or [])
    text = json.dumps({"format": KEYS_FORMAT, "partitions": fresh}, indent=1) + "\n"
    if not (out / KEYS_FILE).is_file() or (out / KEYS_FILE).read_text() != text:
        atomic_write_text(out / KEYS_FILE, text)
    return done


def read_catalog(path: Path | str = CATALOG_DIR, columns: list[str] | None = None, filter: Any = None) -> Any:
    """The catalogue folder at ``path`` as one pyarrow table, ``benchmark`` a string column
    (``columns``: a subset; ``filter``: a pyarrow dataset expression)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    part = ds.partitioning(pa.schema([pa.field(PARTITION, pa.string())]), flavor="hive")
    dataset = ds.dataset(
        str(path),
        format="parquet",
        partitioning=part,
        schema=_arrow_schema(with_partition=True),
        ignore_prefixes=[".", "_", item_table.ITEMS_DIR],  # the items table beside it is another table
    )
    return dataset.to_table(columns=columns, filter=filter)


def catalog_present(path: Path) -> bool:
    """Whether ``path`` holds a written catalogue (at least the folder; an empty store has no parts)."""
    return path.is_dir()
