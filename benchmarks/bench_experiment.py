#!/usr/bin/env python3
"""What an experiment card's report costs against ``eee compare`` on the same two records.

    python benchmarks/bench_experiment.py [--repeat N]

Builds a temporary git store (the project's schemas; no hooks) holding a card and copies of
the store's two real AlpacaEval 2.0 records of gpt-3.5-turbo-1106 and its concise variant
(805 instructions each, ~3 MB sidecars) citing it, then times, as fresh subprocesses
(interpreter start-up included), the median of ``--repeat`` runs of:

  compare   ``eee compare A B --margin 2 --format json`` (the floor: the same pairing and
            bootstrap)
  report    ``eee experiment report ID --format json`` (the comparison, the declared
            subgroups read again, history from git, the deviations)
  check     ``eee experiment check ID --format json`` (no statistics)

and prints each with its ratio to ``compare``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT / "tools"))
ALPACA = PROJECT / "data" / "alpaca_eval_2" / "openai"
SOURCES = (
    ALPACA / "gpt-3.5-turbo-1106_concise" / "0a98b8b7-95d7-46b9-9426-507362a2c881.json",
    ALPACA / "gpt-3.5-turbo-1106" / "5d5cd601-5937-443f-be52-53e2cbcc4037.json",
)
CARD = "concise-no-worse"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def eee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eee", *args], capture_output=True, text=True)


def build(tmp: Path) -> tuple[Path, list[str]]:
    import hashlib

    from eee.governance.experiments import dumps, loads
    from eee.store.strictjson import canonical

    repo = tmp / "store"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Bench")
    git(repo, "config", "user.email", "bench@example.org")
    git(repo, "config", "commit.gpgsign", "false")
    shutil.copytree(PROJECT / "schemas", repo / "schemas")
    (repo / "governance" / "experiments").mkdir(parents=True)
    (repo / "governance" / "settings.yaml").write_text("sidecar_git_max_bytes: 8388608\n")
    card = loads((PROJECT / "tests" / "examples" / "experiments" / "valid" / f"{CARD}.yaml").read_bytes())
    card["author"] = {"name": "Bench", "email": "bench@example.org"}
    (repo / "governance" / "experiments" / f"{CARD}.yaml").write_text(dumps(card))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "the card")
    uuids = []
    for source in SOURCES:
        doc = json.loads(source.read_text())
        new = str(uuid.uuid4())
        folder = repo / source.parent.relative_to(PROJECT)
        folder.mkdir(parents=True, exist_ok=True)
        sidecar = folder / f"{new}_samples.jsonl"
        shutil.copyfile(source.with_name(source.stem + "_samples.jsonl"), sidecar)
        digest = hashlib.sha256(sidecar.read_bytes()).hexdigest()
        doc["detailed_evaluation_results"].update(file_path=sidecar.relative_to(repo).as_posix(), checksum=digest)
        doc["source_metadata"].setdefault("additional_details", {})["eee_experiment"] = CARD
        (folder / f"{new}.json").write_bytes(canonical(doc))
        uuids.append(new)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "the results")
    return repo, uuids


def timed(args: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = eee(*args)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 2):
            raise SystemExit(f"eee {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return statistics.median(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="eee-bench-experiment-") as folder:
        repo, (a, b) = build(Path(folder))
        store = ["--store", str(repo), "--format", "json"]
        floor = timed(["compare", a, b, "--margin", "2", *store], args.repeat)
        report = timed(["experiment", "report", CARD, *store], args.repeat)
        check = timed(["experiment", "check", CARD, *store], args.repeat)
        same = json.loads(eee("experiment", "report", CARD, *store).stdout)["analysis"]["difference_ci"]
        want = json.loads(eee("compare", a, b, "--margin", "2", *store).stdout)["samples"]["results"][0]
    print(f"compare  {floor:6.2f} s  (the floor)")
    print(f"report   {report:6.2f} s  {report / floor:5.2f}x compare")
    print(f"check    {check:6.2f} s  {check / floor:5.2f}x compare")
    print(f"the report's interval is compare's: {same == want['difference_ci']} ({same})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
