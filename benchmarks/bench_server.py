#!/usr/bin/env python3
"""The server gate at the public datastore's size: what the pre-receive and post-receive
hooks (``eee server install``) add to a ``git push`` into a bare repository of 230,000 records.

    python benchmarks/bench_server.py [--size N] [--runs N] [--import-records N] [--batch N]

The store is the scale benchmark's (benchmarks/scale_store.py, ``gate-<size>``, built once
and cached under ``$TMPDIR/eee-bench-scale``); its bare repository (``server-<size>.git``,
cached beside it, its objects packed as a server's are) gets the server gate, whose install
builds the audit's duplicates index (timed, the first time). A pusher (a bare clone: no checkout of 230,000 files is needed)
writes its commits with ``git fast-import`` on top of the server's ``main`` and pushes them:

one record    a one-record commit pushed with the hooks and without them (``core.hooksPath``
              pointed at an empty folder), in pairs, medians: target < 1 s added.
import        ``--import-records`` new records (default 5,000) in commits of ``--batch``
              (default 500), pushed at once, with the hooks and without: target < 30 s with.

After each push the server's ``main`` is put back where it was (``git update-ref``), so
every run pushes onto the same store. Figures go to stdout; progress to stderr.
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scale_store  # noqa: E402

from eee.store.paths import canonical_record_path  # noqa: E402
from eee.store.strictjson import canonical  # noqa: E402

PY = sys.executable
RESULTS: list[tuple[str, str, str]] = []


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def figure(name: str, value: str, verdict: str) -> None:
    RESULTS.append((name, value, verdict))
    say(f"  {name}: {value}  [{verdict}]")


def run(
    cmd: list[str], cwd: Path, input: bytes | None = None, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(cmd, cwd=cwd, input=input, capture_output=True)
    if check and proc.returncode != 0:
        raise SystemExit(
            f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-2000:]!r}\n{proc.stderr[-3000:]!r}"
        )
    return proc


def git(repo: Path, *args: str, input: bytes | None = None, check: bool = True) -> str:
    return run(["git", *args], repo, input, check).stdout.decode().strip()


def server_repo(size: int) -> tuple[Path, float | None]:
    """The cached bare repository of the ``gate-<size>`` store with the server gate, and the
    seconds ``eee server install`` took (None when it was installed before)."""
    bare = scale_store.CACHE / f"server-{size}.git"
    done = bare / "eee-bench.complete"
    if done.exists():
        # installed again: the hooks name the interpreter that installed them, which may be
        # gone (another checkout's, a test's); with the index already built this is quick
        run([PY, "-m", "eee", "server", "install", str(bare)], bare)
        return bare, None
    source = scale_store.store("gate", size, git=True)
    if bare.exists():
        shutil.rmtree(bare)
    say(f"server: cloning {source} into {bare}")
    git(scale_store.CACHE, "clone", "-q", "--bare", str(source), str(bare))
    git(bare, "config", "gc.auto", "0")  # no background gc racing the measurements
    git(bare, "config", "receive.autogc", "false")
    say("server: git repack -ad (a server's objects are packed; the store was committed as loose objects)")
    git(bare, "repack", "-adq")
    say("server: eee server install (builds the audit's duplicates index)")
    start = time.perf_counter()
    run([PY, "-m", "eee", "server", "install", str(bare)], bare)
    seconds = time.perf_counter() - start
    done.write_text("installed\n")
    return bare, seconds


def pusher(bare: Path, work: Path) -> Path:
    """A bare clone of the server's repository (objects shared, no checkout) that pushes to it."""
    repo = work / "pusher.git"
    git(work, "clone", "-q", "--bare", "--shared", str(bare), str(repo))  # its origin: the server
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.org")
    git(repo, "config", "gc.auto", "0")
    return repo


_SERIAL = [0]


def new_records(n: int) -> list[tuple[str, bytes]]:
    """``n`` records no store here holds (their own model ids: no duplicate of the store's)."""
    templates = scale_store._templates()
    out = []
    for _ in range(n):
        _SERIAL[0] += 1
        k = _SERIAL[0]
        benchmark, doc = templates[k % len(templates)]
        doc = copy.deepcopy(doc)
        model = f"bench-push/model-{os.getpid()}-{k}"
        doc["model_info"]["id"] = model
        doc["model_info"]["name"] = model.split("/")[1]
        if "developer" in doc["model_info"]:
            doc["model_info"]["developer"] = "bench-push"
        doc["evaluation_id"] = f"{benchmark}/{model.replace('/', '_')}/{1780000000 + k}"
        doc["retrieved_timestamp"] = str(1780000000 + k)
        rid = str(uuid.uuid4())
        out.append((canonical_record_path(benchmark, model, rid), canonical(doc)))
    return out


def commits(repo: Path, base: str, batches: list[list[tuple[str, bytes]]]) -> str:
    """Commits of ``batches`` (one commit each) on top of ``base``, by ``git fast-import``;
    returns the last."""
    stream = bytearray()
    stamp = int(time.time())
    for n, batch in enumerate(batches):
        message = f"{len(batch)} records (batch {n + 1} of {len(batches)})".encode()
        stream += b"commit refs/heads/bench\n"
        stream += f"committer bench <bench@example.org> {stamp} +0000\n".encode()
        stream += b"data %d\n%s\n" % (len(message), message)
        if n == 0:
            stream += f"from {base}\n".encode()
        for rel, data in batch:
            stream += f"M 100644 inline {rel}\n".encode() + b"data %d\n" % len(data) + data + b"\n"
        stream += b"\n"
    git(repo, "fast-import", "--quiet", "--force", input=bytes(stream))
    return git(repo, "rev-parse", "refs/heads/bench")


