"""The threat model (docs/guide/threat-model.md, issue 30 item 5): every invariant is one line
naming the test that proves it. This test fails when an invariant names no test, or a test
the suite does not collect (collected for real, by pytest itself)."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import PROJECT

PAGE = PROJECT / "docs" / "guide" / "threat-model.md"
TEST_ID = re.compile(r"`(tests/[\w/.-]+\.py)::(\w+)`")


def invariants(text: str) -> list[str]:
    """The lines of the page's Invariants section (each one bullet)."""
    section = re.search(r"^## Invariants\n(.*?)(?=^## )", text, re.S | re.M)
    assert section is not None, "the page has no Invariants section"
    return [line for line in section.group(1).splitlines() if line.startswith("- ")]


def problems(text: str, collected: set[str]) -> list[str]:
    """What is wrong with the page's invariants, given the test ids pytest collects
    (``path::name``, parameters left out)."""
    out = []
    lines = invariants(text)
    if not lines:
        out.append("no invariant at all")
    for line in lines:
        named = TEST_ID.findall(line)
        if not named:
            out.append(f"names no test: {line[:80]}")
        for path, name in named:
            if f"{path}::{name}" not in collected:
                out.append(f"names a test the suite does not collect: {path}::{name}")
    return out


def collect(paths: list[str]) -> set[str]:
    """The test ids pytest collects from ``paths`` (parametrized ids folded to their function)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *paths],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    ids = {line.split("[", 1)[0] for line in proc.stdout.splitlines() if "::" in line}
    assert ids, proc.stdout + proc.stderr
    return ids


def test_every_invariant_names_a_test_that_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    paths = sorted({path for line in invariants(text) for path, _ in TEST_ID.findall(line)})
    existing = [p for p in paths if (PROJECT / p).is_file()]
    collected = collect(existing) if existing else set()
    assert problems(text, collected) == []
    assert len(invariants(text)) >= 20


def test_the_check_fails_an_invariant_without_a_test_or_with_a_missing_one() -> None:
    page = (
        "# T\n\n## Invariants\n\n"
        "- **A**: proved: `tests/test_x.py::test_real`.\n"
        "- **B**: nothing proves it.\n"
        "- **C**: `tests/test_x.py::test_gone`.\n\n## Out of scope\n"
    )
    found = problems(page, {"tests/test_x.py::test_real"})
    assert found == [
        "names no test: - **B**: nothing proves it.",
        "names a test the suite does not collect: tests/test_x.py::test_gone",
    ]
    assert (
        problems(
            page.replace("test_gone", "test_real").replace("nothing proves it.", "`tests/test_x.py::test_real`"),
            {"tests/test_x.py::test_real"},
        )
        == []
    )


def test_the_page_says_what_it_protects_from_whom_and_what_it_leaves_out() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for section in ("## Assets", "## Actors", "## Trust boundaries", "## Invariants", "## Out of scope"):
        assert section in text
    for words in ("a compromised server", "a stolen key", "local hooks are a courtesy", "gone rogue", "operator"):
        assert words in text.lower()
