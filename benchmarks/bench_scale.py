#!/usr/bin/env python3
"""The store at the public datastore's size: every figure of issue 15, with its ratio, in one run.

    python benchmarks/bench_scale.py [--quick] [--only gate validate memory pipeline sidecars] [--runs N]

Synthetic stores are built once from real records (benchmarks/scale_store.py) and cached
under ``$TMPDIR/eee-bench-scale`` keyed by kind and size, so a rerun starts measuring at
once. Figures (``--quick`` divides every size by 10):

gate       a one-record ``git commit`` at 23,000 and 230,000 records: what each runner of
           .pre-commit-config.yaml adds to ``--no-verify`` (pairs of commits, medians): the
           lean gate (the default, installed by ``tools/dev.py setup``), prek and pre-commit;
           the first commit of a clone without a duplicates index, and ``eee dedup --index``
           from scratch (time, peak memory). Targets: the default adds < 0.5 s at 23,000 and
           < 1 s at 230,000.
validate   whole-store validation as the pipeline runs it (``eee validate . --format json
           --out ... --metrics ...``) at 15,000 records with 250,000 results and 10,000
           sidecars, against reading and parsing the same files with orjson in one
           process. Target: >= 0.5x the throughput of parse-only.
memory     peak memory (all processes of the command together) at 10,000 and 100,000
           records for validate, migrate and the catalogue. Target: 100k within 2x 10k.
pipeline   ``eee pipeline`` at 15,000 records (plus the project's own records and events),
           cold and after adding one record, stage by stage: seconds (from the stage
           announcements) and the files each stage rewrote; the site's two stages
           together (target < 60 s) and what the site holds.
sidecars   ``eee samples add`` of one sidecar at 1,000 and 10,000 tracked sidecars, and push
           and pull of 1, 10 and 100 named (bench_dvc.py's stores and timings), with the
           ratio of the two sizes. Target: one sidecar < 2 s at 10,000, cost flat in the store.

Timings are medians of ``--runs`` runs; the machine's load is printed with them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(HERE))

import scale_store  # noqa: E402

PY = sys.executable
BIN = Path(PY).parent
RESULTS: list[tuple[str, str, str]] = []  # (figure, value, target / ratio)


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def figure(name: str, value: str, verdict: str) -> None:
    RESULTS.append((name, value, verdict))
    say(f"  {name}: {value}  [{verdict}]")


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["EEE_PYTHON"] = PY
    e["PATH"] = str(BIN) + os.pathsep + e.get("PATH", "")
    e.pop("SKIP", None)
    return e


def run(cmd: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env())
    if check and proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def timed(cmd: list[str], cwd: Path, check: bool = True) -> float:
    start = time.perf_counter()
    run(cmd, cwd, check)
    return time.perf_counter() - start


# ---------------------------------------------------------------------------- gate

RUNNERS: dict[str, list[str]] = {
    "eee gate (lean, the default)": [PY, "-m", "eee", "gate", "install"],
    "prek": [str(BIN / "prek"), "install", "-f"],
    "pre-commit": [PY, "-m", "pre_commit", "install", "-f"],
}


def _stage_one(repo: Path, n: int) -> str:
    rel, data = scale_store.one_record(n)
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    run(["git", "add", rel], repo)
    return rel


def _commit_soft(repo: Path, verify: bool) -> float:
    """``git commit`` of what is staged, timed; then ``reset --soft``: the index keeps the record."""
    cmd = ["git", "commit", "-q", "-m", "one more record"] + ([] if verify else ["--no-verify"])
    seconds = timed(cmd, repo)
    run(["git", "reset", "-q", "--soft", "HEAD~1"], repo)
    return seconds


def _unstage(repo: Path, rel: str) -> None:
    run(["git", "rm", "-q", "--cached", rel], repo)
    (repo / rel).unlink()


def gate(sizes: list[int], runs: int) -> None:
    for size in sizes:
        repo = scale_store.store("gate", size, git=True)
        say(f"gate: {size} records in {repo}")
        # the checkout's current hook configuration, committed (runners refuse an unstaged one)
        shutil.copyfile(PROJECT / ".pre-commit-config.yaml", repo / ".pre-commit-config.yaml")
        shutil.copy2(PROJECT / "tools" / "hook", repo / "tools" / "hook")
        if run(["git", "status", "--porcelain", ".pre-commit-config.yaml", "tools"], repo).stdout.strip():
            run(["git", "add", ".pre-commit-config.yaml", "tools"], repo)
            run(["git", "commit", "-q", "--no-verify", "-m", "hook configuration"], repo)
        # git's default index settings (DVC's git library cannot read an index of version 4)
        run(["git", "config", "--unset", "feature.manyFiles"], repo, check=False)
        run(["git", "update-index", "--index-version", "2"], repo, check=False)
        run(RUNNERS["eee gate (lean, the default)"], repo)
        # the first commit of a clone: no duplicates index; the hook must build nothing
        for leftover in Path(run(["git", "rev-parse", "--absolute-git-dir"], repo).stdout.strip()).glob(
            "eee-duplicates.sqlite*"
        ):
            leftover.unlink()
        rel = _stage_one(repo, 0)
        plain = _commit_soft(repo, False)
        first = _commit_soft(repo, True)
        figure(
            f"gate {size:,}: the first commit of a clone (no duplicates index), lean gate",
            f"{first:.2f} s against {plain:.2f} s --no-verify",
            "the hook builds nothing, says so",
        )
        seconds, peak = peak_rss([PY, "-m", "eee", "dedup", "--index"], repo)
        figure(f"gate {size:,}: eee dedup --index from scratch", f"{seconds:.1f} s, peak {peak:.0f} MB", "streamed")
        for name, install in RUNNERS.items():
            run(install, repo)
            _commit_soft(repo, True)  # warm-up (a runner's first run fills its cache)
            load = os.getloadavg()[0]
            hooks, plain_runs = [], []
            for _ in range(runs):  # in pairs, so that a drift of the machine's speed hits both
                hooks.append(_commit_soft(repo, True))
                plain_runs.append(_commit_soft(repo, False))
            plain, commit = statistics.median(plain_runs), statistics.median(hooks)
            adds = commit - plain
            target = 0.5 if size < 100_000 else 1.0
            verdict = f"target < {target} s: {'met' if adds < target else f'missed by {adds - target:.2f} s'}"
            figure(
                f"gate {size:,}: {name} adds",
                f"{adds:.2f} s (commit {commit:.2f} s, --no-verify {plain:.2f} s, load {load:.1f})",
                verdict,
            )
        _unstage(repo, rel)
        run(RUNNERS["eee gate (lean, the default)"], repo)


# ---------------------------------------------------------------------------- memory sampling


def peak_rss(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(seconds, peak MB of the command and all its children together: their proportional set
    size, so that memory a forked worker shares with its parent counts once), sampled every 20 ms."""
    import psutil

    proc = subprocess.Popen(cmd, cwd=cwd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        try:
            root = psutil.Process(proc.pid)
        except psutil.Error:
            return
        while not done.is_set():
            total = 0
            try:
                for p in [root, *root.children(recursive=True)]:
                    try:  # PSS: pages a forked worker shares with its parent count once
                        total += p.memory_full_info().pss
                    except (psutil.Error, AttributeError):
                        try:
                            total += p.memory_info().rss
                        except psutil.Error:
                            pass
            except psutil.Error:
                pass
            peak = max(peak, total)
            time.sleep(0.02)

    start = time.perf_counter()
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    thread.join()
    if proc.returncode not in (0, 1, 2):
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err[-3000:]}")
    return seconds, peak / 2**20


