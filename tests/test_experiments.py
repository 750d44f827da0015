"""Experiment cards (issue 32): the card and its schema, ``eee experiment new|show|check|report``,
the order (a card before the results that cite it, on the mainline) and immutability enforced
by the gate, the audit and the server gate, and the acceptance test on the store's real
AlpacaEval per-item records: the report's paired interval is ``eee compare``'s.

Real git, the project's gate, real ``ssh-keygen`` keys and git's own SSH signing, a real
``git push`` into a bare repository with the server gate."""

from __future__ import annotations

import json
import shutil
import uuid as uuidlib
from pathlib import Path
from typing import Any

import pytest

from conftest import COMMITTER, EXAMPLES, PROJECT, commit, git, hook_env, install_hooks, make_store, sha256
from eee.governance.experiments import loads
from eee.rules.experiments import doc_findings
from roles_store import COLE, ZED, as_, push, refs, refused, roles_store, serve
from roles_store import eee as _eee


def eee(*args: str, cwd: Path | None = None) -> Any:
    """``python -m eee ARGS``; the hooks of a commit it makes run with this interpreter."""
    return _eee(*args, cwd=cwd, env=hook_env())


CARDS = EXAMPLES / "experiments"
ALPACA = PROJECT / "data" / "alpaca_eval_2" / "openai"
CONCISE = ALPACA / "gpt-3.5-turbo-1106_concise" / "0a98b8b7-95d7-46b9-9426-507362a2c881.json"
PLAIN = ALPACA / "gpt-3.5-turbo-1106" / "5d5cd601-5937-443f-be52-53e2cbcc4037.json"
CARD_ID = "concise-no-worse"


# --- the card and its schema ------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((CARDS / "valid").glob("*.yaml")), ids=lambda p: p.name)
def test_a_valid_card_has_no_finding(path: Path) -> None:
    text = path.read_bytes()
    assert doc_findings(loads(text), f"governance/experiments/{path.name}", None, None, None, text) == []


INVALID = {
    "traversal-id.yaml": ("$.id", 4),
    "negative-margin.yaml": ("$.comparison.margin", 35),
    "undeclared-candidate.yaml": ("$.comparison.candidate", 30),
    "unknown-field.yaml": ("$.seed_of_luck", 25),
    "existing-without-results.yaml": ("$", 3),
    "infrastructure-errors-other.yaml": ("$.primary_metric.infrastructure_errors", 27),
}


def test_every_invalid_example_is_listed() -> None:
    assert sorted(INVALID) == sorted(p.name for p in (CARDS / "invalid").glob("*.yaml"))


@pytest.mark.parametrize("name", sorted(INVALID))
def test_an_invalid_card_is_one_line_with_file_line_path_and_hint(name: str) -> None:
    text = (CARDS / "invalid" / name).read_bytes()
    rel = f"governance/experiments/{name}"
    found = doc_findings(loads(text), rel, None, None, None, text)
    pointer, line = INVALID[name]
    assert [f.pointer for f in found][:1] == [pointer]
    first = found[0]
    assert first.location() == f"{rel}:{line}::{pointer}"
    assert first.hint and first.check == "experiment"
    assert "\n" not in first.message


def test_a_card_that_is_not_plain_yaml_or_too_large_is_refused() -> None:
    from eee.governance.experiments import CardProblem

    with pytest.raises(CardProblem):
        loads(b"a: &x 1\nb: *x\n")  # an alias
    with pytest.raises(CardProblem):
        loads(b"id: " + b"x" * (300 * 1024))
    with pytest.raises(CardProblem):
        loads(b"- a list\n")


def test_the_card_schema_is_pinned() -> None:
    from eee.store.schemas import default_registry

    registry = json.loads((PROJECT / "schemas" / "registry.json").read_text())
    pinned = registry["other"]["experiments"]["card.schema.json"] if "other" in registry else None
    if pinned is None:  # the registry keeps other schemas under another key
        pinned = json.dumps(registry)
    assert sha256(PROJECT / "schemas" / "experiments" / "card.schema.json") in json.dumps(registry)
    assert default_registry().other_validator("experiments", "card.schema.json") is not None


