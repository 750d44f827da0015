"""The server gate: ``pre-receive`` and ``post-receive`` hooks of the bare repository a
store is pushed to (``eee server install GIT_DIR``).

The local hooks are a courtesy that fails early: anyone can skip them
(``git commit --no-verify``, a clone without them). What a store guarantees is enforced
where it is pushed: git runs ``pre-receive`` before any ref moves, and a non-zero exit
refuses the whole push.

**pre-receive** reads git's ``<old> <new> <ref>`` lines. For each ref update:

1. what :mod:`eee.rules.push` refuses before any commit is read: deleting or rewriting
   (a non-fast-forward update) a protected branch, a ref that names no commit, a push of
   more new commits than the gate checks at once. The protected branches come from the
   settings at the ref's head and the default branch's head before the push, never from
   the pushed commits;
2. the audit, THE audit (:func:`eee.validation.audit.audit`): every rule it knows, now and
   later, runs over the commits the push brings, those that no ref of the repository
   reaches (``git log NEW --not --all``), with the ref's old head as trust anchor (on a
   protected branch, kept on the new head's first-parent chain). Every commit is judged by
   the roles and settings of the mainline commit before it (:mod:`eee.rules.authority`):
   the push's first commit, and whatever a merge brings onto the old head, by the old head,
   never by a pushed commit's choice. It is told the push (:class:`eee.rules.push.Push`),
   and every DVC pointer the push brings has its object on the store's DVC remote (the
   setting ``dvc_remote`` at the push's basis; its URL and credentials from the DVC folder
   ``git config eee.dvcDir`` names: :func:`dvc_remote`), checked against the pointer's md5
   and the record's checksum; a remote that cannot be asked refuses the push.

The pushed objects sit in git's quarantine (``GIT_QUARANTINE_PATH``,
``GIT_OBJECT_DIRECTORY``, ``GIT_ALTERNATE_OBJECT_DIRECTORIES``) until the hook accepts;
every git process the tools start inherits this process's environment
(:func:`eee.git.cli.environment`), so the audit reads them there, and no work tree is
used: trees are read from git's objects. Findings go to stderr (git shows them to the
pusher as ``remote:`` lines) as ``<commit>:path::$.json.path: [id] message`` and a hint,
bounded (:data:`MAX_LINES` lines, control characters escaped); hints name the tools as the
pusher's clone runs them (``.venv/bin/eee``). An error anywhere refuses the push: no ref
moves. A check that stops on an unexpected error refuses it too (the gate fails closed).

**post-receive** runs after the refs moved: it brings the indexes the audit reads
(:data:`INDEXES`) to the default branch's head, so that the next push reads only what it
adds. They are built at install (a bare repository has no work tree and no checkout hook
to build them). One push is checked at a time (a lock file in the git directory).

The hooks run the package this interpreter runs (``-I``: no current folder, no
``PYTHONPATH``), by its absolute path: the code that judges a push is never code from the
pushed tree.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, NamedTuple

from eee.git.cli import GitError, count_new, git_path, head_ref, is_ancestor, resolve, rev_list_new, set_config
from eee.reporting.findings import ERROR, WARNING, Finding
from eee.reporting.reporters import text_lines
from eee.rules.push import (
    Push,
    audit_hint,
    is_zero,
    max_commits,
    protection,
    ref_findings,
    shown_ref,
    target_findings,
    too_many,
)
from eee.store.paths import escaped

HOOK_MARK = "# eee server gate"
INDEXED = "eee-server-indexed"  # the commit the indexes were last brought to (post-receive skips it)
HOOKS = ("pre-receive", "post-receive")
LOCK_FILE = "eee-server.lock"
LOCK_WAIT = 300  # seconds a push waits for the one before it to be checked
MAX_UPDATES = 1_000  # ref updates read from one push
MAX_INPUT_LINE = 4096  # bytes of one line of git's input (two object ids and a ref name)
MAX_LINES = 400  # lines of findings shown to the pusher; the rest are counted
MAX_LINE_CHARS = 2000  # characters of one line shown
SHOWN_AS = ".venv/bin/eee"  # the tools as the pusher's clone runs them (the README's setup)
PREFIX = "eee server gate"
DVC_DIR_CONFIG = "eee.dvcDir"  # the bare repository's git config: the DVC folder (config, credentials) the gate reads


class Refused(Exception):
    """Something in the way of ``eee server install|uninstall``: the message says what and the way out."""


class BadInput(Exception):
    """git's input to the hook is not what git writes."""


