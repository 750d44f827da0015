"""The audit sees every commit (issue 13, items 1-4): revisions verified as commits, git
never given user input as options, merges, a trust anchor, crafted trees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, load_example, make_store, place_record
from eee.commands.audit import main as audit_main
from eee.git.cli import GitError, verify_commit

RECORD = "v0.3.0_perplexity_unbounded.json"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_store(tmp_path, hooks=False)
    place_record(repo, load_example("aggregate", "valid", RECORD))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a record")
    return repo


@pytest.mark.parametrize(
    "option",
    ["--to=--output={out}", "--from=--output={out}", "--to=--exec=touch {out}", "--to=-o{out}"],
)
def test_option_shaped_revisions_are_refused_and_write_nothing(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    out = tmp_path / "written-by-git.txt"
    code = audit_main(["--store", str(repo), option.format(out=out)])
    text = capsys.readouterr()
    assert code == 1
    assert not out.exists()
    assert "is not a revision" in text.out + text.err


@pytest.mark.parametrize("rev", ["no-such-branch", "HEAD:README.md", "HEAD^{tree}", "0" * 40])
def test_revisions_that_name_no_commit_are_refused(repo: Path, capsys: pytest.CaptureFixture[str], rev: str) -> None:
    assert audit_main(["--store", str(repo), "--to", rev]) == 1
    assert repr(rev) in capsys.readouterr().out


def test_a_blob_or_tag_of_a_tree_is_not_a_commit(repo: Path) -> None:
    blob = git(repo, "rev-parse", "HEAD:README.md").stdout.strip()
    with pytest.raises(GitError, match="names no commit"):
        verify_commit(blob, repo)
    git(repo, "tag", "-a", "-m", "annotated", "v1")
    assert verify_commit("v1", repo) == git(repo, "rev-parse", "HEAD").stdout.strip()


def test_a_range_audits_the_commits_after_start(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert audit_main(["--store", str(repo), "--from", "HEAD~1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["files"] == 1


# --- merges: every protected file of every parent survives the merge unchanged ---------------------

OTHER = "2a2b2c2d-3e3f-4a4b-8c8d-9e9f0a0b0c0d"
THIRD = "3c3d3e3f-4a4b-4c4d-9e9f-0a0b1c1d2e2f"


def _commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def _audit(repo: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[dict]]:
    code = audit_main(["--store", str(repo), "--format", "json", *extra])
    report = json.loads(capsys.readouterr().out)
    return code, [f for f in report["findings"] if f["severity"] == "error"]


def _merge(repo: Path, branch: str, *, resolve=None, message: str = "merge") -> str:
    proc = git(repo, "merge", "--no-ff", "--no-commit", branch, check=False)
    if resolve is not None:
        resolve()
    elif proc.returncode != 0:
        raise AssertionError(proc.stdout + proc.stderr)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture
def forked(tmp_path: Path) -> Path:
    """main: the project's schemas and one accepted record; branch `side` forks from there."""
    import shutil

    from conftest import PROJECT

    repo = make_store(tmp_path, hooks=False)
    shutil.copytree(PROJECT / "schemas", repo / "schemas")
    place_record(repo, load_example("aggregate", "valid", RECORD))
    _commit(repo, "schemas and a record")
    git(repo, "branch", "side")
    return repo


def test_a_clean_merge_of_two_additions_passes(forked: Path, capsys) -> None:
    doc = load_example("aggregate", "valid", RECORD)
    place_record(forked, doc, benchmark="one", record_uuid=OTHER)
    _commit(forked, "main adds a record")
    git(forked, "checkout", "-q", "side")
    place_record(forked, doc, benchmark="two", record_uuid=THIRD)
    _commit(forked, "side adds a record")
    git(forked, "checkout", "-q", "main")
    _merge(forked, "side")
    code, errors = _audit(forked, capsys)
    assert errors == [] and code == 2  # 2: warnings only (the copies of one record are duplicates)


