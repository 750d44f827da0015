"""To the Hugging Face Hub (issue 26, item 2): ``eee export hf-evals`` writes the
``.eval_results/*.yaml`` files that huggingface_hub's own parser reads with the Hub's keys,
one per benchmark and variant, each entry linking to the record's page; unmapped
benchmarks are listed and skipped. ``eee export hf-dataset`` writes a dataset folder that
the real ``datasets`` library loads offline, one config per benchmark and one row per
active result. Hostile text in records stays data in both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import place_record, record_of
from eee.cli import main as eee
from eee.governance.events import make_event, write

SITE = "https://example.org/eee/"
ME = {"name": "Maintainer", "email": "m@example.org"}
HOSTILE = "acc: 1\n- [x] &a *a !!python/object/apply:os.system ['echo hi'] ---\n\"' # {} <script>|"

A = "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"  # acme/widget-7b on wikitext, active
B = "1b2c3d4e-5f6a-4b7c-9d8e-9f0a1b2c3d4e"  # Acme/widget-7b (an alias spelling) on wikitext, hostile metric
C = "2c3d4e5f-6a7b-4c8d-ae9f-0a1b2c3d4e5f"  # retracted
D = "3d4e5f6a-7b8c-4d9e-bf0a-1b2c3d4e5f6a"  # on a benchmark the registry maps to no Hub dataset
E = "4e5f6a7b-8c9d-4eaf-8a1b-2c3d4e5f6a7b"  # superseded by F
F = "5f6a7b8c-9d0e-4fa1-9b2c-3d4e5f6a7b8c"
G = "6a7b8c9d-0e1f-4a2b-ac3d-4e5f6a7b8c9d"  # a duplicate of A
H = "7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e"  # another model


def _doc(model: str, score: float, run: str, metric: str = "word_perplexity") -> dict:
    doc = record_of(model, score)
    doc["evaluation_id"] = f"wikitext/{run}"
    doc["retrieved_timestamp"] = "1770000004"
    doc["evaluation_timestamp"] = "2026-05-01T12:00:00Z"
    doc["evaluation_results"][0]["metric_config"]["metric_id"] = metric
    return doc


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hub") / "store"
    names = root / "governance" / "identity"
    names.mkdir(parents=True)
    (names / "developers.yaml").write_text("kind: developer\nentries:\n  acme: {aliases: [Acme]}\n")
    (names / "benchmarks.yaml").write_text(
        "kind: benchmark\nentries:\n  wikitext:\n    hub: {dataset: Salesforce/wikitext, task: wikitext-2-raw-v1}\n"
    )
    (root / "mkdocs.yml").write_text("site_name: A test store\n")
    (root / "governance" / "settings.yaml").write_text(f"site_url: {SITE}\n")  # a setting of the store
    place_record(root, _doc("acme/widget-7b", 8.1, "a"), benchmark="wikitext", record_uuid=A)
    hostile = _doc("Acme/widget-7b", 8.2, "b", metric=HOSTILE)
    hostile["evaluation_results"][0]["evaluation_name"] = HOSTILE
    place_record(root, hostile, benchmark="wikitext", record_uuid=B)
    place_record(root, _doc("acme/widget-7b", 9.9, "c"), benchmark="wikitext", record_uuid=C)
    place_record(root, _doc("acme/widget-7b", 7.0, "d"), benchmark="other-bench", record_uuid=D)
    place_record(root, _doc("acme/widget-7b", 5.0, "e"), benchmark="wikitext", record_uuid=E)
    place_record(root, _doc("acme/widget-7b", 5.1, "f"), benchmark="wikitext", record_uuid=F)
    place_record(root, _doc("acme/widget-7b", 8.1, "g"), benchmark="wikitext", record_uuid=G)
    place_record(root, _doc("zeta/other-1b", 6.0, "h"), benchmark="wikitext", record_uuid=H)
    write(root, make_event("retract", C, "a faulty log", ME))
    write(root, make_event("supersede", E, "the corrected run", ME, replacement=F))
    write(root, make_event("duplicate", G, "the same result twice", ME, of=A))
    return root


# --- hf-evals ------------------------------------------------------------------------------


def test_a_model_s_results_as_the_hub_reads_them(store: Path, tmp_path: Path, capsys) -> None:
    from huggingface_hub import EvalResultEntry, parse_eval_result_entries

    out = tmp_path / "model-repo"
    assert eee(["export", "hf-evals", "--model", "acme/widget-7b", "--out", str(out), "--store", str(store)]) == 2
    said = capsys.readouterr()
    assert "skipped 1 result(s) of other-bench: no Hub dataset for this benchmark in the identity registry" in said.err
    files = sorted((out / ".eval_results").glob("*.yaml"))
    assert len(files) == 2  # wikitext, in two variants: its two metrics
    entries = {}
    for path in files:
        data = yaml.safe_load(path.read_text())  # the Hub's reader: YAML, then its own parser
        for item in data:
            assert {"dataset", "value"} <= set(item) and {"id", "task_id"} <= set(item["dataset"])
        for entry in parse_eval_result_entries(data):
            assert isinstance(entry, EvalResultEntry)
            uuid = entry.source_url.rstrip("/").rsplit("/", 1)[-1]
            entries[uuid] = entry
    assert set(entries) == {A, F, B}  # active only: not the retracted, superseded, duplicate one; all spellings
    a = entries[A]
    assert (a.dataset_id, a.task_id, a.value) == ("Salesforce/wikitext", "wikitext-2-raw-v1", 8.1)
    assert a.source_url == f"{SITE}catalogue/records/{A}/" and a.source_name == "A test store"
    assert a.date == "2026-05-01T12:00:00Z" and a.notes.startswith("word_perplexity (lm_eval)")
    assert entries[B].notes.startswith(HOSTILE)  # data, as it was written


def test_an_alias_names_the_same_model_and_other_files_are_left_alone(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "model-repo"
    (out / ".eval_results").mkdir(parents=True)
    (out / ".eval_results" / "mine.yaml").write_text("- kept: true\n")
    assert eee(["export", "hf-evals", "--model", "Acme/widget-7b", "--out", str(out), "--store", str(store)]) == 2
    assert (out / ".eval_results" / "mine.yaml").read_text() == "- kept: true\n"
    assert len(list((out / ".eval_results").glob("*.yaml"))) == 3


def test_no_record_of_the_model_is_an_error(store: Path, tmp_path: Path, capsys) -> None:
    assert eee(["export", "hf-evals", "--model", "nobody/none", "--out", str(tmp_path), "--store", str(store)]) == 1
    assert "no active record of 'nobody/none'" in capsys.readouterr().err
    assert not (tmp_path / ".eval_results").exists()


def test_a_store_without_a_site_url_links_nowhere(tmp_path: Path, capsys) -> None:
    """Without the store's site_url setting, entries name no source at all: never a placeholder."""
    from huggingface_hub import parse_eval_result_entries

    root = tmp_path / "store"
    (root / "governance" / "identity").mkdir(parents=True)
    (root / "governance" / "identity" / "benchmarks.yaml").write_text(
        "kind: benchmark\nentries:\n  wikitext:\n    hub: {dataset: Salesforce/wikitext, task: wikitext-2-raw-v1}\n"
    )
    place_record(root, _doc("acme/widget-7b", 8.1, "a"), benchmark="wikitext", record_uuid=A)
    (root / "mkdocs.yml").write_text("site_name: no address\nsite_url: https://placeholder.example.org/\n")
    out = tmp_path / "out"
    assert eee(["export", "hf-evals", "--model", "acme/widget-7b", "--store", str(root), "--out", str(out)]) == 0
    (path,) = (out / ".eval_results").glob("*.yaml")
    text = path.read_text()
    assert "url" not in text and "placeholder" not in text and "source" not in text
    (entry,) = parse_eval_result_entries(yaml.safe_load(text))
    assert entry.source_url is None and entry.source_name is None and A in entry.notes


