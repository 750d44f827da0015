"""The items table: every sidecar row of every active record, one typed Parquet table.

``build/catalog/items/benchmark=<benchmark>/part-0.parquet`` (hive layout, the value
percent-encoded), written by the catalogue's stage beside the results table
(:mod:`eee.catalog.table`), in the same pass: each record's sidecar is read once, as a
stream, and gives both its rows here and the per-result estimates the catalogue's
uncertainty columns need (:func:`scan`). Rows are buffered up to a row group and written,
so memory follows the row group and the largest record, never the store.

A row says which record, model and protocol it belongs to, which item (the sample id, else
the sample hash; the index of a repeated sample), how it scored, its error class
(:func:`eee.store.items.error_class`), its cluster (the record's declared cluster key), and
its tokens, latency and cost. Rows of records that are retracted, superseded or duplicates
are left out (they do not count, as everywhere). DuckDB reads it as one table::

    SELECT protocol_id, model_id_canonical, avg(score) AS mean, count(*) AS rows
    FROM read_parquet('build/catalog/items/*/*.parquet', hive_partitioning = true,
                      hive_types = {'benchmark': 'VARCHAR'})
    GROUP BY ALL;
"""

from __future__ import annotations

import os
import shutil
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eee.stats.intervals import Estimate, from_items, item_means
from eee.store import items as item_rules
from eee.store.aggregation import Items, Tally
from eee.store.limits import Unreadable, iter_lines

ITEMS_DIR = "items"  # under the catalogue folder
PARTITION = "benchmark"
PART_FILE = "part-0.parquet"
ROW_GROUP_ROWS = 50_000

COLUMNS: list[tuple[str, str, str]] = [
    ("record_uuid", "string", "the record (its uuid: joins the catalogue's record_uuid)"),
    ("model_id_canonical", "string", "the model's canonical id (the identity registry's)"),
    (
        "protocol_id",
        "string",
        "the protocol of the result the row belongs to (eee.store.protocol; joins the catalogue)",
    ),
    (
        "evaluation_result_id",
        "string",
        "the result the row belongs to (its evaluation_result_id, else evaluation_name)",
    ),
    ("item_id", "string", "the item: the row's sample_id, else its sample_hash"),
    ("sample_index", "int32", "0 for an item's first row in its result, 1, 2, ... for repeated samples (epochs)"),
    ("score", "float64", "evaluation.score"),
    ("is_correct", "bool", "evaluation.is_correct"),
    ("error_class", "string", "infrastructure, content or format (eee.store.items.error_class); null: no error"),
    ("cluster", "string", "the item's cluster: its metadata value under the record's declared cluster key"),
    ("input_tokens", "int64", "token_usage.input_tokens"),
    ("output_tokens", "int64", "token_usage.output_tokens"),
    ("total_tokens", "int64", "token_usage.total_tokens"),
    ("latency_ms", "float64", "performance.latency_ms"),
    ("cost_usd", "float64", "metadata.cost_usd: what the model's answer cost"),
    ("judge_cost_usd", "float64", "metadata.judge_cost_usd: what the judge's verdict cost"),
    ("judge_latency_ms", "float64", "metadata.judge_latency_ms: how long the judge took"),
]
COLUMN_NAMES = [c[0] for c in COLUMNS]
assert COLUMN_NAMES[-len(item_rules.USAGE_KEYS) :] == list(item_rules.USAGE_KEYS)  # the rows' tuples end with them


@dataclass
class ResultItems:
    """What one result's rows gave: their per-item estimate (repeated samples averaged,
    clustered when the record declares clusters), rows read, and rows by error class."""

    rows: int = 0
    estimate: Estimate | None = None
    errors: dict[str, int] = field(default_factory=dict)
    items: Items | None = None  # what eee.store.aggregation.check compares with the stated score


class SidecarUnreadable(Exception):
    """A sidecar that cannot be read to its end (its line and why)."""


