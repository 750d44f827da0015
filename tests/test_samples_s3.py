"""A remote a team shares: the S3 set-up of docs/guide/sidecars.md against a local S3-compatible server
(moto's server mode, started here on 127.0.0.1). Push from one clone, pull into others,
byte-identical, through stock DVC and through `eee samples push/pull`, and the secret
key never appears in any command's output."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import moto.server as moto_server  # a dev dependency: a missing one fails, never skips these tests
import pytest

from conftest import EXAMPLES, git, make_store, place_with_sidecar

pytestmark = pytest.mark.slow

ROWS = (EXAMPLES / "instance" / "valid" / "v0.3.0_single_multi_agentic.jsonl").read_bytes()
SECOND = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
THIRD = "2d3e4f5a-6b7c-4d8e-9fa0-1b2c3d4e5f60"
BUCKET = "eee-sidecars"
KEY_ID = "AKIAEEETESTKEY000001"
SECRET = "eee-test-secret-9f8e7d6c5b4a"  # must never be printed
WRONG_SECRET = "eee-wrong-secret-0a1b2c3d"
NO_FILE = Path(__file__).parent / "no-such-aws-config"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    import boto3

    boto3.client(
        "s3", endpoint_url=url, aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET, region_name="us-east-1"
    ).create_bucket(Bucket=BUCKET)
    try:
        yield url
    finally:
        server.stop()


class Runner:
    """Runs commands with an environment that reaches only the local server, and keeps
    every output to check for the secret."""

    def __init__(self) -> None:
        self.outputs: list[str] = []
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            DVC_NO_ANALYTICS="1",
            AWS_EC2_METADATA_DISABLED="true",  # never ask an instance-metadata endpoint
            AWS_CONFIG_FILE=str(NO_FILE),  # nor the user's own AWS profiles
            AWS_SHARED_CREDENTIALS_FILE=str(NO_FILE),
        )
        self.env = env

    def __call__(self, repo: Path, *cmd: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-m", *cmd], cwd=repo, capture_output=True, text=True, env={**self.env, **(env or {})}
        )
        self.outputs.append(f"{proc.stdout}\n{proc.stderr}")  # what it printed (not its command line)
        return proc

    def ok(self, repo: Path, *cmd: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        proc = self(repo, *cmd, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc


def _rel(path: Path, repo: Path) -> str:
    return path.relative_to(repo).as_posix()


def _s3_remote(run: Runner, repo: Path, endpoint: str, secret: str | None = SECRET) -> None:
    """The set-up of docs/guide/sidecars.md: the remote in .dvc/config (committed), the endpoint and the
    credentials in .dvc/config.local (git-ignored)."""
    run.ok(repo, "dvc", "remote", "modify", "--local", "s3", "endpointurl", endpoint)
    if secret is not None:
        run.ok(repo, "dvc", "remote", "modify", "--local", "s3", "access_key_id", KEY_ID)
        run.ok(repo, "dvc", "remote", "modify", "--local", "s3", "secret_access_key", secret)


def test_a_shared_s3_remote(tmp_path: Path, endpoint: str) -> None:
    run = Runner()
    origin = make_store(tmp_path, hooks=False, with_dvc=True, name="origin", sidecar_git_max_bytes=0)
    run.ok(origin, "dvc", "remote", "add", "-d", "s3", f"s3://{BUCKET}/eee")
    git(origin, "add", ".dvc/config")
    git(origin, "commit", "-q", "-m", "the team's S3 remote")
    _s3_remote(run, origin, endpoint)
    assert "secret_access_key" not in git(origin, "show", "HEAD:.dvc/config").stdout
    assert git(origin, "check-ignore", ".dvc/config.local").returncode == 0  # credentials stay out of git

    first_record, first = place_with_sidecar(origin, ROWS)
    second_rows = ROWS.replace(b'"q1"', b'"q2"')
    second_record, second = place_with_sidecar(origin, second_rows, record_uuid=SECOND)
    run.ok(origin, "eee", "samples", "add", _rel(first, origin), _rel(second, origin))
    git(origin, "add", _rel(first_record, origin), _rel(second_record, origin))
    git(origin, "commit", "-q", "-m", "two records with sidecars")
    assert "pushed 2 sidecar(s)" in run.ok(origin, "eee", "samples", "push").stdout
    assert "in sync" in run.ok(origin, "dvc", "status", "--cloud").stdout

    # a teammate's clone, credentials from the environment: eee samples pull
    mate = tmp_path / "mate"
    git(tmp_path, "clone", "-q", str(origin), str(mate))
    assert not (mate / _rel(first, origin)).exists()
    _s3_remote(run, mate, endpoint, secret=None)
    creds = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET}
    assert "pulled 2 sidecar(s)" in run.ok(mate, "eee", "samples", "pull", env=creds).stdout
    assert (mate / _rel(first, origin)).read_bytes() == ROWS
    assert (mate / _rel(second, origin)).read_bytes() == second_rows
    assert "up to date" in run.ok(mate, "dvc", "status").stdout

    # another clone, stock dvc pull reads what eee pushed
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    _s3_remote(run, other, endpoint)
    run.ok(other, "dvc", "pull")
    assert (other / _rel(first, origin)).read_bytes() == ROWS
    assert (other / _rel(second, origin)).read_bytes() == second_rows

    # stock dvc push from that clone; eee samples pull of the one sidecar named
    third_rows = ROWS.replace(b'"q1"', b'"q3"')
    _third_record, third = place_with_sidecar(other, third_rows, record_uuid=THIRD)
    run.ok(other, "dvc", "add", "-q", _rel(third, other))
    run.ok(other, "dvc", "push")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "a third sidecar, pushed by stock DVC")
    git(mate, "pull", "-q", str(other), "main")
    out = run.ok(mate, "eee", "samples", "pull", _rel(third, other), env=creds).stdout
    assert "pulled 1 sidecar(s); 0 already there; 0 failed" in out
    assert (mate / _rel(third, other)).read_bytes() == third_rows

    # a remote that cannot serve (its bucket is missing): refused with the reason, no
    # traceback, nothing placed, and the key not echoed
    stranger = tmp_path / "stranger"
    git(tmp_path, "clone", "-q", str(origin), str(stranger))
    _s3_remote(run, stranger, endpoint, secret=WRONG_SECRET)
    run.ok(stranger, "dvc", "remote", "modify", "--local", "s3", "url", "s3://no-such-bucket/eee")
    proc = run(stranger, "eee", "samples", "pull")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "failed" in proc.stdout + proc.stderr
    assert not (stranger / _rel(first, origin)).exists()
    proc = run(stranger, "eee", "samples", "push", _rel(first, origin))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr  # not in the cache here either

    for output in run.outputs:
        assert SECRET not in output, output
        assert WRONG_SECRET not in output, output
