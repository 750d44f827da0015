"""The ledger with real git and the real hooks: flag, resolve outcomes that act, uuid
prefixes, history order and the time rule in the hook and the audit, uncommitted events."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pytest

from conftest import COMMITTER, FIXED_UUID, commit, git, make_store, place_record, record_of
from eee.commands.governance import run
from eee.commands.status import main as status_main

pytestmark = pytest.mark.slow

A = FIXED_UUID
B = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"
C = "1f0e9d8c-0000-4f5e-8d4c-3b2a1f0e9d8d"  # shares B's first eight digits
ME = COMMITTER  # events committed here name who commits them


_doc = record_of  # the example record for another model (and score)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_store(tmp_path)
    place_record(repo, _doc("meta-llama/Llama-2-7b-hf"), record_uuid=A)
    place_record(repo, _doc("facebook/opt-6.7b"), record_uuid=B)
    place_record(repo, _doc("facebook/opt-1.3b"), record_uuid=C)
    git(repo, "add", "-A")
    assert commit(repo, "three records").returncode == 0
    monkeypatch.chdir(repo)
    monkeypatch.setenv("EEE_PYTHON", sys.executable)
    return repo


def status(record: str, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert status_main([record, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def events(repo: Path) -> list[Path]:
    return sorted((repo / "governance" / "events").glob("*.yaml"))


# --- flag -----------------------------------------------------------------------------------


def test_flag_then_resolve(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.rules.flags import flags_of
    from eee.rules.ledger import read_ledger

    path = "$.evaluation_results[0].score_details.score"
    argv = [A[:8], "--rule", "score", "--json-path", path, "--reason", "HELM's -1 for missing", "--commit"]
    assert run("flag", argv) == 2  # written; the record breaks no rule, so the flag accepts nothing: a warning
    assert "[flag-unmatched]" in capsys.readouterr().err
    info = status(A, capsys)
    assert info["status"] == "flagged" and info["flagged"]
    assert info["flags"][0]["rule"] == "score" and info["flags"][0]["path"] == path
    (flag,) = flags_of(read_ledger(store), A)
    assert (flag.rule, flag.path, flag.record_path) == ("score", path, info["path"]) and len(str(flag.sha256)) == 64
    assert run("flag", argv) == 1  # the same finding is flagged once
    assert "already flagged" in capsys.readouterr().err
    assert run("resolve", [A[:8], "--outcome", "upheld", "--reason", "checked: -1 means missing", "--commit"]) == 0
    info = status(A, capsys)
    assert info["status"] == "active" and info["last_resolution"]["outcome"] == "upheld"
    assert git(store, "status", "--porcelain").stdout == ""


def test_tools_status_marks_uncommitted_events(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert run("retract", [A, "--reason", "not committed yet"]) == 0
    assert "not committed yet: the event counts once it is committed" in capsys.readouterr().err
    info = status(A, capsys)
    assert info["uncommitted"] == 1 and info["history"][0]["uncommitted"] is True
    assert status_main([A]) == 0
    captured = capsys.readouterr()
    assert "(uncommitted)" in captured.out and "not committed yet" in captured.err
    git(store, "add", "-A")
    assert commit(store, "the retraction").returncode == 0
    info = status(A, capsys)
    assert info["uncommitted"] == 0 and info["history"][0]["commit"] == git(store, "rev-parse", "HEAD").stdout.strip()


# --- uuid prefixes --------------------------------------------------------------------------


def test_uuid_prefixes(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert status(A[:8], capsys)["record"] == A
    assert status(A[:13], capsys)["record"] == A
    capsys.readouterr()
    assert status_main([B[:8]]) == 1  # B and C share eight digits
    err = capsys.readouterr().err
    assert "ambiguous" in err and B in err and C in err
    assert run("retract", [B[:8], "--reason", "which one?"]) == 1
    assert events(store) == []
    assert status(B[:10], capsys)["record"] == B
    assert status_main([A[:7]]) == 1
    assert "too short" in capsys.readouterr().err
    assert status_main(["0000000a"]) == 1
    assert "no record whose uuid begins with 0000000a" in capsys.readouterr().err
    assert run("supersede", [A[:8], C[:10], "--reason", "C is the corrected one"]) == 0
    assert status(A[:8], capsys)["superseded_by"] == C


def test_status_json_chain_includes_the_predecessor(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("supersede", [A, B, "--reason", "corrected", "--commit"]) == 0
    new = status(B, capsys)
    assert new["chain"] == [A, B] and new["preceded_by"] == A
    assert {"relation": "IsNewVersionOf", "record": A} in new["relations"]
    old = status(A, capsys)
    assert old["chain"] == [A, B] and {"relation": "IsPreviousVersionOf", "record": B} in old["relations"]


# --- resolve outcomes that act --------------------------------------------------------------


def test_resolve_retracted_writes_the_retraction_in_the_same_commit(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("dispute", [A, "--reason", "wrong split", "--reference", "https://example.org/d/1", "--commit"]) == 0
    assert run("resolve", [A, "--outcome", "retracted", "--reason", "it was the test split", "--commit"]) == 0
    info = status(A, capsys)
    assert info["status"] == "retracted" and info["last_resolution"]["outcome"] == "retracted"
    added = git(store, "show", "--name-status", "--format=%s", "HEAD").stdout.split("\n")
    assert added[0].startswith(f"Resolve (retracted) {A[:8]}")
    assert sorted(line.split("-")[-3] for line in added[2:] if line) == ["resolve", "retract"]


def test_resolve_corrected_requires_the_replacement_and_writes_the_supersession(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("dispute", [A, "--reason", "wrong digit", "--reference", "https://example.org/d/2", "--commit"]) == 0
    capsys.readouterr()
    assert run("resolve", [A, "--outcome", "corrected", "--reason", "fixed"]) == 1
    assert "needs the replacement" in capsys.readouterr().err
    argv = [A, "--outcome", "corrected", "--replacement", B[:10], "--reason", "B has the right digit", "--commit"]
    assert run("resolve", argv) == 0
    info = status(A, capsys)
    assert info["status"] == "superseded" and info["superseded_by"] == B
    assert info["last_resolution"] == {**info["last_resolution"], "outcome": "corrected", "replacement": B}


def test_resolve_refuses_what_it_cannot_do(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert run("resolve", [A, "--outcome", "upheld", "--reason", "nothing open"]) == 1
    assert "no open dispute or flag" in capsys.readouterr().err
    assert run("retract", [B, "--reason", "gone", "--commit"]) == 0
    assert run("dispute", [A, "--reason", "x", "--reference", "https://example.org/d/3", "--commit"]) == 0
    assert run("resolve", [A, "--outcome", "corrected", "--replacement", B, "--reason", "B"]) == 1
    assert f"the replacement {B} is retracted: it does not stand" in capsys.readouterr().err
    assert len(events(store)) == 2


def test_a_resolution_whose_act_is_missing_is_refused_by_the_hook(store: Path) -> None:
    from eee.governance.events import make_event, write

    assert run("dispute", [A, "--reason", "x", "--reference", "https://example.org/d/4", "--commit"]) == 0
    write(store, make_event("resolve", A, "retracted, says the event", ME, outcome="retracted"))
    git(store, "add", "-A")
    proc = commit(store, "a resolution by hand, without the retraction")
    assert proc.returncode == 1 and "no retraction" in proc.stdout + proc.stderr


# --- history order and the time rule --------------------------------------------------------


def test_backdated_event_is_refused_by_the_hook_and_the_audit(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.commands.audit import main as audit
    from eee.governance.events import make_event, write

    assert run("supersede", [A, B, "--reason", "corrected", "--commit"]) == 0
    path = write(store, make_event("retract", B, "dated 2020", ME, now=dt.datetime(2020, 1, 1, tzinfo=dt.UTC)))
    git(store, "add", "-A")
    proc = commit(store, "a backdated retraction")
    assert proc.returncode == 1 and "earlier than the record's previous event" in proc.stdout + proc.stderr
    assert commit(store, "the same without the hooks", "--no-verify").returncode == 0
    capsys.readouterr()
    assert audit(["--store", str(store), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert any("earlier than the record's previous event" in f["message"] for f in report["findings"])
    info = status(B, capsys)  # the backdated event is ignored: B stays active
    assert info["status"] == "active" and path.stem in [p["event"] for p in info["ignored_events"]]


def test_event_far_from_its_commit_time_is_refused(store: Path) -> None:
    from eee.governance.events import make_event, write

    write(store, make_event("retract", A, "next week", ME, now=dt.datetime.now(dt.UTC) + dt.timedelta(days=7)))
    git(store, "add", "-A")
    proc = commit(store, "an event from the future")
    assert proc.returncode == 1 and "more than a day from now" in proc.stdout + proc.stderr


# --- status, catalogue and site agree -------------------------------------------------------

R = [f"{i:08x}-1111-4111-8111-{i:012x}" for i in range(1, 15)]
SCENARIO = [
    # (argv of a governance tool, ...) applied in order; every action and every outcome
    ("retract", [R[0], "--reason", "faulty source"]),
    ("supersede", [R[1], R[2], "--reason", "fourth decimal"]),
    ("dispute", [R[3], "--reason", "contested", "--reference", "https://example.org/d/1"]),
    ("dispute", [R[4], "--reason", "contested", "--reference", "https://example.org/d/2"]),
    ("resolve", [R[4], "--outcome", "upheld", "--reason", "it stands"]),
    ("dispute", [R[5], "--reason", "contested", "--reference", "https://example.org/d/3"]),
    ("resolve", [R[5], "--outcome", "retracted", "--reason", "it falls"]),
    ("flag", [R[6], "--rule", "score", "--json-path", "$.evaluation_results[0]", "--reason", "out of range"]),
    ("resolve", [R[6], "--outcome", "corrected", "--replacement", R[7], "--reason", "R7 fixes it"]),
    ("flag", [R[8], "--rule", "score", "--json-path", "$.evaluation_results[0]", "--reason", "out of range"]),
    ("retract", [R[9], "--reason", "by mistake"]),
    ("reinstate", [R[9], "--reason", "the retraction was a mistake"]),
    ("mark-duplicate", [R[10], "--of", R[11], "--reason", "uploaded twice"]),
    ("flag", [R[12], "--rule", "naming", "--json-path", "$.model_info.id", "--reason", "odd name"]),
    ("resolve", [R[12], "--outcome", "upheld", "--reason", "the name is right"]),
]
EXPECTED = {
    R[0]: "retracted",
    R[1]: "superseded",
    R[2]: "active",
    R[3]: "disputed",
    R[4]: "active",
    R[5]: "retracted",
    R[6]: "superseded",
    R[7]: "active",
    R[8]: "flagged",
    R[9]: "active",
    R[10]: "duplicate",
    R[11]: "active",
    R[12]: "active",
    R[13]: "active",
}


def test_status_catalogue_and_site_agree_for_every_action_and_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from eee.catalog.table import build
    from eee.site.cataloguepages import Options, generate
    from eee.site.context import SiteContext
    from eee.store.schemas import default_registry

    repo = make_store(tmp_path)
    for i, uuid in enumerate(R):
        place_record(repo, _doc(f"acme/model-{i}"), record_uuid=uuid)
    git(repo, "add", "-A")
    assert commit(repo, "fourteen records").returncode == 0
    monkeypatch.chdir(repo)
    monkeypatch.setenv("EEE_PYTHON", sys.executable)
    for command, argv in SCENARIO:
        # the records break no rule: each flag accepts nothing, and says so (a warning, exit 2)
        expected = 2 if command == "flag" else 0
        assert run(command, [*argv, "--commit"]) == expected, (command, argv, capsys.readouterr().err)
    assert git(repo, "status", "--porcelain").stdout == ""

    statuses = {u: status(u, capsys) for u in R}
    assert {u: s["status"] for u, s in statuses.items()} == EXPECTED
    assert statuses[R[5]]["last_resolution"]["outcome"] == "retracted"
    assert statuses[R[6]]["last_resolution"]["outcome"] == "corrected"
    assert statuses[R[10]]["duplicate_of"] == R[11]

    table, skipped = build(repo)
    assert skipped == []
    rows = {r["record_uuid"]: r for r in table.to_pylist()}
    assert {u: rows[u]["status"] for u in R} == EXPECTED
    assert rows[R[10]]["is_duplicate"] and rows[R[10]]["duplicate_of"] == R[11]
    assert not rows[R[11]]["is_duplicate"]
    assert {"relation": "IsIdenticalTo", "record": R[10], "role": "original"} in json.loads(rows[R[11]]["relations"])
    assert {"relation": "IsNewVersionOf", "record": R[1]} in json.loads(rows[R[2]]["relations"])
    assert {"relation": "IsPreviousVersionOf", "record": R[7]} in json.loads(rows[R[6]]["relations"])
    assert json.loads(rows[R[8]]["flags"])[0]["rule"] == "score"
    for u in R:
        assert rows[u]["last_resolution"] == (statuses[u]["last_resolution"] or {}).get("outcome")
        assert rows[u]["superseded_by"] == statuses[u]["superseded_by"]

    ctx = SiteContext(repo, default_registry())
    pages = {p.src_uri: p.content for p in generate(ctx, Options()).pages}
    for u in R:
        page = pages[f"catalogue/records/{u}.md"]
        assert f"<li><strong>Status:</strong> <strong>{EXPECTED[u]}</strong></li>" in page, u
        if statuses[u]["last_resolution"]:
            assert f"<li><strong>Last resolution:</strong> {statuses[u]['last_resolution']['outcome']}" in page
    assert (
        '<div class="admonition warning">\n<p class="admonition-title">Flagged</p>'
        in pages[f"catalogue/records/{R[8]}.md"]
    )
    assert (
        '<div class="admonition info">\n<p class="admonition-title">Duplicate</p>'
        in pages[f"catalogue/records/{R[10]}.md"]
    )
    assert "IsNewVersionOf" in pages[f"catalogue/records/{R[2]}.md"]
    assert "IsPreviousVersionOf" in pages[f"catalogue/records/{R[1]}.md"]


def test_one_zero_events_still_pass_the_hooks_and_fold(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eee.governance.events import make_event, write

    write(
        store, make_event("dispute", A, "an old-style event", ME, reference="https://example.org/d/9", schema="1.0.0")
    )
    git(store, "add", "-A")
    proc = commit(store, "a 1.0.0 dispute")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    write(store, make_event("resolve", A, "resolved the 1.0.0 way", ME, schema="1.0.0"))  # no outcome then
    git(store, "add", "-A")
    assert commit(store, "a 1.0.0 resolution").returncode == 0
    assert status(A, capsys)["status"] == "active"


def test_a_plain_copy_of_a_store_validates_its_old_events(store: Path, tmp_path: Path) -> None:
    import shutil

    from eee.governance.events import make_event, write
    from eee.validation.validate import run as validate

    old = dt.datetime.now(dt.UTC) - dt.timedelta(days=30)
    write(store, make_event("retract", A, "a month ago", ME, now=old))
    git(store, "add", "-A")
    assert commit(store, "an old event", "--no-verify").returncode == 0  # as if committed a month ago
    copy = tmp_path / "copy"
    shutil.copytree(store, copy, ignore=shutil.ignore_patterns(".git"))
    assert validate([str(copy / "governance")]).exit_code() == 0


def test_resolve_corrected_with_a_corrected_record_file(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("dispute", [A[:8], "--reason", "wrong model", "--reference", "https://example.org/d/5", "--commit"]) == 0
    source = tmp_path / "corrected.json"
    source.write_text(json.dumps(_doc("meta-llama/Llama-2-7b-chat-hf")))
    argv = [A[:8], "--outcome", "corrected", "--replacement", str(source), "--reason", "the chat model", "--commit"]
    assert run("resolve", argv) == 0
    info = status(A, capsys)
    new = info["superseded_by"]
    assert info["status"] == "superseded" and info["last_resolution"]["replacement"] == new
    assert (store / status(new, capsys)["path"]).is_file()
    assert git(store, "status", "--porcelain").stdout == ""
    files = git(store, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert len(files) == 3 and any(f.startswith("data/wikitext-2/meta-llama/Llama-2-7b-chat-hf/") for f in files)


def test_status_prints_a_derived_relation_on_a_converted_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from eee.governance.relations import derived_from

    doc = _doc("acme/converted-7b")
    doc["source_metadata"] = {"source_type": "evaluation_run", "source_organization_name": "Lab"}
    doc["eval_library"] = {"name": "inspect_ai", "version": "0.3.75"}
    doc["evaluation_id"] = "bench/acme_converted-7b/1742874628.0"
    assert derived_from(doc)
    store = tmp_path / "plain"  # not a git repository: --store names it
    place_record(store, doc, record_uuid=A)
    capsys.readouterr()
    assert status_main([A[:8], "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "relation     IsDerivedFrom Inspect AI log (bench/acme_converted-7b/1742874628.0)" in out
    assert status_main([A[:8], "--store", str(store), "--format", "json"]) == 0
    relations = json.loads(capsys.readouterr().out)["relations"]
    assert relations == [
        {"relation": "IsDerivedFrom", "source": "Inspect AI log", "identifier": "bench/acme_converted-7b/1742874628.0"}
    ]
