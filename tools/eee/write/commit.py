"""The one way the tools write into the store and commit: lock, journal, staging, commit
through the hooks, rollback, actor.

Every writer goes through a :class:`Transaction` (:func:`transaction`): the governance
actions (:mod:`eee.write.actions`, a corrected record of ``supersede``/``resolve``
included), ``eee import`` (:mod:`eee.imports.run`) and ``eee convert``
(:mod:`eee.convert.common`).

- **Lock.** One lock per repository (``eee-ledger.lock`` in the git directory) for the
  whole run, so a check ("is it already retracted?") and the write that follows cannot
  interleave with another tool's; taking it first finishes or undoes what a dead run left
  (:func:`recover`).
- **Journal.** Before a file is written (by this module, or by DVC on its behalf), a line
  of the journal (``eee-journal.jsonl`` in the git directory) names it: the sha256 of what
  is written, the content it replaces (kept as a blob in git's object store) and, for a
  file whose index entry changes, that entry. Before a commit, a line names every path
  and blob the commit holds. A run killed at any point is finished (its commit happened:
  the commit's paths hold those blobs at HEAD) or undone (every file it wrote and still
  holds what it wrote is removed or put back, index entries as they were, folders it made
  removed when empty) by the next tool that takes the lock.
- **Staging.** With ``stage``, the files written are staged in the repository's index at
  the next commit or at the end of the run, all in one ``git update-index`` (literal
  paths, never pathspecs): one rewrite of the index, however many files.
- **Commit.** :meth:`Transaction.commit` commits exactly the files the transaction staged
  since its last commit, plus the user's staged files it is told the action depends on,
  on top of HEAD, from a temporary index (``GIT_INDEX_FILE``: HEAD plus exactly those
  entries), through the hooks (:func:`eee.git.cli.commit`, the one commit command: signing
  goes there: ``-S`` where the user's git signs with SSH). Whatever else is staged stays
  staged and out of the commit.
- **Rollback.** Any error inside the transaction (a commit the hooks refuse, a failed
  write, an interrupt) undoes everything written since the last commit: no file left, the
  index as before; earlier commits of the run stay.
- **Actor.** Who acts is who commits: :func:`actor` (git's committer identity, ``git var GIT_COMMITTER_IDENT``).

The journal is input like any file the tools read: it is used only when every line is
well formed, every path lies below the folders a writer writes (:data:`WRITABLE`) with no
``..``, no absolute path and no symbolic link on the way; otherwise it is reported and
left as it is, never half applied.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eee.git import cli
from eee.reporting.findings import Finding, Refused, refusal
from eee.store.fsutil import Unconfined, confined, make_folders, write_new, write_replacing
from eee.store.fsutil import locked as lock_file

# The folders (and the few files) a writer writes: nothing outside them is ever written,
# journaled or undone. The roles files and CODEOWNERS are written whole by `eee roles`, the identity
# registry by `eee identity`.
WRITABLE = (
    "data",
    "governance/events",
    "governance/imports",
    "governance/experiments",
    "governance/allowed_signers",
    "governance/roles.yaml",
    ".github/CODEOWNERS",
    "governance/identity",
)
JOURNAL = "eee-journal.jsonl"
LOCK = "eee-ledger.lock"
JOURNAL_VERSION = 1
JOURNAL_MAX_BYTES = 512 * 1024 * 1024  # far beyond any run's; a larger file is no journal of ours

_HEX64 = re.compile(r"[0-9a-f]{64}")
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_MODES = ("100644", "100755")


def actor(root: Path) -> dict[str, str]:
    """Who acts: who commits, git's committer identity as git will record it (``git var
    GIT_COMMITTER_IDENT``: ``GIT_COMMITTER_NAME``/``GIT_COMMITTER_EMAIL`` over ``user.name``
    and ``user.email``), which the events and import manifests record and the audit's actor
    rule compares them with; Refused when git cannot tell."""
    found = cli.committer_ident(root)
    said = cli.identity_said(root)  # as the user said them, never a name git guessed from the system's accounts
    if found is None or not found[0] or not found[1] or said != {"name", "email"}:
        raise refusal(
            "git config user.name and user.email must be set (or GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL): "
            "commits, events and import manifests record who acted, as git's committer (git var GIT_COMMITTER_IDENT)",
            "git config user.name 'Your Name'; git config user.email you@example.org",
        )
    return {"name": found[0], "email": found[1]}


def git_folder(root: Path) -> Path | None:
    """The git directory of the store at ``root``: None unless ``root`` is the top of a git
    work tree (a plain folder inside another repository is no part of it)."""
    found = cli.top_and_git_dir(root)
    if found is None or found[0].resolve() != Path(root).resolve():
        return None
    return found[1]


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """The store's lock, held for the block; a dead run's leftovers are finished or undone
    first (:func:`recover`). A folder outside git has neither lock nor journal."""
    folder = git_folder(root)
    if folder is None:
        yield
        return
    with lock_file(folder / LOCK):
        recover(root)
        yield


@contextlib.contextmanager
def transaction(root: Path, *, stage: bool = True, durable: bool = True) -> Iterator[Transaction]:
    """A :class:`Transaction` under the store's lock: on leaving the block normally what was
    written stays (staged, or committed); on any error everything written since the last
    commit is undone, then the error goes on."""
    with locked(root):
        tx = Transaction(root, stage=stage, durable=durable)
        try:
            yield tx
            tx._flush()
        except BaseException:
            tx.rollback()
            raise
        tx.close()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Transaction:
    """What one run writes into the store (see the module docstring). Use :func:`transaction`."""

    def __init__(self, root: Path, *, stage: bool = True, durable: bool = True) -> None:
        self.root = Path(root)
        folder = git_folder(self.root)
        self.stage = stage and folder is not None
        self.durable = durable
        self.journal = folder / JOURNAL if folder is not None else None  # outside git: rollback only
        self.entries: list[dict[str, Any]] = []  # journaled since the last commit
        self.staged: list[str] = []  # staged (or to be staged: _pending) since the last commit
        self._pending: list[str] = []
        self.commits: list[str] = []
        self._journaling = False  # the journal file exists (its header written)

    # --- the journal ------------------------------------------------------------------

    def _log(self, lines: list[dict[str, Any]]) -> None:
        """Append ``lines`` to the journal (created with its header when absent), durably,
        before anything they name is written."""
        if not lines:
            return
        if self.journal is None:
            self.entries += [line for line in lines if "commit" not in line]
            return
        data = b"".join(json.dumps(line, ensure_ascii=True).encode() + b"\n" for line in lines)
        flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
        if not self._journaling:
            header = {"journal": JOURNAL_VERSION, "stage": self.stage}
            data = json.dumps(header).encode() + b"\n" + data
            flags |= os.O_CREAT | os.O_EXCL
        fd = os.open(self.journal, flags, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        self._journaling = True
        self.entries += [line for line in lines if "commit" not in line]

    def _drop_journal(self) -> None:
        if self.journal is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.journal)
        self._journaling = False
        self.entries = []
        self.staged = []
        self._pending = []

    # --- writing ----------------------------------------------------------------------

    def _target(self, rel: str) -> Path:
        try:
            return confined(self.root, rel, WRITABLE)
        except Unconfined as exc:
            raise refusal(f"the tools never write {rel!r}: {exc}") from None

    def write(self, files: list[tuple[str, bytes]], *, durable: bool | None = None, stage: bool = True) -> list[Path]:
        """Create every file (``rel``, bytes) exclusively and atomically
        (:func:`eee.store.fsutil.write_new`; ``durable`` as there, the transaction's by
        default), journaled first, staged when the transaction stages (and ``stage``: a
        sidecar DVC keeps is not). Raises OSError (``FileExistsError`` when one exists)
        after undoing this call's files and folders."""
        durable = self.durable if durable is None else durable
        for rel, _ in files:
            if os.path.lexists(self._target(rel)):
                raise FileExistsError(17, "File exists", str(self.root / rel))
        folders: list[str] = []
        for rel, _ in files:
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                folder = "/".join(parts[:i])
                if folder not in folders and not (self.root / folder).is_dir():
                    folders.append(folder)
        mine = [{"folder": f} for f in folders if any(f.startswith(w + "/") for w in WRITABLE)]
        mine += [{"file": rel, "sha256": _sha256(data), "restore": None} for rel, data in files]
        self._log(mine)
        written: list[Path] = []
        try:
            for rel, data in files:
                make_folders(self.root, rel.rpartition("/")[0])
                written.append(write_new(self.root / rel, data, durable=durable))
        except BaseException:
            done = {p.relative_to(self.root).as_posix() for p in written}
            _undo(self.root, [e for e in mine if e.get("file", "") in done or "folder" in e], stage=False)
            raise
        if stage:
            self._stage([rel for rel, _ in files])
        return written

    def replace(self, files: list[tuple[str, bytes]], *, stage: bool = True) -> None:
        """Write every file (``rel``, bytes) in place of what it holds, or as a new file,
        atomically (a temporary file beside it, renamed over it: :mod:`eee.store.fsutil`);
        journaled first with the content it replaces (kept as a blob in git's object store)
        and its index entry, so that a rollback or a dead run's recovery puts it back. For
        the files the tools keep up to date (the identity registry); records and events are
        only ever :meth:`write`-n new."""
        lines: list[dict[str, Any]] = []
        targets = [(rel, data, self._target(rel)) for rel, data in files]
        for rel, _, path in targets:
            if os.path.lexists(path) and (path.is_symlink() or not path.is_file()):
                raise refusal(f"{rel} is not a regular file: the tools never write through it", check="refused")
        changed = [rel for rel, _, path in targets if os.path.lexists(path)]
        before = _index_entries(self.root, changed) if self.stage and changed else {}
        folders: list[str] = []
        for rel, _, _ in targets:
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                folder = "/".join(parts[:i])
                if folder not in folders and not (self.root / folder).is_dir():
                    folders.append(folder)
        lines += [{"folder": f} for f in folders if any(f.startswith(w + "/") for w in WRITABLE)]
        for rel, data, _path in targets:
            restore = None
            if rel in changed:
                restore = cli.hash_object(rel, self.root)
            line: dict[str, Any] = {"file": rel, "sha256": _sha256(data), "restore": restore}
            if self.stage and restore is not None:
                line["index"] = before.get(rel)
            lines.append(line)
        self._log(lines)
        for rel, data, path in targets:
            make_folders(self.root, rel.rpartition("/")[0])
            write_replacing(path, data, durable=self.durable)
        if stage:
            self._stage([rel for rel, _ in files])

    @contextlib.contextmanager
    def others(self, new: list[str], changed: list[str]) -> Iterator[None]:
        """Files another program writes for this run inside the block (DVC: a sidecar's
        pointer, its folder's ``.gitignore``): journaled before (what ``changed`` held is
        kept in git's object store), recorded and staged after."""
        for rel in new + changed:
            self._target(rel)
        changed = changed + [rel for rel in new if os.path.lexists(self.root / rel)]  # DVC overwrites it
        new = [rel for rel in new if rel not in changed]
        lines: list[dict[str, Any]] = [{"file": rel, "sha256": None, "restore": None} for rel in new]
        before = _index_entries(self.root, changed) if self.stage and changed else {}
        for rel in changed:
            path = self.root / rel
            restore = None
            if path.is_file():
                restore = cli.hash_object(rel, self.root)
            line: dict[str, Any] = {"file": rel, "sha256": None, "restore": restore}
            if self.stage:
                line["index"] = before.get(rel)
            lines.append(line)
        self._log(lines)
        yield
        done = [rel for rel in new + changed if (self.root / rel).is_file()]
        self._log([{"file": rel, "sha256": _sha256((self.root / rel).read_bytes())} for rel in done])
        self._stage(done)

    def remove(self, rels: list[str]) -> None:
        """Delete files of the store (a DVC pointer replaced by its sidecar, a ``.gitignore``
        left empty): each is kept first as a blob in git's object store and journaled with its
        index entry, so that a rollback (or the next run, after a kill) puts it back; the
        deletion is staged when the transaction stages."""
        present = [rel for rel in rels if self._target(rel).is_file() and not self._target(rel).is_symlink()]
        if not present:
            return
        before = _index_entries(self.root, present) if self.stage else {}
        lines: list[dict[str, Any]] = []
        for rel in present:
            restore = cli.hash_object(rel, self.root)
            line: dict[str, Any] = {"file": rel, "sha256": None, "restore": restore, "removed": True}
            if self.stage:
                line["index"] = before.get(rel)
            lines.append(line)
        self._log(lines)
        for rel in present:
            os.unlink(self.root / rel)
        self._stage(present)

    def _stage(self, rels: list[str]) -> None:
        """Mark ``rels`` to be staged: all at once, at the next commit or at the end (one
        rewrite of the index per commit, however many files and writes)."""
        if not self.stage:
            return
        known = set(self.staged)
        fresh = [rel for rel in rels if rel not in known]
        self.staged += fresh
        self._pending += fresh

    def _flush(self) -> None:
        """Stage what :meth:`_stage` marked (``git update-index``: literal paths, never pathspecs)."""
        if not self._pending:
            return
        # --remove: a file the run deleted (Transaction.remove) leaves the index too
        proc = cli.stage_paths(self._pending, self.root)
        if proc.returncode != 0:
            said = proc.stderr.decode(errors="replace").strip()
            raise refusal(f"git could not stage {self._pending[0]}: {said}", check="git")
        self._pending = []

    # --- committing -------------------------------------------------------------------

    def commit(
        self,
        message: list[str],
        *,
        include: list[str] | None = None,
        refused_hint: str = "nothing was written; fix what the hooks report",
        sign: bool | None = None,
    ) -> str:
        """Commit the files staged since the last commit and the user's staged files
        ``include``, on top of HEAD, through the hooks; returns the new commit's id.
        Refused (and, through :func:`transaction`, rolled back) when the hooks refuse.
        Signed (``git commit -S``) when the user's git signs with SSH (``gpg.format ssh``
        and ``user.signingkey``), or when ``sign``; ``sign=False`` never signs."""
        assert self.stage, "a commit needs a staging transaction"
        self._flush()
        paths = list(dict.fromkeys([*self.staged, *(include or [])]))
        base = cli.resolve("HEAD^{commit}", self.root)
        changes = {c.path: c for c in cli.staged_changes(self.root, head=base is not None)}
        entries = []
        deleted = []
        for rel in paths:
            change = changes.get(rel)
            if change is not None and change.status == "D" and not (self.root / rel).exists():
                deleted.append(rel)  # a deletion this run (or the user) staged
                continue
            if change is None or change.status == "D":
                raise refusal(f"{rel} is not staged", f"git add {rel}", check="git")
            entries.append((change.new_mode, change.new_blob, rel))
        self._log([{"commit": [list(e) for e in entries], "base": base}])
        assert self.journal is not None
        index_file = str(self.journal.with_name(f"eee-index-{os.getpid()}"))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(index_file)  # a dead run's (under the lock: one run at a time)
        env = {"GIT_INDEX_FILE": index_file}
        try:
            cli.read_tree(base, self.root, env)
            info = b"".join(f"{mode} {blob}\t".encode() + _nul([rel]) for mode, blob, rel in entries)
            cli.set_index_entries(info, self.root, env)
            if deleted:
                cli.remove_index_entries(deleted, self.root, env)
            if cli.resolve("HEAD^{commit}", self.root) != base:
                raise refusal("the branch moved while the commit was prepared", "run the command again")
            signed = cli.ssh_signing(self.root) if sign is None else sign
            proc = cli.commit(message, cwd=self.root, index_file=index_file, sign=signed)
        except cli.GitError as exc:
            raise refusal(f"git could not prepare the commit: {exc}", check="git") from None
        finally:
            for leftover in (index_file, index_file + ".lock"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)
        if proc.returncode != 0:
            output = (proc.stdout + proc.stderr).decode(errors="replace").strip()
            raise refusal("the commit was refused:\n" + output, refused_hint)
        head = cli.resolve("HEAD^{commit}", self.root)
        assert head is not None
        self.commits.append(head)
        self._drop_journal()  # committed: nothing of it is undone any more
        return head

    # --- ending -----------------------------------------------------------------------

    def rollback(self) -> list[str]:
        """Undo everything written since the last commit; returns what was done."""
        done = _undo(self.root, self.entries, self.stage)
        self._drop_journal()
        return done

    def close(self) -> None:
        """The run is over: what it wrote stays (staged, when the transaction stages)."""
        self._flush()
        self._drop_journal()


