"""The published site: a real ``mkdocs build --strict`` of a temporary store, and the
generated pages it must contain (schema reference, what changed, catalogue, governance)."""

from __future__ import annotations

import datetime as dt
import html
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXED_UUID, PROJECT, load_example, make_pipeline_store, place_record, record_of, sha256
from eee.governance.events import make_event, write

pytestmark = pytest.mark.slow

RETRACTED = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"
REPLACEMENT = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d"
PLAIN = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"
REASON = "scored on the training split"
DISPUTE_URL = "https://example.org/discussions/42"
ME = {"name": "Maintainer", "email": "m@example.org"}
REPO = "https://github.com/evaleval/eee-datastore"


_doc = record_of  # the example record for another model (and score)


def make_site_store(tmp: Path) -> Path:
    """A store with four records: one superseded (by a 0.2.0 record, itself disputed), one
    retracted, one with no history."""
    repo = make_pipeline_store(tmp)
    place_record(repo, _doc("meta-llama/Llama-2-7b-hf", 8.79), benchmark="wikitext", record_uuid=FIXED_UUID)
    place_record(repo, _doc("facebook/opt-6.7b", 12.29), benchmark="wikitext", record_uuid=RETRACTED)
    plain = _doc("mistralai/Mistral-7B-v0.1", 6.1)
    plain["model_info"]["name"] = "Mistral-7B-v0.1"  # the name repeats the id: shown once
    plain["evaluation_results"][0]["score_details"]["uncertainty"] = {
        "standard_error": {"value": 0.042},
        "num_samples": 245,
    }
    place_record(repo, plain, benchmark="wikitext", record_uuid=PLAIN)
    helm = load_example("aggregate", "valid", "v0.2.0_helm_leaderboard.json")
    place_record(repo, helm, benchmark="helm_lite", record_uuid=REPLACEMENT)
    now = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)
    write(repo, make_event("retract", RETRACTED, REASON, ME, now=now))
    write(
        repo,
        make_event(
            "supersede", FIXED_UUID, "fourth decimal", ME, replacement=REPLACEMENT, now=now + dt.timedelta(seconds=1)
        ),
    )
    write(
        repo,
        make_event(
            "dispute",
            REPLACEMENT,
            "harness version contested",
            ME,
            reference=DISPUTE_URL,
            now=now + dt.timedelta(seconds=2),
        ),
    )
    return repo


def write_pages(store: Path) -> subprocess.CompletedProcess[str]:
    """``eee site pages`` in ``store``, as the pipeline's pages stage runs it."""
    return subprocess.run(
        [sys.executable, "-m", "eee", "site", "pages", "--store", str(store)], capture_output=True, text=True
    )


