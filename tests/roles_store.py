"""Stores with roles for the tests: real ``ssh-keygen -t ed25519`` keys, git's own SSH signing
(``git -c gpg.format=ssh -c user.signingkey=KEY commit -S``), histories built with ``--no-verify``."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import FIXED_UUID, PROJECT, git, load_example, make_store, place_record

RECORD = "v0.3.0_perplexity_unbounded.json"

MIA = ("Mia Maintainer", "mia@example.org")  # the maintainer
COLE = ("Cole Contributor", "cole@example.org")  # a contributor with a key
ZED = ("Zed Stranger", "zed@example.org")  # no key at all
BOB = ("Bob Maintainer", "bob@example.org")  # a second maintainer, where a test makes one
OTHER = "2a2b2c2d-3e3f-4a4b-8c8d-9e9f0a0b0c0d"  # records beside RECORD's
THIRD = "3c3d3e3f-4a4b-4c4d-9e9f-0a0b1c1d2e2f"


def keygen(tmp: Path, name: str) -> Path:
    """A fresh ed25519 key pair (no passphrase); returns the private key's path (``.pub`` beside it)."""
    folder = tmp / "keys"
    folder.mkdir(exist_ok=True)
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


def public(key: Path) -> str:
    return Path(str(key) + ".pub").read_text().strip()


def as_(who: tuple[str, str], key: Path | None = None) -> list[str]:
    """git options committing as ``who`` (author and committer), signing with ``key``."""
    opts = ["-c", f"user.name={who[0]}", "-c", f"user.email={who[1]}"]
    if key is not None:
        opts += ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}"]
    return opts


def sneak(repo: Path, message: str, who: tuple[str, str] = MIA, key: Path | None = None) -> str:
    """Commit everything with ``--no-verify`` (no gate in the way), as ``who``, signed with ``key``."""
    git(repo, "add", "-A")
    sign = ["-S"] if key is not None else []
    git(repo, *as_(who, key), "commit", "-q", "--no-verify", "--allow-empty", *sign, "-m", message)
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def write_roles(repo: Path, signers: dict[str, tuple[Path, str]], forge: dict[str, str] | None = None) -> None:
    """governance/allowed_signers and governance/roles.yaml for ``{principal: (key, role)}``."""
    from eee.store.roles import Entry, render_roles

    folder = repo / "governance"
    folder.mkdir(exist_ok=True)
    lines = [f"{name} {' '.join(public(key).split()[:2])} {name}" for name, (key, _) in signers.items()]
    (folder / "allowed_signers").write_text("\n".join(lines) + "\n")
    entries = {
        name: Entry(role, None, (forge or {}).get(name)) for name, (_, role) in signers.items() if role == "maintainer"
    }
    (folder / "roles.yaml").write_bytes(render_roles(entries))


def event(repo: Path, action: str, who: tuple[str, str], record: str = FIXED_UUID, **extra: Any) -> str:
    """Write one event (actor ``who``) and return its path."""
    from eee.governance.events import make_event, write

    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    reason = extra.pop("reason", f"a {action}")
    path = write(repo, make_event(action, record, reason, {"name": who[0], "email": who[1]}, now=now, **extra))
    return path.relative_to(repo).as_posix()


def roles_store(tmp: Path, *, with_cole: bool = True, anchor_genesis: bool = True) -> dict[str, Any]:
    """A store with the project's schemas and one record (committed before the roles), then
    the genesis: Mia a maintainer, Cole a contributor, signed by Mia's key. Returns the
    repository, the keys and the genesis commit."""
    repo = make_store(tmp, hooks=False)
    shutil.copytree(PROJECT / "schemas", repo / "schemas")
    place_record(repo, load_example("aggregate", "valid", RECORD))
    before = sneak(repo, "schemas and a record", COLE)
    mia, cole = keygen(tmp, "mia"), keygen(tmp, "cole")
    signers = {MIA[1]: (mia, "maintainer")}
    if with_cole:
        signers[COLE[1]] = (cole, "contributor")
    write_roles(repo, signers)
    genesis = sneak(repo, "Roles: the genesis", MIA, mia)
    return {"repo": repo, "mia": mia, "cole": cole, "genesis": genesis, "before": before}


# --- a bare repository with the server gate, and pushes into it ------------------------------------


def eee(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eee", *args], capture_output=True, text=True, cwd=cwd, env=env)


def refs(bare: Path) -> str:
    return git(bare, "for-each-ref", "--format=%(refname) %(objectname)").stdout


def push(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``git push ARGS`` (the clone has no pre-push hook: what the server alone decides)."""
    return git(clone, "push", "--no-verify", *args, check=False)


def serve(origin: Path, tmp: Path, name: str = "store.git", *install: str) -> tuple[Path, Path]:
    """A bare clone of ``origin`` with the server gate installed (``install``: more options of
    ``eee server install``), and a clone of it to push from."""
    bare = tmp / name
    git(tmp, "clone", "-q", "--bare", str(origin), str(bare))
    proc = eee("server", "install", str(bare), *install)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    clone = tmp / f"clone-of-{name}"
    git(tmp, "clone", "-q", str(bare), str(clone))
    git(clone, "config", "commit.gpgsign", "false")
    return bare, clone


def served(tmp: Path) -> dict[str, Any]:
    """The roles store (Mia a maintainer, Cole a contributor: the genesis committed before the
    gate was installed), served from a bare repository with the server gate; ``bare``: the
    server, ``clone``: where the pushes are made."""
    store = roles_store(tmp)
    bare, clone = serve(store["repo"], tmp)
    return {**store, "bare": bare, "clone": clone}


def accepted(proc: subprocess.CompletedProcess[str], bare: Path, head: str, ref: str = "main") -> None:
    assert proc.returncode == 0, proc.stderr
    for check in ("authority", "actor", "genesis", "roles"):
        assert f"[{check}]" not in proc.stderr, proc.stderr
    assert git(bare, "rev-parse", ref).stdout.strip() == head


def refused(proc: subprocess.CompletedProcess[str], bare: Path, before: str) -> str:
    """The push was refused by the server gate and no ref moved; returns the ``remote:`` lines."""
    assert proc.returncode != 0, proc.stderr
    assert "pre-receive hook declined" in proc.stderr
    assert "the push is refused" in proc.stderr and "no ref was updated" in proc.stderr
    assert refs(bare) == before
    assert "Traceback" not in proc.stderr
    return "\n".join(line for line in proc.stderr.splitlines() if line.startswith("remote: "))


def finding(remote: str, commit: str, path: str, check: str) -> tuple[str, str]:
    """The one finding line ``<commit>:<path>::$...: [check] ...`` and the hint line after it."""
    lines = remote.splitlines()
    at = [
        i
        for i, line in enumerate(lines)
        if line.startswith(f"remote: {commit[:10]}:{path}::$") and f"[{check}]" in line
    ]
    assert len(at) == 1, (commit[:10], path, check, remote)
    hint = lines[at[0] + 1] if at[0] + 1 < len(lines) else ""
    assert hint.startswith("remote:     hint: "), remote
    return lines[at[0]], hint
