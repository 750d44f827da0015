"""A progress bar for long runs, shown on a terminal only, on stderr (reports keep stdout)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

MIN_TOTAL = 200


@contextmanager
def bar(label: str, min_total: int = MIN_TOTAL) -> Iterator[Callable[[int, int], None]]:
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
