"""What the catalogue pages were made from at the last ``eee site pages``, so that a run
renders only the benchmarks and records that changed (one more record: its benchmark's
pages, its own page or its shared page, and the index).

A page is rendered from catalogue rows and a few things of the whole store. Those are
digested at three levels:

- the *frame*: this package's code and templates, the catalogue's code, the limits
  (``extra.catalogue``), which records have a page of their own, the records with a
  governance history and that history, the identity registry, the import manifests, the
  repository URL; any change renders everything again;
- a *benchmark* (the pages of one canonical benchmark): the frame, and the catalogue's key
  of each partition it lists (its records' paths and sha256 and their governance columns:
  :func:`eee.catalog.table.partition_keys`) and the Parquet files it links;
- a *record* (its own page, or its section of a shared page): the frame, its path, its
  sha256 (the store manifest's) and its governance columns.

The ledger's history of the records that have one (each event, the commit that added it and
who signed it, which is git's to say) is part of the frame. What is kept is the file the last run
wrote into the pages folder (``build/docs``), left alone; a shared page is rendered again
when one of its sections changed, from the sections kept beside the cache. The cache lives
beside the pages folder (``build/.docs-cache/``), never in it; anything it does not account
for, or a kept page that is missing, is simply rendered.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from eee.store.fsutil import replace_file

FORMAT = "eee-catalogue-pages/1"


def digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def code_digest() -> str:
    """This package's sources and templates (what renders the pages)."""
    h = hashlib.sha256(FORMAT.encode())
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
    replace_file(tmp, path)


class PagesCache:
    """The last run's record (``folder``/index.json, and each shared page's sections) for the
    pages folder ``out``. ``digests``: the store manifest's sha256 by path (else files are
    hashed); ``partitions``: the catalogue's partition keys (else no benchmark is kept)."""

    def __init__(
        self,
        folder: Path | None,
        out: Path,
        digests: dict[str, str] | None = None,
        partitions: dict[str, str] | None = None,
    ) -> None:
        self.folder, self.out, self.root = folder, out, None
        self.digests = digests or {}
        self.partitions = partitions or {}
        old: dict[str, Any] = {}
        if folder is not None:
            try:
                old = json.loads((folder / "index.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                old = {}
        self.old = old if isinstance(old, dict) and old.get("format") == FORMAT else {}
        self.frame = ""
        self.groups: dict[str, Any] = {}  # this run's benchmarks, as the index keeps them
        self.shared: dict[str, str] = {}  # shared page key -> digest of its sections
        self.sections: dict[str, dict[str, str]] = {}  # shared page key -> {uuid: section}, written now

    @classmethod
    def beside(cls, root: Path, out: Path) -> PagesCache:
        """The cache of the pages folder ``out`` (``build/.docs-cache`` beside ``build/docs``),
        with the store manifest's sha256s and the catalogue's partition keys when the pipeline
        wrote them (``build/manifest/store.json``, ``build/catalog/.partitions.json``)."""
        from eee.catalog.table import CATALOG_DIR, KEYS_FILE, KEYS_FORMAT
        from eee.store.manifest import DEFAULT, read_manifest

        try:
            digests = read_manifest(root / DEFAULT).get("files") or {}
        except ValueError:
            digests = {}
        try:
            data = json.loads((root / CATALOG_DIR / KEYS_FILE).read_text(encoding="utf-8"))
            keys = data["partitions"] if data.get("format") == KEYS_FORMAT else {}
            partitions = {str(b): str(e["key"]) for b, e in keys.items() if isinstance(e, dict) and e.get("key")}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            partitions = {}
        return cls(out.parent / f".{out.name}-cache", out, digests, partitions)

    @classmethod
    def off(cls, out: Path) -> PagesCache:
        """No cache: every page is rendered, nothing is kept."""
        return cls(None, out)

    def start(self, root: Path, *frame: Any) -> None:
        """The frame of this run; a different one than the last run's keeps nothing."""
        self.root = root
        self.frame = digest(FORMAT, code_digest(), *frame)
        if self.old.get("frame") != self.frame:
            self.old = {}

    def group_key(self, folders: list[str], files: list[str]) -> str | None:
        """The key of one benchmark's pages; None when a partition has no catalogue key."""
        if self.folder is None or any(f not in self.partitions for f in folders):
            return None
        return digest(self.frame, [(f, self.partitions[f]) for f in sorted(folders)], files)

    def kept_group(self, name: str, key: str | None) -> dict[str, Any] | None:
        """The last run's entry of benchmark ``name`` when its key is ``key`` and every page it
        wrote is still in the pages folder."""
        old = (self.old.get("groups") or {}).get(name)
        if key is None or not old or old.get("key") != key:
            return None
        if not all((self.out / page).is_file() for page in old.get("pages") or []):
            return None
        if not all((self.out / f"catalogue/records/{u}.md").is_file() for u in old.get("own") or {}):
            return None
        return dict(old)

    def record_key(self, uuid: str, path: str, fields: dict[str, Any]) -> str:
        sha = self.digests.get(path)
        if sha is None and self.root is not None:
            from eee.store.manifest import sha256_file

            sha = sha256_file(self.root / path)
        return digest(self.frame, uuid, path, sha, fields)

    def kept_record(self, name: str, kind: str, uuid: str) -> str | None:
        """The key the last run rendered ``uuid``'s own page (``kind`` "own") or section
        ("sections") with, in benchmark ``name``."""
        old = (self.old.get("groups") or {}).get(name) or {}
        return (old.get(kind) or {}).get(uuid)

    def kept_shared(self, key: str, now: str) -> bool:
        """Whether shared page ``key`` was made from the same sections and is still there."""
        return (self.old.get("shared") or {}).get(key) == now

    def old_sections(self, key: str) -> dict[str, str]:
        if self.folder is None or not self.old:
            return {}
        try:
            data = json.loads((self.folder / f"sections-{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save(self) -> None:
        """Write this run's record (after the pages were written)."""
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for key, sections in self.sections.items():
            _atomic(self.folder / f"sections-{key}.json", sections)
        for name in os.listdir(self.folder):  # sections of shared pages that are gone
            if name.startswith("sections-") and name[len("sections-") : -len(".json")] not in self.shared:
                (self.folder / name).unlink(missing_ok=True)
        _atomic(
            self.folder / "index.json",
            {"format": FORMAT, "frame": self.frame, "groups": self.groups, "shared": self.shared},
        )

    def forget(self) -> None:
        """Before pages are written: a run that fails half-way leaves no record of them."""
        if self.folder is not None:
            (self.folder / "index.json").unlink(missing_ok=True)