class Update(NamedTuple):
    """One line of a ``pre-receive`` or ``post-receive`` hook's input."""

    old: str
    new: str
    ref: str


class Index(NamedTuple):
    """An index the audit reads in a bare repository: built at install, kept at the default
    branch's head by post-receive. ``sync(git_dir, commit)`` brings it to ``commit``;
    ``files``: what it keeps in the git directory (uninstall removes them)."""

    name: str
    files: tuple[str, ...]
    sync: Callable[[Path, str], None]


def _sync_duplicates(git_dir: Path, commit: str) -> None:
    from eee.governance.duplicates import AUDIT_INDEX_FILE, DuplicateIndex

    index = DuplicateIndex(git_dir, name=AUDIT_INDEX_FILE)
    try:
        index.sync(commit, jobs=min(2, os.cpu_count() or 1))
    finally:
        index.close()


def _duplicates_files() -> tuple[str, ...]:
    from eee.governance.duplicates import AUDIT_INDEX_FILE

    return (AUDIT_INDEX_FILE,)


# The indexes the server keeps. An index a new rule of the audit reads (a uuid index over
# history, say) is added here once: install builds it, post-receive keeps it at HEAD.
INDEXES: tuple[Index, ...] = (Index("duplicates", _duplicates_files(), _sync_duplicates),)


# --- git's input ------------------------------------------------------------------------------


def _oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def read_updates(stream: IO[bytes]) -> list[Update]:
    """The ``<old> <new> <ref>`` lines git writes to the hook, at most :data:`MAX_UPDATES`
    of at most :data:`MAX_INPUT_LINE` bytes; :class:`BadInput` for anything else."""
    out: list[Update] = []
    n = 0
    while True:
        line = stream.readline(MAX_INPUT_LINE + 1)
        if not line:
            return out
        n += 1
        if len(line) > MAX_INPUT_LINE:
            raise BadInput(f"line {n} of git's input is longer than {MAX_INPUT_LINE} bytes")
        if n > MAX_UPDATES:
            raise BadInput(f"the push updates more than {MAX_UPDATES:,} refs; push them in parts")
        text = line.rstrip(b"\n").decode("utf-8", "surrogateescape")
        parts = text.split(" ", 2)
        if len(parts) != 3 or not _oid(parts[0]) or not _oid(parts[1]) or not parts[2]:
            raise BadInput(f"line {n} of git's input is not `<old> <new> <ref>`: {escaped(text[:200])}")
        out.append(Update(*parts))


# --- what the pusher sees ----------------------------------------------------------------------


def _shown(line: str) -> str:
    """A line as the pusher sees it: control and invisible characters escaped, bounded."""
    line = escaped(line, quote=False)
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 3] + "..."


class Report:
    """The lines shown to the pusher, bounded: past :data:`MAX_LINES` lines of findings the
    findings are counted, not shown."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.shown = 0
        self.hidden = 0
        self.errors = 0
        self.warnings = 0

    def say(self, text: str) -> None:
        self.stream.write(_shown(text) + "\n")

    def note(self, text: str) -> None:
        """A ref's summary line, within the same bound as the findings (a push of many refs)."""
        if self.shown < MAX_LINES:
            self.shown += 1
            self.say(text)

    def findings(self, findings: list[Finding], suppressed: int = 0) -> None:
        for f in findings:
            if f.severity == ERROR:
                self.errors += 1
            elif f.severity == WARNING:
                self.warnings += 1
            lines = text_lines(f)
            if self.shown + len(lines) > MAX_LINES:
                self.hidden += 1
                continue
            self.shown += len(lines)
            for line in lines:
                self.say(line)
        if suppressed:
            self.errors += suppressed
            self.hidden += suppressed


# --- judging one ref update ------------------------------------------------------------------


