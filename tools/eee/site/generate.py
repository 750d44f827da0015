"""Everything the site generates, in one place: pages, published repository documents and
the navigation (the outline :data:`NAV` with the generated sections filled in)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from eee.site import cataloguepages, included, schemadiff, schemapages
from eee.site.context import KIND_TITLES, GeneratedPage, SiteContext, changes_page, reference_page
from eee.site.render import render
from eee.store.schemas import EVAL, INSTANCE, Registry

# The site's navigation: each entry named in Generated.nav becomes a section with the
# generated pages below it. "Analysis" is left out when the pipeline wrote no analysis pages.
# Every hand-written page of docs/ is named here (a test checks it; mkdocs --strict too).
NAV: list[dict[str, Any]] = [
    {"Home": "index.md"},
    {
        "Guide": [  # the hand-written user guide (docs/guide/), in reading order
            "guide/index.md",
            {"The main job": "guide/pipeline.md"},
            {"The command line": "guide/command-line.md"},
            {"Converting harness logs": "guide/conversion.md"},
            {"Validation and limits": "guide/validation.md"},
            {"The commit gate": "guide/commit-gate.md"},
            {"The server gate": "guide/server.md"},
            {"Governance tools": "guide/governance.md"},
            {"Roles and signatures": "guide/roles.md"},
            {"Threat model": "guide/threat-model.md"},
            {"Importing a datastore": "guide/import.md"},
            {"Sidecars and DVC": "guide/sidecars.md"},
            {"Catalogue and analysis": "guide/catalogue.md"},
            {"Experiment cards": "guide/experiments.md"},
            {"Names and the identity registry": "guide/identity.md"},
            {"To the Hugging Face Hub": "guide/hub.md"},
            {"Schemas and migration": "guide/schemas.md"},
            {"The published site": "guide/site.md"},
            {"Scale and benchmarks": "guide/scale.md"},
            {"Architecture": "guide/architecture.md"},
        ]
    },
    {"Contributing": "governance/CONTRIBUTING.md"},
    {"Governance": "governance/README.md"},
    {"Schema reference": "reference/index.md"},
    {"Catalogue": "catalogue/index.md"},
    {"Analysis": "analysis/index.md"},
    {"Changelog": "CHANGELOG.md"},
]
# titles of governance sub-folders in the navigation
FOLDER_TITLES = {"examples": "Worked examples", "proposals": "Proposals", "events": "The ledger"}


@dataclass
class Generated:
    """The result of one generation run."""

    ctx: SiteContext
    pages: list[GeneratedPage]
    included: list[str]  # repository paths published as they are
    nav: dict[str, list[Any]] = field(default_factory=dict)  # nav entry -> children to add
    not_in_nav: list[str] = field(default_factory=list)  # patterns of pages reachable by links only
    kept: list[str] = field(default_factory=list)  # pages the last run wrote, left as they are
    published: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.published = set(self.included)


def _reference(
    ctx: SiteContext, examples: dict[str, list[str]], counts: dict[str, int]
) -> tuple[list[GeneratedPage], list[Any]]:
    trees = schemapages.trees(ctx)
    since = schemapages.since_map(ctx, trees)
    ordered = ctx.registry.ordered
    pages = [GeneratedPage("reference/index.md", schemapages.index_page(ctx, trees, counts))]
    nav: list[Any] = []
    for version in reversed(ordered):
        pages.append(
            GeneratedPage(
                f"reference/{version}/index.md", schemapages.version_page(ctx, version, trees, counts.get(version, 0))
            )
        )
        for kind in (EVAL, INSTANCE):
            md = schemapages.kind_page(ctx, version, kind, trees[(version, kind)], since, examples)
            pages.append(GeneratedPage(reference_page(version, kind), md))
        label = f"{version} (current)" if version == ctx.registry.current else version
        nav.append(
            {
                label: [
                    f"reference/{version}/index.md",
                    *({KIND_TITLES[k]: reference_page(version, k)} for k in (EVAL, INSTANCE)),
                ]
            }
        )
    steps = list(pairwise(ordered))
    changes = []
    for source, target in reversed(steps):
        page = changes_page(source, target)
        pages.append(GeneratedPage(page, schemadiff.changes_markdown(ctx, source, target, trees)))
        changes.append({f"{source} → {target}": page})
    if changes:
        nav.append({"What changed": changes})
    pages.append(GeneratedPage("reference/migrations.md", schemadiff.migrations_markdown(ctx)))
    nav.append({"Migration steps": "reference/migrations.md"})
    return pages, nav


def _governance_nav(paths: list[str], taken: set[str]) -> list[Any]:
    """Nav entries of the published governance documents not already in the nav."""
    top: list[Any] = []
    folders: dict[str, list[str]] = {}
    for rel in paths:
        if not rel.startswith("governance/") or rel in taken or rel == "governance/README.md":
            continue
        parts = rel.split("/")
        if len(parts) == 2:
            top.append(rel)
        else:
            folders.setdefault(parts[1], []).append(rel)
    for folder, items in folders.items():
        title = FOLDER_TITLES.get(folder, folder.replace("-", " ").capitalize())
        top.append({title: items[0] if len(items) == 1 else items})
    return top


def nav_paths(nav: Any) -> set[str]:
    """Every page path named in a nav configuration."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(nav_paths(v) for v in nav.values())) if nav else set()
    if isinstance(nav, list):
        return set().union(*(nav_paths(v) for v in nav)) if nav else set()
    return set()


