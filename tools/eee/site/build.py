"""``eee site build``: the site built by MkDocs, in full or only the pages whose source changed.

MkDocs has no incremental build of its own that keeps a site whole: ``mkdocs build --dirty``
leaves the search index holding the rebuilt pages only, gives the pages it does not read no
title (the navigation of every rebuilt page then loses theirs) and warns, which ``--strict``
turns into a failure. At the store's size a full build costs about 20 ms a page (the theme's
navigation, the search plugin's parse, Markdown), so one more record, which changes a few
pages, cost the whole build. This runs MkDocs' own build with a plugin that makes the
incremental build exact:

- what the build depends on besides the pages (``mkdocs.yml``, the navigation file, this
  package's code, theme and templates, the versions of MkDocs, the theme and the Markdown
  libraries) is one digest, the *frame*; a build is incremental only when the frame is the
  one the last build recorded, no source file is gone, and the site folder is still there;
- a source file is changed when its sha256 differs from the one recorded (size and mtime
  spare the hashing of a file that did not move, as git does); only changed pages are read,
  rendered and written, only changed static files copied;
- the pages not rebuilt keep what other pages read of them, recorded at their last build:
  their title and front matter (the navigation of every page shows them) and their anchors
  (links into them are still checked);
- the search index is the last one with the rebuilt pages' entries put in their place, in
  the order a full build writes them, so it is byte for byte a full build's;
- a rebuilt page of the navigation whose title or front matter changed changes every
  page's navigation: the site is then built in full.

The record of the last build lives beside the site (``build/.site-state.json``), never in
it; it is removed before a build starts, so a build that fails leaves none and the next one
is full. A test builds a site incrementally and in full and compares them file by file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eee.store.fsutil import replace_file

FORMAT = "eee-site-build/1"
SITE_DIR = "build/site"
_LIBRARIES = ("mkdocs", "mkdocs-material", "Markdown", "pymdown-extensions", "Pygments", "Jinja2")
_DIRTY_WARNING = "A 'dirty' build is being performed"


class SiteBuildError(Exception):
    """MkDocs refused the build (a configuration error, or a warning under ``--strict``);
    ``warnings``: what MkDocs said, one line each."""

    def __init__(self, message: str, warnings: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.warnings = list(warnings or [])


@dataclass
class Built:
    """What one build did."""

    site: Path
    full: bool
    reason: str  # why a full build, or "incremental"
    pages: int  # pages of the site
    rebuilt: int  # pages rendered and written
    copied: int  # static files copied
    seconds: float
    warnings: list[str] = field(default_factory=list)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def source_digests(docs: Path, known: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Every file of ``docs`` (the docs_dir): site path -> [size, mtime_ns, sha256], the
    sha256 taken again only when size or mtime moved from ``known``."""
    out: dict[str, list[Any]] = {}
    for dirpath, dirs, names in os.walk(docs):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            if name.startswith("."):
                continue
            path = Path(dirpath, name)
            rel = path.relative_to(docs).as_posix()
            st = path.stat()
            was = known.get(rel)
            if was and was[0] == st.st_size and was[1] == st.st_mtime_ns:
                out[rel] = [st.st_size, st.st_mtime_ns, was[2]]
            else:
                out[rel] = [st.st_size, st.st_mtime_ns, _sha256(path)]
    return out


def frame_digest(root: Path, config_file: Path, nav_file: Path | None) -> str:
    """The digest of what every page's HTML depends on besides its own source."""
    from importlib.metadata import PackageNotFoundError, version

    h = hashlib.sha256(FORMAT.encode())
    for path in (config_file, nav_file):
        if path is not None and path.is_file():
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    package = Path(__file__).resolve().parent  # hooks, Markdown extensions, theme overrides, templates
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for name in _LIBRARIES:
        try:
            h.update(f"{name}=={version(name)}\0".encode())
        except PackageNotFoundError:
            h.update(f"{name} absent\0".encode())
    return h.hexdigest()


def _read_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == FORMAT else {}


def _write_state(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(state, separators=(",", ":")), encoding="utf-8")
    replace_file(tmp, path)


