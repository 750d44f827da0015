"""``eee export hf-dataset``: the catalogue as a Hugging Face dataset folder.

The folder holds a dataset card (``README.md``) whose YAML header declares one **config per
benchmark** (its canonical id in the identity registry: the folders of its aliases are one
config), each config's Parquet files under ``data/<config>/``, and **one row per active
evaluation result** (retracted, superseded and duplicate records are left out: the one
status fold). The columns are the catalogue's (:data:`eee.catalog.table.COLUMNS`),
described in the card. ``datasets.load_dataset(FOLDER, CONFIG)`` reads a config; ``hf
upload`` pushes the folder to a dataset repository.

Rows are streamed one benchmark folder at a time (memory stays flat in the number of
records); the folder is written beside the target and replaces it whole at the end, and only
a folder this command wrote is ever replaced.
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eee.reporting.findings import Finding, Refused

DATA = "data"
CARD = "README.md"
LICENSE = "LICENSE.md"  # the terms, when the card's license is "other"
SPLIT = "train"
ALL = "all"  # the default config: every benchmark's results (``load_dataset(path)`` names none)
DEFAULT_LICENSE = "other"
LICENSE_ID = re.compile(r"^[a-z0-9][a-z0-9.+-]{0,63}$")  # the Hub's license ids (cc-by-4.0, mit, other, ...)


@dataclass
class DatasetExport:
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)  # config -> {benchmark, rows, records, files}
    rows: int = 0
    left_out: Counter[str] = field(default_factory=Counter)  # results not exported, by why
    skipped: list[str] = field(default_factory=list)  # records that could not be read


def _ours(name: str) -> bool:
    return name in (CARD, DATA, LICENSE)


def active(row: dict[str, Any]) -> str | None:
    """Why a catalogue row is not exported (retracted, superseded, duplicate), or None."""
    if row.get("status") in ("retracted", "superseded"):
        return str(row["status"])
    if row.get("duplicate_of") or row.get("is_duplicate") or row.get("status") == "duplicate":
        return "duplicate"
    return None


def write(root: Path, out: Path, license: str = DEFAULT_LICENSE) -> DatasetExport:
    """Write the dataset folder of the store at ``root`` to ``out`` (see the module docstring).
    ``license``: the Hub's license id the card declares; ``other`` (the default) writes the
    terms beside the card (``LICENSE.md``): each result keeps its source's."""
    import pyarrow.parquet as pq

    from eee.catalog.table import _arrow_schema, _table, check_replaceable, iter_rows
    from eee.site.mdtext import slug
    from eee.store.fsutil import replace_folder

    out = Path(out)
    check_replaceable(out, _ours, "a dataset folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / DATA).mkdir(parents=True)
    schema = _arrow_schema(with_partition=True)
    done = DatasetExport()
    writer: Any = None
    current: tuple[str, str] | None = None
    buffer: list[dict[str, Any]] = []
    records: dict[str, set[str]] = {}

    def flush() -> None:
        if buffer:
            writer.write_table(_table(buffer, schema))
            buffer.clear()

    try:
        for row in iter_rows(root, skipped=done.skipped):
            why = active(row)
            if why is not None:
                done.left_out[why] += 1
                continue
            benchmark = row.get("benchmark_canonical") or row["benchmark"]
            config = slug(benchmark)
            place = (config, row["benchmark"])
            if place != current:
                if writer is not None:
                    flush()
                    writer.close()
                folder = tmp / DATA / config
                folder.mkdir(exist_ok=True)
                name = f"{SPLIT}-{slug(row['benchmark'])}.parquet"
                writer = pq.ParquetWriter(folder / name, schema, compression="zstd")
                current = place
                entry = done.configs.setdefault(config, {"benchmark": benchmark, "rows": 0, "files": []})
                entry["files"].append(f"{DATA}/{config}/{name}")
            buffer.append(row)
            done.configs[config]["rows"] += 1
            records.setdefault(config, set()).add(row["record_uuid"])
            done.rows += 1
            if len(buffer) >= 50_000:
                flush()
        if writer is not None:
            flush()
            writer.close()
            writer = None
        if not done.configs:
            raise Refused(
                [
                    Finding(
                        str(root / "data"),
                        "$",
                        "the store holds no active evaluation result: there is no dataset to write",
                        check="output",
                    )
                ]
            )
        for config, entry in done.configs.items():
            entry["records"] = len(records.get(config, ()))
        (tmp / CARD).write_text(card(done, root, license), encoding="utf-8")
        if license == DEFAULT_LICENSE:
            (tmp / LICENSE).write_text(terms(done), encoding="utf-8")
        replace_folder(tmp, out)
    finally:
        if writer is not None:
            writer.close()
        if tmp.exists():
            shutil.rmtree(tmp)
    return done


def card(done: DatasetExport, root: Path, license: str = DEFAULT_LICENSE) -> str:
    """The dataset card: YAML ``license`` and ``configs`` (``all``, the default, then one per
    benchmark), then what the dataset is. Every value from the store is data: YAML-quoted in
    the header, escaped in the text."""
    import yaml

    from eee.catalog.table import COLUMNS
    from eee.site.mdtext import cell, code, table, text

    header: dict[str, Any] = {
        "pretty_name": "Every Eval Ever datastore: evaluation results",
        "license": license,
    }
    if license == DEFAULT_LICENSE:
        header["license_name"] = "the terms of each result's source"
        header["license_link"] = LICENSE
    header["tags"] = ["evaluation", "benchmark", "every-eval-ever"]
    everything = ALL if ALL not in done.configs else f"{ALL}-benchmarks"  # never a benchmark's name
    header["configs"] = [
        {
            "config_name": everything,
            "data_files": [{"split": SPLIT, "path": f"{DATA}/*/*.parquet"}],
            "default": True,
        },
        *(
            {
                "config_name": config,
                "data_files": [{"split": SPLIT, "path": f"{DATA}/{config}/*.parquet"}],
            }
            for config in sorted(done.configs)
        ),
    ]
    front = yaml.safe_dump(header, sort_keys=False, allow_unicode=False, width=1000)
    left = ", ".join(f"{n} {why}" for why, n in sorted(done.left_out.items())) or "none"
    rows = [
        [code(config), text(entry["benchmark"]), str(entry["records"]), str(entry["rows"])]
        for config, entry in sorted(done.configs.items())
    ]
    columns = [[code(name), code(kind), cell(text(desc))] for name, kind, desc in COLUMNS]
    body = [
        "# Every Eval Ever datastore: evaluation results",
        "",
        "One row per **active** evaluation result of the store (a result of a record that is not retracted, "
        "superseded or marked a duplicate), one config per benchmark (its canonical id in the store's identity "
        "registry), written by `eee export hf-dataset`. Results left out: " + left + ".",
        "",
        "```python",
        "from datasets import load_dataset",
        f"rows = load_dataset(PATH_OR_REPO, split={SPLIT!r})  # every benchmark: the default config, {everything!r}",
        f"rows = load_dataset(PATH_OR_REPO, {sorted(done.configs)[0]!r}, split={SPLIT!r})  # one benchmark",
        "```",
        "",
        "## Configs",
        "",
        f"`{everything}` (the default) holds every benchmark's results; each other config one benchmark's.",
        "",
        table(["config", "benchmark", "records", "results"], rows),
        "",
        "## Columns",
        "",
        "The store's catalogue columns; `*_canonical` name the developer, model, benchmark and metric by their "
        "canonical ids, so one query finds a developer's results under every spelling.",
        "",
        table(["column", "type", "what it holds"], columns),
        "",
        "## License",
        "",
        (
            f"Each result re-represents one published by its source (the `source_*` columns), under that "
            f"source's terms: see [{LICENSE}]({LICENSE})."
            if license == DEFAULT_LICENSE
            else f"`{license}`, as the exporter declared it (`eee export hf-dataset --license`)."
        ),
        "",
    ]
    return "---\n" + front + "---\n\n" + "\n".join(body)


def terms(done: DatasetExport) -> str:
    """``LICENSE.md`` of a dataset whose card says ``license: other``."""
    return "\n".join(
        [
            "# Terms",
            "",
            "This dataset gathers evaluation results that others published first: leaderboards, papers and "
            "harness logs. Each row names where its result comes from (`source_name`, `source_organization`, "
            "`source_type`, and the record's `source_metadata`); the result is used under the terms of that "
            "source, which this export does not change. The store's own descriptions of the results (ids, "
            "statuses, canonical names) carry no further restriction.",
            "",
            f"{done.rows:,} results from {len(done.configs)} benchmark(s).",
            "",
        ]
    )
