"""``eee import``: a generated snapshot with every outcome, through the real hooks, DVC and git."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, git, hook_env, load_example, make_store, sha256
from eee.commands.importer import main as import_main
from eee.reporting.findings import Finding
from eee.store.strictjson import canonical

pytestmark = pytest.mark.slow


ROWS = (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()
FOLDER = "data/qa-bench/acme/widget-7b"
U = {
    name: f"{i:08x}-0000-4000-8000-{i:012x}"
    for i, name in enumerate(
        [
            "plain",
            "case",
            "dot",
            "flagged",
            "present",
            "invalid",
            "broken",
            "sidecar",
            "orphan",
            "canon",
            "moved",
            "twin",
        ],
        start=1,
    )
}


def _record(uuid: str, **changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(load_example("instance", "aggregate.json"))
    doc.pop("detailed_evaluation_results")
    doc["evaluation_id"] = f"run-{uuid[:8]}"
    # each its own run with its own result (records alike but for the id are duplicates)
    doc["evaluation_results"][0]["score_details"]["score"] = int(uuid[:8], 16) / 100
    doc.update(changes)
    return doc


def write_flag(
    root: Path, record: str, rule: str, path: str, reason: str, who: dict[str, str], record_path: str, sha256: str
) -> str:
    """An import's flag event (:func:`eee.imports.run.flag_event`) written as a file; its id."""
    from eee.governance.events import write
    from eee.imports.run import flag_event

    return write(root, flag_event(record, rule, path, reason, who, record_path, sha256)).stem


def _put(root: Path, rel: str, data: bytes) -> str:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return rel


def make_snapshot(root: Path, present: bytes) -> dict[str, str]:
    """A datastore snapshot with every outcome; returns source path -> expected outcome."""
    out: dict[str, str] = {}
    out[_put(root, f"{FOLDER}/{U['plain']}.json", canonical(_record(U["plain"])))] = "imported"
    twin = _record(U["plain"], evaluation_id="the same result again")  # a duplicate of plain: flagged
    out[_put(root, f"{FOLDER}/{U['twin']}.json", canonical(twin))] = "flagged"
    out[_put(root, f"data/qa-bench/Acme/widget-7b/{U['case']}.json", canonical(_record(U["case"])))] = "relocated"
    out[_put(root, f"data/qa-bench./acme/widget-7b/{U['dot']}.json", canonical(_record(U["dot"])))] = "relocated"
    bad = _record(U["flagged"])
    bad["evaluation_results"][0]["score_details"]["score"] = 1.5  # outside [0, 1]
    out[_put(root, f"{FOLDER}/{U['flagged']}.json", canonical(bad))] = "flagged"
    out[_put(root, f"{FOLDER}/{U['present']}.json", present)] = "already_present"
    invalid = _record(U["invalid"])
    del invalid["evaluation_results"]
    out[_put(root, f"{FOLDER}/{U['invalid']}.json", canonical(invalid))] = "refused"
    out[_put(root, f"{FOLDER}/{U['broken']}.json", b'{"schema_version": "0.3.0",')] = "refused"
    out[_put(root, "data/README.md", b"a stray file\n")] = "refused"
    out[_put(root, f"{FOLDER}/{U['orphan']}_samples.jsonl", ROWS)] = "refused"
    out[_put(root, f"{FOLDER}/not-a-uuid.json", canonical(_record(U["canon"])))] = "refused"
    agg = copy.deepcopy(load_example("instance", "aggregate.json"))
    side_rel = f"{FOLDER}/{U['sidecar']}_samples.jsonl"
    agg["detailed_evaluation_results"].update(
        file_path=side_rel, checksum=hashlib.sha256(ROWS).hexdigest(), total_rows=ROWS.count(b"\n")
    )
    out[_put(root, f"{FOLDER}/{U['sidecar']}.json", canonical(agg))] = "imported"
    out[_put(root, side_rel, ROWS)] = "imported"
    # a record with its sidecar in a folder not from model_info.id: both move, and the
    # record's file_path (its old place) is flagged
    moved = copy.deepcopy(agg)
    old_side = f"data/qa-bench/ACME/widget-7b/{U['moved']}_samples.jsonl"
    rows = ROWS.replace(json.dumps(agg["evaluation_id"]).encode(), b'"another-run"')  # another run, not a duplicate
    moved["evaluation_id"] = "another-run"
    moved["detailed_evaluation_results"].update(file_path=old_side, checksum=hashlib.sha256(rows).hexdigest())
    out[_put(root, f"data/qa-bench/ACME/widget-7b/{U['moved']}.json", canonical(moved))] = "flagged"
    out[_put(root, old_side, rows)] = "relocated"
    return out


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in hook_env().items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def store(tmp_path: Path, env: None, request: pytest.FixtureRequest) -> Path:
    """A store with one record; its sidecar_git_max_bytes the default (the snapshot's sidecars
    go to git), or 0 when a test asks (``indirect`` parameter): they go to DVC."""
    repo = make_store(tmp_path, with_dvc=True, sidecar_git_max_bytes=getattr(request, "param", None))
    present = canonical(_record(U["present"]))
    _put(repo, f"{FOLDER}/{U['present']}.json", present)
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-q", "-m", "a record already in the store", check=False, env=hook_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return repo


