"""Issue 30's acceptance: authority that cannot be routed around. Real ``ssh-keygen`` keys,
git's own SSH signing, real ``git push --no-verify`` into a bare repository where ``eee
server install`` put the gate. The four attacks of the issue are refused and no ref of the
server moves; a maintainer's signed merge of a contributor's branch goes in; an orphan root
merged in stays refused; a contributor's change of a protected path is refused; the tools
act as git's committer and refuse before writing anything. Every commit here is made with
``--no-verify``: what is judged is judged by the server (and by ``eee audit`` in a clone,
with the old head as the anchor, which must say the same)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    FIXED_UUID,
    PROJECT,
    git,
    hook_env,
    install_hooks,
    load_example,
    make_store,
    place_record,
    place_with_sidecar,
    record_of,
)
from roles_store import (
    BOB,
    COLE,
    MIA,
    OTHER,
    RECORD,
    THIRD,
    accepted,
    as_,
    eee,
    event,
    finding,
    keygen,
    push,
    refs,
    refused,
    roles_store,
    serve,
    served,
    sneak,
    write_roles,
)

pytestmark = pytest.mark.slow

FOURTH = "4d4e4f40-5a5b-4c5d-8e8f-9a9b0c0d1e1f"
DAN = ("Dan Contributor", "dan@example.org")


@pytest.fixture
def server(tmp_path: Path) -> dict[str, Any]:
    return served(tmp_path)


def head(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", rev).stdout.strip()


def audit_errors(clone: Path, old: str, new: str) -> list[str]:
    """``eee audit`` in the clone over what the push brings, the old head its anchor: the errors."""
    from eee.validation.audit import audit

    summary = audit(old, new, clone, anchor=old)
    return [f"[{f.check}] {f.file}: {f.message}" for r in summary.results for f in r.findings if f.severity == "error"]


def rule(remote: str, check: str) -> list[str]:
    return [line for line in remote.splitlines() if f"[{check}]" in line]


# --- the four attacks ---------------------------------------------------------------------------


def test_an_unsigned_merge_whose_first_parent_predates_the_roles_is_refused(server: dict[str, Any]) -> None:
    """Attack 1: its tree is main without the roles, plus a retraction; it reaches main's head
    only through its second parent (a fast-forward, for git)."""
    bare, clone = server["bare"], server["clone"]
    old = head(clone)
    before = refs(bare)
    git(clone, "checkout", "-q", "-b", "attack", server["before"])
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "-s", "ours", "main")
    assert not (clone / "governance" / "allowed_signers").exists()
    event(clone, "retract", COLE)
    bad = sneak(clone, "merge main, keep the old tree, retract", COLE)
    assert git(clone, "merge-base", "--is-ancestor", old, bad, check=False).returncode == 0  # a fast-forward
    remote = refused(push(clone, "origin", "HEAD:main"), bare, before)
    (line,) = rule(remote, "protected-ref")
    assert "the old head must stay on main's first-parent chain" in line
    assert any("[history]" in e and "first-parent chain" in e for e in audit_errors(clone, old, bad))


def test_a_removed_maintainers_merge_onto_a_commit_where_they_still_were_is_refused(
    server: dict[str, Any], tmp_path: Path
) -> None:
    """Attack 2: Bob signs a merge whose first parent is a commit where he was a maintainer
    (main, where he was removed, its second parent), with a retraction of his own."""
    bare, clone, mia = server["bare"], server["clone"], server["mia"]
    bob = keygen(tmp_path, "bob")
    cole = (server["cole"], "contributor")
    write_roles(clone, {MIA[1]: (mia, "maintainer"), COLE[1]: cole, BOB[1]: (bob, "maintainer")})
    appointed = sneak(clone, "Roles: Bob is a maintainer", MIA, mia)
    write_roles(clone, {MIA[1]: (mia, "maintainer"), COLE[1]: cole})
    removed = sneak(clone, "Roles: Bob leaves", MIA, mia)
    accepted(push(clone, "origin", "main"), bare, removed)
    before = refs(bare)
    git(clone, "checkout", "-q", "-b", "bob", appointed)
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "main")
    event(clone, "retract", BOB)
    bad = sneak(clone, "Bob merges main and retracts", BOB, bob)
    remote = refused(push(clone, "origin", "HEAD:main"), bare, before)
    assert "the old head must stay on main's first-parent chain" in rule(remote, "protected-ref")[0]
    assert audit_errors(clone, removed, bad)
    # the same retraction made the right way round (main's head the first parent) is judged by main's roles
    git(clone, "checkout", "-q", "main")
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "bob")
    merge = sneak(clone, "Bob merges his branch into main", BOB, bob)
    remote = refused(push(clone, "origin", "main"), bare, before)
    lines = rule(remote, "authority")
    assert lines and all(f"the roles of {removed[:10]} do not know" in line for line in lines), remote
    assert any(line.startswith(f"remote: {bad[:10]}:") and f"by the merge {merge[:10]}" in line for line in lines)


def test_a_record_re_added_on_a_side_branch_made_the_first_parent_gives_no_right_to_supersede(
    server: dict[str, Any],
) -> None:
    """Attack 3: Cole re-adds Mia's record byte for byte on a side branch, merges main into it
    (his branch the first parent), then supersedes "his" record."""
    bare, clone, mia, cole = server["bare"], server["clone"], server["mia"], server["cole"]
    doc = record_of("acme/widget-7b")
    path = place_record(clone, doc, record_uuid=OTHER)
    added = sneak(clone, "Mia's record", MIA, mia)
    accepted(push(clone, "origin", "main"), bare, added)
    before = refs(bare)
    data = path.read_bytes()
    git(clone, "checkout", "-q", "-b", "cole", server["genesis"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    sneak(clone, "my record", COLE, cole)
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "main")
    sneak(clone, "merge main", COLE, cole)
    doc["evaluation_results"][0]["score_details"]["score"] = 1.5
    place_record(clone, doc, record_uuid=THIRD)
    sup = event(clone, "supersede", COLE, record=OTHER, replacement=THIRD)
    bad = sneak(clone, "supersede my record", COLE, cole)
    remote = refused(push(clone, "origin", "HEAD:main"), bare, before)
    assert "the old head must stay on main's first-parent chain" in rule(remote, "protected-ref")[0]
    assert audit_errors(clone, added, bad)
    # made the right way round (main the first parent), the record's adding commit is Mia's
    git(clone, "checkout", "-q", "main")
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "cole")
    merge = sneak(clone, "merge Cole's branch", MIA, mia)
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, bad, sup, "authority")
    assert "or the signer of the commit that added the record" in line and f"by the merge {merge[:10]}" in line


def _dvc_server(tmp: Path, url: str | None = None) -> dict[str, Any]:
    """A store whose sidecars go to DVC (threshold 0), served with the gate told the DVC folder
    that names its remote (``url``: another URL for it)."""
    origin = make_store(tmp, hooks=False, with_dvc=True, name="origin", sidecar_git_max_bytes=0)
    folder = tmp / "server-dvc"
    folder.mkdir()
    (folder / "config").write_text(
        f"[core]\n    remote = store\n['remote \"store\"']\n    url = {url or tmp / 'remote'}\n"
    )
    bare, clone = serve(origin, tmp, "store.git", "--dvc-dir", str(folder))
    for key, value in (("user.name", "C"), ("user.email", "c@example.org")):
        git(clone, "config", key, value)
    return {"bare": bare, "clone": clone}


def _pointer_commit(clone: Path, rows: bytes, record_uuid: str = FIXED_UUID) -> tuple[str, str]:
    record, sidecar = place_with_sidecar(clone, rows, record_uuid)
    proc = eee("samples", "add", str(sidecar.relative_to(clone)), cwd=clone, env=hook_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    git(clone, "add", "-A")
    return sneak(clone, "a record, its sidecar in DVC", COLE), record.relative_to(clone).as_posix()


ROWS = (PROJECT / "tests" / "examples" / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()


def test_a_pointer_whose_object_was_never_pushed_is_refused_by_the_server(tmp_path: Path) -> None:
    """Attack 4: the server gate asks the store's DVC remote, as the pre-push hook does."""
    s = _dvc_server(tmp_path)
    bare, clone = s["bare"], s["clone"]
    assert git(bare, "config", "eee.dvcDir").stdout.strip() == str((tmp_path / "server-dvc").resolve())
    before = refs(bare)
    commit, record = _pointer_commit(clone, ROWS)
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, hint = finding(remote, commit, record, "pointer-unverified")
    md5 = hashlib.md5(ROWS).hexdigest()
    assert f"(md5 {md5}) could not be checked: not in DVC remote 'store'" in line
    assert "dvc_remote in governance/settings.yaml" in line and "samples push" in hint
    proc = eee("samples", "push", cwd=clone, env=hook_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    accepted(push(clone, "origin", "main"), bare, commit)


def test_a_pointer_naming_another_records_object_is_refused_by_the_server(tmp_path: Path) -> None:
    s = _dvc_server(tmp_path)
    bare, clone = s["bare"], s["clone"]
    first, _ = _pointer_commit(clone, ROWS)
    assert eee("samples", "push", cwd=clone, env=hook_env()).returncode == 0
    accepted(push(clone, "origin", "main"), bare, first)
    before = refs(bare)
    other = ROWS.replace(b'"q1"', b'"q2"')
    _record, sidecar = place_with_sidecar(clone, other, THIRD)
    pointer = sidecar.with_name(sidecar.name + ".dvc")
    (first_pointer,) = [p for p in clone.rglob("*.jsonl.dvc") if FIXED_UUID in p.name]
    pointer.write_bytes(first_pointer.read_bytes().replace(FIXED_UUID.encode(), THIRD.encode()))
    sidecar.unlink()
    git(clone, "add", "-A")
    bad = sneak(clone, "a pointer naming the first record's object", COLE)
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, bad, pointer.relative_to(clone).as_posix(), "pointer-object")
    assert "names an object that is not its record's sidecar" in line


