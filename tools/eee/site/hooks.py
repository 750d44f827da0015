"""MkDocs hooks (``hooks:`` in mkdocs.yml): the pages generated at build time.

- ``on_config``: generate every page (schema reference, what-changed pages, migration
  steps, catalogue) and add the generated sections to the navigation;
- ``on_files``: add the generated pages and the published repository documents
  (governance folder, CHANGELOG) as virtual files: nothing is written into ``docs/``;
- ``on_page_markdown``: rewrite links of the published repository documents that leave
  the site (to a record's page, or to the file in the repository);
- ``on_page_content``: put the large catalogue tables, made as HTML, into their pages
  (Markdown never parses them, which keeps a large store's build quick);
- ``on_serve``: ``mkdocs serve`` also watches the sources that are not in ``docs/``.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

try:
    import eee  # noqa: F401
except ImportError:  # mkdocs run from an environment without the project installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files, InclusionLevel

from eee.catalog import CATALOG_FILE
from eee.site.generate import Generated, edit_path, expand_nav, generate
from eee.site.included import resolver, rewrite_links

log = logging.getLogger("mkdocs.hooks.eee")
_STATE: dict[str, Any] = {}


def _root(config: Any) -> Path:
    return Path(config.config_file_path).resolve().parent


def on_config(config: Any) -> Any:
    started = time.perf_counter()
    gen = generate(_root(config), config.repo_url, config.extra, config.nav, config.use_directory_urls)
    _STATE["gen"] = gen
    config.nav = expand_nav(config.nav, gen.nav)
    log.info(f"eee: generated {len(gen.pages)} pages in {time.perf_counter() - started:.2f} s")
    return config


def on_files(files: Files, config: Any) -> Files:
    gen: Generated = _STATE["gen"]
    root = _root(config)
    for page in gen.pages:
        _add(files, File.generated(config, page.src_uri, content=page.content, inclusion=_inclusion(page.in_nav)))
    for rel in gen.included:
        f = File.generated(config, rel, content=(root / rel).read_text(encoding="utf-8"))
        f.edit_uri = edit_path(root, config.docs_dir, rel)
        _add(files, f)
    return files


def _inclusion(in_nav: bool) -> InclusionLevel:
    return InclusionLevel.UNDEFINED if in_nav else InclusionLevel.NOT_IN_NAV


def _add(files: Files, file: File) -> None:
    if files.get_file_from_path(file.src_uri) is not None:
        raise PluginError(
            f"docs/{file.src_uri} exists, but the site generates that page: remove it from docs/ "
            "(generated pages and published repository documents are never committed there)"
        )
    files.append(file)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    gen: Generated = _STATE["gen"]
    rel = page.file.src_uri
    if rel not in gen.published:
        return markdown
    return rewrite_links(markdown, rel, resolver(gen.ctx, rel, gen.published))


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    gen: Generated = _STATE["gen"]
    inject = gen.inject.get(page.file.src_uri)
    for name, content in (inject or {}).items():
        html = html.replace(f"<!-- eee:{name} -->", content, 1)
    return html


def on_serve(server: Any, config: Any, builder: Any) -> Any:
    root = _root(config)
    for name in ("governance", "schemas", "CHANGELOG.md", CATALOG_FILE):
        if (root / name).exists():
            server.watch(str(root / name))
    return server
