"""No per-sample data is ever lost (issue 25.1, 25.5's pre-push part, 24.5's DVC-pointer check).

Sidecars up to the store's ``sidecar_git_max_bytes`` (read from the parent commit by the
checks, from HEAD by the tools) are committed to git and checked in full by the gate and the
audit; larger ones stay in DVC. Replacing an accepted pointer by its file is one audited
transition (``sidecar-to-git``). A pointer's object is its own record's sidecar
(``pointer-object``), and one that cannot be checked is refused unless a maintainer accepts
it (``pointer-unverified``). The pre-push hook refuses to publish a pointer whose object is
not on the store's DVC remote. Real git, real hooks, real DVC, real pushes into bare
repositories."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (
    EXAMPLES,
    FIXED_UUID,
    PROJECT,
    commit,
    git,
    hook_env,
    install_hooks,
    make_store,
    place_with_sidecar,
    reference,
)

pytestmark = pytest.mark.slow

ROWS = (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()  # 2,722 bytes
OTHER_ROWS = ROWS.replace(b'"q1"', b'"q2"')
B = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"


def eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def out(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


def rel(path: Path, repo: Path) -> str:
    return path.relative_to(repo).as_posix()


def threshold(repo: Path, limit: int) -> None:
    """A maintainer sets the store's sidecar_git_max_bytes (a commit of its own)."""
    (repo / "governance").mkdir(exist_ok=True)
    (repo / "governance" / "settings.yaml").write_text(f"sidecar_git_max_bytes: {limit}\n")
    git(repo, "add", "governance/settings.yaml")
    assert commit(repo, f"sidecars up to {limit} bytes in git").returncode == 0


def push(repo: Path) -> subprocess.CompletedProcess[str]:
    return git(repo, "push", "origin", "main", check=False, env=hook_env())


def clone_of(tmp: Path, limit: int | None = None, runner: str = "gate") -> tuple[Path, Path]:
    """A contributor's clone of a store on a bare remote, its hooks installed (DVC's remote:
    the folder ``tmp/remote`` its config names)."""
    origin = make_store(tmp, hooks=False, with_dvc=True, name="origin", sidecar_git_max_bytes=limit)
    bare = tmp / "store.git"
    git(tmp, "clone", "-q", "--bare", str(origin), str(bare))
    work = tmp / "clone"
    git(tmp, "clone", "-q", str(bare), str(work))
    for key, value in (("user.name", "C"), ("user.email", "c@example.org"), ("commit.gpgsign", "false")):
        git(work, "config", key, value)
    install_hooks(work, runner)
    return work, bare


def cache_object(repo: Path, data: bytes) -> Path:
    md5 = hashlib.md5(data).hexdigest()
    return repo / ".dvc" / "cache" / "files" / "md5" / md5[:2] / md5[2:]


def pointer_of(sidecar: Path) -> Path:
    return sidecar.with_name(sidecar.name + ".dvc")


# --- item 1: placed by the threshold, checked in full ---------------------------------------


def test_samples_add_keeps_a_sidecar_up_to_the_threshold_in_git_and_a_larger_one_in_dvc(tmp_path: Path) -> None:
    repo = make_store(tmp_path, with_dvc=True, sidecar_git_max_bytes=len(ROWS))
    record, small = place_with_sidecar(repo, ROWS)
    big_rows = ROWS + ROWS.replace(b'"q1"', b'"q4"').replace(b'"q2"', b'"q5"').replace(b'"q3"', b'"q6"')
    other, big = place_with_sidecar(repo, big_rows, record_uuid=B)
    said = ok(eee(repo, "samples", "add", rel(small, repo), rel(big, repo))).stdout
    assert f"added {rel(small, repo)}: kept in git (up to sidecar_git_max_bytes), staged" in said
    assert f"added {rel(big, repo)} to DVC (above sidecar_git_max_bytes); staged its pointer" in said
    assert f"samples push {rel(big, repo)}`" in said and f"samples push {rel(small, repo)}" not in said
    staged = set(git(repo, "diff", "--cached", "--name-only").stdout.split())
    assert rel(small, repo) in staged and rel(pointer_of(big), repo) in staged and rel(big, repo) not in staged
    assert not pointer_of(small).exists()
    assert (big.parent / ".gitignore").read_text().splitlines() == [f"/{big.name}"]  # only the one DVC keeps
    git(repo, "add", rel(record, repo), rel(other, repo))
    assert commit(repo, "one sidecar in git, one in DVC").returncode == 0
    assert git(repo, "show", f"HEAD:{rel(small, repo)}").stdout.encode() == ROWS