@pytest.mark.parametrize("bad", ["../x", "a/b", "UPPER", "ab", "a--b", "-ab", "x" * 65])
def test_an_id_outside_the_safe_pattern_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    repo = make_store(tmp_path, hooks=False)
    for verb in ("show", "check", "report"):
        proc = eee("experiment", verb, bad, "--store", str(repo))
        assert proc.returncode == 64, proc.stderr
        assert ("no card id" in proc.stderr or bad.startswith("-")) and "Traceback" not in proc.stderr


# --- a store, cards, results citing them ------------------------------------------------------


def store_with_schemas(tmp: Path, hooks: bool = True) -> Path:
    repo = make_store(tmp, hooks=hooks, sidecar_git_max_bytes=8 * 1024 * 1024)  # the project's threshold
    shutil.copytree(PROJECT / "schemas", repo / "schemas")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "schemas")
    return repo


def cited_copy(repo: Path, source: Path, card: str | None, *, mutate: Any = None) -> str:
    """A copy of a real record of the store (and its sidecar), under a fresh uuid, citing
    ``card`` (what ``eee convert ... --experiment`` writes); staged. Returns its uuid."""
    from eee.store.strictjson import canonical

    doc = json.loads(source.read_text())
    new = str(uuidlib.uuid4())
    folder = repo / source.parent.relative_to(PROJECT)
    folder.mkdir(parents=True, exist_ok=True)
    sidecar = folder / f"{new}_samples.jsonl"
    shutil.copyfile(source.with_name(source.stem + "_samples.jsonl"), sidecar)
    rel = sidecar.relative_to(repo).as_posix()
    doc["detailed_evaluation_results"].update(file_path=rel, checksum=sha256(sidecar))
    if card is not None:
        doc["source_metadata"].setdefault("additional_details", {})["eee_experiment"] = card
    if mutate is not None:
        mutate(doc)
    (folder / f"{new}.json").write_bytes(canonical(doc))
    git(repo, "add", "-A", "data")
    return new


def new_card(repo: Path, card_id: str = CARD_ID, *extra: str, commit_it: bool = True) -> Any:
    args = [
        "experiment",
        "new",
        card_id,
        "--store",
        str(repo),
        "--question",
        "Is gpt-3.5-turbo-1106 asked to be concise no worse than gpt-3.5-turbo-1106 by more than 2 points?",
        "--model",
        "openai/gpt-3.5-turbo-1106_concise",
        "--model",
        "openai/gpt-3.5-turbo-1106",
        "--benchmark",
        "alpaca_eval_2",
        "--result",
        "win_rate",
        "--items",
        "805",
        "--cluster-key",
        "dataset",
        "--subgroup",
        "dataset",
        "--margin",
        "2",
        "--stopping-rule",
        "one run of each model on every instruction",
        "--analysis-plan",
        "paired by instruction, clustered by source dataset; non-inferior when the interval's low end is above -2",
        *extra,
    ]
    if commit_it:
        args.append("--commit")
    return eee(*args, cwd=repo)


def like_args(repo: Path) -> list[str]:
    """``--like`` a record of the store: every protocol field of the real record held fixed."""
    return ["--like", cited_copy(repo, CONCISE, None)]


