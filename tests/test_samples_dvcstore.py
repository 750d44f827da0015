"""The sidecar path that skips DVC's repository index (eee.dvc.store), against real DVC:
what `eee samples add/push` writes, stock `dvc status` / `dvc pull` read, and what stock
`dvc add` / `dvc push` wrote, `eee samples pull` reads; named sidecars move alone."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, FIXED_UUID, dvc, git, make_store, place_with_sidecar

pytestmark = pytest.mark.slow

ROWS = (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()
OTHER_UUID = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"


def eee(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DVC_NO_ANALYTICS="1")
    return subprocess.run(
        [sys.executable, "-m", "eee", "samples", *args], cwd=repo, capture_output=True, text=True, env=env
    )


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def rel(path: Path, repo: Path) -> str:
    return path.relative_to(repo).as_posix()


def cache_object(repo: Path, md5: str) -> Path:
    return repo / ".dvc" / "cache" / "files" / "md5" / md5[:2] / md5[2:]


def md5_of(pointer: Path) -> str:
    return next(line.split(": ")[1] for line in pointer.read_text().splitlines() if "md5:" in line)


def test_the_same_pointer_cache_object_and_gitignore_as_dvc_add(tmp_path: Path) -> None:
    ours = make_store(tmp_path, hooks=False, with_dvc=True, name="ours", sidecar_git_max_bytes=0)
    theirs = make_store(tmp_path, hooks=False, with_dvc=True, name="theirs", sidecar_git_max_bytes=0)
    _, mine = place_with_sidecar(ours, ROWS)
    _, stock = place_with_sidecar(theirs, ROWS)
    (stock.parent / ".gitignore").write_text("/already-here")  # no final newline: both append alike
    (mine.parent / ".gitignore").write_text("/already-here")
    ok(eee(ours, "add", rel(mine, ours)))
    dvc(theirs, "add", "-q", rel(stock, theirs))

    pointer, stock_pointer = (p.with_name(p.name + ".dvc") for p in (mine, stock))
    assert pointer.read_bytes() == stock_pointer.read_bytes()
    assert (mine.parent / ".gitignore").read_text() == (stock.parent / ".gitignore").read_text()
    md5 = md5_of(pointer)
    obj, stock_obj = cache_object(ours, md5), cache_object(theirs, md5)
    assert obj.read_bytes() == stock_obj.read_bytes() == ROWS
    assert stat.S_IMODE(obj.stat().st_mode) == stat.S_IMODE(stock_obj.stat().st_mode) == 0o444
    assert mine.read_bytes() == ROWS  # the sidecar itself stays as it was
    # stock DVC sees a tracked, unchanged file
    status = dvc(ours, "status")
    assert "up to date" in status.stdout, status.stdout


def test_stock_dvc_pull_and_status_read_what_eee_pushed(tmp_path: Path) -> None:
    store = make_store(tmp_path, hooks=False, with_dvc=True, sidecar_git_max_bytes=0)
    record, sidecar = place_with_sidecar(store, ROWS)
    ok(eee(store, "add", rel(sidecar, store)))
    git(store, "add", rel(record, store))
    git(store, "commit", "-q", "-m", "a record with its sidecar")
    out = ok(eee(store, "push")).stdout
    assert "pushed 1 sidecar(s); 0 already there; 0 failed" in out
    md5 = md5_of(sidecar.with_name(sidecar.name + ".dvc"))
    assert (tmp_path / "remote" / "files" / "md5" / md5[:2] / md5[2:]).read_bytes() == ROWS
    assert "in sync" in dvc(store, "status", "--cloud").stdout  # the remote has what the pointers name
    assert "already there" in ok(eee(store, "push")).stdout  # nothing twice

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    dvc(clone, "pull")
    assert (clone / rel(sidecar, store)).read_bytes() == ROWS


def test_eee_pull_reads_what_stock_dvc_pushed(tmp_path: Path) -> None:
    store = make_store(tmp_path, hooks=False, with_dvc=True, sidecar_git_max_bytes=0)
    _record, sidecar = place_with_sidecar(store, ROWS)
    dvc(store, "add", "-q", rel(sidecar, store))
    dvc(store, "push", "-q")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "added by stock DVC")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    out = ok(eee(clone, "pull")).stdout
    assert "pulled 1 sidecar(s)" in out
    assert (clone / rel(sidecar, store)).read_bytes() == ROWS
    assert "up to date" in dvc(clone, "status").stdout


def test_named_sidecars_move_alone_and_round_trip_byte_identical(tmp_path: Path) -> None:
    store = make_store(tmp_path, hooks=False, with_dvc=True, sidecar_git_max_bytes=0)
    _, first = place_with_sidecar(store, ROWS)
    other_rows = ROWS.replace(b'"q1"', b'"q2"')
    _, second = place_with_sidecar(store, other_rows, record_uuid=OTHER_UUID)
    ok(eee(store, "add", rel(first, store), rel(second, store)))
    assert "pushed 1 sidecar(s)" in ok(eee(store, "push", rel(first, store))).stdout
    remote = tmp_path / "remote" / "files" / "md5"
    assert len([p for p in remote.rglob("*") if p.is_file()]) == 1  # only the one named
    # a folder names every sidecar below it; the one already there is not sent again
    assert "pushed 1 sidecar(s); 1 already there" in ok(eee(store, "push", rel(second.parent, store))).stdout

    first.unlink()
    second.unlink()
    shutil.rmtree(store / ".dvc" / "cache")
    ok(eee(store, "pull", rel(second, store) + ".dvc"))  # a pointer names it too
    assert second.read_bytes() == other_rows and not first.exists()
    ok(eee(store, "pull", rel(first, store)))
    assert first.read_bytes() == ROWS
    assert "up to date" in dvc(store, "status").stdout


def test_pull_never_places_a_corrupted_object_nor_overwrites_a_changed_sidecar(tmp_path: Path) -> None:
    store = make_store(tmp_path, hooks=False, with_dvc=True, sidecar_git_max_bytes=0)
    _, sidecar = place_with_sidecar(store, ROWS)
    ok(eee(store, "add", rel(sidecar, store)))
    ok(eee(store, "push"))
    md5 = md5_of(sidecar.with_name(sidecar.name + ".dvc"))
    on_remote = tmp_path / "remote" / "files" / "md5" / md5[:2] / md5[2:]
    on_remote.chmod(0o644)
    on_remote.write_bytes(ROWS + b"tampered\n")
    sidecar.unlink()
    shutil.rmtree(store / ".dvc" / "cache")
    proc = eee(store, "pull")
    assert proc.returncode == 1
    assert "fetch failed" in proc.stderr and "hash" in proc.stderr
    assert not sidecar.exists() and not cache_object(store, md5).exists()

    sidecar.write_bytes(b"something else\n")
    proc = eee(store, "pull")
    assert proc.returncode == 1 and "not overwritten" in proc.stderr
    assert sidecar.read_bytes() == b"something else\n"


def test_refusals_say_why(tmp_path: Path) -> None:
    store = make_store(tmp_path, hooks=False, with_dvc=True, sidecar_git_max_bytes=0)
    _, sidecar = place_with_sidecar(store, ROWS)
    proc = eee(store, "push", rel(sidecar, store))
    assert proc.returncode == 1 and "no such pointer" in proc.stderr and "eee samples add" in proc.stderr
    ok(eee(store, "add", rel(sidecar, store)))
    dvc(store, "remote", "remove", "local")
    proc = eee(store, "push")
    assert proc.returncode == 1 and "no DVC remote" in proc.stderr and "Traceback" not in proc.stderr
    proc = eee(store, "push", "-r", "nowhere")
    assert proc.returncode == 1 and "nowhere" in proc.stderr and "Traceback" not in proc.stderr
    pointer = sidecar.with_name(sidecar.name + ".dvc")
    pointer.write_text("outs:\n- md5: abc\n  path: x\n")
    proc = eee(store, "pull", rel(pointer, store))
    assert proc.returncode == 1 and "not a DVC 3 pointer" in proc.stderr


def test_the_commands_never_import_dvc_repo(tmp_path: Path) -> None:
    """DVC's repository (and its index load) stays off the path of add, push and pull."""
    store = make_store(tmp_path, hooks=False, with_dvc=True, sidecar_git_max_bytes=0)
    _, sidecar = place_with_sidecar(store, ROWS, record_uuid=FIXED_UUID)
    code = (
        "import sys\n"
        "from eee.commands.samples import main\n"
        f"codes = [main(['add', {rel(sidecar, store)!r}]), main(['push']), main(['pull'])]\n"
        "assert codes == [0, 0, 0], codes\n"
        "heavy = sorted(m for m in sys.modules if m.startswith(('dvc.repo', 'dvc.stage', 'dvc.output')))\n"
        "print('HEAVY', heavy)\n"
    )
    proc = ok(subprocess.run([sys.executable, "-c", code], cwd=store, capture_output=True, text=True))
    assert "HEAVY []" in proc.stdout, proc.stdout
