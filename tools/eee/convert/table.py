"""A results table (CSV or JSON), one row per model, into records, as a YAML mapping describes it.

``eee convert table --mapping FILE results.csv|json``: the mapping (:mod:`eee.convert.mapping`
gives its format; the shipped ones are in ``tools/eee/convert/mappings/``) says which column
names the model (and which developer/model id each name is), which columns are which
metrics (id, direction, bounds, unit), which other columns tell rows apart (an agent
scaffold), and where the table comes from. Each row becomes one record (one per eval
library, when the mapping says that some columns come from another implementation); a
table has no per-sample data.

A CSV table has a header line; a JSON table is an array of objects. Every problem is an
error naming the table's line (or item) and column: a column the mapping names that the
table lacks, a score that is not a number, a model without an id, two rows of one model
(and setting). An empty score cell is left out of its record, with a warning; a row with
no score at all is skipped, with a warning; a row the mapping's ``skip`` names is left out and
said (an entry that names no row is a warning). The mapping's ``judge`` goes into every
result's ``metric_config.llm_scoring``. A CSV column without a name (pandas' index) is named
by the empty string. Nothing is written unless every row converts.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from eee.convert.common import (
    Batch,
    Converted,
    InputError,
    Settings,
    display,
    model_info,
    now_epoch,
    parse_json,
    read_log_bytes,
    record,
    sha256_text,
)
from eee.convert.mapping import Judge, Mapping, Metric, load_mapping, plain_id
from eee.reporting.findings import Finding, Refused
from eee.store.jsonpath import format_path, json_type

CELL_MAX_CHARS = 10_000


Row = tuple[str, str, dict[str, Any]]


def read_table(path: Path) -> tuple[list[str], list[Row]]:
    """(columns, rows): each row with where it is (``file:line`` for CSV, ``file[i]`` for
    JSON), the same for the record's provenance (``line 3``, ``item 2``) and its cells."""
    data = read_log_bytes(path)
    if path.suffix.lower() == ".json":
        return _json_table(data, path)
    if path.suffix.lower() not in (".csv", ".tsv"):
        raise InputError(
            path, "$", "not a .csv, .tsv or .json table", "give the table as CSV (with a header line) or JSON"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, "$", f"not UTF-8 text (byte {exc.start})", "save the table as UTF-8") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
    try:
        header = next(reader, None)
        if not header or not any(h.strip() for h in header):
            raise InputError(path, "$", "no header line", "the first line names the columns")
        columns = [h.strip() for h in header]
        twice = sorted({c for c in columns if columns.count(c) > 1})
        if twice:
            raise InputError(
                f"{display(path)}:1", "$", f"column {twice[0]!r} appears twice in the header", "name each column once"
            )
        rows = []
        for cells in reader:
            where = f"{display(path)}:{reader.line_num}"
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(columns):
                raise InputError(
                    where,
                    "$",
                    f"{len(cells)} cells, the header has {len(columns)} columns",
                    "give every row one cell per column",
                )
            rows.append((where, f"line {reader.line_num}", dict(zip(columns, cells, strict=True))))
    except csv.Error as exc:
        raise InputError(
            f"{display(path)}:{reader.line_num}", "$", f"not readable as CSV: {exc}", "check the quoting of this line"
        ) from None
    return columns, rows


def _json_table(data: bytes, path: Path) -> tuple[list[str], list[Row]]:
    doc = parse_json(data, path)
    if not isinstance(doc, list):
        raise InputError(
            path,
            "$",
            f"expected an array of row objects, found {json_type(doc)}",
            "write the table as [{column: value, ...}, ...]",
        )
    columns: list[str] = []
    rows = []
    for i, item in enumerate(doc):
        if not isinstance(item, dict):
            raise InputError(
                path,
                format_path([i]),
                f"expected a row object, found {json_type(item)}",
                "each item is one row: {column: value, ...}",
            )
        for key in item:
            if key not in columns:
                columns.append(key)
        rows.append((f"{display(path)}{format_path([i])[1:]}", f"item {i}", item))
    return columns, rows


def _cell_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return str(value).strip()