@pytest.fixture(scope="module")
def accepted_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The acceptance: a card registered (with the protocol of the real records), then the
    two results citing it committed through the gate."""
    tmp = tmp_path_factory.mktemp("experiment")
    repo = store_with_schemas(tmp)
    base = cited_copy(repo, PLAIN, None)  # a record to copy the protocol from (not citing)
    assert commit(repo, "a record").returncode == 0
    proc = new_card(repo, CARD_ID, "--like", base)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    card_commit = git(repo, "rev-parse", "HEAD").stdout.strip()
    a = cited_copy(repo, CONCISE, CARD_ID)
    b = cited_copy(repo, PLAIN, CARD_ID)
    done = commit(repo, "two results citing the card")
    assert done.returncode == 0, done.stdout + done.stderr
    return {"repo": repo, "a": a, "b": b, "card_commit": card_commit}


@pytest.mark.slow
def test_new_commits_the_card_on_its_own_with_its_author_and_protocol(accepted_store: dict[str, Any]) -> None:
    repo = accepted_store["repo"]
    files = git(repo, "show", "--name-only", "--format=", accepted_store["card_commit"]).stdout.split()
    assert files == [f"governance/experiments/{CARD_ID}.yaml"]
    card = loads((repo / files[0]).read_bytes())
    assert card["author"] == COMMITTER  # who commits it
    assert card["protocol"]["judge"].startswith("weighted_alpaca_eval_gpt4_turbo")
    assert card["benchmark"]["dataset"] == "tatsu-lab/alpaca_eval"


@pytest.mark.slow
def test_the_reports_paired_interval_is_eee_compares(accepted_store: dict[str, Any]) -> None:
    repo, a, b = accepted_store["repo"], accepted_store["a"], accepted_store["b"]
    report = eee("experiment", "report", CARD_ID, "--format", "json", "--store", str(repo))
    assert report.returncode == 0, report.stdout + report.stderr
    got = json.loads(report.stdout)
    cmp = eee("compare", a, b, "--margin", "2", "--format", "json", "--store", str(repo))
    assert cmp.returncode == 0, cmp.stderr
    pairs = [r for r in json.loads(cmp.stdout)["samples"]["results"] if r["result_a"] == "win_rate"]
    want = pairs[0]
    analysis = got["analysis"]
    assert analysis["difference_ci"] == want["difference_ci"]
    assert analysis["difference"] == want["difference"]
    assert analysis["bootstrap"] == want["bootstrap"]
    assert analysis["non_inferiority"] == want["non_inferiority"]
    assert analysis["bootstrap"]["clusters"] == 5  # AlpacaEval's five source datasets
    assert got["deviations"] == []
    assert analysis["denominators"]["shared"] == 805
    # subgroups: each source dataset with its count; together every compared item
    groups = analysis["subgroups"][0]["groups"]
    assert analysis["subgroups"][0]["key"] == "dataset"
    assert sum(g["items"] for g in groups) == analysis["denominators"]["valid_shared"]
    assert {g["value"] for g in groups} >= {"helpful_base", "koala"}
    # the items where one is right and the other wrong, listed for review
    binary = analysis["binary"]
    assert analysis["disagreeing"] == binary["only_a_correct"] + binary["only_b_correct"]
    assert len(analysis["disagreeing_samples"]) == analysis["disagreeing"]
    assert got["reproducibility"]["level"] == "stored-scores"
    assert [h["card"] for h in got["history"]] == [CARD_ID]


@pytest.mark.slow
def test_the_rich_report_states_the_verdict_counts_and_reproducibility(accepted_store: dict[str, Any]) -> None:
    repo = accepted_store["repo"]
    proc = eee("experiment", "report", CARD_ID, "--store", str(repo))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "non-inferiority (margin 2 on the score's scale):" in out
    assert "infrastructure errors (left out, counted apart)" in out
    assert "subgroups by dataset:" in out and "n = " in out
    assert "reproducibility: stored-scores" in out
    assert "deviations: 0" in out
    show = eee("experiment", "show", CARD_ID, "--store", str(repo))
    assert show.returncode == 0 and f"{CARD_ID} (this card): commit" in show.stdout
    check = eee("experiment", "check", CARD_ID, "--store", str(repo))
    assert check.returncode == 0 and "judge: ok" in check.stdout
    status = json.loads(eee("status", accepted_store["a"], "--format", "json", "--store", str(repo)).stdout)
    assert {
        "relation": "IsPartOf",
        "source": "the experiment card it cites",
        "identifier": f"governance/experiments/{CARD_ID}.yaml",
    } in status["relations"]


@pytest.mark.slow
def test_a_result_beyond_the_stopping_rule_is_a_deviation(accepted_store: dict[str, Any], tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(accepted_store["repo"]), str(repo))
    git(repo, "config", "user.name", "EEE Test")
    git(repo, "config", "user.email", "eee-test@example.org")

    def other_judge(doc: dict[str, Any]) -> None:
        for r in doc["evaluation_results"]:
            r["metric_config"]["llm_scoring"]["judges"][0]["model_info"]["id"] = "openai/gpt-4o-2024-05-13"

    cited_copy(repo, CONCISE, CARD_ID, mutate=other_judge)
    git(repo, "commit", "-q", "--no-verify", "-m", "another run with another judge")
    # the card takes one result per model (the first committed): the third is listed, left out
    proc = eee("experiment", "check", CARD_ID, "--format", "json", "--store", str(repo))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    messages = [d["message"] for d in json.loads(proc.stdout)["deviations"]]
    assert any("than the stopping rule takes" in m for m in messages), messages


@pytest.mark.slow
def test_a_judge_other_than_the_cards_shows_in_the_report(tmp_path: Path) -> None:
    repo = store_with_schemas(tmp_path)
    base = cited_copy(repo, PLAIN, None)
    assert commit(repo, "a record").returncode == 0
    assert new_card(repo, CARD_ID, "--like", base).returncode == 0

    def other_judge(doc: dict[str, Any]) -> None:
        for r in doc["evaluation_results"]:
            r["metric_config"]["llm_scoring"]["judges"][0]["model_info"]["id"] = "openai/gpt-4o-2024-05-13"

    cited_copy(repo, CONCISE, CARD_ID, mutate=other_judge)
    cited_copy(repo, PLAIN, CARD_ID)
    assert commit(repo, "results").returncode == 0
    proc = eee("experiment", "report", CARD_ID, "--format", "json", "--store", str(repo))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    judged = [d for d in report["deviations"] if d["message"].startswith("protocol field judge:")]
    assert len(judged) == 1 and "gpt-4o-2024-05-13" in judged[0]["message"]
    assert report["analysis"]["difference_ci"]  # the analysis still runs; the deviation stands beside it
    rich = eee("experiment", "report", CARD_ID, "--store", str(repo)).stdout
    assert "[experiment-deviation] protocol field judge" in rich and "judge: DIFFERS" in rich


@pytest.mark.slow
def test_a_declared_model_without_results_is_a_deviation_and_no_verdict_is_invented(tmp_path: Path) -> None:
    repo = store_with_schemas(tmp_path)
    assert new_card(repo).returncode == 0
    cited_copy(repo, CONCISE, CARD_ID)  # the candidate only
    assert commit(repo, "the candidate's result").returncode == 0
    proc = eee("experiment", "report", CARD_ID, "--format", "json", "--store", str(repo))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["analysis"] is None and "reproducibility" not in report
    missing = [d for d in report["deviations"] if "has no active committed result" in d["message"]]
    assert len(missing) == 1 and "openai/gpt-3.5-turbo-1106" in missing[0]["message"]
    assert any(n.startswith("no analysis") for n in report["notes"])


@pytest.mark.slow
def test_fewer_samples_per_item_than_declared_is_a_deviation(tmp_path: Path) -> None:
    repo = store_with_schemas(tmp_path)
    assert new_card(repo, CARD_ID, "--samples-per-item", "3").returncode == 0
    cited_copy(repo, CONCISE, CARD_ID)
    cited_copy(repo, PLAIN, CARD_ID)
    assert commit(repo, "one sample per item each").returncode == 0
    said = (
        "805 of the result's 805 items hold fewer than the 3 samples per item the card declares "
        "(their samples are averaged as they are)"
    )
    for verb in ("check", "report"):  # check computes no statistics, but says what the results hold
        proc = eee("experiment", verb, CARD_ID, "--format", "json", "--store", str(repo))
        assert proc.returncode == 2
        assert [d["message"] for d in json.loads(proc.stdout)["deviations"]] == [said, said]


@pytest.mark.slow
def test_a_retracted_cited_result_is_left_out_as_a_deviation(accepted_store: dict[str, Any], tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(accepted_store["repo"]), str(repo))
    proc = eee(
        "retract", accepted_store["b"], "--reason", "the run used the wrong baseline", "--commit", "--store", str(repo)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = eee("experiment", "report", CARD_ID, "--format", "json", "--store", str(repo))
    assert proc.returncode == 2
    report = json.loads(proc.stdout)
    gone = [d for d in report["deviations"] if accepted_store["b"] in d["file"]]
    assert [d["message"] for d in gone][:1] == ["the result is retracted: not active, left out of the analysis"]
    assert report["analysis"] is None  # the reference has no active result: no comparison, no verdict


# --- order and immutability: the gate -----------------------------------------------------------


@pytest.mark.slow
def test_the_gate_refuses_a_result_with_its_card_in_the_same_commit(tmp_path: Path) -> None:
    repo = store_with_schemas(tmp_path)
    assert new_card(repo, commit_it=False).returncode == 0  # written and staged, not committed
    cited_copy(repo, CONCISE, CARD_ID)
    proc = commit(repo, "card and result together")
    assert proc.returncode != 0
    assert "[experiment-order]" in proc.stdout + proc.stderr
    assert "comes in the same commit" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_the_gate_refuses_a_result_citing_a_card_not_in_the_store(tmp_path: Path) -> None:
    repo = store_with_schemas(tmp_path)
    cited_copy(repo, CONCISE, "no-such-card")
    proc = commit(repo, "a result citing nothing")
    assert proc.returncode != 0 and "[experiment-order]" in proc.stdout + proc.stderr
    assert "which is not in the store" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_an_edit_or_deletion_of_a_published_card_is_refused(tmp_path: Path) -> None:
    repo = store_with_schemas(tmp_path)
    assert new_card(repo).returncode == 0
    card = repo / "governance" / "experiments" / f"{CARD_ID}.yaml"
    card.write_text(card.read_text().replace("margin: 2", "margin: 5"))
    git(repo, "add", "-A")
    proc = commit(repo, "move the margin after the fact")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "experiment card" in out and "--amends" in out
    git(repo, "checkout", "--", ".")
    git(repo, "reset", "-q", "--hard")
    git(repo, "rm", "-q", str(card.relative_to(repo)))
    assert commit(repo, "delete the card").returncode != 0


@pytest.mark.slow
def test_new_refuses_an_existing_id_and_writes_nothing(tmp_path: Path) -> None:
    repo = store_with_schemas(tmp_path)
    assert new_card(repo).returncode == 0
    head = git(repo, "rev-parse", "HEAD").stdout
    proc = new_card(repo)
    assert proc.returncode == 1 and "names one card for ever" in proc.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == head
    assert git(repo, "status", "--porcelain").stdout == ""


@pytest.mark.slow
def test_an_amendment_after_results_shows_as_such(accepted_store: dict[str, Any], tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(accepted_store["repo"]), str(repo))
    git(repo, "config", "user.name", "EEE Test")
    git(repo, "config", "user.email", "eee-test@example.org")
    install_hooks(repo)  # the clone gets the project's gate, like the store had
    proc = new_card(repo, "concise-no-worse-3pt", "--amends", CARD_ID, "--reason", "a margin of 3 points after all")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(eee("experiment", "report", CARD_ID, "--format", "json", "--store", str(repo)).stdout)
    amendment = [h for h in report["history"] if h["card"] == "concise-no-worse-3pt"]
    assert amendment and amendment[0]["after_results"] is True
    assert amendment[0]["reason"] == "a margin of 3 points after all"
    assert any("committed after results" in n for n in report["notes"])
    new = json.loads(eee("experiment", "show", "concise-no-worse-3pt", "--format", "json", "--store", str(repo)).stdout)
    assert [h["card"] for h in new["history"]] == ["concise-no-worse-3pt", CARD_ID]
    # the site: one page per card, the amendment after results shown as such
    proc = eee("analysis", "--store", str(repo), "--out", str(tmp_path / "analysis"))
    assert proc.returncode == 0, proc.stderr
    pages = tmp_path / "analysis" / "pages" / "experiments"
    assert sorted(p.name for p in pages.iterdir()) == ["concise-no-worse-3pt.md", f"{CARD_ID}.md"]
    text = (pages / f"{CARD_ID}.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `concise-no-worse-3pt`"))
    assert row.rstrip(" |").endswith("yes") and "a margin of 3 points after all" in row
    assert "**Non-inferiority** (margin 2): **inconclusive**" in text
    assert "### Subgroups by `dataset`" in text
    # the site's pages take it from the analysis step: analysis/experiments/<id>.md
    assert eee("analysis", "--store", str(repo)).returncode == 0
    proc = eee("site", "pages", "--store", str(repo), "--out", str(tmp_path / "docs"))
    assert proc.returncode in (0, 2), proc.stdout + proc.stderr
    published = (tmp_path / "docs" / "analysis" / "experiments" / f"{CARD_ID}.md").read_text()
    assert published.endswith(text.split("---\n", 2)[2])  # the page, its front matter given an edit_url


def test_a_hostile_card_is_escaped_on_its_page(tmp_path: Path) -> None:
    """Every value of a card lands on its page as text: no HTML, no Markdown link, no raw tag."""
    from eee.analysis.experiment import page

    card = loads((CARDS / "valid" / "concise-no-worse.yaml").read_bytes())
    card["question"] = '<script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror="y">'
    card["analysis_plan"] = "| a | b |\n# heading"
    report = {
        "card": CARD_ID,
        "path": f"governance/experiments/{CARD_ID}.yaml",
        "history": [{"card": CARD_ID, "role": "this card", "commit": None, "time": None}],
        "results": [],
        "analysis": None,
        "deviations": [],
        "notes": [],
        "question": card["question"],
    }
    text = page(report, card)
    assert "<script>" not in text and "<img" not in text and "](javascript:" not in text
    assert "&#60;script&#62;" in text or "&lt;script&gt;" in text


# --- convert --experiment ---------------------------------------------------------------------


@pytest.mark.slow
def test_convert_records_the_card_only_once_it_is_committed(tmp_path: Path) -> None:
    repo = store_with_schemas(tmp_path)
    log = EXAMPLES / "harness" / "inspect" / "tiny_qa.json"
    proc = eee("convert", "inspect", str(log), "--experiment", "tiny-card", "--store", str(repo), cwd=repo)
    assert proc.returncode == 1 and "is not in the store" in proc.stderr
    assert not (repo / "data").exists()
    assert new_card(repo, "tiny-card").returncode == 0
    proc = eee("convert", "inspect", str(log), "--experiment", "tiny-card", "--store", str(repo), cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (record,) = (repo / "data").rglob("*.json")
    doc = json.loads(record.read_text())
    assert doc["source_metadata"]["additional_details"]["eee_experiment"] == "tiny-card"
    assert commit(repo, "a result citing its card").returncode == 0


# --- the audit and the server gate: along the mainline ------------------------------------------


def cited_small(repo: Path, card: str) -> str:
    """A small valid record (the project's example) under a fresh uuid, citing ``card``; staged."""
    from conftest import load_example, place_record
    from roles_store import RECORD

    doc = load_example("aggregate", "valid", RECORD)
    doc["source_metadata"].setdefault("additional_details", {})["eee_experiment"] = card
    new = str(uuidlib.uuid4())
    place_record(repo, doc, record_uuid=new)
    git(repo, "add", "-A", "data")
    return new


def _card_file(repo: Path, card_id: str, who: tuple[str, str]) -> None:
    """A valid card written by hand (what a pusher could commit with --no-verify)."""
    from eee.governance.experiments import dumps

    text = (CARDS / "valid" / "concise-no-worse.yaml").read_bytes()
    card = loads(text)
    card["id"] = card_id
    card["author"] = {"name": who[0], "email": who[1]}
    folder = repo / "governance" / "experiments"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{card_id}.yaml").write_text(dumps(card))


@pytest.mark.slow
def test_the_server_refuses_results_with_their_card_and_accepts_them_after_it(tmp_path: Path) -> None:
    store = roles_store(tmp_path)
    bare, clone = serve(store["repo"], tmp_path)
    cole = store["cole"]
    # a card and a result citing it in one commit: refused by the server and by the audit
    _card_file(clone, CARD_ID, COLE)
    cited_small(clone, CARD_ID)
    git(clone, "add", "-A")
    git(clone, *as_(COLE, cole), "commit", "-q", "--no-verify", "-S", "-m", "card and result together")
    before = refs(bare)
    remote = refused(push(clone, "origin", "HEAD:main"), bare, before)
    assert "[experiment-order]" in remote and "comes in the same commit" in remote
    from eee.validation.audit import audit  # the audit in the clone says the same

    old = git(clone, "rev-parse", "origin/main").stdout.strip()
    summary = audit(old, "HEAD", clone, anchor=old)
    found = [f for r in summary.results for f in r.findings if f.check == "experiment-order"]
    assert len(found) == 1 and found[0].severity == "error"
    # the card first (signed by Cole, a known key), then the result: accepted
    git(clone, "reset", "-q", "--hard", "HEAD~1")
    _card_file(clone, CARD_ID, COLE)
    git(clone, "add", "-A")
    git(clone, *as_(COLE, cole), "commit", "-q", "--no-verify", "-S", "-m", "the card")
    cited_small(clone, CARD_ID)
    git(clone, *as_(COLE, cole), "commit", "-q", "--no-verify", "-S", "-m", "a result citing it")
    proc = push(clone, "origin", "HEAD:main")
    assert proc.returncode == 0, proc.stderr
    # an edit of the published card: refused
    card = clone / "governance" / "experiments" / f"{CARD_ID}.yaml"
    card.write_text(card.read_text().replace("margin: 2", "margin: 9"))
    git(clone, "add", "-A")
    git(clone, *as_(COLE, cole), "commit", "-q", "--no-verify", "-S", "-m", "move the margin")
    before = refs(bare)
    remote = refused(push(clone, "origin", "HEAD:main"), bare, before)
    assert "experiment card" in remote and "[immutable]" in remote


@pytest.mark.slow
def test_the_server_judges_the_order_along_the_mainline_not_a_side_branch(tmp_path: Path) -> None:
    """Card and results on a side branch, merged in one merge: the card was never on the
    mainline before the results, whatever order the side branch shows."""
    store = roles_store(tmp_path)
    bare, clone = serve(store["repo"], tmp_path)
    mia, cole = store["mia"], store["cole"]
    git(clone, "switch", "-q", "-c", "side")
    _card_file(clone, CARD_ID, COLE)
    git(clone, "add", "-A")
    git(clone, *as_(COLE, cole), "commit", "-q", "--no-verify", "-S", "-m", "the card")
    cited_small(clone, CARD_ID)
    git(clone, *as_(COLE, cole), "commit", "-q", "--no-verify", "-S", "-m", "a result")
    git(clone, "switch", "-q", "main")
    from roles_store import MIA

    git(clone, *as_(MIA, mia), "merge", "-q", "--no-ff", "--no-verify", "-S", "-m", "merge side", "side")
    before = refs(bare)
    remote = refused(push(clone, "origin", "HEAD:main"), bare, before)
    assert "[experiment-order]" in remote


@pytest.mark.slow
def test_a_card_on_existing_data_reports_the_real_records_as_eee_compare_does(tmp_path: Path) -> None:
    """data: existing, naming the store's two real AlpacaEval records by their own uuids (no
    record rewritten): the registered analysis, said to be one, with compare's interval."""
    repo = store_with_schemas(tmp_path)
    for source in (CONCISE, PLAIN):
        folder = repo / source.parent.relative_to(PROJECT)
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, folder / source.name)
        shutil.copyfile(source.with_name(source.stem + "_samples.jsonl"), folder / (source.stem + "_samples.jsonl"))
    git(repo, "add", "-A")
    assert commit(repo, "the real records").returncode == 0
    a, b = CONCISE.stem, PLAIN.stem
    proc = new_card(repo, "concise-existing", "--like", b, "--existing", a, "--existing", b)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = json.loads(eee("experiment", "report", "concise-existing", "--format", "json", "--store", str(repo)).stdout)
    want = json.loads(eee("compare", a, b, "--margin", "2", "--format", "json", "--store", str(repo)).stdout)
    pair = next(r for r in want["samples"]["results"] if r["result_a"] == "win_rate")
    assert got["analysis"]["difference_ci"] == pair["difference_ci"]
    assert got["analysis"]["non_inferiority"]["verdict"] == pair["non_inferiority"]["verdict"]
    assert any("not a pre-registration" in n for n in got["notes"])
    # a card naming a record that is not in the store is refused before anything is written
    proc = new_card(repo, "names-nothing", "--like", b, "--existing", "2a2b2c2d-3e3f-4a4b-8c8d-9e9f0a0b0c0d")
    assert proc.returncode == 1 and "$.results" in proc.stderr


