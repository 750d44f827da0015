#!/usr/bin/env python3
"""The validator's reports before and after a change, compared (issue 22: a refactor of the
rules must not change what a user reads, except where it says so).

    python benchmarks/compare_reports.py write OUT            # the reports of this checkout
    python benchmarks/compare_reports.py compare BEFORE AFTER  # exit 0 when they agree

``write`` runs the real commands of this checkout (``eee validate``, ``eee audit``, ``git
commit`` through the installed hooks), each in the three report formats where it has them
(``json``, ``rich``, which is plain text on a pipe, and ``github``), over:

- ``reference-*``: the reference records (``../shared/reference/records`` and
  ``records-with-samples``) validated as they lie (left out when absent);
- ``examples-*``: every held example of the validator's parametrized tests
  (tests/examples/aggregate and instance: valid, invalid, warning), each placed in a store
  of its own the way tests/test_validate_examples.py places it, one run per group; the
  migration examples, validated as loose files;
- ``fuzz``: the fuzz corpus of tests/fuzzing.py (fixed seed);
- ``audit``: ``eee audit`` over a git history with bad commits made with ``--no-verify``
  (an accepted record edited, one deleted, one renamed, an invalid event, an event naming
  no record, a sidecar in git, a case clash, a record that is not JSON and one invalid
  under its schema version, each with a flag event written for it, a second file carrying
  a flagged record's uuid, a flag of a rule no check emits, a merge that drops a record);
- ``hook-*``: the output and exit code of ``git commit`` through the installed gate on
  bad staged changes (``hooks.txt``).

Commits use fixed names and dates, so their ids, and the reports, are the same run to run.
The temporary folder is written ``<WORK>`` in the reports.

``compare`` holds JSON reports to byte identity, and text reports (rich, github, hooks) to
identity line by line except for one inserted ``[rule id] `` per line (the text output
shows each finding's rule id since the rule registry). It prints every difference and
exits 1 when there is one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
TESTS = PROJECT / "tests"
EXAMPLES = TESTS / "examples"
REFERENCE = Path(os.environ.get("EEE_REFERENCE", PROJECT.parent / "shared" / "reference"))
FORMATS = ("json", "rich", "github")
FIXED_UUID = "8e6f3a4e-4b7a-4d3e-9c1a-2b3c4d5e6f70"
RECORD = "v0.3.0_perplexity_unbounded.json"

sys.path.insert(0, str(TESTS))  # fuzzing.py, mutations.py
sys.path.insert(0, str(PROJECT / "tools"))


def _eee(args: list[str], cwd: Path) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=cwd, capture_output=True, text=True, env=_env(), check=False
    )
    return proc.returncode, proc.stdout + (f"\n--- stderr\n{proc.stderr}" if proc.stderr else "")


class Writer:
    """The reports of one checkout, under ``out``; every temporary path written ``<WORK>``."""

    def __init__(self, out: Path, work: Path) -> None:
        self.out = out
        self.work = work
        self.replace: dict[str, str] = {str(work): "<WORK>"}  # text that differs run to run -> a placeholder

    def save(self, name: str, text: str) -> None:
        for old, new in self.replace.items():
            text = text.replace(old, new)
        (self.out / name).write_text(text, encoding="utf-8")

    def reports(self, name: str, args: list[str], cwd: Path) -> None:
        """``eee <args> --format F`` in every format: ``name.json``, ``name.rich.txt``, ``name.github.txt``."""
        for fmt in FORMATS:
            code, text = _eee([*args, "--format", fmt], cwd)
            suffix = "json" if fmt == "json" else f"{fmt}.txt"
            self.save(f"{name}.{suffix}", f"{text}\n--- exit {code}\n" if fmt != "json" else text)
            if fmt == "json":
                self.save(f"{name}.exit", f"{code}\n")


# --- fixed commits ------------------------------------------------------------------------------

_CLOCK = [1_767_225_600]  # 2026-01-01T00:00:00Z, one minute a commit


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["EEE_PYTHON"] = sys.executable
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("PRE_COMMIT_HOME", str(Path(tempfile.gettempdir()) / "eee-pre-commit-cache"))
    when = f"{_CLOCK[0]} +0000"
    env.update(
        GIT_AUTHOR_DATE=when,
        GIT_COMMITTER_DATE=when,
        GIT_AUTHOR_NAME="Test Contributor",
        GIT_AUTHOR_EMAIL="contributor@example.org",
        GIT_COMMITTER_NAME="Test Contributor",
        GIT_COMMITTER_EMAIL="contributor@example.org",
    )
    return env


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=_env(), check=False)
    if check and proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return proc


def _tick() -> str:
    """The time of the next commit (an event written now declares it)."""
    _CLOCK[0] += 60
    import datetime as dt

    return dt.datetime.fromtimestamp(_CLOCK[0], dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _sneak(repo: Path, message: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", message)


def _store(parent: Path, name: str, hooks: bool) -> Path:
    repo = parent / name
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "commit.gpgsign", "false")
    shutil.copyfile(PROJECT / ".pre-commit-config.yaml", repo / ".pre-commit-config.yaml")
    (repo / "tools").mkdir()
    shutil.copy2(PROJECT / "tools" / "hook", repo / "tools" / "hook")
    (repo / "README.md").write_text("a test store\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "empty store")
    if hooks:
        code, text = _eee(["gate", "install"], repo)
        if code != 0:
            raise SystemExit(f"eee gate install failed: {text}")
    return repo


def _example(*parts: str) -> dict:
    return json.loads(EXAMPLES.joinpath(*parts).read_text(encoding="utf-8"))


def _place(repo: Path, doc: dict | bytes, rel: str) -> str:
    from eee.store.strictjson import canonical

    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(doc if isinstance(doc, bytes) else canonical(doc))
    return rel


def _record_rel(doc: dict, record_uuid: str, benchmark: str | None = None) -> str:
    from eee.rules.record import main_folder
    from eee.store.paths import canonical_record_path

    return canonical_record_path(benchmark or main_folder(doc) or "bench", doc["model_info"]["id"], record_uuid)


def _event(repo: Path, action: str, record: str, n: int, when: str, **fields: str) -> str:
    """An event file written by hand (as a contributor would), declaring ``when``."""
    stamp = when.replace("-", "").replace(":", "")
    event_id = f"{stamp[:15]}.{stamp[16:22]}Z-{action}-{record[:8]}-{n:06x}"
    lines = [
        f'event_schema: "{fields.pop("event_schema", "1.1.0")}"',
        f"id: {event_id}",
        f"action: {action}",
        f"record: {record}",
    ]
    lines += [f"{k}: {json.dumps(v)}" for k, v in fields.items() if k != "reason"]
    if "reason" in fields:
        lines.append(f"reason: {json.dumps(fields['reason'])}")
    lines += [
        "actor:",
        "  name: Test Contributor",
        "  email: contributor@example.org",
        f'timestamp: "{when}"',
    ]
    rel = f"governance/events/{event_id}.yaml"
    (repo / "governance" / "events").mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rel


def _uuid(n: int) -> str:
    import uuid

    return str(uuid.UUID(int=0xA1B2C3D4 * 2**96 + n, version=4))


def _schema_broken(errors: int) -> dict:
    """The valid example with ``errors`` results whose score is a string (one schema error each)."""
    doc = _example("aggregate", "valid", RECORD)
    first = doc["evaluation_results"][0]
    results = []
    for i in range(errors):
        result = json.loads(json.dumps(first))
        result["evaluation_result_id"] = f"r{i}"
        result["score_details"]["score"] = "high"
        results.append(result)
    doc["evaluation_results"] = results
    return doc


# --- the cases ----------------------------------------------------------------------------------


def reference(w: Writer) -> None:
    for name in ("records", "records-with-samples"):
        folder = REFERENCE / name
        if folder.is_dir():
            w.reports(f"reference-{name}", ["validate", str(folder)], w.work)
        else:
            print(f"compare_reports: {folder} is absent (set EEE_REFERENCE): left out", file=sys.stderr)


def _place_example(store: Path, raw: bytes, folder: str | None = None) -> Path:
    """A held example where the store's layout puts it (tests/test_validate_examples.py's ``_place``)."""
    from eee.rules.record import main_folder
    from eee.store.paths import canonical_folders

    folders = ("meta-llama", "Llama-2-7b-hf")
    benchmark = "bench"
    try:
        doc = json.loads(raw)
        folders = canonical_folders(doc["model_info"]["id"]) or folders
        benchmark = main_folder(doc) or benchmark
    except Exception:
        pass
    path = store / "data" / (folder or benchmark) / folders[0] / folders[1] / f"{FIXED_UUID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return path


def examples(w: Writer) -> None:
    base = w.work / "examples"
    groups: dict[str, list[Path]] = {}
    for kind in ("valid", "invalid", "warning"):
        folder = EXAMPLES / "aggregate" / kind
        expected = json.loads((folder / "_expected.json").read_text()) if kind != "valid" else {}
        for example in sorted(folder.glob("*.json")):
            if example.name.startswith("_"):
                continue
            store = base / f"aggregate-{kind}" / example.stem
            path = _place_example(store, example.read_bytes(), expected.get(example.name, {}).get("folder"))
            groups.setdefault(f"aggregate-{kind}", []).append(path)
    aggregate = _example("instance", "aggregate.json")
    for kind in ("valid", "invalid", "warning"):
        folder = EXAMPLES / "instance" / kind
        expected = json.loads((folder / "_expected.json").read_text()) if kind != "valid" else {}
        for example in sorted(folder.glob("*.jsonl")):
            store = base / f"instance-{kind}" / example.stem
            model = store / "data" / "qa-bench" / "acme" / "widget-7b"
            model.mkdir(parents=True)
            sidecar = model / f"{FIXED_UUID}_samples.jsonl"
            rows = example.read_bytes()
            sidecar.write_bytes(rows)
            doc = json.loads(json.dumps(aggregate))
            der = doc["detailed_evaluation_results"]
            der["file_path"] = f"data/qa-bench/acme/widget-7b/{FIXED_UUID}_samples.jsonl"
            der["checksum"] = hashlib.sha256(rows).hexdigest()
            der["total_rows"] = sum(1 for line in rows.splitlines() if line.strip())
            der.update(expected.get(example.name, {}).get("aggregate") or {})
            record = model / f"{FIXED_UUID}.json"
            record.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            groups.setdefault(f"instance-{kind}", []).append(record)
    migration = sorted(p for p in (EXAMPLES / "migration").rglob("*") if p.suffix in (".json", ".jsonl"))
    groups["migration-loose"] = [p for p in migration if not p.name.startswith("_")]
    for name, paths in groups.items():
        w.reports(f"examples-{name}", ["validate", *(os.path.relpath(p, w.work) for p in paths)], w.work)


def fuzz(w: Writer) -> None:
    from fuzzing import build, clean_seeds

    base = w.work / "fuzz"
    seeds = clean_seeds(base / "seeds")
    root = base / "store"
    root.mkdir()
    build(root, 20261201, 300, 80, 80, seeds)
    w.reports("fuzz", ["validate", "fuzz/store"], w.work)


def audit(w: Writer) -> None:
    repo = _store(w.work, "audit", hooks=False)
    good = _example("aggregate", "valid", RECORD)
    a = _place(repo, good, _record_rel(good, _uuid(1)))
    other = json.loads(json.dumps(good))
    other["model_info"]["id"] = "acme/widget-7b"
    b = _place(repo, other, _record_rel(other, _uuid(2)))
    third = json.loads(json.dumps(good))
    third["model_info"]["id"] = "acme/gadget-3b"
    c = _place(repo, third, _record_rel(third, _uuid(3)))
    _tick()
    _sneak(repo, "three valid records")

    # a record out of its bounds with the flag a maintainer wrote for it (accepted)
    low = json.loads(json.dumps(good))
    low["model_info"]["id"] = "acme/low-1b"
    low["evaluation_results"][0]["score_details"]["score"] = 0.5
    flagged = _place(repo, low, _record_rel(low, _uuid(4)))
    when = _tick()
    path = "$.evaluation_results[0].score_details.score"
    _event(repo, "flag", _uuid(4), 1, when, rule="score", path=path, reason="HELM's -1 for missing")
    _sneak(repo, "a flagged record")

    doc = json.loads((repo / a).read_text())
    doc["evaluation_results"][0]["score_details"]["score"] = 9.1
    (repo / a).write_text(json.dumps(doc, indent=2) + "\n")
    _tick()
    _sneak(repo, "edit an accepted record")
    (repo / b).unlink()
    _tick()
    _sneak(repo, "delete an accepted record")
    new_c = c.replace(_uuid(3), _uuid(5))
    (repo / c).rename(repo / new_c)
    _tick()
    _sneak(repo, "rename an accepted record")

    when = _tick()
    _event(repo, "retract", _uuid(1), 2, when)  # no reason: invalid under the event schema
    _event(repo, "dispute", _uuid(9), 3, when, reason="no such record", reference="https://example.org/d/1")
    _sneak(repo, "an invalid event and one naming no record")

    sidecar = Path(a).with_name(f"{_uuid(1)}_samples.jsonl").as_posix()
    _place(repo, (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes(), sidecar)
    _tick()
    _sneak(repo, "a sidecar in git")

    clash = json.loads(json.dumps(good))
    clash["model_info"]["id"] = "Meta-Llama/Llama-2-7b-hf"
    rel = _record_rel(good, _uuid(6)).replace("/meta-llama/", "/Meta-Llama/")
    _place(repo, clash, rel)
    _tick()
    _sneak(repo, "a case clash")

    # the attacks of issue 24: flags written for errors no flag may accept
    when = _tick()
    _place(repo, b'{"schema_version": "0.3.0", "evaluation_id": ', f"data/bench/acme/broken/{_uuid(7)}.json")
    _event(repo, "flag", _uuid(7), 4, when, rule="json", path="$", reason="it is fine")
    _sneak(repo, "a record that is not JSON, flagged")
    when = _tick()
    many = _schema_broken(25)
    many["model_info"]["id"] = "acme/many-9b"
    _place(repo, many, _record_rel(many, _uuid(8)))
    for i in range(20):
        _event(
            repo,
            "flag",
            _uuid(8),
            10 + i,
            when,
            rule="schema",
            path=f"$.evaluation_results[{i}].score_details.score",
            reason="a string score",
        )
    _sneak(repo, "a record invalid under its schema version, its shown findings flagged")
    copy = _record_rel(low, _uuid(4), benchmark="other-bench")
    _place(repo, (repo / flagged).read_bytes(), copy)
    _tick()
    _sneak(repo, "a second file carrying a flagged record's uuid")
    when = _tick()
    _event(repo, "flag", _uuid(6), 40, when, rule="bounds", path=path, reason="the README's example rule")
    _sneak(repo, "a flag of a rule no check emits")

    _git(repo, "checkout", "-q", "-b", "side")
    (repo / new_c).unlink()
    _tick()
    _sneak(repo, "side: drop a record")
    _git(repo, "checkout", "-q", "main")
    extra = json.loads(json.dumps(good))
    extra["model_info"]["id"] = "acme/extra-2b"
    _place(repo, extra, _record_rel(extra, _uuid(10)))
    _tick()
    _sneak(repo, "main: one more record")
    _tick()
    _git(repo, "merge", "-q", "--no-verify", "--no-edit", "side")
    w.reports("audit", ["audit", "--store", "audit"], w.work)


def _now(w: Writer) -> str:
    """Now, to the minute (the hooks hold an event's time to within a day of now), written
    ``<NOW>`` in the reports, as is the event id made of it."""
    import datetime as dt

    when = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    stamp = when.replace("-", "").replace(":", "")
    w.replace[f"{stamp[:15]}.{stamp[16:22]}Z"] = "<NOW>"
    w.replace[when] = "<NOW>"
    return when


def hooks(w: Writer) -> None:
    repo = _store(w.work, "hooks", hooks=True)
    good = _example("aggregate", "valid", RECORD)
    a = _place(repo, good, _record_rel(good, _uuid(1)))
    _tick()
    _git(repo, "add", "-A")
    out: list[str] = []
    lines = out.append
    proc = _git(repo, "commit", "-q", "-m", "a valid record", check=False)
    lines(f"== a valid record: exit {proc.returncode}\n{proc.stdout}{proc.stderr}")

    def attempt(name: str, change) -> None:  # type: ignore[no-untyped-def]
        _tick()
        change(_now(w))
        _git(repo, "add", "-A")
        proc = _git(repo, "commit", "-q", "-m", name, check=False)
        lines(f"== {name}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}")
        if proc.returncode == 0:
            _git(repo, "reset", "-q", "--hard", "HEAD~1")
        _git(repo, "reset", "-q", "--hard", "HEAD")
        _git(repo, "clean", "-fdq")

    def out_of_bounds(when: str) -> None:
        doc = json.loads(json.dumps(good))
        doc["model_info"]["id"] = "acme/low-1b"
        doc["evaluation_results"][0]["score_details"]["score"] = 0.5
        _place(repo, doc, _record_rel(doc, _uuid(2)))

    def out_of_bounds_flagged(when: str) -> None:
        out_of_bounds(when)
        path = "$.evaluation_results[0].score_details.score"
        _event(repo, "flag", _uuid(2), 1, when, rule="score", path=path, reason="HELM's -1 for missing")

    def edit(when: str) -> None:
        doc = json.loads((repo / a).read_text())
        doc["evaluation_results"][0]["score_details"]["score"] = 9.1
        (repo / a).write_text(json.dumps(doc, indent=2) + "\n")

    def delete(when: str) -> None:
        (repo / a).unlink()

    def sidecar(when: str) -> None:
        rel = Path(a).with_name(f"{_uuid(1)}_samples.jsonl").as_posix()
        _place(repo, (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes(), rel)

    def bad_event(when: str) -> None:
        _event(repo, "retract", _uuid(1), 2, when)

    def not_json_flagged(when: str) -> None:
        _place(repo, b'{"schema_version": "0.3.0", "evaluation_id": ', f"data/bench/acme/broken/{_uuid(7)}.json")
        _event(repo, "flag", _uuid(7), 4, when, rule="json", path="$", reason="it is fine")

    def schema_flagged(when: str) -> None:
        many = _schema_broken(25)
        many["model_info"]["id"] = "acme/many-9b"
        _place(repo, many, _record_rel(many, _uuid(8)))
        for i in range(20):
            path = f"$.evaluation_results[{i}].score_details.score"
            _event(repo, "flag", _uuid(8), 10 + i, when, rule="schema", path=path, reason="a string score")

    def case_clash(when: str) -> None:
        clash = json.loads(json.dumps(good))
        clash["model_info"]["id"] = "Meta-Llama/Llama-2-7b-hf"
        _place(repo, clash, _record_rel(good, _uuid(6)).replace("/meta-llama/", "/Meta-Llama/"))

    def duplicate(when: str) -> None:
        _place(repo, good, _record_rel(good, _uuid(11), benchmark="other-bench"))

    for name, change in (
        ("a score out of its bounds", out_of_bounds),
        ("a score out of its bounds, flagged", out_of_bounds_flagged),
        ("edit an accepted record", edit),
        ("delete an accepted record", delete),
        ("a sidecar in git", sidecar),
        ("an invalid event", bad_event),
        ("a record that is not JSON, flagged", not_json_flagged),
        ("a record invalid under its schema, its shown findings flagged", schema_flagged),
        ("a case clash", case_clash),
        ("a duplicate of an accepted record", duplicate),
    ):
        attempt(name, change)
    w.save("hooks.txt", "\n".join(out))


def write(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="eee-reports-") as tmp:
        work = Path(tmp).resolve()
        w = Writer(out, work)
        for step in (reference, examples, fuzz, audit, hooks):
            print(f"compare_reports: {step.__name__}", file=sys.stderr)
            step(w)
    print(f"compare_reports: {len(list(out.iterdir()))} reports in {out}", file=sys.stderr)
    return 0


# --- the comparison -----------------------------------------------------------------------------

_ID = re.compile(r"\[([a-z][a-z0-9_.-]*)\] ")


def _same_but_id(before: str, after: str) -> bool:
    """Whether ``after`` is ``before`` with one ``[id] `` inserted (or the same)."""
    if before == after:
        return True
    return any(after[: m.start()] + after[m.end() :] == before for m in _ID.finditer(after))


def compare(before: Path, after: Path) -> int:
    problems: list[str] = []
    names = sorted({p.name for p in before.iterdir()} | {p.name for p in after.iterdir()})
    ids = 0
    for name in names:
        b, a = before / name, after / name
        if not b.exists() or not a.exists():
            problems.append(f"{name}: only in {'after' if a.exists() else 'before'}")
            continue
        if name.endswith((".json", ".exit")):
            if b.read_bytes() != a.read_bytes():
                problems.append(f"{name}: differs")
            continue
        lb, la = b.read_text().splitlines(), a.read_text().splitlines()
        if len(lb) != len(la):
            problems.append(f"{name}: {len(lb)} lines before, {len(la)} after")
            continue
        for n, (x, y) in enumerate(zip(lb, la, strict=True), start=1):
            if not _same_but_id(x, y):
                problems.append(f"{name}:{n}: before {x!r}\n{' ' * len(name)}   after  {y!r}")
            elif x != y:
                ids += 1
    for line in problems:
        print(line)
    print(
        f"{len(names)} reports compared: {len(problems)} difference(s); "
        f"{ids} text line(s) differ only by the inserted [id]"
    )
    return 1 if problems else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "write":
        return write(Path(argv[1]).resolve())
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
