"""The rule registry (issue 22): every check the store reports is declared once, every
finding names a registered rule, the text output shows it, ``eee rules`` explains it and
``eee flag --rule`` takes nothing else."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXED_UUID, PROJECT, git, load_example, make_store, place_record, sha256, write_json
from eee.rules.registry import BY_ID, FLAGGABLE, IDS, RULES, suggest, words

PACKAGE = PROJECT / "tools" / "eee"


def _emitted_ids() -> dict[str, list[str]]:
    """Every rule id the package's source writes: ``check="..."`` in any call, and the
    string default of a ``check`` parameter (``refusal(..., check="refused")``)."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            values: list[ast.expr] = []
            if isinstance(node, ast.Call):
                values = [k.value for k in node.keywords if k.arg == "check"]
            elif isinstance(node, ast.FunctionDef):
                params = [*node.args.args, *node.args.kwonlyargs]
                defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + list(node.args.defaults)
                defaults += list(node.args.kw_defaults)
                values = [d for p, d in zip(params, defaults, strict=True) if p.arg == "check" and d is not None]
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    where = f"{path.relative_to(PROJECT)}:{value.lineno}"
                    found.setdefault(value.value, []).append(where)
    return found


def test_every_rule_id_the_package_writes_is_registered() -> None:
    emitted = _emitted_ids()
    assert len(emitted) >= 25  # the scan sees the package's checks
    unregistered = {rule: places for rule, places in emitted.items() if rule not in IDS}
    assert not unregistered, unregistered


def test_a_finding_names_its_rule_explicitly() -> None:
    from eee.reporting.findings import Finding

    with pytest.raises(TypeError):
        Finding("a.json", "$", "no rule named")  # type: ignore[call-arg]


def test_every_rule_is_declared_once_and_explained() -> None:
    schema = json.loads((PROJECT / "schemas" / "governance" / "1.1.0" / "event.schema.json").read_text())
    pattern = re.compile(schema["properties"]["rule"]["pattern"])
    assert len(IDS) == len(RULES)
    for rule in RULES:
        assert pattern.match(rule.id), rule.id  # a flag event can name it
        assert rule.severity in ("error", "warning")
        for text in (rule.summary, rule.hint, rule.means, rule.why, rule.settle):
            assert text.strip() and "\n" not in text, rule.id
        assert not set(rule.words) & IDS, f"{rule.id}: a word for a rule is never an id"
    assert {"score", "naming", "duplicates", "benchmark", "near-miss"} <= FLAGGABLE
    assert not {"json", "schema", "version", "layout", "immutable", "event", "ledger"} & FLAGGABLE


def test_words_lead_to_their_rule_and_typos_to_the_nearest() -> None:
    assert words()["bounds"] == "score"
    assert suggest("bounds") == "score"
    assert suggest("scor") == "score"
    assert suggest("nearmiss") == "near-miss"
    assert suggest("zzzzzzzz") is None


def test_the_store_s_committed_flags_name_registered_flaggable_rules() -> None:
    rules = set()
    for path in (PROJECT / "governance" / "events").glob("*.yaml"):
        m = re.search(r"^rule: (\S+)$", path.read_text(encoding="utf-8"), re.M)
        if m:
            rules.add(m.group(1))
    assert rules, "the store holds flags"
    assert rules <= FLAGGABLE, rules - FLAGGABLE


# --- every example and fuzz case: only registered ids ------------------------------------------


def _example_stores(tmp: Path) -> list[Path]:
    from eee.rules.record import main_folder
    from eee.store.paths import canonical_folders

    paths = []
    for kind in ("valid", "invalid", "warning"):
        for example in sorted((EXAMPLES / "aggregate" / kind).glob("*.json")):
            if example.name.startswith("_"):
                continue
            raw = example.read_bytes()
            folders, benchmark = ("meta-llama", "Llama-2-7b-hf"), "bench"
            try:
                doc = json.loads(raw)
                folders = canonical_folders(doc["model_info"]["id"]) or folders
                benchmark = main_folder(doc) or benchmark
            except Exception:
                pass
            path = tmp / f"a-{kind}-{example.stem}" / "data" / benchmark / folders[0] / folders[1]
            path.mkdir(parents=True)
            (path / f"{FIXED_UUID}.json").write_bytes(raw)
            paths.append(path / f"{FIXED_UUID}.json")
    aggregate = load_example("instance", "aggregate.json")
    for kind in ("valid", "invalid", "warning"):
        for example in sorted((EXAMPLES / "instance" / kind).glob("*.jsonl")):
            folder = tmp / f"i-{kind}-{example.stem}" / "data" / "qa-bench" / "acme" / "widget-7b"
            folder.mkdir(parents=True)
            sidecar = folder / f"{FIXED_UUID}_samples.jsonl"
            sidecar.write_bytes(example.read_bytes())
            doc = json.loads(json.dumps(aggregate))
            doc["detailed_evaluation_results"].update(
                file_path=f"data/qa-bench/acme/widget-7b/{FIXED_UUID}_samples.jsonl",
                checksum=sha256(sidecar),
                total_rows=example.read_bytes().count(b"\n"),
            )
            paths.append(write_json(folder / f"{FIXED_UUID}.json", doc))
    return paths


