"""What the converters share: reading logs, building records, and placing them in the store.

A converter reads one harness's log files into a :class:`Batch` of :class:`Converted`
outputs (a record, optionally with sidecar rows). Placing a batch is all-or-nothing:

1. every output gets a uuid (a fresh one, or the one ``--uuid`` gives, refused when a
   record of the store already has it) and its canonical path
   ``data/<benchmark>/<developer>/<model>/<uuid>.json`` (sidecar beside it);
2. everything is written to a temporary store and validated there with the store's own
   validator; any error stops the run;
3. no target may exist yet (nor clash in letter case with what is there);
4. only then are the files written into ``data/`` (exclusive creation, so nothing is ever
   overwritten), each sidecar goes through ``eee samples add`` (checked against its record,
   into DVC) and everything is staged, in one transaction of :mod:`eee.write.commit`: a
   failure part-way (or a kill: the journal) takes back what this run wrote and staged.

Times come from the log, never from the clock, so converting a log twice gives the same
record (only the uuid differs, and the duplicates hook notices): ``evaluation_id`` is
``<benchmark>/<developer>_<model>/<evaluation start>`` and ``retrieved_timestamp`` is when
the log's results were final (Inspect's ``completed_at``, lm-eval's start plus its
evaluation time, HELM's last request). Only a log without any time falls back to a content
hash for the id and to the conversion time for ``retrieved_timestamp``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from eee.convert.metrics import unknown_bounds_details
from eee.reporting.findings import WARNING, Finding, Refused
from eee.store.jsonpath import format_path, json_type
from eee.store.limits import INT_MAX_DIGITS, LOG_JSON_MAX_DEPTH, LOG_MAX_BYTES, Unreadable, read_regular
from eee.store.paths import canonical_folders
from eee.store.strictjson import BigInt, bounded_int, canonical_row, explain, pretty_within
from eee.write import samples
from eee.write.placement import NewRecord, existing, needs_dvc, new_record
from eee.write.placement import check as check_placement
from eee.write.placement import write as write_records

SCHEMA_VERSION = "0.3.0"
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")


class InputError(Refused):
    """A log that cannot be converted: a :class:`~eee.reporting.findings.Refused` whose one finding
    names the file, the JSON location and what is wrong (only a shorter way to build it)."""

    def __init__(self, file: str | Path, pointer: str, message: str, hint: str | None = None) -> None:
        super().__init__(Finding(display(file), pointer, message, hint, check="input"))

    @property
    def finding(self) -> Finding:
        return self.findings[0]


@dataclass
class Settings:
    """Choices the log cannot tell: who provides the results, and what to read."""

    source_organization: str = "unknown"
    evaluator_relationship: str = "third_party"
    eval_library_version: str | None = None
    include_samples: bool = False
    model_id: str | None = None
    # the log's model names -> developer/model ids (``--models FILE``)
    model_ids: dict[str, str] = field(default_factory=dict)
    # the table converter's mapping (``--mapping FILE``)
    mapping: Path | None = None
    # names of the log's models to leave out (``--exclude NAME``; AlpacaEval's leaderboards and results)
    exclude: tuple[str, ...] = ()
    # alpaca_eval's models_configs folder (``--model-configs DIR``): developers of its model names
    model_configs: Path | None = None


@dataclass
class Converted:
    """One record to write, with its sidecar rows (None: no sidecar)."""

    benchmark: str
    record: dict[str, Any]
    rows: list[dict[str, Any]] | None


@dataclass
class Batch:
    """What one conversion produced, plus what it skipped (warnings)."""

    outputs: list[Converted] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    # what the conversion left out on purpose, said once (a baseline's row, lighteval's averages)
    notes: list[str] = field(default_factory=list)

    def warn(self, file: str | Path, pointer: str, message: str, hint: str | None = None) -> None:
        self.warnings.append(Finding(display(file), pointer, message, hint, severity=WARNING, check="convert"))


def display(path: str | Path) -> str:
    """A path as messages show it: relative to the working directory when below it."""
    absolute = os.path.abspath(path)
    prefix = os.getcwd() + os.sep
    return absolute[len(prefix) :] if absolute.startswith(prefix) else str(path)


# --- reading logs -------------------------------------------------------------------------


def big_int_message(data: bytes, exc: Exception) -> str:
    digits = getattr(exc, "digits", None)
    if digits is None:
        return f"an integer too large for a number (more than {INT_MAX_DIGITS} digits or beyond a double)"
    return f"an integer of {digits} digits (more than {INT_MAX_DIGITS})"


def _log_int(text: str) -> int | float:
    """Integers as orjson reads them (64-bit exact, larger as floats), at most INT_MAX_DIGITS digits."""
    value = bounded_int(text)
    if -(2**63) <= value < 2**64:
        return value
    return float(value)  # OverflowError beyond a double: refused below


def parse_json(data: bytes, file: str | Path) -> Any:
    """Parse a harness log. Python's ``NaN``/``Infinity`` (which harnesses write) are read as
    floats and dropped later; anything else that is not JSON, nests deeper than
    LOG_JSON_MAX_DEPTH or holds an integer of more than INT_MAX_DIGITS digits is an
    :class:`InputError`."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        try:
            doc = json.loads(data, parse_int=_log_int)
        except Exception as fallback:  # the standard library refuses it too
            if isinstance(fallback, RecursionError) or "depth limit" in str(exc):
                message = f"nested too deeply: more than {LOG_JSON_MAX_DEPTH} levels of arrays and objects"
            elif isinstance(fallback, BigInt | OverflowError):
                message = big_int_message(data, fallback)
            else:
                message = explain(data, exc).message
            raise InputError(file, "$", message, "the log file is damaged; export it again") from None
    if (
        isinstance(doc, dict | list)
        and data.count(b"[") + data.count(b"{") > LOG_JSON_MAX_DEPTH
        and pretty_within(doc, LOG_JSON_MAX_DEPTH) is None
    ):
        raise InputError(
            file,
            "$",
            f"nested too deeply: more than {LOG_JSON_MAX_DEPTH} levels of arrays and objects",
            "harness logs nest a few levels; this file is damaged or not a log",
        )
    return doc


