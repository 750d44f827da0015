"""A DVC pointer's object, found and hashed: where its bytes are, and whether they are its own.

A pointer (``<uuid>_samples.jsonl.dvc``) names its object by md5; the record beside it
names its sidecar by sha256 (``detailed_evaluation_results.checksum``). Nothing ties the two
but the bytes, so a pointer that names another record's object would go unnoticed until
someone pulls it. :class:`ObjectFinder` looks for the object's bytes where a checkout may
hold them, in this order, and hashes each copy as a stream (md5, and the record's algorithm)
until one has the pointer's md5:

- copies the caller knows of (the audit: the sidecar committed to git at the audited head,
  after a ``sidecar-to-git`` replacement);
- the sidecar in the work tree, beside its pointer (where ``eee samples add`` and
  ``eee samples pull`` leave it);
- DVC's local cache (``.dvc/cache/files/md5/xx/...``, or ``cache.dir`` of DVC's config);
- with ``remote``, the store's DVC remote (``core.remote`` of ``.dvc/config``, or the one
  named), read through DVC's own file systems (:class:`eee.dvc.store.DvcStore`).

A copy whose md5 is not the pointer's is not the object (a corrupted cache file, a sidecar
edited after ``samples add``): it is said, and the next place is asked. Reads are bounded
(:data:`eee.store.limits.SIDECAR_MAX_BYTES`), regular files only, never through a link.

The cheap places need no DVC import (the gate's start-up stays small); DVC's config is read
only when it moves the cache elsewhere or the remote is asked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from eee.store.limits import CHUNK, SIDECAR_MAX_BYTES, Unreadable, iter_chunks, size_text

Chunks = Callable[[], Iterable[bytes]]  # opens a copy: its bytes in pieces (OSError / Unreadable when it cannot)


class Copy(NamedTuple):
    """A copy of an object: where it was found, its md5 and its digest under the record's
    algorithm (None when the record declares none), and its size."""

    where: str
    md5: str
    digest: str | None
    size: int


class Lookup(NamedTuple):
    """What looking for one object found: the copy whose md5 is the pointer's (None when no
    place held one) and, for messages, every place asked and what it said."""

    copy: Copy | None
    asked: list[str]


def digests(chunks: Iterable[bytes], alg: str | None, cap: int = SIDECAR_MAX_BYTES) -> tuple[str, str | None, int]:
    """(md5, digest under ``alg`` or None, size) of a stream of bytes, at most ``cap`` of them."""
    md5 = hashlib.md5(usedforsecurity=False)
    other = hashlib.new(alg) if alg and alg != "md5" else None
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > cap:
            raise Unreadable(f"more than {size_text(cap)}", "a sidecar is at most this large")
        md5.update(chunk)
        if other is not None:
            other.update(chunk)
    found = md5.hexdigest()
    return found, (found if alg == "md5" else other.hexdigest() if other is not None else None), size


def _object_path(base: Path, md5: str) -> Path:
    return base / "files" / "md5" / md5[:2] / md5[2:]


def _mentions_cache(dvc_dir: Path) -> bool:
    """Whether DVC's config files of the store move the cache (a ``[cache]`` section)."""
    for name in ("config", "config.local"):
        try:
            text = (dvc_dir / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "[cache" in text.replace(" ", "").replace("'", "").replace('"', ""):
            return True
    return False


class ObjectFinder:
    """Where the objects of the store at ``root`` are looked for (see the module docstring).

    ``root``: the store's work tree (None: a bare repository, which has neither work tree nor
    cache); ``dvc_dir``: the folder of DVC's config (default ``root/.dvc``: a server names its
    own, with the remote's URL and credentials); ``remote``: ask the DVC remote too (its
    name: ``remote_name``, else ``core.remote``)."""

    def __init__(
        self,
        root: Path | None,
        *,
        remote: bool = False,
        remote_name: str | None = None,
        dvc_dir: Path | None = None,
        work_tree: bool = True,
    ) -> None:
        self.root = Path(root) if root is not None else None
        self.dvc_dir = Path(dvc_dir) if dvc_dir is not None else (self.root / ".dvc" if self.root else None)
        self.remote = remote
        self.remote_name = remote_name
        self.work_tree = work_tree and self.root is not None
        self._store: Any = None
        self._store_problem: str | None = None
        self._odb: Any = None
        self._cache_base: Path | bool | None = False  # False: not yet known

    # -- DVC's side, loaded only when needed --------------------------------------------

    def _dvc(self) -> Any:
        """The :class:`eee.dvc.store.DvcStore` of the store (None, with the reason kept, when
        there is none)."""
        if self._store is None and self._store_problem is None:
            if self.dvc_dir is None:  # a bare repository: its DVC config is named, never guessed
                self._store_problem = "no DVC configuration here (a bare repository: name its folder, --dvc-dir)"
                return None
            from eee.dvc.store import DvcStore
            from eee.reporting.findings import Refused

            try:
                self._store = DvcStore(self.root or self.dvc_dir.parent, self.dvc_dir)
            except Refused as exc:
                self._store_problem = exc.findings[0].message
        return self._store

    def _cache(self) -> Path | None:
        """The folder of DVC's local cache (None without DVC here)."""
        if self._cache_base is False:
            base: Path | None = None
            if self.dvc_dir is not None and self.dvc_dir.is_dir() and self.root is not None:
                if not _mentions_cache(self.dvc_dir):
                    base = self.dvc_dir / "cache"
                else:
                    store = self._dvc()
                    try:
                        base = Path(store.cache.path).parent.parent if store is not None else None
                    except Exception:  # a cache DVC cannot build (e.g. not a local folder): none here
                        base = None
            self._cache_base = base
        return self._cache_base or None

    def remote_label(self) -> str:
        store = self._dvc()
        name = store.remote_name(self.remote_name) if store is not None else self.remote_name
        return f"DVC remote {name!r}" if name else "the DVC remote"

    def _remote(self) -> Any:
        """The remote's object database; Refused (from :class:`eee.dvc.store.DvcStore`) when
        there is no remote or it cannot be set up."""
        if self._odb is None:
            from eee.reporting.findings import Refused

            store = self._dvc()
            if store is None:
                raise Refused(_finding(self._store_problem or "DVC is not set up here"))
            self._odb = store.remote(self.remote_name)
        return self._odb

    # -- looking ------------------------------------------------------------------------

    def places(
        self, sidecar_rel: str, md5: str, known: Iterable[tuple[str, Chunks]] = ()
    ) -> Iterator[tuple[str, Chunks]]:
        """Where the object may be, in order: (label, opener)."""
        yield from known
        if self.work_tree and self.root is not None:
            path = self.root / sidecar_rel
            yield "the work tree", lambda: iter_chunks(path, SIDECAR_MAX_BYTES, "sidecar")
        cache = self._cache()
        if cache is not None:
            obj = _object_path(cache, md5)
            yield "DVC's cache", lambda: iter_chunks(obj, SIDECAR_MAX_BYTES, "DVC cache object")
        if self.remote:
            yield self.remote_label(), lambda: self._remote_chunks(md5)

    def _remote_chunks(self, md5: str) -> Iterator[bytes]:
        odb = self._remote()
        path = odb.oid_to_path(md5)
        if not odb.fs.exists(path):
            raise FileNotFoundError(2, "not there")
        with odb.fs.open(path, mode="rb") as fh:
            while block := fh.read(CHUNK):
                yield block

    def find(self, sidecar_rel: str, md5: str, alg: str | None, known: Iterable[tuple[str, Chunks]] = ()) -> Lookup:
        """The first copy of the object ``md5`` (the sidecar ``sidecar_rel``'s pointer names it)
        whose bytes have that md5, hashed under ``alg`` too; every place asked is said."""
        asked: list[str] = []
        for label, opener in self.places(sidecar_rel, md5, known):
            try:
                found, digest, size = digests(opener(), alg)
            except FileNotFoundError:
                asked.append(f"not in {label}")
                continue
            except Unreadable as exc:
                asked.append(f"{label}: {exc.message}")
                continue
            except OSError as exc:
                asked.append(f"{label}: {exc.strerror or exc}")
                continue
            except Exception as exc:  # the remote's own errors (auth, network, a missing plug-in)
                asked.append(f"{label} could not be asked: {_said(exc)}")
                continue
            if found != md5:
                asked.append(f"the copy in {label} is another file (md5 {found})")
                continue
            return Lookup(Copy(label, found, digest, size), asked)
        if not asked:
            asked.append("no place to look here (no work tree, DVC cache or remote)")
        return Lookup(None, asked)

    def on_remote(self, md5s: list[str]) -> tuple[dict[str, bool], str | None]:
        """Which objects the remote holds (one existence check each, batched), or ({}, why
        the remote could not be asked)."""
        if not md5s:
            return {}, None
        from eee.dvc.store import _exists

        try:
            odb = self._remote()
            there = _exists(odb, list(md5s))
        except Exception as exc:
            return {}, _said(exc)
        return dict(zip(md5s, there, strict=True)), None


def _said(exc: BaseException) -> str:
    findings = getattr(exc, "findings", None)
    if findings:  # a refusal of ours: its message says it
        return str(findings[0].message)[:300]
    text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _finding(message: str) -> Any:
    from eee.reporting.findings import Finding

    return Finding(
        ".dvc/config", "$", message, "set up the store's DVC remote (see docs/guide/sidecars.md)", check="dvc"
    )
