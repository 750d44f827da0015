"""Issue 23's acceptance at the server, with roles: real ``ssh-keygen`` keys, git's own SSH
signing, real ``git push`` into a bare repository with the server gate (``eee server
install``) in it, the hooks run by git itself. Who may say what is judged by the server, not
by the pusher's clone (every commit here is made with ``--no-verify``): the pusher sees the
refusal on ``remote:`` lines naming the commit, the file, the principal (or "no
signature"), the role it needed and the fix, and after every refusal no ref of the bare
repository has moved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import git, load_example, make_store, place_record, record_of
from roles_store import (
    BOB,
    COLE,
    MIA,
    OTHER,
    RECORD,
    ZED,
    accepted,
    as_,
    eee,
    event,
    finding,
    keygen,
    public,
    push,
    refs,
    refused,
    serve,
    served,
    sneak,
    write_roles,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path: Path) -> dict[str, Any]:
    return served(tmp_path)


def _flag_extra(clone: Path) -> dict[str, Any]:
    rel = git(clone, "ls-files", "data").stdout.split()[0]
    return {
        "rule": "score",
        "path": "$.evaluation_results[0].score_details.score",
        "record_path": rel,
        "sha256": "0" * 64,
    }


# --- a contributor -----------------------------------------------------------------------------


def test_a_contributors_signed_record_is_accepted(server: dict[str, Any]) -> None:
    bare, clone = server["bare"], server["clone"]
    place_record(clone, record_of("acme/widget-7b"), record_uuid=OTHER)
    head = sneak(clone, "Cole's record", COLE, server["cole"])
    proc = push(clone, "origin", "main")
    accepted(proc, bare, head)
    assert "1 new commit checked" in proc.stderr
    assert "-----BEGIN SSH SIGNATURE-----" in git(bare, "cat-file", "commit", head).stdout


def _cole_retract(clone: Path) -> str:
    return event(clone, "retract", COLE)


def _cole_flag(clone: Path) -> str:
    return event(clone, "flag", COLE, **_flag_extra(clone))


def _cole_roles(clone: Path, server: dict[str, Any]) -> str:
    write_roles(clone, {MIA[1]: (server["mia"], "maintainer"), COLE[1]: (server["cole"], "maintainer")})
    return "governance/roles.yaml"


def _manifest(clone: Path, actor: tuple[str, str], refused: int = 0) -> str:
    """A second import manifest, as ``eee import`` writes one, that names the record already in
    the store as imported by it (re-attributing it), with ``refused`` refused files beside."""
    import hashlib

    from eee.governance.manifests import dumps

    rel = git(clone, "ls-files", "data").stdout.split()[0]
    sha = hashlib.sha256((clone / rel).read_bytes()).hexdigest()
    files = [{"source": rel, "kind": "record", "outcome": "imported", "store": rel, "sha256": sha}]
    files += [
        {"source": f"data/x/{n:05d}.json", "kind": "other", "outcome": "refused", "sha256": sha, "reason": "not JSON"}
        for n in range(refused)
    ]
    counts = {"imported": 1, "relocated": 0, "flagged": 0, "already_present": 0, "refused": refused}
    import_id = "20260101T000000.000000Z-import-abcdef"
    doc = {
        "manifest_schema": "1.0.0",
        "id": import_id,
        "source": "/snapshots/official",
        "time": "2026-01-01T00:00:00.000000Z",
        "tool": "eee 0.1.0",
        "actor": {"name": actor[0], "email": actor[1]},
        "counts": {**counts, "total": 1 + refused},
        "files": files,
    }
    path = clone / "governance" / "imports" / f"{import_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(doc))
    return path.relative_to(clone).as_posix()


@pytest.mark.parametrize(
    "act, what",
    [
        ("retract", "retract a record"),
        ("flag", "flag"),
        ("manifest", "write an import manifest"),
        ("roles", "change the roles"),
    ],
)
def test_a_contributors_signed_maintainer_act_is_refused_naming_the_role(
    server: dict[str, Any], act: str, what: str
) -> None:
    bare, clone = server["bare"], server["clone"]
    before = refs(bare)
    path = {
        "retract": lambda: _cole_retract(clone),
        "flag": lambda: _cole_flag(clone),
        "manifest": lambda: _manifest(clone, COLE),
        "roles": lambda: _cole_roles(clone, server),
    }[act]()
    bad = sneak(clone, f"a contributor's {act}", COLE, server["cole"])
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, hint = finding(remote, bad, path, "authority")
    assert what in line and "needs the maintainer role" in line
    assert f"it is signed by {COLE[1]}, who holds the contributor role in the roles of {server['genesis'][:10]}" in line
    assert "a principal holding the maintainer role makes this change" in hint
    assert f"roles add {COLE[1]} --key KEY.pub --role maintainer --commit" in hint
    assert "1 new commit checked" in remote


def test_a_forged_actor_is_refused_naming_who_signed(server: dict[str, Any]) -> None:
    """A contributor's signed dispute (anyone may dispute) whose actor names the maintainer."""
    bare, clone = server["bare"], server["clone"]
    before = refs(bare)
    path = event(clone, "dispute", MIA, reference="https://example.org/d/1")
    bad = sneak(clone, "a dispute in the maintainer's name", COLE, server["cole"])
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, hint = finding(remote, bad, path, "actor")
    assert line.startswith(f"remote: {bad[:10]}:{path}::$.actor: [actor]")
    assert f"names {MIA[0]} <{MIA[1]}>" in line and f"signed by {COLE[1]}" in line
    assert "[authority]" not in remote  # disputing is anyone's: only the actor is wrong
    assert hint.strip() != "remote:     hint:"
    # the same dispute in his own name goes in
    git(clone, "reset", "-q", "--hard", "origin/main")
    event(clone, "dispute", COLE, reference="https://example.org/d/1")
    head = sneak(clone, "a dispute", COLE, server["cole"])
    accepted(push(clone, "origin", "main"), bare, head)


