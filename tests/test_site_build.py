"""``eee site build``: a real MkDocs build (strict), in full or only the pages whose source
changed; an incremental build is the full build's site, byte for byte, search index included."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import place_record, record_of
from eee.site.build import SiteBuildError, build
from test_site import make_site_store, write_pages

pytestmark = pytest.mark.slow

NEW = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _same_site(a: Path, b: Path) -> None:
    left, right = _files(a), _files(b)
    assert sorted(left) == sorted(right)
    differ = [rel for rel in left if left[rel] != right[rel]]
    assert differ == []


def _eee_site_build(store: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", "site", "build", "--store", str(store), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "SOURCE_DATE_EPOCH": "0", **env},
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")  # the sitemap's date: the same in every build here
    repo = make_site_store(tmp_path_factory.mktemp("site-build"))
    assert write_pages(repo).returncode == 0
    first = _eee_site_build(repo)
    assert first.returncode == 0, first.stderr
    assert "site built in full (no record of a previous build)" in first.stdout
    return repo


def test_nothing_changed_renders_nothing(store: Path) -> None:
    again = _eee_site_build(store)
    assert again.returncode == 0, again.stderr
    assert "site built incrementally" in again.stdout and " 0 of " in again.stdout


def test_one_more_record_renders_its_pages_only_and_equals_a_full_build(store: Path, tmp_path: Path) -> None:
    site = store / "build" / "site"
    index_before = json.loads((site / "search" / "search_index.json").read_bytes())
    place_record(store, record_of("allenai/OLMo-7B", 7.7), benchmark="wikitext", record_uuid=NEW)
    assert write_pages(store).returncode == 0
    done = build(store)
    assert not done.full and done.reason == "incremental"
    # the record's page, its benchmark's page and the pages that count records: a few, not the site
    assert 1 <= done.rebuilt <= 6 < done.pages
    assert (site / "catalogue" / "records" / NEW / "index.html").is_file()
    index = json.loads((site / "search" / "search_index.json").read_bytes())
    assert any(d["location"].startswith(f"catalogue/records/{NEW}/") for d in index["docs"])
    kept = {d["location"] for d in index_before["docs"] if not d["location"].startswith("catalogue/")}
    assert kept <= {d["location"] for d in index["docs"]}  # the pages not rebuilt are still found
    full = build(store, tmp_path / "full", full=True)
    assert full.full and full.rebuilt == done.pages
    _same_site(site, tmp_path / "full")


def test_a_changed_title_in_the_navigation_builds_every_page(store: Path, tmp_path: Path) -> None:
    page = store / "build" / "docs" / "catalogue" / "benchmarks" / "wikitext" / "index.md"
    text = page.read_text(encoding="utf-8")
    assert 'title: "wikitext"' in text
    page.write_text(text.replace('title: "wikitext"', 'title: "wikitext, renamed"', 1), encoding="utf-8")
    try:
        done = build(store)
        assert done.full and "catalogue/benchmarks/wikitext/index.md changed" in done.reason
        other = (store / "build" / "site" / "governance" / "index.html").read_text(encoding="utf-8")
        assert "wikitext, renamed" in other  # every page's navigation shows the new title
        build(store, tmp_path / "full", full=True)
        _same_site(store / "build" / "site", tmp_path / "full")
    finally:
        page.write_text(text, encoding="utf-8")
        build(store)


def test_a_removed_page_builds_in_full_and_leaves_no_stale_page(store: Path) -> None:
    extra = store / "build" / "docs" / "catalogue" / "records" / "stray.md"
    extra.write_text("# stray\n", encoding="utf-8")
    assert not build(store).full
    assert (store / "build" / "site" / "catalogue" / "records" / "stray" / "index.html").is_file()
    extra.unlink()
    done = build(store)
    assert done.full and "removed" in done.reason
    assert not (store / "build" / "site" / "catalogue" / "records" / "stray").exists()


def test_a_strict_warning_fails_and_the_next_build_is_full(store: Path) -> None:
    page = store / "build" / "docs" / "catalogue" / "records" / "broken.md"
    page.write_text("# broken\n\n[a link to nothing](nowhere.md)\n", encoding="utf-8")
    try:
        with pytest.raises(SiteBuildError):
            build(store)
        assert not (store / "build" / ".site-state.json").exists()
        proc = _eee_site_build(store)
        assert proc.returncode == 1
        assert "nowhere.md" in proc.stderr and "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") <= 4
    finally:
        page.unlink()
    done = build(store)
    assert done.full and done.reason == "no record of a previous build"


def test_progress_lines_when_the_pipeline_asks(store: Path) -> None:
    proc = _eee_site_build(store, "--full", EEE_PROGRESS_LINES="1")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[progress] ")]
    assert lines and lines[-1].startswith("[progress] building pages: ")
    done, total = lines[-1].rsplit(" ", 1)[1].replace(",", "").split("/")
    assert done == total and int(total) > 10


def test_the_site_address_is_the_store_s_setting_and_never_a_placeholder(tmp_path: Path) -> None:
    """mkdocs.yml names no address; the store's site_url setting, when set, is the site's
    (the navigation file mkdocs.yml inherits carries it), and unset nothing names one."""
    import yaml

    from conftest import PROJECT

    assert not re.search(r"^site_url:", (PROJECT / "mkdocs.yml").read_text(), re.M)
    repo = make_site_store(tmp_path)
    assert write_pages(repo).returncode == 0
    nav = repo / "build" / "site-nav.yml"
    assert "site_url" not in yaml.safe_load(nav.read_text())
    (repo / "governance" / "settings.yaml").write_text("site_url: https://evals.example.org/store\n")
    assert write_pages(repo).returncode == 0
    assert yaml.safe_load(nav.read_text())["site_url"] == "https://evals.example.org/store/"
    (repo / "governance" / "settings.yaml").write_text("site_url: not an address\n")
    proc = write_pages(repo)
    assert proc.returncode == 1 and "governance/settings.yaml" in proc.stderr and "site_url" in proc.stderr
