"""JSON Schema errors (from jsonschema-rs) as findings with readable messages and hints."""

from __future__ import annotations

import json
from typing import Any

from eee.findings import Finding
from eee.jsonpath import format_path

MAX_ERRORS_PER_DOC = 20

_SOURCE_DATA_HINT = (
    "source_data takes one of three forms: {source_type: 'url', dataset_name, url: [...]}, "
    "{source_type: 'hf_dataset', dataset_name, hf_repo?}, or {source_type: 'other', dataset_name}"
)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _hint(kind: str, path: list[Any], message: str, version: str) -> str | None:
    last = path[-1] if path else None
    parent = path[-2] if len(path) >= 2 else None
    if kind == "Required":
        field = message.split('"')[1] if '"' in message else "the field"
        if field in ("deployment_type", "model_availability"):
            return f"add model_info.additional_details.{field}; use 'unknown' when the source does not say"
        if field == "eval_library":
            return "add eval_library: {name, version}; write 'unknown' for what the source does not say"
        return f"add {field!r} (see the schema reference for version {version})"
    if kind == "AdditionalProperties":
        return "remove the field or fix its spelling; free-form facts go under an additional_details object"
    if kind == "OneOfNotValid" and last == "source_data":
        return _SOURCE_DATA_HINT
    if kind == "OneOfNotValid" and last in ("min_score", "max_score"):
        return 'write a number, the string "Infinity"/"-Infinity" for an unbounded limit, or null'
    if kind == "Type" and parent in ("additional_details", "details", "metadata", "config", "parameters"):
        return "values here must be strings; write numbers and objects as JSON text"
    if kind == "Type" and last == "additional_details":
        return "additional_details is an object whose values are strings"
    if kind == "Enum":
        return "use one of the listed values"
    if kind == "Type":
        return "change the value to the expected type"
    return None


def _brief(value: Any) -> str:
    """A short rendering of an offending value for a one-line message."""
    if isinstance(value, dict):
        return "an object" if value else "an empty object"
    if isinstance(value, list):
        return "an array" if value else "an empty array"
    text = json.dumps(value, ensure_ascii=False)
    return _short(text, 60)


def _message(err: Any, kind: str) -> str:
    k = err.kind
    instance = getattr(err, "instance", None)
    if kind == "Type":
        types = " or ".join(f'"{t}"' for t in k.types)
        return f"{_brief(instance)} is not of type {types}"
    if kind == "Enum":
        options = ", ".join(_short(str(o), 40) for o in k.options)
        return f"{_brief(instance)} is not one of {options}"
    if kind in ("OneOfNotValid", "AnyOf"):
        return "matches none of the allowed forms"
    if kind == "OneOfMultipleValid":
        return "matches more than one of the allowed forms"
    if kind == "MinItems":
        return f"{_brief(instance)}: needs at least {k.limit} item{'s' if k.limit != 1 else ''}"
    if kind == "Constant":
        return f"{_brief(instance)} is not {_brief(k.expected_value)}"
    return _short(err.message, 200)


def schema_findings(
    validator: Any, doc: Any, file: str, version: str, line: int | None = None, limit: int = MAX_ERRORS_PER_DOC
) -> list[Finding]:
    """Findings for every schema error in ``doc`` (up to ``limit``)."""
    out: list[Finding] = []
    for err in validator.iter_errors(doc):
        path = list(err.instance_path)
        kind = type(err.kind).__name__
        out.append(
            Finding(
                file=file,
                pointer=format_path(path),
                message=f"{_message(err, kind)} (schema {version})",
                hint=_hint(kind, path, err.message, version),
                line=line,
                check="schema",
            )
        )
        if len(out) >= limit:
            break
    return out