def judge(update: Update, cwd: Path, report: Report, limit: int, default_head: str | None, seen: list[str]) -> None:
    """The findings of one ref update into ``report``: :mod:`eee.rules.push`, then the audit
    of the commits it brings; ``seen``: the pushed commits an earlier ref of the same push
    brought (audited once, whatever the number of refs that name them), this one's added."""
    ref = update.ref
    old = None if is_zero(update.old) else resolve(f"{update.old}^{{commit}}", cwd)
    bases = [b for b in dict.fromkeys((old, default_head)) if b]
    guard = protection(cwd, ref, bases)
    if is_zero(update.new):
        report.findings(ref_findings(ref, old, None, cwd, guard))
        return
    new, refused = target_findings(ref, update.new, cwd)
    if new is None:
        report.findings(refused)
        return
    refused = ref_findings(ref, old, new, cwd, guard)
    if refused:
        report.findings(refused)
        return
    count = count_new(new, cwd, seen)
    span = f"{old[:10]}..{new[:10]}" if old else f"new at {new[:10]}"
    if count > limit:
        report.findings([too_many(ref, count, limit, old)])
        return
    if count == 0:
        report.note(f"{PREFIX}: {shown_ref(ref)} ({span}): no new commits")
        return
    from eee.validation.audit import audit

    fast_forward = old is not None and is_ancestor(old, new, cwd)
    push = Push(ref, old, new, old or default_head, guard.protected)
    commits = rev_list_new(new, cwd, seen)
    seen.append(new)
    summary = audit(
        None,
        new,
        cwd,
        anchor=old if fast_forward else None,
        commits=commits,
        push=push,
        adopt_without_anchor=False,
        mainline=False,  # the old head on the new head's first-parent chain: the ref rules held it already
        remote_objects=True,
        remote_setup=lambda: dvc_remote(cwd, push.basis),
    )
    before = report.errors, report.warnings
    if summary.fatal:
        hint = "push again; if it persists, tell the server's administrator"
        report.findings([Finding(shown_ref(ref), "$", summary.fatal, hint, check="push")])
    for result in summary.results:
        report.findings(result.findings, result.suppressed)
    errors, warnings = report.errors - before[0], report.warnings - before[1]
    line = f"{PREFIX}: {shown_ref(ref)} ({span}): {count} new commit{'' if count == 1 else 's'} checked"
    if errors or warnings:
        line += f", {errors} error{'' if errors == 1 else 's'}, {warnings} warning{'' if warnings == 1 else 's'}"
        line += f" (in a clone that holds them: `{audit_hint(old, new)}`)"
    report.note(line)


def dvc_remote(git_dir: Path, basis: str | None) -> tuple[str | None, Path | None, str]:
    """The DVC remote the gate asks for every pointer a push brings: its name (the setting
    ``dvc_remote`` of the push's basis; None: ``core.remote``), the DVC folder whose config
    gives its URL and credentials (``git config eee.dvcDir`` of the bare repository, set by
    ``eee server install --dvc-dir``; a bare repository's is named, never guessed), and the
    note said where the remote lacks an object or cannot be asked."""
    from eee.git.cli import config
    from eee.rules.push import settings_at
    from eee.store.settings import SETTINGS_PATH, SettingsProblem

    name = ""
    if basis is not None:
        try:
            name = settings_at(git_dir, basis).dvc_remote
        except SettingsProblem:
            name = ""  # the settings' own rules say why; DVC's core.remote meanwhile
    folder = config(DVC_DIR_CONFIG, git_dir)
    dvc_dir = (git_dir / folder) if folder else None
    named = (
        f"remote {name!r}, dvc_remote in {SETTINGS_PATH}"
        if name
        else f"DVC's core.remote (dvc_remote in {SETTINGS_PATH} is empty)"
    )
    where = (
        f"DVC config in {dvc_dir}"
        if dvc_dir
        else f"no DVC config named: `git config {DVC_DIR_CONFIG} DIR` in the bare repository"
    )
    return name or None, dvc_dir, f"the store's remote: {named}; the server gate's {where}"


@contextmanager
def _locked(git_dir: Path, wait: float = LOCK_WAIT) -> Iterator[bool]:
    """One push checked at a time (its index syncs included): a lock file in the git
    directory; yields False when the one before did not finish within ``wait`` seconds."""
    from eee.store.fsutil import locked

    with locked(git_dir / LOCK_FILE, wait) as got:
        yield got


