"""Issue 23, item 2: events are signed by who they name. Every rule is a rule of the audit of a
commit range (read from git objects only), checked here over histories built with
``--no-verify``, real ed25519 keys and git's own SSH signing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXED_UUID, git, load_example, make_store, place_record
from eee.commands.audit import main as audit_main
from roles_store import COLE, MIA, RECORD, ZED, event, keygen, public, roles_store, sneak, write_roles

OTHER = "2a2b2c2d-3e3f-4a4b-8c8d-9e9f0a0b0c0d"
THIRD = "3c3d3e3f-4a4b-4c4d-9e9f-0a0b1c1d2e2f"


def _audit(repo: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[dict[str, Any]]]:
    code = audit_main(["--store", str(repo), "--format", "json", *extra])
    return code, json.loads(capsys.readouterr().out)["findings"]


def _of(findings: list[dict[str, Any]], check: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["check"] == check]


@pytest.fixture
def store(tmp_path: Path) -> dict[str, Any]:
    return roles_store(tmp_path)


def test_a_contributors_signed_record_passes(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    place_record(repo, load_example("aggregate", "valid", RECORD), benchmark="other", record_uuid=OTHER)
    sneak(repo, "a record", COLE, store["cole"])
    _, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert [f for f in findings if f["severity"] == "error"] == [], findings
    assert not _of(findings, "authority") and not _of(findings, "actor")


def test_an_unsigned_record_passes_where_no_signature_is_required(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    place_record(repo, load_example("aggregate", "valid", RECORD), benchmark="other", record_uuid=OTHER)
    sneak(repo, "a record", ZED)
    _, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert not _of(findings, "authority")


@pytest.mark.parametrize("action", ["retract", "flag"])
def test_a_contributors_maintainer_act_is_an_error_naming_the_role(store: dict[str, Any], capsys, action: str) -> None:
    repo = store["repo"]
    extra: dict[str, Any] = {}
    if action == "flag":
        rel = git(repo, "ls-files", "data").stdout.split()[0]
        extra = {
            "rule": "score",
            "path": "$.evaluation_results[0].score_details.score",
            "record_path": rel,
            "sha256": "0" * 64,
        }
    path = event(repo, action, COLE, **extra)
    bad = sneak(repo, f"{action} by a contributor", COLE, store["cole"])
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    (f,) = _of(findings, "authority")
    assert f["file"] == f"{bad[:10]}:{path}"
    assert "needs the maintainer role" in f["message"]
    assert f"signed by {COLE[1]}, who holds the contributor role" in f["message"]
    assert "eee roles add" in f["hint"] or "roles add" in f["hint"]


def test_a_maintainers_signed_retraction_passes(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    event(repo, "retract", MIA)
    sneak(repo, "retract", MIA, store["mia"])
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert not _of(findings, "authority") and not _of(findings, "actor"), findings
    assert code in (0, 2)


def test_an_unsigned_retraction_is_an_error(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    path = event(repo, "retract", MIA)
    bad = sneak(repo, "retract, unsigned", MIA)
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    (f,) = _of(findings, "authority")
    assert f["file"] == f"{bad[:10]}:{path}"
    assert "the commit has no signature" in f["message"] and "maintainer" in f["message"]
    assert "git config gpg.format ssh" in f["hint"] and "git config user.signingkey" in f["hint"]


def test_a_key_the_roles_do_not_know_counts_as_no_signature(store: dict[str, Any], tmp_path: Path, capsys) -> None:
    repo = store["repo"]
    zed = keygen(tmp_path, "zed")
    event(repo, "retract", ZED)
    sneak(repo, "retract by a stranger", ZED, zed)
    _, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    (f,) = _of(findings, "authority")
    assert "signed by a key (SHA256:" in f["message"] and "which counts as no signature" in f["message"]


def test_a_forged_actor_is_an_error(store: dict[str, Any], capsys) -> None:
    """A contributor's signed dispute (anyone may dispute) that names the maintainer."""
    repo = store["repo"]
    path = event(repo, "dispute", MIA, reference="https://example.org/d/1")
    bad = sneak(repo, "dispute in the maintainer's name", COLE, store["cole"])
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    assert not _of(findings, "authority")  # disputing is anyone's
    (f,) = _of(findings, "actor")
    assert f["file"] == f"{bad[:10]}:{path}" and f["pointer"] == "$.actor"
    assert f"names {MIA[0]} <{MIA[1]}>" in f["message"] and f"signed by {COLE[1]}" in f["message"]


