"""The store manifest: what the pipeline's stages depend on.

DVC cannot depend on ``data/`` itself: the folder holds DVC-tracked sidecars, and in a
fresh clone (sidecars not pulled) DVC refuses to hash it ("missing data"). The manifest
lists every file there (records, sidecar pointers, governance events, the identity
registry's files, and any stray file the validate stage reports) with its sha256, the
sha256 of the sidecars present in the work tree, and every folder (an empty folder left
behind by a move is a name the case-clash rule reads), so a stage reruns exactly when
what it reads changes and works whether or not the sidecars were pulled.
It also holds a digest of the tools themselves (this package, templates and theme
included), so the stages depend on one file, not on the package's hundreds. The manifest
is the same in every clone with the same content and tools. Hashes are cached by (size,
mtime and ctime in nanoseconds, inode) in ``build/manifest/hashes.json``, so a large sidecar, or the
15,000 records of a large store, are hashed once, not at every run (the check git and DVC
make too).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from eee.reporting.shown import command
from eee.store.fsutil import write_replacing
from eee.store.identity import IDENTITY_DIR
from eee.store.limits import SIDECAR_MAX_BYTES, Unreadable, iter_chunks
from eee.store.paths import EVENTS_DIR, SIDECAR_SUFFIX


def code_digest(salt: str) -> str:
    """A digest of the code and schemas a stage's output is made by (this package's sources
    and the schema registry), salted with the stage's own format name: an output built by
    other code is built again."""
    import eee
    from eee.store.schemas import default_registry

    h = hashlib.sha256(salt.encode())
    package = Path(eee.__file__).parent
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(json.dumps(sorted(default_registry().ordered)).encode())
    return h.hexdigest()


def package_digest() -> str:
    """A digest of every file of this package (sources, templates, the site's theme),
    by path and bytes."""
    import eee

    h = hashlib.sha256(b"eee-package/1")
    package = Path(eee.__file__).parent
    for dirpath, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = Path(dirpath, name)
            h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def sha256_file(path: Path) -> str:
    """The sha256 of a regular file, read in chunks; a link, pipe, device or oversized file
    is listed by what it is instead (the validate stage reports it), never read."""
    h = hashlib.sha256()
    try:
        for chunk in iter_chunks(path, SIDECAR_MAX_BYTES, "store file"):
            h.update(chunk)
    except Unreadable as exc:
        return f"unreadable: {exc.message}"
    return h.hexdigest()


DEFAULT = Path("build/manifest/store.json")


def _digest(path: str, rel: str, cache: dict[str, Any], fresh: dict[str, Any]) -> str:
    try:
        st = os.lstat(path)
    except OSError:
        return sha256_file(Path(path))
    key = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    known = cache.get(rel)
    if known and known[:4] == key:
        digest = str(known[4])
    else:
        digest = sha256_file(Path(path))
        if digest.startswith("unreadable"):
            return digest  # never cached: said again at every run
    fresh[rel] = [*key, digest]
    return digest


def build(root: Path, cache: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The manifest, and the refreshed hash cache. Paths are plain strings: this runs once
    per file of the store (15,000 records and 10,000 sidecars: a second of pathlib alone)."""
    cache = cache or {}
    fresh: dict[str, Any] = {}
    files: dict[str, str] = {}
    sidecars: dict[str, str] = {}
    folders: list[str] = []
    base = os.path.abspath(root)
    cut = len(base) + 1
    for top in (os.path.join(base, "data"), os.path.join(base, EVENTS_DIR), os.path.join(base, IDENTITY_DIR)):
        for dirpath, dirs, names in os.walk(top):
            here = dirpath[cut:].replace(os.sep, "/")
            folders.extend(f"{here}/{d}" for d in dirs)
            for name in names:
                rel = f"{here}/{name}"
                path = os.path.join(dirpath, name)
                if name.endswith(SIDECAR_SUFFIX):
                    sidecars[rel] = _digest(path, rel, cache, fresh)
                else:  # every other file, stray ones included: the validate stage reports them
                    files[rel] = _digest(path, rel, cache, fresh)
    manifest = {
        "format": "eee-store-manifest/1",
        # the tools the stages run: a change of them runs every stage again (DVC then hashes
        # this one file, not the package's hundreds, for each stage)
        "code": package_digest(),
        "files": dict(sorted(files.items())),
        "sidecars_present": dict(sorted(sidecars.items())),
        # every folder, empty ones included: a folder's name is what the case-clash rule
        # reads, so removing an empty one changes what the validate stage reports
        "folders": sorted(folders),
    }
    return manifest, fresh


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest written at ``path``; ValueError (one line, with the fix) when it cannot be read."""
    import orjson

    try:
        data = orjson.loads(Path(path).read_bytes())
    except (OSError, ValueError) as exc:
        raise ValueError(
            f"{path}: cannot read the store manifest ({exc}); write it with `{command('manifest')}`"
        ) from None
    if not isinstance(data, dict) or data.get("format") != "eee-store-manifest/1":
        raise ValueError(f"{path}: not a store manifest; write it with `{command('manifest')}`")
    return data


def write(root: Path, out: Path | None = None) -> tuple[Path, bool]:
    """Write the manifest; returns (path, whether it changed). Unchanged bytes are not rewritten.
    Read and written with orjson: at 25,000 files the standard library's JSON was a second."""
    import orjson

    out = root / (out or DEFAULT)
    cache_file = out.with_name("hashes.json")
    try:
        cache = orjson.loads(cache_file.read_bytes())
    except (OSError, ValueError):
        cache = {}
    manifest, fresh = build(root, cache if isinstance(cache, dict) else {})
    out.parent.mkdir(parents=True, exist_ok=True)  # the cache file lives there too
    if fresh != cache:
        write_replacing(cache_file, orjson.dumps(fresh), durable=False)
    data = orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"
    try:
        if out.read_bytes() == data:
            return out, False
    except OSError:
        pass
    write_replacing(out, data, durable=False)
    return out, True