def _clean_environment(git_dir: Path) -> None:
    """What the hook's own environment must not decide: ``GIT_DIR`` made absolute (git
    gives ``.``), and no trust anchor from outside (the push's old head is the anchor).
    Nothing of git's quarantine is touched: every git process inherits it."""
    from eee.rules.history import ANCHOR_ENV

    os.environ["GIT_DIR"] = str(git_dir)
    os.environ.pop(ANCHOR_ENV, None)


def _sync_indexes(git_dir: Path, commit: str | None, report: Report | None = None) -> None:
    """Every index of :data:`INDEXES` brought to ``commit``; :data:`INDEXED` then names it
    (what lets post-receive skip a push that left them there already)."""
    from eee.store.fsutil import replace_file

    marker = git_dir / INDEXED
    marker.unlink(missing_ok=True)
    if commit is None:
        return
    for index in INDEXES:
        try:
            index.sync(git_dir, commit)
        except Exception as exc:  # an index is a cache: the next push builds it again
            if report is not None:
                report.say(f"{PREFIX}: warning: the {index.name} index could not be brought to {commit[:10]}: {exc}")
            return
    tmp = marker.with_name(f".{INDEXED}-{os.getpid()}")
    tmp.write_text(commit + "\n")
    replace_file(tmp, marker)


def _default_branch_after(updates: list[Update], git_dir: Path) -> str | None:
    """The commit the default branch names once the push is accepted (None: the push leaves it as it is)."""
    head = head_ref(git_dir)
    for update in updates:
        if update.ref == head and not is_zero(update.new):
            return resolve(f"{update.new}^{{commit}}", git_dir)
    return None


def pre_receive(git_dir: Path, stdin: IO[bytes], stderr: IO[str]) -> int:
    """The ``pre-receive`` hook: 0 accepts the push, 1 refuses it (no ref moves)."""
    from eee.reporting.shown import show_as

    report = Report(stderr)
    _clean_environment(git_dir)
    show_as(SHOWN_AS)
    try:
        updates = read_updates(stdin)
    except BadInput as exc:
        report.say(f"{PREFIX}: the push is refused: {exc}")
        return 1
    with _locked(git_dir) as got:
        if not got:
            report.say(f"{PREFIX}: the push is refused: another push is still being checked; push again in a while")
            return 1
        (git_dir / INDEXED).unlink(missing_ok=True)  # the audit moves the indexes: until they are put back
        default_head = resolve("HEAD^{commit}", git_dir)
        limit = max_commits(git_dir)
        seen: list[str] = []
        try:
            for update in updates:
                judge(update, git_dir, report, limit, default_head, seen)
        except Exception as exc:  # fail closed: a check that stopped accepts nothing
            report.say(f"{PREFIX}: the push is refused: the check stopped ({type(exc).__name__}: {exc})")
            report.say(f"{PREFIX}: nothing was updated; tell the server's administrator")
            _sync_indexes(git_dir, default_head)
            return 1
        if report.hidden:
            report.say(f"{PREFIX}: ... {report.hidden} more finding(s) not shown")
        if not report.errors:  # the indexes where post-receive would bring them: done here, in the same lock
            _sync_indexes(git_dir, _default_branch_after(updates, git_dir) or default_head)
        if report.errors:
            _sync_indexes(git_dir, default_head)  # back to objects that stay: the refused ones are dropped
            report.say(
                f"{PREFIX}: the push is refused ({report.errors} error{'' if report.errors == 1 else 's'}): "
                "no ref was updated; fix what is named above (`.venv/bin/eee rules ID` explains a rule) and push again"
            )
            return 1
    return 0


def post_receive(git_dir: Path, stdin: IO[bytes], stderr: IO[str]) -> int:
    """The ``post-receive`` hook: the indexes brought to the default branch's new head
    (a failure is said, never fatal: the refs have moved already)."""
    report = Report(stderr)
    _clean_environment(git_dir)
    try:
        read_updates(stdin)
    except BadInput:
        pass  # the input is not needed: the indexes follow the default branch
    with _locked(git_dir) as got:
        if got:
            _sync_indexes(git_dir, resolve("HEAD^{commit}", git_dir), report)
    return 0


# --- install ------------------------------------------------------------------------------------


def _hook_path(git_dir: Path, stage: str) -> Path:
    """Where git looks for the hook (``core.hooksPath`` respected)."""
    path = git_path(f"hooks/{stage}", git_dir)
    return path if path.is_absolute() else git_dir / path