def build_site(store: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``eee site pages``, then ``mkdocs build --strict`` in ``store``, as the pipeline's
    pages and site stages run them."""
    pages = write_pages(store)
    if pages.returncode != 0:
        return pages
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=store,
        capture_output=True,
        text=True,
        env=env,
    )


def text_of(page: Path) -> str:
    """The visible text of a built page (tags removed, entities decoded)."""
    raw = page.read_text(encoding="utf-8")
    raw = re.sub(r"<(script|style)\b.*?</\1>", " ", raw, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


def page(site: Path, rel: str) -> Path:
    return site / rel / "index.html"


def field_paths(schema: dict[str, Any]) -> set[str]:
    """Every property path of a schema, found independently of the site's own code."""
    defs = schema.get("$defs") or schema.get("definitions") or {}
    out: set[str] = set()

    def resolve(node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            node = {**defs[node["$ref"].rsplit("/", 1)[-1]], **{k: v for k, v in node.items() if k != "$ref"}}
        return node

    def visit(node: Any, prefix: str, depth: int) -> None:
        node = resolve(node)
        if not isinstance(node, dict) or depth > 12:
            return
        for name, sub in (node.get("properties") or {}).items():
            path = f"{prefix}.{name}" if prefix else name
            out.add(path)
            visit(sub, path, depth + 1)
        if isinstance(node.get("items"), dict):
            visit(node["items"], f"{prefix}[]", depth + 1)
        for alt in (node.get("oneOf") or []) + (node.get("anyOf") or []):
            visit(alt, prefix, depth + 1)

    visit(schema, "", 0)
    return out


def section(text: str, anchor_id: str) -> str:
    """The HTML from the element with ``anchor_id`` to the next heading."""
    start = text.index(f'id="{anchor_id}"')
    end = re.compile(r"<h[1-3]\b").search(text, start + 1)
    return text[start : end.start() if end else len(text)]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    tmp = tmp_path_factory.mktemp("site")
    store = make_site_store(tmp)
    site = tmp / "site"
    return store, site, build_site(store, site)


def test_strict_build_passes_and_writes_nothing_into_docs(built: tuple[Path, Path, Any]) -> None:
    store, site, proc = built
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    assert (site / "index.html").exists()
    assert (site / "search" / "search_index.json").exists()
    generated = {p.relative_to(store / "docs").as_posix() for p in (store / "docs").rglob("*") if p.is_file()}
    committed = {p.relative_to(PROJECT / "docs").as_posix() for p in (PROJECT / "docs").rglob("*") if p.is_file()}
    assert generated == committed  # generated pages go to build/docs: docs/ holds only hand-written files
    written = {p.relative_to(store / "build" / "docs").as_posix() for p in (store / "build" / "docs").rglob("*.md")}
    assert committed & {n for n in committed if n.endswith(".md")} <= written  # hand-written pages copied
    assert {"governance/README.md", "CHANGELOG.md", "reference/0.3.0/aggregate.md", "catalogue/index.md"} <= written


def test_schema_reference_lists_every_field_of_every_version(built: tuple[Path, Path, Any]) -> None:
    from eee.store.schemas import Registry

    store, site, _ = built
    registry = Registry.load(store / "schemas")
    for version in registry.ordered:
        for kind, slug in (("eval", "aggregate"), ("instance_level_eval", "instance-level")):
            built_page = page(site, f"reference/{version}/{slug}")
            text = text_of(built_page)
            missing = sorted(p for p in field_paths(registry.schema(version, kind)) if p not in text)
            assert not missing, f"{version} {kind}: {missing[:5]}"
            assert "It validates under schema" in text, f"{version} {kind}: the example does not validate"
    current = text_of(page(site, "reference/0.3.0/aggregate"))
    assert "model_info.inference_engine.version" in current
    for variant in ("URL", "Hugging Face dataset", "Other"):
        assert variant in current
    raw = page(site, "reference/0.3.0/aggregate").read_text()
    assert 'id="model_info.inference_engine.version"' in raw  # every field can be linked to


def test_what_changed_page_says_eval_library_became_required(built: tuple[Path, Path, Any]) -> None:
    _, site, _ = built
    raw = page(site, "reference/changes/0.2.0-to-0.2.1").read_text()
    newly = html.unescape(re.sub(r"<[^>]+>", "", section(raw, "eval-newly-required")))
    assert "eval_library" in newly
    assert "eval_library.name" not in newly  # inside a new object: listed as added, not as newly required
    added = html.unescape(re.sub(r"<[^>]+>", "", section(raw, "eval-added")))
    assert "eval_library.version" in added
    # the migration step's own description, under an anchor the migrations page links to
    assert 'id="eval_0_2_0_to_0_2_1"' in raw
    assert "Aggregate 0.2.0 -&gt; 0.2.1" in raw or "Aggregate 0.2.0 -> 0.2.1" in html.unescape(raw)
    steps = page(site, "reference/migrations").read_text()
    assert "../changes/0.2.0-to-0.2.1/#eval_0_2_0_to_0_2_1" in steps
    # 0.2.2 -> 0.2.3: the conditional requirement of level_names changed meaning
    text = text_of(page(site, "reference/changes/0.2.2-to-0.2.3"))
    assert "level_names" in text and "is levels or absent" in text


def test_catalogue_page_per_benchmark_with_governance_status(built: tuple[Path, Path, Any]) -> None:
    _, site, _ = built
    wikitext = page(site, "catalogue/benchmarks/wikitext")
    helm = page(site, "catalogue/benchmarks/helm_lite")
    assert wikitext.exists() and helm.exists()
    text = text_of(wikitext)
    for column in ("Model", "Evaluation", "Metric", "Score", "Source", "Status", "Record"):
        assert column in text
    assert f"retracted: {REASON}" in text
    raw = wikitext.read_text()
    assert f"../../records/{REPLACEMENT}/" in raw  # superseded: links to the replacement
    helm_raw = helm.read_text()
    assert f"../../records/{FIXED_UUID}/" in helm_raw  # the replacement links back
    assert DISPUTE_URL in helm_raw
    index = text_of(page(site, "catalogue"))
    assert "Built from the store directly" in index  # no parquet in this store
    assert "record_uuid" in index  # the columns of the catalogue


def test_catalogue_links_resolve(built: tuple[Path, Path, Any]) -> None:
    """The benchmark tables are raw HTML (MkDocs does not check their links): check them here."""
    _, site, _ = built
    pages = list((site / "catalogue").rglob("*.html"))
    assert pages
    for built_page in pages:
        for href in re.findall(r'href="([^"#]+)', built_page.read_text()):
            if href.startswith(("http:", "https:", "mailto:", "javascript:")) or "/assets/" in href:
                continue
            target = (built_page.parent / html.unescape(href)).resolve()
            # a page: the file itself, or a folder's index.html (a bare folder is no page)
            assert target.is_file() or (target / "index.html").is_file(), f"{built_page}: {href}"


def test_record_pages_show_json_status_and_history(built: tuple[Path, Path, Any]) -> None:
    _, site, _ = built
    retracted = text_of(page(site, f"catalogue/records/{RETRACTED}"))
    assert "Retracted" in retracted and REASON in retracted
    assert "History" in retracted and "retract" in retracted and "Maintainer" in retracted
    assert '"evaluation_id"' in retracted  # the record's JSON
    old = page(site, f"catalogue/records/{FIXED_UUID}").read_text()
    assert "Superseded" in old and f"../{REPLACEMENT}/" in old
    new = page(site, f"catalogue/records/{REPLACEMENT}").read_text()
    assert "Replaces an earlier record" in new and f"../{FIXED_UUID}/" in new
    assert "Disputed" in new and DISPUTE_URL in new
    assert "the catalogue reads it as 0.3.0" in text_of(page(site, f"catalogue/records/{REPLACEMENT}"))
    plain = text_of(page(site, f"catalogue/records/{PLAIN}"))
    assert "No events" in plain


def test_governance_documents_are_published_from_their_source(built: tuple[Path, Path, Any]) -> None:
    store, site, _ = built
    card = page(site, "governance")
    assert "Governance card" in text_of(card)
    assert f'href="{REPO}/edit/main/governance/README.md"' in card.read_text()  # edit the source, not a copy
    assert "Contributor guide" in text_of(page(site, "governance/CONTRIBUTING"))
    assert (store / "governance" / "schema-change-checklist.md").exists() == page(
        site, "governance/schema-change-checklist"
    ).exists()
    assert "Changelog" in text_of(page(site, "CHANGELOG"))
    # a link to a record file that this store does not hold goes to the repository
    example = page(site, "governance/examples/conflicting-mmlu-records").read_text()
    assert f"{REPO}/blob/main/data/mmlu/meta-llama/llama-65b/" in example


def test_site_uses_the_pipeline_catalogue_when_present(tmp_path: Path) -> None:
    from eee.catalog.table import CATALOG_DIR, write_catalog

    store = make_site_store(tmp_path)
    write_catalog(store, store / CATALOG_DIR)
    proc = build_site(store, tmp_path / "site")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    index = text_of(page(tmp_path / "site", "catalogue"))
    assert "Built from the pipeline's catalogue" in index
    assert "Built from the store directly" not in index


def test_past_the_limit_every_record_is_on_a_page_and_the_page_says_so(tmp_path: Path) -> None:
    from eee.site.context import group_key, group_page
    from eee.site.generate import generate

    store = make_site_store(tmp_path)
    gen = generate(store, REPO, {"catalogue": {"record_pages": 2, "page_rows": 1}})
    pages = {p.src_uri: p.content for p in gen.pages}
    index = pages["catalogue/index.md"]
    assert "Records on shared pages" in index and "extra.catalogue.record_pages" in index
    own = {f"catalogue/records/{u}.md" for u in (FIXED_UUID, RETRACTED, REPLACEMENT)}
    # more records than the limit: the three with a governance history keep a page of their own ...
    assert own <= set(pages)
    # ... and every other record is a section of its shared page, which the tables link to
    from eee.catalog.table import build

    table, _ = build(store)
    assert set(table["record_uuid"].to_pylist()) == gen.ctx.record_pages | gen.ctx.grouped
    assert gen.ctx.grouped and not gen.ctx.grouped & gen.ctx.record_pages
    for uuid in gen.ctx.grouped:
        assert f"## {uuid} {{ #{uuid} }}" in pages[group_page(uuid)]
    assert f"{len(gen.ctx.grouped)} are sections of" in index
    wikitext = [p for p in gen.pages if p.src_uri.startswith("catalogue/benchmarks/wikitext/")]
    assert len(wikitext) == 3  # one result per page
    listing = "".join(p.content for p in wikitext)
    assert f'href="../../../records/group-{group_key(PLAIN)}/#{PLAIN}"' in listing  # its row, on page 3
    section = pages[group_page(PLAIN)]
    assert f"{REPO}/blob/main/data/wikitext/mistralai/Mistral-7B-v0.1/{PLAIN}.json" in section


def test_link_rewriting_of_published_documents(tmp_path: Path) -> None:
    from eee.site.context import SiteContext
    from eee.site.included import resolver, rewrite_links
    from eee.store.schemas import Registry

    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "x.py").write_text("")
    ctx = SiteContext(tmp_path, Registry.load(), REPO, record_pages={PLAIN})
    resolve = resolver(ctx, "governance/examples/a.md", {"governance/README.md", "CHANGELOG.md"})
    text = (
        "[card](../README.md) [log](../../CHANGELOG.md#unreleased) [code](../../tools/x.py)\n"
        f"| [`rec`](../../data/b/d/m/{PLAIN}.json) | [gone](../../data/b/d/m/{RETRACTED}.json) |\n"
        "[typo](../../tools/nope.py) `[in code](../../tools/x.py)` [web](https://example.org)\n"
        "```\n[fenced](../../tools/x.py)\n```"
    )
    out = rewrite_links(text, "governance/examples/a.md", resolve)
    assert "[card](../README.md)" in out and "[log](../../CHANGELOG.md#unreleased)" in out
    assert f"[code]({REPO}/blob/main/tools/x.py)" in out
    assert f"[`rec`](../../catalogue/records/{PLAIN}.md)" in out
    assert f"[gone]({REPO}/blob/main/data/b/d/m/{RETRACTED}.json)" in out
    assert "[typo](../../tools/nope.py)" in out  # left for --strict to report
    assert "`[in code](../../tools/x.py)`" in out and "[fenced](../../tools/x.py)" in out


def test_conditions_are_said_exactly() -> None:
    from eee.site.conditions import parse_if

    loose = parse_if({"properties": {"score_type": {"const": "levels"}}})
    assert loose.text() == "`score_type` is `levels` or absent"
    assert loose.holds({}) and not loose.holds({"score_type": "binary"})
    tight = parse_if({"required": ["score_type"], "properties": {"score_type": {"const": "continuous"}}})
    assert loose.negate().both(tight).text() == "`score_type` is `continuous`"


def test_docs_folder_has_only_hand_written_pages() -> None:
    names = {p.relative_to(PROJECT / "docs").as_posix() for p in (PROJECT / "docs").rglob("*") if p.is_file()}
    assert not any(n.startswith(("reference/", "catalogue/", "governance/")) or n == "CHANGELOG.md" for n in names)
    config = (PROJECT / "mkdocs.yml").read_text()
    assert "docs_dir: build/docs" in config and "INHERIT: build/site-nav.yml" in config
    # one MkDocs hook, which changes no output (the search-hook tests build with and without
    # it): Zensical, which builds the same folder and ignores MkDocs hooks, gives the same site
    block = re.search(r"^hooks:\n((?:  .*\n)+)", config, re.M)
    assert block is not None and config.count("\nhooks:") == 1
    assert re.findall(r"^  - (.+)$", block.group(1), re.M) == ["tools/eee/site/searchhook.py"]
    assert "content.code.copy" in config and "edit_uri:" in config


def test_site_builds_for_an_empty_store(tmp_path: Path) -> None:
    store = make_pipeline_store(tmp_path)
    proc = build_site(store, tmp_path / "site")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "The store holds no records yet." in text_of(page(tmp_path / "site", "catalogue"))
    assert page(tmp_path / "site", "reference/0.3.0/aggregate").exists()


def _search_docs(site: Path) -> list[dict[str, Any]]:
    import json

    return json.loads((site / "search" / "search_index.json").read_text())["docs"]


def test_status_rows_are_marked_and_names_are_not_repeated(built: tuple[Path, Path, Any]) -> None:
    _, site, _ = built
    raw = page(site, "catalogue/benchmarks/wikitext").read_text()
    for status in ("retracted", "superseded", "active"):
        assert f'<tr class="eee-status-{status}">' in raw
    assert '<tr class="eee-status-disputed">' in page(site, "catalogue/benchmarks/helm_lite").read_text()
    text = text_of(page(site, "catalogue/benchmarks/wikitext"))
    assert "Mistral-7B-v0.1 Mistral-7B-v0.1" not in " ".join(text.split())
    record = " ".join(text_of(page(site, f"catalogue/records/{PLAIN}")).split())
    assert "Model: mistralai/Mistral-7B-v0.1 Evaluation id" in record  # the name equals the id: said once
    llama = " ".join(text_of(page(site, f"catalogue/records/{FIXED_UUID}")).split())
    assert "Model: meta-llama/Llama-2-7b-hf (Llama-2-7B)" in llama  # a different name is kept


def test_uncertainty_is_shown_where_a_record_has_it(built: tuple[Path, Path, Any]) -> None:
    _, site, _ = built
    # the record's standard error, as its normal 95% interval, labelled with its source
    assert "6.1 [6.01768, 6.18232] (record)" in " ".join(text_of(page(site, "catalogue/benchmarks/wikitext")).split())
    record = " ".join(text_of(page(site, f"catalogue/records/{PLAIN}")).split())
    assert "Standard error" in record and "0.042" in record and "245" in record
    assert "record (standard error: as given; interval: score +- z * se (normal))" in record
    other = " ".join(text_of(page(site, f"catalogue/records/{RETRACTED}")).split())
    assert "Standard error" not in other  # no column of blanks for a record without uncertainty
    assert "Uncertainty fromProtocol" in other and "∞none" in other  # but its source is said: none


def test_record_pages_are_searchable_and_snippets_keep_cells_apart(built: tuple[Path, Path, Any]) -> None:
    _, site, _ = built
    docs = _search_docs(site)
    record = [d for d in docs if d["location"] == f"catalogue/records/{RETRACTED}/"]
    assert record and RETRACTED in record[0]["title"]  # the uuid finds the record's page
    records = [d for d in docs if d["location"].startswith("catalogue/records/")]
    assert not any('"evaluation_id"' in d["text"] for d in records)  # the JSON stays out of the index
    results = next(d for d in docs if d["location"] == "catalogue/benchmarks/wikitext/#results")
    assert "ModelEvaluation" not in results["text"]
    assert "facebook/opt-6.7b Llama-2-7B wikitext word_perplexity ↓ 12.29 no interval EEE paper" in " ".join(
        results["text"].split()
    )


def test_site_uses_a_partitioned_catalogue_and_publishes_its_files(tmp_path: Path) -> None:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from eee.catalog.table import build

    store = make_site_store(tmp_path)
    table, _ = build(store)
    for name in ("wikitext", "helm_lite"):  # the hive layout the analysis branch writes
        part = table.filter(pc.equal(table["benchmark"], name)).drop_columns(["benchmark"])
        target = store / "build" / "catalog" / f"benchmark={name}" / "part-0.parquet"
        target.parent.mkdir(parents=True)
        pq.write_table(part, target)
    proc = build_site(store, tmp_path / "site")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = tmp_path / "site"
    published = site / "catalogue" / "data" / "benchmark=wikitext" / "part-0.parquet"
    assert published.read_bytes() == (store / "build/catalog/benchmark=wikitext/part-0.parquet").read_bytes()
    index = page(site, "catalogue").read_text()
    assert 'href="data/benchmark%3Dwikitext/part-0.parquet"' in index
    assert "Built from the pipeline's catalogue" in text_of(page(site, "catalogue"))
    bench = page(site, "catalogue/benchmarks/wikitext").read_text()
    assert 'href="../../data/benchmark%3Dwikitext/part-0.parquet"' in bench  # its own partition
    assert f"retracted: {REASON}" in text_of(page(site, "catalogue/benchmarks/wikitext"))


def test_analysis_pages_are_published_in_their_own_section(tmp_path: Path) -> None:
    store = make_site_store(tmp_path)
    pages = store / "build" / "analysis" / "pages"
    pages.mkdir(parents=True)
    (pages / "wikitext.md").write_text("# wikitext: agreement and IRT\n\n![abilities](wikitext-abilities.svg)\n")
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>\n'
    (pages / "wikitext-abilities.svg").write_text(svg)
    proc = build_site(store, tmp_path / "site")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = tmp_path / "site"
    assert (site / "analysis" / "wikitext-abilities.svg").read_text() == svg
    built_page = page(site, "analysis/wikitext").read_text()
    assert 'src="../wikitext-abilities.svg"' in built_page
    assert "wikitext: agreement and IRT" in text_of(page(site, "analysis"))  # the section's index lists it
    assert re.search(r">\s*Analysis\s*<", page(site, "").read_text())  # a tab of its own
    assert not page(tmp_path / "site", "analysis").parent.joinpath("..", "docs").exists()


def test_site_pages_refuses_a_docs_page_that_the_site_generates(tmp_path: Path) -> None:
    store = make_site_store(tmp_path)
    assert write_pages(store).returncode == 0
    before = (store / "build" / "docs" / "catalogue" / "index.md").read_text()
    (store / "docs" / "catalogue").mkdir()
    (store / "docs" / "catalogue" / "index.md").write_text("# a hand-made catalogue\n")
    proc = write_pages(store)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "catalogue/index.md is written twice" in proc.stderr and "hint:" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (store / "build" / "docs" / "catalogue" / "index.md").read_text() == before  # the last run stays


def test_a_new_status_is_marked_and_said_generically(tmp_path: Path) -> None:
    """The ledger branch adds ``flagged``; any status the site does not know gets its class,
    its name in bold and its reason."""
    from eee.site.cataloguepages import results_html
    from eee.site.context import SiteContext
    from eee.store.schemas import Registry

    ctx = SiteContext(tmp_path, Registry.load(), REPO, record_pages={PLAIN})
    row = {
        "record_uuid": PLAIN,
        "record_path": f"data/wikitext/mistralai/Mistral-7B-v0.1/{PLAIN}.json",
        "benchmark": "wikitext",
        "developer": "mistralai",
        "model": "Mistral-7B-v0.1",
        "model_id": "mistralai/Mistral-7B-v0.1",
        "score": 6.1,
        "status": "flagged",
        "status_reason": "breaks the <naming> rule",
    }
    out = results_html(ctx, [row], "catalogue/benchmarks/wikitext/index.md")
    assert '<tr class="eee-status-flagged">' in out
    assert "<strong>flagged</strong>: breaks the &lt;naming&gt; rule" in out
    assert f'href="../../records/{PLAIN}/"' in out


def test_site_pages_outside_a_store_is_refused_without_a_traceback(tmp_path: Path) -> None:
    def pages() -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "eee", "site", "pages", "--store", str(tmp_path)]
        return subprocess.run(argv, capture_output=True, text=True)

    proc = pages()  # not a store at all: a usage error, one line
    assert proc.returncode == 64 and proc.stderr.count("\n") == 1 and "not a store" in proc.stderr
    (tmp_path / "data").mkdir()  # a store without its schemas
    proc = pages()
    assert proc.returncode == 1 and "schema registry is missing" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "build" / "docs").exists()