def test_the_gate_and_the_audit_check_a_sidecar_in_git_in_full(tmp_path: Path) -> None:
    repo = make_store(tmp_path)
    rows = ROWS.replace(b'"score": 1.0', b'"score": "high"', 1)
    assert rows != ROWS
    record, sidecar = place_with_sidecar(repo, rows)
    git(repo, "add", "-A")
    proc = commit(repo, "a sidecar with a bad row")
    assert proc.returncode == 1
    assert f"{rel(sidecar, repo)}:" in out(proc) and "[schema]" in out(proc)
    git(repo, "commit", "-q", "--no-verify", "-m", "a bad row, without the hooks")
    proc = eee(repo, "audit", "--format", "json")
    assert proc.returncode == 1
    found = json.loads(proc.stdout)["findings"]
    assert any(f["file"].endswith(rel(sidecar, repo)) and f["check"] == "schema" for f in found)
    # a row count the record does not declare, in git, is as much an error
    doc = json.loads(record.read_text())
    assert doc["detailed_evaluation_results"]["total_rows"] == 3


def test_the_audit_judges_the_threshold_by_the_parent_commit(tmp_path: Path) -> None:
    repo = make_store(tmp_path, hooks=False, sidecar_git_max_bytes=1000)
    _record, sidecar = place_with_sidecar(repo, ROWS)  # 2,722 bytes
    (repo / "governance" / "settings.yaml").write_text("sidecar_git_max_bytes: 1048576\n")  # raised with it
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "the threshold raised in the commit that uses it")
    proc = eee(repo, "audit", "--format", "json")
    assert proc.returncode == 1
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["check"] == "samples" and finding["file"].endswith(rel(sidecar, repo))
    assert "a sidecar of 2.7 KiB (2,722 bytes) is committed to git" in finding["message"]
    assert "(sidecar_git_max_bytes: 1000)" in finding["message"]
    # the next commit is judged by the raised threshold
    _, _second = place_with_sidecar(repo, OTHER_ROWS, record_uuid=B)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "a sidecar under the raised threshold")
    later = json.loads(eee(repo, "audit", "--from", "HEAD~1", "--format", "json").stdout)["findings"]
    assert [f["check"] for f in later] == ["duplicates"]  # the same aggregate twice: a warning, no [samples]


def test_a_committed_sidecar_in_git_is_immutable(tmp_path: Path) -> None:
    repo = make_store(tmp_path)
    _record, sidecar = place_with_sidecar(repo, ROWS)
    git(repo, "add", "-A")
    assert commit(repo, "a record with its sidecar in git").returncode == 0
    sidecar.write_bytes(OTHER_ROWS)
    git(repo, "add", "-A")
    proc = commit(repo, "edit the sidecar")
    assert proc.returncode == 1 and "[immutable] modifies an accepted sidecar" in out(proc)
    git(repo, "commit", "-q", "--no-verify", "-m", "edited without the hooks")
    git(repo, "rm", "-q", rel(sidecar, repo))
    git(repo, "commit", "-q", "--no-verify", "-m", "deleted without the hooks")
    found = json.loads(eee(repo, "audit", "--format", "json").stdout)["findings"]
    messages = {f["message"] for f in found if f["check"] == "immutable"}
    assert {"modifies an accepted sidecar", "deletes an accepted sidecar"} <= messages


# --- item 2: a pointer replaced by its file, one audited transition ---------------------------


