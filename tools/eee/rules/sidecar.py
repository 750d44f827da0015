"""Instance-level sidecars (``<uuid>_samples.jsonl``), validated line by line as a stream.

Each row is validated under the instance-level version it declares (``0.3.0`` and
``instance_level_eval_0.2.2`` both name released versions) and must belong to its
aggregate: same ``evaluation_id`` and ``model_id``, and a known ``evaluation_result_id``.
The file's row count and checksum are compared with what the aggregate declares. A
sidecar and its record are a pair: neither comes without the other (:func:`pairing_findings`,
:func:`missing_sidecar_finding`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from itertools import repeat
from pathlib import Path
from typing import Any

from eee.dvc.pointer import Pointer
from eee.reporting.findings import FileResult, Finding
from eee.reporting.shown import command
from eee.rules.agreement import agreement_findings, worth_checking
from eee.rules.pointer import read_pointer
from eee.rules.schema import OncePerFile, near_miss_findings, schema_findings, screen, shape_of
from eee.store.aggregation import Tally
from eee.store.limits import CHUNK, RECORD_MAX_BYTES, SIDECAR_MAX_BYTES, iter_chunks, split_lines
from eee.store.limits import Unreadable as Refused
from eee.store.paths import POINTER_SUFFIX, record_path_for_sidecar
from eee.store.schemas import INSTANCE, Registry
from eee.store.strictjson import JSONProblem, attach_lines, loads_row
from eee.store.tree import Tree, Unreadable

DEFAULT_CAP = 20


def _file_chunks(path: Path) -> Iterator[bytes]:
    """A sidecar on disk in chunks: a regular file, never through a link, at most SIDECAR_MAX_BYTES."""
    yield from iter_chunks(path, SIDECAR_MAX_BYTES, "sidecar", chunk=CHUNK)


def iter_lines(source: Path | Iterable[bytes], *hashers: Any) -> Iterator[bytes]:
    """The lines without their newline of a sidecar (a path) or of a stream of chunks (a
    tree's :meth:`~eee.store.tree.Tree.chunks`), each chunk fed to ``hashers``
    (:func:`eee.store.limits.split_lines`, the one line splitter: the validator, ``eee
    samples add`` and migration read rows through it)."""
    return split_lines(_file_chunks(source) if isinstance(source, Path) else source, *hashers)


_READ = object()  # check_sidecar's default: it reads the pointer beside the sidecar itself


def hash_algorithm(der: Any) -> str | None:
    """The algorithm of a record's sidecar checksum (declared, or told by its length)."""
    if not isinstance(der, dict):
        return None
    alg = der.get("hash_algorithm")
    if alg in ("sha256", "md5"):
        return alg
    checksum = der.get("checksum")
    if isinstance(checksum, str):
        return {64: "sha256", 32: "md5"}.get(len(checksum))
    return None


EMPTY_LINE = "empty line"


def parse_row(line: bytes, file: str, lineno: int) -> tuple[Any, Finding | None]:
    """One sidecar line as strict JSON: ``(row, None)``, or ``(None, finding)`` for an empty
    line, a line that is not JSON, or one with a duplicate key.

    The one strict row parser: the validator and migration (``eee.load_rows``) read rows
    through it. orjson parses; only a line whose compact form differs suspiciously is
    searched for a duplicate key, so the common row costs one parse and one dump."""
    if not line.strip():
        return None, Finding(
            file, "$", EMPTY_LINE, "remove blank lines: every line is one JSON object", line=lineno, check="json"
        )
    try:
        return loads_row(line), None  # strict: duplicate keys, NaN, nesting and integer caps
    except JSONProblem as problem:
        return None, Finding(file, problem.pointer, problem.message, problem.hint, line=lineno, check="json")


_HEX_LENGTH = {"sha256": 64, "md5": 32}
_HEX = frozenset("0123456789abcdefABCDEF")


def checksum_problem(der: Any) -> tuple[str, str, str] | None:
    """(JSON path, message, hint) when a record's sidecar checksum is not one the store can
    check: every declared checksum is verified, so an unknown form is an error, never a skip."""
    if not isinstance(der, dict) or der.get("checksum") is None:
        return None
    checksum = der["checksum"]
    alg = der.get("hash_algorithm")
    where = "$.detailed_evaluation_results.checksum"
    hint = "write the sha256 of the sidecar's bytes as 64 lowercase hex digits (hash_algorithm 'sha256')"
    if not isinstance(checksum, str):
        return where, "the sidecar checksum is not a string", hint
    if alg is not None and alg not in _HEX_LENGTH:
        return "$.detailed_evaluation_results.hash_algorithm", f"unknown hash_algorithm {alg!r} (sha256 or md5)", hint
    expected = _HEX_LENGTH.get(alg) if alg is not None else None
    if expected is None and len(checksum) not in (64, 32):
        return (
            where,
            f"unknown checksum form: {len(checksum)} characters and no hash_algorithm "
            "(a sha256 has 64 hex digits, an md5 32)",
            hint,
        )
    if expected is not None and len(checksum) != expected:
        return where, f"a {alg} checksum has {expected} hex digits, this one {len(checksum)}", hint
    if not set(checksum) <= _HEX:
        return where, "the sidecar checksum is not hexadecimal", hint
    return None


def declared_sidecar_findings(doc: dict[str, Any], file: str) -> list[Finding]:
    """What a record declares about its sidecar that can never be right: a checksum in a
    form that cannot be checked, or an empty sidecar (``total_rows`` 0)."""
    der = doc.get("detailed_evaluation_results")
    if not isinstance(der, dict):
        return []
    out = []
    unknown = checksum_problem(der)
    if unknown is not None:
        out.append(Finding(file, unknown[0], unknown[1], unknown[2], check="sidecar"))
    rows = der.get("total_rows")
    if rows == 0 and not isinstance(rows, bool):
        out.append(
            Finding(
                file,
                "$.detailed_evaluation_results.total_rows",
                "declares an empty sidecar (total_rows 0)",
                "a sidecar holds at least one row; a record without per-sample results leaves out "
                "detailed_evaluation_results",
                check="sidecar",
            )
        )
    return out


NO_RECORD = object()  # pairing_findings: no record beside the sidecar


def pairing_findings(file: str, record_name: str, aggregate: Any) -> tuple[list[Finding], dict[str, Any] | None]:
    """(findings, the record its rows are checked against) for a sidecar whose record
    ``record_name`` beside it is ``aggregate``: the parsed record, None when it cannot be
    read (its own check says why), or :data:`NO_RECORD` when there is none."""
    if aggregate is NO_RECORD:
        return [
            Finding(
                file,
                "$",
                f"sidecar without aggregate: {record_name} does not exist beside it",
                "a sidecar belongs to the record with the same uuid in the same folder; add the record or remove the file",
                check="sidecar",
            )
        ], None
    if aggregate is not None and not isinstance(aggregate.get("detailed_evaluation_results"), dict):
        return [
            Finding(
                file,
                "$",
                f"{record_name} does not declare this sidecar (no detailed_evaluation_results)",
                "the record must point at its sidecar: set detailed_evaluation_results.file_path, checksum and total_rows",
                check="sidecar",
            )
        ], None
    return [], aggregate


def missing_sidecar_finding(file: str, name: str, shown: str) -> Finding:
    """A record declares a sidecar (``name``, shown as ``shown``) that is neither beside it nor in DVC."""
    return Finding(
        file,
        "$.detailed_evaluation_results",
        f"declares a sidecar but neither {name} nor its DVC pointer {name}.dvc exists",
        f"add the sidecar with `{command('samples', 'add', shown)}`, or drop detailed_evaluation_results",
        check="sidecar",
    )


class _Collector:
    def __init__(self, result: FileResult, cap: int) -> None:
        self.result = result
        self.cap = cap

    def add(self, finding: Finding) -> None:
        if finding.severity == "error" and self.result.errors - self.result.suppressed >= self.cap:
            self.result.suppressed += 1
        else:
            self.result.findings.append(finding)

    @property
    def full(self) -> bool:
        return self.result.errors - self.result.suppressed >= self.cap


def _result_ids(aggregate: dict[str, Any] | None) -> set[str]:
    """The ``evaluation_result_id`` strings of an aggregate's results."""
    results = aggregate.get("evaluation_results") if aggregate else None
    if not isinstance(results, list):
        return set()
    try:  # results that are all objects (any valid record): the ids in one C loop
        ids = set(map(dict.get, results, repeat("evaluation_result_id")))
    except TypeError:
        ids = {r.get("evaluation_result_id") for r in results if isinstance(r, dict)}
    if any(i.__class__ is not str for i in ids):
        ids = {i for i in ids if isinstance(i, str)}
    return ids


def check_sidecar(
    tree: Tree,
    rel: str,
    file: str,
    registry: Registry,
    aggregate: dict[str, Any] | None,
    result: FileResult,
    cap: int = DEFAULT_CAP,
    pointer: Any = _READ,
) -> None:
    """Validate the sidecar ``rel`` of ``tree`` into ``result`` (rows, findings). ``pointer``:
    the DVC pointer beside it, as :func:`read_pointer` gives it, when the caller has it."""
    out = _Collector(result, cap)
    der = aggregate.get("detailed_evaluation_results") if aggregate else None
    der = der if isinstance(der, dict) else {}
    alg = hash_algorithm(der)
    hasher = hashlib.new(alg) if alg else None
    if pointer is _READ:
        pointer = read_pointer(tree, rel + POINTER_SUFFIX)
    if not isinstance(pointer, Pointer):
        pointer = None  # none beside it, or not one: the pointer's own check says why
    dvc_md5 = hashlib.md5(usedforsecurity=False) if pointer is not None and pointer.md5 else None
    eval_id = aggregate.get("evaluation_id") if aggregate else None
    info = aggregate.get("model_info") if aggregate else None
    model_id = info.get("id") if isinstance(info, dict) else None
    result_ids = _result_ids(aggregate)
    # the rows gathered per result for the rule items-agree, where the record has a result to check
    tally = Tally(aggregate) if aggregate is not None and worth_checking(aggregate) else None
    schema_invalid = False  # a row unreadable or failing its schema: the items cannot recompute the score
    validators: dict[Any, tuple[str, Any] | None] = {}
    once = OncePerFile()
    rows = 0
    versions: set[str] = set()
    lineno = 0
    # the hot loop of the validator: one pass per row, no allocation beyond the parse
    lines = iter_lines(tree.chunks(rel, SIDECAR_MAX_BYTES), hasher, dvc_md5)
    while True:
        try:
            line = next(lines)
        except StopIteration:
            break
        except Unreadable as exc:  # the file could not be read (or not to the end)
            result.findings.append(exc.finding)
            once.finish()
            return
        except Refused as exc:  # a line over the row cap
            result.findings.append(Finding(file, "$", exc.message, exc.hint, check="input"))
            return
        lineno += 1
        row, problem = parse_row(line, file, lineno)
        if problem is not None:
            schema_invalid = True
            if problem.message != EMPTY_LINE:
                rows += 1
            out.add(problem)
            continue
        rows += 1
        if type(row) is not dict:
            schema_invalid = True
            out.add(
                Finding(
                    file, "$", f"a row must be a JSON object, not {type(row).__name__}", None, line=lineno, check="json"
                )
            )
            continue
        declared = row.get("schema_version")
        try:
            entry = validators[declared]
        except (KeyError, TypeError):
            version = registry.resolve(declared, INSTANCE)
            entry = (version, screen(registry, version, INSTANCE)) if version else None
            if isinstance(declared, str) or declared is None:
                validators[declared] = entry
        if entry is None:
            schema_invalid = True
            out.add(
                Finding(
                    file,
                    "$.schema_version",
                    f"unknown instance-level schema_version {declared!r}; supported: {registry.supported_text()}",
                    "declare a released version, e.g. '0.3.0' (the spelling 'instance_level_eval_0.2.2' is accepted too)",
                    line=lineno,
                    check="version",
                )
            )
            continue
        version, screen_validator = entry
        versions.add(version)
        if not screen_validator.is_valid(row):  # invalid, or an unknown key: look closer
            shape = shape_of(registry, version, INSTANCE)
            validator = registry.validator(version, INSTANCE)
            if validator.is_valid(row):
                for f in near_miss_findings(row, shape, file, version, line=lineno):
                    if once.first(f):
                        out.add(f)
            elif out.full:
                schema_invalid = True
                result.suppressed += 1
            else:
                schema_invalid = True
                for f in schema_findings(validator, row, file, version, line=lineno, limit=cap, shape=shape):
                    if f.severity == "error" or once.first(f):
                        out.add(f)
        if aggregate is None:
            continue
        if tally is not None:
            tally.add(row)
        if row.get("evaluation_id") != eval_id:
            out.add(
                Finding(
                    file,
                    "$.evaluation_id",
                    f"evaluation_id {row.get('evaluation_id')!r} differs from the aggregate's {eval_id!r}",
                    "every row repeats its aggregate record's evaluation_id",
                    line=lineno,
                    check="sidecar",
                )
            )
        if row.get("model_id") != model_id:
            out.add(
                Finding(
                    file,
                    "$.model_id",
                    f"model_id {row.get('model_id')!r} differs from the aggregate's model_info.id {model_id!r}",
                    "every row repeats its aggregate record's model_info.id",
                    line=lineno,
                    check="sidecar",
                )
            )
        rid = row.get("evaluation_result_id")
        if isinstance(rid, str) and result_ids and rid not in result_ids:
            out.add(
                Finding(
                    file,
                    "$.evaluation_result_id",
                    f"evaluation_result_id {rid!r} names no result of the aggregate record",
                    "use one of: " + ", ".join(sorted(result_ids)[:5]) + (" ..." if len(result_ids) > 5 else ""),
                    line=lineno,
                    check="sidecar",
                )
            )
    once.finish()
    result.rows = rows
    if rows == 0:
        out.add(
            Finding(
                file,
                "$",
                "the sidecar is empty (no rows)",
                "a sidecar holds one JSON object per line, at least one; a record without per-sample results "
                "leaves out detailed_evaluation_results",
                check="sidecar",
            )
        )
    if dvc_md5 is not None and pointer is not None and dvc_md5.hexdigest() != pointer.md5:
        out.add(
            Finding(
                file,
                "$",
                f"the file differs from what its DVC pointer recorded (md5 {dvc_md5.hexdigest()} vs {pointer.md5})",
                f"the sidecar changed after `samples add`; restore it with `{command('samples', 'pull', file)}`",
                check="sidecar",
            )
        )
    if versions:
        result.schema_version = ",".join(sorted(versions))
    if not aggregate:
        return
    for finding in matches_record(der, file, rows, alg, hasher.hexdigest() if hasher is not None else None):
        out.add(finding)
    if tally is not None and not schema_invalid:  # rows unreadable or invalid are reported as such, never tallied
        record_rel = record_path_for_sidecar(rel)
        found = agreement_findings(aggregate, tally, tree.display(record_rel))
        if found:
            try:
                attach_lines(found, tree.read(record_rel, RECORD_MAX_BYTES))
            except Unreadable:
                pass
            result.findings.extend(found)  # the record's own findings, never capped among the rows'


def matches_record(der: dict[str, Any], file: str, rows: int, alg: str | None, actual: str | None) -> list[Finding]:
    """A sidecar matches its record: its row count and checksum are what the record's
    ``detailed_evaluation_results`` declares (its path is :func:`eee.rules.record.sidecar_pointer_findings`).

    ``rows`` and ``actual`` (the file's digest under ``alg``) come from one read of the
    file. The validator and ``eee samples add`` (through the validator) use this check."""
    out: list[Finding] = []
    declared_rows = der.get("total_rows")
    if isinstance(declared_rows, int) and not isinstance(declared_rows, bool) and declared_rows != rows:
        out.append(
            Finding(
                file,
                "$",
                f"the file has {rows} rows but the aggregate declares total_rows {declared_rows}",
                "set detailed_evaluation_results.total_rows to the number of rows (`samples add` checks it)",
                check="sidecar",
            )
        )
    checksum = der.get("checksum")
    unknown = checksum_problem(der)
    if unknown is not None:  # every declared checksum is checked: an unknown form is no way around it
        out.append(
            Finding(
                file,
                "$",
                f"the checksum its aggregate declares cannot be checked: {unknown[1]}",
                unknown[2],
                check="sidecar",
            )
        )
    elif actual is not None and isinstance(checksum, str):
        if actual != checksum.lower():
            out.append(
                Finding(
                    file,
                    "$",
                    f"{alg} of the file is {actual} but the aggregate declares {checksum}",
                    "the sidecar changed after the record was written, or the checksum is wrong; records are immutable, "
                    "so add a corrected record and supersede this one",
                    check="sidecar",
                )
            )
    elif checksum is None:
        out.append(
            Finding(
                file,
                "$",
                "the aggregate declares no checksum for this sidecar",
                "set detailed_evaluation_results.checksum (sha256 of the file) and hash_algorithm 'sha256'",
                severity="warning",
                check="sidecar",
            )
        )
    return out
