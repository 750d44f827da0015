"""One uuid, one record, for ever (issue 24.2): the rule ``uuid``, decided by one function
(:mod:`eee.rules.uuids`) for the gate, the audit (git objects only), ``eee import``,
``eee convert --uuid``, ``eee supersede --uuid`` and the governance tools. Real git, the
real hooks, a bare remote where publication matters."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXED_UUID, commit, git, hook_env, make_store, place_record, record_of
from eee.rules.uuids import merged, uuid_findings

pytestmark = pytest.mark.slow

A = FIXED_UUID
B = "1f0e9d8c-7b6a-4f5e-8d4c-3b2a1f0e9d8c"


def eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


def _place(repo: Path, model: str, uuid: str = A, score: float = 8.0) -> str:
    return place_record(repo, record_of(model, score), record_uuid=uuid).relative_to(repo).as_posix()


def _commit_all(repo: Path, message: str, *extra: str) -> subprocess.CompletedProcess[str]:
    git(repo, "add", "-A")
    return commit(repo, message, *extra)


def _audit_errors(repo: Path, *args: str) -> list[dict]:
    proc = eee(repo, "audit", "--format", "json", *args)
    return [f for f in json.loads(proc.stdout)["findings"] if f["severity"] == "error"]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    repo = make_store(tmp_path)
    _place(repo, "acme/widget-7b")
    assert _commit_all(repo, "the first record").returncode == 0
    return repo


# --- the one function ------------------------------------------------------------------------


def test_the_rule_names_the_holder_and_lets_the_first_new_record_stay() -> None:
    one, two = f"data/b/acme/m/{A}.json", f"data/c/acme/m/{A}.json"
    old = f"data/a/acme/m/{A}.json"
    # against a record held elsewhere: reported, naming it
    (found,) = uuid_findings([one], merged({A: [old]}))
    assert found.check == "uuid" and found.file == one and old in found.message
    # two new records of one uuid: the first (in path order) may stay, the later one is reported
    (found,) = uuid_findings([two, one], merged({A: [one, two]}))
    assert found.file == two and one in found.message
    # the same path (a record and its own holder), a sidecar, another file: no finding
    assert uuid_findings([one, f"data/b/acme/m/{A}_samples.jsonl", "README.md"], merged({A: [one]})) == []
    # a uuid spelt in capitals holds the lowercase one
    assert uuid_findings([one], merged({A: [f"data/a/acme/m/{A.upper()}.json"]}))


# --- the gate ----------------------------------------------------------------------------------


@pytest.mark.parametrize("before", ["nothing", "retract", "supersede"])
def test_the_gate_refuses_a_taken_uuid_in_another_folder(store: Path, before: str) -> None:
    """Retracted and superseded records keep their uuid for ever."""
    if before != "nothing":
        if before == "supersede":
            _place(store, "acme/widget-7b-fixed", uuid=B, score=9.0)
            assert _commit_all(store, "the correction").returncode == 0
        args = [B] if before == "supersede" else []
        proc = eee(store, before, A, *args, "--reason", "a test", "--commit")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    impostor = _place(store, "evil/other-1b", score=5.0)
    refused = _commit_all(store, "an impostor")
    assert refused.returncode == 1
    out = refused.stdout + refused.stderr
    assert f"{impostor}::$: [uuid] uuid {A} is already used by data/wikitext-2/acme/widget-7b/{A}.json" in out
    assert git(store, "log", "--format=%s", "-1").stdout.strip() != "an impostor"


def test_the_gate_refuses_two_new_records_of_one_uuid(tmp_path: Path) -> None:
    repo = make_store(tmp_path)
    first, second = sorted([_place(repo, "acme/widget-7b"), _place(repo, "zeta/widget-7b", score=6.0)])
    refused = _commit_all(repo, "two records, one uuid")
    assert refused.returncode == 1
    out = refused.stdout + refused.stderr
    assert f"{second}::$: [uuid]" in out and f"{first}::$: [uuid]" not in out


def test_the_gate_asks_git_when_the_duplicates_index_cannot_answer(store: Path) -> None:
    """A duplicates index that cannot be opened (here: a folder in its place) is not waited
    for: git's index is searched instead, and the impostor is still refused."""
    index = store / ".git" / "eee-duplicates.sqlite"
    index.unlink()
    index.mkdir()
    _place(store, "evil/other-1b", score=5.0)
    refused = _commit_all(store, "an impostor")
    assert refused.returncode == 1 and "[uuid]" in refused.stdout + refused.stderr