def test_a_site_url_that_is_not_an_address_is_refused(tmp_path: Path, capsys) -> None:
    root = tmp_path / "store"
    place_record(root, _doc("acme/widget-7b", 8.1, "a"), benchmark="wikitext", record_uuid=A)
    (root / "governance").mkdir()
    (root / "governance" / "settings.yaml").write_text("site_url: javascript:alert(1)\n")
    assert eee(["export", "hf-evals", "--model", "acme/widget-7b", "--store", str(root)]) == 1
    err = capsys.readouterr().err
    assert "governance/settings.yaml" in err and "site_url is an http(s) address" in err and "Traceback" not in err


def test_helm_s_variants_are_files_of_their_own(tmp_path: Path) -> None:
    """One HELM run holds each metric on the valid and test splits, and under the robustness
    and fairness perturbations: each variant is a file of its own, its notes say which."""
    from huggingface_hub import parse_eval_result_entries

    from conftest import EXAMPLES

    root = tmp_path / "store"
    (root / "governance" / "identity").mkdir(parents=True)
    (root / "governance" / "identity" / "benchmarks.yaml").write_text(
        "kind: benchmark\nentries:\n  mmlu:\n    hub: {dataset: cais/mmlu, task: all}\n"
    )
    run = next((EXAMPLES / "harness" / "helm").iterdir())
    assert eee(["convert", "helm", str(run), "--store", str(root), "--no-stage"]) == 0
    out = tmp_path / "out"
    assert eee(["export", "hf-evals", "--model", "acme/tiny-lm", "--store", str(root), "--out", str(out)]) in (0, 2)
    notes: dict[str, list[str]] = {}
    for path in (out / ".eval_results").glob("*.yaml"):
        notes[path.name] = [e.notes for e in parse_eval_result_entries(yaml.safe_load(path.read_text()))]
    exact = {name: n for name, n in notes.items() if name.startswith("mmlu--exact-match")}
    assert len(exact) >= 2, notes  # at least two variants of the metric, each in a file of its own
    assert all(len(n) == 1 for n in exact.values())  # one result of the run in each
    said = [n[0].split(" (", 1)[0] for n in exact.values()]
    assert len(set(said)) == len(said) and any("split" in s for s in said)  # the notes tell them apart


