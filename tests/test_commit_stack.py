"""One way to write and commit (issue 22 item 3), confined inputs of recovery (issue 24
item 5) and tools that see the index (issue 25 item 3): real git, the installed hooks."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXED_UUID, PROJECT, commit, git, hook_env, make_store, place_record, record_of
from eee.commands.governance import run
from eee.commands.status import main as status
from eee.store.fsutil import Unconfined, confined, replace_folder
from eee.write.commit import JOURNAL, WRITABLE, recover

PACKAGE = PROJECT / "tools" / "eee"
A = FIXED_UUID
B = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"
C = "2a1b0c9d-8e7f-4a6b-9c5d-4e3f2a1b0c9d"


# --- one module builds git command lines; one module replaces files -------------------------


_SPAWN = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}
_OS_SPAWN = {"system", "popen", "execv", "execvp", "execvpe", "execl", "execlp", "spawnv", "spawnvp", "posix_spawn"}


def _first_word(node: ast.expr) -> str | None:
    """The program a command-line expression starts with, when it is written out."""
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        first = node.elts[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split(" ", 1)[0]
    return None


def violations(source: str, module: str) -> list[str]:
    """Where ``source`` (the module ``module``) builds a git command line, calls a process
    runner with one, replaces a file itself, or builds a ``git commit`` command."""
    out = []
    for node in ast.walk(ast.parse(source)):
        where = f"{module}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.List | ast.Tuple) and _first_word(node) == "git":
            out.append(f"{where}: a git command line")
        if isinstance(node, ast.List | ast.Tuple) and _first_word(node) == "commit":
            out.append(f"{where}: a git commit command")
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            runner = (owner == "subprocess" and name in _SPAWN) or (owner == "os" and name in _OS_SPAWN)
            if runner and node.args and _first_word(node.args[0]) == "git":
                out.append(f"{where}: git run by {owner}.{name}")
            if name in ("git", "run") and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and first.value == "commit":
                    out.append(f"{where}: a git commit command")
            if name == "commit" and owner == "cli":
                out.append(f"{where}: cli.commit")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "os" and node.attr in ("replace", "rename", "renames"):
                out.append(f"{where}: os.{node.attr}")
            if node.value.id == "shutil" and node.attr == "move":
                out.append(f"{where}: shutil.move")
        if isinstance(node, ast.ImportFrom) and node.module in ("os", "shutil"):
            for alias in node.names:
                if alias.name in ("replace", "rename", "renames", "move", "system"):
                    out.append(f"{where}: from {node.module} import {alias.name}")
    return out


ALLOWED = {
    "git/cli.py": {
        "a git command line",
        "git run by subprocess.run",
        "git run by subprocess.Popen",
        "a git commit command",
    },
    "store/fsutil.py": {"os.replace"},
    "write/commit.py": {"cli.commit"},  # the one caller of the one commit command
}


def test_git_command_lines_and_replacements_are_built_in_one_module_each() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for v in violations(path.read_text(encoding="utf-8"), module):
            if v.split(": ", 1)[1] not in ALLOWED.get(module, set()):
                found.append(v)
    assert found == []
    cli = (PACKAGE / "git" / "cli.py").read_text(encoding="utf-8")
    assert [v for v in violations(cli, "git/cli.py") if v.endswith("a git commit command")] != []  # it is there


@pytest.mark.parametrize(
    "snippet",
    [
        'subprocess.run(["git", "status"], cwd=root)',
        'cmd = ("git", "log")',
        'os.system("git gc")',
        "os.replace(a, b)",
        "from os import replace",
        "shutil.move(a, b)",
        'git("commit", "-m", "x", cwd=root)',
        "cli.commit(['x'], cwd=root)",
    ],
)
def test_the_walk_sees_each_way_of_doing_it(snippet: str) -> None:
    assert violations(snippet, "elsewhere.py")


def test_importing_the_git_module_leaves_the_environment_alone() -> None:
    code = (
        "import os; before = dict(os.environ)\n"
        "import eee.git.cli, eee.store.tree, eee.store.staged, eee.validation.flagged, eee.write.commit\n"
        "assert dict(os.environ) == before, set(os.environ) ^ set(before)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "GIT_NO_REPLACE_OBJECTS"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr


def test_flags_are_read_as_committed_whatever_a_replace_ref_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flags reader passes GIT_NO_REPLACE_OBJECTS to git itself: a replace ref that
    shows another event blob changes nothing, with the variable absent from this process."""
    from eee.governance.events import dumps, make_event, write
    from eee.validation.flagged import flags_in

    monkeypatch.delenv("GIT_NO_REPLACE_OBJECTS", raising=False)
    repo = make_store(tmp_path, hooks=False)
    who = {"name": "T", "email": "t@example.org"}
    event = make_event("flag", A, "checked", who, rule="score", path="$.evaluation_results[0].score_details.score")
    rel = write(repo, event).relative_to(repo).as_posix()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a flag")
    fake = dict(event, path="$.evaluation_results[9].score_details.score")
    proc = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=repo, input=dumps(fake), capture_output=True, text=True
    )
    fake_blob = proc.stdout.strip()
    real_blob = git(repo, "rev-parse", f"HEAD:{rel}").stdout.strip()
    git(repo, "replace", real_blob, fake_blob)
    assert "[9]" in git(repo, "show", f"HEAD:{rel}").stdout  # plain git is fooled
    assert {(f.rule, f.path) for f in flags_in([A], "HEAD", cwd=repo)[A]} == {
        ("score", "$.evaluation_results[0].score_details.score")
    }


