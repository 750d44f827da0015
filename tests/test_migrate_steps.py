"""Each migration step against its fixtures, and the chain's completeness against the registry.

A fixture is a folder ``tests/examples/migration/steps/<kind>_<from>_to_<to>/<case>/`` with
``before.json`` (a document of the old shape, valid under ``<from>``), ``after.json`` (what the
step must return, key order included) and ``changes.json`` (what it must report).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import EXAMPLES, PROJECT
from eee.migrate import steps as steps_module
from eee.migrate.chain import missing_steps
from eee.migrate.steps import STEPS, Step, step_from
from eee.store.schemas import EVAL, INSTANCE, KINDS, Registry
from migration_paths import assert_lossless

FIXTURES = EXAMPLES / "migration" / "steps"
CASES = sorted(p for p in FIXTURES.glob("*/*") if p.is_dir())
_FOLDER = re.compile(r"^(eval|instance_level_eval)_(\d+\.\d+\.\d+)_to_(\d+\.\d+\.\d+)$")


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.load()


def _step_for(case: Path) -> Step:
    m = _FOLDER.match(case.parent.name)
    assert m, f"fixture folder {case.parent.name} is not <kind>_<from>_to_<to>"
    kind, source, target = m.groups()
    step = step_from(kind, source)
    assert step is not None and step.target == target, f"no released step {kind} {source} -> {target}"
    return step


def _load(case: Path, name: str) -> Any:
    return json.loads((case / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_step_turns_the_old_shape_into_the_new_one(case: Path, registry: Registry) -> None:
    step = _step_for(case)
    before, after, changes = _load(case, "before.json"), _load(case, "after.json"), _load(case, "changes.json")
    assert registry.validator(step.source, step.kind).is_valid(before), "the fixture must be valid under its version"
    untouched = copy.deepcopy(before)
    got, made = step(before)
    assert before == untouched, "a step must not modify its argument"
    assert orjson.dumps(got) == orjson.dumps(after), "result differs from after.json (values or key order)"
    assert made.to_dict() == changes
    errors = [e.message for e in registry.validator(step.target, step.kind).iter_errors(got)]
    assert errors == [], f"not valid under {step.target}: {errors[:3]}"


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_step_changes_are_lossless_and_all_reported(case: Path) -> None:
    """Undoing what the step reports gives back the source exactly."""
    before = _load(case, "before.json")
    got, made = _step_for(case)(before)
    assert_lossless(before, got, made.to_dict())


def test_every_registered_version_has_a_step_for_each_kind(registry: Registry) -> None:
    """Adding a version to schemas/registry.json without its migration steps fails here."""
    pairs = list(zip(registry.ordered, registry.ordered[1:], strict=False))
    for kind in KINDS:
        for source, target in pairs:
            step = step_from(kind, source)
            assert step is not None, (
                f"no migration step from {source} for {kind}: add one (governance/schema-change-checklist.md)"
            )
            assert step.target == target, f"the {kind} step from {source} leads to {step.target}, not to {target}"
        assert step_from(kind, registry.current) is None, "no step may start at the current version"
    released = {(s.kind, s.source, s.target) for s in STEPS}
    assert released == {(k, a, b) for k in KINDS for a, b in pairs}, (
        "every step joins two consecutive released versions"
    )


def test_a_version_registered_without_its_steps_is_found(registry: Registry) -> None:
    assert missing_steps(registry) == []
    versions = {**registry.versions, "0.4.0": {}}
    grown = Registry(registry.root, "0.4.0", versions)
    assert missing_steps(grown) == ["eval 0.3.0 -> 0.4.0", "instance_level_eval 0.3.0 -> 0.4.0"]


def test_every_step_has_fixtures_and_a_docstring() -> None:
    for step in STEPS:
        folder = FIXTURES / f"{step.kind}_{step.source}_to_{step.target}"
        assert folder.is_dir() and any(p.is_dir() for p in folder.iterdir()), f"no fixtures for {step}"
        doc = step.func.__doc__ or ""
        title = "Aggregate" if step.kind == EVAL else "Instance-level row"
        assert doc.startswith(f"{title} {step.source} -> {step.target}."), f"{step.func.__name__}: docstring title"
        assert "``schema_version`` becomes" in doc, f"{step.func.__name__}: the docstring lists what changes"


def _properties(schema: dict[str, Any], *path: str) -> dict[str, Any]:
    node = schema
    for key in path:
        node = node[key]
    return node


def test_frozen_constants_match_the_released_schemas(registry: Registry) -> None:
    """The field lists a step carries are the ones its schema files name (guards typos)."""
    eval_021 = registry.schema("0.2.1", EVAL)
    args = _properties(
        eval_021,
        "properties",
        "evaluation_results",
        "items",
        "properties",
        "generation_config",
        "properties",
        "generation_args",
    )
    assert args["additionalProperties"] is False
    assert set(args["properties"]) == steps_module.GENERATION_ARGS_0_2_1

    row_020 = registry.schema("0.2.0", INSTANCE)
    assert set(row_020["properties"]) == steps_module.ROW_FIELDS_0_2_0
    row_021 = registry.schema("0.2.1", INSTANCE)
    assert set(row_021["properties"]) == (steps_module.ROW_FIELDS_0_2_0 - {"interactions"}) | {"messages"}

    eval_022 = registry.schema("0.2.2", EVAL)
    metric = _properties(eval_022, "properties", "evaluation_results", "items", "properties", "metric_config")
    for key in steps_module.METRIC_STRINGS_0_2_2:
        assert metric["properties"][key]["type"] == "string"

    eval_023 = registry.schema("0.2.3", EVAL)
    details = eval_023["$defs"]["model_info"]["properties"]["additional_details"]
    assert tuple(details["properties"]["deployment_type"]["enum"]) == steps_module.DEPLOYMENT_TYPES_0_2_3
    assert tuple(details["properties"]["model_availability"]["enum"]) == steps_module.MODEL_AVAILABILITY_0_2_3
    der = eval_023["properties"]["detailed_evaluation_results"]
    assert der["properties"]["file_path"]["pattern"] == steps_module.SIDECAR_PATH_0_2_3.pattern
    assert der["properties"]["format"]["enum"] == ["jsonl"]


@pytest.mark.parametrize("step", STEPS, ids=repr)
def test_each_step_writes_its_target_version(step: Step, registry: Registry) -> None:
    case = next(p for p in sorted((FIXTURES / f"{step.kind}_{step.source}_to_{step.target}").iterdir()) if p.is_dir())
    got, _ = step(_load(case, "before.json"))
    assert registry.resolve(got["schema_version"], step.kind) == step.target
    assert got["schema_version"] == registry.schema(step.target, step.kind)["version"], "spelled as the schema does"


def test_the_schema_change_checklist_covers_the_release_and_links_only_to_existing_files() -> None:
    checklist = PROJECT / "governance" / "schema-change-checklist.md"
    text = checklist.read_text(encoding="utf-8")
    for needed in ("schema folder", "pins", "migration step", "Fixtures", "CHANGELOG", "docs"):
        assert needed.lower() in text.lower(), f"the checklist says nothing about {needed}"
    links = re.findall(r"\]\(([^)#\s]+)\)", text)
    assert links, "the checklist links to the files it talks about"
    for link in links:
        assert not re.match(r"^[a-z]+://", link) and not link.startswith("/"), f"{link}: use relative links"
        assert (checklist.parent / link).is_file(), f"{link} does not exist"
