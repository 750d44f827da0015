"""What every page generator needs to know: the store, the repository URL, the schemas."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from eee.store.schemas import EVAL, INSTANCE, Registry

KIND_SLUGS = {EVAL: "aggregate", INSTANCE: "instance-level"}
KIND_TITLES = {EVAL: "Aggregate record", INSTANCE: "Instance-level row"}
STEP_PREFIXES = {EVAL: "eval", INSTANCE: "instance"}


@dataclass
class GeneratedPage:
    """One page made at build time: its path under docs/ and its Markdown."""

    src_uri: str
    content: str
    in_nav: bool = True  # False: reachable by links only (listed in ``not_in_nav``)


@dataclass
class SiteContext:
    """The store being published and what the generated pages link to."""

    root: Path
    registry: Registry
    repo_url: str | None = None
    branch: str = "main"
    record_pages: set[str] = field(default_factory=set)  # uuids that have a page of their own
    grouped: set[str] = field(default_factory=set)  # uuids listed on a shared page (a large store)
    use_directory_urls: bool = True

    def page_url(self, src_uri: str) -> str:
        """The URL (from the site root) MkDocs gives the page ``src_uri``."""
        return page_url(src_uri, self.use_directory_urls)

    def href(self, target: str, page: str) -> str:
        """A relative URL from the page ``page`` to the page ``target`` (both docs paths,
        ``target`` perhaps with a ``#fragment``), for raw HTML that MkDocs does not rewrite."""
        target, _, frag = target.partition("#")
        to, here = self.page_url(target), self.page_url(page)
        base = here if here.endswith("/") or not here else posixpath.dirname(here)
        rel = posixpath.relpath(to or ".", base.rstrip("/") or ".")
        if to.endswith("/") or not to:
            rel = "./" if rel == "." else rel + "/"
        return quote(rel, safe="/._-~") + (f"#{quote(frag, safe='-_.~')}" if frag else "")

    def repo_link(self, rel: str, folder: bool = False) -> str | None:
        """The repository's web page of ``rel`` (a path from the store root), if known."""
        if not self.repo_url:
            return None
        kind = "tree" if folder else "blob"
        return f"{self.repo_url.rstrip('/')}/{kind}/{self.branch}/{quote(rel)}"

    def record_page(self, uuid: str | None) -> str | None:
        """The docs path of a record's page, when it has one: its own page, or its section
        (``#<uuid>``) of a shared page (:func:`group_page`)."""
        if uuid and uuid in self.record_pages:
            return f"catalogue/records/{uuid}.md"
        if uuid and uuid in self.grouped:
            return f"{group_page(uuid)}#{uuid}"
        return None


def page_url(src_uri: str, use_directory_urls: bool = True) -> str:
    """The URL (from the site root) MkDocs gives the page ``src_uri``."""
    stem = src_uri[: -len(".md")]
    if not use_directory_urls:
        return stem + ".html"
    if stem == "index" or stem.endswith("/index"):
        return stem[: -len("index")]
    return stem + "/"


def published_record_url(site_url: str, uuid: str, own_page: bool, use_directory_urls: bool = True) -> str:
    """The address of a record's page on the published site at ``site_url``: its own page,
    or its section of a shared page (a large store: :func:`group_page`), as
    :func:`eee.site.cataloguepages.generate` decides (``own_page``)."""
    src = f"catalogue/records/{uuid}.md" if own_page else group_page(uuid)
    url = site_url.rstrip("/") + "/" + quote(page_url(src, use_directory_urls), safe="/._-~")
    return url if own_page else f"{url}#{uuid}"


def group_key(uuid: str) -> str:
    """The shared page of a record without a page of its own (a large store): the first two
    hex digits of the sha256 of its uuid, so 256 pages at most, evenly filled whatever the
    uuids look like (a store of 15,000 records has about 60 a page), and never changing as
    the store grows: adding a record changes one shared page."""
    import hashlib

    return hashlib.sha256(uuid.lower().encode()).hexdigest()[:2]


def group_page(uuid: str) -> str:
    """The docs path of the shared page that lists ``uuid`` (see :func:`group_key`)."""
    return f"catalogue/records/group-{group_key(uuid)}.md"


def reference_page(version: str, kind: str) -> str:
    """The docs path of the reference of one schema version and record kind."""
    return f"reference/{version}/{KIND_SLUGS[kind]}.md"


def changes_page(source: str, target: str) -> str:
    """The docs path of the what-changed page of one version step."""
    return f"reference/changes/{source}-to-{target}.md"


def step_name(kind: str, source: str, target: str) -> str:
    """The name of the migration step function (``eval_0_2_0_to_0_2_1``)."""
    return f"{STEP_PREFIXES[kind]}_{source.replace('.', '_')}_to_{target.replace('.', '_')}"