def test_flagged_and_duplicate_records_say_so_on_their_pages(tmp_path: Path) -> None:
    """The ledger's flag and duplicate events: a row shaded by its status class, and the
    record page's notices and relations (from the templates)."""
    store = make_site_store(tmp_path)
    now = dt.datetime(2026, 6, 2, tzinfo=dt.UTC)
    record = next((store / "data").rglob(f"{PLAIN}.json"))
    bound = {"record_path": record.relative_to(store).as_posix(), "sha256": sha256(record)}
    write(store, make_event("flag", PLAIN, "folder name", ME, rule="naming", path="$.model_info.id", now=now, **bound))
    # a retracted record is not marked a duplicate (the state machine): the replacement is
    write(store, make_event("duplicate", REPLACEMENT, "same run", ME, of=PLAIN, now=now + dt.timedelta(seconds=1)))
    proc = build_site(store, tmp_path / "site")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = tmp_path / "site"
    assert '<tr class="eee-status-flagged">' in page(site, "catalogue/benchmarks/wikitext").read_text()
    flagged = " ".join(text_of(page(site, f"catalogue/records/{PLAIN}")).split())
    assert "Flagged" in flagged and "Concern: folder name" in flagged and "Rule naming at $.model_info.id" in flagged
    duplicate = " ".join(text_of(page(site, f"catalogue/records/{REPLACEMENT}")).split())
    assert "Duplicate" in duplicate and "Repeats 3c4d5e6f, which stands: same run" in duplicate
    assert "Status: duplicate" in duplicate and "Lifecycle: duplicate; marked disputed" in duplicate
    # the record it replaced moves along: it stands on the record its replacement repeats
    moved = " ".join(text_of(page(site, f"catalogue/records/{FIXED_UUID}")).split())
    assert "The record that stands for it now is 3c4d5e6f" in moved