class _Recorder:
    """The MkDocs plugin behind :func:`build`: which files count as changed, what the pages
    not rebuilt keep from their last build, and what each page built leaves for the next."""

    def __init__(self, changed: set[str] | None, pages: dict[str, Any], progress: Callable[[int, int], None] | None):
        from mkdocs.plugins import BasePlugin

        self.changed = changed  # None: a full build
        self.kept = pages  # site path -> {"title", "meta", "anchors", "nav"} of the last build
        self.pages: dict[str, Any] = {}  # the same, for the pages built now
        self.order: list[str] = []  # every page's URL, in build order (the search index's order)
        self.rebuilt: set[str] = set()  # URLs of the pages built now
        self.in_nav: set[str] = set()
        self.copied = 0
        self.progress = progress
        self.to_build = 0
        self.plugin = type("EeeIncremental", (BasePlugin,), {})()
        # the events this plugin answers (a plugin's events are its on_* attributes)
        self.plugin.on_files = self.on_files
        self.plugin.on_nav = self.on_nav
        self.plugin.on_env = self.on_env
        self.plugin.on_post_page = self.on_post_page

    def _is_changed(self, src_uri: str) -> bool:
        return self.changed is None or src_uri in self.changed

    def on_files(self, files: Any, config: Any) -> Any:
        docs = os.path.realpath(config.docs_dir)
        for f in files:
            own = f.abs_src_path is not None and os.path.realpath(f.abs_src_path).startswith(docs + os.sep)
            modified = self._is_changed(f.src_uri) if own else self.changed is None  # the theme's own files
            f.is_modified = lambda m=modified: m  # MkDocs' dirty build asks each file this
            if modified and own and not f.is_documentation_page():
                self.copied += 1
        return files

    def on_nav(self, nav: Any, config: Any, files: Any) -> Any:
        self.in_nav = {p.file.src_uri for p in nav.pages}
        if self.changed is None:
            return nav
        for page in nav.pages:  # what the navigation of a rebuilt page shows of the others
            if not self._is_changed(page.file.src_uri):
                kept = self.kept.get(page.file.src_uri) or {}
                page.markdown = ""  # MkDocs gives a page never read no title at all
                page.meta = dict(kept.get("meta") or {})
                page._title_from_render = kept.get("title")
        return nav

    def on_env(self, env: Any, config: Any, files: Any) -> Any:
        import jinja2

        # the theme's templates compiled once, not at every build (~0.5 s; keyed by their source)
        env.bytecode_cache = jinja2.FileSystemBytecodeCache()
        pages = files.documentation_pages()
        self.order = [f.page.url for f in pages if f.page is not None]
        self.to_build = sum(1 for f in pages if self._is_changed(f.src_uri))
        if self.changed is not None:
            for f in pages:  # links from rebuilt pages into the others are still checked
                if f.page is not None and not self._is_changed(f.src_uri):
                    f.page.present_anchor_ids = set((self.kept.get(f.src_uri) or {}).get("anchors") or [])
        return env

    def on_post_page(self, output: str, page: Any, config: Any) -> str:
        src = page.file.src_uri
        self.rebuilt.add(page.url)
        self.pages[src] = {
            "title": page._title_from_render,
            "meta": _plain(page.meta),
            "anchors": sorted(page.present_anchor_ids or ()),
            "nav": src in self.in_nav,
        }
        if self.progress is not None:
            self.progress(len(self.pages), self.to_build)
        return output


def _plain(value: Any) -> Any:
    """Front matter as JSON keeps it (YAML dates and the like as text)."""
    return json.loads(json.dumps(value, default=str))