def _cpu() -> float:
    """CPU seconds of every child process waited for so far (git push, its receive-pack, the hooks)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_push(repo: Path, head: str) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    start, cpu = time.perf_counter(), _cpu()
    proc = run(["git", "push", "-q", "origin", f"{head}:refs/heads/main"], repo, check=False)
    return time.perf_counter() - start, _cpu() - cpu, proc


def push_head(bare: Path, repo: Path, head: str, base: str, hooks: bool) -> tuple[float, float, str]:
    """(seconds, CPU seconds, stderr) of one push of ``head`` to the server's main, with the
    hooks or without them (``core.hooksPath`` pointed at an empty folder). After it, main is
    put back on ``base`` and the gate's indexes with it (``eee server post-receive``, not
    timed), as on a server whose main only pushes move. CPU time is what the load of the
    machine inflates least."""
    empty = repo / "no-hooks"
    empty.mkdir(exist_ok=True)
    if not hooks:
        git(bare, "config", "core.hooksPath", str(empty))
    try:
        seconds, cpu, proc = timed_push(repo, head)
    finally:
        if not hooks:
            git(bare, "config", "--unset", "core.hooksPath")
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"the push was refused:\n{err[-4000:]}")
    git(bare, "update-ref", "refs/heads/main", base)
    if hooks:
        run([PY, "-m", "eee", "server", "post-receive", str(bare)], bare, input=b"")
    return seconds, cpu, err


def push_once(
    bare: Path, repo: Path, base: str, batches: list[list[tuple[str, bytes]]], hooks: bool
) -> tuple[float, float]:
    """(seconds, CPU seconds) of one push of ``batches`` onto ``base`` (:func:`push_head`)."""
    return push_head(bare, repo, commits(repo, base, batches), base, hooks)[:2]


def paired(name: str, runs: int, push: Callable[[bool], tuple[float, float]]) -> None:
    """The figure of what the hooks add to ``push(hooks)``: ``runs`` pairs (with, without; a
    drift of the machine's speed hits both), medians; target < 1 s."""
    with_hook, without = [], []
    load = os.getloadavg()[0]
    for _ in range(runs):
        with_hook.append(push(True))
        without.append(push(False))
    hooked, plain = statistics.median(w for w, _ in with_hook), statistics.median(w for w, _ in without)
    cpu = statistics.median(c for _, c in with_hook) - statistics.median(c for _, c in without)
    adds = hooked - plain
    figure(
        name,
        f"{adds:.2f} s, {cpu:.2f} s of CPU (push {hooked:.2f} s, without the hooks {plain:.2f} s; "
        f"medians of {runs}, load {load:.1f})",
        f"target < 1 s: {'met' if adds < 1 else f'missed by {adds - 1:.2f} s'}",
    )


def one_record(bare: Path, repo: Path, base: str, runs: int) -> None:
    push_once(bare, repo, base, [new_records(1)], hooks=True)  # warm-up: caches, the index at a pushed tree
    paired(
        "one-record push: the server gate adds",
        runs,
        lambda hooks: push_once(bare, repo, base, [new_records(1)], hooks=hooks),
    )


def import_push(bare: Path, repo: Path, base: str, records: int, batch: int) -> None:
    made = new_records(records)
    batches = [made[i : i + batch] for i in range(0, len(made), batch)]
    load = os.getloadavg()[0]
    plain, plain_cpu = push_once(bare, repo, base, batches, hooks=False)
    hooked, hooked_cpu = push_once(bare, repo, base, [new_records(len(b)) for b in batches], hooks=True)
    figure(
        f"{records:,}-record push in {len(batches)} commits",
        f"{hooked:.1f} s with the server gate ({hooked - plain:.1f} s added, {hooked_cpu - plain_cpu:.1f} s of CPU; "
        f"without the hooks {plain:.1f} s, load {load:.1f})",
        f"target < 30 s: {'met' if hooked < 30 else f'missed by {hooked - 30:.1f} s'}",
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=230_000, help="records in the store (default 230,000)")
    p.add_argument("--runs", type=int, default=5, help="pairs of one-record pushes (default 5)")
    p.add_argument("--import-records", type=int, default=5_000, help="records of the import push (default 5,000)")
    p.add_argument("--batch", type=int, default=500, help="records per commit of the import push (default 500)")
    args = p.parse_args(argv)
    bare, install = server_repo(args.size)
    if install is not None:
        figure(f"eee server install at {args.size:,} records", f"{install:.1f} s", "the audit's index built once")
    base = git(bare, "rev-parse", "refs/heads/main")
    with tempfile.TemporaryDirectory(prefix="eee-bench-server-") as tmp:
        repo = pusher(bare, Path(tmp))
        say(f"server: one-record pushes into {args.size:,} records")
        one_record(bare, repo, base, args.runs)
        say(f"server: a {args.import_records:,}-record push")
        import_push(bare, repo, base, args.import_records, args.batch)
    git(bare, "update-ref", "refs/heads/main", base)
    print(f"bench_server: a store of {args.size:,} records (load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)")
    for name, value, verdict in RESULTS:
        print(f"{name}: {value}  [{verdict}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