def scan(
    sidecar: Path,
    doc: dict[str, Any],
    uuid: str,
    model: str | None,
    protocols: list[str | None],
    emit: Callable[[tuple[Any, ...]], None] | None = None,
) -> dict[int, ResultItems]:
    """Read a record's sidecar once: each row given to ``emit`` as an items-table row (a
    tuple in :data:`COLUMN_NAMES` order, when ``emit`` is given), and per result index the
    :class:`ResultItems` of its rows.
    ``protocols``: the protocol id of each of the record's results. Raises
    :class:`SidecarUnreadable` (the caller skips the record's items and says so)."""
    import orjson

    lookup, only = item_rules.result_lookup(doc)
    tally = Tally(doc)
    cluster_key = item_rules.cluster_key_of(doc)
    seen: dict[tuple[str, str], int] = {}
    acc: dict[int, tuple[list[str], list[float], list[str | None], dict[str, int]]] = {}
    n = 0
    try:
        for line in iter_lines(sidecar):
            n += 1
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise SidecarUnreadable(f"line {n}: not JSON ({exc})") from None
            if not isinstance(row, dict):
                raise SidecarUnreadable(f"line {n}: not a JSON object")
            key = item_rules.result_key(row)
            item = item_rules.item_id(row)
            if item is None:
                raise SidecarUnreadable(f"line {n}: no sample_id or sample_hash")
            at = lookup.get(key, only)
            tally.add(row)
            ev = row.get("evaluation") if isinstance(row.get("evaluation"), dict) else {}
            score = ev.get("score")
            score = float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
            correct = ev.get("is_correct") if isinstance(ev.get("is_correct"), bool) else None
            error = item_rules.error_class(row)
            cluster = item_rules.cluster_of(row, cluster_key)
            index = seen.get((key, item), 0)
            seen[(key, item)] = index + 1
            if at is not None:
                ids, scores, clusters, errors = acc.setdefault(at, ([], [], [], {}))
                if score is not None:
                    ids.append(item)
                    scores.append(score)
                    clusters.append(cluster)
                if error:
                    errors[error] = errors.get(error, 0) + 1
            if emit is not None:  # a row of the table, in COLUMN_NAMES order
                emit(
                    (
                        uuid,
                        model,
                        protocols[at] if at is not None and at < len(protocols) else None,
                        key or None,
                        item,
                        index,
                        score,
                        correct,
                        error,
                        cluster,
                        *item_rules.usage_values(row),
                    )
                )
    except Unreadable as exc:
        raise SidecarUnreadable(f"line {n + 1}: {exc.message}") from None
    out: dict[int, ResultItems] = {}
    for at, (ids, scores, clusters, errors) in acc.items():
        result = ResultItems(rows=len(ids), errors=errors, items=tally.items(at))
        if ids:
            keys, means, _counts = item_means(ids, scores)
            first: dict[str, str | None] = {}
            for i, c in zip(ids, clusters, strict=True):
                first.setdefault(i, c)
            item_clusters = [first[k] for k in keys.tolist()]
            declared = cluster_key is not None and all(c is not None for c in item_clusters)
            result.estimate = from_items(means, item_clusters if declared else None)
        out[at] = result
    return out


