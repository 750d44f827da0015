"""Writes and inputs (issue 13, items 11 and 12): ``eee migrate --out`` never writes through
a link into a store; converters read logs within bounds and write nothing on failure."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXED_UUID, git, make_store, write_json
from eee.commands.convert import main as convert_main
from eee.commands.migrate import main as migrate_main

HARNESS = EXAMPLES / "harness"
INSPECT_LOG = HARNESS / "inspect" / "tiny_qa.json"
INSPECT_EVAL = HARNESS / "inspect" / "tiny_qa.eval"
LM_EVAL = HARNESS / "lm_eval"
HELM_RUN = next((HARNESS / "helm").iterdir())
OLD = EXAMPLES / "aggregate" / "valid" / "v0.2.0_helm_leaderboard.json"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and ".git" not in p.parts
    }


# --- eee migrate --out ------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Path:
    repo = make_store(tmp_path, hooks=False)
    doc = json.loads(OLD.read_text())
    write_json(repo / "data" / "helm_lite" / "acme" / "widget-7b" / f"{FIXED_UUID}.json", doc)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a 0.2.0 record")
    return repo


@pytest.mark.parametrize(
    "link",
    ["data", "data/helm_lite", "data/helm_lite/acme", "data/helm_lite/acme/widget-7b"],
    ids=["data", "benchmark", "developer", "model"],
)
def test_migrate_never_writes_through_a_linked_folder_into_the_store(
    store: Path, tmp_path: Path, link: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "export"
    (out / link).parent.mkdir(parents=True, exist_ok=True)
    (out / link).symlink_to(store / link, target_is_directory=True)
    before = _tree(store)
    code = migrate_main([str(store / "data"), "--out", str(out), "--to", "0.3.0"])
    assert code == 1
    assert _tree(store) == before  # nothing written, nothing overwritten in the store
    assert git(store, "status", "--porcelain").stdout == ""
    text = capsys.readouterr()
    if link == "data":  # the whole output folder lands in the store: refused before any record
        expected = f"would put the copies inside the store folder {store / 'data'}: migration never writes under data/"
    else:  # a folder below: each record whose copy would go through it is refused
        expected = f"{out / link} is a symbolic link; migration never writes through a link"
    assert expected in text.out + text.err, text


def test_migrate_refuses_an_output_folder_that_resolves_into_the_store(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "elsewhere").symlink_to(store / "data")
    before = _tree(store)
    assert migrate_main([str(store / "data"), "--out", str(tmp_path / "elsewhere" / "x")]) == 1
    assert _tree(store) == before
    assert "would put the copies inside the store folder" in capsys.readouterr().err


def test_migrate_refuses_a_linked_record_target_and_report(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "export"
    victim = store / "data" / "helm_lite" / "acme" / "widget-7b" / f"{FIXED_UUID}.json"
    target = out / "data" / "helm_lite" / "acme" / "widget-7b" / f"{FIXED_UUID}.json"
    target.parent.mkdir(parents=True)
    target.symlink_to(victim)
    before = _tree(store)
    assert migrate_main([str(store / "data"), "--out", str(out)]) == 1
    assert _tree(store) == before
    assert target.is_symlink()
    out2 = tmp_path / "export2"
    out2.mkdir()
    (out2 / "migration-report.json").symlink_to(store / "README.md")
    capsys.readouterr()
    assert migrate_main([str(store / "data"), "--out", str(out2)]) == 1
    assert _tree(store) == before
    assert f"{out2 / 'migration-report.json'} is a symbolic link" in capsys.readouterr().err


def test_migrate_to_a_plain_folder_still_works(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    assert migrate_main([str(store / "data"), "--out", str(out)]) == 0
    assert (out / "data" / "helm_lite" / "acme" / "widget-7b" / f"{FIXED_UUID}.json").is_file()


# --- converters -------------------------------------------------------------------------------------


@pytest.fixture
def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_store(tmp_path, hooks=False, name="target")
    monkeypatch.chdir(repo)
    return repo


def _convert_fails_cleanly(repo: Path, args: list[str], capsys: pytest.CaptureFixture[str], expect: str) -> None:
    before = _tree(repo)
    assert convert_main(args) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text
    assert expect in text, text
    assert _tree(repo) == before
    assert git(repo, "status", "--porcelain").stdout == ""


def _deep_json(levels: int) -> bytes:
    return b'{"eval": ' + b"[" * levels + b"]" * levels + b"}"


@pytest.mark.parametrize("levels", [200, 300, 2000, 200_000])
def test_inspect_log_nested_too_deeply(target: Path, tmp_path: Path, capsys, levels: int) -> None:
    log = tmp_path / "deep.json"
    log.write_bytes(_deep_json(levels))
    _convert_fails_cleanly(target, ["inspect", "--log-path", str(log)], capsys, "nested too deeply")


def test_lm_eval_results_with_a_huge_integer(target: Path, tmp_path: Path, capsys) -> None:
    logs = tmp_path / "lm"
    shutil.copytree(LM_EVAL, logs)
    results = next(logs.glob("results_*.json"))
    text = results.read_text()
    doc = json.loads(text)
    doc["n-samples-huge"] = 1
    results.write_text(json.dumps(doc).replace('"n-samples-huge": 1', '"n-samples-huge": ' + "9" * 5000))
    _convert_fails_cleanly(target, ["lm_eval", "--log-path", str(logs)], capsys, "5000 digits")
    # NaN makes the parser fall back to the standard library: the cap holds there too
    results.write_text(json.dumps(doc).replace('"n-samples-huge": 1', '"x": NaN, "n-samples-huge": ' + "9" * 5000))
    _convert_fails_cleanly(target, ["lm_eval", "--log-path", str(logs)], capsys, "5000 digits")


@pytest.mark.parametrize("harness", ["lm_eval", "inspect", "helm"])
def test_a_results_file_linked_to_a_device(target: Path, tmp_path: Path, capsys, harness: str) -> None:
    if harness == "lm_eval":
        logs = tmp_path / "lm"
        shutil.copytree(LM_EVAL, logs)
        victim = next(logs.glob("results_*.json"))
    elif harness == "inspect":
        logs = tmp_path / "insp"
        logs.mkdir()
        victim = logs / "run.json"
    else:
        logs = tmp_path / "helm" / HELM_RUN.name
        shutil.copytree(HELM_RUN, logs)
        victim = logs / "scenario_state.json"
    victim.unlink(missing_ok=True)
    victim.symlink_to("/dev/zero")
    _convert_fails_cleanly(target, [harness, "--log-path", str(logs)], capsys, "character device")
    _convert_fails_cleanly(target, [harness, "--log-path", str(victim)], capsys, "character device")


def test_a_results_file_that_is_a_fifo(target: Path, tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "results_2025-01-01T00-00-00.json"
    os.mkfifo(fifo)
    _convert_fails_cleanly(target, ["lm_eval", "--log-path", str(fifo)], capsys, "named pipe")
    eval_fifo = tmp_path / "x.eval"
    os.mkfifo(eval_fifo)
    _convert_fails_cleanly(target, ["inspect", "--log-path", str(eval_fifo)], capsys, "named pipe")


def _bomb(path: Path, member: str, size: int, lie: bool = False) -> None:
    """An .eval archive whose ``member`` inflates to ``size`` zero bytes (``lie``: its
    headers declare 10 bytes, so only streaming finds out)."""
    with zipfile.ZipFile(INSPECT_EVAL) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename != member:
                dst.writestr(info.filename, src.read(info.filename))
        with dst.open(member, "w", force_zip64=False) as fh:
            block = b"\0" * (1 << 20)
            for _ in range(size // len(block)):
                fh.write(block)
    if lie:
        data = bytearray(path.read_bytes())
        name = member.encode()
        at = 0
        while (at := data.find(b"PK\x01\x02", at)) >= 0:
            name_len = int.from_bytes(data[at + 28 : at + 30], "little")
            if bytes(data[at + 46 : at + 46 + name_len]) == name:
                data[at + 24 : at + 28] = (10).to_bytes(4, "little")
            at += 4
        at = 0
        while (at := data.find(b"PK\x03\x04", at)) >= 0:
            name_len = int.from_bytes(data[at + 26 : at + 28], "little")
            if bytes(data[at + 30 : at + 30 + name_len]) == name:
                data[at + 22 : at + 26] = (10).to_bytes(4, "little")
            at += 4
        path.write_bytes(bytes(data))


@pytest.mark.parametrize("lie", [False, True], ids=["declared", "lying-headers"])
def test_eval_zip_bomb_stops_at_the_cap(
    target: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, lie: bool
) -> None:
    import eee.store.limits

    monkeypatch.setattr(eee.store.limits, "ARCHIVE_MAX_BYTES", 32 << 20)  # the same code path as 2 GiB, quicker
    bomb = tmp_path / "bomb.eval"
    _bomb(bomb, "samples/2_epoch_1.json", 64 << 20, lie=lie)
    assert bomb.stat().st_size < 1 << 20
    # declared sizes are checked first; a member whose headers lie is cut off by zipfile at its
    # declared size (and fails its CRC), and the streamed read is capped besides
    expect = "bomb.eval!samples/2_epoch_1.json::$: " + ("cannot read this member" if lie else "decompresses to")
    _convert_fails_cleanly(target, ["inspect", "--log-path", str(bomb)], capsys, expect)


def test_a_normal_eval_archive_still_converts(target: Path) -> None:
    assert convert_main(["inspect", "--log-path", str(INSPECT_EVAL), "--no-stage"]) == 0


# --- governance tools: the corrected record given to supersede ---------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "device", "deep"])
def test_supersede_with_a_bad_corrected_record_is_a_clear_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    from conftest import load_example, place_record
    from eee.commands.governance import run

    repo = make_store(tmp_path, hooks=False)
    monkeypatch.chdir(repo)
    place_record(repo, load_example("aggregate", "valid", "v0.3.0_perplexity_unbounded.json"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a record")
    before = _tree(repo)
    source = tmp_path / "corrected.json"
    if kind == "fifo":
        os.mkfifo(source)
    elif kind == "device":
        source.symlink_to("/dev/zero")
    else:
        source.write_bytes(b'{"a": ' + b"[" * 3000 + b"]" * 3000 + b"}")
    assert run("supersede", [FIXED_UUID, str(source), "--reason", "corrected"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert {"fifo": "named pipe", "device": "character device", "deep": "nested too deeply"}[kind] in err
    assert _tree(repo) == before