# --- fsutil ---------------------------------------------------------------------------------


def test_confined_refuses_every_way_out(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "data" / "b").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "data" / "link").symlink_to(outside)
    (root / "data" / "b" / "file.json").symlink_to(outside / "x")
    assert confined(root, "data/b/d/m/new.json", WRITABLE) == root / "data/b/d/m/new.json"
    for bad, why in [
        ("../outside/x", "'..'"),
        ("data/../../outside/x", "'..'"),
        ("/etc/passwd", "absolute"),
        ("data//x", "empty component"),
        ("data\\x", "backslash"),
        ("README.md", "is not below"),
        (".git/config", "'.git'"),
        ("data/.git/config", ".git"),
        ("data/link/x", "symbolic link"),
        ("data/b/file.json", "symbolic link"),
        ("data/a\x01b", "control character"),
        ("data/a\udcffb", "not valid UTF-8"),
        ("data/\u202ex", "RIGHT-TO-LEFT OVERRIDE"),
        (["data/x"], "is not a path"),
    ]:
        with pytest.raises(Unconfined, match=why):
            confined(root, bad, WRITABLE)


def test_replace_folder_swaps_whole_folders(tmp_path: Path) -> None:
    target, new = tmp_path / "site", tmp_path / ".site.tmp"
    (target / "old").mkdir(parents=True)
    (new / "fresh").mkdir(parents=True)
    replace_folder(new, target)
    assert [p.name for p in target.iterdir()] == ["fresh"] and not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # the old one is gone
    with pytest.raises(FileNotFoundError):
        replace_folder(tmp_path / "missing", target)
    assert [p.name for p in target.iterdir()] == ["fresh"]  # put back when the move in fails


# --- the journal is confined ----------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_store(tmp_path)
    place_record(repo, record_of("meta-llama/Llama-2-7b-hf"), record_uuid=A)
    git(repo, "add", "-A")
    assert commit(repo, "a record").returncode == 0
    monkeypatch.chdir(repo)
    monkeypatch.setenv("EEE_PYTHON", sys.executable)
    return repo


def _journal(repo: Path, *lines: object, stage: bool = True) -> Path:
    path = repo / ".git" / JOURNAL
    body = [json.dumps({"journal": 1, "stage": stage})] + [json.dumps(line) for line in lines]
    path.write_text("\n".join(body) + "\n", encoding="utf-8")
    return path


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_crafted_journal_deletes_nothing_outside_the_store(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "victim.json").write_bytes(b"precious\n")
    (store / "data" / "escape").symlink_to(tmp_path / "elsewhere")
    readme = (store / "README.md").read_bytes()
    record = next((store / "data").rglob(f"{A}.json"))
    mine = record.read_bytes()
    sha = _sha(b"precious\n")
    for name in [
        str(victim),  # absolute
        "../victim.txt",
        "data/../../victim.txt",
        "data/escape/victim.json",  # through a symbolic link
        "README.md",  # inside the store, but no writer writes it
        ".git/config",
    ]:
        # a well-formed line naming the store's own record comes first: nothing is half applied
        journal = _journal(
            store,
            {"file": record.relative_to(store).as_posix(), "sha256": _sha(mine), "restore": None},
            {"file": name, "sha256": sha, "restore": None},
        )
        capsys.readouterr()
        assert status([A]) == 1
        err = capsys.readouterr().err
        assert f"{journal}:3" in err and "the tools never write" in err, err
        assert "nothing of it was applied" in err and f"rm {journal}" in err
        assert journal.exists()  # left as it is, for a person to look at
        assert victim.read_bytes() == b"precious\n"
        assert (tmp_path / "elsewhere" / "victim.json").read_bytes() == b"precious\n"
        assert (store / "README.md").read_bytes() == readme
        assert record.read_bytes() == mine
    for bad in ["not json", json.dumps({"file": "data/x.json"}), json.dumps({"folder": "/tmp"}), "[1, 2]"]:
        journal.write_text(json.dumps({"journal": 1, "stage": True}) + "\n" + bad + "\n", encoding="utf-8")
        assert status([A]) == 1
        assert f"{journal}:2" in capsys.readouterr().err
    journal.unlink()
    assert status([A]) == 0  # once removed, the tools work again


