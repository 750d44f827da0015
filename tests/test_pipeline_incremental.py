"""The pipeline after a small change redoes work in proportion to it (real DVC, real MkDocs):
which files each stage rewrote is read from their mtimes and bytes, never from a time. And a
store past the site's page-per-record limit keeps every record reachable."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXED_UUID, git, load_example, make_pipeline_store, place_record, record_of
from eee.site.context import group_key

pytestmark = pytest.mark.slow

B = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"
C = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d"
NEW = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


def _pipeline(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", "pipeline", "--store", str(repo), "--no-pull"], capture_output=True, text=True
    )


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            path = Path(dirpath, name)
            st = path.lstat()
            out[path.relative_to(folder).as_posix()] = (st.st_mtime_ns, st.st_ino)
    return out


def _changed(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> set[str]:
    return {rel for rel, stamp in after.items() if before.get(rel) != stamp}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    repo = make_pipeline_store(tmp_path)
    config = repo / "mkdocs.yml"
    text = config.read_text()
    assert "record_pages: 2000" in text
    config.write_text(text.replace("record_pages: 2000", "record_pages: 1"))  # past the limit with two records
    place_record(repo, record_of("meta-llama/Llama-2-7b-hf", 8.79), record_uuid=FIXED_UUID)
    place_record(repo, record_of("facebook/opt-6.7b", 12.29), record_uuid=B)
    place_record(
        repo, load_example("aggregate", "valid", "v0.2.0_helm_leaderboard.json"), benchmark="helm_lite", record_uuid=C
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "store")
    return repo


def test_one_more_record_rewrites_its_partition_and_its_pages_only(store: Path) -> None:
    first = _pipeline(store)
    assert first.returncode == 0, first.stdout + first.stderr
    build = store / "build"
    catalog, docs = _snapshot(build / "catalog"), _snapshot(build / "docs")
    assert "benchmark=helm_lite/part-0.parquet" in catalog and "benchmark=wikitext-2/part-0.parquet" in catalog

    place_record(store, record_of("mistralai/Mistral-7B-v0.1", 6.1), record_uuid=NEW)
    second = _pipeline(store)
    assert second.returncode == 0, second.stdout + second.stderr
    # the catalogue: only the partition of the benchmark that holds the new record
    assert _changed(catalog, _snapshot(build / "catalog")) == {
        "benchmark=wikitext-2/part-0.parquet",
        ".partitions.json",
    }
    # the pages: the new record's shared page, its benchmark's page and what counts records;
    # the other benchmark, the other records' pages and the hand-written pages are untouched
    changed = _changed(docs, _snapshot(build / "docs"))
    assert f"catalogue/records/group-{group_key(NEW)}.md" in changed
    assert "catalogue/benchmarks/wikitext-2/index.md" in changed
    assert "catalogue/data/benchmark=wikitext-2/part-0.parquet" in changed
    for rel in (
        "catalogue/benchmarks/helm_lite/index.md",
        f"catalogue/records/group-{group_key(B)}.md",
        f"catalogue/records/group-{group_key(C)}.md",
        "catalogue/data/benchmark=helm_lite/part-0.parquet",
        "index.md",
        "CHANGELOG.md",
    ):
        assert rel in docs and rel not in changed, rel
    assert len(changed) < len(docs) // 4, sorted(changed)
    # what the pages kept from the last run (eee.site.cataloguecache) is what a run from
    # scratch writes, byte for byte
    fresh = store / "fresh-docs"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "eee",
            "site",
            "pages",
            "--store",
            str(store),
            "--out",
            str(fresh),
            "--nav",
            str(store / "fresh-nav.yml"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    kept = {
        p.relative_to(build / "docs").as_posix(): p.read_bytes() for p in (build / "docs").rglob("*") if p.is_file()
    }
    made = {p.relative_to(fresh).as_posix(): p.read_bytes() for p in fresh.rglob("*") if p.is_file()}
    assert sorted(kept) == sorted(made)
    assert [rel for rel in kept if kept[rel] != made[rel]] == []
    assert (store / "fresh-nav.yml").read_bytes() == (build / "site-nav.yml").read_bytes()


def test_past_the_limit_every_record_is_reachable_on_the_built_site(store: Path) -> None:
    """Three records, a limit of one page per record: none has a history, so all three are
    sections of shared pages; the built site has each one's anchor, its benchmark page links
    to it, the search index finds it and the catalogue page gives the counts."""
    proc = _pipeline(store)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = store / "build" / "site"
    for uuid, bench in ((FIXED_UUID, "wikitext-2"), (B, "wikitext-2"), (C, "helm_lite")):
        shared = (site / "catalogue" / "records" / f"group-{group_key(uuid)}" / "index.html").read_text()
        assert f'id="{uuid}"' in shared
        listing = (site / "catalogue" / "benchmarks" / bench / "index.html").read_text()
        assert f"records/group-{group_key(uuid)}/#{uuid}" in listing
    assert not (site / "catalogue" / "records" / FIXED_UUID).exists()
    index = (site / "catalogue" / "index.html").read_text()
    shared_pages = len({group_key(u) for u in (FIXED_UUID, B, C)})
    assert re.search(rf"the other 3 are sections of {shared_pages} shared pages", index), index
    search = (site / "search" / "search_index.json").read_text()
    for uuid in (FIXED_UUID, B, C):
        assert f"catalogue/records/group-{group_key(uuid)}/#{uuid}" in search