# --- a maintainer, and what is unsigned ---------------------------------------------------------


def test_a_maintainers_signed_retraction_is_accepted_and_cannot_be_rewritten(server: dict[str, Any]) -> None:
    bare, clone = server["bare"], server["clone"]
    event(clone, "retract", MIA)
    head = sneak(clone, "retract", MIA, server["mia"])
    accepted(push(clone, "origin", "main"), bare, head)
    before = refs(bare)
    # the maintainer herself cannot rewrite main: amended (still signed) and force-pushed
    git(clone, "-c", "gpg.format=ssh", "-c", f"user.signingkey={server['mia']}", "commit", "-q", "--amend",
        "--no-verify", "-S", "-m", "retract, reworded")  # fmt: skip
    remote = refused(push(clone, "--force", "origin", "main"), bare, before)
    assert "refs/heads/main::$: [protected-ref] the push rewrites the protected branch main" in remote
    remote = refused(push(clone, "origin", "--delete", "main"), bare, before)
    assert "[protected-ref] deleting the protected branch main is refused" in remote


def test_an_unsigned_retraction_is_refused_with_how_to_sign(server: dict[str, Any]) -> None:
    bare, clone = server["bare"], server["clone"]
    before = refs(bare)
    path = event(clone, "retract", MIA)
    bad = sneak(clone, "retract, unsigned", MIA)  # her name, no signature
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, hint = finding(remote, bad, path, "authority")
    assert "retract a record" in line and "needs the maintainer role: the commit has no signature" in line
    assert "git config gpg.format ssh" in hint and "git config user.signingkey" in hint and "git commit -S" in hint
    # signed again (and committed as her: who acts is who commits), it goes in
    git(clone, *as_(MIA, server["mia"]), "commit", "-q", "--amend", "--no-edit", "--no-verify", "-S")
    head = git(clone, "rev-parse", "HEAD").stdout.strip()
    accepted(push(clone, "origin", "main"), bare, head)


def test_a_key_not_in_the_maintainers_file_counts_as_no_signature(server: dict[str, Any], tmp_path: Path) -> None:
    bare, clone = server["bare"], server["clone"]
    zed = keygen(tmp_path, "zed")
    before = refs(bare)
    path = event(clone, "retract", ZED)
    bad = sneak(clone, "a stranger retracts, signed", ZED, zed)
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, bad, path, "authority")
    assert "needs the maintainer role: it is signed by a key (SHA256:" in line
    assert "do not know, which counts as no signature" in line
    # a record signed by that key is a contributor's unsigned record: accepted
    git(clone, "reset", "-q", "--hard", "origin/main")
    place_record(clone, record_of("acme/widget-7b"), record_uuid=OTHER)
    head = sneak(clone, "a stranger's record, signed", ZED, zed)
    accepted(push(clone, "origin", "main"), bare, head)


# --- edge cases -----------------------------------------------------------------------------------


