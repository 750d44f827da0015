"""The server gate (issue 23.4): ``eee server install`` puts pre-receive and post-receive
hooks into a bare repository; every push is audited there (the whole audit, over the commits
the push brings, read from git's quarantine), protected branches are never deleted or
rewritten, and after a refusal no ref has moved. Real git, real ``git push`` into a bare
repository, the hooks run by git itself."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXED_UUID, git, make_store, place_record, record_of

pytestmark = pytest.mark.slow

B = "4b0c2a1e-9f3d-4c5b-8a7e-6d5c4b3a2f10"
C = "5c1d3b2f-0a4e-4d6c-9b8f-7e6d5c4b3a21"


def eee(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eee", *args], cwd=cwd, capture_output=True, text=True)


def refs(bare: Path) -> str:
    return git(bare, "for-each-ref", "--format=%(refname) %(objectname)").stdout


def push(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return git(clone, "push", *args, check=False)


def commit_all(clone: Path, message: str) -> str:
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "--no-verify", "-m", message)
    return git(clone, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture
def server(tmp_path: Path) -> tuple[Path, Path]:
    """(bare repository with the server gate, a contributor's clone of it)."""
    origin = make_store(tmp_path, hooks=False, name="origin")
    bare = tmp_path / "store.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    proc = eee("server", "install", str(bare))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    for key, value in (("user.name", "C"), ("user.email", "c@example.org"), ("commit.gpgsign", "false")):
        git(clone, "config", key, value)
    return bare, clone


def _record(clone: Path, uuid: str = FIXED_UUID, model: str = "acme/widget-7b", **changes: object) -> Path:
    doc = record_of(model)
    doc.update(changes)
    return place_record(clone, doc, record_uuid=uuid)


def _refused(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stderr
    assert "pre-receive hook declined" in proc.stderr
    return proc.stderr


# --- install ------------------------------------------------------------------------------------


def test_install_writes_hooks_that_run_this_interpreter_and_is_idempotent(server: tuple[Path, Path]) -> None:
    bare, _ = server
    for stage in ("pre-receive", "post-receive"):
        text = (bare / "hooks" / stage).read_text()
        assert text.startswith("#!/bin/sh\n# eee server gate")
        assert f"exec {sys.executable} -I -m eee server {stage}\n" in text  # absolute, isolated: never the pushed tree
    assert (bare / "eee-duplicates-audit.sqlite").exists()  # the audit's index, built at install
    again = eee("server", "install", str(bare))
    assert again.returncode == 0, again.stderr
    gone = eee("server", "uninstall", str(bare))
    assert gone.returncode == 0 and "removed the server gate" in gone.stdout
    assert not (bare / "hooks" / "pre-receive").exists() and not (bare / "eee-duplicates-audit.sqlite").exists()
    twice = eee("server", "uninstall", str(bare))
    assert twice.returncode == 0 and "not installed" in twice.stdout


def test_install_refuses_what_is_not_a_bare_repository(tmp_path: Path) -> None:
    work = make_store(tmp_path, hooks=False)
    for path, said in (
        (work, "is a work tree, not a bare repository"),
        (work / ".git", "the git directory of a work tree"),
        (tmp_path / "nowhere", "no such folder"),
        (work / "tools", "not a git directory"),
    ):
        proc = eee("server", "install", str(path))
        assert proc.returncode == 64, (path, proc.stderr)
        assert said in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    assert not (work / ".git" / "hooks" / "pre-receive").exists()
    assert eee("server", "install").returncode == 64  # GIT_DIR is required


def test_install_keeps_a_hook_it_did_not_write(tmp_path: Path) -> None:
    bare = tmp_path / "store.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    theirs = bare / "hooks" / "pre-receive"
    theirs.write_text("#!/bin/sh\necho mine\n")
    theirs.chmod(0o755)
    proc = eee("server", "install", str(bare))
    assert proc.returncode == 1 and "did not install" in proc.stderr and "--force" in proc.stderr
    assert theirs.read_text() == "#!/bin/sh\necho mine\n"
    assert not (bare / "hooks" / "post-receive").exists()  # nothing half-installed
    assert eee("server", "uninstall", str(bare)).returncode == 0
    assert theirs.read_text() == "#!/bin/sh\necho mine\n"  # uninstall leaves it too
    forced = eee("server", "install", str(bare), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "eee server gate" in theirs.read_text()


# --- pushes accepted and refused ---------------------------------------------------------------


def test_a_valid_record_is_accepted_and_the_index_follows(server: tuple[Path, Path]) -> None:
    bare, clone = server
    _record(clone)
    head = commit_all(clone, "a record")
    proc = push(clone, "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert "eee server gate: refs/heads/main" in proc.stderr and "1 new commit checked" in proc.stderr
    assert git(bare, "rev-parse", "main").stdout.strip() == head
    # post-receive brought the audit's duplicates index to the new head
    import sqlite3

    db = sqlite3.connect(bare / "eee-duplicates-audit.sqlite")
    (tree,) = db.execute("SELECT v FROM meta WHERE k = 'tree'").fetchone()
    db.close()
    assert tree == git(bare, "rev-parse", "main:data").stdout.strip()


def test_post_receive_brings_the_index_to_the_default_branch_unless_it_is_there(server: tuple[Path, Path]) -> None:
    import sqlite3

    bare, clone = server
    _record(clone)
    head = commit_all(clone, "a record")
    assert push(clone, "origin", "main").returncode == 0
    marker = bare / "eee-server-indexed"
    assert marker.read_text().strip() == head  # pre-receive left the index at the new head

    def index_tree() -> str:
        db = sqlite3.connect(bare / "eee-duplicates-audit.sqlite")
        (tree,) = db.execute("SELECT v FROM meta WHERE k = 'tree'").fetchone()
        db.close()
        return tree

    data = git(bare, "rev-parse", "main:data").stdout.strip()
    assert index_tree() == data
    empty = git(bare, "hash-object", "-t", "tree", "/dev/null").stdout.strip()
    db = sqlite3.connect(bare / "eee-duplicates-audit.sqlite")
    db.execute("UPDATE meta SET v = ? WHERE k = 'tree'", (empty,))  # as if a sync had been cut short
    db.commit()
    db.close()
    hook = [str(bare / "hooks" / "post-receive")]
    env = {**os.environ, "GIT_DIR": "."}
    subprocess.run(hook, cwd=bare, input="", text=True, env=env, check=True)
    assert index_tree() == empty  # the marker says the index is at HEAD: no Python started
    marker.unlink()
    proc = subprocess.run(hook, cwd=bare, input="", text=True, env=env, capture_output=True)
    assert proc.returncode == 0 and proc.stderr == ""
    assert index_tree() == data and marker.read_text().strip() == head


def test_a_record_edited_after_acceptance_is_refused_and_no_ref_moves(server: tuple[Path, Path]) -> None:
    bare, clone = server
    path = _record(clone)
    commit_all(clone, "a record")
    assert push(clone, "origin", "main").returncode == 0
    before = refs(bare)
    path.write_bytes(path.read_bytes().replace(b"acme/widget-7b", b"acme/widget-8b", 1))
    edit = commit_all(clone, "fix the model id in place")
    err = _refused(push(clone, "origin", "main"))
    rel = path.relative_to(clone).as_posix()
    assert f"remote: {edit[:10]}:{rel}::$: [immutable] modifies an accepted record" in err
    assert "remote:     hint: " in err and "no ref was updated" in err
    assert refs(bare) == before
    # the refused objects stayed in git's quarantine, which is gone: the audit read them there
    assert git(bare, "cat-file", "-e", edit, check=False).returncode != 0


def test_an_invalid_record_is_refused(server: tuple[Path, Path]) -> None:
    bare, clone = server
    before = refs(bare)
    _record(clone, schema_version="9.9.9")
    bad = commit_all(clone, "an unknown schema version")
    err = _refused(push(clone, "origin", "main"))
    assert f"{bad[:10]}:data/" in err and "[version]" in err
    assert refs(bare) == before


def test_only_the_bad_middle_commit_of_a_push_is_named(server: tuple[Path, Path]) -> None:
    bare, clone = server
    before = refs(bare)
    _record(clone)
    first = commit_all(clone, "good one")
    _record(clone, B, "acme/other-1b", schema_version="9.9.9")
    middle = commit_all(clone, "bad one")
    _record(clone, C, "acme/third-3b")
    last = commit_all(clone, "good again")
    err = _refused(push(clone, "origin", "main"))
    assert "3 new commits checked, 1 error" in err
    assert f"{middle[:10]}:" in err
    assert f"{first[:10]}:" not in err and f"{last[:10]}:" not in err
    assert refs(bare) == before


def test_one_bad_ref_refuses_the_whole_push(server: tuple[Path, Path]) -> None:
    bare, clone = server
    before = refs(bare)
    _record(clone)
    commit_all(clone, "good on main")
    git(clone, "checkout", "-q", "-b", "topic")
    _record(clone, B, "acme/other-1b", schema_version="9.9.9")
    commit_all(clone, "bad on topic")
    err = _refused(push(clone, "origin", "main", "topic"))
    assert "refs/heads/main" in err and "refs/heads/topic" in err
    assert refs(bare) == before  # main's good commit did not go in either


def test_a_force_push_rewriting_main_and_deleting_main_are_refused(server: tuple[Path, Path]) -> None:
    bare, clone = server
    _record(clone)
    commit_all(clone, "a record")
    assert push(clone, "origin", "main").returncode == 0
    before = refs(bare)
    git(clone, "commit", "-q", "--amend", "--no-verify", "-m", "a record, reworded")
    err = _refused(push(clone, "--force", "origin", "main"))
    assert "refs/heads/main::$: [protected-ref] the push rewrites the protected branch main" in err
    assert refs(bare) == before
    err = _refused(push(clone, "origin", "--delete", "main"))
    assert "[protected-ref] deleting the protected branch main is refused" in err
    assert refs(bare) == before


def test_branches_new_and_unprotected(server: tuple[Path, Path]) -> None:
    bare, clone = server
    before = refs(bare)
    git(clone, "checkout", "-q", "-b", "topic")
    _record(clone, schema_version="9.9.9")
    bad = commit_all(clone, "bad on a new branch")
    err = _refused(push(clone, "origin", "topic"))
    assert f"{bad[:10]}:data/" in err and "refs/heads/topic (new at" in err
    assert refs(bare) == before
    git(clone, "reset", "-q", "--hard", "HEAD~1")
    _record(clone)
    good = commit_all(clone, "good on a new branch")
    assert push(clone, "origin", "topic").returncode == 0
    # an unprotected branch may be rewritten (its new commits are still audited) and deleted
    git(clone, "commit", "-q", "--amend", "--no-verify", "-m", "reworded")
    assert push(clone, "--force", "origin", "topic").returncode == 0
    assert git(bare, "rev-parse", "topic").stdout.strip() != good
    assert push(clone, "origin", "--delete", "topic").returncode == 0
    assert "refs/heads/topic" not in refs(bare)


def test_the_settings_of_the_pushed_commits_do_not_judge_their_own_push(server: tuple[Path, Path]) -> None:
    bare, clone = server
    _record(clone)
    commit_all(clone, "a record")
    assert push(clone, "origin", "main").returncode == 0
    before = refs(bare)
    # a rewrite of main whose new commits stop protecting it: judged by the settings before the push
    git(clone, "reset", "-q", "--hard", "HEAD~1")
    settings = clone / "governance" / "settings.yaml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("protected_branches: []\n")
    commit_all(clone, "unprotect main")
    err = _refused(push(clone, "--force", "origin", "main"))
    assert "[protected-ref] the push rewrites the protected branch main" in err
    assert refs(bare) == before
    # pushed on its own (a fast-forward), the change is accepted; the next push is judged by it
    git(clone, "reset", "-q", "--hard", "origin/main")
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("protected_branches: [release]\n")
    commit_all(clone, "protect release, not main")
    assert push(clone, "origin", "main").returncode == 0
    git(clone, "commit", "-q", "--amend", "--no-verify", "-m", "protect release, not main (reworded)")
    assert push(clone, "--force", "origin", "main").returncode == 0


def test_a_settings_file_that_cannot_be_read_protects_every_branch(server: tuple[Path, Path]) -> None:
    _, clone = server
    git(clone, "checkout", "-q", "-b", "topic")
    assert push(clone, "origin", "topic").returncode == 0
    git(clone, "checkout", "-q", "main")
    settings = clone / "governance" / "settings.yaml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("protected_branchez: [main]\n")
    commit_all(clone, "a misspelt setting")
    assert push(clone, "origin", "main").returncode == 0  # a fast-forward goes through
    err = _refused(push(clone, "origin", "--delete", "topic"))
    assert "deleting the protected branch topic" in err and "did you mean 'protected_branches'" in err
    settings.write_text("protected_branches: [main]\n")
    commit_all(clone, "the setting fixed")
    assert push(clone, "origin", "main").returncode == 0  # the fix goes through too
    assert push(clone, "origin", "--delete", "topic").returncode == 0


def test_warnings_are_shown_and_the_push_accepted(server: tuple[Path, Path]) -> None:
    bare, clone = server
    _record(clone)
    commit_all(clone, "a record")
    assert push(clone, "origin", "main").returncode == 0
    _record(clone, B)  # the same content under another uuid: a duplicate, found through the server's index
    copy = commit_all(clone, "the same record again")
    proc = push(clone, "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert f"{copy[:10]}:data/" in proc.stderr and "[duplicates] warning:" in proc.stderr
    assert ".venv/bin/eee mark-duplicate" in proc.stderr  # hints as the pusher's clone runs the tools
    assert git(bare, "rev-parse", "main").stdout.strip() == copy


# --- hostile pushes ---------------------------------------------------------------------------------


def test_an_odd_ref_name_is_shown_escaped(server: tuple[Path, Path]) -> None:
    bare, clone = server
    before = refs(bare)
    _record(clone, schema_version="9.9.9")
    commit_all(clone, "bad")
    err = _refused(push(clone, "origin", "HEAD:refs/heads/fix\u202eevil"))
    ours = "\n".join(line for line in err.splitlines() if line.startswith("remote: "))  # git's own lines are git's
    assert "refs/heads/fix\\u202eevil (new at" in ours and "\u202e" not in ours
    assert refs(bare) == before


def test_the_number_of_new_commits_is_bounded(server: tuple[Path, Path]) -> None:
    bare, clone = server
    git(bare, "config", "eee.maxCommits", "3")
    before = refs(bare)
    for n in range(4):
        (clone / f"note-{n}.txt").write_text(f"{n}\n")
        commit_all(clone, f"note {n}")
    err = _refused(push(clone, "origin", "main"))
    assert "[push] the push brings 4 new commits, more than the 3" in err
    assert refs(bare) == before
    assert push(clone, "origin", "HEAD~1:main").returncode == 0  # in parts
    assert push(clone, "origin", "main").returncode == 0


def test_the_output_is_bounded(server: tuple[Path, Path]) -> None:
    _bare, clone = server
    for n in range(260):
        _record(clone, f"{n:08x}-0000-4000-8000-000000000000", f"acme/m-{n}", schema_version="9.9.9")
    commit_all(clone, "many bad records")
    err = _refused(push(clone, "origin", "main"))
    lines = [line for line in err.splitlines() if line.startswith("remote: ")]
    assert len(lines) < 420
    assert "more finding(s) not shown" in err and "(260 errors)" in err


def test_an_oversized_record_is_refused_without_being_read(server: tuple[Path, Path]) -> None:
    """A pushed file can be of any size: the audit, its index and the ledger read none past
    their caps (a record is at most 16 MiB)."""
    bare, clone = server
    before = refs(bare)
    path = _record(clone)
    path.write_bytes(path.read_bytes()[:-2] + b', "padding": "' + b"x" * (17 * 1024 * 1024) + b'"}\n')
    big = commit_all(clone, "an oversized record")
    err = _refused(push(clone, "origin", "main"))
    assert f"{big[:10]}:data/" in err and "more than the 16 MiB" in err
    assert refs(bare) == before


def test_the_object_reader_passes_over_what_is_too_large(tmp_path: Path) -> None:
    from eee.git.cli import BatchReader

    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    ids = [
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=repo, input=data, capture_output=True, text=True, check=True
        ).stdout.strip()
        for data in ("x" * 5000, "small", "y" * 70000, "tiny")
    ]
    with BatchReader(repo) as reader:
        assert [d for _, d in reader.blobs(ids, limit=100)] == [None, b"small", None, b"tiny"]
        assert [d for _, d in reader.blobs(ids[1:2])] == [b"small"]  # the stream stayed in step


def test_a_tag_of_a_tree_is_refused(server: tuple[Path, Path]) -> None:
    _bare, clone = server
    tree = git(clone, "rev-parse", "HEAD^{tree}").stdout.strip()
    git(clone, "tag", "-a", "-m", "a tree", "t", tree)
    err = _refused(push(clone, "origin", "refs/tags/t"))
    assert "refs/tags/t::$: [push] the pushed" in err and "names no commit" in err
    git(clone, "tag", "-a", "-f", "-m", "a commit", "t", "HEAD")
    assert push(clone, "origin", "refs/tags/t").returncode == 0  # an annotated tag of a commit is fine


def test_a_replace_ref_is_refused(server: tuple[Path, Path]) -> None:
    bare, clone = server
    before = refs(bare)
    (clone / "note.txt").write_text("a note\n")
    other = commit_all(clone, "another commit")
    git(clone, "replace", "HEAD~1", other)
    err = _refused(push(clone, "origin", "refs/replace/*:refs/replace/*"))
    assert "[push] a replace ref is refused" in err
    assert refs(bare) == before


def test_commits_named_by_many_refs_are_audited_once(server: tuple[Path, Path]) -> None:
    bare, clone = server
    before = refs(bare)
    _record(clone, schema_version="9.9.9")
    bad = commit_all(clone, "bad")
    err = _refused(push(clone, "origin", *(f"HEAD:refs/heads/b{n}" for n in range(5))))
    assert err.count(f"{bad[:10]}:data/") == 1 and err.count("no new commits") == 4
    assert refs(bare) == before


def test_a_refused_push_leaves_the_index_on_objects_that_stay(server: tuple[Path, Path]) -> None:
    """The audit reads its duplicates index synced to the pushed commits; after a refusal
    those objects are gone, so the index is put back on the default branch's head (and an
    index left on a tree git no longer has is rebuilt, never diffed from)."""
    import sqlite3

    bare, clone = server
    _record(clone, schema_version="9.9.9")
    commit_all(clone, "bad")
    _refused(push(clone, "origin", "main"))
    db = sqlite3.connect(bare / "eee-duplicates-audit.sqlite")
    (tree,) = db.execute("SELECT v FROM meta WHERE k = 'tree'").fetchone()
    db.execute("UPDATE meta SET v = ? WHERE k = 'tree'", ("1" * 40,))  # as if left on a dropped tree
    db.commit()
    db.close()
    assert git(bare, "cat-file", "-e", tree, check=False).returncode == 0
    git(clone, "reset", "-q", "--hard", "origin/main")
    _record(clone)
    commit_all(clone, "good")
    _record(clone, B)
    copy = commit_all(clone, "its copy")
    proc = push(clone, "origin", "main")
    assert proc.returncode == 0 and f"{copy[:10]}:" in proc.stderr and "[duplicates]" in proc.stderr


# --- the hook's parts, in this process ------------------------------------------------------------


def test_every_commit_s_audit_is_told_the_push(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The one place a rule learns it runs at the server, and what judges it there: the
    push's basis (the old head), never the pushed commit itself."""
    from eee.git.cli import rev_list
    from eee.rules.push import Push, judged_at
    from eee.validation import audit as audit_module

    repo = make_store(tmp_path, hooks=False)
    base = git(repo, "rev-parse", "HEAD").stdout.strip()
    _record(repo)
    new = commit_all(repo, "a record")
    told: list[tuple[str, object]] = []
    real = audit_module.audit_commit

    def spy(commit: str, parent: str | None, *args: object, **kwargs: object) -> object:
        told.append((commit, args[-1]))  # push, the last positional argument
        return real(commit, parent, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(audit_module, "audit_commit", spy)
    push = Push("refs/heads/main", base, new, base, True)
    summary = audit_module.audit(None, new, repo, anchor=base, commits=rev_list(base, new, repo), push=push)
    assert summary.errors == 0 and told == [(new, push)]
    assert judged_at(new, push) == base and judged_at(base, None) == base


def test_git_s_input_is_read_strictly() -> None:
    from eee.hooks.server import BadInput, read_updates

    zero, sha = "0" * 40, "a" * 40
    assert read_updates(io.BytesIO(f"{zero} {sha} refs/heads/main\n".encode())) == [(zero, sha, "refs/heads/main")]
    for bad in (b"nonsense\n", f"{sha} {sha}\n".encode(), f"{sha} xyz refs/heads/x\n".encode(), b"x" * 5000):
        with pytest.raises(BadInput):
            read_updates(io.BytesIO(bad))


def test_a_check_that_stops_refuses_the_push(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eee.hooks import server

    bare = tmp_path / "store.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))

    def broken(*args: object) -> None:
        raise RuntimeError("a bug")

    from eee.reporting import shown
    from eee.rules.history import ANCHOR_ENV

    monkeypatch.setattr(server, "judge", broken)
    monkeypatch.setenv("GIT_DIR", str(bare))  # what the hook changes in its process, restored after the test
    monkeypatch.delenv(ANCHOR_ENV, raising=False)
    monkeypatch.setattr(shown, "_SHOWN_AS", None)
    err = io.StringIO()
    line = f"{'0' * 40} {'a' * 40} refs/heads/main\n".encode()
    assert server.pre_receive(bare, io.BytesIO(line), err) == 1
    assert "the check stopped (RuntimeError: a bug)" in err.getvalue()


def test_one_push_is_checked_at_a_time(tmp_path: Path) -> None:
    from eee.hooks import server

    with server._locked(tmp_path) as first:
        assert first
        with server._locked(tmp_path, wait=0) as second:
            assert not second


def test_git_processes_inherit_the_quarantine(monkeypatch: pytest.MonkeyPatch) -> None:
    from eee.git.cli import environment

    quarantine = {
        "GIT_QUARANTINE_PATH": "/srv/store.git/objects/tmp_objdir-incoming-x",
        "GIT_OBJECT_DIRECTORY": "/srv/store.git/objects/tmp_objdir-incoming-x",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": "/srv/store.git/objects",
    }
    for key, value in quarantine.items():
        monkeypatch.setenv(key, value)
    env = environment({"GIT_INDEX_FILE": "/tmp/i"})
    assert all(env[k] == v for k, v in quarantine.items())
