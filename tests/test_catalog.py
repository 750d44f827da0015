"""The typed catalogue: timestamps, normalised scores, hive partitions read by DuckDB,
polars and pandas, streaming in row groups, and fill rates over active records."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import pytest

from analysis_store import place, record_doc, uuid_of
from eee.catalog.table import (
    CATALOG_DIR,
    COLUMN_NAMES,
    normalised_score,
    parse_timestamp,
    read_catalog,
    write_catalog,
    write_rows,
)

UTC = dt.UTC


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1742533660.0", dt.datetime(2025, 3, 21, 5, 7, 40, tzinfo=UTC)),
        ("1768964383", dt.datetime(2026, 1, 21, 2, 59, 43, tzinfo=UTC)),
        (1768964383, dt.datetime(2026, 1, 21, 2, 59, 43, tzinfo=UTC)),
        ("2026-05-01T12:00:00Z", dt.datetime(2026, 5, 1, 12, tzinfo=UTC)),
        ("2026-05-01T14:00:00+02:00", dt.datetime(2026, 5, 1, 12, tzinfo=UTC)),
        ("2026-05-01T12:00:00", dt.datetime(2026, 5, 1, 12, tzinfo=UTC)),  # no offset: UTC
        ("2026-05-01", dt.datetime(2026, 5, 1, tzinfo=UTC)),
        ("last tuesday", None),
        ("", None),
        ("1e400", None),
        ("99999999999999999", None),  # beyond year 9999
        (None, None),
        (True, None),
    ],
)
def test_timestamps_in_three_forms_become_utc(raw: object, expected: dt.datetime | None) -> None:
    assert parse_timestamp(raw) == expected


def test_normalised_score_only_where_bounds_and_direction_are_known() -> None:
    assert normalised_score(63.7, 0.0, 100.0, False) == pytest.approx(0.637)
    assert normalised_score(0.637, 0.0, 1.0, False) == pytest.approx(0.637)
    assert normalised_score(2.0, 0.0, 10.0, True) == pytest.approx(0.8)  # lower is better flips
    assert normalised_score(8.8, 1.0, float("inf"), True) is None  # unbounded: no guess
    assert normalised_score(0.5, None, 1.0, False) is None
    assert normalised_score(0.5, 0.0, 1.0, None) is None  # no direction: no guess
    assert normalised_score(63.7, 0.0, 1.0, False) is None  # outside its declared bounds
    assert normalised_score(1.0, 1.0, 1.0, False) is None  # empty range


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    place(store, uuid_of(1), "acme/widget-7b", "helm", [1, 0, 1, 1])
    place(store, uuid_of(2), "acme/widget-7b", "lm_eval", [1, 1, 0, 1])
    place(store, uuid_of(3), "zeta/gizmo-1b", "inspect_ai", None, benchmark="other bench=x")
    # one percentage-scale record, bounds [0, 100], with an ISO time
    doc = record_doc("acme/widget-7b", "helm", 63.7)
    doc["evaluation_results"][0]["metric_config"].update(min_score=0, max_score=100)
    doc["retrieved_timestamp"] = "2026-05-01T12:00:00Z"
    doc.pop("detailed_evaluation_results")
    folder = store / "data" / "mmlu" / "acme" / "widget-7b"
    folder.mkdir(parents=True)
    (folder / f"{uuid_of(4)}.json").write_text(json.dumps(doc))
    return store


def _retract(store: Path, uuid: str) -> None:
    from eee.governance.events import make_event, write

    write(store, make_event("retract", uuid, "wrong split", {"name": "M", "email": "m@example.org"}))


def test_catalogue_is_hive_partitioned_and_read_as_one_dataset(tmp_path: Path) -> None:
    import polars as pl

    store = _store(tmp_path)
    _retract(store, uuid_of(2))
    out = store / CATALOG_DIR
    done = write_catalog(store, out)
    assert (done.rows, done.records, done.benchmarks) == (4, 4, 3)
    parts = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
    assert parts == [
        "benchmark=mmlu/part-0.parquet",
        "benchmark=other%20bench%3Dx/part-0.parquet",
        "benchmark=qa-bench/part-0.parquet",
        "items/benchmark=qa-bench/part-0.parquet",  # the items table: the active record's sidecar only
    ]
    # DuckDB
    rows = duckdb.sql(
        f"SELECT benchmark, record_uuid, status, score_normalised, retrieved_timestamp, retrieved_timestamp_raw "
        f"FROM read_parquet('{out}/benchmark=*/*.parquet', hive_partitioning = true, hive_types = {{'benchmark': 'VARCHAR'}}) "
        "ORDER BY record_uuid"
    ).fetchall()
    assert [r[0] for r in rows] == ["qa-bench", "qa-bench", "other bench=x", "mmlu"]
    assert rows[1][2] == "retracted" and rows[0][2] == "active"
    assert rows[3][3] == pytest.approx(0.637)
    assert rows[3][4] == dt.datetime(2026, 5, 1, 12, tzinfo=UTC) and rows[3][5] == "2026-05-01T12:00:00Z"
    assert rows[0][4] == dt.datetime.fromtimestamp(1770000010, UTC)
    # polars
    frame = (
        pl.scan_parquet(f"{out}/benchmark=*/*.parquet", hive_partitioning=True, hive_schema={"benchmark": pl.String})
        .filter(pl.col("status") == "active")
        .collect()
    )
    assert sorted(frame["benchmark"].to_list()) == ["mmlu", "other bench=x", "qa-bench"]
    assert frame.schema["evaluation_timestamp"] == pl.Datetime("us", "UTC")
    assert set(COLUMN_NAMES) == set(frame.columns)
    # pandas, as docs/guide/catalogue.md shows
    import pandas as pd

    df = pd.read_parquet(out, ignore_prefixes=["items"])
    assert len(df) == 4 and set(df["benchmark"].astype(str)) == {"mmlu", "other bench=x", "qa-bench"}
    # the reader function
    table = read_catalog(out, columns=["benchmark", "record_uuid"])
    assert table.num_rows == 4 and str(table.schema.field("benchmark").type) == "string"


def test_rows_are_written_in_row_groups_and_the_old_catalogue_is_replaced(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "catalog"
    (out / "benchmark=stale").mkdir(parents=True)

    def rows():
        for i in range(25):
            yield {"record_uuid": uuid_of(i), "benchmark": "b" if i < 20 else "c", "score": float(i)}

    done = write_rows(rows(), out, row_group_rows=7)
    assert done.rows == 25 and done.benchmarks == 2
    assert not (out / "benchmark=stale").exists()
    meta = pq.ParquetFile(out / "benchmark=b" / "part-0.parquet").metadata
    assert meta.num_row_groups == 3 and meta.num_rows == 20
    assert not list(tmp_path.glob(".catalog.*"))  # no temporary folder left

    def broken():
        yield {"record_uuid": uuid_of(1), "benchmark": "b"}
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):  # the failure itself, passed on
        write_rows(broken(), out)
    assert (out / "benchmark=c").exists()  # a failure leaves the old catalogue whole
    assert not list(tmp_path.glob(".catalog.*"))


def test_catalog_command_and_empty_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.commands import catalog

    store = tmp_path / "empty"
    (store / "data").mkdir(parents=True)
    assert catalog.main(["--store", str(store)]) == 0
    assert read_catalog(store / CATALOG_DIR).num_rows == 0
    assert "0 results from 0 records" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        catalog.main(["--store", str(tmp_path / "nope")])
    assert exc.value.code == 64
    assert capsys.readouterr().err == f"eee catalog: error: --store {tmp_path / 'nope'}: no such folder\n"


def test_an_output_folder_of_something_else_is_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from eee.commands import analysis, catalog, stats

    store = _store(tmp_path)
    before = sorted(p.relative_to(store).as_posix() for p in store.rglob("*"))
    assert catalog.main(["--store", str(store), "--out", str(store / "data")]) == 1
    assert "not a catalogue, left alone" in capsys.readouterr().err
    assert analysis.main(["--store", str(store), "--out", str(store / "data")]) == 1
    assert "not the analysis output, left alone" in capsys.readouterr().err
    (store / "notes.txt").write_text("mine")
    assert catalog.main(["--store", str(store), "--out", str(store / "notes.txt")]) == 1
    assert "is not a folder" in capsys.readouterr().err
    assert stats.main(["--store", str(store), "--out", str(store / "data")]) == 1
    assert "cannot write" in capsys.readouterr().err
    assert sorted(p.relative_to(store).as_posix() for p in store.rglob("*") if p.name != "notes.txt") == before
    # a folder the command wrote is replaced
    assert catalog.main(["--store", str(store), "--out", str(tmp_path / "cat")]) == 0
    assert catalog.main(["--store", str(store), "--out", str(tmp_path / "cat")]) == 0


def test_fill_rates_count_active_records_unless_all(tmp_path: Path) -> None:
    from eee.catalog.stats import fill_rates

    store = _store(tmp_path)
    _retract(store, uuid_of(2))
    active = fill_rates(store)
    everything = fill_rates(store, include_all=True)
    assert active["records"] == 3 and active["left_out"] == {"retracted": 1}
    assert everything["records"] == 4 and everything["left_out"] == {}
    assert active["by_eval_library"]["helm"]["records"] == 2 and "lm_eval" not in active["by_eval_library"]
    assert everything["by_eval_library"]["lm_eval"]["records"] == 1


def test_stats_command_writes_and_takes_all(tmp_path: Path) -> None:
    from eee.commands import stats

    store = _store(tmp_path)
    _retract(store, uuid_of(2))
    out = tmp_path / "fill.json"
    assert stats.main(["--store", str(store), "--out", str(out), "--all"]) == 0
    assert json.loads(out.read_text())["records"] == 4


def _manifest(store: Path) -> dict:
    from eee.store.manifest import build

    return build(store)[0]


def _parts(out: Path) -> dict[str, tuple[int, bytes]]:
    return {
        p.relative_to(out).as_posix(): (p.stat().st_mtime_ns, p.read_bytes()) for p in out.rglob("*") if p.is_file()
    }


def test_the_pipeline_catalogue_rewrites_only_changed_partitions_and_equals_a_full_one(tmp_path: Path) -> None:
    from eee.catalog.table import KEYS_FILE, update_catalog

    store = _store(tmp_path)
    out = tmp_path / "cat"
    first = update_catalog(store, out, _manifest(store))
    assert sorted(first.rewritten) == ["mmlu", "other bench=x", "qa-bench"]
    before = _parts(out)
    again = update_catalog(store, out, _manifest(store))
    assert again.rewritten == [] and _parts(out) == before  # nothing changed: nothing written
    assert (again.rows, again.records, again.benchmarks) == (first.rows, first.records, first.benchmarks)
    place(store, uuid_of(5), "acme/widget-13b", "helm", None)  # one more record in qa-bench
    done = update_catalog(store, out, _manifest(store))
    assert done.rewritten == ["qa-bench"]
    after = _parts(out)
    changed = {rel for rel in after if before.get(rel) != after[rel]}
    # the benchmark's results and items partitions are written again, nothing else
    assert changed == {"benchmark=qa-bench/part-0.parquet", "items/benchmark=qa-bench/part-0.parquet", KEYS_FILE}
    _retract(store, uuid_of(4))  # the governance of a record in mmlu
    assert update_catalog(store, out, _manifest(store)).rewritten == ["mmlu"]
    full = write_catalog(store, tmp_path / "full")
    assert read_catalog(out).sort_by("record_uuid").equals(read_catalog(tmp_path / "full").sort_by("record_uuid"))
    assert full.rows == done.rows and (done.records, done.benchmarks) == (full.records, full.benchmarks)
    from eee.catalog.items import read_items

    order = [("record_uuid", "ascending"), ("item_id", "ascending")]
    assert read_items(out / "items").sort_by(order).equals(read_items(tmp_path / "full" / "items").sort_by(order))
    assert full.items == done.items == 8  # the two qa-bench records with four items each
    _retract(store, uuid_of(1))  # a retracted record's items leave the items table
    assert update_catalog(store, out, _manifest(store)).items == 4
    import shutil

    shutil.rmtree(store / "data" / "qa-bench")  # a benchmark gone: its partitions go
    gone = update_catalog(store, out, _manifest(store))
    assert gone.removed == ["qa-bench"] and not (out / "benchmark=qa-bench").exists()
    assert not (out / "items" / "benchmark=qa-bench").exists()


def test_stats_and_analysis_from_the_manifest_equal_a_full_run(tmp_path: Path) -> None:
    from eee.analysis.pages import update_pages, write_pages
    from eee.catalog.stats import fill_rates

    store = _store(tmp_path)
    cache: dict = {}
    digests = _manifest(store)["files"]
    assert fill_rates(store, digests=digests, cache=cache) == fill_rates(store)
    assert len(cache) == 4
    place(store, uuid_of(5), "acme/widget-13b", "lm_eval", None)
    _retract(store, uuid_of(1))
    digests = _manifest(store)["files"]
    assert fill_rates(store, digests=digests, cache=cache) == fill_rates(store)
    summaries, redone = update_pages(store, tmp_path / "a", _manifest(store))
    assert summaries == write_pages(store, tmp_path / "b") and "qa-bench" in redone
    summaries, redone = update_pages(store, tmp_path / "a", _manifest(store))
    assert redone == [] and summaries == write_pages(store, tmp_path / "b")
    place(store, uuid_of(6), "zeta/gizmo-1b", "helm", [0, 1, 1, 0], benchmark="mmlu")
    summaries, redone = update_pages(store, tmp_path / "a", _manifest(store))
    assert redone == ["mmlu"] and summaries == write_pages(store, tmp_path / "b")
    assert {p.name for p in (tmp_path / "a" / "pages").iterdir()} == {
        p.name for p in (tmp_path / "b" / "pages").iterdir()
    }