def test_an_index_built_before_the_uuid_index_is_scanned_then_indexed(store: Path) -> None:
    """A duplicates index of an older clone has no index by uuid: the gate scans its table
    (never builds it in a hook), and `eee dedup --index` adds it."""
    from eee.governance.duplicates import DuplicateIndex

    path = store / ".git" / "eee-duplicates.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("DROP INDEX records_uuid")
    _place(store, "evil/other-1b", score=5.0)
    refused = _commit_all(store, "an impostor")
    assert refused.returncode == 1 and "[uuid]" in refused.stdout + refused.stderr
    index = DuplicateIndex(store)
    try:
        assert not index.has_uuid_index()
    finally:
        index.close()
    assert eee(store, "dedup", "--index").returncode == 0
    index = DuplicateIndex(store)
    try:
        assert index.has_uuid_index() and index.paths_of([A])[A] == [f"data/wikitext-2/acme/widget-7b/{A}.json"]
    finally:
        index.close()


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A contributor's clone of a store on a bare remote (its branch tracks origin/main)."""
    origin = make_store(tmp_path, name="origin")
    bare = tmp_path / "store.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    work = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    for key, value in (("user.name", "C"), ("user.email", "c@example.org"), ("commit.gpgsign", "false")):
        git(work, "config", key, value)
    assert eee(work, "gate", "install").returncode == 0
    return work


def test_an_unpublished_record_moved_by_amend_or_reset_keeps_its_uuid(clone: Path) -> None:
    """An amend or a reset of a commit never pushed leaves no record behind: the uuid is free
    for the commit that replaces it; once pushed, it is taken for ever."""
    rel = _place(clone, "acme/widget-7b")
    assert _commit_all(clone, "a record").returncode == 0
    moved = "data/perplexity/" + rel.split("/", 2)[2]
    (clone / moved).parent.mkdir(parents=True)
    git(clone, "mv", rel, moved)
    amended = commit(clone, "a record, elsewhere", "--amend")
    assert amended.returncode == 0, amended.stdout + amended.stderr
    git(clone, "reset", "-q", "--hard", "HEAD~")  # never pushed: reset away
    again = _place(clone, "acme/widget-7b")
    assert _commit_all(clone, "the record again").returncode == 0, again
    assert _audit_errors(clone) == []
    git(clone, "push", "-q", "origin", "main")
    _place(clone, "evil/other-1b", score=5.0)
    refused = _commit_all(clone, "an impostor")
    assert refused.returncode == 1 and f"uuid {A} is already used by {again}" in refused.stdout + refused.stderr


# --- the audit (and the server gate, which runs it) ---------------------------------------------


def test_the_audit_reads_git_objects_only(store: Path) -> None:
    """An impostor committed past the gate is reported by the audit, whatever the caches in
    the git directory say: here both duplicates indexes are emptied after a first audit."""
    impostor = _place(store, "evil/other-1b", score=5.0)
    assert _commit_all(store, "an impostor", "--no-verify").returncode == 0
    (first,) = [f for f in _audit_errors(store) if f["check"] == "uuid"]
    assert first["file"].endswith(f":{impostor}")
    for name in ("eee-duplicates.sqlite", "eee-duplicates-audit.sqlite"):
        path = store / ".git" / name
        if path.exists():
            with sqlite3.connect(path) as db:
                db.execute("DELETE FROM records")
    assert [f["file"] for f in _audit_errors(store) if f["check"] == "uuid"] == [first["file"]]


def test_the_audit_keeps_a_deleted_records_uuid_taken(store: Path) -> None:
    """A record deleted past the gate (an error of its own) leaves its uuid taken: a later
    record under it is reported, naming the deleted one."""
    original = f"data/wikitext-2/acme/widget-7b/{A}.json"
    git(store, "rm", "-q", original)
    assert commit(store, "delete it", "--no-verify").returncode == 0
    impostor = _place(store, "evil/other-1b", score=5.0)
    assert _commit_all(store, "reuse its uuid", "--no-verify").returncode == 0
    errors = _audit_errors(store)
    assert any(f["check"] == "immutable" and f["file"].endswith(original) for f in errors)
    (uuid,) = [f for f in errors if f["check"] == "uuid"]
    assert uuid["file"].endswith(impostor) and original in uuid["message"]