def generate(
    root: Path,
    repo_url: str | None,
    extra: dict[str, Any] | None,
    nav: Any = None,
    use_directory_urls: bool = True,
    analysis: list[str] | None = None,
    parquet: list[str] | None = None,
    cache: cataloguepages.PagesCache | None = None,
) -> Generated:
    """Every generated page of the store at ``root``. ``analysis``: the site paths of the
    analysis step's pages (an index is made for them); ``parquet``: the site paths of the
    published catalogue files, which the catalogue pages link to; ``cache``: what the last
    run made the catalogue's pages from (those that did not change are kept, not made)."""
    registry = Registry.load(root / "schemas")
    ctx = SiteContext(root=root, registry=registry, repo_url=repo_url, use_directory_urls=use_directory_urls)
    catalogue = cataloguepages.generate(ctx, cataloguepages.Options.from_extra(extra), parquet or [], cache)
    reference, reference_nav = _reference(ctx, catalogue.examples, catalogue.records_by_version)
    published = included.sources(root)
    pages = reference + catalogue.pages
    analysis = sorted(analysis or [])
    if analysis:
        pages.append(GeneratedPage("analysis/index.md", render("analysis/index.md.j2", pages=analysis)))
    return Generated(
        ctx=ctx,
        pages=pages,
        included=published,
        nav={
            "reference/index.md": reference_nav,
            "catalogue/index.md": list(catalogue.nav),
            "governance/README.md": _governance_nav(published, nav_paths(nav)),
            "analysis/index.md": list(analysis),
        },
        not_in_nav=catalogue.not_in_nav,
        kept=catalogue.kept,
    )


def expand_nav(nav: list[Any] | None, expansions: dict[str, list[Any]]) -> list[Any] | None:
    """``nav`` with each entry named in ``expansions`` turned into a section: the page
    first (the section's index), then the children."""
    if nav is None:
        return None

    def visit(items: list[Any]) -> list[Any]:
        out: list[Any] = []
        for item in items:
            if isinstance(item, dict) and len(item) == 1:
                ((title, value),) = item.items()
                if isinstance(value, str) and expansions.get(value):
                    out.append({title: [value, *expansions[value]]})
                elif isinstance(value, list):
                    out.append({title: visit(value)})
                else:
                    out.append(item)
            else:
                out.append(item)
        return out

    return visit(nav)


def edit_path(root: Path, docs_dir: str, rel: str) -> str:
    """The path of a repository file relative to docs/, for the edit button."""
    return posixpath.relpath((root / rel).as_posix(), Path(docs_dir).resolve().as_posix())
