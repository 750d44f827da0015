"""The chain: migrate one document from the version it declares to a target version.

1. The declared version must be a released one, and not newer than the target
   (downgrades are refused: steps only go forward).
2. The document must be valid where it stands: under the schema of its declared version,
   and, for an aggregate record, under the validator's score rules (scores within their
   declared bounds, unique result ids). The steps are written for valid documents, and a
   record the validator rejects is not repaired behind its back.
3. The steps run in order; each returns a new document and what it changed.
4. The changes are recorded in the copy (:mod:`eee.migrate.provenance`), and the copy must
   be valid under the target schema; a copy that is not is refused, never returned.

A record the store accepted through flags (:mod:`eee.rules.flags`: a maintainer accepted a
score outside its bounds, two results of one id) is valid where it stands but for those
findings: ``accept`` says which findings of step 2 a flag accepts. Those do not refuse it;
they are returned (:attr:`Result.accepted`) so that the copy can say which flags it carries
(:mod:`eee.migrate.export`). No flag accepts a schema error.

A document already at the target version passes through unchanged (the same object).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eee.migrate.changes import Changes, MigrationRefused, clone, refusal
from eee.migrate.provenance import stamp
from eee.migrate.steps import Step, step_from
from eee.reporting.findings import ERROR, Finding
from eee.rules.record import score_findings
from eee.rules.schema import schema_findings
from eee.store.schemas import EVAL, INSTANCE, KINDS, Registry, default_registry, version_key

MAX_FINDINGS = 5

Accept = Callable[[Finding], bool]  # whether a flag accepts a finding of the document


class Result:
    """A migrated document: ``doc`` at ``target``, from ``source``, with what changed on the way."""

    __slots__ = ("accepted", "changes", "doc", "source", "target")

    def __init__(
        self, doc: dict[str, Any], source: str, target: str, changes: Changes, accepted: list[Finding] | None = None
    ) -> None:
        self.doc = doc
        self.source = source
        self.target = target
        self.changes = changes
        self.accepted = accepted or []  # the source's findings its flags accept

    @property
    def changed(self) -> bool:
        """False when the document passed through unchanged (it was at the target already)."""
        return self.source != self.target

    def __repr__(self) -> str:
        return f"Result({self.source} -> {self.target}, {self.changes!r})"


def target_version(to: str | None, registry: Registry) -> str:
    """The released version ``to`` names (default: the current one); ValueError otherwise."""
    if to is None:
        return registry.current
    if to not in registry.versions:
        raise ValueError(f"unknown schema version {to!r}; released versions: {registry.supported_text()}")
    return to


def plan(kind: str, source: str, target: str) -> list[Step]:
    """The steps from ``source`` to ``target`` for ``kind``; refuses a downgrade or a gap in the chain."""
    if kind not in KINDS:
        raise ValueError(f"unknown record kind {kind!r}; kinds: {', '.join(KINDS)}")
    if version_key(target) < version_key(source):
        raise refusal(
            "$.schema_version",
            f"cannot migrate from {source} down to {target}: migrations only go forward, "
            "and a newer version may hold facts an older one cannot",
            f"ask for {source} or a newer version (the current one is the default)",
            check="version",
        )
    steps: list[Step] = []
    version = source
    while version != target:
        step = step_from(kind, version)
        if step is None or version_key(step.target) > version_key(target):
            raise refusal(
                "$.schema_version",
                f"no migration step leads from {version} towards {target} for {kind} documents",
                "every released version needs its step (governance/schema-change-checklist.md)",
                check="version",
            )
        steps.append(step)
        version = step.target
    return steps


def missing_steps(registry: Registry) -> list[str]:
    """Released version pairs without their migration step (``"eval 0.3.0 -> 0.4.0"``); empty when complete."""
    out = []
    for kind in KINDS:
        for source, target in zip(registry.ordered, registry.ordered[1:], strict=False):
            step = step_from(kind, source)
            if step is None or step.target != target:
                out.append(f"{kind} {source} -> {target}")
    return out


def _declared(doc: dict[str, Any], kind: str, registry: Registry) -> str:
    declared = doc.get("schema_version")
    version = registry.resolve(declared, kind)
    if version is None:
        what = "has no schema_version" if declared is None else f"declares unknown schema_version {declared!r}"
        raise refusal(
            "$.schema_version",
            f"{'record' if kind == EVAL else 'row'} {what}; supported versions: {registry.supported_text()}",
            "set schema_version to the version the document was written for",
            check="version",
        )
    return version


def _check_source(
    doc: dict[str, Any], kind: str, version: str, registry: Registry, file: str, accept: Accept | None = None
) -> list[Finding]:
    """Refuses a document that is not valid where it stands; returns the findings ``accept``
    let through (a flag's)."""
    validator = registry.validator(version, kind)
    valid = validator.is_valid(doc)
    problems: list[Finding] = []
    if not valid:
        for f in schema_findings(validator, doc, file, version, limit=MAX_FINDINGS):
            f.message = f"not valid under its declared version {version}: {f.message}"
            problems.append(f)
    if kind == EVAL:
        problems.extend(f for f in score_findings(doc, file, valid) if f.severity == ERROR)
    accepted = [f for f in problems if accept is not None and f.check != "schema" and accept(f)]
    problems = [f for f in problems if f not in accepted]
    if problems:
        raise MigrationRefused(problems[:MAX_FINDINGS])
    return accepted


def _check_target(doc: dict[str, Any], kind: str, version: str, registry: Registry, file: str) -> None:
    validator = registry.validator(version, kind)
    if validator.is_valid(doc):
        return
    problems = schema_findings(validator, doc, file, version, limit=MAX_FINDINGS)
    for f in problems:
        f.message = f"the migrated copy would not be valid under {version}: {f.message}"
        f.hint = "this shape has no migration yet; report it (a fix is a new migration step)"
        f.check = "migrate"
    raise MigrationRefused(problems)


def migrate(
    doc: dict[str, Any],
    kind: str,
    to: str | None = None,
    registry: Registry | None = None,
    file: str = "<document>",
    accept: Accept | None = None,
) -> Result:
    """Migrate one document of ``kind`` (eval or instance_level_eval) to ``to`` (default: current).

    Raises :class:`MigrationRefused` (findings name ``file``) when the document cannot be
    migrated; ValueError for an unknown target version or kind. ``accept``: which findings
    of the source's check a flag accepts (see the module docstring).
    """
    registry = registry or default_registry()
    target = target_version(to, registry)
    source: str | None = None
    try:
        if not isinstance(doc, dict):
            raise refusal("$", f"a {'record' if kind == EVAL else 'row'} must be a JSON object", check="json")
        source = _declared(doc, kind, registry)
        return _run(doc, kind, source, target, registry, file, accept)
    except MigrationRefused as refused:
        refused.source = refused.source or source
        raise refused.for_file(file) from None


def _run(
    doc: dict[str, Any], kind: str, source: str, target: str, registry: Registry, file: str, accept: Accept | None
) -> Result:
    steps = plan(kind, source, target)
    accepted = _check_source(doc, kind, source, registry, file, accept)
    if not steps:
        return Result(doc, source, target, Changes(), accepted)
    changes = Changes()
    current = clone(doc)  # one copy, which the steps then rewrite in place
    for step in steps:
        current, made = step.in_place(current)
        changes.extend(made)
    stamp(current, kind, source, changes)
    _check_target(current, kind, target, registry, file)
    return Result(current, source, target, changes, accepted)


def migrate_record(
    doc: dict[str, Any], to: str | None = None, registry: Registry | None = None, file: str = "<record>"
) -> Result:
    """Migrate one aggregate record (see :func:`migrate`)."""
    return migrate(doc, EVAL, to, registry, file)


def migrate_row(
    row: dict[str, Any], to: str | None = None, registry: Registry | None = None, file: str = "<row>"
) -> Result:
    """Migrate one instance-level row (see :func:`migrate`)."""
    return migrate(row, INSTANCE, to, registry, file)
