"""The one command-line convention, checked on every ``eee`` subcommand (taken from
``eee.cli.COMMANDS``, so a new command is covered without touching this file) and on every
executable in tools/: --help works and describes every option, the store is named
``--store`` wherever a command takes one, a usage error exits 64 with the message on
stderr and nothing on stdout."""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PROJECT
from eee import __version__
from eee.cli import COMMANDS, help_text
from eee.cli import main as eee
from eee.commands import EXIT_CODES_TEXT, EXIT_USAGE, Parser

# commands that work on named files, not on a store (migrate writes copies elsewhere)
WITHOUT_STORE = {"migrate"}
OTHER_NAMES_FOR_A_STORE = {"--root", "--repo", "--repository", "--store-root", "--dir", "--path"}


class _Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def parser_of(name: str, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser a subcommand builds, caught as it starts parsing (nothing runs)."""

    def capture(self: argparse.ArgumentParser, *_a: object, **_k: object) -> None:
        raise _Captured(self)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", capture)
    module = importlib.import_module(COMMANDS[name][0])
    with pytest.raises(_Captured) as caught:
        module.main([])
    monkeypatch.undo()
    return caught.value.parser


def walk(parser: argparse.ArgumentParser) -> list[tuple[argparse.ArgumentParser, argparse.Action]]:
    """Every action of a parser and of its subcommands' parsers."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                out.extend(walk(sub))
        out.append((parser, action))
    return out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_describes_every_option(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert eee([name, "--help"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"usage: eee {name}") and captured.err == ""
    assert EXIT_CODES_TEXT in " ".join(captured.out.split())  # the exit-code table, in every epilog
    parser = parser_of(name, monkeypatch)
    assert isinstance(parser, Parser), f"eee {name} builds its parser with eee.commands.parser"
    assert parser.description, f"eee {name} has no description"
    for owner, action in walk(parser):
        if isinstance(action, argparse._HelpAction):
            continue
        what = "/".join(action.option_strings) or action.dest
        assert action.help and action.help != argparse.SUPPRESS, f"{owner.prog}: {what} has no help text"
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                assert choice.help, f"{owner.prog} {choice.dest}: no summary"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_store_is_named_store(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    parser = parser_of(name, monkeypatch)
    options = {s for _owner, a in walk(parser) for s in a.option_strings}
    assert not options & OTHER_NAMES_FOR_A_STORE, (
        f"eee {name}: the store is named --store, not {options & OTHER_NAMES_FOR_A_STORE}"
    )
    if name in WITHOUT_STORE:
        assert "--store" not in options
        return
    for owner, action in walk(parser):
        if action.dest == "store":
            assert action.option_strings == ["--store"] and action.metavar == "DIR", owner.prog
    leaves = [p for p, a in walk(parser) if not any(isinstance(x, argparse._SubParsersAction) for x in p._actions)]
    for leaf in dict.fromkeys(leaves):  # every command that runs (each subcommand of samples) takes --store
        assert "--store" in leaf._option_string_actions, f"{leaf.prog} takes no --store"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_usage_error_exits_64_on_stderr(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert eee([name, "--no-such-option"]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"eee {name}" in captured.err and "error:" in captured.err


def test_eee_help_lists_every_command_with_its_summary_and_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], ["-h"]):
        assert eee(argv) == 0
        out = capsys.readouterr().out
        assert out == help_text()
        for name, (_module, summary) in COMMANDS.items():
            assert f"  {name} " in out and summary in out
        for code in ("0 ", "1 ", "2 ", "64"):
            assert f"\n  {code}" in out
        assert "--store DIR" in out


def test_eee_version_and_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert eee(["--version"]) == 0
    assert capsys.readouterr().out == f"eee {__version__}\n"
    for argv in ([], ["no-such-command"], ["--no-such-option"]):
        assert eee(argv) == EXIT_USAGE
        captured = capsys.readouterr()
        assert captured.out == "" and "eee: error:" in captured.err


def test_the_readme_carries_the_exit_code_table() -> None:
    readme = (PROJECT / "README.md").read_text()
    for row in ("| 0 |", "| 1 |", "| 2 |", "| 64 |"):
        assert row in readme
    assert "--store DIR" in readme


def test_every_command_module_is_registered() -> None:
    """A module of eee/commands with a ``main`` is a subcommand listed in eee.cli.COMMANDS."""
    folder = PROJECT / "tools" / "eee" / "commands"
    with_main = {f"eee.commands.{p.stem}" for p in folder.glob("*.py") if "\ndef main(" in p.read_text()}
    registered = {module for module, _summary in COMMANDS.values()}
    assert with_main <= registered, f"not in eee.cli.COMMANDS: {sorted(with_main - registered)}"


# --- the thin executables in tools/ ------------------------------------------------------

EXECUTABLES = sorted(p.name for p in (PROJECT / "tools").iterdir() if p.is_file() and os.access(p, os.X_OK))


def _run(name: str, *args: str, cwd: Path = PROJECT) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, EEE_PYTHON=sys.executable)
    command = (
        [sys.executable, str(PROJECT / "tools" / name)] if name.endswith(".py") else [str(PROJECT / "tools" / name)]
    )
    return subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True, env=env)


def test_the_executables_are_eee_commands() -> None:
    """Every tools/ executable but the hook runner and dev.py is a thin wrapper of an eee command."""
    import re

    for name in EXECUTABLES:
        if name in ("hook", "dev.py"):
            continue
        (command,) = re.findall(r'run\("([^"]+)"\)', (PROJECT / "tools" / name).read_text())
        assert command in COMMANDS, f"tools/{name} runs `eee {command}`, which is not a command"
    assert {"validate", "convert", "retract", "status", "hook", "dev.py"} <= set(EXECUTABLES)


@pytest.mark.slow
@pytest.mark.parametrize("name", EXECUTABLES)
def test_executables_follow_the_convention(name: str) -> None:
    shown = _run(name, "--help")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() and "usage" in shown.stdout.lower()
    wrong = _run(name, "--no-such-option")
    assert wrong.returncode == EXIT_USAGE, (wrong.returncode, wrong.stdout, wrong.stderr)
    assert wrong.stdout == "" and wrong.stderr.strip()
    assert "Traceback" not in wrong.stderr
