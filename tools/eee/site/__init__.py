"""The published site: pages generated from the store's own sources.

``eee site pages`` (:mod:`eee.site.docstree`, the pipeline's ``pages`` stage) writes every
page as Markdown into ``build/docs/``, which ``mkdocs build`` and ``zensical build`` read
(no MkDocs plugins of the project's own; one MkDocs hook, :mod:`eee.site.searchhook`, only
spares the search plugin the parse of what it leaves out of the index):

- the **schema reference** of every released version and both record kinds, and a
  **what changed** page per version step with the migration step's own description
  (:mod:`eee.site.schemapages`, :mod:`eee.site.schemadiff`);
- the **catalogue**: a page per benchmark and a page per record with its JSON and its
  governance history (:mod:`eee.site.cataloguepages`), and the catalogue's Parquet files;
- the **governance card**, the contributor guide, the other governance documents and the
  CHANGELOG, read from where they live in the repository (:mod:`eee.site.included`);
- the **analysis** pages the pipeline writes under ``build/analysis/pages/``.

Python gathers the facts; the words are Jinja2 templates in ``templates/``
(:mod:`eee.site.render`). The site renders data, never code: a value from a record, an
event, an import manifest or a sidecar reaches a page only through the filters of
:mod:`eee.site.mdtext`, escaped for where it lands, and links only to http(s) addresses;
every page carries a Content-Security-Policy that runs no inline script
(``extra.content_security_policy`` in mkdocs.yml). ``theme/`` overrides a few parts of the
theme: the policy first in ``<head>`` (``main.html``), the theme's inline scripts as files
(``partials/javascripts/``, ``assets/javascripts/eee/``), the search box's share link and the
repository link (no ``javascript:`` address, no request to another server), the edit button.
"""