def _ours(path: Path) -> bool:
    try:
        return HOOK_MARK in path.read_text(errors="replace")
    except OSError:
        return False


def script(stage: str, python: str | None = None) -> str:
    """The hook script: the installed package, by this interpreter's absolute path
    (post-receive: only when the default branch's head is not where the indexes are)."""
    python = python or os.path.abspath(sys.executable)
    skip = ""
    if stage == "post-receive":
        skip = (
            "# the indexes already at the default branch's head (pre-receive brought them there): nothing to do\n"
            'head=$(git rev-parse -q --verify "HEAD^{commit}")\n'
            f'[ -n "$head" ] && [ "$head" = "$(cat "${{GIT_DIR:-.}}/{INDEXED}" 2>/dev/null)" ] && exit 0\n'
        )
    return (
        "#!/bin/sh\n"
        f"{HOOK_MARK}: {stage} (installed by `eee server install`; `eee server uninstall` removes it)\n"
        "# the code that judges a push is the installed package, never code from the pushed tree\n"
        f"{skip}exec {shlex.quote(python)} -I -m eee server {stage}\n"
    )


def install(path: Path, force: bool = False, dvc_dir: Path | None = None) -> Path:
    """Install the server gate into the bare repository at ``path`` and build its indexes;
    returns its git directory. :class:`GitError` when ``path`` is no bare repository;
    :class:`Refused` when a hook that eee did not write is there (unless ``force``) or
    ``dvc_dir`` is no DVC folder. ``dvc_dir``: the DVC folder (its ``config`` names the
    store's remote, with credentials beside it) the gate asks for every pushed pointer's
    object, kept as ``git config eee.dvcDir``."""
    from eee.git.cli import bare_git_dir
    from eee.reporting.shown import command
    from eee.store.fsutil import replace_file

    git_dir = bare_git_dir(path)
    paths = {stage: _hook_path(git_dir, stage) for stage in HOOKS}
    if dvc_dir is not None and not (Path(dvc_dir) / "config").is_file():
        raise Refused(
            f"{dvc_dir}: no DVC config there; --dvc-dir names a folder whose `config` names the store's remote "
            "(and `config.local` its credentials), e.g. a copy of the store's .dvc folder"
        )
    if not force:
        for stage, hook in paths.items():
            if (hook.exists() or hook.is_symlink()) and not _ours(hook):
                raise Refused(
                    f"{hook}: a {stage} hook that eee did not install is there; keep it (move it away and call "
                    f"it from elsewhere) or replace it: `{command('server', 'install', str(git_dir), '--force')}`"
                )
    for stage, hook in paths.items():
        hook.parent.mkdir(parents=True, exist_ok=True)
        tmp = hook.with_name(f".{hook.name}.eee-{os.getpid()}")
        tmp.write_text(script(stage))
        tmp.chmod(0o755)
        if hook.is_symlink():
            hook.unlink()
        replace_file(tmp, hook)
    if dvc_dir is not None:
        set_config(DVC_DIR_CONFIG, str(Path(dvc_dir).resolve()), git_dir)
    _sync_indexes(git_dir, resolve("HEAD^{commit}", git_dir))
    return git_dir


def uninstall(path: Path) -> tuple[Path, list[Path]]:
    """Remove the server gate's hooks and indexes; returns the git directory and the hooks
    removed. A hook eee did not write stays."""
    from eee.git.cli import bare_git_dir

    git_dir = bare_git_dir(path)
    removed = []
    for stage in HOOKS:
        hook = _hook_path(git_dir, stage)
        if hook.exists() and not hook.is_symlink() and _ours(hook):
            hook.unlink()
            removed.append(hook)
    if removed:
        for index in INDEXES:
            for name in index.files:
                for leftover in (name, name + "-wal", name + "-shm", name + "-journal"):
                    (git_dir / leftover).unlink(missing_ok=True)
        (git_dir / LOCK_FILE).unlink(missing_ok=True)
        (git_dir / INDEXED).unlink(missing_ok=True)
    return git_dir, removed


def installed(path: Path) -> bool:
    """Whether both hooks of the server gate are in the bare repository at ``path``."""
    from eee.git.cli import bare_git_dir

    try:
        git_dir = bare_git_dir(path)
    except GitError:
        return False
    return all(_ours(_hook_path(git_dir, stage)) for stage in HOOKS)