@pytest.mark.parametrize("how", ["unreachable", "not named"])
def test_a_remote_the_server_cannot_ask_refuses_the_push_naming_the_remote_and_the_setting(
    tmp_path: Path, how: str
) -> None:
    s = _dvc_server(tmp_path, url="http://127.0.0.1:9/store" if how == "unreachable" else None)
    bare, clone = s["bare"], s["clone"]
    if how == "not named":
        git(bare, "config", "--unset", "eee.dvcDir")
    before = refs(bare)
    commit, record = _pointer_commit(clone, ROWS)
    assert eee("samples", "push", cwd=clone, env=hook_env()).returncode == 0  # on the store's own remote
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, commit, record, "pointer-unverified")
    assert "the store's remote:" in line and "dvc_remote in governance/settings.yaml" in line
    if how == "unreachable":
        assert "DVC remote 'store'" in line and "could not be" in line
    else:
        assert "`git config eee.dvcDir DIR` in the bare repository" in line


# --- what goes in, what stays out ---------------------------------------------------------------


def test_a_maintainers_signed_merge_of_a_contributors_branch_of_records_is_accepted(server: dict[str, Any]) -> None:
    bare, clone, mia, cole = server["bare"], server["clone"], server["mia"], server["cole"]
    git(clone, "checkout", "-q", "-b", "cole")
    place_record(clone, record_of("acme/widget-7b"), record_uuid=OTHER)
    sneak(clone, "Cole's first record", COLE, cole)
    place_record(clone, record_of("acme/widget-13b"), record_uuid=THIRD)
    sneak(clone, "Cole's second record, unsigned", COLE)
    git(clone, "checkout", "-q", "main")
    (clone / "notes.md").write_text("meanwhile on main\n")
    sneak(clone, "meanwhile", MIA, mia)
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "cole")
    merge = sneak(clone, "Merge Cole's records", MIA, mia)
    proc = push(clone, "origin", "main")
    accepted(proc, bare, merge)
    assert "4 new commits checked" in proc.stderr
    # the branch pushed first on its own, then merged: the merge judges what it brings all the same
    git(clone, "checkout", "-q", "-b", "cole2")
    place_record(clone, record_of("acme/widget-70b"), record_uuid=FOURTH)
    sneak(clone, "Cole's third record", COLE, cole)
    assert push(clone, "origin", "cole2").returncode == 0
    git(clone, "checkout", "-q", "main")
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "cole2")
    second = sneak(clone, "Merge Cole's third record", MIA, mia)
    proc = push(clone, "origin", "main")
    accepted(proc, bare, second)
    assert "1 new commit checked" in proc.stderr


