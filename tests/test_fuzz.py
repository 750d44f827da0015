"""A bounded fuzz run of the validator (issue 13): 2,000 mutated records and sidecars and 500
mutated events, fixed seed. No traceback, every bad file at least one finding, every good
file none, every file reported, and each file's findings the same alone as among all. And
random event sequences through the ledger's state machine (issue 24.3): the fold applies
only what the machine allows, refused events have no effect, and no duplicate is left
standing on a record that does not stand.

The cases come from ``tests/fuzzing.py`` (what each mutation does and why it must, or must
not, be found); ``benchmarks/fuzz.py`` runs the same generator at 100,000 cases and reports
the time per batch and the slowest file: speed is measured there, never asserted here (a
test that fails on a loaded machine says nothing about the code)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from fuzzing import build, clean_seeds, event_sequence, iter_findings, machine_problems, site_problems, site_store

SEED = 20261201
RECORDS, SIDECARS, EVENTS = 1500, 500, 500
SEQUENCES, SEQUENCE_LENGTH = 400, 14
SITE_RECORDS = 150
pytestmark = pytest.mark.slow


def _key(result) -> list[tuple]:
    return sorted((f.pointer, f.message, f.line, f.severity) for f in result.findings)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory):
    from eee.validation.validate import run

    base = tmp_path_factory.mktemp("fuzz")
    seeds = clean_seeds(base / "seeds")
    assert seeds[0] and seeds[1], "no clean seed records or pairs"
    root = base / "store"
    root.mkdir()
    cases = build(root, SEED, RECORDS, SIDECARS, EVENTS, seeds)
    summary = run([str(root)])
    results = dict(iter_findings(summary, root))
    return root, cases, results


def test_every_file_is_reported(fuzzed) -> None:
    root, cases, results = fuzzed
    on_disk = {
        os.path.relpath(os.path.join(d, n), root)
        for top in ("data", "governance/events")
        for d, dirs, names in os.walk(root / top)
        for n in names + [x for x in dirs if os.path.islink(os.path.join(d, x))]
    }
    missing = sorted(on_disk - set(results))
    assert not missing, missing[:10]
    assert len(cases) >= RECORDS + SIDECARS + EVENTS  # controls come on top


def test_bad_files_are_found_and_good_files_are_clean(fuzzed) -> None:
    _root, cases, results = fuzzed
    missed, spurious = [], []
    for case in cases:
        result = results[case.rel]
        if case.expect == "bad" and not result.findings:
            missed.append(f"{case.kind} {case.op} {case.rel}")
        if case.expect == "good" and result.findings:
            spurious.append(f"{case.kind} {case.op} {case.rel}: {result.findings[0].one_line()}")
        if case.kind == "sidecar":  # the pair's record is untouched: only the sidecar is wrong
            record = results[case.rel[: -len("_samples.jsonl")] + ".json"]
            if record.findings:
                spurious.append(f"record of {case.op} {case.rel}: {record.findings[0].one_line()}")
    assert not missed, missed[:20]
    assert not spurious, spurious[:20]
    ops = Counter(case.expect for case in cases)
    assert ops["bad"] > 1000 and ops["good"] > 500 and ops["any"] > 200, ops


def test_a_file_checked_alone_has_the_same_findings(fuzzed) -> None:
    from eee.validation.validate import run

    root, cases, results = fuzzed
    differ = []
    for case in cases:
        if case.expect != "any" or case.kind == "event":
            continue
        alone = run([str(root / case.rel)])
        (result,) = [r for rel, r in iter_findings(alone, root) if rel == case.rel]
        if _key(result) != _key(results[case.rel]):
            differ.append(case.rel)
    assert not differ, differ[:10]


def test_no_finding_is_a_crash_report(fuzzed) -> None:
    _root, _cases, results = fuzzed
    words = ("Traceback", "Error(", "object has no attribute", "unhashable", "RecursionError")
    bad = [f.one_line() for r in results.values() for f in r.findings if any(w in f.message for w in words)]
    assert not bad, bad[:10]


def test_the_audit_of_a_commit_of_fuzzed_files(tmp_path: Path) -> None:
    """The same kinds of bad files, committed with --no-verify: the audit reports each bad one
    (an error in the commit that added it), no good one, and the commits after it as usual."""
    import json
    import shutil

    from conftest import git, make_store
    from eee.commands.audit import main as audit_main

    seeds = clean_seeds(tmp_path / "seeds")
    repo = make_store(tmp_path, hooks=False)
    staging = tmp_path / "fuzz"
    staging.mkdir()
    cases = build(staging, SEED + 1, 300, 0, 100, seeds)
    for case in list(cases):
        path = staging / case.rel
        if not path.is_symlink() and not path.is_file():  # a FIFO: git cannot commit one
            path.unlink()
            cases.remove(case)
    for top in ("data", "governance"):
        shutil.copytree(staging / top, repo / top, symlinks=True)
    # the generated events declare times on 2026-01-01: commit them that day (an event more
    # than a day from its commit's time is an error of its own)

    # ... and as the actor they name (an event naming anyone but who commits it is an error of its own)
    dated = dict(
        os.environ,
        GIT_AUTHOR_DATE="2026-01-01T12:00:00Z",
        GIT_COMMITTER_DATE="2026-01-01T12:00:00Z",
        GIT_AUTHOR_NAME="Fuzz Tester",
        GIT_AUTHOR_EMAIL="fuzz@example.org",
        GIT_COMMITTER_NAME="Fuzz Tester",
        GIT_COMMITTER_EMAIL="fuzz@example.org",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "fuzzed files", env=dated)
    (repo / "later.txt").write_text("a later commit\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "later", env=dated)
    import io
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        code = audit_main(["--store", str(repo), "--format", "json"])
    report = json.loads(out.getvalue())
    assert code == 1 and report["summary"]["files"] == 3  # the empty store, the fuzz, the later commit
    errors: dict[str, list[str]] = {}
    for f in report["findings"]:
        if f["severity"] == "error":
            errors.setdefault(f["file"].split(":", 1)[1], []).append(f["message"])
    missed = [f"{c.kind} {c.op} {c.rel}" for c in cases if c.expect == "bad" and c.rel not in errors]
    spurious = [f"{c.op} {c.rel}: {errors[c.rel][0]}" for c in cases if c.expect == "good" and c.rel in errors]
    assert not missed, missed[:10]
    assert not spurious, spurious[:10]
    assert not any(f["file"].startswith(report["files"][2]["file"][:10]) for f in report["findings"])


def test_event_sequences_keep_to_the_state_machine() -> None:
    import random

    problems = {}
    for n in range(SEQUENCES):
        found = machine_problems(event_sequence(random.Random(SEED + n), SEQUENCE_LENGTH))
        if found:
            problems[n] = found
    assert not problems, dict(list(problems.items())[:5])


def test_the_site_renders_the_injection_corpus_as_text(tmp_path: Path) -> None:
    """Records, events and an import manifest with random pieces of the injection corpus in
    every text field a page shows: every generated page (catalogue, record and shared pages,
    analysis) rendered as MkDocs renders it holds no element, attribute, link or script of
    the corpus, and every plot is well-formed (the browser test, tests/test_site_security.py,
    builds and opens the whole site from the fixed corpus)."""
    root = tmp_path / "site-store"
    uuids = site_store(root, SEED, SITE_RECORDS)
    pages, problems = site_problems(root)
    assert pages > SITE_RECORDS // 3  # the records with a history have pages, the others shared ones
    assert len(uuids) >= SITE_RECORDS
    assert not problems, dict(list(problems.items())[:5])
