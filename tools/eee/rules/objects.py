"""A DVC pointer's object is its own sidecar's (``pointer-object``), and can be checked and
fetched (``pointer-unverified``).

A pointer names its object by md5 only; the record beside it declares its sidecar's sha256.
For every pointer a commit adds, the object's bytes are looked for where the check runs
(:class:`eee.dvc.objects.ObjectFinder`: copies the caller knows of, the work tree, DVC's
cache, the remote) and hashed: a copy with the pointer's md5 must have the record's
checksum, else the pointer names another sidecar's object (``pointer-object``, never
flaggable). When no copy is found the pointer is unverified (``pointer-unverified``, on the
record, at ``$.detailed_evaluation_results``): refused, unless a maintainer accepts it
unverified with a flag of that rule, which readers show.

Where each check runs, and what it has: the gate (the work tree, the cache, then the
remote); the pre-push hook, the server gate and ``eee audit --remote-objects`` (the remote,
where the object must be for others to pull it: ``publish``); a plain ``eee audit`` in a
fresh clone has neither work tree copy nor cache, so a pointer added in history is judged by
what is there (a copy it finds is checked, none is no finding), and the sidecar committed
to git at the audited head (after its ``sidecar-to-git`` replacement) is such a copy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from eee.dvc.objects import Chunks, ObjectFinder
from eee.dvc.pointer import Pointer
from eee.reporting.findings import Finding
from eee.reporting.shown import command
from eee.rules.pointer import read_pointer
from eee.rules.sidecar import hash_algorithm
from eee.store.limits import RECORD_MAX_BYTES
from eee.store.paths import POINTER_SUFFIX, record_path_for_sidecar
from eee.store.strictjson import JSONProblem, loads
from eee.store.tree import Tree, Unreadable

WHERE = "$.detailed_evaluation_results"
_MD5 = re.compile(
    r"[0-9a-f]{32}"
)  # an object's name: nothing else ever reaches a path  # where a pointer-unverified finding (and its flag) sits on the record


def _record(tree: Tree, rel: str) -> dict[str, Any] | None:
    try:
        doc = loads(tree.read(rel, RECORD_MAX_BYTES))
    except (Unreadable, JSONProblem):
        return None
    return doc if isinstance(doc, dict) else None


def flag_hint(uuid: str, cwd: Any = None) -> str:
    """How a maintainer accepts a pointer unverified (the exact command)."""
    from eee.rules.settle import flag_command  # lazy: the settle paths only for a finding

    return flag_command(uuid, "pointer-unverified", WHERE, "the object is lost; accepted unverified", cwd=cwd)


def _unverified(file: str, sidecar: str, uuid: str, why: str) -> Finding:
    return Finding(
        file,
        WHERE,
        why,
        f"put the sidecar beside its pointer (or in DVC's cache) and push it: `{command('samples', 'push', sidecar)}`; "
        f"if it is lost for good, a maintainer accepts the pointer unverified: `{flag_hint(uuid)}`",
        check="pointer-unverified",
    )


def object_findings(
    tree: Tree,
    pointers: Iterable[str],
    finder: ObjectFinder,
    where: Callable[[str], str] = lambda p: p,
    known: Callable[[str], list[tuple[str, Chunks]]] = lambda sidecar: [],
    publish: bool = False,
) -> list[Finding]:
    """The object checks of the DVC pointers ``pointers`` of ``tree`` (see the module
    docstring). ``known(sidecar)``: copies the caller holds (a copy committed to git at the
    head serves in place of the remote); ``publish``: the object must be on the store's DVC
    remote as well (the pre-push hook, the server gate). A pointer that is not one, or whose
    record is absent or declares no sidecar, is left to the pointer's own rules."""
    out: list[Finding] = []
    on_remote: list[tuple[str, str, str, str]] = []  # (md5, record file, sidecar, uuid)
    for rel in pointers:
        pointer = read_pointer(tree, rel)
        if not isinstance(pointer, Pointer) or not isinstance(pointer.md5, str) or not _MD5.fullmatch(pointer.md5):
            continue  # not a pointer whose object can be named: its own rules say why
        sidecar = rel[: -len(POINTER_SUFFIX)]
        record = record_path_for_sidecar(sidecar)
        doc = _record(tree, record)
        der = doc.get("detailed_evaluation_results") if doc is not None else None
        if not isinstance(der, dict):
            continue
        uuid = record.rsplit("/", 1)[-1][: -len(".json")]
        if pointer.hash != "md5":  # DVC 2's md5 of text with its line ends changed: not the file's bytes
            out.append(
                _unverified(
                    where(record),
                    sidecar,
                    uuid,
                    f"its DVC pointer {rel.rsplit('/', 1)[-1]} is not a DVC 3 pointer (hash: md5): its object "
                    "cannot be checked against the record",
                )
            )
            continue
        alg = hash_algorithm(der)
        checksum = der.get("checksum")
        copies = known(sidecar)
        lookup = finder.find(sidecar, pointer.md5, alg, copies)
        if lookup.copy is None:
            out.append(
                _unverified(
                    where(record),
                    sidecar,
                    uuid,
                    f"the object of its DVC pointer {rel.rsplit('/', 1)[-1]} (md5 {pointer.md5}) could not be checked: "
                    + "; ".join(lookup.asked),
                )
            )
            continue
        copy = lookup.copy
        if isinstance(checksum, str) and copy.digest is not None and copy.digest != checksum.lower():
            out.append(
                Finding(
                    where(rel),
                    "$.outs[0].md5",
                    f"the pointer names an object that is not its record's sidecar: the object (in {copy.where}) "
                    f"has the {alg} {copy.digest}, the record declares {checksum}",
                    "a pointer tracks its own record's sidecar: remove it and add the record's sidecar with "
                    f"`{command('samples', 'add', sidecar)}`",
                    check="pointer-object",
                )
            )
            continue
        if publish and not copies:
            on_remote.append((pointer.md5, where(record), sidecar, uuid))
    if on_remote:
        there, problem = finder.on_remote([md5 for md5, *_ in on_remote])
        label = finder.remote_label()
        for md5, file, sidecar, uuid in on_remote:
            if problem is not None:
                why = f"{label} could not be asked whether it holds the object (md5 {md5}) of its pointer: {problem}"
            elif not there.get(md5):
                why = f"the object (md5 {md5}) of its DVC pointer is not on {label}: a clone could not fetch it"
            else:
                continue
            out.append(_unverified(file, sidecar, uuid, why))
    return out
