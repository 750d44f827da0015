"""The one way the tools write a file in place of another (write_replacing) and take a lock
(locked, filelock underneath): atomic, nothing left behind, one holder at a time across
processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from eee.store.fsutil import locked, write_replacing


def test_write_replacing_creates_and_replaces_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "cache.json"
    assert write_replacing(target, b"one") == target and target.read_bytes() == b"one"
    write_replacing(target, b"two", durable=False)
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eee.store import fsutil

    target = tmp_path / "index"
    target.write_bytes(b"old")

    def refuse(source: object, dest: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsutil, "replace_file", refuse)
    with pytest.raises(OSError, match="No space"):
        write_replacing(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]


_HOLDER = textwrap.dedent(
    """
    import sys, time
    from eee.store.fsutil import locked
    with locked(sys.argv[1]) as held:
        print("held" if held else "not held", flush=True)
        sys.stdin.readline()  # until the test says so
    """
)


def test_one_holder_at_a_time_across_processes(tmp_path: Path) -> None:
    lock = tmp_path / "eee-store.lock"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with locked(lock, 0) as held:
            assert held is False  # one try: the other process holds it
        with locked(lock, 0.3) as held:
            assert held is False  # waited, still held
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    with locked(lock, 0) as held:  # released when the holder's block ended
        assert held is True
    with locked(lock) as held:  # and released by this block too
        assert held is True
    assert holder.returncode == 0


def test_a_lock_is_released_when_its_holder_dies(tmp_path: Path) -> None:
    lock = tmp_path / "eee-server.lock"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    holder.kill()
    holder.wait(timeout=30)
    with locked(lock, 5) as held:
        assert held is True
