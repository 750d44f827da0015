"""Sidecars in DVC at the cost of what is touched: pointer, cache and remote through DVC's
own libraries (``dvc-data``, ``dvc-objects``, and DVC's config and file-system factory),
never through ``dvc.repo``.

Stock DVC loads and parses every ``.dvc`` file of the repository on each ``dvc add``,
``dvc push`` and ``dvc pull`` (its index), so those grow with the store. Here a sidecar
costs what it is: its hash, one copy into the cache, one pointer, one ``.gitignore``
line; push and pull move the named objects only, one existence check each.

What is written is exactly what DVC writes, so stock ``dvc status``, ``dvc pull`` and
``dvc push`` read it (the tests check both directions against real DVC):

- the pointer ``<uuid>_samples.jsonl.dvc``, in the shape ``dvc add`` writes::

      outs:
      - md5: <md5 of the file>
        size: <bytes>
        hash: md5
        path: <uuid>_samples.jsonl

- the cache object ``<cache>/files/md5/<2 hex>/<30 hex>`` (read-only, as DVC leaves it),
  the cache being ``cache.dir`` from DVC's config or ``.dvc/cache``;
- on the remote (``core.remote``, or the one named), the object at
  ``<url>/files/md5/<2 hex>/<30 hex>``, through the same file system DVC would build from
  ``.dvc/config`` and ``.dvc/config.local`` (a local folder, S3, GCS, HTTP, ...).

The validator and the hooks read pointers themselves (:mod:`eee.dvc.pointer`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from eee.dvc.pointer import PointerError, parse
from eee.reporting.findings import Finding, Refused
from eee.reporting.shown import command
from eee.store.fsutil import write_replacing
from eee.store.paths import POINTER_SUFFIX, SIDECAR_SUFFIX

if TYPE_CHECKING:
    from dvc_data.hashfile.db import HashFileDB

HASH = "md5"
FILES = ("files", HASH)  # DVC 3's object layout below a cache or a remote
# a name DVC's YAML writer leaves unquoted (the store's sidecar names always are)
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _refuse(message: str, file: str = "", hint: str | None = None) -> Refused:
    return Refused(Finding(file, "$", message, hint, check="dvc"))


def pointer_text(name: str, md5: str, size: int, isexec: bool = False) -> str:
    """The pointer ``dvc add`` writes for one file called ``name`` (same bytes)."""
    if not _PLAIN.match(name):
        raise _refuse(f"{name!r} is not a sidecar name DVC writes unquoted", name)
    exec_line = "  isexec: true\n" if isexec else ""
    return f"outs:\n- md5: {md5}\n  size: {size}\n{exec_line}  hash: md5\n  path: {name}\n"


class Target(NamedTuple):
    """One sidecar named by a command: its pointer, the file it tracks and the object."""

    pointer: Path
    sidecar: Path
    md5: str
    size: int | None


def read_pointer(pointer: Path) -> Target:
    """The sidecar a pointer tracks; Refused when it is not a DVC 3 pointer of one file."""
    try:
        text = pointer.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _refuse(
            "no such pointer",
            str(pointer),
            f"add the sidecar first: `{command('samples', 'add', pointer.with_name(pointer.name.removesuffix('.dvc')))}`",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(f"cannot read the pointer: {exc}", str(pointer)) from None
    try:
        p = parse(text)
    except PointerError as exc:
        raise _refuse(str(exc), str(pointer)) from None
    if not p.path or "/" in p.path or "\\" in p.path or p.path in (".", ".."):
        raise _refuse(f"the pointer names {p.path!r}, not a file beside it", str(pointer))
    if p.hash != HASH or not p.md5 or not re.fullmatch(r"[0-9a-f]{32}", p.md5):
        raise _refuse(
            "not a DVC 3 pointer (hash: md5 with an md5 value)",
            str(pointer),
            "pointers written by DVC 2 are moved with stock `dvc push` / `dvc pull`",
        )
    return Target(pointer, pointer.parent / p.path, p.md5, p.size)


class DvcStore:
    """The DVC side of one store: its config, its cache, its remotes. Nothing here reads
    the repository's other pointers."""

    def __init__(self, root: Path, dvc_dir: Path | None = None) -> None:
        self.root = Path(root).resolve()
        dvc_dir = Path(dvc_dir).resolve() if dvc_dir is not None else self.root / ".dvc"
        if not dvc_dir.is_dir():
            raise _refuse(
                f"{self.root}: DVC is not initialised in this store"
                if dvc_dir == self.root / ".dvc"
                else f"{dvc_dir}: no such DVC folder (its config names the remote)",
                hint="run `python3 tools/dev.py setup` (or `dvc init`) first",
            )
        self.dvc_dir = dvc_dir
        try:
            from dvc.config import Config, ConfigError
        except ImportError:
            raise _refuse("DVC is not installed in this environment", hint="run `python3 tools/dev.py setup`") from None
        try:
            self.config = Config(dvc_dir=str(dvc_dir))
        except ConfigError as exc:
            raise _refuse(f"DVC's configuration is not valid: {exc}", ".dvc/config") from None
        self._cache: HashFileDB | None = None

    # -- the local cache ---------------------------------------------------------------

    @property
    def cache(self) -> HashFileDB:
        """The local cache's object database, built the way DVC's CacheManager builds it."""
        if self._cache is None:
            from dvc.config_schema import LOCAL_COMMON
            from dvc.fs import get_cloud_fs
            from dvc_data.hashfile.db import get_odb

            conf = self.config["cache"]
            if conf.get("local"):
                settings: dict[str, Any] = {"name": conf["local"]}
            else:
                settings = {"url": conf.get("dir") or str(self.dvc_dir / "cache")}
                settings.update({str(opt): conf[opt] for opt in LOCAL_COMMON if opt in conf})
            cls, fs_conf, path = get_cloud_fs(self.config, **settings)
            if cls.protocol not in ("local", "file"):
                raise _refuse(f"the cache is not a local folder ({cls.protocol})", ".dvc/config")
            fs = cls(**fs_conf)
            self._cache = get_odb(fs, fs.join(path, *FILES), hash_name=HASH, **fs_conf)
        return self._cache

    # -- remotes -----------------------------------------------------------------------

    def remote_name(self, name: str | None = None) -> str | None:
        """The remote a command uses: the one named, else ``core.remote``."""
        return name or self.config["core"].get("remote")

    def remote(self, name: str | None = None) -> HashFileDB:
        """The named remote's (default: ``core.remote``) object database, from the same
        file system DVC builds from its config (credentials stay in DVC's config)."""
        from dvc.config import ConfigError
        from dvc.fs import get_cloud_fs
        from dvc_data.hashfile.db import get_odb

        name = self.remote_name(name)
        if not name:
            raise _refuse(
                "no DVC remote is set up for this store",
                ".dvc/config",
                "dvc remote add -d NAME URL (see docs/guide/sidecars.md)",
            )
        try:
            cls, fs_conf, path = get_cloud_fs(self.config, name=name)
            if fs_conf.get("worktree") or fs_conf.get("version_aware"):
                raise _refuse(
                    f"remote {name!r} is a cloud-versioned (worktree / version_aware) remote",
                    ".dvc/config",
                    "move its sidecars with stock `dvc push` / `dvc pull`",
                )
            fs = cls(**fs_conf)
        except ConfigError as exc:
            raise _refuse(f"remote {name!r}: {exc}", ".dvc/config") from None
        except ImportError as exc:  # e.g. s3:// without dvc-s3
            raise _refuse(
                f"remote {name!r}: {exc}", ".dvc/config", "pip install 'dvc[s3]' (or the extra for its scheme)"
            ) from None
        except Refused:
            raise
        except Exception as exc:  # a missing plug-in (RemoteMissingDepsError) or a bad URL
            raise _refuse(f"remote {name!r}: {type(exc).__name__}: {exc}", ".dvc/config") from None
        return get_odb(fs, fs.join(path, *FILES), hash_name=HASH, **fs_conf)

    # -- add -----------------------------------------------------------------------------

    def add(self, sidecars: list[Path]) -> list[Path]:
        """Hash each sidecar, copy it into the cache, write its pointer beside it and list
        it in the folder's ``.gitignore`` (as ``dvc add`` does). Returns the pointers."""
        from dvc_data.hashfile.hash import hash_file
        from dvc_objects.fs import localfs

        targets: list[tuple[Path, Path, str, str]] = []
        for sidecar in sidecars:
            path = str(sidecar)
            info = localfs.info(path)
            meta, hash_info = hash_file(path, localfs, HASH, info=info)
            assert hash_info.value
            text = pointer_text(sidecar.name, hash_info.value, int(meta.size or 0), bool(meta.isexec))
            targets.append((sidecar, sidecar.with_name(sidecar.name + POINTER_SUFFIX), hash_info.value, text))
        cache = self.cache
        # the cache first: a pointer never names an object the cache does not hold
        cache.add([str(s) for s, *_ in targets], localfs, [oid for _, _, oid, _ in targets])
        for _sidecar, pointer, oid, text in targets:
            if not cache.exists(oid):
                raise _refuse("the object did not reach DVC's cache", str(pointer))
            _replace(pointer, text.encode())
        ignore_in_git([s for s, *_ in targets])
        return [p for _, p, _, _ in targets]

    # -- push / pull -------------------------------------------------------------------

    def push(self, targets: list[Target], remote: str | None = None) -> Transfer:
        """Upload the named sidecars' objects that the remote lacks (one existence check
        each). An object missing from the cache is taken from the sidecar when the file
        still matches its pointer."""
        from dvc_objects.fs import localfs

        result = Transfer()
        cache = self.cache
        have: list[Target] = []
        for t in _unique(targets):
            if not cache.exists(t.md5) and t.sidecar.is_file() and _md5(t.sidecar) == t.md5:
                cache.add(str(t.sidecar), localfs, t.md5)
            if cache.exists(t.md5):
                have.append(t)
            else:
                result.failed.append(_finding(t, "neither the local cache nor the work tree holds this sidecar"))
        if not have:
            return result
        odb = self.remote(remote)
        there = _exists(odb, [t.md5 for t in have])
        todo = [t for t, ok in zip(have, there, strict=True) if not ok]
        result.present = len(have) - len(todo)
        if todo:
            errors: dict[str, BaseException] = {}
            odb.add(
                [cache.oid_to_path(t.md5) for t in todo],
                cache.fs,
                [t.md5 for t in todo],
                check_exists=False,
                on_error=lambda oid, exc: errors.__setitem__(oid, exc),
            )
            for t in todo:
                if t.md5 in errors:
                    result.failed.append(_finding(t, f"upload failed: {_why(errors[t.md5])}"))
                else:
                    result.moved.append(t)
        return result

    def pull(self, targets: list[Target], remote: str | None = None) -> Transfer:
        """Fetch the named sidecars' objects the cache lacks, check each hashes to its name,
        and place each sidecar in the work tree (never over a file that differs)."""
        result = Transfer()
        cache = self.cache
        wanted: list[Target] = []
        for t in _unique(targets):
            if t.sidecar.is_file():
                if _md5(t.sidecar) == t.md5:
                    result.present += 1
                else:
                    result.failed.append(
                        _finding(
                            t,
                            "the sidecar in the work tree differs from its pointer; not overwritten",
                            "move it aside (or restore the pointer) and pull again",
                        )
                    )
                continue
            wanted.append(t)
        missing = [t for t in wanted if not _in_cache(cache, t.md5)]
        if missing:
            odb = self.remote(remote)
            errors: dict[str, BaseException] = {}
            there = _exists(odb, [t.md5 for t in missing])
            for t, ok in zip(missing, there, strict=True):
                if not ok:
                    result.failed.append(
                        _finding(
                            t,
                            f"not on remote {self.remote_name(remote)!r}",
                            f"push it from a clone that has it (`{command('samples', 'push', t.sidecar)}`), "
                            "or pull from another remote with -r",
                        )
                    )
                    errors[t.md5] = FileNotFoundError()
            fetch = [t for t in missing if t.md5 not in errors]
            if fetch:
                cache.add(
                    [odb.oid_to_path(t.md5) for t in fetch],
                    odb.fs,
                    [t.md5 for t in fetch],
                    check_exists=False,
                    verify=True,
                    on_error=lambda oid, exc: errors.__setitem__(oid, exc),
                )
            for t in missing:
                if t.md5 not in errors and not _in_cache(cache, t.md5):
                    errors[t.md5] = ValueError("the object fetched does not hash to its name")
            failed = {t.md5 for t in missing if t.md5 in errors}
            for t in fetch:
                if t.md5 in failed:
                    result.failed.append(_finding(t, f"fetch failed: {_why(errors[t.md5])}"))
            wanted = [t for t in wanted if t.md5 not in failed]
        for t in wanted:
            _checkout(cache, t)
            result.moved.append(t)
        return result


