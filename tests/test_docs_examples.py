"""Every example command of the README, the contributor guide and the site's hand-written
pages runs as printed, in a store made for it (a copy of this repository unless the page says another
in an HTML comment; see tests/docs_examples.py for the vocabulary), and exits as the page
says. The README's tour is also checked for what it promises: a retracted record, shown so
on the site, and a clean `git status` afterwards."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import PROJECT, reference
from docs_examples import PAGES, Block, Ran, blocks_of, environment, make_store, run_block

pytestmark = pytest.mark.slow

TOUR_UUID = "3dda1e49-5280-4cc0-9cae-4c436e05f4ac"
S3_BUCKET = "eee-docs"
S3_KEY_ID = "AKIAEEEDOCSKEY000001"
S3_SECRET = "eee-docs-secret-1a2b3c4d"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def s3_endpoint() -> Iterator[str]:
    moto_server = pytest.importorskip("moto.server", reason="moto is not installed (pip install 'moto[server]')")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    import boto3

    boto3.client(
        "s3", endpoint_url=url, aws_access_key_id=S3_KEY_ID, aws_secret_access_key=S3_SECRET, region_name="us-east-1"
    ).create_bucket(Bucket=S3_BUCKET)
    try:
        yield url
    finally:
        server.stop()


def s3_placeholders(block: Block, endpoint: str) -> None:
    """The page's S3 placeholders become the local server's bucket, keys and endpoint."""
    for old, new in (
        ("s3://BUCKET/", f"s3://{S3_BUCKET}/"),
        ("access_key_id AKIA...", f"access_key_id {S3_KEY_ID}"),
        ("secret_access_key ...", f"secret_access_key {S3_SECRET}"),
        ("https://s3.example.org", endpoint),
    ):
        assert old in block.text, f"{block.where}: an s3 example without its placeholder {old!r}"
        block.replace.append((old, new))


def failures(block: Block, ran: list[Ran], out: str, err: str) -> list[str]:
    bad = [
        f"{block.page}:{r.line}: `{r.command}` exited {r.status}"
        + (f" (the page says {r.expected})" if r.expected is not None else " (0 or 2 expected)")
        for r in ran
        if not r.ok
    ]
    if "Traceback (most recent call last)" in out + err:
        bad.append(f"{block.where}: a command printed a traceback")
    if bad:
        bad.append(f"--- stdout\n{out[-4000:]}\n--- stderr\n{err[-4000:]}")
    return bad


def run_page(page: str, tmp_path: Path, s3: str | None = None) -> dict[str, Path]:
    """Run every example of ``page`` in order, one store per store kind; returns the stores."""
    blocks = blocks_of(page)
    if any(b.needs_reference for b in blocks):
        reference()  # the page reads the reference material beside the store
    stores: dict[str, Path] = {}
    problems: list[str] = []
    for block in blocks:
        if block.store not in stores:
            stores[block.store] = make_store(tmp_path / block.store, block.store)
        env = environment(tmp_path)
        if block.s3:
            assert s3 is not None
            s3_placeholders(block, s3)
            env.update(
                AWS_EC2_METADATA_DISABLED="true",
                AWS_CONFIG_FILE="/nonexistent",
                AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
            )
        ran, out, err = run_block(block, stores[block.store], env)
        problems += failures(block, ran, out, err)
        if block.s3:
            assert S3_SECRET not in out + err, f"{block.where}: the secret key was printed"
    assert not problems, "\n".join(problems)
    return stores


RUNNABLE = [page for page in PAGES if blocks_of(page)]


@pytest.mark.parametrize("page", [p for p in RUNNABLE if p != "README.md"])
def test_the_examples_of_a_page_run_as_printed(page: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    s3 = request.getfixturevalue("s3_endpoint") if any(b.s3 for b in blocks_of(page)) else None
    stores = run_page(page, tmp_path, s3)
    if page == "docs/guide/site.md":  # the site it builds holds the guide, every page of it
        site = stores["copy"] / "build" / "site"
        for source in sorted((PROJECT / "docs" / "guide").glob("*.md")):
            built = site / "guide" / ("" if source.stem == "index" else source.stem) / "index.html"
            assert built.is_file(), f"{source.relative_to(PROJECT)} is not on the built site"


def test_the_readme_tour_runs_as_printed_and_does_what_it_says(tmp_path: Path) -> None:
    stores = run_page("README.md", tmp_path)
    store = stores["copy"]
    record = store / "build" / "site" / "catalogue" / "records" / TOUR_UUID / "index.html"
    assert record.is_file(), "the tour's record has no page on the site"
    assert "retracted" in record.read_text(encoding="utf-8")
    benchmark = store / "build" / "site" / "catalogue" / "benchmarks" / "tiny_qa" / "index.html"
    assert TOUR_UUID[:8] in benchmark.read_text(encoding="utf-8")
    status = environment(tmp_path)
    import subprocess

    proc = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=store, capture_output=True, text=True, env=status
    )
    assert proc.stdout == "", f"the tour left the checkout dirty:\n{proc.stdout}"
    assert "tour" not in subprocess.run(["git", "branch"], cwd=store, capture_output=True, text=True).stdout