def _pointer_committed(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A store whose record's sidecar was committed to DVC (threshold 0 then), the threshold
    since raised to the default: (store, record, sidecar)."""
    repo = make_store(tmp_path, with_dvc=True, sidecar_git_max_bytes=0)
    record, sidecar = place_with_sidecar(repo, ROWS)
    ok(eee(repo, "samples", "add", rel(sidecar, repo)))
    git(repo, "add", rel(record, repo))
    assert commit(repo, "a record, its sidecar in DVC").returncode == 0
    threshold(repo, 1024 * 1024)
    return repo, record, sidecar


def test_a_pointer_replaced_by_its_own_file_is_allowed_and_audited_in_a_fresh_clone(tmp_path: Path) -> None:
    repo, _record, sidecar = _pointer_committed(tmp_path)
    said = ok(eee(repo, "samples", "add", rel(sidecar, repo))).stdout
    assert "replaced its DVC pointer by the file, in git" in said
    folder = rel(sidecar.parent, repo)
    status = git(repo, "status", "--porcelain").stdout.splitlines()
    assert sorted(status) == sorted(
        [f"D  {folder}/.gitignore", f"A  {rel(sidecar, repo)}", f"D  {rel(pointer_of(sidecar), repo)}"]
    )
    proc = commit(repo, "the sidecar replaces its pointer")
    assert proc.returncode == 0, out(proc)
    # a fresh clone holds no DVC cache and the remote never had the object: the pointer added in
    # history is checked against the sidecar in git at the head
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(repo), str(fresh))
    assert not (fresh / ".dvc" / "cache").exists()
    assert ok(eee(fresh, "audit")).stdout.strip().endswith("0 errors, 0 warnings")
    assert ok(eee(fresh, "audit", "--remote-objects")).returncode == 0  # the copy in git serves in its place
    assert ok(eee(fresh, "samples", "pull")).stdout.startswith("pulled 0 sidecar(s)")


def test_a_pointer_replaced_by_another_file_is_refused_by_the_gate_and_the_audit(tmp_path: Path) -> None:
    repo, _record, sidecar = _pointer_committed(tmp_path)
    git(repo, "rm", "-q", "--cached", rel(pointer_of(sidecar), repo))
    pointer_of(sidecar).unlink()
    (sidecar.parent / ".gitignore").unlink()
    sidecar.write_bytes(OTHER_ROWS)
    git(repo, "add", "-A")
    proc = commit(repo, "another file in place of the pointer")
    assert proc.returncode == 1
    assert f"{rel(sidecar, repo)}::$: [sidecar-to-git] replaces its DVC pointer by a file that is not the one" in out(
        proc
    )
    assert f"its md5 is {hashlib.md5(OTHER_ROWS).hexdigest()}, the pointer's {hashlib.md5(ROWS).hexdigest()}" in out(
        proc
    )
    git(repo, "commit", "-q", "--no-verify", "-m", "without the hooks")
    found = json.loads(eee(repo, "audit", "--format", "json").stdout)["findings"]
    assert {f["check"] for f in found} >= {"sidecar-to-git", "sidecar"}
    assert not any(f["check"] == "immutable" for f in found)  # the finding names the transition that failed
    # deleting the pointer without its file stays a change of an accepted pointer
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    git(repo, "rm", "-q", rel(pointer_of(sidecar), repo))
    proc = commit(repo, "the pointer alone deleted")
    assert proc.returncode == 1 and "[immutable] deletes an accepted sidecar pointer" in out(proc)


def test_a_merge_keeps_a_replacement_made_on_a_branch(tmp_path: Path) -> None:
    repo, _record, sidecar = _pointer_committed(tmp_path)
    git(repo, "checkout", "-q", "-b", "restore")
    ok(eee(repo, "samples", "add", rel(sidecar, repo)))
    assert commit(repo, "the sidecar replaces its pointer").returncode == 0
    git(repo, "checkout", "-q", "main")
    (repo / "notes.md").write_text("on main meanwhile\n")
    git(repo, "add", "notes.md")
    assert commit(repo, "meanwhile").returncode == 0
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "restore", env=hook_env())
    assert ok(eee(repo, "audit")).returncode == 0


# --- item 3: the pre-push hook ----------------------------------------------------------------


@pytest.mark.parametrize("runner", ["gate", "prek"])
def test_a_push_with_an_unpushed_dvc_object_is_refused_until_samples_push(tmp_path: Path, runner: str) -> None:
    work, bare = clone_of(tmp_path, limit=0, runner=runner)
    assert (work / ".git" / "hooks" / "pre-push").is_file()
    record, sidecar = place_with_sidecar(work, ROWS)
    ok(eee(work, "samples", "add", rel(sidecar, work)))
    git(work, "add", rel(record, work))
    assert commit(work, "a record, its sidecar in DVC's cache only").returncode == 0
    before = git(bare, "rev-parse", "main").stdout
    proc = push(work)
    assert proc.returncode != 0
    md5 = hashlib.md5(ROWS).hexdigest()
    assert f"[pointer-unverified] the object (md5 {md5}) of its DVC pointer is not on DVC remote 'local'" in out(proc)
    assert f"samples push {rel(sidecar, work)}`" in out(proc)
    assert git(bare, "rev-parse", "main").stdout == before  # the remote as it was
    assert "pushed 1 sidecar(s)" in ok(eee(work, "samples", "push")).stdout
    proc = push(work)
    assert proc.returncode == 0, out(proc)
    assert git(bare, "rev-parse", "main").stdout == git(work, "rev-parse", "HEAD").stdout


def test_a_sidecar_above_the_threshold_round_trips_through_both_remotes(tmp_path: Path) -> None:
    work, bare = clone_of(tmp_path, limit=1000)
    record, sidecar = place_with_sidecar(work, ROWS)
    said = ok(eee(work, "samples", "add", rel(sidecar, work))).stdout
    assert "to DVC (above sidecar_git_max_bytes)" in said
    git(work, "add", rel(record, work))
    assert commit(work, "a record, its sidecar in DVC").returncode == 0
    ok(eee(work, "samples", "push"))
    assert push(work).returncode == 0
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(bare), str(fresh))
    assert not (fresh / rel(sidecar, work)).exists()
    assert "pulled 1 sidecar(s); 0 already there; 0 failed" in ok(eee(fresh, "samples", "pull")).stdout
    assert (fresh / rel(sidecar, work)).read_bytes() == ROWS
    assert ok(eee(fresh, "validate", "data")).returncode == 0
    assert ok(eee(fresh, "audit", "--remote-objects")).returncode == 0


def test_the_pre_push_hook_refuses_a_change_of_what_is_published(tmp_path: Path) -> None:
    work, bare = clone_of(tmp_path)
    record, sidecar = place_with_sidecar(work, ROWS)
    ok(eee(work, "samples", "add", rel(sidecar, work)))
    git(work, "add", rel(record, work))
    assert commit(work, "a record, its sidecar in git").returncode == 0
    assert push(work).returncode == 0
    sidecar.write_bytes(OTHER_ROWS)
    git(work, "commit", "-q", "-a", "--no-verify", "-m", "a published sidecar edited, without the hooks")
    before = git(bare, "rev-parse", "main").stdout
    proc = push(work)
    assert proc.returncode != 0
    assert "[immutable] modifies an accepted sidecar" in out(proc)
    assert "eee-push: the push was refused; nothing was published" in out(proc)
    assert git(bare, "rev-parse", "main").stdout == before


def test_the_server_gate_checks_the_remote_from_a_bare_repository(tmp_path: Path) -> None:
    """What the server gate runs in its pre-receive hook: the audit of the pushed commits,
    in the bare repository, with --remote-objects and the server's own DVC folder (the
    remote's URL and credentials); the function is eee.validation.audit.audit."""
    from eee.validation.audit import audit

    repo = make_store(tmp_path, with_dvc=True, sidecar_git_max_bytes=0)
    record, sidecar = place_with_sidecar(repo, ROWS)
    ok(eee(repo, "samples", "add", rel(sidecar, repo)))
    git(repo, "add", rel(record, repo))
    assert commit(repo, "a record, its sidecar in DVC's cache only").returncode == 0
    bare = tmp_path / "server.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    server = tmp_path / "server-dvc"
    server.mkdir()
    (server / "config").write_text(
        f"[core]\n    remote = store\n['remote \"store\"']\n    url = {tmp_path / 'remote'}\n"
    )

    def errors(**kw: object) -> list[str]:
        summary = audit("HEAD~1", "main", bare, remote_objects=True, **kw)  # type: ignore[arg-type]
        return [f"[{f.check}] {f.message}" for r in summary.results for f in r.findings]

    (found,) = errors(dvc_dir=server)
    assert (
        found.startswith("[pointer-unverified] the object of its DVC pointer") and "not in DVC remote 'store'" in found
    )
    (found,) = errors()  # a bare repository's DVC config is named, never guessed
    assert "no DVC configuration here (a bare repository: name its folder, --dvc-dir)" in found
    ok(eee(repo, "samples", "push"))
    assert errors(dvc_dir=server) == []


# --- item 4: a pointer's object is its own sidecar's ------------------------------------------


def _forged_pointer(repo: Path) -> tuple[Path, Path]:
    """Record A with its sidecar committed to DVC; record B staged with a pointer that names
    A's object (B's own sidecar is not in the work tree): (B's record, B's pointer)."""
    record, sidecar = place_with_sidecar(repo, ROWS)
    ok(eee(repo, "samples", "add", rel(sidecar, repo)))
    git(repo, "add", rel(record, repo))
    assert commit(repo, "record A in DVC").returncode == 0
    other, mine = place_with_sidecar(repo, OTHER_ROWS, record_uuid=B)
    pointer = pointer_of(mine)
    pointer.write_text(pointer_of(sidecar).read_text().replace(sidecar.name, mine.name))
    mine.unlink()
    git(repo, "add", rel(other, repo), rel(pointer, repo))
    return other, pointer


def test_a_pointer_naming_another_records_object_is_refused(tmp_path: Path) -> None:
    work, _bare = clone_of(tmp_path, limit=0)
    _other, pointer = _forged_pointer(work)
    proc = commit(work, "record B, its pointer naming A's object")
    assert proc.returncode == 1
    theirs, declared = hashlib.sha256(ROWS).hexdigest(), hashlib.sha256(OTHER_ROWS).hexdigest()
    assert (
        f"{rel(pointer, work)}::$.outs[0].md5: [pointer-object] the pointer names an object that is not its record's "
        f"sidecar: the object (in DVC's cache) has the sha256 {theirs}, the record declares {declared}"
    ) in out(proc)
    git(work, "commit", "-q", "--no-verify", "-m", "without the hooks")
    found = [
        f for f in json.loads(eee(work, "audit", "--format", "json").stdout)["findings"] if f["severity"] == "error"
    ]
    assert [f["check"] for f in found] == ["pointer-object"]  # this clone's cache holds the object
    ok(eee(work, "samples", "push", "data"))
    git(work, "push", "-q", "--no-verify", "origin", "main")
    # a fresh clone has no cache: the plain audit judges by what is there (nothing), the remote check finds it
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(_bare), str(fresh))
    plain = eee(fresh, "audit", "--format", "json")  # the records repeat each other: a warning, no error
    assert plain.returncode == 2 and {f["check"] for f in json.loads(plain.stdout)["findings"]} == {"duplicates"}
    proc = eee(fresh, "audit", "--remote-objects", "--format", "json")
    assert proc.returncode == 1
    found = [f for f in json.loads(proc.stdout)["findings"] if f["severity"] == "error"]
    assert [f["check"] for f in found] == ["pointer-object"] and "(in DVC remote 'local')" in found[0]["message"]