def test_every_example_and_fuzz_case_yields_only_registered_ids(tmp_path: Path) -> None:
    from eee.validation.validate import run
    from fuzzing import build, clean_seeds

    checks: set[str] = set()
    summary = run([str(p) for p in _example_stores(tmp_path / "examples")])
    checks |= {f.check for r in summary.results for f in r.findings}
    migration = [p for p in (EXAMPLES / "migration").rglob("*") if p.suffix in (".json", ".jsonl")]
    summary = run([str(p) for p in migration if not p.name.startswith("_")])
    checks |= {f.check for r in summary.results for f in r.findings}
    root = tmp_path / "fuzz"
    root.mkdir()
    build(root, 7, 300, 80, 80, clean_seeds(tmp_path / "seeds"))
    summary = run([str(root)])
    checks |= {f.check for r in summary.results for f in r.findings}
    assert checks <= IDS, checks - IDS
    # the corpus reaches the rules of records, sidecars, paths and events
    assert {"json", "schema", "version", "score", "sidecar", "layout", "event", "near-miss", "input"} <= checks


# --- eee rules ------------------------------------------------------------------------------


def _eee(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from eee.cli import main

    capsys.readouterr()
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_eee_rules_lists_every_rule_and_explains_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _eee(["rules", "--format", "json"], capsys)
    assert code == 0
    listed = json.loads(out)["rules"]
    assert [r["id"] for r in listed] == [r.id for r in RULES]
    assert all({"severity", "flaggable", "summary", "hint", "means", "why", "settle"} <= set(r) for r in listed)
    code, out, _ = _eee(["rules"], capsys)
    assert code == 0
    assert all(re.search(rf"^{re.escape(r.id)}\s", out, re.M) for r in RULES)
    code, out, _ = _eee(["rules", "score"], capsys)
    assert code == 0
    assert out.startswith("score (error, record; a flag may accept a finding of it)")
    for title in ("What it means:", "Why it exists:", "How a finding is settled:"):
        assert title in out
    assert "bounds" in out  # the words people use for it
    code, out, _ = _eee(["rules", "json", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["flaggable"] is False


def test_eee_rules_refuses_a_word_with_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _eee(["rules", "bounds"], capsys)
    assert code == 64 and out == ""
    assert "unknown rule 'bounds'; did you mean 'score'?" in err


# --- text output ----------------------------------------------------------------------------


def test_text_output_shows_the_rule_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
    doc["evaluation_results"][0]["score_details"]["score"] = 0.5
    path = place_record(tmp_path, doc)
    code, out, _ = _eee(["validate", str(path)], capsys)
    assert code == 1
    line = next(x for x in out.splitlines() if "score_details.score" in x)
    assert re.fullmatch(
        r"\S+\.json:\d+::\$\.evaluation_results\[0\]\.score_details\.score: \[score\] score 0\.5 .*", line
    )
    code, out, _ = _eee(["validate", "--format", "json", str(path)], capsys)
    assert json.loads(out)["findings"][0]["check"] == "score"  # the JSON report names it as it always did


def test_the_hooks_show_the_rule_id(tmp_path: Path) -> None:
    from conftest import commit

    store = make_store(tmp_path)
    doc = load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json")
    doc["evaluation_results"][0]["score_details"]["score"] = 0.5
    place_record(store, doc)
    git(store, "add", "-A")
    proc = commit(store, "an out-of-range score")
    assert proc.returncode == 1
    assert "::$.evaluation_results[0].score_details.score: [score] score 0.5 is outside" in proc.stdout + proc.stderr


# --- eee flag --rule ----------------------------------------------------------------------------


@pytest.fixture
def flag_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    store = make_store(tmp_path, hooks=False)
    place_record(store, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"))
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "a record")
    monkeypatch.setenv("EEE_PYTHON", sys.executable)
    return store


def test_flag_refuses_an_unknown_rule_with_a_did_you_mean(flag_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = "$.evaluation_results[0].score_details.score"
    argv = ["flag", FIXED_UUID, "--rule", "bounds", "--json-path", path, "--reason", "r", "--store", str(flag_store)]
    code, _, err = _eee(argv, capsys)
    assert code == 64, err
    assert "did you mean 'score'?" in err
    assert not (flag_store / "governance" / "events").exists()
    code, _, err = _eee([*argv[:3], "scroe", *argv[4:]], capsys)
    assert code == 64 and "did you mean 'score'?" in err


@pytest.mark.parametrize("path", ["evaluation_results[0]", "$.a.", '$.a["b"]', "$[01]", "$.a b"])
def test_flag_refuses_a_json_path_that_is_not_one(
    flag_store: Path, capsys: pytest.CaptureFixture[str], path: str
) -> None:
    argv = ["flag", FIXED_UUID, "--rule", "score", "--json-path", path, "--reason", "r", "--store", str(flag_store)]
    code, _, err = _eee(argv, capsys)
    assert code == 64, err
    assert "is not a JSON path as findings write it" in err
    assert not (flag_store / "governance" / "events").exists()


def test_perform_refuses_an_unknown_rule(flag_store: Path) -> None:
    from eee.reporting.findings import Refused
    from eee.write.actions import perform

    with pytest.raises(Refused, match="did you mean 'score'"):
        perform(flag_store, "flag", FIXED_UUID, "r", rule="bounds", path="$.evaluation_results[0]")
    assert BY_ID["score"].flaggable
