#!/usr/bin/env python3
"""What roles and signatures cost: the audit of signed governance commits, and the gate.

    python benchmarks/bench_roles.py [--records 2000] [--commits 20] [--runs 3]

Two stores are built in a temporary folder, each with ``--records`` records and then
``--commits`` commits that each add one governance event (a dispute, then resolutions and
disputes in turn): one store without roles (unsigned commits, as this project's own), one
with roles (a maintainer's ed25519 key in governance/allowed_signers; every commit signed
with git's SSH signing). Printed:

- the audit of the governance commits (``eee audit --from <before them>``), per commit, in
  each store, and the ratio: what verifying a signature against the roles of each first
  parent costs (git runs ``ssh-keygen -Y verify`` for each);
- the commit gate's authority hook (``eee.hooks.authority.main``, in process) on a one-record
  commit and on an event commit, in the store with roles: what the gate adds;
- the import time of the hook beside the other hooks, and of its rules (imported only for a
  commit that takes a governance act): what the hook path pays at start.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT / "tools"))

from eee.store.paths import canonical_record_path  # noqa: E402
from eee.store.strictjson import canonical  # noqa: E402

WHO = ("Mia Maintainer", "mia@example.org")


def _git(repo: Path, *args: str, key: Path | None = None) -> str:
    opts = ["-c", f"user.name={WHO[0]}", "-c", f"user.email={WHO[1]}"]
    if key is not None:
        opts += ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}"]
    proc = subprocess.run(["git", *opts, *args], cwd=repo, check=True, capture_output=True, text=True)
    return proc.stdout.strip()


def _record(i: int) -> tuple[str, bytes]:
    base = json.loads(
        (PROJECT / "tests" / "examples" / "aggregate" / "valid" / "v0.3.0_perplexity_unbounded.json").read_text()
    )
    base["model_info"]["id"] = f"dev{i % 50}/model-{i % 7}"
    base["evaluation_id"] = f"bench/{i}"
    base["evaluation_results"][0]["score_details"]["score"] = 5 + (i % 1000) / 100
    rid = str(uuid.UUID(int=i + 1, version=4))
    return canonical_record_path(f"bench{i % 10}", base["model_info"]["id"], rid), canonical(base)


def _store(folder: Path, records: int, commits: int, key: Path | None) -> tuple[Path, str]:
    """A store of ``records`` records, the roles (when ``key``), then ``commits`` event commits."""
    from eee.governance.events import make_event, write
    from eee.store.roles import Entry, render_roles

    repo = folder / ("with-roles" if key else "without-roles")
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shutil.copytree(PROJECT / "schemas", repo / "schemas")
    first = None
    for i in range(records):
        rel, data = _record(i)
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        first = first or rel.rsplit("/", 1)[1][:-5]
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "the records")
    if key is not None:
        (repo / "governance").mkdir(exist_ok=True)
        public = " ".join(Path(str(key) + ".pub").read_text().split()[:2])
        (repo / "governance" / "allowed_signers").write_text(f"{WHO[1]} {public}\n")
        (repo / "governance" / "roles.yaml").write_bytes(render_roles({WHO[1]: Entry("maintainer")}))
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "--no-verify", "-S", "-m", "the roles", key=key)
    before = _git(repo, "rev-parse", "HEAD")
    actor = {"name": WHO[0], "email": WHO[1]}
    now = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    for n in range(commits):
        kind = ("dispute", "resolve")[n % 2]
        extra = {"reference": f"https://example.org/d/{n}"} if kind == "dispute" else {"outcome": "upheld"}
        write(repo, make_event(kind, str(first), f"event {n}", actor, now=now + dt.timedelta(seconds=n), **extra))
        _git(repo, "add", "-A")
        sign = ["-S"] if key is not None else []
        _git(repo, "commit", "-q", "--no-verify", *sign, "-m", f"{kind} {n}", key=key)
    return repo, before


def _audit_seconds(repo: Path, start: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "eee", "audit", "--store", str(repo), "--from", start, "--anchor", start],
            capture_output=True,
            text=True,
        )
        times.append(time.perf_counter() - began)
        if proc.returncode not in (0, 2):
            raise SystemExit(f"the audit of {repo} failed:\n{proc.stdout[-2000:]}")
    return statistics.median(times)


def _gate_seconds(repo: Path, runs: int, event: bool) -> float:
    from eee.governance.events import make_event, write

    if event:
        first = next((repo / "data").rglob("*.json")).stem
        write(
            repo, make_event("dispute", first, "gate", {"name": WHO[0], "email": WHO[1]}, reference="https://e.org/x")
        )
    else:
        rel, data = _record(10**6)
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)
    _git(repo, "add", "-A")
    import contextlib
    import io

    from eee.hooks.authority import main as hook

    times = []
    here = os.getcwd()
    os.chdir(repo)
    try:
        for _ in range(runs):
            began = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                hook([])
            times.append(time.perf_counter() - began)
    finally:
        os.chdir(here)
    _git(repo, "reset", "-q", "--hard")
    _git(repo, "clean", "-qfd")
    return statistics.median(times)


def _import_seconds(modules: str, runs: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(PROJECT / "tools"))
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {modules}"], check=True, env=env)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="eee-bench-roles-") as tmp:
        folder = Path(tmp)
        key = folder / "mia"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        plain, plain_start = _store(folder, args.records, args.commits, None)
        signed, signed_start = _store(folder, args.records, args.commits, key)
        a = _audit_seconds(plain, plain_start, args.runs)
        b = _audit_seconds(signed, signed_start, args.runs)
        n = args.commits
        print(f"audit of {n} governance commits ({args.records} records)")
        print(f"  without roles (unsigned):  {a:.2f} s  ({1000 * a / n:.0f} ms a commit)")
        print(f"  with roles (signed):       {b:.2f} s  ({1000 * b / n:.0f} ms a commit)")
        print(f"  ratio with/without:        {b / a:.2f}x  ({1000 * (b - a) / n:+.0f} ms a commit for the signature)")
        record = _gate_seconds(signed, args.runs * 3, event=False)
        event = _gate_seconds(signed, args.runs * 3, event=True)
        print("the gate's authority check (in process, store with roles)")
        print(f"  a one-record commit:       {1000 * record:.1f} ms")
        print(f"  an event commit:           {1000 * event:.1f} ms")
        hooks = "eee.hooks.__main__, eee.hooks.validate, eee.hooks.events, eee.hooks.imports"
        base = _import_seconds(hooks, args.runs * 5)
        more = _import_seconds(hooks + ", eee.hooks.authority", args.runs * 5)
        rules = _import_seconds(hooks + ", eee.hooks.authority, eee.rules.authority", args.runs * 5)
        print("the hook path's start (medians; the machine's noise is some ms)")
        print(f"  the other hooks:           {1000 * base:.0f} ms")
        print(f"  ... and the authority hook: {1000 * more:.0f} ms ({1000 * (more - base):+.0f} ms)")
        print(
            f"  ... and its rules (a governance commit only): {1000 * rules:.0f} ms ({1000 * (rules - base):+.0f} ms)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