def test_the_audit_holds_published_records_against_an_unpublished_range(clone: Path) -> None:
    """The records of the published commits an unpublished range grew from hold their uuids,
    even when the range deleted them first."""
    original = _place(clone, "acme/widget-7b")
    assert _commit_all(clone, "a record").returncode == 0
    git(clone, "push", "-q", "origin", "main")
    git(clone, "rm", "-q", original)
    assert commit(clone, "delete it", "--no-verify").returncode == 0
    _place(clone, "evil/other-1b", score=5.0)
    assert _commit_all(clone, "reuse its uuid", "--no-verify").returncode == 0
    uuid = [f for f in _audit_errors(clone, "--from", "origin/main") if f["check"] == "uuid"]
    assert len(uuid) == 1 and original in uuid[0]["message"]


# --- the tools ---------------------------------------------------------------------------------


def test_retract_never_acts_on_an_impostor(store: Path) -> None:
    _place(store, "evil/other-1b", score=5.0)
    assert _commit_all(store, "an impostor", "--no-verify").returncode == 0
    for args in ([A], [A[:8]]):
        proc = eee(store, "retract", *args, "--reason", "which one?", "--commit")
        assert proc.returncode == 1
        assert f"record {A} names 2 records" in proc.stderr and "[uuid]" not in proc.stdout
    assert not (store / "governance" / "events").exists() or not list((store / "governance" / "events").iterdir())
    assert eee(store, "status", A).returncode == 1


def test_supersede_with_a_taken_uuid_is_refused_before_writing(store: Path, tmp_path: Path) -> None:
    _place(store, "acme/widget-7b-fixed", uuid=B, score=9.0)
    assert _commit_all(store, "another record").returncode == 0
    corrected = tmp_path / "corrected.json"
    corrected.write_text(json.dumps(record_of("acme/widget-7b", 8.5)))
    before = git(store, "status", "--porcelain").stdout
    proc = eee(store, "supersede", A, str(corrected), "--uuid", B, "--reason", "fixed", "--commit")
    assert proc.returncode == 1 and f"uuid {B} is already used by" in proc.stderr
    assert git(store, "status", "--porcelain").stdout == before


def test_import_refuses_a_taken_uuid_instead_of_relocating_it(store: Path, tmp_path: Path) -> None:
    """A source file whose uuid the store holds at another path: the identical record is
    already present; any other file under that uuid is refused with the reason."""
    from eee.store.strictjson import canonical

    source = tmp_path / "snapshot"
    same = (store / f"data/wikitext-2/acme/widget-7b/{A}.json").read_bytes()
    (source / "data/perplexity/acme/widget-7b").mkdir(parents=True)
    (source / f"data/perplexity/acme/widget-7b/{A}.json").write_bytes(same)  # the very record, elsewhere
    (source / "data/wikitext-2/evil/other-1b").mkdir(parents=True)
    other = canonical(record_of("evil/other-1b", 5.0))
    (source / f"data/wikitext-2/evil/other-1b/{A}.json").write_bytes(other)
    proc = eee(store, "import", str(source), "--dry-run", "--format", "json")
    report = json.loads(proc.stdout)
    outcomes = {f["source"]: (f["outcome"], f.get("reason", "")) for f in report["files"]}
    assert outcomes[f"data/perplexity/acme/widget-7b/{A}.json"][0] == "already_present"
    outcome, reason = outcomes[f"data/wikitext-2/evil/other-1b/{A}.json"]
    assert outcome == "refused"
    assert f"uuid {A} is already used by data/wikitext-2/acme/widget-7b/{A}.json" in reason