# ---------------------------------------------------------------------------- validate

PARSE_ONLY = r"""
import os, sys, orjson
n = rows = 0
for top, dirs, files in os.walk(os.path.join(sys.argv[1], "data")):
    for name in files:
        path = os.path.join(top, name)
        if name.endswith(".json"):
            with open(path, "rb") as fh:
                orjson.loads(fh.read())
            n += 1
        elif name.endswith("_samples.jsonl"):
            with open(path, "rb") as fh:
                for line in fh:
                    if line.strip():
                        orjson.loads(line)
                        rows += 1
print(n, rows)
"""


def validate_cmd(out: Path) -> list[str]:
    return [
        PY,
        "-m",
        "eee",
        "validate",
        ".",
        "--format",
        "json",
        "--out",
        str(out / "report.json"),
        "--metrics",
        str(out / "metrics.json"),
        "--exit-zero",
        "--no-progress",
    ]


def _as_pipeline(cmd: list[str], cwd: Path) -> float:
    """Seconds of ``cmd`` with its stdout to /dev/null, as dvc.yaml's validate stage runs it
    (capturing the 9 MB report on stdout would put this process on the second core the
    workers need)."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env())
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    return seconds


def validate(size: int, results: int, sidecars: int, runs: int) -> None:
    root = scale_store.store("validate", size, results, sidecars)
    say(f"validate: {size} records, ~{results} results, {sidecars} sidecars in {root}")
    with tempfile.TemporaryDirectory() as tmp:
        timed([PY, "-c", PARSE_ONLY, str(root)], root)  # warm the page cache: both read from memory
        # interleaved, so that the machine's speed of the moment weighs on all three alike
        times: dict[str, list[float]] = {"parse": [], "eee": [], "one": []}
        for _ in range(runs):
            times["parse"].append(timed([PY, "-c", PARSE_ONLY, str(root)], root))
            times["eee"].append(_as_pipeline(validate_cmd(Path(tmp)), root))
            times["one"].append(_as_pipeline([*validate_cmd(Path(tmp)), "--jobs", "1"], root))
        parse, eee, one = (statistics.median(times[k]) for k in ("parse", "eee", "one"))
        # each run's own ratio too: the spread says how much the machine moved under the figure
        ratios = sorted(p / e for p, e in zip(times["parse"], times["eee"], strict=True))
    ratio = parse / eee
    figure(f"validate {size:,}: orjson parse-only (one process)", f"{parse:.2f} s", "floor")
    figure(
        f"validate {size:,}: eee validate as the pipeline runs it",
        f"{eee:.2f} s = {ratio:.2f}x parse-only throughput ({os.cpu_count()} cores; runs "
        f"{ratios[0]:.2f}-{ratios[-1]:.2f}x, {_load()})",
        f"target >= 0.5x: {'met' if ratio >= 0.5 else 'missed'}",
    )
    figure(f"validate {size:,}: the same with --jobs 1", f"{one:.2f} s = {parse / one:.2f}x parse-only", "one core")


# ---------------------------------------------------------------------------- memory


def memory(small: int, large: int, only: set[str] | None = None) -> None:
    figures: dict[str, dict[int, float]] = {}
    for size in (small, large):
        root = scale_store.store("memory", size, size * 16, size // 10)
        say(f"memory: {size} records in {root}")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            commands: dict[str, list[str]] = {
                "validate": validate_cmd(out / "validate"),
                "migrate": [PY, "-m", "eee", "migrate", "--to", "0.3.0", "data", "--out", str(out / "migrated")],
                "catalog": [PY, "-m", "eee", "catalog", "--store", ".", "--out", str(out / "catalog")],
            }
            for name, cmd in commands.items():
                if only and name not in only:
                    continue
                seconds, mb = peak_rss(cmd, root)
                figures.setdefault(name, {})[size] = mb
                say(f"  {name} at {size}: {mb:.0f} MB, {seconds:.1f} s")
    for name, by_size in figures.items():
        ratio = by_size[large] / by_size[small]
        figure(
            f"memory {name}: peak at {small:,} / {large:,} records",
            f"{by_size[small]:.0f} MB / {by_size[large]:.0f} MB = {ratio:.2f}x",
            f"target <= 2x: {'met' if ratio <= 2 else 'missed'}",
        )


# ---------------------------------------------------------------------------- pipeline

OUT_DIRS = {  # what each stage writes, under build/ (dvc.yaml)
    "dvc": [],  # DVC itself: its start, stage index and lock file
    "manifest": ["manifest"],
    "validate": ["validate"],
    "catalog": ["catalog"],
    "stats": ["stats"],
    "analysis": ["analysis"],
    "pages": ["docs", "site-nav.yml"],
    "site": ["site"],
}


def _snapshot(build: Path) -> dict[str, tuple[int, int]]:
    """Every file under build/ with (mtime_ns, size): what a run rewrote is what changed here."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, _dirs, names in os.walk(build):
        for name in names:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[os.path.relpath(path, build)] = (st.st_mtime_ns, st.st_size)
    return out