def read_log_bytes(path: Path) -> bytes:
    """The bytes of one log file: a regular file (a link to one is followed), at most LOG_MAX_BYTES."""
    try:
        return read_regular(path, LOG_MAX_BYTES, "harness log", follow=True)
    except FileNotFoundError:
        raise InputError(path, "$", "file not found", "check the path given to --log-path") from None
    except Unreadable as exc:
        raise InputError(path, "$", exc.message, exc.hint) from None
    except OSError as exc:
        raise InputError(path, "$", f"cannot read the file: {exc.strerror}") from None


def read_json(path: Path) -> Any:
    """The JSON document in ``path`` (a missing or unreadable file is an :class:`InputError`)."""
    return parse_json(read_log_bytes(path), path)


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, document) for every non-blank line of a JSON Lines file."""
    data = read_log_bytes(path)
    for lineno, line in enumerate(data.split(b"\n"), start=1):
        if line.strip():
            try:
                yield lineno, parse_json(line, path)
            except InputError as exc:
                raise InputError(f"{display(path)}:{lineno}", "$", exc.finding.message, exc.finding.hint) from None


_TYPES: dict[type, str] = {
    dict: "an object",
    list: "an array",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
}


def get(doc: Any, file: str | Path, path: Iterable[str | int], kind: type | tuple[type, ...] = object) -> Any:
    """The value at ``path`` in ``doc``; a missing field or a wrong type is an :class:`InputError`."""
    parts = list(path)
    node = doc
    for depth, part in enumerate(parts):  # the error's location is only formatted when raised
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                raise InputError(
                    file, format_path(parts[: depth + 1]), "missing item", "the log is incomplete; export it again"
                )
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise InputError(file, format_path(parts[:depth]), f"expected an object, found {json_type(node)}")
            if part not in node:
                raise InputError(
                    file,
                    format_path(parts[: depth + 1]),
                    f"missing field {part!r}",
                    "the log is incomplete or not of this harness's format",
                )
            node = node[part]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if object not in kinds and (not isinstance(node, kinds) or (isinstance(node, bool) and bool not in kinds)):
        expected = " or ".join(_TYPES.get(k, k.__name__) for k in kinds)
        raise InputError(file, format_path(parts), f"expected {expected}, found {json_type(node)}")
    return node


def opt(doc: Any, *path: str | int) -> Any:
    """The value at ``path``, or None when any step is missing."""
    node = doc
    for part in path:
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return None
        elif not isinstance(node, dict):
            return None
        node = node[part] if isinstance(part, int) else node.get(part)
    return node


def number(value: Any) -> float | None:
    """A finite number, or None (booleans, strings such as lm-eval's "N/A", NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def attribution(extracted: str, method: str, turn: int = 0, source: str = "output.raw") -> dict[str, Any]:
    """The one ``answer_attribution`` entry of a sidecar row: where the final answer came from."""
    return {
        "turn_idx": turn,
        "source": source,
        "extracted_value": extracted,
        "extraction_method": method,
        "is_terminal": True,
    }


def text(value: Any) -> str:
    """A free-form detail value as the schema wants it: a string (JSON for anything else)."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def string_details(mapping: dict[str, Any] | None) -> dict[str, str]:
    return {str(k): text(v) for k, v in (mapping or {}).items() if v is not None}


def sha256_text(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def epoch(iso: str) -> float:
    """ISO 8601 -> Unix epoch seconds (a time without offset is UTC, never the local zone)."""
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def iso_epoch(doc: Any, file: str | Path, *path: str) -> float | None:
    value = opt(doc, *path)
    if value is None:
        return None
    try:
        return epoch(str(value))
    except ValueError:
        raise InputError(file, format_path(path), f"not an ISO 8601 timestamp: {value!r}") from None


# --- model identity ---------------------------------------------------------------------------

# Providers that are the model's developer; a middle segment names the service that ran it.
DEVELOPER_APIS = frozenset({"anthropic", "deepseek", "google", "grok", "mistral", "openai", "perplexity"})
SERVICES = frozenset({"azure", "bedrock", "vertex"})
# Platforms that serve other developers' models through an API.
PLATFORMS = frozenset(
    {
        "azureai",
        "bedrock",
        "cf",
        "fireworks",
        "groq",
        "hf-inference-providers",
        "openai-api",
        "openrouter",
        "sambanova",
        "together",
    }
)
# Engines that run weights on the evaluator's own hardware.
ENGINES = frozenset({"hf", "llama-cpp-python", "ollama", "sglang", "transformer_lens", "vllm"})
# Providers that serve models through an API the evaluator does not run, and local engines.
API_PROVIDERS = DEVELOPER_APIS | SERVICES | PLATFORMS
LOCAL_ENGINES = ENGINES | {"huggingface"}


# Developers of model families that a bare model name (no organisation) belongs to.
FAMILIES = (
    ("qwen", "Qwen"),
    ("qwq", "Qwen"),
    ("llama", "meta-llama"),
    ("meta-llama", "meta-llama"),
    ("codellama", "meta-llama"),
    ("gemma", "google"),
    ("mixtral", "mistralai"),
    ("mistral", "mistralai"),
    ("phi", "microsoft"),
    ("deepseek", "deepseek-ai"),
    ("gpt-oss", "openai"),
    ("olmo", "allenai"),
    ("smollm", "HuggingFaceTB"),
    ("vicuna", "lmsys"),
    ("falcon", "tiiuae"),
    ("alpaca-7b", "tatsu-lab"),  # Stanford Alpaca (AlpacaEval's own models)
    # API models as leaderboards name them (AlpacaEval: gpt4_1106_preview, claude-2.1)
    ("gpt-4", "openai"),
    ("gpt4", "openai"),
    ("gpt-3.5", "openai"),
    ("gpt35", "openai"),
    ("chatgpt", "openai"),
    ("text_davinci", "openai"),
    ("text-davinci", "openai"),
    ("claude", "anthropic"),
    ("gemini", "google"),
)


def family_developer(model: str) -> str | None:
    """The developer of a bare model name's family (``qwen2.5:0.5b`` -> ``Qwen``), or None."""
    name = model.lower()
    for prefix, developer in FAMILIES:
        if name.startswith(prefix):
            return developer
    return None


def deployment_type(platform: str | None) -> str:
    """``self_deployed`` for a local engine, ``externally_managed`` for an API, else unknown."""
    name = (platform or "").lower()
    if name in LOCAL_ENGINES:
        return "self_deployed"
    if name in API_PROVIDERS:
        return "externally_managed"
    return "unknown"


def model_availability(developer: str | None, model: str, deployment: str) -> str:
    """``closed_weights`` for the API models whose weights were never published; else unknown."""
    dev = (developer or "").lower()
    if deployment != "externally_managed":
        return "unknown"
    if dev == "anthropic":
        return "closed_weights"
    if dev == "openai" and "gpt-oss" not in model.lower():
        return "closed_weights"
    if dev == "google" and "gemini" in model.lower():
        return "closed_weights"
    return "unknown"


def model_info(
    name: str,
    model_id: str,
    settings: Settings,
    file: str | Path,
    pointer: str,
    platform: str | None = None,
    engine: str | None = None,
    details: dict[str, str] | None = None,
    deployment: str | None = None,
) -> dict[str, Any]:
    """``model_info`` with the deployment facts the schema requires (``--model-id`` wins, then
    the ``--models`` file's id for the log's name)."""
    model_id = settings.model_id or settings.model_ids.get(name) or settings.model_ids.get(model_id) or model_id
    if canonical_folders(model_id) is None:
        raise InputError(
            file,
            pointer,
            f"model {model_id!r} has no developer part (developer/model)",
            "pass the model's id with --model-id DEVELOPER/MODEL (or name it in a --models FILE)",
        )
    developer = model_id.split("/", 1)[0]
    info: dict[str, Any] = {"name": name, "id": model_id, "developer": developer}
    if platform:
        info["inference_platform"] = platform
    if engine:
        info["inference_engine"] = {"name": engine}
    deploy = deployment or deployment_type(platform or engine)
    info["additional_details"] = {
        **(details or {}),
        "deployment_type": deploy,
        "model_availability": model_availability(developer, model_id, deploy),
    }
    return info


# --- building records ---------------------------------------------------------------------------


def evaluation_id(benchmark: str, model_id: str, timestamp: str) -> str:
    """``<benchmark>/<developer>_<model>/<timestamp>``: from the log only, never the clock."""
    return f"{benchmark}/{model_id.replace('/', '_')}/{timestamp}"


def record(
    *,
    evaluation_id: str,
    evaluation_timestamp: str | None,
    retrieved_timestamp: str,
    source_name: str,
    settings: Settings,
    library: tuple[str, str | None],
    model: dict[str, Any],
    results: list[dict[str, Any]],
    library_details: dict[str, str] | None = None,
    source_type: str = "evaluation_run",
    source_url: str | None = None,
    source_details: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An aggregate record of the current schema version (``source_type`` ``documentation``
    for results taken from a publication or leaderboard)."""
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id}
    if evaluation_timestamp is not None:
        doc["evaluation_timestamp"] = evaluation_timestamp
    doc["retrieved_timestamp"] = retrieved_timestamp
    source: dict[str, Any] = {
        "source_name": source_name,
        "source_type": source_type,
        "source_organization_name": settings.source_organization,
    }
    if source_url:
        source["source_organization_url"] = source_url
    source["evaluator_relationship"] = settings.evaluator_relationship
    details = {**(source_details or {}), **(unknown_bounds_details(results) or {})}
    if details:
        source["additional_details"] = details
    doc["source_metadata"] = source
    eval_library: dict[str, Any] = {
        "name": library[0],
        "version": settings.eval_library_version or library[1] or "unknown",
    }
    if library_details:
        eval_library["additional_details"] = library_details
    doc["eval_library"] = eval_library
    doc["model_info"] = model
    doc["evaluation_results"] = results
    return doc


def now_epoch() -> str:
    """The conversion time: only a fallback for logs that record no time at all."""
    return str(int(time.time()))


# --- placing outputs in the store -----------------------------------------------------------------


@dataclass
class Planned:
    """A converted output with its place in the store and its exact bytes."""

    output: Converted
    record_rel: str
    record_bytes: bytes
    sidecar_rel: str | None = None
    sidecar_bytes: bytes | None = None

    def files(self) -> list[tuple[str, bytes]]:
        out = [(self.record_rel, self.record_bytes)]
        if self.sidecar_rel is not None and self.sidecar_bytes is not None:
            out.append((self.sidecar_rel, self.sidecar_bytes))
        return out


def plan(batch: Batch, uuids: list[str] | None = None) -> list[Planned]:
    """Give every output its uuid (``uuids[i]``, else a fresh one), its canonical paths and its
    bytes (:func:`eee.write.placement.new_record`)."""
    planned = []
    for i, output in enumerate(batch.outputs):
        sidecar = b"".join(canonical_row(row) for row in output.rows) if output.rows is not None else None
        chosen = uuids[i] if uuids and i < len(uuids) else None
        new = new_record(output.benchmark, output.record, sidecar, len(output.rows or []), chosen)
        output.record = new.doc
        planned.append(Planned(output, new.rel, new.data, new.sidecar_rel, new.sidecar_data))
    return planned


def _new_records(planned: list[Planned]) -> list[NewRecord]:
    return [
        NewRecord("", item.record_rel, item.record_bytes, item.output.record, item.sidecar_rel, item.sidecar_bytes)
        for item in planned
    ]


def validate_planned(planned: list[Planned], root: Path | None = None) -> tuple[list[Finding], list[Finding]]:
    """(errors, warnings) of the outputs, checked by the store's validator on the store at
    ``root`` as it would be with them (on their own when ``root`` is None); nothing is written."""
    return check_placement(root, _new_records(planned))


def target_findings(planned: list[Planned], root: Path) -> list[Finding]:
    """Targets that exist already (folders that differ only in letter case from existing
    ones are the validator's layout finding)."""
    return [
        Finding(rel, "$", "already exists; the converter never overwrites a file", check="convert")
        for rel in existing(root, _new_records(planned))
    ]


def uuid_findings(planned: list[Planned], root: Path) -> list[Finding]:
    """The planned records whose uuid a record of the store (committed, staged or in the
    work tree, retracted and superseded ones included) already holds: the rule ``uuid``
    (:mod:`eee.rules.uuids`), decided before anything is written."""
    from eee.governance.index import RecordIndex
    from eee.rules.uuids import uuid_findings as decide

    return decide(
        [item.record_rel for item in planned],
        RecordIndex(root).holders,
        hint="leave out --uuid (a fresh uuid is drawn), or give one no record has",
        new=True,
    )


def preflight(
    batch: Batch, root: Path, check_dvc: bool = True, uuids: list[str] | None = None
) -> tuple[list[Planned], list[Finding], list[Finding]]:
    """Everything :func:`place` checks before it writes: the planned outputs, the errors
    (a given uuid already used, validation, existing targets, and with ``check_dvc`` DVC
    missing for a sidecar) and the warnings. The dry run leaves DVC out: it shows the
    conversion in any store."""
    planned = plan(batch, uuids)
    used = uuid_findings([p for p, u in zip(planned, uuids, strict=False) if u], root) if uuids else []
    errors, warnings = validate_planned(planned, root)
    errors = used + errors + target_findings(planned, root)
    if check_dvc and any(item.sidecar_rel for item in planned):
        try:  # only a sidecar above the store's threshold needs DVC; the smaller ones go to git
            needed = needs_dvc(root, _new_records(planned))
        except Refused as exc:
            errors += exc.findings
            needed = False
        problem = samples.dvc_problem(root) if needed else None
        if problem:
            errors.append(Finding(display(root), "$", problem, check="convert"))
    return planned, errors, warnings


def place(
    batch: Batch, root: Path, stage: bool = True, uuids: list[str] | None = None
) -> tuple[list[Planned], list[Finding]]:
    """Validate, write and register a batch in the store at ``root``, all or nothing, in one
    transaction of :mod:`eee.write.commit`: the records and sidecars written, each sidecar
    placed by the store's rule (:mod:`eee.write.samples`: in git up to the threshold, in DVC
    above it), everything staged unless ``stage`` is False.

    Returns the placed outputs and the validator's warnings; raises :class:`~eee.reporting.findings.Refused`
    (with nothing left behind: no file, the index as before) when a given uuid is taken,
    any output fails validation, a target exists, DVC is missing for a sidecar, or adding a
    sidecar to DVC fails.
    """
    from eee.write.commit import transaction

    planned, errors, warnings = preflight(batch, root, uuids=uuids)
    if errors:
        raise Refused(errors)
    try:
        with transaction(root, stage=stage) as tx:
            try:
                write_records(tx, _new_records(planned))
            except OSError as exc:
                where = display(exc.filename or root / "data")
                raise Refused(
                    Finding(where, "$", f"cannot write: {exc.strerror}; nothing was written", check="convert")
                ) from None
    except Exception as exc:
        if isinstance(exc, Refused) and any(f.check == "convert" for f in exc.findings):
            raise
        raise Refused(
            [
                Finding(
                    display(root),
                    "$",
                    f"{str(exc).strip() or type(exc).__name__}; nothing was placed",
                    "fix the cause and run again",
                    check="convert",
                )
            ]
        ) from None
    return planned, warnings