def test_a_journal_undoes_only_what_still_holds_what_it_wrote(store: Path) -> None:
    folder = store / "data" / "bench" / "acme" / "m"
    folder.mkdir(parents=True)
    ours, theirs = folder / f"{B}.json", folder / f"{C}.json"
    ours.write_bytes(b"{}\n")
    theirs.write_bytes(b"edited since\n")
    git(store, "add", "-A")
    journal = _journal(
        store,
        {"folder": "data/bench"},
        {"file": ours.relative_to(store).as_posix(), "sha256": _sha(b"{}\n"), "restore": None},
        {"file": theirs.relative_to(store).as_posix(), "sha256": _sha(b"{}\n"), "restore": None},
    )
    with journal.open("a", encoding="utf-8") as torn:  # an append a kill interrupted: no line break
        torn.write(json.dumps({"file": "data/bench/x.json", "sha256": _sha(b"x"), "restore": None})[:20])
    done = recover(store)
    assert f"undone: {ours.relative_to(store).as_posix()} removed" in done
    assert any("was changed since it was written" in line for line in done)
    assert not ours.exists() and theirs.read_bytes() == b"edited since\n"
    staged = git(store, "diff", "--cached", "--name-only").stdout.split()
    assert staged == [theirs.relative_to(store).as_posix()]  # ours unstaged, theirs kept
    assert not (store / ".git" / JOURNAL).exists()


# --- killed runs are finished or undone -----------------------------------------------------


def _hang_in(repo: Path, hook: str) -> Path:
    marker = repo.parent / f"{hook}-started"
    path = repo / ".git" / "hooks" / hook
    original = path.with_name(hook + ".orig")
    if path.exists():
        path.rename(original)
    path.write_text(
        f"#!/bin/sh\ntouch {marker}\nsleep 60\n" + (f'exec "{original}" "$@"\n' if original.exists() else "")
    )
    path.chmod(0o755)
    return marker