def _score(value: Any, metric: Metric) -> float | str | None:
    """The cell's score; None for an empty cell; a message when it is not a number."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        return f"{value!r} is not a number"
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith("%") and metric.unit == "percent":
            text = text[:-1].strip()
        try:
            number = float(text)
        except ValueError:
            return f"{value!r} is not a number"[:200]
    else:
        return f"a {json_type(value)} is not a number"
    if not math.isfinite(number):
        return f"{value!r} is not a finite number"
    return number


def _source_data(mapping: Mapping) -> dict[str, Any]:
    if mapping.hf_repo:
        return {"dataset_name": mapping.dataset_name, "source_type": "hf_dataset", "hf_repo": mapping.hf_repo}
    urls = mapping.dataset_urls or mapping.source_urls
    if urls:
        return {"dataset_name": mapping.dataset_name, "source_type": "url", "url": urls}
    return {"dataset_name": mapping.dataset_name, "source_type": "other"}


def _limit(value: float) -> float | str:
    if value == math.inf:
        return "Infinity"
    if value == -math.inf:
        return "-Infinity"
    return value


def _result(
    mapping: Mapping, metric: Metric, score: float, stderr: float | None, setting: dict[str, str]
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "evaluation_description": metric.description or f"{metric.name} (the table's column {metric.column!r})",
        "metric_id": metric.id,
        "metric_name": metric.name,
    }
    if metric.kind:
        config["metric_kind"] = metric.kind
    if metric.unit:
        config["metric_unit"] = metric.unit
    config["lower_is_better"] = metric.lower_is_better
    config["score_type"] = "continuous"
    config["min_score"] = _limit(metric.min)
    config["max_score"] = _limit(metric.max)
    config["additional_details"] = {"table_column": metric.column}
    if mapping.judge is not None:
        config["llm_scoring"] = _llm_scoring(mapping.judge)
    details: dict[str, Any] = {"score": score}
    if stderr is not None:
        details["uncertainty"] = {"standard_error": {"value": stderr}}
    out: dict[str, Any] = {
        "evaluation_result_id": metric.id,
        "evaluation_name": mapping.evaluation_name,
        "source_data": _source_data(mapping),
        "metric_config": config,
        "score_details": details,
    }
    if setting:
        out["generation_config"] = {"additional_details": dict(setting)}
    return out


def _llm_scoring(judge: Judge) -> dict[str, Any]:
    """``metric_config.llm_scoring`` of a mapping's judge."""
    developer, name = judge.id.split("/", 1)
    info: dict[str, Any] = {
        "name": name,
        "id": judge.id,
        "developer": developer,
        "additional_details": {
            "deployment_type": judge.deployment_type,
            "model_availability": judge.model_availability,
        },
    }
    if judge.platform:
        info["inference_platform"] = judge.platform
    entry: dict[str, Any] = {"model_info": info}
    if judge.temperature is not None:
        entry["temperature"] = judge.temperature
    out: dict[str, Any] = {"judges": [entry], "input_prompt": judge.prompt}
    if judge.name:
        out["additional_details"] = {"judge_name": judge.name}
    return out


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text).strip("-") or "-"


def convert(path: Path, settings: Settings) -> Batch:
    if settings.mapping is None:
        raise InputError(path, "$", "no mapping", "give the table's mapping with --mapping FILE")
    mapping = load_mapping(settings.mapping)
    columns, rows = read_table(path)
    mapfile = display(mapping.file)
    missing = [(column, where) for column, where in mapping.columns() if column not in columns]
    if missing:
        raise Refused(
            [
                Finding(
                    mapfile,
                    format_path(where),
                    f"names the column {column!r}, which the table {display(path)} does not have",
                    _columns_hint(column, columns),
                    check="mapping",
                )
                for column, where in missing
            ]
        )
    if not rows:
        raise InputError(path, "$", "the table has no rows", "give the table with one row per model")
    # the mapping names who provides the table; --source-organization, given, wins
    organization = mapping.organization if settings.source_organization == "unknown" else settings.source_organization
    settings = replace(settings, source_organization=organization, evaluator_relationship=mapping.relationship)
    batch = Batch()
    errors: list[Finding] = []
    seen: dict[tuple[str, ...], str] = {}
    stamp_retrieved = str(int(mapping.retrieved)) if mapping.retrieved is not None else None
    libraries = {m.library or mapping.library for m in mapping.metrics}
    used: set[int] = set()
    for where, label, cells in rows:
        skip = next((i for i, k in enumerate(mapping.skip) if k.matches(mapping.model_column, cells)), None)
        if skip is not None:
            used.add(skip)
            name = _cell_text(cells.get(mapping.model_column)) or ""
            batch.notes.append(f"{where}: the row of {name!r} left out, as the mapping says: {mapping.skip[skip].why}")
            continue
        name = _cell_text(cells.get(mapping.model_column))
        if not name or len(name) > CELL_MAX_CHARS:
            errors.append(
                _cell_error(
                    where,
                    mapping.model_column,
                    "no model name" if not name else "a model name of more than 10,000 characters",
                    "every row names its model",
                )
            )
            continue
        model_id = mapping.ids.get(name) or settings.model_ids.get(name) or (name if plain_id(name) else None)
        if model_id is None:
            errors.append(
                _cell_error(
                    where,
                    mapping.model_column,
                    f"model {name!r} has no developer/model id"[:300],
                    f"add `{name}: developer/model` under model.ids in {mapfile}, or in a --models FILE"[:300],
                )
            )
            continue
        setting = {}
        for column, key in mapping.setting:
            value = _cell_text(cells.get(column))
            if not value or len(value) > CELL_MAX_CHARS:
                errors.append(
                    _cell_error(
                        where,
                        column,
                        "empty (or over 10,000 characters)",
                        "every row gives each setting column a value",
                    )
                )
                break
            setting[key] = value
        else:
            key = (model_id, *setting.values())
            if key in seen:
                errors.append(
                    _cell_error(
                        where,
                        mapping.model_column,
                        f"a second row of model {name!r}"
                        + (f" with {', '.join(f'{k} {v!r}' for k, v in setting.items())}" if setting else "")
                        + f" (the first is {seen[key]})",
                        "keep one row per model"
                        + (" and setting" if setting else "")
                        + (
                            ", or name the column that tells them apart under setting: in the mapping"
                            if not setting
                            else ""
                        ),
                    )
                )
                continue
            seen[key] = where
            provenance = f"{path.name} {label}, mapping {mapping.file.name}"
            _convert_row(
                mapping,
                settings,
                batch,
                errors,
                (where, provenance),
                cells,
                name,
                model_id,
                setting,
                stamp_retrieved,
                len(libraries) > 1,
            )
    for i, k in enumerate(mapping.skip):
        if i not in used:
            said = f"model {k.model!r}" if k.model is not None else f"{k.column!r} {k.value!r}"
            batch.warn(
                mapfile,
                format_path(k.where),
                f"skip names {said}, which no row of {display(path)} has",
                "remove the entry, or correct it to the table's spelling",
            )
    if errors:
        raise Refused(errors)
    if not batch.outputs:
        raise InputError(path, "$", "no row has a score", "fill the metric columns the mapping names")
    return batch


