"""One judgement everywhere (issue 30, item 6): over random histories (records, events, role
changes and removals, side branches merged either way round, orphan roots; a few real
``ssh-keygen`` keys, made once per session), ``eee audit`` in a clone (``--from OLD --to NEW
--anchor OLD``, as CI runs it) and the server gate (a real ``git push --no-verify`` into a
bare repository with ``eee server install``) accept and refuse exactly the same pushes.

Hypothesis draws the histories; a few examples and explicit ones keep it bounded in time."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import uuid as uuidlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import FIXED_UUID, git, place_record, record_of
from roles_store import COLE, MIA, ZED, event, keygen, push, roles_store, serve, sneak, write_roles

pytestmark = pytest.mark.slow

BOB = ("Bob Maintainer", "bob@example.org")
WHO = {"mia": MIA, "cole": COLE, "bob": BOB, "zed": ZED}
SIGNERS = ("mia", "cole", "bob", "zed", None)  # zed's key is no signer of the roles; None: unsigned


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("judgement-keys")
    return {name: keygen(folder, name) for name in ("mia", "cole", "bob", "zed")}


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory, keys: dict[str, Path]) -> Path:
    """A roles store (Mia a maintainer, Cole a contributor) served with the gate, and a clone:
    made once, copied for every history."""
    tmp = tmp_path_factory.mktemp("judgement")
    store = roles_store(tmp)
    write_roles(store["repo"], {MIA[1]: (keys["mia"], "maintainer"), COLE[1]: (keys["cole"], "contributor")})
    sneak(store["repo"], "Roles: the session's keys", MIA, store["mia"])  # the anchor's own keys judge nothing
    # the genesis above is signed by the store's own key; make the session's keys the roles before serving
    shutil.rmtree(tmp / "keys")
    serve(store["repo"], tmp)
    return tmp


def _copy(template: Path, tmp: Path) -> tuple[Path, Path]:
    bare, clone = tmp / "store.git", tmp / "clone"
    shutil.copytree(template / "store.git", bare, symlinks=True)
    shutil.copytree(template / "clone-of-store.git", clone, symlinks=True)
    git(clone, "remote", "set-url", "origin", str(bare))
    return bare, clone


# --- what a history is made of -------------------------------------------------------------------

signer = st.sampled_from(SIGNERS)
record_step = st.tuples(st.just("record"), signer)
event_step = st.tuples(st.just("event"), st.sampled_from(["retract", "dispute", "supersede"]), signer)
roles_step = st.tuples(st.just("roles"), st.sampled_from(["add-bob", "remove-bob", "cole-maintainer"]), signer)
side_step = st.tuples(
    st.just("side"),
    st.integers(min_value=0, max_value=6),  # how far back the side branch starts
    st.lists(st.one_of(record_step, event_step), min_size=1, max_size=2),
    st.sampled_from(["main-first", "side-first"]),
    signer,
)
orphan_step = st.tuples(st.just("orphan"), signer, signer)
push_step = st.just(("push",))
step = st.one_of(record_step, event_step, roles_step, side_step, orphan_step, push_step)


class History:
    """Builds a history in the clone as its steps say, every commit with ``--no-verify``."""

    def __init__(self, clone: Path, keys: dict[str, Path], tmp: Path) -> None:
        self.clone, self.keys, self.tmp = clone, keys, tmp
        self.n = 0

    def who(self, name: str | None) -> tuple[tuple[str, str], Path | None]:
        if name is None:
            return COLE, None
        return WHO[name], self.keys[name]

    def commit(self, message: str, name: str | None) -> str:
        who, key = self.who(name)
        return sneak(self.clone, message, who, key)

    def uuid(self) -> str:
        self.n += 1
        return str(uuidlib.UUID(int=(0x5A << 120) + self.n, version=4))

    def records(self) -> list[str]:
        listed = git(self.clone, "ls-files", "data").stdout.split()
        return sorted({Path(p).name[:36] for p in listed if p.endswith(".json")})

    def record(self, name: str | None) -> None:
        place_record(self.clone, record_of(f"acme/m{self.n}", score=float(self.n % 7 + 1)), record_uuid=self.uuid())
        self.commit("a record", name)

    def event(self, action: str, name: str | None) -> None:
        who, _ = self.who(name)
        records = self.records()
        target = records[self.n % len(records)] if records else FIXED_UUID
        extra: dict[str, Any] = {}
        if action == "supersede":
            replacement = self.uuid()
            place_record(self.clone, record_of(f"acme/r{self.n}", score=2.0), record_uuid=replacement)
            extra["replacement"] = replacement
        if action == "dispute":
            extra["reference"] = "https://example.org/d/1"
        event(self.clone, action, who, record=target, **extra)
        self.commit(action, name)

    def roles(self, change: str, name: str | None) -> None:
        signers = {MIA[1]: (self.keys["mia"], "maintainer"), COLE[1]: (self.keys["cole"], "contributor")}
        if change == "add-bob":
            signers[BOB[1]] = (self.keys["bob"], "maintainer")
        if change == "cole-maintainer":
            signers[COLE[1]] = (self.keys["cole"], "maintainer")
        write_roles(self.clone, signers)
        self.commit(f"Roles: {change}", name)

    def side(self, back: int, steps: list[tuple[Any, ...]], order: str, name: str | None) -> None:
        history = git(self.clone, "rev-list", "--first-parent", "main").stdout.split()
        start = history[min(back, len(history) - 1)]
        git(self.clone, "checkout", "-q", "-B", "side", start)
        for s in steps:
            self.apply(s)
        if order == "main-first":
            git(self.clone, "checkout", "-q", "main")
            self.merge("side", name)
        else:
            self.merge("main", name)
            git(self.clone, "checkout", "-q", "-B", "main")

    def orphan(self, inside: str | None, name: str | None) -> None:
        git(self.clone, "checkout", "-q", "--orphan", "orphan")
        git(self.clone, "rm", "-q", "-r", "-f", ".")
        place_record(self.clone, record_of(f"acme/o{self.n}"), record_uuid=self.uuid())
        self.commit("an orphan root", inside)
        git(self.clone, "checkout", "-q", "main")
        self.merge("orphan", name, "--allow-unrelated-histories")
        git(self.clone, "branch", "-q", "-D", "orphan")

    def merge(self, other: str, name: str | None, *extra: str) -> None:
        proc = git(self.clone, "merge", "-q", "--no-ff", "--no-commit", *extra, other, check=False)
        if proc.returncode != 0:  # a conflict (both sides changed the roles): the merge keeps this side
            git(self.clone, "checkout", "-q", "--ours", ".")
            git(self.clone, "add", "-A")
        self.commit(f"merge {other}", name)

    def apply(self, s: tuple[Any, ...]) -> None:
        kind = s[0]
        if kind == "record":
            self.record(s[1])
        elif kind == "event":
            self.event(s[1], s[2])
        elif kind == "roles":
            self.roles(s[1], s[2])
        elif kind == "side":
            self.side(*s[1:])
        elif kind == "orphan":
            self.orphan(s[1], s[2])


def _audit(clone: Path, old: str, new: str) -> tuple[bool, list[str]]:
    """``eee audit --from OLD --to NEW --anchor OLD`` in the clone: accepted, and its errors."""
    from eee.commands.audit import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["--store", str(clone), "--from", old, "--to", new, "--anchor", old, "--format", "json"])
    found = json.loads(out.getvalue())["findings"]
    return code != 1, [f"[{f['check']}] {f['file']}: {f['message']}" for f in found if f["severity"] == "error"]


def _judge(clone: Path, bare: Path, verdicts: list[tuple[bool, bool]]) -> None:
    old = git(bare, "rev-parse", "main").stdout.strip()
    new = git(clone, "rev-parse", "main").stdout.strip()
    if old == new:
        return
    audited, errors = _audit(clone, old, new)
    proc = push(clone, "origin", "main")
    served = proc.returncode == 0
    assert served == audited, (served, errors, proc.stderr)
    assert git(bare, "rev-parse", "main").stdout.strip() == (new if served else old)
    verdicts.append((served, audited))
    if not served:
        git(clone, "checkout", "-q", "main")
        git(clone, "reset", "-q", "--hard", "origin/main")


HISTORY = st.lists(step, min_size=2, max_size=6)


@settings(
    max_examples=10,
    deadline=None,
    database=None,  # nothing written into the checkout; a failure prints its history
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(steps=HISTORY)
@example(steps=[("record", "cole"), ("event", "retract", "mia"), ("push",), ("event", "retract", "cole")])
@example(steps=[("roles", "add-bob", "mia"), ("event", "dispute", "bob"), ("roles", "remove-bob", "mia"), ("push",)])
@example(steps=[("side", 3, [("record", "cole"), ("event", "retract", "cole")], "side-first", None)])
@example(steps=[("side", 1, [("record", None)], "main-first", "mia"), ("orphan", "cole", "mia")])
@example(steps=[("roles", "cole-maintainer", "cole"), ("event", "retract", "cole")])
def test_the_audit_in_a_clone_and_the_server_gate_judge_every_push_alike(
    steps: list[tuple[Any, ...]], template: Path, keys: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp("history")
    bare, clone = _copy(template, tmp)
    history = History(clone, keys, tmp)
    verdicts: list[tuple[bool, bool]] = []
    for s in steps:
        if s[0] == "push":
            _judge(clone, bare, verdicts)
        else:
            history.apply(s)
    _judge(clone, bare, verdicts)
    # something was judged, unless the history only pushed (nothing new: no push reaches the gate)
    assert verdicts or all(s[0] == "push" for s in steps)
    shutil.rmtree(tmp, ignore_errors=True)