def _killed(argv: list[str], repo: Path, marker: Path) -> None:
    proc = subprocess.Popen(
        argv, cwd=repo, env=hook_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the hook never started"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _snapshot(tmp_path: Path) -> Path:
    from eee.store.paths import canonical_record_path
    from eee.store.strictjson import canonical

    source = tmp_path / "snapshot"
    for uuid, model in ((B, "acme/one-7b"), (C, "acme/two-7b")):
        path = source / canonical_record_path("wikitext-2", model, uuid)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(canonical(record_of(model)))
    return source


def test_an_import_killed_before_its_commit_is_undone_by_the_next_tool(store: Path, tmp_path: Path) -> None:
    source = _snapshot(tmp_path)
    head = git(store, "rev-parse", "HEAD").stdout
    marker = _hang_in(store, "pre-commit")
    _killed([sys.executable, "-m", "eee", "import", str(source), "--commit", "--no-progress"], store, marker)
    assert (store / ".git" / JOURNAL).exists()
    assert git(store, "status", "--porcelain").stdout != ""  # the dead run's files, staged
    proc = subprocess.run(
        [sys.executable, str(PROJECT / "tools" / "status"), A], cwd=store, env=hook_env(), capture_output=True
    )
    assert proc.returncode == 0, proc.stderr
    assert git(store, "rev-parse", "HEAD").stdout == head
    assert git(store, "status", "--porcelain", "--untracked-files=all").stdout == ""
    assert not list((store / "data").rglob(f"{B}.json")) and not (store / ".git" / JOURNAL).exists()
    assert not (store / "data" / "wikitext-2" / "acme").exists()  # the folders it made are gone too


def test_an_import_killed_after_its_commit_is_finished(store: Path, tmp_path: Path) -> None:
    source = _snapshot(tmp_path)
    marker = _hang_in(store, "post-commit")
    _killed([sys.executable, "-m", "eee", "import", str(source), "--commit", "--no-progress"], store, marker)
    assert "Import wikitext-2: 2 records" in git(store, "log", "-1", "--format=%s").stdout
    assert status([B]) == 0
    assert not (store / ".git" / JOURNAL).exists()
    assert list((store / "data").rglob(f"{B}.json"))  # committed: kept
    assert git(store, "status", "--porcelain").stdout == ""


# --- tools see the index --------------------------------------------------------------------


def _show(repo: Path) -> list[str]:
    return sorted(git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split())


def test_flag_commits_a_staged_record_with_its_event_and_nothing_else(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = place_record(store, record_of("acme/staged-7b"), record_uuid=B).relative_to(store).as_posix()
    git(store, "add", new)
    (store / "notes.txt").write_text("work in progress\n")
    git(store, "add", "notes.txt")
    path = "$.evaluation_results[0].score_details.score"
    # 2: written, with a warning (the record breaks no rule, so the flag accepts nothing)
    assert run("flag", [B, "--rule", "score", "--json-path", path, "--reason", "checked", "--commit"]) == 2, (
        capsys.readouterr().err
    )
    changed = _show(store)
    assert changed[0] == new and len(changed) == 2 and changed[1].startswith("governance/events/")
    assert git(store, "status", "--porcelain").stdout == "A  notes.txt\n"


@pytest.mark.parametrize("in_dvc", [True, False], ids=["in-dvc", "in-git"])
def test_resolve_commits_a_staged_replacement_with_its_sidecar_or_pointer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], in_dvc: bool
) -> None:
    from conftest import place_with_sidecar
    from eee.write.samples import add

    repo = make_store(tmp_path, with_dvc=True, sidecar_git_max_bytes=0 if in_dvc else None)
    place_record(repo, record_of("meta-llama/Llama-2-7b-hf"), record_uuid=A)
    git(repo, "add", "-A")
    assert commit(repo, "a record").returncode == 0
    monkeypatch.chdir(repo)
    monkeypatch.setenv("EEE_PYTHON", sys.executable)
    assert run("dispute", [A, "--reason", "the split", "--reference", "https://example.org/1", "--commit"]) == 0
    rows = (PROJECT / "tests" / "examples" / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()
    record, sidecar = place_with_sidecar(repo, rows, record_uuid=B)
    add(sidecar, root=repo)  # DVC: the pointer and the .gitignore beside it, staged; git: the sidecar
    git(repo, "add", record.relative_to(repo).as_posix())
    (repo / "notes.txt").write_text("unrelated\n")
    git(repo, "add", "notes.txt")
    capsys.readouterr()
    code = run("resolve", [A, "--outcome", "corrected", "--replacement", B, "--reason", "fixed split", "--commit"])
    assert code == 0, capsys.readouterr().err
    rel = record.relative_to(repo).as_posix()
    folder = rel.rpartition("/")[0]
    changed = _show(repo)
    placed = [f"{folder}/.gitignore", f"{folder}/{B}_samples.jsonl.dvc"] if in_dvc else [f"{folder}/{B}_samples.jsonl"]
    assert [p for p in changed if not p.startswith("governance/events/")] == sorted([rel, *placed])
    assert len(changed) == 3 + len(placed)  # with the resolution and the supersession
    assert git(repo, "status", "--porcelain").stdout == "A  notes.txt\n"


def test_commit_refuses_a_record_that_is_neither_committed_nor_staged(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = place_record(store, record_of("acme/untracked-7b"), record_uuid=B).relative_to(store).as_posix()
    head = git(store, "rev-parse", "HEAD").stdout
    assert run("retract", [B, "--reason", "wrong", "--commit"]) == 1
    err = capsys.readouterr().err
    assert f"{new}" in err and "neither committed nor staged" in err and f"git add {new}" in err
    assert git(store, "rev-parse", "HEAD").stdout == head
    assert not list(store.glob("governance/events/*.yaml"))
    status = git(store, "status", "--porcelain", "--untracked-files=all").stdout
    assert status == f"?? {new}\n"  # nothing staged, nothing else written


def test_a_commit_the_hooks_refuse_leaves_the_index_as_it_was(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = record_of("acme/bad-7b")
    bad["evaluation_results"][0]["score_details"]["score"] = "high"  # not a number: the schema refuses
    new = place_record(store, bad, record_uuid=B).relative_to(store).as_posix()
    git(store, "add", new)
    before = git(store, "ls-files", "-s", "--debug").stdout
    head = git(store, "rev-parse", "HEAD").stdout
    assert run("retract", [B, "--reason", "wrong", "--commit"]) == 1
    assert "the commit was refused" in capsys.readouterr().err
    assert git(store, "rev-parse", "HEAD").stdout == head
    assert git(store, "status", "--porcelain").stdout == f"A  {new}\n"  # still staged, nothing else
    assert git(store, "ls-files", "-s", "--debug").stdout == before  # every entry as it was
    assert not list(store.glob("governance/events/*.yaml"))