def _columns_hint(column: str, columns: list[str]) -> str:
    """What to write instead of a column the table lacks; a column without a name (pandas'
    index, which pandas reads back as 'Unnamed: 0') is named by the empty string."""
    if "" in columns and column.startswith("Unnamed: "):
        return 'the table\'s first column has no name (pandas calls it "Unnamed: 0"): name it column: ""'
    import difflib

    close = difflib.get_close_matches(column, columns, n=1)
    listed = ", ".join(repr(c) for c in columns)[:1000]
    return (f"did you mean {close[0]!r}? " if close else "") + f"the table's columns are: {listed}"


def _cell_error(where: str, column: str, message: str, hint: str) -> Finding:
    return Finding(where, format_path([column]), message, hint, check="input")


def _convert_row(
    mapping: Mapping,
    settings: Settings,
    batch: Batch,
    errors: list[Finding],
    place: tuple[str, str],
    cells: dict[str, Any],
    name: str,
    model_id: str,
    setting: dict[str, str],
    stamp_retrieved: str | None,
    several_libraries: bool,
) -> None:
    where, provenance = place
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for metric in mapping.metrics:
        score = _score(cells.get(metric.column), metric)
        if isinstance(score, str):
            errors.append(
                _cell_error(
                    where,
                    metric.column,
                    score,
                    f"the column holds {metric.name} scores: give a number, or leave the cell empty",
                )
            )
            continue
        if score is None:
            batch.warn(
                where,
                format_path([metric.column]),
                f"no {metric.name} score for {name}: left out of its record",
                "fill the cell if the table has the value",
            )
            continue
        stderr = None
        if metric.stderr_column:
            value = _score(cells.get(metric.stderr_column), metric)
            if isinstance(value, str):
                errors.append(
                    _cell_error(
                        where,
                        metric.stderr_column,
                        value,
                        "give the standard error as a number, or leave the cell empty",
                    )
                )
                continue
            stderr = value
        groups.setdefault(metric.library or mapping.library, []).append(
            _result(mapping, metric, score, stderr, setting)
        )
    if not groups:
        batch.warn(where, "$", f"the row of {name} has no score: skipped", "fill the metric columns the mapping names")
        return
    for library, results in groups.items():
        info = model_info(name, model_id, settings, mapping.file, "$.model.ids")
        parts = [mapping.benchmark, info["id"].replace("/", "_"), *(_slug(v) for v in setting.values())]
        if several_libraries:
            parts.append(_slug(library[0]))
        stamp = stamp_retrieved or sha256_text(repr((parts, results)))[:16]
        doc = record(
            evaluation_id="/".join([*parts, stamp]),
            evaluation_timestamp=None,
            retrieved_timestamp=stamp_retrieved or now_epoch(),
            source_name=mapping.source_name,
            settings=settings,
            library=library,
            model=info,
            results=results,
            source_type=mapping.source_type,
            source_url=mapping.organization_url,
            source_details={"converted_from": provenance},
        )
        batch.outputs.append(Converted(mapping.benchmark, doc, None))