def _rewritten(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]], stage: str) -> str:
    tops = OUT_DIRS[stage]
    mine = [k for k in after if k.split(os.sep, 1)[0] in tops]
    total = len(mine)
    written = sum(1 for k in mine if before.get(k) != after[k])
    gone = sum(1 for k in before if k.split(os.sep, 1)[0] in tops and k not in after)
    return f"{written:,} of {total:,} files written" + (f", {gone:,} removed" if gone else "")


def _staged_run(cmd: list[str], root: Path) -> tuple[float, dict[str, float], str]:
    """Run ``eee pipeline``; (seconds, seconds of each stage as the pipeline's summary gives
    them (``[pipeline] took ...``: from each stage's start to DVC's lock update after it),
    with ``dvc`` the rest of the run (the environment's set-up, DVC's start and stage index),
    its stdout). The CPU seconds of the whole run (every process it waited for) are in the
    stages under ``cpu``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=env(), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    out, code = proc.stdout, proc.returncode
    if code not in (0, 2):
        raise SystemExit(f"eee pipeline failed ({code}):\n{out[-3000:]}\n{proc.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stages: dict[str, float] = {}
    m = re.search(r"^\[pipeline\] took [\d.]+ s: (.*)$", out, re.M)
    for part in m.group(1).split(", ") if m else []:
        name, took, _unit = part.rsplit(" ", 2)
        stages[name] = float(took)
    stages["dvc"] = seconds - sum(stages.values())
    stages["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, stages, out


def _load() -> str:
    return "load " + "/".join(f"{x:.1f}" for x in os.getloadavg())


def _site_figures(root: Path, records: int, stages: dict[str, float], when: str, load: str) -> None:
    """The site's two stages together (target: under a minute), and what the site holds."""
    took = stages.get("pages", 0.0) + stages.get("site", 0.0)
    verdict = f"target < 60 s: {'met' if took < 60 else f'missed by {took - 60:.0f} s'} ({load})"
    figure(f"pipeline {records:,}: {when}, the site (pages + site)", f"{took:.1f} s", verdict)
    if when != "cold":
        return
    folder = root / "build" / "site" / "catalogue" / "records"
    own = sum(1 for _ in folder.glob("*-*-*/index.html"))
    shared = list(folder.glob("group-*/index.html"))
    sections = sum(p.read_text(encoding="utf-8").count('<h2 id="') for p in shared)
    site = root / "build" / "site"
    index = site / "search" / "search_index.json"
    figure(
        f"pipeline {records:,}: the site",
        f"{sum(1 for _ in site.rglob('*.html')):,} HTML pages; {own:,} records with a page of their own, "
        f"{sections:,} as sections of {len(shared):,} shared pages; search index {index.stat().st_size / 1e6:.1f} MB",
        "every record reachable",
    )