def test_a_merge_that_deletes_an_accepted_record(forked: Path, capsys) -> None:
    rel = next(p for p in git(forked, "ls-files", "data").stdout.split())
    git(forked, "checkout", "-q", "side")
    (forked / "side.txt").write_text("x")
    _commit(forked, "side: something else")
    git(forked, "checkout", "-q", "main")
    merge = _merge(forked, "side", resolve=lambda: git(forked, "rm", "-q", rel))
    code, errors = _audit(forked, capsys)
    assert code == 1
    (f,) = [f for f in errors if f["file"] == f"{merge[:10]}:{rel}"]
    assert "the merge deletes an accepted record" in f["message"]


def test_a_merge_that_drops_a_retraction_event(forked: Path, capsys) -> None:
    from conftest import FIXED_UUID
    from eee.governance.events import make_event, write

    git(forked, "checkout", "-q", "side")
    event = write(forked, make_event("retract", FIXED_UUID, "wrong split", {"name": "M", "email": "m@example.org"}))
    rel = event.relative_to(forked).as_posix()
    _commit(forked, "side: retract")
    git(forked, "checkout", "-q", "main")
    (forked / "main.txt").write_text("x")
    _commit(forked, "main: something else")
    merge = _merge(forked, "side", resolve=lambda: git(forked, "rm", "-q", "-f", rel))
    code, errors = _audit(forked, capsys)
    assert code == 1
    assert any(
        f["file"] == f"{merge[:10]}:{rel}" and "deletes an accepted governance event of parent 2" in f["message"]
        for f in errors
    ), errors


def test_a_merge_that_edits_a_released_schema(forked: Path, capsys) -> None:
    schema = forked / "schemas" / "0.3.0" / "eval.schema.json"
    git(forked, "checkout", "-q", "side")
    (forked / "side.txt").write_text("x")
    _commit(forked, "side: something else")
    git(forked, "checkout", "-q", "main")

    def edit() -> None:
        schema.write_text(schema.read_text().replace('"title"', '"x-edited": 1, "title"', 1))

    merge = _merge(forked, "side", resolve=edit)
    code, errors = _audit(forked, capsys)
    assert code == 1
    rel = "schemas/0.3.0/eval.schema.json"
    messages = [f["message"] for f in errors if f["file"] == f"{merge[:10]}:{rel}"]
    assert any("changes an accepted released schema file of parent 1" in m for m in messages), errors


def test_an_add_add_conflict_resolved_by_keeping_one_side(forked: Path, capsys) -> None:
    doc = load_example("aggregate", "valid", RECORD)
    place_record(forked, doc, benchmark="same", record_uuid=OTHER)
    _commit(forked, "main adds uuid OTHER")
    git(forked, "checkout", "-q", "side")
    theirs = json.loads(json.dumps(doc))
    theirs["evaluation_results"][0]["score_details"]["score"] = 7.5
    path = place_record(forked, theirs, benchmark="same", record_uuid=OTHER)
    _commit(forked, "side adds uuid OTHER too, another record")
    git(forked, "checkout", "-q", "main")
    rel = path.relative_to(forked).as_posix()
    merge = _merge(forked, "side", resolve=lambda: git(forked, "checkout", "--ours", "--", rel))
    code, errors = _audit(forked, capsys)
    assert code == 1
    (f,) = [f for f in errors if f["file"] == f"{merge[:10]}:{rel}"]
    assert "changes an accepted record of parent 2" in f["message"] and "keeping both" in f["message"]