@pytest.mark.slow
def test_a_card_naming_another_author_than_its_signer_is_refused(tmp_path: Path) -> None:
    from roles_store import MIA

    store = roles_store(tmp_path)
    bare, clone = serve(store["repo"], tmp_path)
    _card_file(clone, CARD_ID, MIA)  # Cole signs a card that says Mia wrote it
    git(clone, "add", "-A")
    git(clone, *as_(COLE, store["cole"]), "commit", "-q", "--no-verify", "-S", "-m", "a card in Mia's name")
    before = refs(bare)
    remote = refused(push(clone, "origin", "HEAD:main"), bare, before)
    assert "[actor]" in remote and "experiment card" in remote


@pytest.mark.slow
def test_an_unsigned_card_in_a_store_with_roles_is_refused(tmp_path: Path) -> None:
    store = roles_store(tmp_path)
    bare, clone = serve(store["repo"], tmp_path)
    _card_file(clone, CARD_ID, ZED)
    git(clone, "add", "-A")
    git(clone, *as_(ZED), "commit", "-q", "--no-verify", "-m", "a card by a stranger")
    before = refs(bare)
    remote = refused(push(clone, "origin", "HEAD:main"), bare, before)
    assert "[authority]" in remote and "experiment" in remote


@pytest.mark.slow
def test_new_signs_with_a_known_key_and_refuses_before_writing_without_one(tmp_path: Path) -> None:
    """In a store with roles, ``new --commit`` commits the card signed by its author's key
    (which the audit verifies); with no signing key configured, nothing is written."""
    from eee.validation.audit import audit

    store = roles_store(tmp_path)
    repo = store["repo"]
    for option in as_(COLE)[1::2]:  # Cole commits, no key configured yet
        name, _, setting = option.partition("=")
        git(repo, "config", name, setting)
    before = git(repo, "rev-parse", "HEAD").stdout.strip()
    proc = new_card(repo, CARD_ID, "--like", cited_small_committed(repo))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "nothing was written" in proc.stderr and "Traceback" not in proc.stderr
    assert not (repo / "governance" / "experiments").exists()
    for option in as_(COLE, store["cole"])[1::2]:
        name, _, setting = option.partition("=")
        git(repo, "config", name, setting)
    proc = new_card(repo, CARD_ID, "--benchmark", "alpaca_eval_2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    card = loads((repo / "governance" / "experiments" / f"{CARD_ID}.yaml").read_bytes())
    assert card["author"] == {"name": COLE[0], "email": COLE[1]}
    summary = audit(before, "HEAD", repo, anchor=store["genesis"])
    errors = [f.one_line() for r in summary.results for f in r.findings if f.severity == "error"]
    assert errors == []
    assert "-----BEGIN SSH SIGNATURE-----" in git(repo, "cat-file", "commit", "HEAD").stdout  # signed


def cited_small_committed(repo: Path) -> str:
    """A small record (not citing anything) committed with --no-verify; its uuid."""
    from conftest import load_example, place_record
    from roles_store import RECORD, sneak

    new = str(uuidlib.uuid4())
    place_record(repo, load_example("aggregate", "valid", RECORD), record_uuid=new)
    sneak(repo, "a record", COLE)
    return new