def test_a_rotated_key_signs_before_its_removal_and_not_after(server: dict[str, Any], tmp_path: Path) -> None:
    """One push: Bob made a maintainer, Bob retracts, Bob removed. Each commit is judged by
    its own first parent's roles (history order), so the retraction holds; Bob's next act,
    after the removal, is refused."""
    bare, clone, mia = server["bare"], server["clone"], server["mia"]
    bob = keygen(tmp_path, "bob")
    cole = (server["cole"], "contributor")
    write_roles(clone, {MIA[1]: (mia, "maintainer"), COLE[1]: cole, BOB[1]: (bob, "maintainer")})
    sneak(clone, "Roles: Bob is a maintainer", MIA, mia)
    event(clone, "retract", BOB)
    sneak(clone, "Bob retracts", BOB, bob)
    write_roles(clone, {MIA[1]: (mia, "maintainer"), COLE[1]: cole})
    head = sneak(clone, "Roles: Bob leaves", MIA, mia)
    proc = push(clone, "origin", "main")
    accepted(proc, bare, head)
    assert "3 new commits checked" in proc.stderr
    before = refs(bare)
    path = event(clone, "reinstate", BOB)
    late = sneak(clone, "Bob reinstates after leaving", BOB, bob)
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, hint = finding(remote, late, path, "authority")
    assert "reinstate" in line and "needs the maintainer role" in line
    assert f"the roles of {head[:10]} do not know, which counts as no signature" in line
    assert "sign the commit with the key of a principal holding the maintainer role" in hint


def test_a_merge_bringing_an_unsigned_event_from_a_side_branch_is_refused(server: dict[str, Any]) -> None:
    bare, clone, mia = server["bare"], server["clone"], server["mia"]
    before = refs(bare)
    git(clone, "checkout", "-q", "-b", "side")
    path = event(clone, "retract", ZED)
    side = sneak(clone, "side: an unsigned retraction", ZED)
    git(clone, "checkout", "-q", "main")
    (clone / "main.txt").write_text("x\n")
    sneak(clone, "main: something else", MIA, mia)
    git(clone, "merge", "-q", "--no-ff", "--no-commit", "side")
    merge = sneak(clone, "merge side", MIA, mia)  # the merge itself is a maintainer's, signed
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, side, path, "authority")  # judged once, where it is, by the roles of main's head
    assert f"brought onto the mainline by the merge {merge[:10]}" in line and "the commit has no signature" in line
    # nor can the side branch go in on a branch of its own
    remote = refused(push(clone, "origin", "side"), bare, before)
    finding(remote, side, path, "authority")


def test_a_roles_change_and_a_retraction_in_one_commit_are_judged_by_the_parents_roles(
    server: dict[str, Any],
) -> None:
    bare, clone = server["bare"], server["clone"]
    before = refs(bare)
    _cole_roles(clone, server)
    path = event(clone, "retract", COLE)
    bad = sneak(clone, "promote myself and retract", COLE, server["cole"])
    remote = refused(push(clone, "origin", "main"), bare, before)
    for file, what in ((path, "retract a record"), ("governance/roles.yaml", "change the roles")):
        line, _ = finding(remote, bad, file, "authority")
        assert what in line and f"{COLE[1]}, who holds the contributor role" in line


def test_a_push_that_grants_its_own_signer_a_role_is_refused(server: dict[str, Any]) -> None:
    """Two commits in one push: Cole makes himself a maintainer, then retracts as one. The
    roles that judge the push are those the bare repository holds, never the pushed ones."""
    bare, clone = server["bare"], server["clone"]
    before = refs(bare)
    _cole_roles(clone, server)
    grant = sneak(clone, "Roles: I am a maintainer", COLE, server["cole"])
    event(clone, "retract", COLE)
    sneak(clone, "retract as a maintainer", COLE, server["cole"])
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, grant, "governance/roles.yaml", "authority")
    assert "change the roles" in line and f"needs the maintainer role: it is signed by {COLE[1]}" in line


def test_a_time_option_in_allowed_signers_is_refused(server: dict[str, Any], tmp_path: Path) -> None:
    bare, clone = server["bare"], server["clone"]
    bob = keygen(tmp_path, "bob")
    before = refs(bare)
    signers = clone / "governance" / "allowed_signers"
    signers.write_text(signers.read_text() + f'{BOB[1]} valid-after="20200101",valid-before="20990101" {public(bob)}\n')
    change = sneak(clone, "Roles: Bob, for a while", MIA, server["mia"])  # a maintainer's, signed
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, hint = finding(remote, change, "governance/allowed_signers:3", "roles")
    assert "time option valid-after is refused" in line
    assert hint.strip() != "remote:     hint:"


# --- the genesis ---------------------------------------------------------------------------------


def _no_roles_server(tmp: Path) -> dict[str, Any]:
    repo = make_store(tmp, hooks=False)
    import shutil

    from conftest import PROJECT

    shutil.copytree(PROJECT / "schemas", repo / "schemas")
    place_record(repo, load_example("aggregate", "valid", RECORD))
    sneak(repo, "schemas and a record", COLE)
    bare, clone = serve(repo, tmp)
    return {"bare": bare, "clone": clone, "mia": keygen(tmp, "mia"), "cole": keygen(tmp, "cole")}