def test_tree_records_find_what_a_walk_of_every_tree_finds(tmp_path: Path) -> None:
    """The audit's holders (:class:`eee.rules.uuids.TreeRecords`): the first tree listed
    whole, the others as git's diff from it; each gives, for the uuids asked, exactly the
    record paths a walk of its whole listing gives (moves, deletions, a file that becomes a
    folder, an upper-case name, a symbolic link)."""
    from eee.rules.uuids import TreeRecords, by_uuid

    repo = make_store(tmp_path, hooks=False)
    c = "2c2c2c2c-1111-4222-8333-444444444444"
    upper = "3D3D3D3D-1111-4222-8333-444444444444"
    revs = []

    def snap(message: str) -> None:
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
        revs.append(git(repo, "rev-parse", "HEAD").stdout.strip())

    a = _place(repo, "acme/one", A)
    two = _place(repo, "acme/two", B)
    snap("two records")
    moved = repo / a.replace("acme/one", "acme/moved")
    moved.parent.mkdir(parents=True)
    (repo / a).rename(moved)
    _place(repo, "acme/three", c)
    snap("a move, a new one")
    (repo / "data" / "x" / "acme" / "m").mkdir(parents=True)
    (repo / "data" / "x" / "acme" / "m" / f"{upper}.json").write_text("{}\n")
    (repo / "data" / "x" / "acme" / "m" / f"{B}.json").symlink_to(f"{upper}.json")
    snap("an upper-case name and a link")
    git(repo, "rm", "-q", "-r", "data/x")
    (repo / "data" / "x").write_text("now a file\n")
    snap("the folder becomes a file")
    wanted = [A, B, c, upper.lower(), "9e9e9e9e-1111-4222-8333-444444444444"]
    for order, find_max in ((revs, 16), (list(reversed(revs)), 16), (revs, 0), (list(reversed(revs)), 0)):
        records = TreeRecords(repo)
        records.FIND_MAX = find_max  # 0: the whole listing's names indexed, as for an import's many uuids
        for rev in order:
            listing = git(repo, "ls-tree", "-r", "--name-only", f"{rev}:data").stdout.split()
            walked = by_uuid(f"data/{p}" for p in listing)
            expected = {u: sorted(walked[u]) for u in wanted if u in walked}
            assert {u: sorted(p) for u, p in records.of(rev, wanted).items()} == expected, rev
    records = TreeRecords(repo)
    records.DIFF_MAX = 10  # every other tree listed whole
    records.of(revs[0], [B])
    assert sorted(records.of(revs[2], [B])[B]) == sorted([f"data/x/acme/m/{B}.json", two])


def test_the_server_gate_s_own_index_answers_for_the_tree_it_holds(tmp_path: Path) -> None:
    """At the server gate (``TreeRecords(indexed=True)``) the audit's index answers for a tree
    it holds exactly, with the paths the listing gives and without listing the tree; for any
    other tree, git's objects answer. Elsewhere the index is never asked (see
    test_the_audit_reads_git_objects_only)."""
    from eee.governance.duplicates import AUDIT_INDEX_FILE, DuplicateIndex
    from eee.rules.uuids import TreeRecords

    repo = make_store(tmp_path, hooks=False)
    a = _place(repo, "acme/one", A)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "a record")
    first = git(repo, "rev-parse", "HEAD").stdout.strip()
    index = DuplicateIndex(repo, name=AUDIT_INDEX_FILE)
    index.sync(first)
    index.close()
    b = _place(repo, "acme/two", B)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "another")
    wanted = [A, B, "9e9e9e9e-1111-4222-8333-444444444444"]

    served = TreeRecords(repo, indexed=True)
    assert served.of(first, wanted) == {A: [a]}
    assert served._base is None  # the index answered: no listing of the tree
    assert served.of("HEAD", wanted) == {A: [a], B: [b]}  # a tree the index does not hold: git's objects
    assert served._base is not None

    with sqlite3.connect(repo / ".git" / AUDIT_INDEX_FILE) as db:  # what the index says is what is asked
        db.execute("DELETE FROM records")
    assert TreeRecords(repo, indexed=True).of(first, wanted) == {}
    assert TreeRecords(repo).of(first, wanted) == {A: [a]}  # the audit of a clone reads git's objects only
    assert TreeRecords(repo, indexed=True).of(first, ["not-a-uuid"]) == {}  # a name the index does not key


def test_the_server_gate_refuses_a_taken_uuid(tmp_path: Path) -> None:
    """A uuid the server's main already holds, pushed under another path: refused, naming the
    holder, with the index the gate keeps at main answering."""
    origin = make_store(tmp_path, hooks=False, name="origin")
    held = _place(origin, "acme/widget-7b")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "--no-verify", "-m", "a record")
    bare = tmp_path / "store.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    assert eee(bare, "server", "install", str(bare)).returncode == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    impostor = _place(clone, "evil/other-1b", score=5.0)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "--no-verify", "-m", "an impostor")
    before = git(bare, "rev-parse", "main").stdout.strip()
    proc = git(clone, "push", "origin", "main", check=False)
    assert proc.returncode != 0 and "pre-receive hook declined" in proc.stderr
    assert f"{impostor}::$: [uuid] uuid {A} is already used by {held}" in proc.stderr
    assert git(bare, "rev-parse", "main").stdout.strip() == before