def test_a_pointer_whose_md5_is_not_an_object_name_is_refused_before_any_lookup(tmp_path: Path) -> None:
    repo = make_store(tmp_path, with_dvc=True, sidecar_git_max_bytes=0)
    record, sidecar = place_with_sidecar(repo, ROWS)
    pointer = pointer_of(sidecar)
    pointer.write_text(f"outs:\n- md5: ../../../../etc/passwd\n  size: 10\n  hash: md5\n  path: {sidecar.name}\n")
    sidecar.unlink()
    git(repo, "add", rel(record, repo), rel(pointer, repo))
    proc = commit(repo, "a crafted pointer")
    assert proc.returncode == 1
    assert (
        f"{rel(pointer, repo)}::$.outs[0].md5: [sidecar] the pointer's md5 '../../../../etc/passwd' is not 32"
        in out(proc)
    )
    assert "[pointer-" not in out(proc)  # no object is looked up under such a name


def test_the_gate_checks_a_pointer_against_the_cache_when_the_work_tree_has_no_copy(tmp_path: Path) -> None:
    repo = make_store(tmp_path, with_dvc=True, sidecar_git_max_bytes=0)
    record, sidecar = place_with_sidecar(repo, ROWS)
    ok(eee(repo, "samples", "add", rel(sidecar, repo)))
    sidecar.unlink()  # DVC's cache still holds it
    git(repo, "add", rel(record, repo))
    proc = commit(repo, "a record and its pointer")
    assert proc.returncode == 0, out(proc)


