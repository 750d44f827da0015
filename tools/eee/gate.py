"""The lean gate, the store's default commit gate: the hooks of ``.pre-commit-config.yaml``,
run without a runner's work-tree scans.

pre-commit and prek both check the whole work tree around the hooks (unstaged changes to
stash, "did a hook modify files?"): ``git diff`` scans that stat every tracked file. At
230,000 records each scan costs about 2 s on a 2-core machine (prek adds 7.8 s to a
one-record commit there, pre-commit 15.7 s; ``benchmarks/bench_scale.py``), while the
store's own hooks look only at what is staged. This runner reads the same configuration and
runs the same local hooks on the staged files, as pre-commit would (``files``/``exclude``,
``always_run``, ``pass_filenames``, ``SKIP``), and hands over to prek (else pre-commit)
whenever a runner's extra care matters: when a staged file also has unstaged changes (the
store's own hooks read the index either way, see :mod:`eee.staged`, but another local hook
may read the work tree, which a runner stashes first), or when a hook is not a local script.

``python3 tools/dev.py setup`` installs it (``eee gate install``); ``eee gate uninstall``
installs prek's hook instead.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from eee.gitutil import git, parse_raw, staged_raw

HOOK_MARK = "# eee lean gate"


class Fallback(Exception):
    """Something only pre-commit handles: run it instead."""


def staged_files(changes: list[Any]) -> list[str]:
    """What pre-commit would pass: staged paths that exist in the next commit."""
    return [c.path for c in changes if c.status != "D"]


def unstaged_among(root: Path, paths: list[str]) -> list[str]:
    """Which of ``paths`` also have unstaged changes (a pathspec-limited, cheap diff)."""
    found: list[str] = []
    for i in range(0, len(paths), 500):
        out = git("diff", "--name-only", "--no-ext-diff", "-z", "--", *paths[i : i + 500], cwd=root)
        found.extend(p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p)
    return found


def load_hooks(root: Path) -> list[dict[str, Any]]:
    import yaml  # lazy: PyYAML costs ~35 ms; only when the gate reads the hook config

    config = yaml.load(
        (root / ".pre-commit-config.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )
    hooks = []
    for repo in config.get("repos", []):
        if repo.get("repo") != "local":
            raise Fallback(f"hooks from {repo.get('repo')} need pre-commit's environments")
        for hook in repo.get("hooks", []):
            if hook.get("language") not in ("script", "system"):
                raise Fallback(f"hook {hook.get('id')} uses language {hook.get('language')}")
            stages = hook.get("stages") or config.get("default_stages") or ["pre-commit"]
            if "pre-commit" in stages or "commit" in stages:
                hooks.append(hook)
    return hooks


def _line(name: str, status: str, width: int = 79) -> str:
    dots = "." * max(3, width - len(name) - len(status))
    return f"{name}{dots}{status}"


def run_hooks(root: Path, staged: list[str], hooks: list[dict[str, Any]], env: dict[str, str] | None = None) -> int:
    skip = {s.strip() for s in os.environ.get("SKIP", "").split(",") if s.strip()}
    code = 0
    for hook in hooks:
        name = hook.get("name", hook["id"])
        if hook["id"] in skip:
            print(_line(name, "Skipped"))
            continue
        include = re.compile(hook.get("files", ""))
        exclude = re.compile(hook["exclude"]) if hook.get("exclude") else None
        files = [f for f in staged if include.search(f) and not (exclude and exclude.search(f))]
        if not files and not hook.get("always_run"):
            print(_line(name, "(no files to check)Skipped"))
            continue
        entry = shlex.split(hook["entry"])
        if hook.get("language") == "script":
            entry[0] = str(root / entry[0])
        cmd = [*entry, *hook.get("args", []), *(files if hook.get("pass_filenames", True) else [])]
        if _own_runner(root, entry):
            returncode, output = _in_process(root, cmd[1:], env)
        else:
            proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
            returncode, output = proc.returncode, proc.stdout + proc.stderr
        ok = returncode == 0
        print(_line(name, "Passed" if ok else "Failed"))
        output = output.rstrip()
        if not ok or (hook.get("verbose") and output):
            print(f"- hook id: {hook['id']}")
            if not ok:
                print(f"- exit code: {returncode}")
            if output:
                print(f"\n{output}\n")
        code = code or (0 if ok else 1)
    return code


def _own_runner(root: Path, entry: list[str]) -> bool:
    """Whether a hook's entry is the store's ``tools/hook``, which runs ``python -m eee.hooks``
    in this very environment: then the hooks run in this process (one interpreter start less)."""
    if entry[0] != str(root / "tools" / "hook"):
        return False
    try:
        return "-m eee.hooks" in Path(entry[0]).read_text(errors="replace")
    except OSError:
        return False


def _in_process(root: Path, argv: list[str], env: dict[str, str] | None) -> tuple[int, str]:
    """``tools/hook ARGV`` run here: (exit code, what it printed)."""
    import contextlib
    import io

    from eee.hooks.__main__ import main as hooks_main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    out = io.StringIO()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.chdir(root)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                code = hooks_main(argv)
            except Exception as exc:  # a hook's bug refuses the commit, with what happened
                print(f"eee gate: the hooks stopped: {type(exc).__name__}: {exc}")
                code = 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return code, out.getvalue()


def _runner() -> list[str]:
    """The full runner to hand over to: prek (beside this interpreter, or on PATH), else pre-commit."""
    beside = Path(sys.executable).parent / "prek"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("prek")
    return [found] if found else [sys.executable, "-m", "pre_commit"]


def _hand_over(root: Path, reason: str) -> int:
    runner = _runner()
    name = "prek" if runner[0].endswith("prek") else "pre-commit"
    print(f"eee gate: {reason}; running {name} instead", file=sys.stderr)
    return subprocess.call([*runner, "run", "--hook-stage", "pre-commit"], cwd=root)


def check(root: Path) -> int:
    staged = staged_files(parse_raw(staged_raw(root)))
    try:
        hooks = load_hooks(root)
    except Fallback as exc:
        return _hand_over(root, str(exc))
    dirty = unstaged_among(root, staged) if staged else []
    if dirty:
        return _hand_over(root, f"{len(dirty)} staged file(s) also have unstaged changes (e.g. {dirty[0]})")
    return run_hooks(root, staged, hooks)


def _hook_path(root: Path) -> Path:
    """Where git looks for the hook (a linked worktree shares its repository's hooks)."""
    path = Path(git("rev-parse", "--git-path", "hooks/pre-commit", cwd=root).decode().strip())
    return path if path.is_absolute() else root / path


def install(root: Path) -> Path:
    """Install the lean git hook. (Not git's many-files settings: DVC's git library cannot read
    an index of version 4, and `eee samples add` would fail.)"""
    path = _hook_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/bin/sh\n"
        f"{HOOK_MARK}: the hooks of .pre-commit-config.yaml without pre-commit's work-tree scans\n"
        "# (`eee gate uninstall` installs prek's hook instead)\n"
        "root=$(git rev-parse --show-toplevel)\n"
        'py=${EEE_PYTHON:-"$root/.venv/bin/python"}\n'
        '[ -x "$py" ] || py=python3\n'
        'exec "$py" -m eee gate run\n'
    )
    path.chmod(0o755)
    return path


def uninstall(root: Path) -> None:
    path = _hook_path(root)
    if path.exists() and HOOK_MARK in path.read_text():
        path.unlink()
    subprocess.run([*_runner(), "install", "-f"], cwd=root, check=True, capture_output=True)