def test_an_orphan_root_merged_in_stays_refused(server: dict[str, Any]) -> None:
    """Cole's orphan history holds roles that make him a maintainer and a retraction: refused on
    a branch of its own, and still refused when a maintainer's signed merge brings it in."""
    bare, clone, mia, cole = server["bare"], server["clone"], server["mia"], server["cole"]
    before = refs(bare)
    git(clone, "checkout", "-q", "--orphan", "orphan")
    write_roles(clone, {COLE[1]: (cole, "maintainer")})
    path = event(clone, "retract", COLE)
    root = sneak(clone, "a history of my own", COLE, cole)
    remote = refused(push(clone, "origin", "orphan"), bare, before)
    assert rule(remote, "genesis") or rule(remote, "authority")
    git(clone, "checkout", "-q", "main")
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "--allow-unrelated-histories", "-s", "ours", "orphan")
    merge = sneak(clone, "merge the orphan", MIA, mia)
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, root, path, "authority")
    assert f"by the merge {merge[:10]}" in line and f"{COLE[1]}, who holds the contributor role" in line
    finding(remote, root, "governance/allowed_signers", "authority")
    assert audit_errors(clone, head(clone, "origin/main"), merge)


@pytest.mark.parametrize("path", ["mkdocs.yml", "tools/hook", "pyproject.toml", ".pre-commit-config.yaml"])
def test_a_contributors_change_of_a_protected_path_is_refused_at_the_server(server: dict[str, Any], path: str) -> None:
    bare, clone = server["bare"], server["clone"]
    before = refs(bare)
    target = clone / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text((target.read_text() if target.exists() else "") + "\n# hooks: [../evil.py]\n")
    for signed in (False, True):
        bad = sneak(clone, f"change {path}", COLE, server["cole"] if signed else None)
        remote = refused(push(clone, "origin", "main"), bare, before)
        line, _ = finding(remote, bad, path, "authority")
        assert "change a protected path" in line and "needs the maintainer role" in line
        git(clone, "reset", "-q", "--soft", "HEAD~1")
    accepted(push(clone, "origin", "main"), bare, head(clone))  # nothing changed: fine
    sneak(clone, f"a maintainer changes {path}", MIA, server["mia"])
    accepted(push(clone, "origin", "main"), bare, head(clone))


