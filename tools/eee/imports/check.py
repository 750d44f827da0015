"""The manifests' check, for the ``imports`` hook (the index) and the audit (a commit).

A manifest is checked against its schema, its file name and its own arithmetic, and every
file it places must be in the tree with the sha256 it lists (a sidecar: its DVC pointer);
every flag event it names must be in the tree too.
"""

from __future__ import annotations

import hashlib
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

from eee.findings import Finding
from eee.imports import REFUSED


def stream_blobs(specs: list[str], cwd: str | Path | None = None) -> Iterator[bytes | None]:
    """The contents of ``specs`` (``:path``, ``rev:path``) one at a time, None when absent:
    one ``git cat-file --batch``, whatever the number, without holding them all."""
    if not specs:
        return
    proc = subprocess.Popen(
        ["git", "cat-file", "--batch"],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin = proc.stdin

    def feed() -> None:
        try:
            for spec in specs:
                stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
        except BrokenPipeError:
            pass
        finally:
            stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        for _ in specs:
            header = proc.stdout.readline().split()
            if len(header) == 3 and header[1] == b"blob":
                data = proc.stdout.read(int(header[2]))
                proc.stdout.read(1)
                yield data
            else:
                yield None
    finally:
        writer.join()
        proc.stdout.close()
        proc.wait()


def _listing(rev: str | None, cwd: str | Path | None) -> set[str]:
    args = ["ls-files", "-z", "--cached"] if rev is None else ["ls-tree", "-r", "-z", "--name-only", rev]
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    return {p.decode("utf-8", "surrogateescape") for p in proc.stdout.split(b"\0") if p}


def check_manifests(
    paths: list[str], rev: str | None = None, cwd: str | Path | None = None, where: object = None
) -> list[Finding]:
    """Findings of the manifests ``paths`` in the index (``rev`` None) or in commit ``rev``."""
    from eee.imports.manifest import loads, manifest_findings

    show = where if callable(where) else (lambda p: p)
    spec = ":" if rev is None else f"{rev}:"
    out: list[Finding] = []
    docs = []
    for rel, data in zip(paths, stream_blobs([spec + p for p in paths], cwd), strict=True):
        if data is None:
            out.append(Finding(show(rel), "$", "the manifest is not in the tree", None, check="import"))
            continue
        try:
            docs.append((rel, loads(data.decode("utf-8"))))
        except (UnicodeDecodeError, ValueError) as exc:
            out.append(
                Finding(
                    show(rel),
                    "$",
                    f"unreadable import manifest: {exc}",
                    "manifests are written by `eee import`",
                    check="import",
                )
            )
    if not docs:
        return out
    tree = _listing(rev, cwd)
    wanted = sorted(
        {
            item["store"]
            for _, doc in docs
            for item in (doc.get("files") if isinstance(doc.get("files"), list) else [])
            if isinstance(item, dict)
            and item.get("outcome") != REFUSED
            and item.get("kind") == "record"
            and isinstance(item.get("store"), str)
            and item["store"] in tree
        }
    )
    digests = {
        p: hashlib.sha256(data).hexdigest()
        for p, data in zip(wanted, stream_blobs([spec + p for p in wanted], cwd), strict=True)
        if data is not None
    }
    for rel, doc in docs:
        out += manifest_findings(doc, rel, tree.__contains__, digests.get, file=show(rel))
    return out