def _import(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = import_main([*args, "--format", "json", "--no-progress"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else {"stderr": captured.err}


def _present_bytes(store: Path) -> bytes:
    return (store / FOLDER / f"{U['present']}.json").read_bytes()


@pytest.mark.parametrize("store", [None, 0], ids=["sidecars-in-git", "sidecars-in-dvc"], indirect=True)
def test_import_of_a_snapshot_with_every_outcome(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snapshot = tmp_path / "snapshot"
    expected = make_snapshot(snapshot, _present_bytes(store))
    head_before = git(store, "rev-parse", "HEAD").stdout.strip()
    in_dvc = (store / "governance" / "settings.yaml").exists()

    code, report = _import([str(snapshot), "--store", str(store), "--commit"], capsys)
    assert code == 2, report  # something was refused
    outcomes = {f["source"]: f["outcome"] for f in report["files"]}
    assert outcomes == expected
    counts = report["counts"]
    assert (
        counts["total"]
        == len(expected)
        == sum(counts[o] for o in ("imported", "relocated", "flagged", "already_present", "refused"))
    )
    assert counts == {"imported": 3, "relocated": 3, "flagged": 3, "already_present": 1, "refused": 5, "total": 15}
    refused = {f["source"]: f["reason"] for f in report["files"] if f["outcome"] == "refused"}
    assert "schema" in refused[f"{FOLDER}/{U['invalid']}.json"]
    assert "JSON" in refused[f"{FOLDER}/{U['broken']}.json"]
    assert "without its record" in refused[f"{FOLDER}/{U['orphan']}_samples.jsonl"]

    # the store: byte-identical files at their own or canonical paths, committed
    by_source = {f["source"]: f for f in report["files"]}
    for source, outcome in expected.items():
        if outcome in ("imported", "relocated", "flagged"):
            item = by_source[source]
            if item["kind"] == "sidecar" and in_dvc:
                assert (store / (item["store"] + ".dvc")).is_file()
                assert git(store, "ls-files", item["store"] + ".dvc").stdout.strip()
            else:
                assert (store / item["store"]).read_bytes() == (snapshot / source).read_bytes()
                assert git(store, "ls-files", "--error-unmatch", item["store"], check=False).returncode == 0
    assert by_source[f"data/qa-bench/Acme/widget-7b/{U['case']}.json"]["store"] == f"{FOLDER}/{U['case']}.json"
    assert by_source[f"data/qa-bench./acme/widget-7b/{U['dot']}.json"]["store"] == f"{FOLDER}/{U['dot']}.json"
    assert any((tmp_path / "remote").rglob("*")) == in_dvc, "a sidecar in DVC was pushed to the local remote"
    assert git(store, "status", "--porcelain").stdout.strip() == ""
    commits = git(store, "rev-list", f"{head_before}..HEAD").stdout.split()
    assert len(commits) == len(report["commits"]) >= 2  # batches, then the manifest

    moved = by_source[f"data/qa-bench/ACME/widget-7b/{U['moved']}.json"]
    assert moved["store"] == f"{FOLDER}/{U['moved']}.json"
    assert [(f["rule"], f["path"]) for f in moved["flags"]] == [
        ("sidecar-path", "$.detailed_evaluation_results.file_path")
    ]
    assert by_source[f"data/qa-bench/ACME/widget-7b/{U['moved']}_samples.jsonl"]["store"] == (
        f"{FOLDER}/{U['moved']}_samples.jsonl"
    )

    twin = by_source[f"{FOLDER}/{U['twin']}.json"]["flags"]
    assert [(f["rule"], f["path"]) for f in twin] == [("duplicates", "$")] and U["plain"] in twin[0]["message"]

    # the ledger: one flag naming the rule and the JSON path
    flags = by_source[f"{FOLDER}/{U['flagged']}.json"]["flags"]
    assert [(f["rule"], f["path"]) for f in flags] == [("score", "$.evaluation_results[0].score_details.score")]
    event_file = store / "governance" / "events" / f"{flags[0]['event']}.yaml"
    from eee.governance.events import load

    event = load(event_file)
    assert (event["action"], event["record"], event["rule"], event["path"]) == (
        "flag",
        U["flagged"],
        "score",
        "$.evaluation_results[0].score_details.score",
    )
    # the flag names the record's path and the sha256 of the bytes it accepts
    record_path = by_source[f"{FOLDER}/{U['flagged']}.json"]["store"]
    assert (event["record_path"], event["sha256"]) == (record_path, sha256(store / record_path))

    # the manifest: committed, every file with its outcome and sha256
    from eee.governance.manifests import loads

    manifest = loads((store / report["manifest"]).read_text())
    assert manifest["counts"] == counts
    assert "revision" not in manifest  # a folder has none
    listed = {f["source"]: f for f in manifest["files"]}
    assert {s: f["outcome"] for s, f in listed.items()} == expected
    assert listed[f"{FOLDER}/{U['plain']}.json"]["sha256"] == sha256(snapshot / FOLDER / f"{U['plain']}.json")
    assert listed[f"{FOLDER}/{U['flagged']}.json"]["flags"][0]["event"] == flags[0]["event"]

    # the audit is clean
    from eee.validation.audit import audit

    summary = audit(head_before, "HEAD", store)
    assert summary.errors == 0, [f.one_line() for r in summary.results for f in r.findings]

    # importing twice adds nothing
    code, again = _import([str(snapshot), "--store", str(store), "--commit"], capsys)
    assert again["counts"]["already_present"] == 10 and again["counts"]["refused"] == 5
    assert again["manifest"] is None and again["commits"] == []
    assert git(store, "rev-list", "HEAD").stdout.split()[0] == commits[0]
    assert git(store, "status", "--porcelain").stdout.strip() == ""


def test_a_git_revision_works_like_a_folder(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = tmp_path / "snapshot"
    make_snapshot(snapshot, _present_bytes(store))
    git(snapshot, "init", "-q", "-b", "main")
    git(snapshot, "add", "-A")
    git(snapshot, "-c", "user.name=S", "-c", "user.email=s@example.org", "commit", "-q", "-m", "snapshot")
    rev = git(snapshot, "rev-parse", "HEAD").stdout.strip()
    shutil.rmtree(snapshot / "data")  # the revision is read from git's object store, not the work tree

    code, from_git = _import([str(snapshot), "--source-ref", "main", "--store", str(store), "--dry-run"], capsys)
    git(snapshot, "checkout", "-q", "--", "data")
    code2, from_folder = _import([str(snapshot), "--store", str(store), "--dry-run"], capsys)
    assert from_git["revision"] == rev and from_folder["revision"] is None
    assert code == code2 == 2
    assert from_git["counts"] == from_folder["counts"]
    assert from_git["files"] == from_folder["files"]
    assert git(store, "status", "--porcelain").stdout.strip() == "", "a dry run writes nothing"

    code, done = _import([str(snapshot), "--source-ref", rev, "--store", str(store), "--commit"], capsys)
    from eee.governance.manifests import loads

    manifest = loads((store / done["manifest"]).read_text())
    assert manifest["revision"] == rev and manifest["counts"] == from_git["counts"]


def test_batches_of_n_records(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = tmp_path / "snapshot"
    for name in ("plain", "case", "dot"):
        _put(snapshot, f"{FOLDER}/{U[name]}.json", canonical(_record(U[name])))
    code, report = _import([str(snapshot), "--store", str(store), "--commit", "--batch", "2"], capsys)
    assert code == 0, report
    assert len(report["commits"]) == 3  # 2 + 1 records, then the manifest
    subjects = git(store, "log", "--format=%s", "-3").stdout.splitlines()
    assert subjects[0].startswith(f"Import {report['import']}: manifest")
    assert subjects[1].startswith("Import records 3-3: 1 record") and subjects[2].startswith(
        "Import records 1-2: 2 records"
    )


def test_usage_errors(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def usage(*argv: str) -> str:
        with pytest.raises(SystemExit) as exc:
            import_main(list(argv))
        assert exc.value.code == 64
        captured = capsys.readouterr()
        assert captured.out == ""
        return captured.err

    assert "no such folder or repository" in usage(str(tmp_path / "missing"), "--store", str(store))
    (tmp_path / "empty").mkdir()
    assert "no data/ folder" in usage(str(tmp_path / "empty"), "--store", str(store))
    assert "not a commit" in usage(str(tmp_path / "empty"), "--store", str(store), "--source-ref", "nope")
    assert "not allowed with argument" in usage(str(store), "--dry-run", "--commit")
    assert "at least 1" in usage(str(store), "--batch", "0")


# --- the gate accepts exactly the flagged findings ------------------------------------


def test_accept_flagged_is_exact() -> None:
    from eee.rules.flags import Flag, accept_flagged, content_ids

    uuid = U["flagged"]
    score = Finding(f"{FOLDER}/{uuid}.json", "$.evaluation_results[0].score_details.score", "out", check="score")
    other = Finding(f"{FOLDER}/{uuid}.json", "$.evaluation_results[1].score_details.score", "out", check="score")
    elsewhere = Finding(
        f"{FOLDER}/{U['plain']}.json", "$.evaluation_results[0].score_details.score", "out", check="score"
    )
    same_path_other_rule = Finding(f"abc1234567:{FOLDER}/{uuid}.json", score.pointer, "x", check="results")
    ids = content_ids(b"the record's bytes")
    flags = {uuid: [Flag("score", score.pointer, uuid, score.file, ids[0], None, "e")]}
    located = {f.file: (f.file.split(":")[-1], ids) for f in (score, other, elsewhere, same_path_other_rule)}
    kept, accepted = accept_flagged(
        [score, other, elsewhere, same_path_other_rule], lambda u: flags.get(u, []), located.get
    )
    assert accepted == [score]
    assert kept == [other, elsewhere, same_path_other_rule]


def _commit(repo: Path, message: str) -> Any:
    return git(repo, "commit", "-m", message, check=False, env=hook_env())


def test_gate_accepts_a_record_only_with_exactly_its_flags(store: Path) -> None:
    who = {"name": "Test Contributor", "email": "contributor@example.org"}
    uuid = U["flagged"]
    bad = _record(uuid)
    bad["evaluation_results"][0]["score_details"]["score"] = 1.5
    rel = _put(store, f"{FOLDER}/{uuid}.json", canonical(bad))
    git(store, "add", rel)
    proc = _commit(store, "out of bounds, no flag")
    assert proc.returncode == 1 and "outside the declared range" in proc.stdout + proc.stderr

    bound = (rel, sha256(store / rel))
    wrong = write_flag(store, uuid, "score", "$.evaluation_results[1].score_details.score", "wrong path", who, *bound)
    git(store, "add", "-A")
    proc = _commit(store, "flag on another path")
    assert proc.returncode == 1 and "outside the declared range" in proc.stdout + proc.stderr

    (store / "governance" / "events" / f"{wrong}.yaml").unlink()
    git(store, "add", "-A")
    write_flag(
        store, uuid, "score", "$.evaluation_results[0].score_details.score", "HELM's -1 means missing", who, *bound
    )
    git(store, "add", "-A")
    proc = _commit(store, "flagged: accepted")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    # the same flag does not let another error through
    worse = _record(U["plain"])
    worse["evaluation_results"][0]["score_details"]["score"] = 1.5
    worse["evaluation_results"][1]["score_details"]["score"] = 2.5
    rel = _put(store, f"{FOLDER}/{U['plain']}.json", canonical(worse))
    bound = (rel, sha256(store / rel))
    write_flag(store, U["plain"], "score", "$.evaluation_results[0].score_details.score", "one of two", who, *bound)
    git(store, "add", "-A")
    proc = _commit(store, "one flag, two errors")
    assert proc.returncode == 1 and "evaluation_results[1]" in proc.stdout + proc.stderr


def test_a_manifest_is_checked_and_immutable(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = tmp_path / "snapshot"
    _put(snapshot, f"{FOLDER}/{U['plain']}.json", canonical(_record(U["plain"])))
    code, report = _import([str(snapshot), "--store", str(store), "--commit"], capsys)
    assert code == 0, report
    manifest = store / report["manifest"]
    text = manifest.read_text()

    manifest.write_text(text.replace('outcome: "imported"', 'outcome: "relocated"'))
    git(store, "add", "-A")
    proc = _commit(store, "edit a manifest")
    assert proc.returncode == 1 and "import manifest" in proc.stdout + proc.stderr
    git(store, "checkout", "HEAD", "--", report["manifest"])

    # a new manifest naming a file the commit does not hold is refused
    other = manifest.with_name(report["import"][:-6] + "abcdef.yaml")
    doc = text.replace(report["import"], other.stem).replace(
        f'{U["plain"]}.json"\n    sha256', f'{U["canon"]}.json"\n    sha256', 1
    )
    other.write_text(doc.replace(f'store: "{FOLDER}/{U["plain"]}.json"', f'store: "{FOLDER}/{U["canon"]}.json"'))
    git(store, "add", "-A")
    proc = _commit(store, "a manifest naming nothing")
    assert proc.returncode == 1 and "not in the tree" in proc.stdout + proc.stderr


def test_the_audit_accepts_a_record_flagged_with_it_or_later(store: Path) -> None:
    from eee.validation.audit import audit

    who = {"name": "Test Contributor", "email": "contributor@example.org"}
    start = git(store, "rev-parse", "HEAD").stdout.strip()
    bad = _record(U["flagged"])
    bad["evaluation_results"][0]["score_details"]["score"] = 1.5
    rel = _put(store, f"{FOLDER}/{U['flagged']}.json", canonical(bad))
    git(store, "add", rel)
    git(store, "commit", "-q", "--no-verify", "-m", "skipping the hooks")

    def errors() -> list[str]:
        return [f.one_line() for r in audit(start, "HEAD", store).results for f in r.findings if f.severity == "error"]

    assert any("outside the declared range" in line for line in errors())
    bound = (rel, sha256(store / rel))
    write_flag(store, U["flagged"], "score", "$.evaluation_results[0].score_details.score", "HELM's -1", who, *bound)
    git(store, "add", "-A")
    proc = _commit(store, "flag it afterwards")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert errors() == []


def test_refusals_name_their_reason(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = tmp_path / "snapshot"
    agg = copy.deepcopy(load_example("instance", "aggregate.json"))
    side = f"{FOLDER}/{U['sidecar']}_samples.jsonl"
    agg["detailed_evaluation_results"].update(file_path=side, checksum="0" * 64, total_rows=ROWS.count(b"\n"))
    _put(snapshot, f"{FOLDER}/{U['sidecar']}.json", canonical(agg))
    _put(snapshot, side, ROWS)
    _put(snapshot, f"{FOLDER}/{U['orphan']}_samples.jsonl.dvc", b"outs:\n- md5: 0\n")
    taken = _record(U["present"], evaluation_id="another run")  # the store holds this uuid with other bytes
    _put(snapshot, f"{FOLDER}/{U['present']}.json", canonical(taken))
    _put(snapshot, f"data/{U['plain']}.json", canonical(_record(U["plain"])))  # no benchmark folder
    code, report = _import([str(snapshot), "--store", str(store), "--dry-run"], capsys)
    assert code == 2
    reasons = {f["source"]: f.get("reason", "") for f in report["files"]}
    assert all(f["outcome"] == "refused" for f in report["files"]), report["files"]
    assert (
        "sha256" in reasons[f"{FOLDER}/{U['sidecar']}.json"] and "sidecar" in reasons[f"{FOLDER}/{U['sidecar']}.json"]
    )
    assert "its record" in reasons[side]
    assert "DVC pointer" in reasons[f"{FOLDER}/{U['orphan']}_samples.jsonl.dvc"]
    assert "already holds another record" in reasons[f"{FOLDER}/{U['present']}.json"]
    assert "no benchmark folder" in reasons[f"data/{U['plain']}.json"]
    assert report["counts"] == {
        "imported": 0,
        "relocated": 0,
        "flagged": 0,
        "already_present": 0,
        "refused": 5,
        "total": 5,
    }


def test_an_unusable_source_name_is_one_files_outcome(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A control character, a byte that is not UTF-8 or a bidirectional override in a source
    folder name refuses that file, shown escaped; the rest of its batch is committed."""
    snapshot = tmp_path / "snapshot"
    _put(snapshot, f"{FOLDER}/{U['plain']}.json", canonical(_record(U["plain"])))
    bad = _record(U["flagged"])
    bad["evaluation_results"][0]["score_details"]["score"] = 1.5  # flagged: its source name reaches the ledger
    _put(snapshot, f"data/qa-bench/ac\x01me/widget-7b/{U['flagged']}.json", canonical(bad))
    _put(snapshot, f"data/qa-bench/acme/widget\u202e7b/{U['case']}.json", canonical(_record(U["case"])))
    raw = os.fsencode(snapshot) + b"/data/qa-bench/\xffacme/widget-7b"
    os.makedirs(raw)
    with open(raw + f"/{U['dot']}.json".encode(), "wb") as handle:
        handle.write(canonical(_record(U["dot"])))
    code, report = _import([str(snapshot), "--store", str(store), "--commit"], capsys)
    assert code == 2, report
    outcomes = {f["source"]: (f["outcome"], f.get("reason", "")) for f in report["files"]}
    assert outcomes[f"{FOLDER}/{U['plain']}.json"] == ("imported", "")
    for shown, what in [
        (f"data/qa-bench/ac\\x01me/widget-7b/{U['flagged']}.json", "U+0001"),
        (f"data/qa-bench/acme/widget\\u202e7b/{U['case']}.json", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        (f"data/qa-bench/\\xffacme/widget-7b/{U['dot']}.json", "not valid UTF-8"),
    ]:
        outcome, reason = outcomes[shown]
        assert outcome == "refused" and "unusable source name" in reason and what in reason, (shown, reason)
    assert report["counts"]["refused"] == 3 and report["counts"]["imported"] == 1
    assert git(store, "ls-files", "--error-unmatch", f"{FOLDER}/{U['plain']}.json", check=False).returncode == 0
    assert git(store, "status", "--porcelain").stdout == ""
    from eee.governance.manifests import loads

    listed = {f["source"] for f in loads((store / report["manifest"]).read_text())["files"]}
    assert listed == set(outcomes)
    # the text report shows the names escaped, never the raw characters
    assert import_main([str(snapshot), "--store", str(store), "--dry-run", "--no-progress"]) == 2
    out = capsys.readouterr().out
    assert "ac\\x01me" in out and "\x01" not in out and "\u202e" not in out


def test_an_import_needs_no_scratch_store(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tempfile

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a temporary file or folder was asked for")

    snapshot = tmp_path / "snapshot"
    for name in ("plain", "case"):
        _put(snapshot, f"data/qa-bench/Acme/widget-7b/{U[name]}.json", canonical(_record(U[name])))
    with monkeypatch.context() as patched:
        for name in ("mkdtemp", "TemporaryDirectory", "mkstemp", "NamedTemporaryFile", "TemporaryFile"):
            patched.setattr(tempfile, name, refuse)
        code, dry = _import([str(snapshot), "--store", str(store), "--dry-run"], capsys)
        assert code == 0 and dry["counts"]["relocated"] == 2
        code, done = _import([str(snapshot), "--store", str(store), "--commit"], capsys)
        assert code == 0 and len(done["commits"]) == 2, done
    assert not list(store.rglob("*.tmp"))


def test_the_manifest_hook_reads_the_index_not_the_work_tree(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the imports hook checks is what will be committed: a staged manifest and record,
    whatever the work tree holds beside them."""
    import subprocess
    import sys

    snapshot = tmp_path / "snapshot"
    rel = _put(snapshot, f"{FOLDER}/{U['plain']}.json", canonical(_record(U["plain"])))
    code, report = _import([str(snapshot), "--store", str(store)], capsys)  # staged, not committed
    assert code == 0, report
    manifest = store / report["manifest"]
    good = manifest.read_text()

    def hook() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "eee.hooks", "imports", "--", report["manifest"]],
            cwd=store,
            capture_output=True,
            text=True,
            env=hook_env(),
        )

    # the work tree is broken (a manifest that does not add up, the record gone); the index is fine
    manifest.write_text(good.replace('outcome: "imported"', 'outcome: "relocated"'))
    (store / rel).unlink()
    proc = hook()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the other way round: the staged manifest is broken, the work tree is fine
    git(store, "add", report["manifest"])
    manifest.write_text(good)
    git(store, "checkout", "--", rel)
    proc = hook()
    assert proc.returncode == 1 and "counts 0 relocated files, the list holds 1" in proc.stdout