def test_one_uuid_brought_in_at_two_paths(forked: Path, capsys) -> None:
    doc = load_example("aggregate", "valid", RECORD)
    place_record(forked, doc, benchmark="alpha", record_uuid=OTHER)
    _commit(forked, "main adds OTHER under alpha")
    git(forked, "checkout", "-q", "side")
    place_record(forked, doc, benchmark="beta", record_uuid=OTHER)
    _commit(forked, "side adds OTHER under beta")
    git(forked, "checkout", "-q", "main")
    merge = _merge(forked, "side")
    code, errors = _audit(forked, capsys)
    assert code == 1
    # the rule uuid of every commit (eee.rules.uuids): the side's record against main's
    (f,) = [f for f in errors if f["check"] == "uuid"]
    assert (
        f["file"].startswith(f"{merge[:10]}:data/beta/")
        and f"uuid {OTHER} is already used by data/alpha/" in f["message"]
    )


def test_an_evil_merge_is_validated(forked: Path, capsys) -> None:
    git(forked, "checkout", "-q", "side")
    (forked / "side.txt").write_text("x")
    _commit(forked, "side")
    git(forked, "checkout", "-q", "main")
    (forked / "main.txt").write_text("x")
    _commit(forked, "main")
    doc = load_example("aggregate", "valid", RECORD)
    doc["schema_version"] = "9.9.9"
    merge = _merge(forked, "side", resolve=lambda: place_record(forked, doc, record_uuid=OTHER))
    code, errors = _audit(forked, capsys)
    assert code == 1
    assert any(f["file"].startswith(f"{merge[:10]}:data/") and f["check"] == "version" for f in errors), errors


# --- a trust anchor: rewritten history is an error naming the anchor --------------------------------


def _history(repo: Path) -> list[str]:
    commits = []
    for n in range(3):
        (repo / f"note-{n}.txt").write_text(f"{n}\n")
        commits.append(_commit(repo, f"note {n}"))
    return commits


@pytest.mark.parametrize("rewrite", ["amend", "reset-soft", "rebase", "reset-hard-and-new"])
def test_rewritten_history_is_an_error_naming_the_anchor(repo: Path, capsys, rewrite: str) -> None:
    first, second, third = _history(repo)
    anchor = third if rewrite != "rebase" else second
    if rewrite == "amend":
        git(repo, "commit", "-q", "--amend", "--no-verify", "-m", "note 2, amended")
    elif rewrite == "reset-soft":
        git(repo, "reset", "-q", "--soft", second)
        _commit(repo, "note 2, again")
    elif rewrite == "rebase":
        git(repo, "checkout", "-q", "-b", "elsewhere", first)
        (repo / "other.txt").write_text("o\n")
        _commit(repo, "another line")
        git(repo, "checkout", "-q", "main")
        git(repo, "rebase", "-q", "elsewhere")
    else:
        git(repo, "reset", "-q", "--hard", first)
        (repo / "x.txt").write_text("x\n")
        _commit(repo, "history goes another way")
    assert audit_main(["--store", str(repo), "--format", "json", f"--anchor={anchor}"]) == 1
    report = json.loads(capsys.readouterr().out)
    (f,) = [f for f in report["findings"] if f["check"] == "history"]
    assert anchor in f["file"] and "is not an ancestor of the audited head" in f["message"]
    assert "rewritten" in f["message"]


