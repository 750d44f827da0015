"""MkDocs hook: the search plugin never parses what it would leave out of the index.

Material's search plugin feeds every page's whole HTML through Python's ``html.parser`` and
only then drops the elements marked ``data-search-exclude``. On a store past
``extra.catalogue.record_pages`` the shared record pages hold one results table per
record, all of it excluded, and parsing those tables was most of ``mkdocs build`` (about
two million tags at 15,000 records). This hook runs just before the plugin, on each page
that has such blocks: it indexes a copy of the page with the excluded ``<div>`` blocks
cut out (through the plugin's own index, so the entries are the ones the plugin writes,
in the same order) and marks the page itself excluded for the plugin's own pass, which
still strips the ``data-search-*`` attributes from the published HTML.

Only a ``<div data-search-exclude>`` with no ``<div>`` inside is cut (the blocks the
site's templates write); anything else is left to the plugin as before.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from mkdocs.plugins import event_priority

_EXCLUDED = re.compile(r"<div data-search-exclude>(?:(?!<div\b).)*?</div>", re.S)


@event_priority(50)  # before the search plugin (priority 0) reads the page
def on_page_context(context: Any, page: Any, config: Any, nav: Any) -> Any:
    plugin = config.plugins.get("material/search")
    if plugin is None or not plugin.config.enabled or "<div data-search-exclude>" not in page.content:
        return context
    search = page.meta.get("search") or {}
    if search.get("exclude"):
        return context
    proxy = copy.copy(page)
    proxy.content = _EXCLUDED.sub("", page.content)
    plugin.search_index.add_entry_from_context(proxy)
    page.meta = {**page.meta, "search": {**search, "exclude": True}}  # indexed: the plugin's pass skips it
    return context