def merge_search_index(site: Path, before: bytes | None, order: list[str], rebuilt: set[str]) -> None:
    """The search index of an incremental build: the entries of the rebuilt pages (what the
    search plugin just wrote) and the last index's entries of the others, page by page in
    build order, as a full build writes them (Material's own serialisation)."""
    path = site / "search" / "search_index.json"
    if before is None or not path.is_file():
        return
    new = json.loads(path.read_bytes())
    old = json.loads(before)

    def by_page(entries: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for entry in entries:
            out.setdefault(str(entry.get("location", "")).split("#", 1)[0], []).append(entry)
        return out

    fresh, kept = by_page(new.get("docs") or []), by_page(old.get("docs") or [])
    docs: list[dict[str, Any]] = []
    for url in order:
        docs.extend(fresh.get(url, []) if url in rebuilt else kept.get(url, []))
    data = {"config": new.get("config"), "docs": docs}
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(json.dumps(data, separators=(",", ":"), default=str).encode("utf-8"))
    replace_file(tmp, path)


class _Collect(logging.Handler):
    """MkDocs' warnings and errors, kept to be said one line each; the dirty-build warning
    is not one (every rebuilt page is exact here) and never reaches ``--strict``."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname}: {record.getMessage()}")


def _not_the_dirty_warning(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith(_DIRTY_WARNING)


def _run(config: Any, recorder: _Recorder, dirty: bool) -> None:
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.exceptions import Abort, ConfigurationError

    config.plugins["eee/incremental"] = recorder.plugin
    config.plugins.on_startup(command="build", dirty=dirty)
    try:
        mkdocs_build(config, dirty=dirty)
    except (Abort, ConfigurationError) as exc:
        raise SiteBuildError(str(exc).strip() or type(exc).__name__) from None
    finally:
        config.plugins.on_shutdown()


def build(
    root: Path,
    site_dir: Path | None = None,
    *,
    full: bool = False,
    strict: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Built:
    """Build the site of the store at ``root`` (``mkdocs.yml``) into ``site_dir`` (default:
    build/site): incrementally when the last build's record allows it, else in full
    (``full``: always). :class:`SiteBuildError` when MkDocs refuses."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import ConfigurationError

    started = time.perf_counter()
    root = root.resolve()
    site = (site_dir or root / SITE_DIR).resolve()
    state_file = site.with_name(f".{site.name}-state.json")  # beside the site, never in it (build/.site-state.json)
    config_file = root / "mkdocs.yml"
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    handler = _Collect()
    log = logging.getLogger("mkdocs")
    log.addHandler(handler)
    quiet = logging.getLogger("mkdocs.commands.build")
    quiet.addFilter(_not_the_dirty_warning)
    try:
        try:
            config = load_config(str(config_file), strict=strict, site_dir=str(site))
        except ConfigurationError as exc:
            raise SiteBuildError(f"mkdocs.yml: {exc}") from None
        docs = Path(config.docs_dir)
        inherit = config_file.parent / str(config.get("INHERIT") or "") if config.get("INHERIT") else None
        frame = frame_digest(root, config_file, inherit)
        state = _read_state(state_file)
        known = state.get("sources") or {}
        sources = source_digests(docs, known)
        reason = ""
        if full:
            reason = "asked for (--full)"
        elif not state:
            reason = "no record of a previous build"
        elif state.get("frame") != frame:
            reason = "the configuration, navigation, theme or site code changed"
        elif state.get("site") != str(site) or not (site / "index.html").is_file():
            reason = "the site folder is not the one last built"
        elif set(known) - set(sources):
            reason = f"{len(set(known) - set(sources))} source file(s) removed"
        changed = None if reason else {rel for rel, d in sources.items() if (known.get(rel) or [None] * 3)[2] != d[2]}
        state_file.unlink(missing_ok=True)  # a build that fails leaves no record: the next one is full
        index = site / "search" / "search_index.json"
        before = index.read_bytes() if changed is not None and index.is_file() else None
        kept = dict(state.get("pages") or {})
        recorder = _Recorder(changed, kept, progress)
        try:
            _run(config, recorder, dirty=changed is not None)
        except SiteBuildError as exc:
            exc.warnings = [line for line in handler.lines if _DIRTY_WARNING not in line]
            raise
        if changed is not None:
            moved = [
                src
                for src, now in recorder.pages.items()
                if now["nav"] and (kept.get(src) or {}).get("title", "") != now["title"]
            ]
            moved += [
                src
                for src, now in recorder.pages.items()
                if now["nav"] and (kept.get(src) or {}).get("meta") != now["meta"]
            ]
            if moved:  # the navigation of every page shows these: build them all
                return _full_again(
                    root, site_dir, strict, progress, started, f"the title or front matter of {moved[0]} changed"
                )
            merge_search_index(site, before, recorder.order, recorder.rebuilt)
            kept.update(recorder.pages)
        else:
            kept = recorder.pages
        _write_state(
            state_file, {"format": FORMAT, "frame": frame, "site": str(site), "sources": sources, "pages": kept}
        )
        return Built(
            site,
            changed is None,
            reason or "incremental",
            len(recorder.order),
            len(recorder.pages),
            recorder.copied,
            time.perf_counter() - started,
            [line for line in handler.lines if _DIRTY_WARNING not in line],
        )
    finally:
        log.removeHandler(handler)
        quiet.removeFilter(_not_the_dirty_warning)


def _full_again(
    root: Path,
    site_dir: Path | None,
    strict: bool,
    progress: Callable[[int, int], None] | None,
    started: float,
    reason: str,
) -> Built:
    done = build(root, site_dir, full=True, strict=strict, progress=progress)
    done.reason, done.seconds = reason, time.perf_counter() - started
    return done