def pipeline(size: int, results: int, sidecars: int) -> None:
    """``eee pipeline`` in a clone of this checkout whose data/ also holds the synthetic
    store (the project's own records and their events stay, so some records have a
    governance history): a cold run (build/ removed), then one record added and the pipeline
    again, stage by stage, with what each stage rewrote."""
    data = scale_store.store("validate", size, results, sidecars)
    root = scale_store.CACHE / f"pipeline-{size}"
    cmd = [PY, "-m", "eee", "pipeline", "--no-pull"]
    if not (root / ".complete").exists():
        if root.exists():
            shutil.rmtree(root)
        run(["git", "clone", "-q", "--no-hardlinks", str(PROJECT), str(root)], PROJECT)
        shutil.copytree(data / "data", root / "data", dirs_exist_ok=True)
        (root / ".complete").write_text("")
    # the clone follows this checkout's commit (the code that runs is this checkout's: PY)
    run(["git", "fetch", "-q", str(PROJECT), "HEAD"], root)
    run(["git", "checkout", "-q", "--force", "FETCH_HEAD"], root)
    shutil.rmtree(root / "build", ignore_errors=True)
    (root / "dvc.lock").unlink(missing_ok=True)
    records = sum(1 for p in (root / "data").rglob("*.json") if p.is_file())
    say(f"pipeline: cold run at {records:,} records in {root} ({_load()})")
    seconds, stages, _ = _staged_run(cmd, root)
    load = _load()
    cpu = stages.pop("cpu")
    figure(f"pipeline {records:,}: cold (build/ empty)", f"{seconds:.0f} s ({cpu:.0f} s of CPU)", load)
    for name, took in stages.items():
        figure(f"pipeline {records:,}: cold, stage {name}", f"{took:.1f} s", load)
    _site_figures(root, records, stages, "cold", load)
    rel, record = scale_store.one_record(size)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    before = _snapshot(root / "build")
    (root / rel).write_bytes(record)
    try:
        seconds, stages, _ = _staged_run(cmd, root)
        load = _load()
        cpu = stages.pop("cpu")
        after = _snapshot(root / "build")
        figure(
            f"pipeline {records:,}: after adding one record",
            f"{seconds:.0f} s ({cpu:.0f} s of CPU), stages rerun: "
            f"{', '.join(s for s in stages if s != 'manifest') or 'none'}",
            load,
        )
        for name, took in stages.items():
            figure(
                f"pipeline {records:,}: one record, stage {name}",
                f"{took:.1f} s; {_rewritten(before, after, name)}",
                load,
            )
        _site_figures(root, records, stages, "one record", load)
        start = time.perf_counter()
        run(cmd, root, check=False)
        figure(f"pipeline {records:,}: again, nothing changed", f"{time.perf_counter() - start:.1f} s", _load())
    finally:
        (root / rel).unlink()
        run(cmd, root, check=False)