class Transfer:
    """What a push or pull did: moved, already there (``present``), failed (findings)."""

    def __init__(self) -> None:
        self.moved: list[Target] = []
        self.present = 0
        self.failed: list[Finding] = []


def _unique(targets: list[Target]) -> list[Target]:
    seen: set[Path] = set()
    out = []
    for t in targets:
        if t.pointer not in seen:
            seen.add(t.pointer)
            out.append(t)
    return out


def _finding(t: Target, message: str, hint: str | None = None) -> Finding:
    return Finding(str(t.sidecar), "$", message, hint, check="dvc")


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def _md5(path: Path) -> str:
    from dvc_data.hashfile.hash import file_md5
    from dvc_objects.fs import localfs

    return str(file_md5(str(path), localfs))


def _exists(odb: HashFileDB, oids: list[str]) -> list[bool]:
    """One existence check per object, batched (concurrent on S3 and other async stores)."""
    paths = [odb.oid_to_path(o) for o in oids]
    return list(odb.fs.exists(paths)) if len(paths) > 1 else [odb.fs.exists(paths[0])]


def _in_cache(cache: HashFileDB, oid: str) -> bool:
    """The cache holds the object whole (DVC's own check: read-only means verified)."""
    from dvc_objects.errors import ObjectFormatError

    try:
        cache.check(oid)
    except (FileNotFoundError, ObjectFormatError):
        return False
    return True


