"""The code base stays clean under the project's ruff configuration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT


def test_ruff_check_passes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "tools", "tests", "benchmarks"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_applied() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "tools", "tests", "benchmarks"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_floors_hold() -> None:
    """tools/eee reads top-down: `lint-imports` checks the layers contract of pyproject.toml
    (docs/guide/architecture.md draws it), imports inside functions included."""
    lint_imports = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run([str(lint_imports), "--no-cache"], cwd=PROJECT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Contracts: 2 kept, 0 broken." in proc.stdout


def _no_cycles_contract() -> dict:
    import tomllib

    config = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["id"] == "no-cycles"]
    return contract


def test_no_import_cycle_in_the_package() -> None:
    """No import cycle anywhere in tools/eee (issue 34.5): the no-cycles contract covers the
    whole package, every depth, with nothing ignored."""
    contract = _no_cycles_contract()
    assert contract["type"] == "acyclic_siblings" and contract["ancestors"] == ["eee"]
    assert contract["depth"] >= 10 and not contract.get("ignore_imports") and not contract.get("skip_descendants")
    depth = max(p.relative_to(PROJECT / "tools").as_posix().count("/") for p in (PROJECT / "tools/eee").rglob("*.py"))
    assert contract["depth"] >= depth, "the package is deeper than the contract looks"


def test_the_no_cycles_contract_finds_a_cycle_of_lazy_imports(tmp_path: Path) -> None:
    """The contract as configured breaks on the kind of cycle that was in eee.rules
    (duplicates -> ledger -> flags -> duplicates, through imports inside functions)."""
    contract = _no_cycles_contract()
    pkg = tmp_path / "pkg"
    (pkg / "rules").mkdir(parents=True)
    for path, text in {
        "__init__.py": "",
        "rules/__init__.py": "",
        "rules/duplicates.py": "def f():\n    from pkg.rules.ledger import g\n    return g\n",
        "rules/ledger.py": "def g():\n    from pkg.rules.flags import h\n    return h\n",
        "rules/flags.py": "def h():\n    from pkg.rules import duplicates\n    return duplicates\n",
    }.items():
        (pkg / path).write_text(text, encoding="utf-8")
    config = tmp_path / ".importlinter"
    config.write_text(
        "[importlinter]\nroot_package = pkg\n\n[importlinter:contract:no-cycles]\n"
        f"name = no cycles\ntype = {contract['type']}\nancestors = pkg\ndepth = {contract['depth']}\n",
        encoding="utf-8",
    )
    lint_imports = Path(sys.executable).parent / "lint-imports"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    broken = subprocess.run(
        [str(lint_imports), "--no-cache", "--config", str(config)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert broken.returncode == 1 and "No cycles are allowed in pkg.rules" in broken.stdout, broken.stdout
    (pkg / "rules/flags.py").write_text("def h():\n    return 1\n", encoding="utf-8")
    kept = subprocess.run(
        [str(lint_imports), "--no-cache", "--config", str(config)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert kept.returncode == 0, kept.stdout + kept.stderr


def test_commands_choose_reporters_by_name() -> None:
    """No format branches in the commands (issue 34.5): a command hands its result to the
    reporter its --format names (eee.reporting.reporters.REPORTERS), never compares the name."""
    import ast

    from eee.commands import FINDINGS_FORMATS
    from eee.reporting.reporters import REPORTERS

    assert tuple(REPORTERS) == tuple(FINDINGS_FORMATS)
    branches = []
    for path in sorted((PROJECT / "tools/eee/commands").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                names = [s for s in sides if isinstance(s, ast.Constant) and s.value in REPORTERS]
                if names:
                    branches.append(f"{path.relative_to(PROJECT)}:{node.lineno}: {ast.unparse(node)}")
    assert branches == [], "choose the reporter by name (eee.reporting.reporters.reporter):\n" + "\n".join(branches)


def test_git_arguments_are_built_only_in_the_git_module() -> None:
    """Git's command lines are built in eee.git alone (issue 34.5): no other module imports
    its raw runners (``git``, ``run``, ``fields``, ``succeeds``), calls them through the
    module (``cli.git(...)``), or spawns a process whose argv starts with "git"."""
    import ast

    raw = {"git", "run", "fields", "succeeds"}
    found = []
    for path in sorted((PROJECT / "tools/eee").rglob("*.py")):
        rel = path.relative_to(PROJECT / "tools").as_posix()
        if rel.startswith("eee/git/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = set()  # local names bound to eee.git.cli
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("eee.git.cli", "eee.git"):
                for alias in node.names:
                    if node.module == "eee.git.cli" and alias.name in raw:
                        found.append(f"{rel}:{node.lineno}: imports eee.git.cli.{alias.name}")
                    if node.module == "eee.git" and alias.name == "cli":
                        modules.add(alias.asname or "cli")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                if (
                    isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Name)
                    and func.value.id in modules
                    and func.attr in raw
                ):
                    found.append(f"{rel}:{node.lineno}: {ast.unparse(func)}(...)")
                first = node.args[0] if node.args else None
                if isinstance(first, ast.List | ast.Tuple) and first.elts:
                    head = first.elts[0]
                    if isinstance(head, ast.Constant) and head.value == "git":
                        found.append(f"{rel}:{node.lineno}: spawns {ast.unparse(first)[:60]}")
    assert found == [], "build git's arguments in eee.git (a named function there):\n" + "\n".join(found)


def test_the_rules_spawn_no_process() -> None:
    """The rules only verify (issue 34.5): no module of eee.rules starts a process (signing,
    which asks ssh-keygen, is the write side's: eee.write.signing; git is asked through
    eee.git)."""
    import ast

    found = []
    for path in sorted((PROJECT / "tools/eee/rules").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n.split(".")[0] in ("subprocess", "multiprocessing") or n == "os.system" for n in names):
                found.append(f"{path.relative_to(PROJECT)}:{node.lineno}")
    assert found == []
    from eee.write import signing

    assert callable(signing.configured_key) and callable(signing.gate_findings)
