"""The examples of the README, the contributor guide (``governance/CONTRIBUTING.md``) and the
site's hand-written pages (``docs/``), as the tests run them: every fenced ``sh``,
``console`` (its ``$`` lines) and ``python`` block, in a
store made for it.

A page says how a block is run in an HTML comment on the line(s) just above it, which the
site does not show::

    <!-- example: store=empty; before `CMD`; run `TEXT` as `OTHER`; s3 (why, in words) -->

- ``store=NAME``: the store the block runs in (default ``copy``; see :data:`STORES`). The
  blocks of a page that name one store run in order in one such store, so a page can tell
  a story.
- ``before `CMD```: a shell command run in the store before the block (what the page's
  reader is assumed to have done, e.g. clone a snapshot).
- ``run `TEXT` as `OTHER```: the block is run with TEXT replaced by OTHER. For what needs
  a network or a long time; the smallest real substitute, said where the reader sees the
  page's source. TEXT must be in the block.
- ``reference``: the block reads the reference material (``../shared/reference`` beside
  the store, linked there); the test skips where it is absent, like every test that reads
  it. A block whose text names ``../shared/reference`` needs no clause.
- ``s3``: a local S3-compatible server (moto's) is started for the block, and the page's
  placeholders (``BUCKET``, ``AKIA...``, the secret key ``...``, ``https://s3.example.org``)
  become its bucket, keys and endpoint.

Each command must exit 0 or 2 (done; done with warnings), or the code its own comment
names (``# exit 64: ...``), and no command may print a traceback.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from conftest import PROJECT, REFERENCE

PAGES = [
    "README.md",
    "governance/CONTRIBUTING.md",
    *sorted(p.relative_to(PROJECT).as_posix() for p in (PROJECT / "docs").rglob("*.md")),
]
RUN = ("sh", "console", "python")  # fenced languages that are examples
SHELL_ALIASES = ("bash", "shell", "shell-session", "zsh")  # refused: write ```sh
MARK = re.compile(r"^<!--\s*example:(.*?)-->\s*$")
FENCE = re.compile(r"^```([\w-]*)\s*$")
EXIT = re.compile(r"\s#\s*exits?\s+(\d+)\b")
CLAUSE_STORE = re.compile(r"^store=([\w-]+)$")
CLAUSE_BEFORE = re.compile(r"^before `([^`]+)`")
CLAUSE_RUN = re.compile(r"^run `([^`]+)` as `([^`]+)`")

# the stores a block can run in
STORES = {
    "copy": "this repository as a fresh clone has it (its history, and any uncommitted change as one more commit)",
    "empty": "this repository without its records, ledger and import manifests",
    "analysis": "a copy whose DVC-tracked sidecars (not in git) are stood in for by synthetic rows made for each record",
}


@dataclass
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    store: str = "copy"
    before: list[str] = field(default_factory=list)
    replace: list[tuple[str, str]] = field(default_factory=list)
    s3: bool = False
    reference: bool = False

    @property
    def needs_reference(self) -> bool:
        return self.reference or any("../shared/reference" in s for s in (self.text, *self.before))

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def commands(self) -> list[tuple[int, str, int | None]]:
        """(line, command, expected exit or None) of a shell block, after the replacements."""
        out: list[tuple[int, str, int | None]] = []
        for i, raw in enumerate(self.text.splitlines(), start=self.line + 1):
            line = raw.strip()
            if self.lang == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            if not line or line.startswith("#"):
                continue
            expected = EXIT.search(line)
            for old, new in self.replace:
                line = line.replace(old, new)
            out.append((i, line, int(expected.group(1)) if expected else None))
        return out


def parse_marker(block: Block, body: str) -> None:
    """Fill ``block`` from a marker's clauses (``;``-separated; words after the clauses, in
    parentheses, are for the reader)."""
    body = re.sub(r"\([^`]*\)\s*$", "", body.strip()).strip()
    for clause in (c.strip() for c in re.split(r";\s*(?=store=|before `|run `|s3\b|reference\b)", body) if c.strip()):
        if m := CLAUSE_STORE.match(clause):
            if m.group(1) not in STORES:
                raise ValueError(f"{block.where}: unknown store {m.group(1)!r} (one of {', '.join(STORES)})")
            block.store = m.group(1)
        elif m := CLAUSE_BEFORE.match(clause):
            block.before.append(m.group(1))
        elif m := CLAUSE_RUN.match(clause):
            if m.group(1) not in block.text:
                raise ValueError(f"{block.where}: the comment replaces `{m.group(1)}`, which the block does not hold")
            block.replace.append((m.group(1), m.group(2)))
        elif clause == "s3":
            block.s3 = True
        elif clause == "reference":
            block.reference = True
        else:
            raise ValueError(f"{block.where}: unknown clause {clause!r} in the example comment")


def blocks_of(page: str) -> list[Block]:
    """The example blocks of ``page`` (a path relative to the project), with their markers."""
    lines = (PROJECT / page).read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        start, lang = i, m.group(1)
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise ValueError(f"{page}:{i + 1}: a fenced block that never closes")
        i = end + 1
        if lang in SHELL_ALIASES:
            raise ValueError(f"{page}:{start + 1}: write ```sh, not ```{lang}: only ```sh blocks are run as examples")
        markers = []
        k = start - 1
        while k >= 0 and MARK.match(lines[k]):
            markers.insert(0, MARK.match(lines[k]).group(1))  # type: ignore[union-attr]
            k -= 1
        if lang not in RUN:
            if markers:
                raise ValueError(f"{page}:{start + 1}: an example comment above a ```{lang} block, which is not run")
            continue
        block = Block(page, start + 1, lang, "\n".join(lines[start + 1 : end]) + "\n")
        for body in markers:
            parse_marker(block, body)
        out.append(block)
    return out


# --- stores --------------------------------------------------------------------------------


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def environment(tmp: Path) -> dict[str, str]:
    """What a reader's shell has: git knows who they are (a global config of their own),
    nothing points the tools at this checkout's environment."""
    config = tmp / "gitconfig"
    if not config.exists():
        config.write_text(
            "[user]\n\tname = Docs Reader\n\temail = reader@example.org\n"
            "[commit]\n\tgpgsign = false\n[tag]\n\tgpgsign = false\n[init]\n\tdefaultBranch = main\n"
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EEE_PYTHON", "VIRTUAL_ENV", "GIT_", "AWS_"))}
    env.update(
        GIT_CONFIG_GLOBAL=str(config), GIT_CONFIG_NOSYSTEM="1", DVC_NO_ANALYTICS="1", PYTHONDONTWRITEBYTECODE="1"
    )
    return env


def link_environment(store: Path) -> None:
    """``store/.venv``: this interpreter's environment, reached through links, with its own
    prefix and install stamp, so that ``python3 tools/dev.py ...`` in the store finds it set
    up and never installs anything (nor into the shared environment)."""
    source = Path(sys.prefix)
    venv = store / ".venv"
    (venv / "bin").mkdir(parents=True)
    shutil.copyfile(source / "pyvenv.cfg", venv / "pyvenv.cfg")
    for name in ("lib", "lib64", "include"):
        if (source / name).exists():
            (venv / name).symlink_to(source / name)
    for exe in (source / "bin").iterdir():
        (venv / "bin" / exe.name).symlink_to(exe)
    stamp = hashlib.sha256((store / "pyproject.toml").read_bytes()).hexdigest()
    (venv / ".eee-installed").write_text(stamp + "\n")


def make_store(tmp: Path, kind: str) -> Path:
    """A store of ``kind`` (:data:`STORES`) at ``tmp/store``, set up as the README says
    (``python3 tools/dev.py setup``), with ``tmp/shared/reference`` beside it when the
    reference material is there."""
    store = tmp / "store"
    tmp.mkdir(parents=True, exist_ok=True)
    env = environment(tmp)
    if kind == "empty":
        _fresh_repository(store, env)
    else:
        _clone(store, env)
    link_environment(store)
    if REFERENCE.exists():
        (tmp / "shared").mkdir(exist_ok=True)
        (tmp / "shared" / "reference").symlink_to(REFERENCE.resolve())
    proc = subprocess.run(["python3", "tools/dev.py", "setup"], cwd=store, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if kind == "analysis":
        stand_in_sidecars(store)
    return store


def _listed() -> list[str]:
    """The project's files as its work tree has them: tracked and untracked, not ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [rel for rel in filter(None, listed.split("\0")) if (PROJECT / rel).exists() or (PROJECT / rel).is_symlink()]


def _clone(store: Path, env: dict[str, str]) -> None:
    """A clone of this repository, its whole history (an event is judged by the time of the
    commit that added it, an alias by the commit it names), with any uncommitted change of
    the work tree as one more commit; no remote, so nothing a page runs reaches the project."""
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(PROJECT), str(store)], check=True, env=env)
    git(store, "remote", "remove", "origin", env=env)
    git(store, "checkout", "-q", "-B", "main", env=env)
    listed = _listed()
    keep = set(listed)
    for rel in filter(None, git(store, "ls-files", "-z", env=env).split("\0")):
        if rel not in keep:
            (store / rel).unlink()
    for rel in listed:
        source, target = PROJECT / rel, store / rel
        if target.is_symlink() or target.exists():
            if not source.is_symlink() and not target.is_symlink() and source.read_bytes() == target.read_bytes():
                continue
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    git(store, "add", "-A", env=env)
    if subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=store, env=env).returncode:
        git(store, "commit", "-q", "--no-verify", "-m", "the work tree's uncommitted changes", env=env)


def _fresh_repository(store: Path, env: dict[str, str]) -> None:
    """This repository's files but its records, ledger and import manifests, in a repository
    of its own (the identity registry's aliases settled at its first commit)."""
    store.mkdir(parents=True)
    ledger = ("data/", "governance/events/", "governance/imports/")
    for rel in _listed():
        if rel.startswith(ledger) and Path(rel).name != "README.md":
            continue
        target = store / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT / rel, target, follow_symlinks=False)
    git(store, "init", "-q", "-b", "main", env=env)
    settle = _unsettle(store)
    git(store, "add", "-A", env=env)
    git(store, "commit", "-q", "--no-verify", "-m", "the store (empty)", env=env)
    if settle:
        _settle(store, settle, git(store, "rev-parse", "HEAD", env=env).strip())
        git(store, "add", "-A", env=env)
        git(store, "commit", "-q", "--no-verify", "-m", "the identity registry's aliases, settled", env=env)


_SETTLED_AT = re.compile(r'^(\s*)settled_at: "?[0-9a-f]{40}"?\n', re.M)


def _unsettle(store: Path) -> list[Path]:
    """The empty store has none of the project's history, so an alias's ``settled_at`` (a
    commit of that history) would name no commit there: its first commit holds the registry
    without them, and :func:`_settle` names that commit, as ``eee identity alias`` in that
    store would have. Returns the files changed."""
    changed = []
    for path in sorted((store / "governance" / "identity").glob("*.yaml")):
        text = path.read_text()
        if _SETTLED_AT.search(text):
            path.write_text(_SETTLED_AT.sub("", text))
            changed.append(path)
    return changed


def _settle(store: Path, files: list[Path], commit: str) -> None:
    for path in files:
        source = (PROJECT / path.relative_to(store)).read_text()
        path.write_text(_SETTLED_AT.sub(lambda m: f'{m.group(1)}settled_at: "{commit}"\n', source))


def stand_in_sidecars(store: Path) -> None:
    """For every DVC pointer whose sidecar is not in the work tree, rows made for its record
    (its model and first result), over sample ids that the records share."""
    sys.path.insert(0, str(Path(__file__).parent))
    import json

    from analysis_store import sidecar_bytes

    rng = random.Random(22)
    ids = [f"s{i:06d}" for i in range(40)]
    for pointer in sorted((store / "data").rglob("*_samples.jsonl.dvc")):
        sidecar = pointer.with_suffix("")
        if sidecar.exists():
            continue
        record = json.loads(pointer.with_name(pointer.name.split("_samples")[0] + ".json").read_text())
        result = record["evaluation_results"][0].get("evaluation_result_id") or "qa:exact_match"
        ability = rng.random()
        scores = [1.0 if rng.random() < ability else 0.0 for _ in ids]
        sidecar.write_bytes(sidecar_bytes(record["model_info"]["id"], scores, ids, result_id=result))


# --- running ---------------------------------------------------------------------------------


@dataclass
class Ran:
    command: str
    line: int
    status: int
    expected: int | None

    @property
    def ok(self) -> bool:
        return self.status == self.expected if self.expected is not None else self.status in (0, 2)


def run_block(block: Block, store: Path, env: dict[str, str]) -> tuple[list[Ran], str, str]:
    """Run ``block`` in ``store``: its ``before`` commands, then its commands in one shell
    (``. .venv/bin/activate`` and the like carry over), each one's exit status recorded."""
    status_file = store.parent / "statuses"
    status_file.write_text("")
    script = [f"exec 3>>{shlex.quote(str(status_file))}"]
    for cmd in block.before:
        script += [f"( {cmd} ) >/dev/null 2>&1 || {{ echo 'before: {cmd} failed' >&2; exit 99; }}"]
    if block.lang == "python":
        program = store.parent / f"example-{block.line}.py"
        program.write_text(block.text)
        commands = [(block.line, f".venv/bin/python {shlex.quote(str(program))}", 0)]
    else:
        commands = block.commands()
    for i, (_line, cmd, _expected) in enumerate(commands):
        script += [cmd, f'echo "{i} $?" >&3']
    proc = subprocess.run(
        ["bash", "-c", "\n".join(script) + "\n"],
        cwd=store,
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode != 99, f"{block.where}: {proc.stderr}"
    statuses = dict(line.split() for line in status_file.read_text().splitlines())
    ran = []
    for i, (line, cmd, expected) in enumerate(commands):
        assert str(i) in statuses, f"{block.where}: the shell stopped before `{cmd}`:\n{proc.stdout}\n{proc.stderr}"
        ran.append(Ran(cmd, line, int(statuses[str(i)]), expected))
    return ran, proc.stdout, proc.stderr