def _checkout(cache: HashFileDB, t: Target) -> None:
    """Place the cached object at the sidecar's path with the cache's link types (DVC's
    default: reflink, else copy), atomically."""
    from dvc_objects.fs import generic, localfs

    generic.transfer(cache.fs, cache.oid_to_path(t.md5), localfs, str(t.sidecar), links=list(cache.cache_types))


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` atomically (a reader sees the old file or the new one)."""
    if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
        return
    write_replacing(path, data, durable=False)


def ignore_in_git(sidecars: list[Path]) -> list[Path]:
    """List each sidecar in the ``.gitignore`` beside it (``/<name>``, as DVC writes it when
    it drives git). Returns the ``.gitignore`` files."""
    by_folder: dict[Path, list[str]] = {}
    for sidecar in sidecars:
        by_folder.setdefault(sidecar.parent, []).append(f"/{sidecar.name}")
    for folder, entries in by_folder.items():
        ignore = folder / ".gitignore"
        text = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
        lines = text.splitlines()
        missing = [e for e in dict.fromkeys(entries) if e not in lines]
        if missing:
            if text and not text.endswith("\n"):
                text += "\n"
            _replace(ignore, (text + "".join(f"{e}\n" for e in missing)).encode())
    return [folder / ".gitignore" for folder in by_folder]


def pointers_under(root: Path, paths: list[str]) -> list[Path]:
    """The sidecar pointers the command names: a pointer, a sidecar (its pointer) or a
    folder (every sidecar pointer below it); all of ``data/`` when none is named."""
    out: list[Path] = []
    suffix = SIDECAR_SUFFIX + POINTER_SUFFIX
    if not paths and not (root / "data").is_dir():
        return []
    for given in paths or [str(root / "data")]:
        path = Path(given)
        if path.is_dir():
            found = []
            for folder, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                found.extend(Path(folder) / f for f in files if f.endswith(suffix))
            out.extend(sorted(found))
        elif given.endswith(POINTER_SUFFIX):
            out.append(path)
        else:
            out.append(path.with_name(path.name + POINTER_SUFFIX))
    return [p if p.is_absolute() else Path.cwd() / p for p in out]