def test_a_pointer_whose_object_is_nowhere_is_refused_unless_a_maintainer_accepts_it(tmp_path: Path) -> None:
    repo = make_store(tmp_path, with_dvc=True, sidecar_git_max_bytes=0)
    record, sidecar = place_with_sidecar(repo, ROWS)
    ok(eee(repo, "samples", "add", rel(sidecar, repo)))
    sidecar.unlink()
    obj = cache_object(repo, ROWS)
    obj.chmod(0o644)
    obj.unlink()  # lost: neither the work tree, the cache nor the remote holds it
    git(repo, "add", rel(record, repo))
    proc = commit(repo, "a record whose sidecar is lost")
    assert proc.returncode == 1
    md5 = hashlib.md5(ROWS).hexdigest()
    assert (
        f"{rel(record, repo)}::$.detailed_evaluation_results: [pointer-unverified] the object of its DVC pointer "
        f"{pointer_of(sidecar).name} (md5 {md5}) could not be checked: not in the work tree; not in DVC's cache; "
        "not in DVC remote 'local'"
    ) in out(proc)
    assert "flag 8e6f3a4e-4b7a-4d3e-9c1a-2b3c4d5e6f70 --rule pointer-unverified --json-path" in out(proc)
    # a maintainer accepts it unverified: the flag commits the staged record and pointer with it
    flagged = eee(
        repo,
        "flag",
        FIXED_UUID,
        "--rule",
        "pointer-unverified",
        "--json-path",
        "$.detailed_evaluation_results",
        "--reason",
        "the sidecar was lost before it was pushed",
        "--commit",
    )
    assert flagged.returncode == 0, out(flagged)
    assert git(repo, "status", "--porcelain").stdout == ""
    shown = ok(eee(repo, "status", FIXED_UUID)).stdout
    assert "flag         pointer-unverified at $.detailed_evaluation_results" in shown
    assert ok(eee(repo, "audit", "--remote-objects")).returncode == 0  # accepted, and nothing else


