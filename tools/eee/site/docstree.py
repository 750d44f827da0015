"""``eee site pages``: the site's sources written as one folder of Markdown, which MkDocs
and Zensical both build from (``docs_dir: build/docs`` in mkdocs.yml).

The folder holds, each at its place on the site:

- the hand-written pages of ``docs/``, copied as they are;
- the repository documents published as they are (``governance/**/*.md``, the CHANGELOG),
  with their links that leave the site rewritten (:mod:`eee.site.included`) and their edit
  button pointing at their own file;
- the generated pages: the schema reference, the what-changed pages, the catalogue
  (:mod:`eee.site.generate`);
- the catalogue's Parquet files (whatever the pipeline wrote under ``build/catalog/``), under
  ``catalogue/data/``, linked from the catalogue pages;
- every file the analysis step wrote under ``build/analysis/pages/`` (Markdown pages and the
  plots beside them), under ``analysis/``, in an "Analysis" section of the navigation.

The navigation (and which generated pages are reachable by links only) is written beside
the folder, to ``build/site-nav.yml``, which mkdocs.yml names in ``INHERIT``. Nothing is
written into ``docs/`` or anywhere in git. Every page is generated before anything is
written, so a failed run leaves the previous folder in place; then only the files whose
bytes changed are written (each through a temporary file), and files no longer generated
are removed, so a run after a small change rewrites a few files, not the site.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eee.reporting.findings import Finding, Refused
from eee.site import included
from eee.site.generate import NAV, Generated, expand_nav, generate
from eee.store.fsutil import replace_file

OUT = "build/docs"
NAV_FILE = "build/site-nav.yml"
ANALYSIS_SOURCE = "build/analysis/pages"
ANALYSIS_DIR = "analysis"
CATALOG_SOURCE = "build/catalog"
CATALOG_DIR = "catalogue/data"


@dataclass
class Written:
    """What one run wrote."""

    out: Path
    nav_file: Path
    pages: int  # Markdown pages in the folder
    files: int  # every file in the folder
    seconds: float
    changed: int = 0  # files written (the others already held the same bytes)


def read_config(root: Path) -> dict[str, Any]:
    """The parts of mkdocs.yml the pages depend on (repository URL, edit path, limits)."""
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may use MkDocs' own tags (!ENV, !relative): read them as plain values
    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    path = root / "mkdocs.yml"
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader) if path.exists() else {}
    except (OSError, yaml.YAMLError) as exc:
        raise Refused(
            [Finding("mkdocs.yml", "$", f"cannot read the site configuration: {exc}", check="site")]
        ) from None
    return data if isinstance(data, dict) else {}


def with_meta(text: str, key: str, value: str) -> str:
    """``text`` (a Markdown page) with ``key: value`` in its YAML front matter."""
    import json

    line = f"{key}: {json.dumps(value)}\n"  # a JSON string is a YAML string
    if text.startswith("---\n"):
        return "---\n" + line + text[4:]
    return f"---\n{line}---\n\n{text}"


def _edit_url(config: dict[str, Any], rel: str) -> str:
    repo, edit = config.get("repo_url"), config.get("edit_uri")
    if not repo or not edit:
        return ""
    return f"{repo.rstrip('/')}/{edit.strip('/').rsplit('/docs', 1)[0]}/{rel}"


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) if folder.is_dir() else []


def write(root: Path, out: Path | None = None, nav_file: Path | None = None, cached: bool = True) -> Written:
    """Write every page of the site of the store at ``root`` into ``out`` (build/docs).
    ``cached``: the catalogue's pages whose inputs did not change since the last run are
    kept as they are (:mod:`eee.site.cataloguecache`), not made again."""
    started = time.perf_counter()
    root = root.resolve()
    out = (out or root / OUT).resolve()
    nav_file = (nav_file or root / NAV_FILE).resolve()
    config = read_config(root)
    analysis = [p.relative_to(root / ANALYSIS_SOURCE).as_posix() for p in _files(root / ANALYSIS_SOURCE)]
    parquet = [p.relative_to(root / CATALOG_SOURCE).as_posix() for p in _files(root / CATALOG_SOURCE)]
    parquet = [p for p in parquet if p.endswith(".parquet")]
    from eee.site.cataloguecache import PagesCache
    from eee.store.schemas import RegistryError

    cache = PagesCache.beside(root, out) if cached else PagesCache.off(out)
    try:
        gen = generate(
            root,
            config.get("repo_url"),
            config.get("extra"),
            NAV,
            bool(config.get("use_directory_urls", True)),
            analysis=[f"{ANALYSIS_DIR}/{p}" for p in analysis if p.endswith(".md")],
            parquet=[f"{CATALOG_DIR}/{p}" for p in parquet],
            cache=cache,
        )
    except RegistryError as exc:
        raise Refused(
            Finding("schemas/registry.json", "$", str(exc), hint="run it in a store (--store DIR)", check="site")
        ) from None
    written: dict[str, str] = {}  # site path -> where it came from
    contents: dict[str, bytes] = {}

    def put(rel: str, data: bytes | str, source: str) -> None:
        if rel in written:
            raise Refused(
                Finding(
                    source,
                    "$",
                    f"{rel} is written twice (also from {written[rel]})",
                    hint="generated pages and published repository documents are never committed in docs/: "
                    f"remove docs/{rel}",
                    check="site",
                )
            )
        written[rel] = source
        contents[rel] = data.encode("utf-8") if isinstance(data, str) else data

    for p in _files(root / "docs"):
        rel = p.relative_to(root / "docs").as_posix()
        put(rel, p.read_bytes(), f"docs/{rel}")
    for rel in gen.included:
        put(rel, with_meta(included.page(gen.ctx, rel, gen.published), "edit_url", _edit_url(config, rel)), rel)
    for page in gen.pages:
        put(page.src_uri, with_meta(page.content, "edit_url", ""), "(generated)")
    for rel in analysis:
        source = f"{ANALYSIS_SOURCE}/{rel}"
        data = (root / source).read_bytes()
        if rel.endswith(".md"):
            data = with_meta(data.decode("utf-8"), "edit_url", "").encode("utf-8")
        put(f"{ANALYSIS_DIR}/{rel}", data, source)
    for rel in parquet:
        put(f"{CATALOG_DIR}/{rel}", (root / CATALOG_SOURCE / rel).read_bytes(), f"{CATALOG_SOURCE}/{rel}")
    for rel in gen.kept:
        if rel in written:
            raise Refused(
                Finding(written[rel], "$", f"{rel} is written twice (also kept from the last run)", check="site")
            )
    cache.forget()  # a run that fails while writing leaves no record: the next one makes every page
    changed = sync(out, contents, set(gen.kept))
    _write_nav(nav_file, gen, _site_url(root))
    cache.save()
    pages = sum(1 for rel in written if rel.endswith(".md")) + len(gen.kept)
    return Written(out, nav_file, pages, len(written) + len(gen.kept), time.perf_counter() - started, changed)


def sync(out: Path, contents: dict[str, bytes], keep: set[str] | None = None) -> int:
    """Make the folder ``out`` hold exactly ``contents`` (site path -> bytes) and the files
    ``keep`` names as they are: a file whose bytes are already there is left alone (its mtime
    too, so MkDocs' and DVC's checks of it stay cheap), a changed one is written through a
    temporary file and renamed, and files and folders in neither are removed. Returns how
    many files were written."""
    out.mkdir(parents=True, exist_ok=True)
    changed = 0
    for rel, data in contents.items():
        target = out / rel
        try:
            same_size = target.is_file() and not target.is_symlink() and target.stat().st_size == len(data)
            if same_size and target.read_bytes() == data:
                continue
        except OSError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        tmp.write_bytes(data)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        replace_file(tmp, target)
        changed += 1
    wanted = set(contents) | (keep or set())
    folders = {rel.rsplit("/", 1)[0] for rel in wanted if "/" in rel}
    folders |= {f.rsplit("/", i)[0] for f in list(folders) for i in range(1, f.count("/") + 1)}
    for dirpath, dirs, names in os.walk(out, topdown=False):
        here = Path(dirpath)
        rel_dir = here.relative_to(out).as_posix()
        for name in names:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if rel not in wanted:
                (here / name).unlink()
        for name in dirs:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            path = here / name
            if rel not in folders:
                if path.is_symlink():
                    path.unlink()
                else:
                    shutil.rmtree(path, ignore_errors=True)
    return changed


def _site_url(root: Path) -> str | None:
    """The store's ``site_url`` setting (None when unset)."""
    from eee.store import settings
    from eee.store.tree import WorkTree

    try:
        return settings.read(WorkTree(str(root))).site_url
    except settings.SettingsProblem as exc:
        raise Refused(Finding(settings.SETTINGS_PATH, exc.pointer, exc.message, exc.hint, check="settings")) from None


def _write_nav(path: Path, gen: Generated, site_url: str | None = None) -> None:
    """The navigation and the pages reachable by links only, as a configuration that
    mkdocs.yml inherits (``INHERIT: build/site-nav.yml``); with the store's ``site_url``
    setting when it has one."""
    import yaml

    outline = [e for e in NAV if "analysis/index.md" not in e.values() or gen.nav.get("analysis/index.md")]
    data: dict[str, Any] = {
        "nav": expand_nav(outline, gen.nav),
        "not_in_nav": "\n".join(gen.not_in_nav) + "\n",
    }
    if site_url:
        data["site_url"] = site_url
    text = (
        "# Written by `eee site pages` (tools/eee/site/docstree.py); mkdocs.yml inherits it. Not committed.\n"
        + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    )
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return  # unchanged: left alone
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    replace_file(tmp, path)
