"""The one command-line convention, checked on every ``eee`` subcommand (taken from
``eee.cli.COMMANDS``, so a new command is covered without touching this file) and on every
executable in tools/: --help works and describes every option, the store is named
``--store`` on every command, a usage error exits 64 with the message on stderr and nothing
on stdout, a missing or non-store ``--store`` is one line and exit 64, an option has one
name and one meaning everywhere (the vocabulary of :mod:`eee.commands`), an unknown command
gets a suggestion, and a closed stdout ends a command quietly."""

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
from eee.cli import COMMANDS, EXIT_CLOSED_PIPE, help_text
from eee.cli import main as eee
from eee.commands import EXIT_CODES_TEXT, EXIT_USAGE, FINDINGS_FORMATS, Parser

# commands that read no store take no --store: `eee rules` (the rule registry's command)
# explains the package's own rules
READS_NO_STORE = {"rules", "server"}  # server: a bare repository (GIT_DIR), which has no work tree to be a store
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
    if name in READS_NO_STORE:
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


def test_the_command_line_page_carries_the_exit_code_table() -> None:
    """The user guide's command-line page (moved there from the README) says the exit codes
    and the conventions every command shares, with the words `eee --help` uses."""
    page = (PROJECT / "docs" / "guide" / "command-line.md").read_text()
    for row in ("| 0 |", "| 1 |", "| 2 |", "| 64 |"):
        assert row in page
    assert "--store DIR" in page
    for name in ("--format", "rich|json|github", "--out", "--dry-run", "--jobs N", "did-you-mean"):
        assert name in page
    for name in COMMANDS:
        assert f"`eee {name}" in page, f"docs/guide/command-line.md does not list `eee {name}`"


def test_every_command_module_is_registered() -> None:
    """A module of eee/commands with a ``main`` is a subcommand listed in eee.cli.COMMANDS."""
    folder = PROJECT / "tools" / "eee" / "commands"
    with_main = {f"eee.commands.{p.stem}" for p in folder.glob("*.py") if "\ndef main(" in p.read_text()}
    registered = {module for module, _summary in COMMANDS.values()}
    assert with_main <= registered, f"not in eee.cli.COMMANDS: {sorted(with_main - registered)}"


# --- one vocabulary ---------------------------------------------------------------------

# names that meant the same as one of the vocabulary's and are gone (no aliases)
RETIRED = {"--output", "--no-write", "--root", "--repo"}
FLAGS = {"--dry-run", "--commit", "--all", "--no-progress", "--no-stage", "--no-pull", "--exit-zero", "--list"}