def test_the_anchor_from_the_environment(repo: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    _first, second, _third = _history(repo)
    monkeypatch.setenv("EEE_AUDIT_ANCHOR", second)
    assert audit_main(["--store", str(repo)]) == 0
    git(repo, "reset", "-q", "--hard", "HEAD~2")
    _commit(repo, "rewritten")
    assert audit_main(["--store", str(repo)]) == 1
    assert "$EEE_AUDIT_ANCHOR" in capsys.readouterr().out
    monkeypatch.setenv("EEE_AUDIT_ANCHOR", "0" * 40)  # CI's "no previous commit"
    assert audit_main(["--store", str(repo)]) == 0


def test_an_anchor_that_is_no_commit(repo: Path, capsys) -> None:
    assert audit_main(["--store", str(repo), "--anchor=--output=/tmp/x"]) == 1
    assert audit_main(["--store", str(repo), "--anchor", "f" * 40]) == 1
    assert "names no commit" in capsys.readouterr().out


def test_git_replace_cannot_hide_a_change(repo: Path, capsys) -> None:
    rel = git(repo, "ls-files", "data").stdout.split()[0]
    git(repo, "rm", "-q", rel)
    bad = _commit(repo, "delete an accepted record")
    # a replacement commit with the same parent and the record kept
    tree = git(repo, "rev-parse", "HEAD~1^{tree}").stdout.strip()
    fake = git(repo, "commit-tree", tree, "-p", "HEAD~1", "-m", "delete an accepted record").stdout.strip()
    git(repo, "replace", bad, fake)
    import os
    import subprocess

    fooled = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "HEAD", "--", rel],
        cwd=repo,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "GIT_NO_REPLACE_OBJECTS"},
    )
    assert fooled.stdout.strip() == rel  # plain git shows the replacement, with the record kept
    code, errors = _audit(repo, capsys)
    assert code == 1
    assert any(f["file"] == f"{bad[:10]}:{rel}" and f["check"] == "immutable" for f in errors), errors
    assert audit_main(["--store", str(repo)]) == 1
    assert "replace ref" in capsys.readouterr().out


# --- crafted trees: `..`, `.`, `.git`, empty and absolute components are findings, never files ------