# --- the store's own sidecars ------------------------------------------------------------------


def _tracked(pattern: str) -> list[str]:
    return git(PROJECT, "ls-files", "-z", "--", pattern).stdout.split("\0")[:-1]


def test_the_stores_sidecars_are_in_git_and_match_their_records() -> None:
    sidecars = _tracked("data/**/*_samples.jsonl")
    assert len(sidecars) >= 8 and not _tracked("data/**/*_samples.jsonl.dvc")
    for side in sidecars:
        doc = json.loads((PROJECT / side.replace("_samples.jsonl", ".json")).read_text())
        der = doc["detailed_evaluation_results"]
        blob = git(PROJECT, "cat-file", "blob", f"HEAD:{side}").stdout.encode()
        assert der["file_path"] == side and hashlib.sha256(blob).hexdigest() == der["checksum"], side
        assert blob.count(b"\n") == der["total_rows"], side


def test_the_stores_restored_sidecars_are_what_the_reference_logs_convert_to(tmp_path: Path) -> None:
    """The 8 sidecars restored in git are regenerated from the harness logs the records came
    from: converting them again gives the same bytes (each record's sha256 and its old
    pointer's md5 said so when the pointers were replaced); and so are the 18 AlpacaEval
    sidecars, from the judgments they were converted from."""
    from eee.commands import convert

    logs = reference("harness-logs")
    conv = tmp_path / "conv"
    conv.mkdir()
    git(conv, "init", "-q")
    # the store's own threshold (8 MiB: governance/settings.yaml), so the AlpacaEval sidecars stay files here too
    (conv / "governance").mkdir()
    shutil.copyfile(PROJECT / "governance" / "settings.yaml", conv / "governance" / "settings.yaml")
    git(conv, "add", "-A")
    git(conv, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "settings")
    jobs = [("inspect", p) for p in sorted((logs / "inspect").glob("*.json"))]
    jobs += [("helm", p) for p in sorted((logs / "helm").iterdir())]
    jobs += [("lm_eval", p) for p in sorted((logs / "lm_eval").glob("results_*.json"))]
    jobs += [("alpaca_eval", reference("per-item", "alpaca_eval", "results"))]  # 18 runs, one folder
    for harness, path in jobs:
        args = [harness, str(path), "--include-samples", "--store", str(conv), "--no-stage"]
        assert convert.main([*args, "--source-organization", "EvalEval Coalition"]) in (0, 2)
    rebuilt = {hashlib.sha256(p.read_bytes()).hexdigest() for p in conv.rglob("*_samples.jsonl")}
    restored = [s for s in _tracked("data/**/*_samples.jsonl") if s.startswith("data/")]
    wanted = {hashlib.sha256((PROJECT / s).read_bytes()).hexdigest() for s in restored}
    assert len(wanted) >= 8 and wanted <= rebuilt


# --- the main job says where a sidecar it could not fetch is ---------------------------------------


def test_the_pipeline_names_each_sidecar_it_could_not_fetch(tmp_path: Path) -> None:
    from eee.commands.pipeline import pull

    repo = make_store(tmp_path, hooks=False, with_dvc=True, sidecar_git_max_bytes=0)
    _record, sidecar = place_with_sidecar(repo, ROWS)
    ok(eee(repo, "samples", "add", rel(sidecar, repo)))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a record in DVC, never pushed")
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(repo), str(fresh))
    (lines, *_) = [pull(fresh)]
    assert lines[0].startswith(f"not fetched: {rel(sidecar, repo)}: not on remote 'local' (push it from a clone")
    shutil.rmtree(fresh)