def test_a_merge_that_reverts_the_roles_through_an_old_side_merge_is_the_merges_act(
    server: dict[str, Any], tmp_path: Path
) -> None:
    """The roles of an old commit brought back through a side merge that inherits them from its
    first parent: no commit of the side changes them as its own content, so the mainline merge
    that lands them is that change itself, judged against every parent."""
    bare, clone, mia = server["bare"], server["clone"], server["mia"]
    bob = keygen(tmp_path, "bob")
    cole = (server["cole"], "contributor")
    write_roles(clone, {MIA[1]: (mia, "maintainer"), COLE[1]: cole, BOB[1]: (bob, "maintainer")})
    with_bob = sneak(clone, "Roles: Bob is a maintainer", MIA, mia)
    write_roles(clone, {MIA[1]: (mia, "maintainer"), COLE[1]: cole})
    removed = sneak(clone, "Roles: Bob leaves", MIA, mia)
    accepted(push(clone, "origin", "main"), bare, removed)
    before = refs(bare)
    git(clone, "checkout", "-q", "-b", "side", with_bob)
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "-s", "ours", "main")
    sneak(clone, "side: main merged, the old roles kept", BOB, bob)
    git(clone, "checkout", "-q", "main")
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "-X", "theirs", "side")
    assert BOB[1] in (clone / "governance" / "allowed_signers").read_text()
    merge = sneak(clone, "merge side", BOB, bob)
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, merge, "governance/allowed_signers", "authority")
    assert "the merge brings this change onto the mainline" in line
    assert "change the roles" in line and f"the roles of {removed[:10]} do not know" in line