def test_search_hook_spares_the_parse_and_keeps_the_index_byte_identical(tmp_path: Path) -> None:
    """Past ``record_pages`` the shared pages hold one search-excluded results table per
    record: the hook (tools/eee/site/searchhook.py) cuts those blocks before the search
    plugin's HTML parser sees them, and the site it builds, search index included, is
    byte-identical to the build without the hook."""
    store = make_site_store(tmp_path)
    config = store / "mkdocs.yml"
    text = config.read_text().replace("record_pages: 2000", "record_pages: 2")
    assert "record_pages: 2 " in text and "- tools/eee/site/searchhook.py" in text
    config.write_text(text)
    (store / "mkdocs-nohook.yml").write_text(text.replace("- tools/eee/site/searchhook.py", "[]"))
    assert write_pages(store).returncode == 0
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", SOURCE_DATE_EPOCH="0")
    sites = {}
    for name in ("mkdocs.yml", "mkdocs-nohook.yml"):
        sites[name] = tmp_path / f"site-{name}"
        cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", name, "--site-dir", str(sites[name])]
        proc = subprocess.run(cmd, cwd=store, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
    hooked, plain = sites["mkdocs.yml"], sites["mkdocs-nohook.yml"]
    files = sorted(p.relative_to(hooked) for p in hooked.rglob("*") if p.is_file() and p.suffix in {".html", ".json"})
    assert files == sorted(
        p.relative_to(plain) for p in plain.rglob("*") if p.is_file() and p.suffix in {".html", ".json"}
    )
    for rel in files:
        assert (hooked / rel).read_bytes() == (plain / rel).read_bytes(), rel
    # the shared page's record is found by its uuid (its section is indexed) ...
    group = [d for d in _search_docs(hooked) if "/records/group-" in d["location"]]
    assert any(d["location"].endswith(f"#{PLAIN}") for d in group)
    # ... and what the plugin leaves out (the results table) is not in the index
    assert not any("0 … 1" in d["text"] or "<td>" in d["text"] for d in group)


def test_search_hook_feeds_the_search_parser_no_excluded_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: with the hook, no HTML the search plugin parses holds an excluded block."""
    from material.plugins.search import plugin as search
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    store = make_site_store(tmp_path)
    config = store / "mkdocs.yml"
    config.write_text(config.read_text().replace("record_pages: 2000", "record_pages: 2"))
    assert write_pages(store).returncode == 0
    fed: list[str] = []
    feed = search.Parser.feed

    def recording(self: Any, data: str) -> None:
        fed.append(data)
        feed(self, data)

    monkeypatch.setattr(search.Parser, "feed", recording)
    monkeypatch.chdir(store)
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    build(load_config(str(config), site_dir=str(tmp_path / "site")))
    shared = [d for d in fed if f'id="{PLAIN}"' in d]
    assert shared, "the shared page was not indexed"
    assert not any("<div data-search-exclude>" in d for d in shared)
    assert (tmp_path / "site" / "catalogue" / "records").is_dir()
