"""Path rules of the store: layout, uuids, portable names, canonical folders.

Pure functions over strings; nothing here touches the file system except
:func:`find_store_root`.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

DATA_DIR = "data"
RECORD_SUFFIX = ".json"
SIDECAR_SUFFIX = "_samples.jsonl"
POINTER_SUFFIX = ".dvc"
EVENTS_DIR = "governance/events"
EVENT_SUFFIX = ".yaml"  # one file per event: governance/events/<id>.yaml

# The kinds of file of a store (:func:`file_kind`).
RECORD, SIDECAR, DVC_POINTER, EVENT, OTHER = "record", "sidecar", "dvc-pointer", "event", "other"

UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
_UUID_ANY_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

_FORBIDDEN_CHARS = set('<>:"\\|?*')
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL"} | {f"COM{i}" for i in range(1, 10)} | {f"LPT{i}" for i in range(1, 10)}
_UNPORTABLE_RE = re.compile(r'[<>:"\\|?*\x00-\x1f\x7f/]')


def new_uuid() -> str:
    """A fresh lowercase canonical UUID v4."""
    import uuid  # lazy: uuid imports platform (~10 ms); only a new record needs it

    return str(uuid.uuid4())


def uuid_problem(text: str) -> str | None:
    """Why ``text`` is not a lowercase canonical UUID v4, or None when it is."""
    if UUID4_RE.match(text):
        return None
    if _UUID_ANY_RE.match(text):
        if text != text.lower():
            return f"uuid {text!r} has uppercase letters; use {text.lower()!r}"
        return f"{text!r} is a UUID but not version 4 (the 13th digit must be 4 and the 17th one of 8, 9, a, b)"
    return f"{text!r} is not a canonical UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, lowercase hex)"


@lru_cache(maxsize=65536)
def component_problem(name: str) -> str | None:
    """Why one path component is not portable across file systems, or None."""
    if name in ("", ".", ".."):
        return f"path component {name!r} is not allowed"
    bad = sorted({c for c in name if c in _FORBIDDEN_CHARS or ord(c) < 32 or ord(c) == 127})
    if bad:
        shown = ", ".join(repr(c) for c in bad)
        return f"path component {name!r} contains characters that are not portable ({shown})"
    if name[-1] in ". ":
        return f"path component {name!r} ends with a dot or a space, which Windows drops"
    stem = name.split(".", 1)[0].upper()
    if stem in _WINDOWS_RESERVED:
        return f"path component {name!r} is a reserved device name on Windows ({stem})"
    return None


def portable_component(name: str) -> str:
    """Turn free text (a model id part) into a portable folder name."""
    out = _UNPORTABLE_RE.sub("-", name.strip())
    out = out.rstrip(". ") or "unknown"
    if out.split(".", 1)[0].upper() in _WINDOWS_RESERVED:
        out = "_" + out
    if out in (".", ".."):
        out = out.replace(".", "_")
    return out


def canonical_folders(model_id: str) -> tuple[str, str] | None:
    """The ``<developer>/<model>`` folders for a ``model_info.id``.

    The developer is the text before the first ``/``; the model is the rest, any further
    ``/`` replaced by ``_`` (``openai/azure/gpt-4o`` -> ``openai``, ``azure_gpt-4o``), and
    characters that are not portable replaced by ``-`` (``qwen2.5:0.5b`` -> ``qwen2.5-0.5b``).
    None when the id has no developer part.
    """
    if "/" not in model_id:
        return None
    developer, model = model_id.split("/", 1)
    if not developer.strip() or not model.strip():
        return None
    return portable_component(developer), portable_component(model.replace("/", "_"))


def canonical_record_path(benchmark: str, model_id: str, record_uuid: str) -> str:
    folders = canonical_folders(model_id)
    if folders is None:
        raise ValueError(f"model_info.id {model_id!r} is not of the form developer/model")
    return f"{DATA_DIR}/{portable_component(benchmark)}/{folders[0]}/{folders[1]}/{record_uuid}{RECORD_SUFFIX}"


def sidecar_path_for(record_path: str) -> str:
    """``.../<uuid>.json`` -> ``.../<uuid>_samples.jsonl`` (any separator)."""
    return record_path[: -len(RECORD_SUFFIX)] + SIDECAR_SUFFIX


def record_path_for_sidecar(sidecar_path: str) -> str:
    """``.../<uuid>_samples.jsonl`` -> ``.../<uuid>.json`` (any separator)."""
    return sidecar_path[: -len(SIDECAR_SUFFIX)] + RECORD_SUFFIX


class StorePath:
    """A file's place in the store, parsed from its path relative to the store root.

    ``rel`` is POSIX and relative to the store root (``data/b/d/m/<uuid>.json``); ``kind``
    is record, sidecar, pointer or other.
    """

    __slots__ = ("benchmark", "developer", "kind", "model", "rel", "uuid")

    def __init__(
        self,
        rel: str,
        kind: str,
        benchmark: str | None = None,
        developer: str | None = None,
        model: str | None = None,
        uuid: str | None = None,
    ) -> None:
        self.rel = rel
        self.kind = kind
        self.benchmark = benchmark
        self.developer = developer
        self.model = model
        self.uuid = uuid


_STEM = {RECORD: RECORD_SUFFIX, SIDECAR: SIDECAR_SUFFIX, DVC_POINTER: SIDECAR_SUFFIX + POINTER_SUFFIX}


def file_kind(rel: str) -> str:
    """The one answer to "what is this file?" for a store-relative (or absolute) path:
    a governance event (``.yaml`` under ``governance/events/``), a DVC pointer of a
    sidecar, a sidecar, a record, or other."""
    if rel.endswith(EVENT_SUFFIX) and (rel.startswith(EVENTS_DIR + "/") or "/" + EVENTS_DIR + "/" in rel):
        return EVENT
    if rel.endswith(SIDECAR_SUFFIX + POINTER_SUFFIX):
        return DVC_POINTER
    if rel.endswith(SIDECAR_SUFFIX):
        return SIDECAR
    if rel.endswith(RECORD_SUFFIX):
        return RECORD
    return OTHER


def classify(rel: str) -> StorePath:
    parts = rel.split("/")
    name = parts[-1]
    kind = file_kind(name)
    if kind not in _STEM:
        return StorePath(rel, OTHER)
    stem = name[: -len(_STEM[kind])]
    if len(parts) == 5 and parts[0] == DATA_DIR:
        return StorePath(rel, kind, parts[1], parts[2], parts[3], stem)
    return StorePath(rel, kind, uuid=stem)


def layout_problems(rel: str, sp: StorePath | None = None) -> list[tuple[str, str]]:
    """Problems with a data file's path: a list of (message, hint)."""
    out: list[tuple[str, str]] = []
    parts = rel.split("/")
    sp = sp or classify(rel)
    if parts[0] != DATA_DIR:
        return [(f"{rel} is not under {DATA_DIR}/", "records live at data/<benchmark>/<developer>/<model>/<uuid>.json")]
    for comp in parts[1:]:
        problem = component_problem(comp)
        if problem:
            out.append((problem, "rename it using letters, digits, '-', '_' and '.' only"))
    if sp.kind == "other":
        if parts[-1] != ".gitignore":
            out.append(
                (
                    f"unexpected file {parts[-1]!r} in the data folder",
                    "data/ holds only <uuid>.json records, <uuid>_samples.jsonl sidecars and their .dvc pointers",
                )
            )
        return out
    if len(parts) != 5:
        what = {RECORD: "<uuid>.json", SIDECAR: "<uuid>_samples.jsonl", DVC_POINTER: "<uuid>_samples.jsonl.dvc"}[
            sp.kind
        ]
        out.append(
            (
                f"wrong depth: {len(parts) - 1} levels under data/, expected 4 (data/<benchmark>/<developer>/<model>/{what})",
                "move the file to data/<benchmark>/<developer>/<model>/ with <developer>/<model> taken from model_info.id",
            )
        )
    problem = None if UUID4_RE.match(sp.uuid or "") else uuid_problem(sp.uuid or "")
    if problem:
        hint = "name the file after a fresh lowercase uuid4 (python -c 'import uuid; print(uuid.uuid4())')"
        if sp.uuid and sp.uuid.lower() != sp.uuid and UUID4_RE.match(sp.uuid.lower()):
            hint = f"rename it to {sp.uuid.lower()}{parts[-1][len(sp.uuid) :]}"
        out.append((f"file name: {problem}", hint))
    return out


@lru_cache(maxsize=4096)
def _is_git_root(directory: str) -> bool:
    return os.path.exists(os.path.join(directory, ".git"))


def find_store_root(path: str | os.PathLike[str]) -> str | None:
    """The store root a data file belongs to: the folder holding its ``data/``.

    Prefers the nearest enclosing git work tree whose ``data/`` contains the file;
    otherwise the parent of the innermost ``data`` component.
    """
    parts = os.path.abspath(path).split(os.sep)
    for i in range(len(parts) - 1, 0, -1):
        ancestor = os.sep.join(parts[:i]) or os.sep
        if _is_git_root(ancestor):
            if i < len(parts) - 1 and parts[i] == DATA_DIR:
                return ancestor
            break
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == DATA_DIR:
            return os.sep.join(parts[:i]) or os.sep
    return None
