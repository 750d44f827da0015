"""The published site: pages generated at build time from the store's own sources.

MkDocs loads :mod:`eee.site.hooks` (``hooks:`` in ``mkdocs.yml``). At build time the hooks
add virtual pages that are never committed:

- the **schema reference** of every released version and both record kinds, and a
  **what changed** page per version step with the migration step's own description
  (:mod:`eee.site.schemapages`, :mod:`eee.site.schemadiff`);
- the **catalogue**: a page per benchmark and a page per record with its JSON and its
  governance history (:mod:`eee.site.cataloguepages`);
- the **governance card**, the contributor guide, the other governance documents and the
  CHANGELOG, read from where they live in the repository, not copied
  (:mod:`eee.site.included`).

Module names here avoid top-level names of other packages: MkDocs puts this folder on
``sys.path`` while it loads the hooks.
"""
