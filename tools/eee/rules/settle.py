"""How a finding on a committed record is settled, and when the ledger has settled it.

Records never change once committed, so a hint that says "rename the field" or "place the
record under ..." helps only before the commit (the gate's hints say that). Once a record
is committed, a warning (and a finding of a rule a flag may accept) is settled by an action
beside the record, each one a command of the governance tools:

- a **flag** (a maintainer's): accepts exactly that finding of that record's bytes
  (:mod:`eee.rules.flags`);
- a **supersession** by a corrected copy, a **retraction**, a **duplicate mark**: the record
  no longer counts (it is not active), so its warnings are settled;
- for a pair of duplicates, either side no longer counting, or the pair linked by the
  ledger (one version chain, a duplicate mark: :mod:`eee.rules.duplicates`);
- a flag that accepts nothing (``flag-unmatched``) is settled by its resolution.

Whether a finding is settled is judged against the ledger at the head (the audited end, or
the store as it is), never at the commit that added the record: a warning settled later is
settled for good. :func:`committed_hint` writes the hint for a finding on a committed record:
the exact command, uuids and JSON path filled in, runnable as printed
(:mod:`eee.reporting.shown`), saying when the action is a maintainer's.
:func:`unsettled` leaves out what the ledger settled.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from eee.reporting.findings import WARNING, Finding
from eee.reporting.shown import command
from eee.rules.registry import BY_ID, FLAGGABLE
from eee.store.paths import (
    DATA_DIR,
    EVENT_SUFFIX,
    RECORD_SUFFIX,
    SIDECAR_SUFFIX,
    UUID4_RE,
    record_path_for_sidecar,
    sidecar_path_for,
)

Where = str | Path | None  # the folder a hint's command runs from (default: the current one)

# the benchmark rule's message names the folder the record belongs in (eee.rules.record)
_BELONGS = re.compile(r"it probably belongs in data/(?P<folder>[a-z0-9._-]+)/$")


# --- the commands ---------------------------------------------------------------------------


def _action(name: str, *args: str | Path, cwd: Where = None) -> str:
    """A governance action as a hint prints it: committed through the hooks (``--commit``),
    so that once it has run the ledger at the head holds it."""
    return command(name, *args, "--commit", cwd=cwd)


def flag_command(uuid: str, rule: str, path: str, reason: str, cwd: Where = None) -> str:
    return _action("flag", uuid, "--rule", rule, "--json-path", path, "--reason", reason, cwd=cwd)


def supersede_command(
    uuid: str, replacement: str | Path, reason: str, *, benchmark: str | None = None, cwd: Where = None
) -> str:
    args: list[str | Path] = [uuid, replacement]
    if benchmark is not None:
        args += ["--benchmark", benchmark]
    return _action("supersede", *args, "--reason", reason, cwd=cwd)


def mark_duplicate_command(uuid: str, of: str, reason: str, cwd: Where = None) -> str:
    return _action("mark-duplicate", uuid, "--of", of, "--reason", reason, cwd=cwd)


def retract_command(uuid: str, reason: str, cwd: Where = None) -> str:
    return _action("retract", uuid, "--reason", reason, cwd=cwd)


def resolve_flag_command(uuid: str, event: str, cwd: Where = None) -> str:
    """The resolution that closes the flag event ``event`` of record ``uuid`` (the record stays)."""
    reason = "the flag accepts no finding of the record"
    return _action("resolve", uuid, "--event", event, "--outcome", "upheld", "--reason", reason, cwd=cwd)


# --- the hint for a committed record ----------------------------------------------------------


def record_uuid(rel: str) -> str | None:
    """The uuid of the record a repository path names: the record itself, or its sidecar."""
    name = rel.rsplit("/", 1)[-1]
    for suffix in (SIDECAR_SUFFIX, RECORD_SUFFIX):
        if name.endswith(suffix):
            stem = name[: -len(suffix)]
            return stem if UUID4_RE.match(stem) else None
    return None


def record_rel(rel: str) -> str:
    """The record a repository path is about: itself, or the record of a sidecar."""
    return record_path_for_sidecar(rel) if rel.endswith(SIDECAR_SUFFIX) else rel


def committed_hint(finding: Finding, rel: str, root: Path | None = None) -> str | None:
    """The hint for ``finding`` on the committed file ``rel`` (a record, or its sidecar): an
    action that immutability allows, as the exact command, runnable from the current folder
    (``root``: the store, so that the record's path is shown from there); None when the
    finding's own hint holds for a committed record too."""
    rule = finding.check
    uuid = record_uuid(rel)
    if uuid is None or not rel.startswith(DATA_DIR + "/") or rule == "duplicates":
        return None  # a duplicate's hint names the pair: eee.rules.duplicates writes it
    path = Path(root) / record_rel(rel) if root is not None else Path(record_rel(rel))
    first = "records never change once committed"
    if rule == "benchmark":
        found = _BELONGS.search(finding.message)
        if found is None:
            return None
        folder = found.group("folder")
        return (
            f"{first}: a maintainer (or its author) supersedes it with a copy under data/{folder}/: "
            f"`{supersede_command(uuid, path, f'placed under data/{folder}/', benchmark=folder)}`; or a maintainer "
            f"accepts the folder: `{flag_command(uuid, rule, finding.pointer, _accepted(rule, finding.pointer))}`"
        )
    if rule == "identity":
        said = re.findall(r"`([^`]*identity (?:alias|canonical) [^`]*)`", finding.hint or "")
        if not said:
            return None
        other = f"; or it is another one: `{said[1]}`" if len(said) > 1 else ""
        return (
            f"{first}: a maintainer settles the spelling in the identity registry (the records now under it): "
            f"`{said[0]}`{other}; or accepts this record as it is: "
            f"`{flag_command(uuid, rule, finding.pointer, _accepted(rule, finding.pointer))}`"
        )
    if rule == "naming" and "has no developer part" not in finding.message:
        return (
            f"{first}: a maintainer (or its author) supersedes it with a copy placed in the folders of its "
            f"model_info.id: `{supersede_command(uuid, path, 'placed in the folders of its model_info.id')}`; "
            f"or a maintainer accepts it as it is: "
            f"`{flag_command(uuid, rule, finding.pointer, _accepted(rule, finding.pointer))}`"
        )
    if rule == "sidecar" and finding.severity == WARNING and "declares no checksum" in finding.message:
        sidecar = path.with_name(Path(sidecar_path_for(str(path))).name)
        reason = "declare the sidecar's checksum"
        return (
            f"{first}: a maintainer (or its author) supersedes it with a copy that declares the sidecar's "
            f"checksum: `{_action('supersede', uuid, path, '--sidecar', sidecar, '--reason', reason)}`"
        )
    if rule == "pointer-unverified":
        sidecar = path.with_name(Path(sidecar_path_for(str(path))).name)
        return (
            f"push the object from a clone that has it (`{command('samples', 'push', sidecar)}`); if it is lost "
            "for good, a maintainer accepts the pointer unverified, which readers show: "
            f"`{flag_command(uuid, rule, finding.pointer, 'the object is lost; accepted unverified')}`"
        )
    if rule in FLAGGABLE:
        return (
            f"{first}: a maintainer accepts it as it is: "
            f"`{flag_command(uuid, rule, finding.pointer, _accepted(rule, finding.pointer))}`; or it is superseded "
            f"by a corrected copy: `{supersede_command(uuid, 'corrected.json', 'corrected: ' + BY_ID[rule].summary)}` "
            "(a maintainer's, unless you wrote it)"
        )
    return None


def _accepted(rule: str, path: str) -> str:
    return f"accepted as committed: [{rule}] at {path}"


def with_committed_hints(
    findings: Iterable[Finding], rel_of: Callable[[Finding], str | None], root: Path | None = None
) -> list[Finding]:
    """``findings`` with the hint of each one on a committed record replaced by
    :func:`committed_hint` (``rel_of``: the repository path of a finding's file when it is
    committed, else None)."""
    out = list(findings)
    for f in out:
        if f.check not in FLAGGABLE and not (f.check == "sidecar" and f.severity == WARNING):
            continue
        rel = rel_of(f)
        if rel is not None:
            hint = committed_hint(f, rel, root)
            if hint is not None:
                f.hint = hint
    return out


# --- what the ledger settled ------------------------------------------------------------------


def counts(state: Any) -> bool:
    """Whether a record (its :class:`eee.governance.status.RecordState`) still counts: not
    retracted, superseded or marked a duplicate (its lifecycle is active)."""
    return bool(state.stands)


def settles_by_status(finding: Finding) -> bool:
    """Whether a record that no longer counts settles ``finding``: a warning, or a finding
    of a rule the registry declares a warning (the gate's naming error included)."""
    rule = BY_ID.get(finding.check)
    return finding.severity == WARNING or (rule is not None and rule.severity == WARNING)


class Settled:
    """What one ledger (the head's) settles (see the module docstring)."""

    def __init__(self, ledger: Any, names: Any = None) -> None:
        self.ledger = ledger
        self.names = names  # the tree at the head, whose identity registry judges `identity` findings
        self._flags: dict[str, tuple[str, bool]] | None = None

    def record_counts(self, uuid: str) -> bool:
        return counts(self.ledger.state(uuid))

    def flag_event(self, event_id: str) -> tuple[str, bool] | None:
        """(record, open) of the flag event ``event_id``, or None when the ledger applied none."""
        if self._flags is None:
            self._flags = {}
            for uuid, state in self.ledger.states.items():
                open_ids = {e.get("id") for e in state.open_flags}
                for event in state.flags:
                    if isinstance(event.get("id"), str):
                        self._flags[event["id"]] = (uuid, event["id"] in open_ids)
        return self._flags.get(event_id)

    def settles(self, finding: Finding, rel: str) -> bool:
        """Whether the ledger settles ``finding`` on the file ``rel`` (a repository path)."""
        if finding.check == "flag-unmatched":
            name = rel.rsplit("/", 1)[-1]
            found = self.flag_event(name[: -len(EVENT_SUFFIX)]) if name.endswith(EVENT_SUFFIX) else None
            return found is not None and (not found[1] or not self.record_counts(found[0]))
        if not settles_by_status(finding):
            return False
        uuid = record_uuid(rel) if rel.startswith(DATA_DIR + "/") else None
        if uuid is not None and not self.record_counts(uuid):
            return True
        return finding.check == "identity" and self.names is not None and self._named_at_head(finding, rel)

    def _named_at_head(self, finding: Finding, rel: str) -> bool:
        """Whether the identity registry at the head settles an ``identity`` finding: the
        record, judged there (an alias made or settled since, a spelling declared), has no
        such finding any more."""
        from eee.rules.identity import record_findings
        from eee.store.jsonlite import tree_object
        from eee.store.paths import classify

        doc = tree_object(self.names, rel)
        if doc is None:
            return False
        said = finding.message.split(" ", 2)[:2]  # "<kind> '<spelling>'"
        now = record_findings(doc, rel, classify(rel), self.names)
        return not any(f.pointer == finding.pointer and f.message.split(" ", 2)[:2] == said for f in now)


def unsettled(findings: Iterable[Finding], settled: Settled, rel_of: Callable[[Finding], str | None]) -> list[Finding]:
    """``findings`` less those the ledger settled (``rel_of``: a finding's repository path)."""
    out = []
    for f in findings:
        rel = rel_of(f)
        if rel is None or not settled.settles(f, rel):
            out.append(f)
    return out