def test_the_store_s_own_model_on_the_hub_out_of_the_box(tmp_path: Path) -> None:
    """Issue 33: the project's identity registry maps its benchmarks whose Hub datasets are
    known, so LLaMA 65B's MMLU results leave for the Hub as they are, read back by
    huggingface_hub, with no placeholder link (the project sets no site_url)."""
    from huggingface_hub import parse_eval_result_entries

    from conftest import PROJECT
    from eee.store.identity import read
    from eee.store.tree import WorkTree

    names = read(WorkTree(str(PROJECT)))
    assert not names.problems
    mapped = {b: names.hub(b) for b in names["benchmark"].entries if names.hub(b)}
    assert {"mmlu", "helm_mmlu", "ai2_arc", "hellaswag", "wikitext"} <= set(mapped)
    for bench, hub in mapped.items():  # each mapping with its source: the page that shows the id
        assert hub["source"]["url"].startswith("https://") and hub["source"]["note"], bench
    out = tmp_path / "llama"
    code = eee(["export", "hf-evals", "--model", "meta-llama/llama-65b", "--store", str(PROJECT), "--out", str(out)])
    assert code in (0, 2)
    files = sorted((out / ".eval_results").glob("*.yaml"))
    assert files
    entries = [e for path in files for e in parse_eval_result_entries(yaml.safe_load(path.read_text()))]
    assert entries and {e.dataset_id for e in entries} <= {h["dataset"] for h in mapped.values()}
    assert {e.dataset_id for e in entries} == {"cais/mmlu"}
    assert sorted(e.value for e in entries) == [48.8, 63.7]  # HELM's and lm-evaluation-harness's, as published
    for path in files:
        assert "example.org" not in path.read_text() and "url:" not in path.read_text()


# --- hf-dataset -------------------------------------------------------------------------------


def _load(folder: Path, config: str | None, home: Path) -> dict:
    """``datasets.load_dataset(folder, config)`` in a process of its own, offline, with its own HF_HOME."""
    code = (
        "import json, sys, datasets\n"
        "d = datasets.load_dataset(sys.argv[1], *sys.argv[2:], split='train')\n"
        "print(json.dumps({'rows': d.num_rows, 'columns': d.column_names, 'uuids': list(d['record_uuid']),"
        " 'metrics': list(d['metric_id']), 'developers': list(d['developer_canonical'])}))\n"
    )
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(home))
    proc = subprocess.run(
        [sys.executable, "-c", code, str(folder), *([config] if config else [])],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_catalogue_as_a_dataset_datasets_loads(store: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "dataset"
    assert eee(["export", "hf-dataset", "--out", str(out), "--store", str(store), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows"] == 5 and set(report["configs"]) == {"wikitext", "other-bench"}
    assert report["left_out"] == {"retracted": 1, "superseded": 1, "duplicate": 1}
    card = (out / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    assert [c["config_name"] for c in header["configs"]] == ["all", "other-bench", "wikitext"]
    assert header["configs"][0]["default"] is True and header["license"] == "other"
    assert header["license_link"] == "LICENSE.md" and (out / "LICENSE.md").is_file()
    assert _load(out, None, tmp_path / "hf-home")["rows"] == 5  # load_dataset(path): the default config
    wikitext = _load(out, "wikitext", tmp_path / "hf-home")
    assert wikitext["rows"] == 4 and sorted(wikitext["uuids"]) == sorted([A, B, F, H])  # one row per active result
    assert HOSTILE in wikitext["metrics"]  # hostile text is data in the rows
    assert set(wikitext["developers"]) == {"acme", "zeta"}  # Acme is acme
    assert _load(out, "other-bench", tmp_path / "hf-home")["rows"] == 1
    assert HOSTILE.splitlines()[0] not in card.split("---\n")[1]  # the header holds no record text


def test_only_a_folder_this_command_wrote_is_replaced(store: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "dataset"
    out.mkdir()
    (out / "precious.txt").write_text("mine")
    assert eee(["export", "hf-dataset", "--out", str(out), "--store", str(store)]) == 1
    assert (out / "precious.txt").read_text() == "mine" and "left alone" in capsys.readouterr().err


def test_a_license_the_exporter_names(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "dataset"
    assert eee(["export", "hf-dataset", "--out", str(out), "--store", str(store), "--license", "cc-by-4.0"]) == 0
    header = yaml.safe_load((out / "README.md").read_text().split("---\n")[1])
    assert header["license"] == "cc-by-4.0" and "license_link" not in header and not (out / "LICENSE.md").exists()
    assert eee(["export", "hf-dataset", "--out", str(out), "--store", str(store), "--license", "Not A License!"]) == 64