def test_a_genesis_pushed_through_the_gate_is_refused_on_any_branch(tmp_path: Path) -> None:
    """Roles cannot be adopted by a push: on main the old head is the anchor and the genesis
    is above it; on a new branch no anchor is known, and the server adopts nothing without one."""
    s = _no_roles_server(tmp_path)
    bare, clone = s["bare"], s["clone"]
    before = refs(bare)
    write_roles(clone, {COLE[1]: (s["cole"], "maintainer")})
    bad = sneak(clone, "Roles: I am the maintainer now", COLE, s["cole"])
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, hint = finding(remote, bad, "governance/allowed_signers", "genesis")
    assert "above the trust anchor" in line
    assert "push it to the bare repository before `eee server install`" in hint
    remote = refused(push(clone, "origin", "HEAD:refs/heads/adopt"), bare, before)
    line, _ = finding(remote, bad, "governance/allowed_signers", "genesis")
    assert "no trust anchor is known to trust it" in line


def test_a_genesis_in_the_bare_repository_before_the_gate_is_trusted(tmp_path: Path) -> None:
    """The way to adopt roles at the server: the genesis pushed before ``eee server install``;
    from then on the roles judge every push."""
    s = _no_roles_server(tmp_path)
    bare, clone, mia, cole = s["bare"], s["clone"], s["mia"], s["cole"]
    assert eee("server", "uninstall", str(bare)).returncode == 0
    write_roles(clone, {MIA[1]: (mia, "maintainer"), COLE[1]: (cole, "contributor")})
    genesis = sneak(clone, "Roles: the genesis", MIA, mia)
    assert push(clone, "origin", "main").returncode == 0
    assert eee("server", "install", str(bare)).returncode == 0
    before = refs(bare)
    path = event(clone, "retract", COLE)
    bad = sneak(clone, "a contributor retracts", COLE, cole)
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, bad, path, "authority")
    assert f"who holds the contributor role in the roles of {genesis[:10]}" in line
    git(clone, "reset", "-q", "--hard", genesis)
    event(clone, "retract", MIA)
    head = sneak(clone, "the maintainer retracts", MIA, mia)
    proc = push(clone, "origin", "main")
    accepted(proc, bare, head)
    assert "[genesis]" not in proc.stderr and "[before-roles]" not in proc.stderr


def test_without_roles_an_event_naming_someone_else_is_refused(tmp_path: Path) -> None:
    """In a store without roles anyone may act, as themselves: the actor is who committed it."""
    s = _no_roles_server(tmp_path)
    bare, clone = s["bare"], s["clone"]
    before = refs(bare)
    path = event(clone, "retract", ("Head Maintainer", "head@example.org"))
    bad = sneak(clone, "retract in another's name", ZED)
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, bad, path, "actor")
    assert "Head Maintainer <head@example.org>" in line and f"{ZED[0]} <{ZED[1]}>" in line
    assert "[authority]" not in remote
    git(clone, "reset", "-q", "--hard", "origin/main")
    event(clone, "retract", ZED)
    head = sneak(clone, "retract as myself", ZED)
    accepted(push(clone, "origin", "main"), bare, head)


def test_a_contributor_cannot_remove_the_roles(server: dict[str, Any]) -> None:
    """Deleting the roles files would leave a store where anyone may act: it is a change of
    the roles, a maintainer's act, whoever signs it."""
    bare, clone = server["bare"], server["clone"]
    before = refs(bare)
    git(clone, "rm", "-q", "governance/allowed_signers", "governance/roles.yaml")
    bad = sneak(clone, "no more roles", COLE, server["cole"])
    event(clone, "retract", COLE)
    sneak(clone, "now anyone may retract", COLE, server["cole"])
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, bad, "governance/allowed_signers", "authority")
    assert "change the roles" in line and f"signed by {COLE[1]}, who holds the contributor role" in line


def test_a_maintainers_large_manifest_re_attributing_records_to_a_bot_is_refused(server: dict[str, Any]) -> None:
    """A maintainer may import, but a manifest records what its own import added, as who
    ran it: a signed manifest that names an accepted record as imported by an "official
    release bot" is refused for both, whatever its size (a real import's manifest names
    every file: 746 records make some 190 KB; this one is over the 64 KiB of an event)."""
    bare, clone = server["bare"], server["clone"]
    before = refs(bare)
    path = _manifest(clone, ("Official Release Bot", "bot@example.org"), refused=600)
    assert (clone / path).stat().st_size > 64 * 1024
    bad = sneak(clone, "the official release", MIA, server["mia"])
    remote = refused(push(clone, "origin", "main"), bare, before)
    line, _ = finding(remote, bad, path, "actor")
    assert "Official Release Bot <bot@example.org>" in line and f"signed by {MIA[1]}" in line
    line, _ = finding(remote, bad, path, "import")
    assert "but its import did not add it" in line
    assert "[authority]" not in remote  # importing is a maintainer's act
