"""The store's commit rules, shared by the pre-commit hooks and ``eee audit``.

Each rule is a pure function of a list of changes (and, where needed, a way to look up
names in the tree), so the hooks apply it to what is staged and the audit to each commit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from eee.reporting.findings import ERROR, Finding
from eee.reporting.shown import command
from eee.rules.layout import CLASH_HINT, case_clash
from eee.rules.record import folder_findings
from eee.store.paths import (
    DATA_DIR,
    DVC_POINTER,
    EVENT,
    EVENTS_DIR,
    IMPORTS_DIR,
    RECORD,
    SIDECAR,
    clash_text,
    classify,
    file_kind,
    layout_problems,
    name_key,
)

if TYPE_CHECKING:
    from eee.git.cli import Change

SCHEMAS_DIR = "schemas"
REGISTRY = "schemas/registry.json"


def protected_kind(path: str, released: set[str]) -> str | None:
    """What an accepted path is, if it may never change after it is committed."""
    kind = file_kind(path)
    if path.startswith(DATA_DIR + "/"):
        return {DVC_POINTER: "sidecar pointer", RECORD: "record"}.get(kind)
    if kind == EVENT or path.startswith(EVENTS_DIR + "/"):
        return "governance event"
    if path.startswith(IMPORTS_DIR + "/"):
        return "import manifest"
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
    "record": "records never change: add a corrected record and supersede this one "
    "(tools/supersede <uuid> <new-record.json> --reason ...), or retract it (tools/retract <uuid> --reason ...)",
    "sidecar pointer": "a sidecar belongs to its record forever: add a corrected record with its own sidecar and supersede the old one",
    "governance event": "events are never edited or deleted: add a new event (for example tools/reinstate or tools/resolve)",
    "import manifest": "an import's manifest is its provenance and never changes: import again (a new manifest) instead",
    "released schema file": "released schemas never change: release a new version in its own folder (see governance/schema-change-checklist.md)",
}


FREE = ""  # what a judge of publication says of a path that is not published: it may change


def immutability_findings(
    changes: list[Change],
    released: set[str],
    where: Callable[[str], str] = lambda p: p,
    judge: Callable[[str], str | None] | None = None,
) -> list[Finding]:
    """Modification, deletion, rename, type change or case-only rename of an accepted path.

    Immutability starts at publication (:mod:`eee.git.published`): ``judge(path)`` says what
    the changed path was before the change: None when it is accepted (published; every
    path without a judge), :data:`FREE` when it was added by the very commit being
    rewritten and never published (an amend: no finding), or the id of the unpublished
    commit that added it (a finding whose hint folds the change into that commit)."""
    out: list[Finding] = []
    added = {c.path: c for c in changes if c.status == "A"}
    added_by_fold = {name_key(p): p for p in added}
    added_by_blob: dict[str, str] = {c.new_blob: c.path for c in added.values()}
    for c in changes:
        kind = protected_kind(c.path, released)
        if kind is None or c.status not in ("M", "T", "D"):
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


def sample_findings(paths: Iterable[str], where: Callable[[str], str] = lambda p: p) -> list[Finding]:
    """A sidecar itself must never be committed to git, only its DVC pointer."""
    return [
        Finding(
            where(p),
            "$",
            "a per-sample sidecar must not be committed to git",
            f"keep it in DVC: `git rm --cached {p}`, then `{command('samples', 'add', p)}` and commit "
            f"{p.rsplit('/', 1)[-1]}.dvc",
            check="samples",
        )
        for p in paths
        if p.startswith(DATA_DIR + "/") and file_kind(p) == SIDECAR
    ]


def naming_findings(
    path: str,
    doc: dict[str, Any] | None,
    siblings: Callable[[str], Iterable[str]],
    where: Callable[[str], str] = lambda p: p,
    spellings: Any = None,
) -> list[Finding]:
    """Layout, uuid, portable names, case-only collisions, folders from model_info.id (or
    spelt by a convention of the identity registry ``spellings``)."""
    file = where(path)
    out = [Finding(file, "$", msg, hint, check="layout") for msg, hint in layout_problems(path)]
    clash = case_clash(siblings, path)
    if clash:
        folder, _, name = clash[1].rpartition("/")
        out.append(
            Finding(
                file,
                "$",
                f"{clash[0]!r} {clash_text(clash[0].rsplit('/', 1)[-1], name)} {folder}/{name!r} in the tree",
                CLASH_HINT,
                check="layout",
            )
        )
    sp = classify(path)
    if doc is not None and sp.kind == "record":
        out += folder_findings(doc, file, sp, severity=ERROR, spellings=spellings)
    return out