def arrow_schema(columns: Iterable[tuple[str, str, str]]) -> Any:
    """The pyarrow schema of ``columns`` (name, type, description), each description in its
    field's metadata: the one type map of the items table and the catalogue
    (:mod:`eee.catalog.table`)."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "bool": pa.bool_(),
        "float64": pa.float64(),
        "int64": pa.int64(),
        "int32": pa.int32(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    return pa.schema([pa.field(name, types[kind], metadata={"description": desc}) for name, kind, desc in columns])


def _arrow_schema(with_partition: bool) -> Any:
    return arrow_schema([*COLUMNS, *([(PARTITION, "string", "benchmark folder")] if with_partition else [])])


def partition_folder(benchmark: str) -> str:
    """The hive folder of a benchmark: ``benchmark=<value>``, percent-encoded as pyarrow,
    DuckDB and polars decode it (the catalogue's partitions and the items table's alike)."""
    return f"{PARTITION}={urllib.parse.quote(benchmark, safe='')}"


class Writer:
    """The items table written benchmark by benchmark into ``folder`` (a fresh folder the
    caller swaps in): rows buffered up to ``row_group_rows``, one Parquet file per benchmark."""

    def __init__(self, folder: Path, row_group_rows: int = ROW_GROUP_ROWS) -> None:
        self.folder = Path(folder)
        self.row_group_rows = row_group_rows
        self.schema = _arrow_schema(with_partition=False)
        self.writer: Any = None
        self.benchmark: str | None = None
        self.buffer: list[tuple[Any, ...]] = []
        self.rows = 0
        self.benchmarks: list[str] = []

    def start(self, benchmark: str) -> None:
        """Rows from now on are of ``benchmark`` (a benchmark's rows come together)."""
        if benchmark == self.benchmark:
            return
        self._close()
        self.benchmark = benchmark

    def add(self, row: tuple[Any, ...]) -> None:
        """One row, a tuple in :data:`COLUMN_NAMES` order."""
        self.buffer.append(row)
        if len(self.buffer) >= self.row_group_rows:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self.buffer:
            return
        if self.writer is None:
            assert self.benchmark is not None
            part = self.folder / partition_folder(self.benchmark)
            if part.exists():
                raise ValueError(f"items of benchmark {self.benchmark!r} are not together")
            part.mkdir(parents=True)
            self.writer = pq.ParquetWriter(part / PART_FILE, self.schema, compression="zstd")
            self.benchmarks.append(self.benchmark)
        columns = list(zip(*self.buffer, strict=True))  # transposed at C speed
        table = pa.table({f.name: list(col) for f, col in zip(self.schema, columns, strict=True)}, schema=self.schema)
        self.writer.write_table(table, row_group_size=self.row_group_rows)
        self.rows += len(self.buffer)
        self.buffer.clear()

    def _close(self) -> None:
        self._flush()
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def close(self) -> None:
        self._close()
        self.benchmark = None

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        self.buffer.clear()


def remove(folder: Path) -> None:
    if folder.exists() or folder.is_symlink():
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder)
        else:
            os.unlink(folder)


DICTIONARY_COLUMNS = (
    "record_uuid",
    "model_id_canonical",
    "protocol_id",
    "evaluation_result_id",
    "item_id",
    "error_class",
    "cluster",
)


def read_items(path: Path | str, columns: list[str] | None = None, filter: Any = None, dictionary: bool = False) -> Any:
    """The items table at ``path`` (``build/catalog/items``) as one pyarrow table,
    ``benchmark`` a string column (``filter``: a pyarrow dataset expression). With
    ``dictionary``, the repetitive string columns (:data:`DICTIONARY_COLUMNS`) are read
    dictionary-encoded: a few bytes a row instead of the string (10 million rows of record
    uuids take 40 MB, not 400)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    part = ds.partitioning(pa.schema([pa.field(PARTITION, pa.string())]), flavor="hive")
    schema = _arrow_schema(with_partition=True)
    fmt: Any = "parquet"
    if dictionary:
        encoded = pa.dictionary(pa.int32(), pa.string())
        schema = pa.schema([f.with_type(encoded) if f.name in DICTIONARY_COLUMNS else f for f in schema])
        fmt = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(dictionary_columns=list(DICTIONARY_COLUMNS)))
    dataset = ds.dataset(str(path), format=fmt, partitioning=part, schema=schema)
    return dataset.to_table(columns=columns, filter=filter)


def empty_table() -> Any:
    return _arrow_schema(with_partition=True).empty_table()
