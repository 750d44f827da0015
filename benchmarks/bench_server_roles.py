#!/usr/bin/env python3
"""The server gate in a store with roles, at the public datastore's size: what the
pre-receive and post-receive hooks add to a ``git push`` of signed commits into a bare
repository of 230,000 records whose roles (a maintainer and a contributor, ed25519 keys)
judge every commit.

    python benchmarks/bench_server_roles.py [--size N] [--runs N] [--import-records N] [--batch N]

The bare repository is bench_server.py's (``server-<size>.git``, cached under
``$TMPDIR/eee-bench-scale``) cloned once more (``server-roles-<size>.git``, objects
hard-linked) with the genesis of the roles committed on its ``main`` before the gate is
installed (how a store adopts roles at the server); the keys are cached beside it. A pusher
(a bare clone: no checkout of 230,000 files) writes its commits with ``git fast-import`` and
signs each with git's SSH signing (``git commit-tree -S``), then pushes them:

one record    a contributor's signed one-record commit, pushed with the hooks and without
              them (``core.hooksPath`` pointed at an empty folder), in pairs, medians:
              target < 1 s added.
import        a real ``eee import --commit --batch N`` of ``--import-records`` new records
              (default 5,000, batches of 500), made in a small store with the same roles
              and signed by the maintainer, its commits (the batches, then the manifest that
              names every file with its sha256) replayed onto the big store's ``main`` and
              signed again there; pushed at once, with the hooks and without: target < 30 s.

After each push the server's ``main`` is put back where it was (``git update-ref``) and
the gate's indexes with it (``eee server post-receive``, not timed), so every run pushes onto
the same store as a server whose main only pushes move. Figures go to stdout; progress to stderr.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_server  # noqa: E402
import scale_store  # noqa: E402
from bench_server import PY, RESULTS, figure, git, new_records, paired, push_head, pusher, run, say  # noqa: E402

MIA = ("Mia Maintainer", "mia@example.org")
COLE = ("Cole Contributor", "cole@example.org")


def _keys(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    keys = {}
    for name in ("mia", "cole"):
        key = folder / name
        if not key.exists():
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], folder)
        keys[name] = key
    return keys


def _roles_files(keys: dict[str, Path]) -> dict[str, bytes]:
    from eee.store.roles import Entry, render_roles

    lines = []
    for (name, email), key in ((MIA, keys["mia"]), (COLE, keys["cole"])):
        kind, blob = Path(str(key) + ".pub").read_text().split()[:2]
        lines.append(f"{email} {kind} {blob} {name}")
    return {
        "governance/allowed_signers": ("\n".join(lines) + "\n").encode(),
        "governance/roles.yaml": render_roles({MIA[1]: Entry("maintainer", None, None)}),
    }


def _env(who: tuple[str, str]) -> dict[str, str]:
    return {
        **os.environ,
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_COMMITTER_NAME": who[0],
        "GIT_COMMITTER_EMAIL": who[1],
    }


def sign(repo: Path, commit: str, parent: str, who: tuple[str, str], key: Path) -> str:
    """``commit``'s tree and message as a new commit on ``parent``, by ``who``, signed with ``key``."""
    tree = git(repo, "rev-parse", f"{commit}^{{tree}}")
    message = git(repo, "log", "-1", "--format=%B", commit)
    cmd = ["git", "-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit-tree", "-S", tree, "-p", parent]
    proc = subprocess.run(cmd, cwd=repo, input=message.encode(), capture_output=True, env=_env(who))
    if proc.returncode != 0:
        raise SystemExit(f"signing failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode().strip()


def signed_chain(repo: Path, base: str, unsigned: str, who: tuple[str, str], key: Path) -> str:
    """The commits ``base..unsigned`` (first-parent line) made again on ``base``, each signed; returns the last."""
    head = base
    for commit in git(repo, "rev-list", "--reverse", "--first-parent", f"{base}..{unsigned}").split():
        head = sign(repo, commit, head, who, key)
    return head


def roles_repo(size: int, keys: dict[str, Path]) -> tuple[Path, float | None]:
    """The cached ``server-roles-<size>.git``: bench_server's bare repository with the genesis
    of the roles on ``main`` (signed by the maintainer), then the server gate installed."""
    bare = scale_store.CACHE / f"server-roles-{size}.git"
    done = bare / "eee-bench.complete"
    if done.exists():
        run([PY, "-m", "eee", "server", "install", str(bare)], bare)  # the hooks name this interpreter
        return bare, None
    source, _ = bench_server.server_repo(size)
    if bare.exists():
        shutil.rmtree(bare)
    say(f"server: cloning {source} into {bare} (the genesis of the roles goes on its main)")
    git(scale_store.CACHE, "clone", "-q", "--bare", "--local", str(source), str(bare))
    git(bare, "config", "gc.auto", "0")
    git(bare, "config", "receive.autogc", "false")
    base = git(bare, "rev-parse", "refs/heads/main")
    stream = bytearray(b"commit refs/heads/genesis\n")
    stream += f"committer {MIA[0]} <{MIA[1]}> {int(time.time())} +0000\n".encode()
    message = b"Roles: the genesis (a maintainer and a contributor)"
    stream += b"data %d\n%s\n" % (len(message), message) + f"from {base}\n".encode()
    for rel, data in _roles_files(keys).items():
        stream += f"M 100644 inline {rel}\n".encode() + b"data %d\n" % len(data) + data + b"\n"
    git(bare, "fast-import", "--quiet", "--force", input=bytes(stream))
    genesis = signed_chain(bare, base, git(bare, "rev-parse", "refs/heads/genesis"), MIA, keys["mia"])
    git(bare, "update-ref", "refs/heads/main", genesis)
    git(bare, "update-ref", "-d", "refs/heads/genesis")
    index = source / "eee-duplicates-audit.sqlite"
    if index.exists():  # the genesis leaves data/ as it was: the index of the same tree
        shutil.copyfile(index, bare / index.name)
    say("server: eee server install (the genesis is in the repository before the gate: trusted)")
    start = time.perf_counter()
    run([PY, "-m", "eee", "server", "install", str(bare)], bare)
    seconds = time.perf_counter() - start
    done.write_text("installed\n")
    return bare, seconds


def fast_import(repo: Path, base: str, batches: list[list[tuple[str, bytes]]]) -> str:
    """Unsigned commits of ``batches`` on ``base`` (bench_server's), to be signed."""
    return bench_server.commits(repo, base, batches)


def one_record(bare: Path, repo: Path, base: str, keys: dict[str, Path], runs: int) -> None:
    def signed_record() -> str:
        return signed_chain(repo, base, fast_import(repo, base, [new_records(1)]), COLE, keys["cole"])

    _, _, err = push_head(bare, repo, signed_record(), base, hooks=True)  # warm-up
    if "[authority]" in err or "[actor]" in err:
        raise SystemExit(f"the gate judged the contributor's record: {err}")
    paired(
        "signed one-record push (roles): the server gate adds",
        runs,
        lambda hooks: push_head(bare, repo, signed_record(), base, hooks)[:2],
    )


def _import_commits(work: Path, keys: dict[str, Path], records: int, batch: int) -> tuple[Path, str, str, float]:
    """A real ``eee import --commit`` of ``records`` new records into a small store with the
    same roles, signed by the maintainer: (its repository, the commit before the import, its
    head, the seconds the import took)."""
    small = work / "small"
    small.mkdir()
    git(small, "init", "-q", "-b", "main")
    for key, value in (
        ("user.name", MIA[0]),
        ("user.email", MIA[1]),
        ("gpg.format", "ssh"),
        ("user.signingkey", str(keys["mia"])),
        ("gc.auto", "0"),
    ):
        git(small, "config", key, value)
    shutil.copytree(scale_store.PROJECT / "schemas", small / "schemas")
    for rel, data in _roles_files(keys).items():
        (small / rel).parent.mkdir(parents=True, exist_ok=True)
        (small / rel).write_bytes(data)
    git(small, "add", "-A")
    git(small, "commit", "-q", "-S", "--no-verify", "-m", "schemas and the roles")
    before = git(small, "rev-parse", "HEAD")
    snapshot = work / "snapshot"
    for rel, data in new_records(records):
        path = snapshot / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    say(f"server: eee import --commit --batch {batch} of {records:,} records (signed), in a small store")
    start = time.perf_counter()
    cmd = [PY, "-m", "eee", "import", str(snapshot), "--commit", "--batch", str(batch), "--no-progress"]
    proc = run([*cmd, "--store", str(small)], small, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 2):
        raise SystemExit(f"eee import failed:\n{proc.stdout.decode()[-3000:]}\n{proc.stderr.decode()[-3000:]}")
    return small, before, git(small, "rev-parse", "HEAD"), seconds


def replay(repo: Path, base: str, small: Path, before: str, head: str, key: Path) -> tuple[str, int]:
    """The import's commits (``before..head`` of ``small``) made again on ``base``: what each
    added, its message (the batch lines the attribution rule reads), signed by the maintainer."""
    git(repo, "fetch", "-q", str(small), f"{head}:refs/heads/imported")
    parent, count = base, 0
    for commit in git(repo, "rev-list", "--reverse", "--first-parent", f"{before}..{head}").split():
        added = git(repo, "diff-tree", "-r", "--no-commit-id", "--diff-filter=A", f"{commit}^", commit)
        stream = bytearray(b"commit refs/heads/replay\n")
        stream += f"committer {MIA[0]} <{MIA[1]}> {int(time.time())} +0000\n".encode()
        message = git(repo, "log", "-1", "--format=%B", commit).encode()
        stream += b"data %d\n%s\n" % (len(message), message) + f"from {parent}\n".encode()
        for line in added.splitlines():
            meta, path = line.split("\t", 1)
            mode, blob = meta.split()[1], meta.split()[3]
            stream += f"M {mode} {blob} {path}\n".encode()
        git(repo, "fast-import", "--quiet", "--force", input=bytes(stream))
        parent = sign(repo, git(repo, "rev-parse", "refs/heads/replay"), parent, MIA, key)
        count += 1
    git(repo, "update-ref", "-d", "refs/heads/imported")
    return parent, count


def import_push(bare: Path, repo: Path, base: str, keys: dict[str, Path], records: int, batch: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="eee-bench-import-", dir=repo.parent))
    small, before, head, took = _import_commits(work, keys, records, batch)
    figure(f"eee import --commit of {records:,} records (signed, a small store)", f"{took:.1f} s", "for scale")
    signed, count = replay(repo, base, small, before, head, keys["mia"])
    load = os.getloadavg()[0]
    plain, plain_cpu, _ = push_head(bare, repo, signed, base, hooks=False)
    hooked, hooked_cpu, err = push_head(bare, repo, signed, base, hooks=True)
    if f"{count} new commits checked" not in err:
        raise SystemExit(f"the gate did not check the import's {count} commits:\n{err[-3000:]}")
    figure(
        f"signed {records:,}-record import push in {count} commits (roles)",
        f"{hooked:.1f} s with the server gate ({hooked - plain:.1f} s added, {hooked_cpu - plain_cpu:.1f} s of CPU; "
        f"without the hooks {plain:.1f} s, load {load:.1f})",
        f"target < 30 s: {'met' if hooked < 30 else f'missed by {hooked - 30:.1f} s'}",
    )
    shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=230_000, help="records in the store (default 230,000)")
    p.add_argument("--runs", type=int, default=5, help="pairs of one-record pushes (default 5)")
    p.add_argument(
        "--import-records", type=int, default=5_000, help="records of the import push (default 5,000; 0: none)"
    )
    p.add_argument("--batch", type=int, default=500, help="records per commit of the import (default 500)")
    args = p.parse_args(argv)
    keys = _keys(scale_store.CACHE / "roles-keys")
    bare, install = roles_repo(args.size, keys)
    if install is not None:
        figure(f"eee server install at {args.size:,} records with roles", f"{install:.1f} s", "once")
    base = git(bare, "rev-parse", "refs/heads/main")
    with tempfile.TemporaryDirectory(prefix="eee-bench-server-roles-") as tmp:
        repo = pusher(bare, Path(tmp))
        say(f"server: signed one-record pushes into {args.size:,} records with roles")
        one_record(bare, repo, base, keys, args.runs)
        if args.import_records > 0:
            say(f"server: a signed {args.import_records:,}-record import push")
            import_push(bare, repo, base, keys, args.import_records, args.batch)
    git(bare, "update-ref", "refs/heads/main", base)
    print(
        f"bench_server_roles: a store of {args.size:,} records with roles, signed commits "
        f"(load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)"
    )
    for name, value, verdict in RESULTS:
        print(f"{name}: {value}  [{verdict}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
