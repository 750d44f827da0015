"""The ``eee validate`` command: formats, exit codes, pins, and no tracebacks."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXED_UUID, PROJECT
from eee.cli import main as eee_main
from eee.store.schemas import Registry, RegistryError
from eee.validation.validate import run

GOOD = EXAMPLES / "aggregate" / "valid" / "v0.3.0_perplexity_unbounded.json"
BAD = EXAMPLES / "aggregate" / "invalid" / "score_below_min.json"


def _store(tmp: Path, source: Path) -> Path:
    path = tmp / "data" / "wikitext" / "meta-llama" / "Llama-2-7b-hf" / f"{FIXED_UUID}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, path)
    return path


def test_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _store(tmp_path / "a", GOOD)
    bad = _store(tmp_path / "b", BAD)
    warn = tmp_path / "c" / "data" / "wikitext" / "meta" / "llama" / f"{FIXED_UUID}.json"
    warn.parent.mkdir(parents=True)
    shutil.copyfile(GOOD, warn)
    assert eee_main(["validate", str(good)]) == 0
    assert eee_main(["validate", str(warn)]) == 2
    assert eee_main(["validate", str(bad)]) == 1
    assert eee_main(["validate", str(good), str(warn), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "1 file checked, 0 errors, 0 warnings" in out


def test_json_format_is_machine_readable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _store(tmp_path, BAD)
    report = tmp_path / "out" / "report.json"
    assert eee_main(["validate", "--format", "json", "--out", str(report), str(bad)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc == json.loads(report.read_text())
    assert doc["summary"]["errors"] == 1
    assert doc["summary"]["records_by_schema_version"] == {"0.3.0": 1}
    (finding,) = doc["findings"]
    assert finding["pointer"] == "$.evaluation_results[0].score_details.score"
    assert finding["check"] == "score"
    assert finding["hint"]


def test_github_format_annotates_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "data" / "qa" / "acme" / "widget-7b"
    folder.mkdir(parents=True)
    sidecar = folder / f"{FIXED_UUID}_samples.jsonl"
    sidecar.write_text('{"schema_version": "0.3.0"}\n')
    assert eee_main(["validate", "--format", "github", str(sidecar)]) == 1
    *annotations, summary = capsys.readouterr().out.splitlines()
    assert any(line.startswith("::error file=") and ",line=1," in line for line in annotations)
    # one line per finding (a message never spills onto lines of its own), then the summary
    assert annotations and all(line.startswith("::error file=") for line in annotations), annotations
    assert summary == f"1 file checked, {len(annotations)} errors, 0 warnings"


def test_rich_format_prints_location_message_and_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _store(tmp_path, BAD)
    eee_main(["validate", str(bad)])
    out = capsys.readouterr().out.splitlines()
    line = next(i for i, text in enumerate(bad.read_text().splitlines(), 1) if '"score": 0.5' in text)
    assert out[0].endswith(
        f"{FIXED_UUID}.json:{line}::$.evaluation_results[0].score_details.score: "
        "[score] score 0.5 is outside the declared range [1, Infinity]"
    )
    assert out[1].strip().startswith("hint: ")


def test_pin_mismatch_refuses_to_validate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    schemas = tmp_path / "schemas"
    shutil.copytree(PROJECT / "schemas", schemas)
    target = schemas / "0.3.0" / "eval.schema.json"
    target.write_text(target.read_text().replace('"minItems": 1', '"minItems": 0', 1))
    with pytest.raises(RegistryError, match=r"0\.3\.0/eval\.schema\.json: sha256 .* does not match its pin"):
        Registry.load(schemas)
    monkeypatch.setenv("EEE_SCHEMAS_DIR", str(schemas))
    monkeypatch.setattr("eee.store.schemas._DEFAULT", None)
    summary = run([str(_store(tmp_path, GOOD))])
    assert summary.exit_code() == 1
    assert summary.fatal and "release a new version instead" in summary.fatal


def test_missing_released_file_is_reported(tmp_path: Path) -> None:
    schemas = tmp_path / "schemas"
    shutil.copytree(PROJECT / "schemas", schemas)
    (schemas / "0.2.1" / "instance_level_eval.schema.json").unlink()
    with pytest.raises(RegistryError, match="released file is missing"):
        Registry.load(schemas)


def test_registry_pins_every_released_version() -> None:
    reg = Registry.load()
    assert reg.current == "0.3.0"
    assert reg.ordered == ["0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.3.0"]
    assert set(reg.pinned_files()) >= {
        f"{v}/{k}.schema.json" for v in reg.ordered for k in ("eval", "instance_level_eval")
    }


def test_instance_versions_accept_both_spellings() -> None:
    reg = Registry.load()
    assert reg.resolve("instance_level_eval_0.2.2", "instance_level_eval") == "0.2.2"
    assert reg.resolve("0.3.0", "instance_level_eval") == "0.3.0"
    assert reg.resolve("instance_level_eval_0.2.2", "eval") is None
    assert reg.resolve("0.1.0", "eval") is None


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00\x01\x02", b"[" * 5000, b'{"a": ' * 3000, b"\xff\xfe{}", b"{" + b'"k": 1,' * 10 + b'"k": 2}'],
    ids=["empty", "binary", "deep_list", "deep_object", "utf16_bom", "many_dupes"],
)
def test_hostile_input_gives_a_message_not_a_traceback(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "data" / "b" / "d" / "m" / f"{FIXED_UUID}.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    proc = subprocess.run(
        [sys.executable, "-m", "eee", "validate", str(path)], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    assert re.search(rf"{FIXED_UUID}\.json(:\d+)?::\$", proc.stdout), proc.stdout


def test_thin_executable_runs_without_install(tmp_path: Path) -> None:
    path = _store(tmp_path, GOOD)
    proc = subprocess.run([str(PROJECT / "tools" / "validate"), str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 errors" in proc.stdout


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert eee_main(["frobnicate"]) == 64
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_an_event_naming_no_record_is_reported_through_a_symlinked_store(tmp_path: Path) -> None:
    """The ledger's findings land on the event file however the store's folder is reached."""
    from eee.governance.events import make_event, write

    real = tmp_path / "real"
    _store(real, GOOD)
    missing = "99999999-9999-4999-8999-999999999999"
    event = write(real, make_event("retract", missing, "gone", {"name": "M", "email": "m@example.org"}))
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    for root in (real, link):
        findings = [f for r in run([str(root / "governance" / "events")]).results for f in r.findings]
        assert [f.check for f in findings] == ["ledger"], root
        assert f"no record {missing[:8]}" in findings[0].message and event.name in findings[0].file


def test_a_large_ledger_lists_the_records_once_and_finds_the_same(tmp_path: Path) -> None:
    """Past 64 named uuids the check lists every record once instead of one pattern per uuid."""
    from eee.governance.events import make_event, write
    from eee.rules.ledger import _LIST_ALL_ABOVE

    _store(tmp_path, GOOD)
    actor = {"name": "M", "email": "m@example.org"}
    write(tmp_path, make_event("dispute", FIXED_UUID, "looks off", actor, reference="https://example.org/1"))
    missing = [f"{i:08x}-9999-4999-8999-999999999999" for i in range(_LIST_ALL_ABOVE + 5)]
    for uuid in missing:
        write(tmp_path, make_event("retract", uuid, "gone", actor))
    findings = [f for r in run([str(tmp_path / "governance" / "events")]).results for f in r.findings]
    assert sorted(f.message.split("no record ")[1][:8] for f in findings) == sorted(u[:8] for u in missing)


@pytest.mark.parametrize(
    ("remove", "pointer", "hint"),
    [
        (
            ("source_metadata", "evaluator_relationship"),
            "$.source_metadata",
            'allowed values: "first_party", "third_party", "collaborative", "other"',
        ),
        (
            ("model_info", "additional_details", "deployment_type"),
            "$.model_info.additional_details",
            'allowed values: "self_deployed", "externally_managed", "unknown"',
        ),
        (
            ("model_info", "additional_details"),
            "$.model_info",
            "it needs deployment_type (self_deployed | externally_managed | unknown), "
            "model_availability (open_weights | closed_weights | unknown)",
        ),
    ],
)
def test_a_missing_field_s_hint_lists_its_allowed_values(
    tmp_path: Path, remove: tuple[str, ...], pointer: str, hint: str
) -> None:
    doc = json.loads(GOOD.read_text())
    holder = doc
    for key in remove[:-1]:
        holder = holder[key]
    del holder[remove[-1]]
    path = tmp_path / "record.json"
    path.write_text(json.dumps(doc))
    from eee.validation.validate import Options

    summary = run([path], Options(repo_checks=False))
    (finding,) = [f for r in summary.results for f in r.findings if f.check == "schema"]
    assert finding.pointer == pointer and f'"{remove[-1]}" is a required property' in finding.message
    assert hint in (finding.hint or ""), finding.hint