def test_an_unsigned_dispute_is_allowed_with_the_authors_actor(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    event(repo, "dispute", ZED, reference="https://example.org/d/2")
    sneak(repo, "a stranger disputes", ZED)
    _, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert not _of(findings, "authority") and not _of(findings, "actor")


def test_a_second_import_manifest_by_a_contributor(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    manifest = repo / "governance" / "imports" / "20260101T000000.000000Z-import-abcdef.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(
        'manifest_schema: "1.0.0"\nid: 20260101T000000.000000Z-import-abcdef\nsource: elsewhere\n'
        'actor:\n  name: "Official Release Bot"\n  email: "bot@example.org"\n'
    )
    bad = sneak(repo, "re-attribute the records", COLE, store["cole"])
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    rel = manifest.relative_to(repo).as_posix()
    (f,) = _of(findings, "authority")
    assert f["file"] == f"{bad[:10]}:{rel}" and "write an import manifest" in f["message"]
    assert "needs the maintainer role" in f["message"]
    (g,) = _of(findings, "actor")
    assert "Official Release Bot" in g["message"]


def test_a_contributor_changing_the_roles(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    write_roles(repo, {MIA[1]: (store["mia"], "maintainer"), COLE[1]: (store["cole"], "maintainer")})
    bad = sneak(repo, "make myself a maintainer", COLE, store["cole"])
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    files = {f["file"] for f in _of(findings, "authority")}
    assert f"{bad[:10]}:governance/roles.yaml" in files
    assert all("change the roles" in f["message"] for f in _of(findings, "authority"))


def test_a_roles_change_and_a_retraction_in_one_commit_are_judged_by_the_parents_roles(
    store: dict[str, Any], capsys
) -> None:
    repo = store["repo"]
    write_roles(repo, {MIA[1]: (store["mia"], "maintainer"), COLE[1]: (store["cole"], "maintainer")})
    path = event(repo, "retract", COLE)
    bad = sneak(repo, "promote myself and retract", COLE, store["cole"])
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    files = {f["file"] for f in _of(findings, "authority")}
    assert {f"{bad[:10]}:{path}", f"{bad[:10]}:governance/roles.yaml"} <= files
    # the next commit is judged by the new roles: Cole is a maintainer there only if the change held,
    # and the audit judges by what history holds (the refused commit is an error of its own)


def test_key_rotation_before_stays_valid_after_is_refused(store: dict[str, Any], tmp_path: Path, capsys) -> None:
    repo = store["repo"]
    bob = keygen(tmp_path, "bob")
    write_roles(repo, {MIA[1]: (store["mia"], "maintainer"), "bob@example.org": (bob, "maintainer")})
    sneak(repo, "Roles: Bob is a maintainer", MIA, store["mia"])
    bob_id = ("Bob", "bob@example.org")
    before = event(repo, "retract", bob_id)
    valid = sneak(repo, "Bob retracts", bob_id, bob)
    write_roles(repo, {MIA[1]: (store["mia"], "maintainer")})
    sneak(repo, "Roles: Bob leaves", MIA, store["mia"])
    after = event(repo, "reinstate", bob_id)
    late = sneak(repo, "Bob reinstates after leaving", bob_id, bob)
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    flagged = {f["file"] for f in _of(findings, "authority")}
    assert f"{late[:10]}:{after}" in flagged
    assert f"{valid[:10]}:{before}" not in flagged
    (f,) = _of(findings, "authority")
    assert "signed by a key" in f["message"]  # Bob's key is no longer known: no signature


def test_a_merge_bringing_an_unsigned_event_from_a_side_branch(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    git(repo, "checkout", "-q", "-b", "side")
    path = event(repo, "retract", ZED)
    side = sneak(repo, "side: unsigned retraction", ZED)
    git(repo, "checkout", "-q", "main")
    (repo / "main.txt").write_text("x")
    sneak(repo, "main: something else", MIA, store["mia"])
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")
    merge = sneak(repo, "merge side", MIA, store["mia"])
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    # the side commit is judged once, where it is, by the roles of the mainline commit it was merged onto
    ((file, msg),) = {(f["file"], f["message"]) for f in _of(findings, "authority")}
    assert file == f"{side[:10]}:{path}"
    assert f"brought onto the mainline by the merge {merge[:10]}" in msg and "no signature" in msg


def test_a_side_branch_signed_by_a_maintainer_removed_on_main(store: dict[str, Any], tmp_path: Path, capsys) -> None:
    repo = store["repo"]
    bob = keygen(tmp_path, "bob")
    bob_id = ("Bob", "bob@example.org")
    write_roles(repo, {MIA[1]: (store["mia"], "maintainer"), bob_id[1]: (bob, "maintainer")})
    sneak(repo, "Roles: Bob is a maintainer", MIA, store["mia"])
    git(repo, "checkout", "-q", "-b", "side")
    path = event(repo, "retract", bob_id)
    side = sneak(repo, "side: Bob retracts", bob_id, bob)
    git(repo, "checkout", "-q", "main")
    write_roles(repo, {MIA[1]: (store["mia"], "maintainer")})
    sneak(repo, "Roles: Bob leaves", MIA, store["mia"])
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")
    merge = sneak(repo, "merge the old side branch", MIA, store["mia"])
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    found = _of(findings, "authority")
    # judged by the roles of the mainline commit it was merged onto (Bob gone), never by its own parent's
    assert [f["file"] for f in found] == [f"{side[:10]}:{path}"], found
    assert f"brought onto the mainline by the merge {merge[:10]}" in found[0]["message"]
    head = git(repo, "rev-parse", "HEAD~1").stdout.strip()
    assert f"the roles of {head[:10]} do not know" in found[0]["message"]


def test_a_time_option_in_allowed_signers_is_refused_and_grants_nothing(
    store: dict[str, Any], tmp_path: Path, capsys
) -> None:
    repo = store["repo"]
    bob = keygen(tmp_path, "bob")
    signers = repo / "governance" / "allowed_signers"
    signers.write_text(
        signers.read_text() + f'bob@example.org valid-after="20200101",valid-before="20990101" {public(bob)}\n'
    )
    change = sneak(repo, "Roles: Bob, for a while", MIA, store["mia"])
    event(repo, "retract", ("Bob", "bob@example.org"))
    later = sneak(repo, "Bob retracts", ("Bob", "bob@example.org"), bob)
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    (roles,) = _of(findings, "roles")
    assert roles["file"] == f"{change[:10]}:governance/allowed_signers" and roles["line"] == 3
    assert "time option valid-after is refused" in roles["message"]
    (f,) = _of(findings, "authority")
    assert f["file"].startswith(later[:10]) and "do not know" in f["message"]


@pytest.mark.parametrize(
    "line, says",
    [
        ("bob@example.org,eve@example.org {key}", "given to 2 principals"),
        ("*@example.org {key}", "wildcards are refused"),
        ("bob@example.org cert-authority {key}", "cert-authority is refused"),
        ("bob@example.org ssh-ed25519 not-base64!", "not base64"),
        ('bob@example.org namespaces="file" {key}', "leaves out git"),
    ],
)
def test_lines_the_store_refuses(store: dict[str, Any], tmp_path: Path, capsys, line: str, says: str) -> None:
    repo = store["repo"]
    bob = keygen(tmp_path, "bob")
    signers = repo / "governance" / "allowed_signers"
    signers.write_text(signers.read_text() + line.format(key=public(bob)) + "\n")
    sneak(repo, "Roles: a bad line", MIA, store["mia"])
    _, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    (f,) = _of(findings, "roles")
    assert says in f["message"] and f["line"] == 3


def test_a_contributor_may_supersede_a_record_they_added_signed(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    doc = load_example("aggregate", "valid", RECORD)
    place_record(repo, doc, benchmark="mine", record_uuid=OTHER)
    sneak(repo, "Cole's record", COLE, store["cole"])
    doc["evaluation_results"][0]["score_details"]["score"] = 8.5
    place_record(repo, doc, benchmark="mine", record_uuid=THIRD)
    event(repo, "supersede", COLE, record=OTHER, replacement=THIRD)
    sneak(repo, "Cole corrects his own record", COLE, store["cole"])
    _, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert not _of(findings, "authority"), findings
    # the record committed before the roles (by an unsigned commit) is not his to supersede
    place_record(repo, doc, benchmark="mine2", record_uuid="4d4e4f40-5a5b-4c5d-8e8f-9a9b0c0d1e1f")
    event(repo, "supersede", COLE, record=FIXED_UUID, replacement="4d4e4f40-5a5b-4c5d-8e8f-9a9b0c0d1e1f")
    bad = sneak(repo, "Cole supersedes another's record", COLE, store["cole"])
    _, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    (f,) = _of(findings, "authority")
    assert f["file"].startswith(bad[:10]) and "or the signer of the commit that added the record" in f["message"]


def test_require_signed_commits_makes_every_commit_need_a_known_signature(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    (repo / "governance" / "settings.yaml").write_text("require_signed_commits: true\n")
    sneak(repo, "settings: signed commits only", MIA, store["mia"])
    place_record(repo, load_example("aggregate", "valid", RECORD), benchmark="other", record_uuid=OTHER)
    bad = sneak(repo, "an unsigned record", ZED)
    place_record(repo, load_example("aggregate", "valid", RECORD), benchmark="third", record_uuid=THIRD)
    sneak(repo, "a contributor's signed record", COLE, store["cole"])
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    (f,) = _of(findings, "authority")
    assert f["file"] == f"{bad[:10]}:governance/settings.yaml" and f["pointer"] == "$.require_signed_commits"
    assert "requires every commit to be signed" in f["message"]


def test_a_settings_change_needs_a_maintainer(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    (repo / "governance" / "settings.yaml").write_text("sidecar_git_max_bytes: 99999999\n")
    bad = sneak(repo, "bigger sidecars in git", COLE, store["cole"])
    _, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    (f,) = _of(findings, "authority")
    assert f["file"] == f"{bad[:10]}:governance/settings.yaml" and "change the store's settings" in f["message"]


# --- the genesis and the history before the roles ----------------------------------------------


def test_the_genesis_at_the_anchor_is_trusted_and_earlier_events_reported_once(tmp_path: Path, capsys) -> None:
    repo = make_store(tmp_path, hooks=False)
    place_record(repo, load_example("aggregate", "valid", RECORD))
    sneak(repo, "a record", COLE)
    event(repo, "dispute", COLE, reference="https://example.org/d/0")
    sneak(repo, "dispute", COLE)
    event(repo, "resolve", COLE, outcome="upheld")
    sneak(repo, "resolve", COLE)
    event(repo, "retract", COLE)
    sneak(repo, "retract", COLE)
    mia = keygen(tmp_path, "mia")
    write_roles(repo, {MIA[1]: (mia, "maintainer")})
    genesis = sneak(repo, "Roles: the genesis", MIA, mia)
    _, findings = _audit(repo, capsys, "--anchor", genesis)
    assert [f for f in findings if f["severity"] == "error"] == []
    (before,) = _of(findings, "before-roles")
    assert before["severity"] == "warning" and "3 governance file(s) in 3 commit(s)" in before["message"]
    assert f"adopted in {genesis[:10]}" in before["message"]
    assert not _of(findings, "genesis")
    assert audit_main(["--store", str(repo), "--from", genesis, "--anchor", genesis]) == 0  # CI's range: nothing of it


def test_a_genesis_above_the_anchor_is_refused_with_how_to_adopt(tmp_path: Path, capsys) -> None:
    repo = make_store(tmp_path, hooks=False)
    anchor = git(repo, "rev-parse", "HEAD").stdout.strip()
    cole = keygen(tmp_path, "cole")
    write_roles(repo, {COLE[1]: (cole, "maintainer")})
    bad = sneak(repo, "Roles: I am the maintainer now", COLE, cole)
    code, findings = _audit(repo, capsys, "--anchor", anchor)
    assert code == 1
    (f,) = _of(findings, "genesis")
    assert (
        f["file"] == f"{bad[:10]}:governance/allowed_signers"
        and f"above the trust anchor {anchor[:10]}" in f["message"]
    )
    assert "eee roles add" in f["hint"] or "roles add" in f["hint"]
    assert "EEE_AUDIT_ANCHOR" in f["hint"] and "eee server install" in f["hint"]


def test_a_genesis_without_an_anchor(tmp_path: Path, capsys) -> None:
    """No anchor known: a genesis signed by a maintainer it lists is accepted with one warning
    naming how to pin it; an unsigned one is an error; the server's strict mode refuses both."""
    from eee.validation.audit import audit

    repo = make_store(tmp_path, hooks=False)
    mia = keygen(tmp_path, "mia")
    write_roles(repo, {MIA[1]: (mia, "maintainer")})
    genesis = sneak(repo, "Roles: the genesis", MIA, mia)
    code, findings = _audit(repo, capsys)
    assert code == 2
    (f,) = _of(findings, "genesis")
    assert f["severity"] == "warning" and f"--anchor {genesis[:10]}" in f["hint"]
    strict = audit(None, "HEAD", repo, adopt_without_anchor=False)
    assert any(x.check == "genesis" and x.severity == "error" for r in strict.results for x in r.findings)

    other = make_store(tmp_path, hooks=False, name="unsigned")
    write_roles(other, {MIA[1]: (mia, "maintainer")})
    sneak(other, "Roles: unsigned genesis", MIA)
    code, findings = _audit(other, capsys)
    assert code == 1
    (f,) = _of(findings, "genesis")
    assert "the commit has no signature" in f["message"]


# --- stores without roles -----------------------------------------------------------------------


def test_without_roles_the_actor_is_who_committed_it(tmp_path: Path, capsys) -> None:
    repo = make_store(tmp_path, hooks=False)
    place_record(repo, load_example("aggregate", "valid", RECORD))
    sneak(repo, "a record", COLE)
    event(repo, "retract", COLE)
    sneak(repo, "retract as myself", COLE)
    _, findings = _audit(repo, capsys)
    assert not _of(findings, "actor") and not _of(findings, "authority") and not _of(findings, "before-roles")
    path = event(repo, "reinstate", ("Head Maintainer", "head@example.org"))
    bad = sneak(repo, "reinstate in another's name", COLE)
    code, findings = _audit(repo, capsys)
    assert code == 1
    (f,) = _of(findings, "actor")
    assert f["file"] == f"{bad[:10]}:{path}"
    assert "Head Maintainer <head@example.org>" in f["message"] and f"{COLE[0]} <{COLE[1]}>" in f["message"]
    assert not _of(findings, "authority")


def test_the_rules_hold_in_a_bare_repository_as_the_server_gate_calls_them(
    store: dict[str, Any], tmp_path: Path
) -> None:
    """What the server gate calls (its pre-receive hook; issue 23 item 4): the same audit over
    a bare repository's objects, with the old head as the anchor and no adoption without one."""
    from eee.validation.audit import audit

    repo = store["repo"]
    bare = tmp_path / "served.git"
    git(repo, "clone", "-q", "--bare", str(repo), str(bare))
    old = git(repo, "rev-parse", "HEAD").stdout.strip()
    path = event(repo, "retract", COLE)
    new = sneak(repo, "a contributor retracts", COLE, store["cole"])
    git(repo, "push", "-q", str(bare), "main:refs/heads/pushed")
    summary = audit(old, new, bare, anchor=old, adopt_without_anchor=False)
    found = [(f.check, f.file) for r in summary.results for f in r.findings if f.severity == "error"]
    assert ("authority", f"{new[:10]}:{path}") in found
    event(repo, "retract", MIA)
    fine = sneak(repo, "the maintainer retracts", MIA, store["mia"])
    git(repo, "push", "-q", str(bare), f"{fine}:refs/heads/fine")
    summary = audit(new, fine, bare, anchor=new, adopt_without_anchor=False)
    assert not [f for r in summary.results for f in r.findings if f.check in ("authority", "actor")]


def test_a_crafted_author_is_shown_escaped(tmp_path: Path, capsys) -> None:
    repo = make_store(tmp_path, hooks=False)
    place_record(repo, load_example("aggregate", "valid", RECORD))
    sneak(repo, "a record", COLE)
    event(repo, "retract", ("Head Maintainer", "head@example.org"))
    sneak(repo, "forged", ("Eve\x1b[2J\u202e", "eve@example.org"))
    _, findings = _audit(repo, capsys)
    (f,) = _of(findings, "actor")
    assert "\x1b" not in f["message"] and "\u202e" not in f["message"]
    assert "\\x1b" in f["message"] and "\\u202e" in f["message"]


def test_a_merge_of_a_branch_behind_on_the_settings_is_a_maintainers_act(store: dict[str, Any], capsys) -> None:
    """A merge of the mainline takes a configuration change against any of its parents: merging
    a branch that is behind on the settings changes them against that branch. Unsigned (a
    forge's merge button), it is refused saying why; a maintainer's signed merge goes in."""
    repo = store["repo"]
    git(repo, "checkout", "-q", "-b", "cole")
    place_record(repo, load_example("aggregate", "valid", RECORD), benchmark="other", record_uuid=OTHER)
    sneak(repo, "Cole's record", COLE, store["cole"])
    git(repo, "checkout", "-q", "main")
    (repo / "governance" / "settings.yaml").write_text("sidecar_git_max_bytes: 2048\n")
    settings = sneak(repo, "settings: smaller sidecars in git", MIA, store["mia"])
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "cole")
    merge = sneak(repo, "Merge pull request #1", ("GitHub", "noreply@github.com"))
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert code == 1
    (f,) = _of(findings, "authority")
    assert f["file"] == f"{merge[:10]}:governance/settings.yaml"
    assert "the merge changes it against its parent" in f["message"] and "behind on it" in f["message"]
    assert "change the store's settings" in f["message"] and "no signature" in f["message"]
    git(repo, "reset", "-q", "--hard", settings)
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "cole")
    sneak(repo, "Merge Cole's branch", MIA, store["mia"])
    code, findings = _audit(repo, capsys, "--anchor", store["genesis"])
    assert not _of(findings, "authority"), findings
