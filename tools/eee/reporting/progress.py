"""Progress of long runs, on stderr (reports keep stdout): a bar on a terminal; plain lines
when the pipeline asks for them (its stages run under DVC, whose output is no terminal).

``eee pipeline`` sets ``EEE_PROGRESS_LINES=1`` for the stages it runs: a long phase of a
stage then prints ``[progress] what: done/total`` lines (at most one every
:data:`EVERY` seconds, and the last one), which the pipeline shows as they come.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

MIN_TOTAL = 200
ENV = "EEE_PROGRESS_LINES"  # set by `eee pipeline` for its stages
PREFIX = "[progress] "  # a progress line, as the pipeline recognises it
EVERY = 2.0  # seconds between two progress lines

Update = Callable[[int, int], None]


def lines_wanted() -> bool:
    """Whether the pipeline asked for progress lines (:data:`ENV`)."""
    return os.environ.get(ENV, "") not in ("", "0")


def note(text: str) -> None:
    """One progress line (a phase that starts), when the pipeline asked for them."""
    if lines_wanted():
        print(PREFIX + text, file=sys.stderr, flush=True)


def lines(label: str, every: float = EVERY) -> Update:
    """An ``update(done, total)`` that prints ``[progress] label: done/total`` at most every
    ``every`` seconds, and when ``done`` reaches ``total``."""
    last = time.monotonic()

    def update(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if done < total and now - last < every:
            return
        last = now
        print(f"{PREFIX}{label}: {done:,}/{total:,}", file=sys.stderr, flush=True)

    return update


@contextmanager
def shown(label: str, tty: bool | None = None, min_total: int = MIN_TOTAL) -> Iterator[Update | None]:
    """The progress of a long run: a bar when stderr is a terminal (``tty``, default: asked
    of stderr), lines when the pipeline asked for them, else None (nothing shown)."""
    if tty is None:
        tty = sys.stderr.isatty()
    if tty:
        with bar(label, min_total) as update:
            yield update
    elif lines_wanted():
        yield lines(label)
    else:
        yield None


@contextmanager
def bar(label: str, min_total: int = MIN_TOTAL) -> Iterator[Update]:
    from rich.console import Console
    from rich.progress import (  # lazy: rich costs ~90 ms; only a shown progress bar needs it
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if total < min_total:
            return
        if task is None:
            progress.start()
            task = progress.add_task(label, total=total)
        progress.update(task, completed=done, total=total)

    try:
        yield update
    finally:
        if task is not None:
            progress.stop()
