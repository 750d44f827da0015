"""``eee flag``: see :mod:`eee.commands.governance`."""

from eee.commands.governance import run


def main(argv: list[str]) -> int:
    return run("flag", argv)