def leaves(
    parser: argparse.ArgumentParser, argv: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(the words that reach it, parser) of every parser that runs a command: the command's
    own, or each of its subcommands'."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [(argv, parser)]
    return [leaf for name, sub in subs[0].choices.items() for leaf in leaves(sub, (*argv, name))]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_one_vocabulary(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No retired name; --format is the findings' formats or a subset with their names,
    default rich; --jobs N, --store DIR, --out and --manifest take paths or numbers the same
    way everywhere; the flags are flags."""
    parser = parser_of(name, monkeypatch)
    for owner, action in walk(parser):
        names = set(action.option_strings)
        assert not names & RETIRED, f"{owner.prog}: {names & RETIRED} (see the vocabulary of eee.commands)"
        if "--format" in names:
            assert action.choices and set(action.choices) <= set(FINDINGS_FORMATS), (owner.prog, action.choices)
            assert action.default == "rich", owner.prog
        if "--jobs" in names:
            assert action.metavar == "N" and action.type("2") == 2, owner.prog
            with pytest.raises(argparse.ArgumentTypeError):
                action.type("0")
        if "--out" in names or "--manifest" in names:
            assert action.type is Path and action.metavar in ("FILE", "DIR"), owner.prog
        if names & FLAGS:
            assert isinstance(action, argparse._StoreTrueAction), f"{owner.prog}: {names} is a flag"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_subcommand_has_help(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for words, _leaf in leaves(parser_of(name, monkeypatch)):
        assert eee([name, *words, "--help"]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"usage: eee {' '.join((name, *words))}"), out[:80]


def _placeholders(parser: argparse.ArgumentParser) -> list[str]:
    """Arguments that get a parser past its required ones (the values need not exist)."""
    argv: list[str] = []
    for action in parser._actions:
        value = str(next(iter(action.choices))) if action.choices else "x"
        if not action.option_strings and action.nargs not in ("*", "?"):
            argv.append(value)
        elif action.option_strings and action.required:
            argv += [action.option_strings[0], value]
    return argv


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_missing_or_non_store_is_one_line_and_64(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "plain").mkdir()
    if name in READS_NO_STORE:
        return
    for words, leaf in leaves(parser_of(name, monkeypatch)):
        for store, says in ((tmp_path / "missing", "no such folder"), (tmp_path / "plain", "not a store")):
            argv = [name, *words, *_placeholders(leaf), "--store", str(store)]
            assert eee(argv) == EXIT_USAGE, argv
            captured = capsys.readouterr()
            assert captured.out == ""
            prog = " ".join(("eee", name, *words))
            assert captured.err.startswith(f"{prog}: error: --store {store}: {says}"), captured.err
            assert captured.err.count("\n") == 1, captured.err  # one line


def test_a_store_is_a_folder_with_data_governance_schemas_or_git(tmp_path: Path) -> None:
    from eee.commands import UsageError, checked_store, is_store

    assert not is_store(tmp_path)
    for marker in ("data", "governance", "schemas/registry.json", ".git"):
        store = tmp_path / marker.replace("/", "_")
        (store / marker).parent.mkdir(parents=True, exist_ok=True)
        if marker.endswith(".json"):
            (store / marker).write_text("{}")
        else:
            (store / marker).mkdir()
        assert is_store(store) and checked_store(store) == store.resolve()
    (tmp_path / "schemas_only" / "schemas").mkdir(parents=True)  # schemas/ without the registry: not a store
    with pytest.raises(UsageError, match="not a store"):
        checked_store(tmp_path / "schemas_only")


def test_an_unknown_command_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert eee(["retrct"]) == EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == "" and "did you mean 'retract'?" in captured.err
    assert eee(["mark-dup"]) == EXIT_USAGE
    assert "did you mean 'mark-duplicate'?" in capsys.readouterr().err
    assert eee(["zzzzzz"]) == EXIT_USAGE  # nothing close: the list of commands
    err = capsys.readouterr().err
    assert "did you mean" not in err and "validate" in err
    dev = subprocess.run([sys.executable, str(PROJECT / "tools" / "dev.py"), "rnu"], capture_output=True, text=True)
    assert dev.returncode == EXIT_USAGE and "did you mean 'run'?" in dev.stderr and dev.stdout == ""


def test_a_closed_pipe_ends_quietly() -> None:
    """`eee validate --format json data | head -1`, with a real pipe: the report is larger than
    the pipe, head leaves after one line, the validator ends without a traceback."""
    env = dict(os.environ, PYTHONPATH=str(PROJECT / "tools"))
    writer = subprocess.Popen(
        [sys.executable, "-m", "eee", "validate", "--format", "json", "data"],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert writer.stdout is not None and writer.stderr is not None
    head = subprocess.run(["head", "-1"], stdin=writer.stdout, capture_output=True, text=True)
    writer.stdout.close()
    err = writer.stderr.read().decode()
    writer.wait()
    assert head.stdout == "{\n"
    assert "Traceback" not in err and "BrokenPipeError" not in err and err == ""
    assert writer.returncode == EXIT_CLOSED_PIPE


OUTPUTS = [
    ["--help"],
    ["status", "--list"],
    ["status", "--list", "--format", "json"],
    ["validate", "data/reward-bench"],
    ["validate", "--format", "json", "data/reward-bench"],
]
CLOSED_PIPE_CASES = [
    *((argv, buffered) for argv in OUTPUTS for buffered in (False, True)),
    *(([name, "--help"], False) for name in sorted(COMMANDS)),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "buffered"),
    CLOSED_PIPE_CASES,
    ids=[" ".join(a) + (" (buffered)" if b else "") for a, b in CLOSED_PIPE_CASES],
)
def test_every_command_ends_quietly_on_a_closed_stdout(argv: list[str], buffered: bool) -> None:
    """Every command's output meets a pipe whose reader has already gone: exit 141, nothing
    on stderr (the closed pipe is handled once, in eee.cli.main), whether Python writes
    stdout through (PYTHONUNBUFFERED) or at exit."""
    read, write = os.pipe()
    os.close(read)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update(PYTHONPATH=str(PROJECT / "tools"), **({} if buffered else {"PYTHONUNBUFFERED": "1"}))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "eee", *argv], cwd=PROJECT, stdout=write, stderr=subprocess.PIPE, text=True, env=env
        )
    finally:
        os.close(write)
    assert proc.stderr == "" and proc.returncode == EXIT_CLOSED_PIPE, (proc.returncode, proc.stderr[-2000:])


def test_a_broken_pipe_of_a_child_process_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a closed stdout ends quietly: a BrokenPipeError from another pipe (a git process
    that died) is an error, raised as it is."""
    from eee.commands import validate

    def broken(argv: list[str]) -> int:
        raise BrokenPipeError("a pipe to a child process")

    monkeypatch.setattr(validate, "main", broken)
    read, write = os.pipe()  # stdout: a pipe whose reader is still there
    try:
        monkeypatch.setattr(sys, "stdout", os.fdopen(write, "w", closefd=False))
        with pytest.raises(BrokenPipeError):
            eee(["validate", "data"])
    finally:
        os.close(read)
        os.close(write)


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


def test_a_declared_action_is_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    """An action declared alone (eee.governance.declare) (issue 34.5: an "embargo", with no
    module of its own) is listed by `eee --help`, suggested for a typo, and runs as a command
    whose parser is built from its declaration."""
    import eee.governance as governance
    from eee import cli

    embargo = governance.Action(
        "embargo", "embargo", "hold a record back until a date (governance event)",
        "Hold a record back until a date.", "Embargo", "1.2.0", "required",
        what="embargo a record (an event)",
    )  # fmt: skip
    with governance.declare(embargo):
        assert cli.main(["--help"]) == 0
        listed = capsys.readouterr().out
        assert "  embargo " in listed and "hold a record back until a date (governance event)" in listed
        assert cli.main(["embargoo"]) == 64 and "did you mean 'embargo'" in capsys.readouterr().err
        assert cli.main(["embargo", "--help"]) == 0
        page = capsys.readouterr().out
        assert "usage: eee embargo" in page and "Hold a record back until a date." in page
        assert "--reference URL" in page and "--reason" in page  # reference "required", from the declaration
        assert cli.main(["embargo", "--reason", "x"]) == 64  # --reference is required
        assert "--reference" in capsys.readouterr().err
    assert "embargo" not in cli.commands()  # read from the declarations when asked, not kept
