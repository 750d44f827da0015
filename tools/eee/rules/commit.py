"""The store's commit rules, shared by the pre-commit hooks and ``eee audit``.

Each rule is a pure function of a list of changes (and, where needed, a way to look up
names in the tree), so the hooks apply it to what is staged and the audit to each commit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

from eee.reporting.findings import ERROR, Finding
from eee.reporting.shown import command
from eee.rules.layout import CLASH_HINT, case_clash
from eee.rules.record import folder_findings
from eee.store.limits import size_text
from eee.store.paths import (
    DATA_DIR,
    DVC_POINTER,
    EVENT,
    EVENTS_DIR,
    EXPERIMENTS_DIR,
    IMPORTS_DIR,
    POINTER_SUFFIX,
    RECORD,
    SIDECAR,
    clash_text,
    classify,
    file_kind,
    layout_problems,
    name_key,
    record_path_for_sidecar,
)
from eee.store.settings import SETTINGS_PATH, Settings, SettingsProblem, git_keeps

if TYPE_CHECKING:
    from eee.git.cli import Change
    from eee.store.tree import Tree

SCHEMAS_DIR = "schemas"
REGISTRY = "schemas/registry.json"


def protected_kind(path: str, released: set[str]) -> str | None:
    """What an accepted path is, if it may never change after it is committed."""
    kind = file_kind(path)
    if path.startswith(DATA_DIR + "/"):
        return {DVC_POINTER: "sidecar pointer", RECORD: "record", SIDECAR: "sidecar"}.get(kind)
    if kind == EVENT or path.startswith(EVENTS_DIR + "/"):
        return "governance event"
    if path.startswith(IMPORTS_DIR + "/"):
        return "import manifest"
    if path.startswith(EXPERIMENTS_DIR + "/"):
        return "experiment card"
    if path.startswith(SCHEMAS_DIR + "/"):
        parts = path.split("/")
        if len(parts) >= 3 and parts[1] in released:
            return "released schema file"
    return None


def released_versions(registry_bytes: bytes | None) -> dict[str, Any]:
    """Released folders of ``schemas/`` and their pins, from a registry file.

    Keys are folder names: every EEE version, plus the folders of other pinned files
    (``governance``). Empty when the registry is absent or unreadable.
    """
    if not registry_bytes:
        return {}
    try:
        doc = json.loads(registry_bytes)
        versions = {str(k): v for k, v in doc.get("versions", {}).items()}
        versions.update({str(k): v for k, v in doc.get("pinned", {}).items()})
        return versions
    except (ValueError, AttributeError):
        return {}


_INSTEAD = {
    "record": "records never change: anyone may contest this one (tools/dispute <uuid> --reason ... --reference URL); "
    "a maintainer (or, for a record they added signed, its author) supersedes it by a corrected record "
    "(tools/supersede <uuid> <new-record.json> --reason ...), and a maintainer retracts it (tools/retract <uuid> --reason ...)",
    "sidecar pointer": "a sidecar belongs to its record forever: add a corrected record with its own sidecar and supersede "
    "the old one (the one change a pointer allows is its replacement by the very file it tracks, in git: "
    "`tools/samples add <the sidecar>` makes it: `sidecar-to-git`)",
    "sidecar": "a sidecar belongs to its record forever: add a corrected record with its own sidecar and supersede the old one",
    "governance event": "events are never edited or deleted: add a new event (for example tools/reinstate or tools/resolve)",
    "import manifest": "an import's manifest is its provenance and never changes: import again (a new manifest) instead",
    "experiment card": "a published experiment card never changes, so that it proves what was declared before the "
    "results: amend it with a new card that names it and says why (`eee experiment new NEW-ID --amends OLD-ID "
    "--reason ... --commit`); the reports of both show the amendment",
    "released schema file": "released schemas never change: release a new version in its own folder (see governance/schema-change-checklist.md)",
}


FREE = ""  # what a judge of publication says of a path that is not published: it may change


def immutability_findings(
    changes: list[Change],
    released: set[str],
    where: Callable[[str], str] = lambda p: p,
    judge: Callable[[str], str | None] | None = None,
    replaced: Collection[str] = (),
) -> list[Finding]:
    """Modification, deletion, rename, type change or case-only rename of an accepted path.

    Immutability starts at publication (:mod:`eee.git.published`): ``judge(path)`` says what
    the changed path was before the change: None when it is accepted (published; every
    path without a judge), :data:`FREE` when it was added by the very commit being
    rewritten and never published (an amend: no finding), or the id of the unpublished
    commit that added it (a finding whose hint folds the change into that commit).
    ``replaced``: the pointers whose deletion is a ``sidecar-to-git`` replacement
    (:func:`sidecar_replacements`, which refuses one that does not hold): no finding here."""
    out: list[Finding] = []
    added = {c.path: c for c in changes if c.status == "A"}
    added_by_fold = {name_key(p): p for p in added}
    added_by_blob: dict[str, str] = {c.new_blob: c.path for c in added.values()}
    for c in changes:
        kind = protected_kind(c.path, released)
        if kind is None or c.status not in ("M", "T", "D") or (c.status == "D" and c.path in replaced):
            continue
        origin = judge(c.path) if judge is not None else None
        if origin == FREE:
            continue
        instead = _INSTEAD[kind] if origin is None else _unpublished_hint(origin)
        what = f"an accepted {kind}" if origin is None else f"a {kind} added in {origin[:10]}, not published yet,"
        if c.status == "M":
            verb = "changes the mode of" if c.old_blob == c.new_blob else "modifies"
            out.append(Finding(where(c.path), "$", f"{verb} {what}".rstrip(","), instead, check="immutable"))
        elif c.status == "T":
            becomes = "a symbolic link" if c.is_symlink_now else "another file type"
            out.append(Finding(where(c.path), "$", f"turns {what} into {becomes}", instead, check="immutable"))
        else:
            twin = added_by_fold.get(name_key(c.path))
            if twin and twin != c.path:
                message = f"case-only rename of {what} to {twin}"
            elif c.old_blob in added_by_blob:
                message = f"renames {what} to {added_by_blob[c.old_blob]}"
            else:
                message = f"deletes {what}".rstrip(",")
            out.append(Finding(where(c.path), "$", message, instead, check="immutable"))
    return out


def _unpublished_hint(commit: str) -> str:
    return (
        f"published history never shows a change of a record, pointer, event or schema file: make the change in "
        f"{commit[:10]} itself while it is unpublished (`git rebase -i {commit[:10]}^`, mark it `edit`, change "
        "it, `git commit --amend`, `git rebase --continue`), or undo this change"
    )


def registry_findings(old: bytes | None, new: bytes | None, where: str = REGISTRY) -> list[Finding]:
    """Released versions may be added to the registry, never changed or removed."""
    before, after = released_versions(old), released_versions(new)
    out = []
    for version, pins in before.items():
        if version not in after:
            out.append(
                Finding(
                    where,
                    "$.versions",
                    f"removes released version {version} from the registry",
                    _INSTEAD["released schema file"],
                    check="immutable",
                )
            )
        elif after[version] != pins:
            out.append(
                Finding(
                    where,
                    f'$.versions["{version}"]',
                    f"changes the pins of released version {version}",
                    _INSTEAD["released schema file"],
                    check="immutable",
                )
            )
    return out


def sample_findings(
    paths: Iterable[str],
    size_of: Callable[[str], int | None],
    holds: Callable[[str], bool],
    settings: Settings,
    where: Callable[[str], str] = lambda p: p,
) -> list[Finding]:
    """Where a commit keeps its sidecars: one in git is at most the store's
    ``sidecar_git_max_bytes`` (``settings``: the commit before the one judged), and one
    sidecar is never both in git and tracked by a DVC pointer.

    ``paths``: what the commit adds or changes; ``size_of(path)``: the size of a file git
    holds in the commit (None: not in git); ``holds(path)``: whether git holds ``path`` in
    the commit. A pointer for a sidecar below the threshold is allowed: stock ``dvc add``
    writes them, the pre-push hook sees that its object is on the remote, and a maintainer
    may replace it by the file (``sidecar-to-git``)."""
    out: list[Finding] = []
    named = set()
    limit = settings.sidecar_git_max_bytes
    for p in paths:
        if not p.startswith(DATA_DIR + "/"):
            continue
        kind = file_kind(p)
        if kind == SIDECAR:
            named.add(p)
            size = size_of(p)
            if size is not None and not git_keeps(size, settings):
                out.append(
                    Finding(
                        where(p),
                        "$",
                        f"a sidecar of {_bytes(size)} is committed to git; the store keeps sidecars above "
                        f"{_bytes(limit)} (sidecar_git_max_bytes: {limit}) in DVC",
                        f"`git rm --cached {p}`, then `{command('samples', 'add', p)}`: it puts the sidecar in "
                        f"DVC and stages its pointer {p.rsplit('/', 1)[-1]}{POINTER_SUFFIX}",
                        check="samples",
                    )
                )
            if size is not None and holds(p + POINTER_SUFFIX):
                out.append(_both(where(p), p))
        elif kind == DVC_POINTER:
            sidecar = p[: -len(POINTER_SUFFIX)]
            if sidecar not in named and holds(sidecar) and size_of(sidecar) is not None:
                out.append(_both(where(p), sidecar))
    return out


def settings_finding(exc: SettingsProblem, rev: str) -> Finding:
    """The store's settings file at ``rev`` cannot be used (``settings``): what the rules that
    read it cannot judge."""
    return Finding(
        SETTINGS_PATH,
        exc.pointer,
        f"the store's settings at {rev[:10]} cannot be used: {exc.message}",
        exc.hint or "fix the file (a maintainer's change, in a commit of its own)",
        check="settings",
    )


def _bytes(n: int) -> str:
    return size_text(n) if n < 1024 else f"{size_text(n)} ({n:,} bytes)"


def _both(file: str, sidecar: str) -> Finding:
    return Finding(
        file,
        "$",
        f"the sidecar is in git and tracked by its DVC pointer {sidecar.rsplit('/', 1)[-1]}{POINTER_SUFFIX} at once",
        f"one sidecar, one place: `{command('samples', 'add', sidecar)}` replaces the pointer by the file when "
        f"the store keeps it in git (and refuses otherwise), or `git rm --cached {sidecar}` leaves it to DVC",
        check="samples",
    )


def sidecar_replacements(
    changes: list[Change], before: Tree, after: Tree, where: Callable[[str], str] = lambda p: p
) -> tuple[set[str], list[Finding]]:
    """The ``sidecar-to-git`` replacements of a commit: an accepted DVC pointer
    ``<uuid>_samples.jsonl.dvc`` deleted (``before``: the tree it was in) while the sidecar
    it tracks is added beside it in git (``after``: the commit's tree, with the record).
    Returns the pointers judged as replacements (immutability leaves their deletion to this
    rule) and a ``sidecar-to-git`` finding for each whose replacement does not hold: the
    file's md5 is the pointer's, and its digest under the record's ``hash_algorithm`` the
    record's checksum."""
    from eee.dvc.objects import digests
    from eee.dvc.pointer import Pointer
    from eee.rules.pointer import read_pointer
    from eee.rules.sidecar import hash_algorithm
    from eee.store.limits import RECORD_MAX_BYTES, SIDECAR_MAX_BYTES
    from eee.store.limits import Unreadable as TooBig
    from eee.store.strictjson import JSONProblem, loads
    from eee.store.tree import Unreadable

    added = {c.path for c in changes if c.status == "A"}
    judged: set[str] = set()
    out: list[Finding] = []
    for c in changes:
        if c.status != "D" or not c.path.startswith(DATA_DIR + "/") or file_kind(c.path) != DVC_POINTER:
            continue
        sidecar = c.path[: -len(POINTER_SUFFIX)]
        if sidecar not in added:
            continue  # a pointer deleted without its file: immutability says so
        judged.add(c.path)

        def refused(why: str, sidecar: str = sidecar) -> None:
            out.append(
                Finding(
                    where(sidecar),
                    "$",
                    f"replaces its DVC pointer by a file that is not the one it tracks: {why}",
                    f"commit the sidecar the pointer tracks: restore it (`{command('samples', 'pull', sidecar)}`, "
                    f"or regenerate it from its log with `{command('convert')} ...`), then "
                    f"`{command('samples', 'add', sidecar)}` (it checks both hashes)",
                    check="sidecar-to-git",
                )
            )

        pointer = read_pointer(before, c.path)
        if not isinstance(pointer, Pointer) or not pointer.md5:
            refused("the pointer it replaces cannot be read")
            continue
        record = record_path_for_sidecar(sidecar)
        try:
            doc = loads(after.read(record, RECORD_MAX_BYTES))
        except (Unreadable, JSONProblem):
            doc = None
        der = doc.get("detailed_evaluation_results") if isinstance(doc, dict) else None
        checksum = der.get("checksum") if isinstance(der, dict) else None
        alg = hash_algorithm(der)
        if not isinstance(checksum, str) or alg is None:
            refused(f"{record.rsplit('/', 1)[-1]} declares no checksum to hold the file to")
            continue
        try:
            md5, digest, _ = digests(after.chunks(sidecar, SIDECAR_MAX_BYTES), alg)
        except (Unreadable, TooBig) as exc:
            refused(f"the file cannot be read ({exc})")
            continue
        if md5 != pointer.md5:
            refused(f"its md5 is {md5}, the pointer's {pointer.md5}")
        elif digest != checksum.lower():
            refused(f"its {alg} is {digest}, the record's checksum {checksum}")
    return judged, out


def naming_findings(
    path: str,
    doc: dict[str, Any] | None,
    siblings: Any,
    where: Callable[[str], str] = lambda p: p,
    spellings: Any = None,
) -> list[Finding]:
    """Layout, uuid, portable names, case-only collisions, folders from model_info.id (or
    spelt by a convention of the identity registry ``spellings``). ``siblings``: a tree
    (which keeps each folder's case index for the next file) or a function listing a
    folder's names (:func:`eee.rules.layout.case_clash`)."""
    file = where(path)
    out = [Finding(file, "$", msg, hint, check="layout") for msg, hint in layout_problems(path)]
    clash = case_clash(siblings, path)
    if clash:
        folder, _, name = clash[1].rpartition("/")
        out.append(
            Finding(
                file,
                "$",
                f"{clash[0]!r} {clash_text(clash[0].rsplit('/', 1)[-1], name)} {f'{folder}/{name}'!r} in the tree",
                CLASH_HINT,
                check="layout",
            )
        )
    sp = classify(path)
    if doc is not None and sp.kind == "record":
        out += folder_findings(doc, file, sp, severity=ERROR, spellings=spellings)
    return out
