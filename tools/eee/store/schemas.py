"""The released schema versions: registry, sha256 pins and compiled validators.

``schemas/registry.json`` lists every released version, marks the current one and pins
the sha256 of each released file. A released file never changes; when one no longer
matches its pin, nothing is validated (:class:`PinMismatch`).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

EVAL = "eval"
INSTANCE = "instance_level_eval"
KINDS = (EVAL, INSTANCE)
INSTANCE_PREFIX = "instance_level_eval_"
REGISTRY_NAME = "registry.json"


def project_root() -> Path:
    """The checkout this package lives in (tools/eee/store/ -> the project root)."""
    return Path(__file__).resolve().parents[3]


def schemas_dir() -> Path:
    override = os.environ.get("EEE_SCHEMAS_DIR")
    return Path(override) if override else project_root() / "schemas"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class RegistryError(Exception):
    """The registry is missing, malformed, or a released file does not match its pin."""


class PinMismatch(RegistryError):
    pass


@dataclass
class Registry:
    root: Path
    current: str
    versions: dict[str, dict[str, str]]  # version -> {file name -> sha256}
    extra: dict[str, dict[str, str]] = field(default_factory=dict)  # other pinned files, by folder
    _validators: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, root: Path | None = None, verify: bool = True) -> Registry:
        root = root or schemas_dir()
        path = root / REGISTRY_NAME
        try:
            raw = orjson.loads(path.read_bytes())
            versions = {str(v): dict(files) for v, files in raw["versions"].items()}
            reg = cls(root, str(raw["current"]), versions, {k: dict(v) for k, v in raw.get("pinned", {}).items()})
        except FileNotFoundError:
            raise RegistryError(f"{path}: the schema registry is missing") from None
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise RegistryError(f"{path}: the schema registry is malformed ({exc})") from None
        if reg.current not in reg.versions:
            raise RegistryError(f"{path}: current version {reg.current} is not among the released versions")
        if verify:
            reg.verify()
        return reg

    def pinned_files(self) -> dict[str, str]:
        """Every pinned file, relative to the schemas folder, with its sha256."""
        out = {f"{v}/{name}": digest for v, files in self.versions.items() for name, digest in files.items()}
        for folder, files in self.extra.items():
            out.update({f"{folder}/{name}": digest for name, digest in files.items()})
        return out

    def verify(self) -> None:
        problems = []
        for rel, digest in sorted(self.pinned_files().items()):
            path = self.root / rel
            try:
                actual = sha256_file(path)
            except FileNotFoundError:
                problems.append(f"schemas/{rel}: released file is missing")
                continue
            if actual != digest:
                problems.append(f"schemas/{rel}: sha256 {actual[:12]}... does not match its pin {digest[:12]}...")
        if problems:
            raise PinMismatch(
                "; ".join(problems) + ". Released schema files never change: restore them (git checkout -- schemas/) "
                "and release a new version instead"
            )

    @cached_property
    def ordered(self) -> list[str]:
        return sorted(self.versions, key=version_key)

    def supported_text(self) -> str:
        return ", ".join(v + (" (current)" if v == self.current else "") for v in self.ordered)

    def resolve(self, declared: Any, kind: str) -> str | None:
        """The released version a ``schema_version`` value names, or None."""
        if not isinstance(declared, str):
            return None
        if kind == INSTANCE and declared.startswith(INSTANCE_PREFIX):
            declared = declared[len(INSTANCE_PREFIX) :]
        return declared if declared in self.versions else None

    def schema_path(self, version: str, kind: str) -> Path:
        return self.root / version / f"{kind}.schema.json"

    def schema(self, version: str, kind: str) -> dict[str, Any]:
        return orjson.loads(self.schema_path(version, kind).read_bytes())

    def other_validator(self, folder: str, name: str) -> Any:
        """A validator for another pinned schema file (e.g. governance/event.schema.json)."""
        key = (f"{folder}/{name}", "")
        found = self._validators.get(key)
        if found is None:
            import jsonschema_rs  # lazy: jsonschema_rs costs ~70 ms; only when a schema is first compiled

            found = jsonschema_rs.Draft7Validator(orjson.loads((self.root / folder / name).read_bytes()))
            self._validators[key] = found
        return found

    def validator(self, version: str, kind: str) -> Any:
        key = (version, kind)
        found = self._validators.get(key)
        if found is None:
            import jsonschema_rs  # lazy: as above

            found = jsonschema_rs.Draft7Validator(self.schema(version, kind))
            self._validators[key] = found
        return found


_DEFAULT: Registry | None = None


def default_registry() -> Registry:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Registry.load()
    return _DEFAULT