# --- who acts is who commits ----------------------------------------------------------------------


def test_with_the_committer_set_in_the_environment_a_supersession_s_own_hint_succeeds(tmp_path: Path) -> None:
    """In a store without roles: ``GIT_COMMITTER_NAME/EMAIL`` set (and an author of another
    name), ``eee supersede <uuid> <path> --benchmark B --reason R --commit`` writes the
    committer as the actor, and the gate and the audit accept it."""
    repo = make_store(tmp_path)
    place_record(repo, load_example("aggregate", "valid", RECORD))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a record", env=hook_env())
    doc = load_example("aggregate", "valid", RECORD)
    doc["evaluation_results"][0]["score_details"]["score"] = 8.5
    corrected = tmp_path / "corrected.json"
    corrected.write_text(json.dumps(doc))
    env = dict(
        hook_env(),
        GIT_COMMITTER_NAME="Carla Committer",
        GIT_COMMITTER_EMAIL="carla@example.org",
        GIT_AUTHOR_NAME="Arthur Author",
        GIT_AUTHOR_EMAIL="arthur@example.org",
    )
    argv = ["supersede", FIXED_UUID, str(corrected), "--benchmark", "B", "--reason", "R", "--commit"]
    proc = eee(*argv, "--store", str(repo), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (written,) = (repo / "governance" / "events").glob("*supersede*.yaml")
    from eee.governance.events import load_bytes

    assert load_bytes(written.read_bytes(), written.name)["actor"] == {
        "name": "Carla Committer",
        "email": "carla@example.org",
    }
    committed = git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>").stdout.strip()
    assert committed == "Arthur Author <arthur@example.org>|Carla Committer <carla@example.org>"
    proc = eee("audit", "--store", str(repo), env=hook_env())
    assert proc.returncode in (0, 2), proc.stdout + proc.stderr
    assert "[actor]" not in proc.stdout


def _configure(repo: Path, who: tuple[str, str], key: Path | None) -> None:
    """git's configuration of the store: who commits, and with which key it signs."""
    for option in as_(who, key)[1::2]:
        name, _, setting = option.partition("=")
        git(repo, "config", name, setting)


def _dirty(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all").stdout


def test_a_maintainer_whose_email_is_not_their_principal_is_told_before_anything_is_written(tmp_path: Path) -> None:
    store = roles_store(tmp_path)
    repo = store["repo"]
    _configure(repo, ("Mia Maintainer", "mia@home.example"), store["mia"])
    before = head(repo)
    proc = eee("retract", FIXED_UUID, "--reason", "wrong split", "--commit", "--store", str(repo))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "git commits as Mia Maintainer <mia@home.example>" in proc.stderr
    assert "your signing key signs as mia@example.org" in proc.stderr
    assert "`git config user.email mia@example.org`" in proc.stderr
    assert head(repo) == before and _dirty(repo) == ""
    env = dict(os.environ, GIT_COMMITTER_EMAIL="mia@home.example")  # the environment wins over the config
    git(repo, "config", "user.email", MIA[1])
    proc = eee("retract", FIXED_UUID, "--reason", "wrong split", "--commit", "--store", str(repo), env=env)
    assert proc.returncode == 1 and "unset GIT_COMMITTER_EMAIL" in proc.stderr
    assert head(repo) == before and _dirty(repo) == ""
    proc = eee("retract", FIXED_UUID, "--reason", "wrong split", "--commit", "--store", str(repo))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert eee("audit", "--store", str(repo), "--anchor", store["genesis"]).returncode == 0


def test_a_contributors_retract_writes_nothing_and_points_at_a_dispute(tmp_path: Path) -> None:
    store = roles_store(tmp_path)
    repo = store["repo"]
    _configure(repo, COLE, store["cole"])
    before = head(repo)
    for extra in ([], ["--commit"], ["--dry-run"]):
        proc = subprocess.run(
            [sys.executable, str(PROJECT / "tools" / "retract"), FIXED_UUID, "--reason", "mine", *extra],
            cwd=repo,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "maintainer role (retract)" in proc.stderr and f"{COLE[1]} (contributor)" in proc.stderr
        assert f"dispute {FIXED_UUID} --reason" in proc.stderr and "Traceback" not in proc.stderr
        assert head(repo) == before and _dirty(repo) == ""
        assert not (repo / ".git" / "eee-journal.jsonl").exists()
    # what the hint offers, he may take
    proc = eee(
        "dispute", FIXED_UUID, "--reason", "the split looks wrong", "--reference", "https://example.org/d/1",
        "--commit", "--store", str(repo),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_immutable_hint_offers_no_contributor_an_act_it_may_not_take(tmp_path: Path) -> None:
    from eee.rules.commit import _INSTEAD

    record = _INSTEAD["record"]
    assert "tools/dispute" in record
    for tool in ("tools/supersede", "tools/retract"):
        at = record.index(tool)
        assert "a maintainer" in record[max(0, at - 120) : at], record
    repo = make_store(tmp_path)
    path = place_record(repo, load_example("aggregate", "valid", RECORD))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a record", env=hook_env())
    path.write_bytes(path.read_bytes() + b" ")
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-m", "an edit", check=False, env=hook_env())
    assert proc.returncode == 1
    hint = next(line for line in (proc.stdout + proc.stderr).splitlines() if "records never change" in line)
    assert "a maintainer" in hint and "dispute" in hint


# --- issue 34, item 4: the mutations that survived ---------------------------------------------


def _identity_change(repo: Path) -> str:
    folder = repo / "governance" / "identity"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "developers.yaml").write_text(
        'kind: developer\nentries:\n  "acme":\n    aliases:\n      - name: "acme-labs"\n'
        "        why: the same developer\n"
    )
    return "governance/identity/developers.yaml"


def test_a_contributors_own_change_of_the_identity_registry_is_refused_at_the_gate_the_audit_and_the_server(
    server: dict[str, Any],
) -> None:
    bare, clone, cole = server["bare"], server["clone"], server["cole"]
    install_hooks(clone)
    path = _identity_change(clone)
    git(clone, "add", "-A")
    proc = git(clone, *as_(COLE, cole), "commit", "-S", "-m", "an alias of my own", check=False, env=hook_env())
    assert proc.returncode == 1
    said = proc.stdout + proc.stderr
    assert f"{path}::$: [authority]" in said and "maintainer role (identity)" in said, said
    bad = sneak(clone, "an alias of my own", COLE, cole)
    old = head(clone, "origin/main")
    errors = audit_errors(clone, old, bad)
    assert any(e.startswith(f"[authority] {bad[:10]}:{path}") and "change the identity registry" in e for e in errors)
    remote = refused(push(clone, "origin", "main"), bare, refs(bare))
    line, _ = finding(remote, bad, path, "authority")
    assert "change the identity registry" in line and f"{COLE[1]}, who holds the contributor role" in line


def test_a_supersession_by_a_contributor_who_did_not_sign_the_adding_commit_is_refused(
    server: dict[str, Any], tmp_path: Path
) -> None:
    """Records added by signed commits of others (a maintainer, another contributor): Cole's
    signature on his supersession does not make them his; his own record he may supersede."""
    bare, clone, mia, cole = server["bare"], server["clone"], server["mia"], server["cole"]
    dan = keygen(tmp_path, "dan")
    write_roles(clone, {MIA[1]: (mia, "maintainer"), COLE[1]: (cole, "contributor"), DAN[1]: (dan, "contributor")})
    sneak(clone, "Roles: Dan", MIA, mia)
    place_record(clone, record_of("acme/widget-7b"), record_uuid=OTHER)
    sneak(clone, "Mia's record", MIA, mia)
    place_record(clone, record_of("acme/widget-13b"), record_uuid=THIRD)
    sneak(clone, "Dan's record", DAN, dan)
    place_record(clone, record_of("acme/widget-70b"), record_uuid=FOURTH)
    mine = sneak(clone, "Cole's record", COLE, cole)
    accepted(push(clone, "origin", "main"), bare, mine)
    for record in (OTHER, THIRD):
        before = refs(bare)
        corrected = record_of("acme/widget-1b", score=8.5)
        replacement = "5e5f5a5b-6c6d-4e6f-8a8b-0c0d1e1f2a2b"
        place_record(clone, corrected, record_uuid=replacement)
        path = event(clone, "supersede", COLE, record=record, replacement=replacement)
        bad = sneak(clone, "Cole supersedes another's record", COLE, cole)
        errors = audit_errors(clone, mine, bad)
        assert any(e.startswith(f"[authority] {bad[:10]}:{path}") for e in errors), errors
        remote = refused(push(clone, "origin", "main"), bare, before)
        line, _ = finding(remote, bad, path, "authority")
        assert "or the signer of the commit that added the record" in line
        git(clone, "reset", "-q", "--hard", mine)
    corrected = record_of("acme/widget-1b", score=8.5)
    place_record(clone, corrected, record_uuid="5e5f5a5b-6c6d-4e6f-8a8b-0c0d1e1f2a2b")
    event(clone, "supersede", COLE, record=FOURTH, replacement="5e5f5a5b-6c6d-4e6f-8a8b-0c0d1e1f2a2b")
    fine = sneak(clone, "Cole supersedes his own record", COLE, cole)
    accepted(push(clone, "origin", "main"), bare, fine)
    # a record he adds and corrects on a branch of his own is his when a maintainer merges the branch
    git(clone, "checkout", "-q", "-b", "mine")
    place_record(clone, record_of("acme/widget-2b", score=3.0), record_uuid="6a6b6c6d-7e7f-4a8b-9c9d-0e0f1a1b2c2d")
    sneak(clone, "Cole's record on his branch", COLE, cole)
    place_record(clone, record_of("acme/widget-2b", score=4.0), record_uuid="7b7c7d7e-8f8a-4b9c-8d0e-1f2a3b4c5d6e")
    event(clone, "supersede", COLE, record="6a6b6c6d-7e7f-4a8b-9c9d-0e0f1a1b2c2d",
          replacement="7b7c7d7e-8f8a-4b9c-8d0e-1f2a3b4c5d6e")  # fmt: skip
    sneak(clone, "Cole corrects it", COLE, cole)
    git(clone, "checkout", "-q", "main")
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "mine")
    merged = sneak(clone, "merge Cole's branch", MIA, mia)
    accepted(push(clone, "origin", "main"), bare, merged)
