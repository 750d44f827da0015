"""The identity registry (issue 26, item 1): its files read strictly, spellings matched to
canonical ids (aliases, case, punctuation, near misses found by blocking), the gate's
warning on a new record and the settling of records already under an alias, `eee identity`
and its changes through the commit stack, and readers grouping by the canonical ids, with
real git, the real hooks and the real records of the reference material."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import uuid as uuidlib
from pathlib import Path
from typing import Any

import pytest

from conftest import commit, git, hook_env, make_store, place_record, real_records, record_of
from eee.store import identity
from eee.store.identity import ALIAS, CASE, NEAR, PUNCTUATION, Registry, parse

DEV = "governance/identity/developers.yaml"


def eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eee", *args], cwd=repo, capture_output=True, text=True, env=hook_env()
    )


def registry(text: str, rel: str = DEV) -> Registry:
    return parse({rel: text.encode()})


# --- reading the files --------------------------------------------------------------------


def test_a_file_declares_canonical_ids_and_their_aliases() -> None:
    reg = registry(
        'kind: developer\nentries:\n  Qwen:\n    aliases:\n      - qwen\n      - name: "QWEN"\n'
        f'        settled_at: "{"a" * 40}"\n        why: an old spelling\n  AlephAlpha: {{aliases: [aleph-alpha]}}\n'
    )
    assert reg.problems == []
    table = reg[identity.DEVELOPER]
    assert set(table.entries) == {"Qwen", "AlephAlpha"}
    assert table.aliases["QWEN"].settled_at == "a" * 40 and table.aliases["qwen"].settled_at is None
    assert table.canonical("aleph-alpha") == "AlephAlpha" and table.canonical("unknown-dev") == "unknown-dev"
    assert reg.canonical_model("qwen/qwen2.5-7b") == "Qwen/qwen2.5-7b"  # a model id's developer is canonical


@pytest.mark.parametrize(
    ("text", "pointer", "line", "words"),
    [
        ("kind: developer\nentries:\n  Qwen: &a {}\n", "$", 3, "anchors"),
        ("kind: developer\nentries:\n  Qwen:\n    aliases: [qwen]\n    colour: red\n", "$.entries.Qwen", 3, "colour"),
        (
            "kind: developer\nentries:\n  Qwen:\n    aliases:\n      - name: qwen\n        settled_at: 1234\n",
            "$.entries.Qwen.aliases[0]",
            5,
            "oneOf",
        ),
        ("kind: model\nentries: {}\n", "$.kind", 1, "holds the developer ids"),
        ("kind: developer\nentries:\n  Qwen: {hub: {dataset: a/b}}\n", "$.entries.Qwen.hub", 3, "False schema"),
        ("kind: developer\nentries:\n  Qwen: {aliases: [Qwen]}\n", "$.entries.Qwen.aliases[0]", 3, "itself"),
        (
            "kind: developer\nentries:\n  Qwen: {aliases: [qwen]}\n  Other:\n    aliases: [qwen]\n",
            "$.entries.Other.aliases[0]",
            5,
            "is an alias of 'Qwen' already",
        ),
        (
            "kind: developer\nentries:\n  Qwen: {aliases: [Other]}\n  Other: {}\n",
            "$.entries.Qwen.aliases[0]",
            3,
            "both a canonical id and an alias",
        ),
    ],
)
def test_a_bad_file_is_one_finding_with_its_place_and_line(text: str, pointer: str, line: int, words: str) -> None:
    (problem, *_) = registry(text).problems
    assert problem.file == DEV and problem.pointer == pointer and problem.line == line
    assert words in problem.message and problem.hint


def test_a_bad_file_is_left_out_and_the_others_still_count() -> None:
    reg = parse(
        {
            DEV: b"kind: developer\nentries: [not, a, mapping]\n",
            identity.FILES["metric"]: b"kind: metric\nentries:\n  accuracy: {aliases: [acc]}\n",
        }
    )
    assert [p.file for p in reg.problems] == [DEV] and reg.files == [identity.FILES["metric"]]
    assert reg.canonical("metric", "acc") == "accuracy"


def test_the_validator_reports_each_file_of_the_folder(tmp_path: Path) -> None:
    from eee.validation.validate import run

    store = tmp_path / "store"
    (store / "data").mkdir(parents=True)
    folder = store / "governance" / "identity"
    folder.mkdir(parents=True)
    (folder / "developers.yaml").write_text("kind: developer\nentries:\n  Qwen:\n    aliases: qwen\n")
    (folder / "notes.txt").write_text("not the registry's")
    (folder / "metrics.yaml").write_bytes(b"kind: metric\nentries: {}\n" + b"#" * (4 * 1024 * 1024))  # over the cap
    (folder / "models.yaml").symlink_to(folder / "notes.txt")
    summary = run([str(store)])
    found = {(Path(f.file).name, f.pointer, f.check) for r in summary.results for f in r.findings}
    assert ("developers.yaml", "$.entries.Qwen.aliases", "identity-registry") in found
    assert {("notes.txt", "$", "identity-registry"), ("metrics.yaml", "$", "identity-registry")} <= found
    assert ("models.yaml", "$", "identity-registry") in found  # a link is never read
    assert summary.errors == 4


# --- matching spellings --------------------------------------------------------------------


TABLE = registry(
    "kind: developer\nentries:\n  Qwen: {aliases: [qwen-ai]}\n  anthropic: {}\n  mistralai: {}\n  openai: {}\n"
)[identity.DEVELOPER]


@pytest.mark.parametrize(
    ("spelling", "how", "canonical"),
    [
        ("qwen-ai", ALIAS, "Qwen"),
        ("qwen", CASE, "Qwen"),
        ("QWEN", CASE, "Qwen"),
        ("Qwen_AI", PUNCTUATION, "Qwen"),  # the alias's key, by punctuation
        ("Anth-ropic", PUNCTUATION, "anthropic"),
        ("antropic", NEAR, "anthropic"),  # a letter less
        ("anthropics", NEAR, "anthropic"),  # a letter more
        ("anthorpic", NEAR, "anthropic"),  # two swapped
    ],
)
def test_a_spelling_matches_the_registry(spelling: str, how: str, canonical: str) -> None:
    found = TABLE.match(spelling)
    assert found is not None and (found.how, found.canonical) == (how, canonical)


@pytest.mark.parametrize("spelling", ["mixtralai", "openaj", "open-ai-2", "meta", "google", ""])
def test_what_is_not_a_near_miss(spelling: str) -> None:
    """A letter replaced by another (mistralai / mixtralai) is another name; digits, short keys too."""
    found = TABLE.match(spelling)
    assert found is None or found.how == "canonical"


def test_near_misses_are_found_by_blocking_not_by_pairs() -> None:
    """A registry of 5,000 ids answers each question with a few look-ups: no spelling is
    compared with every canonical id (the key is made once per question, never per id)."""
    text = "kind: model\nentries:\n" + "".join(f"  org{i}/model-{i}-instruct: {{}}\n" for i in range(5_000))
    table = registry(text, identity.FILES["model"])[identity.MODEL]
    calls = []
    from eee.store.identity import model  # Table looks its keys up there (eee.store.identity.near makes them)

    original = model.key
    model.key = lambda name: (calls.append(name), original(name))[1]  # type: ignore[assignment]
    try:
        table.keys()  # the index: one key per spelling, once
        calls.clear()
        assert table.match("org123/model-123-instrcut").how == NEAR  # type: ignore[union-attr]
        assert table.match("org123/model-123-instruct-xy") is None
    finally:
        model.key = original  # type: ignore[assignment]
    assert len(calls) == 2  # one key per question, none per canonical id


# --- the gate, the validator and the audit --------------------------------------------------

QWEN_MODEL = "qwen/qwen2.5-7b-instruct"


def _registry_commit(repo: Path, text: str) -> subprocess.CompletedProcess[str]:
    (repo / "governance" / "identity").mkdir(parents=True, exist_ok=True)
    (repo / DEV).write_text(text)
    git(repo, "add", DEV)
    return commit(repo, "the identity registry")


@pytest.mark.slow
def test_the_gate_warns_on_an_alias_and_settles_the_records_already_under_it(tmp_path: Path) -> None:
    repo = make_store(tmp_path)
    old = place_record(repo, record_of(QWEN_MODEL), benchmark="wikitext", record_uuid=str(uuidlib.uuid4()))
    git(repo, "add", "-A")
    assert commit(repo, "a qwen record").returncode == 0
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    text = f'kind: developer\nentries:\n  "Qwen":\n    aliases:\n      - name: "qwen"\n        settled_at: "{head}"\n'
    proc = _registry_commit(repo, text)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[identity]" not in eee(repo, "validate", ".").stdout  # the record already under qwen: settled

    doc = record_of(QWEN_MODEL, 9.5)
    doc["evaluation_id"] += "-again"
    new = place_record(repo, doc, benchmark="wikitext", record_uuid=str(uuidlib.uuid4()))
    git(repo, "add", "-A")
    proc = commit(repo, "a new qwen record")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said  # a warning never blocks
    assert f"{new.relative_to(repo).as_posix()}:" in said and "[identity] warning: developer 'qwen'" in said
    assert "'Qwen'" in said and "identity alias qwen --to Qwen --kind developer --commit" in said
    checked = eee(repo, "validate", ".")
    assert checked.returncode == 2 and checked.stdout.count(": [identity] warning") == 1
    assert old.relative_to(repo).as_posix() not in checked.stdout
    audit = eee(repo, "audit")
    assert audit.returncode == 2 and "[identity]" in audit.stdout

    again = eee(repo, "identity", "alias", "qwen", "--to", "Qwen", "--commit")  # the hint's command
    assert again.returncode == 0, again.stdout + again.stderr
    assert eee(repo, "validate", ".").returncode == 0
    assert eee(repo, "audit").returncode == 0  # judged by the registry at the head: settled for good


@pytest.mark.slow
def test_a_shallow_clone_warns_where_it_cannot_check_a_settled_at(tmp_path: Path) -> None:
    """A CI checkout is often shallow (depth 1): an alias settled at a commit before its cut-off
    cannot be checked there, which is a warning naming the fix, never an error; the full clone
    checks it."""
    repo = make_store(tmp_path)
    place_record(repo, record_of(QWEN_MODEL), benchmark="wikitext", record_uuid=str(uuidlib.uuid4()))
    git(repo, "add", "-A")
    assert commit(repo, "a qwen record").returncode == 0
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    text = f'kind: developer\nentries:\n  "Qwen":\n    aliases:\n      - name: "qwen"\n        settled_at: "{head}"\n'
    assert _registry_commit(repo, text).returncode == 0
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", repo.as_uri(), str(shallow)], check=True, env=hook_env())
    checked = eee(shallow, "validate", DEV)
    said = checked.stdout + checked.stderr
    assert checked.returncode == 2, said
    assert f"{DEV}:6::$.entries.Qwen.aliases[0].settled_at: [identity-registry] warning: settled_at {head[:12]}" in said
    assert "cannot be checked: the clone is shallow" in said and "git fetch --unshallow" in said
    subprocess.run(["git", "fetch", "-q", "--unshallow"], cwd=shallow, check=True, env=hook_env())
    assert eee(shallow, "validate", DEV).returncode == 0


@pytest.mark.slow
def test_a_settled_at_outside_history_is_refused(tmp_path: Path) -> None:
    repo = make_store(tmp_path)
    proc = _registry_commit(
        repo,
        f'kind: developer\nentries:\n  "Qwen":\n    aliases:\n      - name: qwen\n        settled_at: "{"0" * 40}"\n',
    )
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1
    assert f"{DEV}:6::$.entries.Qwen.aliases[0].settled_at: [identity-registry]" in said
    assert "is not a commit of this repository" in said


@pytest.mark.slow
def test_a_near_miss_of_a_canonical_id_is_warned_with_both_settling_commands(tmp_path: Path) -> None:
    repo = make_store(tmp_path)
    assert _registry_commit(repo, "kind: developer\nentries:\n  meta-llama: {}\n").returncode == 0
    place_record(repo, record_of("meta-lama/Llama-2-7b-hf"), benchmark="wikitext")
    git(repo, "add", "-A")
    proc = commit(repo, "a near miss")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0
    assert "developer 'meta-lama' is not a canonical id: it is the registry's 'meta-llama' but for one letter" in said
    assert "identity alias meta-lama --to meta-llama --kind developer --commit" in said
    assert "identity canonical meta-lama --kind developer --commit" in said


# --- the acceptance: this store's groups, the alias, the catalogue ----------------------------


def _real(folders: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """(benchmark folder, record) of the real records of the developers ``folders``."""
    found = []
    for path in real_records().files():
        if path.parts[-3] in folders:
            found.append((path.parts[-4], json.loads(path.read_bytes())))
    return found


@pytest.mark.slow
def test_alias_qwen_to_qwen_one_query_and_the_warning(tmp_path: Path) -> None:
    """The acceptance of issue 26 on the real records of Qwen/qwen and AlephAlpha/aleph-alpha."""
    repo = make_store(tmp_path)
    records = _real({"Qwen", "qwen", "AlephAlpha", "aleph-alpha"})
    assert {doc["model_info"]["id"].split("/")[0] for _, doc in records} == {
        "Qwen",
        "qwen",
        "AlephAlpha",
        "aleph-alpha",
    }
    qwen_results = 0
    for i, (benchmark, doc) in enumerate(records):
        place_record(repo, doc, benchmark=benchmark, record_uuid=str(uuidlib.UUID(int=i + 1, version=4)))
        if doc["model_info"]["id"].split("/")[0].lower() == "qwen":
            qwen_results += len(doc["evaluation_results"])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "real records, as an import brings them (some are flagged)")

    listed = eee(repo, "identity", "--format", "json", "--kind", "developer")
    assert listed.returncode == 2  # open groups are warnings
    groups = {g["key"]: g for g in json.loads(listed.stdout)["groups"]}
    assert {s["id"] for s in groups["qwen"]["spellings"]} == {"Qwen", "qwen"}
    assert {s["id"] for s in groups["alephalpha"]["spellings"]} == {"AlephAlpha", "aleph-alpha"}
    assert not groups["qwen"]["aliased"] and all(s["records"] > 0 and s["example"] for s in groups["qwen"]["spellings"])

    alias = eee(repo, "identity", "alias", "qwen", "--to", "Qwen", "--commit")
    assert alias.returncode == 0, alias.stdout + alias.stderr
    groups = {g["key"]: g for g in json.loads(eee(repo, "identity", "--format", "json").stdout)["groups"]}
    assert groups["qwen"]["aliased"] and groups["qwen"]["canonical"] == "Qwen"
    assert not groups["alephalpha"]["aliased"]

    assert eee(repo, "catalog", "--out", "build/catalog").returncode == 0
    import duckdb

    spellings, count = duckdb.sql(
        f"SELECT list(DISTINCT developer ORDER BY developer), count(*) FROM read_parquet("
        f"'{repo}/build/catalog/benchmark=*/*.parquet', hive_partitioning = true, hive_types = {{'benchmark': 'VARCHAR'}}) "
        "WHERE developer_canonical = 'Qwen'"
    ).fetchall()[0]
    assert spellings == ["Qwen", "qwen"]  # one query, both spellings ...
    assert count == qwen_results  # ... and every result of the developer

    assert "[identity]" not in eee(repo, "validate", ".").stdout  # the records already under qwen/
    from eee.rules.record import score_findings

    benchmark, doc = next(
        (b, d) for b, d in records if d["model_info"]["id"].startswith("qwen/") and not score_findings(d, "r")
    )
    doc = copy.deepcopy(doc)
    doc["evaluation_id"] += "-a-new-run"
    place_record(repo, doc, benchmark=benchmark, record_uuid=str(uuidlib.uuid4()))
    git(repo, "add", "-A")
    proc = commit(repo, "a new record under qwen/")
    assert proc.returncode == 0
    assert "[identity] warning: developer 'qwen' is an alias of 'Qwen'" in proc.stdout + proc.stderr


# --- the registry's changes -------------------------------------------------------------------


def _store_with(tmp_path: Path, text: str) -> Path:
    repo = make_store(tmp_path, hooks=False)
    (repo / "governance" / "identity").mkdir(parents=True)
    (repo / DEV).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "registry")
    return repo


def test_a_canonical_id_made_an_alias_brings_its_aliases_along(tmp_path: Path) -> None:
    from eee.write import identity as write

    repo = _store_with(tmp_path, "# kept\nkind: developer\nentries:\n  aleph-alpha:\n    aliases: [Aleph_Alpha]\n")
    change = write.alias(repo, "aleph-alpha", "AlephAlpha", "developer")
    reg = registry(change.data.decode())
    assert reg.problems == [] and list(reg[identity.DEVELOPER].entries) == ["AlephAlpha"]
    assert {a: x.canonical for a, x in reg[identity.DEVELOPER].aliases.items()} == {
        "Aleph_Alpha": "AlephAlpha",
        "aleph-alpha": "AlephAlpha",
    }
    assert reg[identity.DEVELOPER].aliases["aleph-alpha"].settled_at == git(repo, "rev-parse", "HEAD").stdout.strip()
    assert change.data.decode().startswith("# kept\n")  # comments and order kept
    write.write(repo, change, commit=False)
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == [DEV]  # staged through the commit stack


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("x", "qwen", "'qwen' is itself an alias of 'Qwen'"),
        ("qwen", "Other", "'qwen' is already an alias of 'Qwen'"),
        ("Qwen", "Qwen", "an alias is another spelling"),
    ],
)
def test_a_change_the_registry_contradicts_is_refused(tmp_path: Path, old: str, new: str, words: str) -> None:
    from eee.reporting.findings import Refused
    from eee.write import identity as write

    repo = _store_with(tmp_path, "kind: developer\nentries:\n  Qwen: {aliases: [qwen]}\n  Other: {}\n")
    with pytest.raises(Refused) as refused:
        write.alias(repo, old, new, "developer")
    assert words in refused.value.findings[0].message


def test_a_dry_run_writes_nothing_and_a_failed_write_is_rolled_back(tmp_path: Path, capsys) -> None:
    from eee.commands.identity import main
    from eee.write.commit import transaction

    repo = _store_with(tmp_path, "kind: developer\nentries: {}\n")
    before = (repo / DEV).read_bytes()
    assert main(["alias", "qwen", "--to", "Qwen", "--kind", "developer", "--dry-run", "--store", str(repo)]) == 0
    assert '"Qwen":' in capsys.readouterr().out and (repo / DEV).read_bytes() == before
    with pytest.raises(RuntimeError), transaction(repo) as tx:
        tx.replace([(DEV, b"kind: developer\nentries: {Qwen: {}}\n")])
        assert (repo / DEV).read_bytes() != before
        raise RuntimeError("killed halfway")
    assert (repo / DEV).read_bytes() == before  # put back, and its index entry too
    assert git(repo, "status", "--porcelain").stdout == ""


def test_the_kind_is_found_in_the_store_or_asked_for(tmp_path: Path, capsys) -> None:
    from eee.commands.identity import main

    repo = _store_with(tmp_path, "kind: developer\nentries: {}\n")
    place_record(repo, record_of("acme/widget-7b"), benchmark="wikitext")
    assert main(["alias", "ACME", "--to", "acme", "--dry-run", "--store", str(repo)]) == 0  # a developer folder
    assert main(["alias", "wiki-text", "--to", "wikitext", "--dry-run", "--store", str(repo)]) == 0
    assert "kind: benchmark" in capsys.readouterr().out
    with pytest.raises(SystemExit) as usage:
        main(["alias", "acc", "--to", "accuracy", "--store", str(repo)])
    assert usage.value.code == 64 and "give --kind" in capsys.readouterr().err


# --- readers group by the canonical ids -------------------------------------------------------


def test_compare_and_irt_take_every_spelling_of_a_model_and_a_benchmark(tmp_path: Path) -> None:
    from eee.analysis.samples import benchmark_folders, records_of

    store = tmp_path / "store"
    (store / "governance" / "identity").mkdir(parents=True)
    (store / DEV).write_text("kind: developer\nentries:\n  Acme: {aliases: [acme]}\n")
    (store / identity.FILES["benchmark"]).write_text("kind: benchmark\nentries:\n  wikitext: {aliases: [wiki-text]}\n")
    place_record(store, record_of("acme/widget-7b"), benchmark="wikitext", record_uuid=str(uuidlib.uuid4()))
    place_record(store, record_of("Acme/widget-7b", 9.1), benchmark="wiki-text", record_uuid=str(uuidlib.uuid4()))
    place_record(store, record_of("zeta/other-1b"), benchmark="wikitext", record_uuid=str(uuidlib.uuid4()))
    assert benchmark_folders(store, "wiki-text") == ["wiki-text", "wikitext"]
    found = [r.model_id for r in records_of(store, "wikitext", "Acme/widget-7b")]
    assert sorted(found) == ["Acme/widget-7b", "acme/widget-7b"]


def test_stats_count_one_developer_under_its_spellings(tmp_path: Path) -> None:
    from eee.catalog.stats import fill_rates

    store = tmp_path / "store"
    (store / "governance" / "identity").mkdir(parents=True)
    (store / DEV).write_text("kind: developer\nentries:\n  Acme: {aliases: [acme]}\n")
    place_record(store, record_of("acme/widget-7b"), benchmark="wikitext", record_uuid=str(uuidlib.uuid4()))
    place_record(store, record_of("Acme/widget-8b"), benchmark="wikitext", record_uuid=str(uuidlib.uuid4()))
    rates = fill_rates(store)
    assert rates["by_developer"]["Acme"]["records"] == 2 and "acme" not in rates["by_developer"]
    assert rates["by_benchmark"]["wikitext"]["records"] == 2


@pytest.mark.slow
def test_dedup_finds_the_same_evaluation_under_two_spellings_of_one_model(tmp_path: Path) -> None:
    repo = make_store(tmp_path)
    first = record_of("acme/widget-7b")
    place_record(repo, first, benchmark="wikitext", record_uuid=str(uuidlib.uuid4()))
    git(repo, "add", "-A")
    assert commit(repo, "one").returncode == 0
    twin = copy.deepcopy(first)
    twin["model_info"]["id"] = "Acme/widget-7b"
    twin["retrieved_timestamp"] = "1770000999"
    twin["source_metadata"]["source_organization_name"] = "another evaluator"
    place_record(repo, twin, benchmark="wikitext-2", record_uuid=str(uuidlib.uuid4()))  # Acme beside acme: a case clash
    git(repo, "add", "-A")
    proc = commit(repo, "the same run under another spelling")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[duplicates]" not in proc.stdout + proc.stderr  # two model ids: two evaluations, for now
    assert eee(repo, "identity", "alias", "Acme", "--to", "acme", "--commit").returncode == 0
    groups = json.loads(eee(repo, "dedup", "--format", "json").stdout)["groups"]
    assert len(groups) == 1 and "model acme/widget-7b" in groups[0]["pairs"][0]["evidence"]


def test_the_scan_reads_every_record_once_in_any_number_of_workers(tmp_path: Path) -> None:
    from eee.catalog.names import groups, scan

    store = tmp_path / "store"
    for i, model in enumerate(["acme/widget-7b", "ACME/widget-7b", "Acme_/widget-8b", "antropic/x-1", "anthropic/x-1"]):
        place_record(store, record_of(model), benchmark="wikitext", record_uuid=str(uuidlib.UUID(int=i + 1, version=4)))
    bad = store / "data" / "wikitext" / "acme" / "widget-7b" / f"{uuidlib.uuid4()}.json"
    bad.write_text("{not json")
    one, two = scan(store, jobs=1), scan(store, jobs=2)
    for found in (one, two):
        assert found.records == 5 and len(found.unreadable) == 1 and str(bad.name) in found.unreadable[0]
    assert {k: {s: (v.records, v.example) for s, v in t.items()} for k, t in one.seen.items()} == {
        k: {s: (v.records, v.example) for s, v in t.items()} for k, t in two.seen.items()
    }
    listed = {(g["kind"], g["key"]): g for g in groups(one, identity.EMPTY)}
    assert {s["id"] for s in listed[("developer", "acme")]["spellings"]} == {"acme", "ACME", "Acme_"}
    assert listed[("developer", "acme")]["how"] == PUNCTUATION
    near = next(g for (kind, _), g in listed.items() if kind == "developer" and g["how"] == NEAR)
    assert {s["id"] for s in near["spellings"]} == {"antropic", "anthropic"}
    assert all(g["open"] and g["commands"] for g in listed.values())