# ---------------------------------------------------------------------------- main


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="every store a tenth of its size (a few minutes)")
    p.add_argument(
        "--only",
        nargs="+",
        choices=("gate", "validate", "memory", "pipeline", "sidecars"),
        help="measure only these figures (default: all)",
    )
    p.add_argument(
        "--commands",
        nargs="+",
        choices=("validate", "migrate", "catalog"),
        help="memory: measure only these commands (default: all three)",
    )
    p.add_argument("--runs", type=int, default=3, help="runs of each timing (default: 3; the median is printed)")
    args = p.parse_args()
    scale = 10 if args.quick else 1
    only = set(args.only or ("gate", "validate", "memory", "pipeline", "sidecars"))
    say(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; stores cached in {scale_store.CACHE}")
    if "gate" in only:
        gate([23_000 // scale, 230_000 // scale], args.runs)
    if "validate" in only:
        validate(15_000 // scale, 250_000 // scale, 10_000 // scale, args.runs)
    if "memory" in only:
        memory(10_000 // scale, 100_000 // scale, set(args.commands or ()))
    if "pipeline" in only:
        pipeline(15_000 // scale, 250_000 // scale, 10_000 // scale)
    if "sidecars" in only:
        sidecars_figures(10_000 // scale, args.runs)
    width = max(len(r[0]) for r in RESULTS) if RESULTS else 0
    print(f"\nissue 15 figures (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    for name, value, verdict in RESULTS:
        print(f"{name:<{width}}  {value}  [{verdict}]")
    return 0


def sidecars_figures(tracked: int, runs: int) -> None:
    """``eee samples add`` of one sidecar and push / pull of N named, at a tenth of ``tracked`` and at it.

    bench_dvc.py builds each store (records with sidecars tracked through eee.dvc.store, pushed
    to a local remote) and times the commands as a contributor runs them; stock DVC's own
    figures (``dvc add``, ``dvc status``: minutes at 10,000) stay in bench_dvc.py.
    """
    import bench_dvc

    named = [1, 10, 100]
    sizes = [tracked // 10, tracked]
    costs: dict[int, dict[str, float]] = {}
    for n in sizes:
        samples = [bench_dvc.sidecars(n, named, stock=False, stock_setup=False) for _ in range(max(1, runs))]
        costs[n] = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
    low, high = sizes
    add = costs[high]["add 1"]
    verdict = f"target < 2 s: {'met' if add < 2 else f'missed by {add - 2:.2f} s'} ({_load()})"
    figure(
        f"eee samples add of one sidecar, {high:,} tracked",
        f"{add:.2f} s ({low:,}: {costs[low]['add 1']:.2f} s)",
        verdict,
    )
    for k in named:
        for op in ("push", "pull"):
            key = f"{op} {k}"
            ratio = costs[high][key] / costs[low][key]
            figure(
                f"eee samples {op} of {k} named, {high:,} tracked",
                f"{costs[high][key]:.2f} s ({low:,}: {costs[low][key]:.2f} s)",
                f"x{ratio:.2f} the cost at {low:,} (1.0 = flat in the store)",
            )


if __name__ == "__main__":
    sys.exit(main())
