"""The README is a front door and the user guide lives on the site: the README stays short
and its links resolve, every hand-written page is in the site's navigation, and the
architecture page is checked against the code: it names every module of tools/eee and no
other, and its floors are the layers contract that `lint-imports` enforces."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from conftest import PROJECT
from docs_examples import PAGES, STORES, blocks_of

PACKAGE = PROJECT / "tools" / "eee"
ARCHITECTURE = "docs/guide/architecture.md"
ROW = re.compile(r"^\| `([^`]+)` \|", re.M)


def documented_modules(text: str) -> list[str]:
    """The modules the architecture page's tables name, as paths under tools/eee (a
    package's row, `store/`, stands for its `__init__.py`)."""
    section = text[text.index("## Every module") :]
    return [name + "__init__.py" if name.endswith("/") else name for name in ROW.findall(section)]


def package_modules() -> set[str]:
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")}


def test_the_architecture_page_names_every_module_and_no_other() -> None:
    named = documented_modules((PROJECT / ARCHITECTURE).read_text(encoding="utf-8"))
    repeated = sorted({n for n in named if named.count(n) > 1})
    assert not repeated, f"{ARCHITECTURE} names these modules twice: {repeated}"
    missing = sorted(package_modules() - set(named))
    assert not missing, "\n".join(
        f"add eee/{m} (tools/eee/{m}) to {ARCHITECTURE}, with a line on what it holds, under its floor" for m in missing
    )
    gone = sorted(set(named) - package_modules())
    assert not gone, "\n".join(f"{ARCHITECTURE} names eee/{m}, which does not exist: remove its row" for m in gone)


def test_the_architecture_page_lists_each_module_under_its_floor() -> None:
    """A module's row sits under the heading of the floor its package is on (the contract's
    layers), so the page says where each module may import from."""
    text = (PROJECT / ARCHITECTURE).read_text(encoding="utf-8")
    section = text[text.index("## Every module") :]
    floors = contract_layers()
    headings = [h.strip("`") for h in re.findall(r"^### (.+)$", section, re.M)]
    assert headings == floors, f"{ARCHITECTURE}: the floors' headings must be the contract's layers, in order"
    for heading, body in zip(headings, re.split(r"^### .+$", section, flags=re.M)[1:], strict=True):
        members = {m.strip() for m in re.split(r"[|:]", heading)}
        for name in ROW.findall(body):
            top = name.split("/")[0].removesuffix(".py")
            assert top in members or (name == "__init__.py" and heading == floors[0]), (
                f"{ARCHITECTURE}: `{name}` is under '{heading}', but its package `{top}` is on another floor"
            )


def contract_layers() -> list[str]:
    config = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    assert contract["containers"] == ["eee"] and contract.get("exhaustive") is True
    return contract["layers"]


def test_the_floors_on_the_page_are_the_contract() -> None:
    """The floors the page draws are the layers contract in pyproject.toml, in order."""
    text = (PROJECT / ARCHITECTURE).read_text(encoding="utf-8")
    block = text[text.index("## The floors") :]
    block = block[block.index("```\n") + 4 :]
    block = block[: block.index("```")]
    drawn = [re.split(r"\s{2,}", line.strip())[0] for line in block.splitlines() if line.strip()]
    assert drawn == contract_layers()
    every_package = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    every_package |= {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    on_floors = {m.strip() for layer in contract_layers() for m in re.split(r"[|:]", layer)}
    assert on_floors == every_package


def test_the_readme_is_a_front_door() -> None:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 250
    # the two commands, exactly as CI and the graders run them
    assert "python3 tools/dev.py run" in readme and "python3 tools/dev.py test" in readme
    # every link to a file of the repository resolves; every guide page is linked
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert all((PROJECT / link).exists() for link in local), [link for link in local if not (PROJECT / link).exists()]
    guide = {p.relative_to(PROJECT).as_posix() for p in (PROJECT / "docs" / "guide").glob("*.md")}
    assert guide - {"docs/guide/index.md"} <= set(local)


def test_every_hand_written_page_is_in_the_navigation() -> None:
    from eee.site.generate import NAV, nav_paths

    pages = {p.relative_to(PROJECT / "docs").as_posix() for p in (PROJECT / "docs").rglob("*.md")}
    assert pages <= nav_paths(NAV), f"add to NAV in tools/eee/site/generate.py: {sorted(pages - nav_paths(NAV))}"


def test_the_guide_pages_link_to_each_other_within_the_site() -> None:
    """Links of a guide page to another page resolve in the folder the site is built from
    (guide pages, the published governance documents, the CHANGELOG, generated sections)."""
    generated = ("reference/", "catalogue/")
    for page in sorted((PROJECT / "docs").rglob("*.md")):
        for link in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", link):
                continue
            site_path = (page.parent / link).resolve().relative_to((PROJECT / "docs").resolve()).as_posix()
            if site_path.startswith(generated):
                continue
            exists = (PROJECT / "docs" / site_path).exists() or (PROJECT / site_path).exists()
            assert exists, f"{page.relative_to(PROJECT)}: the link {link} leads nowhere"


def test_every_example_block_is_collected() -> None:
    """Each ```sh, ```console and ```python fence of the README and docs/ is an example the
    examples test runs (tests/test_docs_examples.py), and each marker names a known store."""
    total = 0
    for page in PAGES:
        text = (PROJECT / page).read_text(encoding="utf-8")
        fences = sum(text.count(f"\n```{lang}\n") for lang in ("sh", "console", "python"))
        blocks = blocks_of(page)
        assert len(blocks) == fences, page
        assert all(b.store in STORES for b in blocks)
        total += len(blocks)
    assert {"README.md", "docs/guide/governance.md", ARCHITECTURE} <= set(PAGES)
    assert total >= 15


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("<!-- example: store=nowhere -->\n```sh\ntrue\n```\n", "unknown store"),
        ("<!-- example: run `false` as `true` -->\n```sh\ntrue\n```\n", "does not hold"),
        ("<!-- example: sometimes -->\n```sh\ntrue\n```\n", "unknown clause"),
        ("```bash\ntrue\n```\n", "write ```sh"),
        ("<!-- example: store=empty -->\n```text\ntrue\n```\n", "not run"),
    ],
)
def test_a_wrong_example_comment_is_refused(
    text: str, error: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import docs_examples

    (tmp_path / "page.md").write_text("# a page\n\n" + text)
    monkeypatch.setattr(docs_examples, "PROJECT", tmp_path)
    with pytest.raises(ValueError, match=error):
        docs_examples.blocks_of("page.md")


def test_the_home_page_and_the_readme_say_alike_where_sidecars_are_kept() -> None:
    """The site's home page once said every sidecar is in DVC while the README said git up to
    the threshold: the line of the layout that names the sidecar is the same in both."""

    def sidecar_line(text: str) -> str:
        (line,) = [x for x in text.splitlines() if x.startswith("data/") and "_samples.jsonl " in x]
        return " ".join(line.split())

    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    home = (PROJECT / "docs" / "index.md").read_text(encoding="utf-8")
    assert sidecar_line(home) == sidecar_line(readme)
    assert "in git up to" in sidecar_line(home) and "DVC" in sidecar_line(home)