def _tree(repo: Path, entries: dict[str, object]) -> str:
    """A tree object from ``{name: bytes | dict}``, names taken as they are (no checks)."""
    lines = []
    for name, value in entries.items():
        if isinstance(value, dict):
            lines.append(f"040000 tree {_tree(repo, value)}\t{name}")
        else:
            sha = git(repo, "hash-object", "-w", "--stdin", check=True).stdout if False else None
            import subprocess

            sha = (
                subprocess.run(
                    ["git", "hash-object", "-w", "--stdin"], cwd=repo, input=value, capture_output=True, check=True
                )
                .stdout.decode()
                .strip()
            )
            lines.append(f"100644 blob {sha}\t{name}")
    import subprocess

    return (
        subprocess.run(
            ["git", "mktree", "-z"],
            cwd=repo,
            input="".join(f"{line}\0" for line in lines).encode(),
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )


def test_crafted_tree_entries_are_findings_and_nothing_is_written(repo: Path, tmp_path: Path, capsys) -> None:
    marker = tmp_path / "escaped"
    record = (repo / git(repo, "ls-files", "data").stdout.split()[0]).read_bytes()
    depth = len(Path(tmp_path).parts) + 8
    escape: dict[str, object] = {"escaped": b"written outside the audit's folder\n"}
    for part in reversed(Path(tmp_path).parts[1:]):
        escape = {part: escape}
    escape = {"..": escape}
    for _ in range(depth):
        escape = {"..": escape}
    entries: dict[str, object] = {
        "README.md": b"a crafted commit\n",
        "data": {
            "..": {"x.json": record},
            ".": {"y.json": record},
            ".git": {"hooks": {"pre-commit": b"#!/bin/sh\necho pwned\n"}},
            "bench": {".GIT": {"z.json": record}, "d": {"git~1": {"q.json": record}}},
            "up": escape,
        },
        ".git": {"config": b"[core]\n"},
    }
    tree = _tree(repo, entries)
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    crafted = git(repo, "commit-tree", tree, "-p", head, "-m", "crafted").stdout.strip()
    git(repo, "update-ref", "refs/heads/main", crafted)
    code, errors = _audit(repo, capsys)
    assert code == 1
    assert not marker.exists()
    assert (
        not (repo / ".git" / "hooks" / "pre-commit").read_text(errors="ignore").startswith("#!/bin/sh\necho pwned")
        if (repo / ".git" / "hooks" / "pre-commit").exists()
        else True
    )
    crafted_findings = [f for f in errors if f["file"].startswith(f"{crafted[:10]}:") and f["check"] == "history"]
    texts = " ".join(f["message"] for f in crafted_findings)
    for what in ("'..' component", "'.' component", "'.git' component", "'.GIT' component", "'git~1' component"):
        assert what in texts, (what, texts)


def test_a_tree_git_cannot_read_is_walked_and_later_commits_are_audited(repo: Path, capsys) -> None:
    """An empty entry name makes git's own tree walker fail (diff-tree, ls-tree): the audit walks
    the raw tree objects instead, reports the entry, and still audits that commit's other
    files and every later commit whose tree still holds it."""
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    record = (repo / git(repo, "ls-files", "data").stdout.split()[0]).read_bytes()
    doc = json.loads(record)
    doc["schema_version"] = "9.9.9"
    bad = json.dumps(doc).encode()
    base = {"README.md": b"x\n", "data": {"": {"e.json": b"{}"}, "bench": {"b": {"c": {OTHER + ".json": bad}}}}}
    first = git(repo, "commit-tree", _tree(repo, base), "-p", head, "-m", "an empty file name").stdout.strip()
    later_tree = dict(base)
    later_tree["data"] = dict(base["data"], bench2={"b": {"c": {THIRD + ".json": bad}}})
    later = git(repo, "commit-tree", _tree(repo, later_tree), "-p", first, "-m", "later, still crafted").stdout.strip()
    git(repo, "update-ref", "refs/heads/main", later)
    code, errors = _audit(repo, capsys)
    assert code == 1
    mine = [f for f in errors if f["file"].startswith(f"{first[:10]}:")]
    assert any("empty component" in f["message"] for f in mine), mine
    assert any(f["file"].endswith(f"{OTHER}.json") and f["check"] == "version" for f in mine), mine
    theirs = [f for f in errors if f["file"].startswith(f"{later[:10]}:")]
    assert any(f["file"].endswith(f"{THIRD}.json") and f["check"] == "version" for f in theirs), theirs


def test_a_merge_that_drops_a_released_version_from_the_registry(forked: Path, capsys) -> None:
    registry = forked / "schemas" / "registry.json"
    git(forked, "checkout", "-q", "side")
    (forked / "side.txt").write_text("x")
    _commit(forked, "side")
    git(forked, "checkout", "-q", "main")

    def drop() -> None:
        doc = json.loads(registry.read_text())
        doc["versions"].pop("0.2.0")
        registry.write_text(json.dumps(doc, indent=2))

    merge = _merge(forked, "side", resolve=drop)
    code, errors = _audit(forked, capsys)
    assert code == 1
    messages = [f["message"] for f in errors if f["file"] == f"{merge[:10]}:schemas/registry.json"]
    assert "the merge removes released version 0.2.0 from the registry (against parent 1)" in messages, errors


def test_an_octopus_merge_is_checked_against_every_parent(forked: Path, capsys) -> None:
    from conftest import FIXED_UUID
    from eee.governance.events import make_event, write

    git(forked, "checkout", "-q", "-b", "third")
    (forked / "third.txt").write_text("x")
    _commit(forked, "third")
    git(forked, "checkout", "-q", "side")
    event = write(
        forked,
        make_event(
            "dispute",
            FIXED_UUID,
            "contested",
            {"name": "M", "email": "m@example.org"},
            reference="https://example.org/1",
        ),
    )
    rel = event.relative_to(forked).as_posix()
    _commit(forked, "side: a dispute")
    git(forked, "checkout", "-q", "main")
    proc = git(forked, "merge", "--no-ff", "--no-commit", "side", "third", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    git(forked, "rm", "-q", "-f", rel)
    git(forked, "commit", "-q", "--no-verify", "-m", "octopus")
    merge = git(forked, "rev-parse", "HEAD").stdout.strip()
    assert len(git(forked, "log", "-1", "--format=%P").stdout.split()) == 3
    code, errors = _audit(forked, capsys)
    assert code == 1
    assert any(f["file"] == f"{merge[:10]}:{rel}" and "of parent 2" in f["message"] for f in errors), errors