def _nul(rels: list[str]) -> bytes:
    return b"".join(rel.encode("utf-8", "surrogateescape") + b"\0" for rel in rels)


def _index_entries(root: Path, rels: list[str]) -> dict[str, str]:
    """``"mode blob"`` of each path's entry in the repository's index (absent: none)."""
    out = cli.index_entries_raw(rels, root)
    found = {}
    for item in out.split(b"\0"):
        meta, _, name = item.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[2] == b"0":
            found[name.decode("utf-8", "surrogateescape")] = f"{parts[0].decode()} {parts[1].decode()}"
    return found


def _head_entries(root: Path, rels: list[str]) -> dict[str, str]:
    """``"mode blob"`` of each path at HEAD (absent: not there)."""
    if not rels or not cli.has_commit("HEAD", root):
        return {}
    out = cli.head_entries_raw(rels, root)
    found = {}
    for item in out.split(b"\0"):
        meta, _, name = item.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob":
            found[name.decode("utf-8", "surrogateescape")] = f"{parts[0].decode()} {parts[2].decode()}"
    return found


def _undo(root: Path, entries: list[dict[str, Any]], stage: bool) -> list[str]:
    """Take back the files and folders ``entries`` name (see the module docstring); a file
    that no longer holds what was written is left as it is. Returns one line per file."""
    files: dict[str, dict[str, Any]] = {}
    folders: list[str] = []
    for entry in entries:
        if "folder" in entry:
            folders.append(entry["folder"])
        elif "file" in entry:
            known = files.setdefault(entry["file"], dict(entry))
            known["sha256"] = entry.get("sha256")  # the last line says what was written
            if "removed" in entry:
                known["removed"] = entry["removed"]
    done: list[str] = []
    index: list[str] = []
    for rel, entry in reversed(files.items()):
        try:
            path = confined(root, rel, WRITABLE)
        except Unconfined as exc:
            done.append(f"left: {rel}: {exc}")
            continue
        if not os.path.lexists(path):
            if entry.get("removed") and entry.get("restore"):  # a file the run deleted: put back
                with cli.BatchReader(root) as objects:
                    content = objects.blob(entry["restore"])
                if content is None:
                    done.append(f"left: {rel}: its content {entry['restore']} is not in git's object store")
                    continue
                make_folders(root, rel.rpartition("/")[0])
                write_new(path, content)
                done.append(f"undone: {rel} put back")
                if stage:
                    index.append(rel)
            continue
        if entry.get("removed"):
            done.append(f"left: {rel}: it was deleted by the run, and is there again")
            continue
        if not path.is_file():
            done.append(f"left: {rel} is not a regular file")
            continue
        if entry.get("sha256") is not None and _sha256(path.read_bytes()) != entry["sha256"]:
            done.append(f"left: {rel} was changed since it was written")
            continue
        restore = entry.get("restore")
        if restore is None:
            path.unlink()
            done.append(f"undone: {rel} removed")
        else:
            with cli.BatchReader(root) as objects:
                content = objects.blob(restore)
            if content is None:
                done.append(f"left: {rel}: its earlier content {restore} is not in git's object store")
                continue
            write_replacing(path, content)
            done.append(f"undone: {rel} put back as it was")
        if stage:
            index.append(rel)
    if index:  # each entry as it was: recorded, or (a new file) as HEAD has it
        at_head = _head_entries(root, [rel for rel in index if "index" not in files[rel]])
        was = {rel: files[rel]["index"] if "index" in files[rel] else at_head.get(rel) for rel in index}
        info = b"".join(f"{was[rel]}\t".encode() + _nul([rel]) for rel in index if was[rel])
        if info:
            cli.set_index_entries(info, root, check=False)
        gone = [rel for rel in index if not was[rel]]
        if gone:
            cli.remove_index_entries(gone, root, check=False)
    for folder in reversed(folders):
        try:
            confined(root, folder, WRITABLE).rmdir()
        except (OSError, Unconfined):
            pass  # not empty (someone else's files), or gone
    return done


# --- recovery ------------------------------------------------------------------------------


class BadJournal(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def read_journal(root: Path, path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The header and lines of the journal at ``path`` (None when there is none), each
    line checked (:class:`BadJournal` names the first that is not well formed). A last
    line without its line break is an append that a kill interrupted: it is left out (the
    files it names were not written yet)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BadJournal(0, f"cannot be read: {exc.strerror} (a symbolic link is never followed)") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(JOURNAL_MAX_BYTES + 1)
    except OSError as exc:
        raise BadJournal(0, f"cannot be read: {exc.strerror}") from None
    if len(data) > JOURNAL_MAX_BYTES:
        raise BadJournal(0, f"is larger than {JOURNAL_MAX_BYTES} bytes")
    lines = data.split(b"\n")
    lines.pop()  # after the last line break: empty, or an interrupted append
    if not lines:
        return {"journal": JOURNAL_VERSION, "stage": False}, []
    parsed: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        try:
            line = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise BadJournal(number, "is not a JSON object") from None
        if not isinstance(line, dict):
            raise BadJournal(number, "is not a JSON object")
        parsed.append(line)
    header = parsed[0]
    if (
        set(header) != {"journal", "stage"}
        or header["journal"] != JOURNAL_VERSION
        or not isinstance(header["stage"], bool)
    ):
        raise BadJournal(1, f'is not the header {{"journal": {JOURNAL_VERSION}, "stage": true|false}}')
    for number, line in enumerate(parsed[1:], start=2):
        problem = _line_problem(root, line)
        if problem:
            raise BadJournal(number, problem)
    return header, parsed[1:]


def _path_problem(root: Path, rel: object) -> str | None:
    try:
        confined(root, rel, WRITABLE)
    except Unconfined as exc:
        return f"names a path the tools never write ({exc})"
    return None


def _line_problem(root: Path, line: dict[str, Any]) -> str | None:
    """Why one journal line (after the header) is not well formed, or None."""
    keys = set(line)
    if keys == {"folder"}:
        return _path_problem(root, line["folder"])
    if "file" in keys:
        if not keys <= {"file", "sha256", "restore", "index", "removed"} or "sha256" not in keys:
            return "is not a file line (file, sha256[, restore, index, removed])"
        if "removed" in keys and (line["removed"] is not True or not line.get("restore")):
            return "has a removed that is not true with the content it restores"
        sha, restore, index = line["sha256"], line.get("restore"), line.get("index")
        if sha is not None and not (isinstance(sha, str) and _HEX64.fullmatch(sha)):
            return "has a sha256 that is not 64 hex digits"
        if restore is not None and not (isinstance(restore, str) and _OID.fullmatch(restore)):
            return "has a restore that is not a git object id"
        if index is not None and not _entry_ok(index):
            return "has an index entry that is not 'mode blob'"
        return _path_problem(root, line["file"])
    if keys == {"commit", "base"}:
        base, entries = line["base"], line["commit"]
        if base is not None and not (isinstance(base, str) and _OID.fullmatch(base)):
            return "has a base that is not a commit id"
        if not isinstance(entries, list):
            return "has a commit that is not a list"
        for item in entries:
            if not (isinstance(item, list) and len(item) == 3 and _entry_ok(f"{item[0]} {item[1]}")):
                return "has a commit entry that is not [mode, blob, path]"
            problem = _path_problem(root, item[2])
            if problem:
                return problem
        return None
    return f"is not a line of a journal (keys {sorted(keys)})"


def _entry_ok(value: object) -> bool:
    if not isinstance(value, str):
        return False
    mode, _, blob = value.partition(" ")
    return mode in _MODES and bool(_OID.fullmatch(blob))


def recover(root: Path) -> list[str]:
    """Finish or undo what a run killed during a transaction left (the journal): when the
    commit it was making happened, it is finished; otherwise every file it wrote is taken
    back. Returns one line per file saying what was done. A journal that is not well
    formed is left as it is: Refused, naming the journal and its line."""
    folder = git_folder(root)
    if folder is None:
        return []
    path = folder / JOURNAL
    try:
        read = read_journal(root, path)
    except BadJournal as exc:
        raise Refused(
            Finding(
                str(path),
                "$",
                f"the journal of an interrupted run {exc.message}; nothing of it was applied",
                f"look at what it names; when no run of the tools is going on, remove it (rm {path})",
                line=exc.line or None,
                check="journal",
            )
        ) from None
    if read is None:
        return []
    header, lines = read
    commits = [line for line in lines if "commit" in line]
    if commits and _committed(root, commits[-1]["commit"]):
        done = [f"finished: {rel} is committed" for _, _, rel in commits[-1]["commit"]]
    else:
        done = _undo(root, [line for line in lines if "commit" not in line], header["stage"])
    os.unlink(path)
    return done


def _committed(root: Path, entries: list[list[str]]) -> bool:
    """Whether HEAD holds every (mode, blob, path) of a commit the journal announced."""
    if not entries:
        return False
    found = cli.batch_check([f"HEAD:{rel}" for _, _, rel in entries], root)
    return all(found.get(f"HEAD:{rel}", ("",))[0] == blob for _, blob, rel in entries)
