"""Progress of ``judgekit run``: a live rich bar on a terminal, plain log lines elsewhere.

When output goes to a file or a pipe (a batch job, ``nohup``, CI), a live bar is never redrawn
and its last frame is cut to the console width; :class:`LineProgress` prints instead one whole
line every ``every_s`` seconds and one when the run ends, for example::

    spilling: 120/400 (30%) requests 310; ok 280 unscored 30 error 0 cached 0; ... 2m05s
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text


class LineProgress:
    """The part of :class:`rich.progress.Progress` that ``judgekit run`` uses, printed as plain
    lines (no markup read into the text).

    Args:
        console: where the lines go.
        every_s: seconds between two lines while the run goes on (> 0).
    """

    def __init__(self, console: Console, every_s: float = 30.0) -> None:
        self.console = console
        self.every_s = every_s
        self._tasks: dict[int, dict[str, Any]] = {}
        self._last = 0.0

    def __enter__(self) -> LineProgress:
        self._last = time.monotonic()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for task_id in self._tasks:
            self._print(task_id)

    def add_task(self, description: str, total: float | None = None, **fields: Any) -> TaskID:
        """A new task (``fields`` as in rich: ``stats=...``)."""
        task_id = len(self._tasks)
        self._tasks[task_id] = {
            "description": description,
            "total": total,
            "completed": 0.0,
            "started": time.monotonic(),
            **fields,
        }
        return TaskID(task_id)

    def update(self, task_id: TaskID, **fields: Any) -> None:
        """Set fields of a task (``stats=...``); prints a line if ``every_s`` has passed."""
        self._tasks[task_id].update(fields)
        self._maybe_print(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        """Count ``advance`` more completed steps; prints a line if ``every_s`` has passed."""
        self._tasks[task_id]["completed"] += advance
        self._maybe_print(task_id)

    def _maybe_print(self, task_id: int) -> None:
        now = time.monotonic()
        if now - self._last >= self.every_s:
            self._last = now
            self._print(task_id)

    def _print(self, task_id: int) -> None:
        task = self._tasks[task_id]
        done, total = task["completed"], task["total"]
        share = f" ({done / total:.0%})" if total else ""
        minutes, seconds = divmod(int(time.monotonic() - task["started"]), 60)
        line = f"{task['description']}: {done:.0f}/{total or '?'}{share} {task.get('stats', '')}"
        self.console.print(Text(f"{line.rstrip()} {minutes}m{seconds:02d}s"), soft_wrap=True)


def run_progress(console: Console) -> Progress | LineProgress:
    """A live bar (description, bar, done/total, stats, elapsed, remaining) when ``console``
    is a terminal, else a :class:`LineProgress`."""
    if not console.is_terminal:
        return LineProgress(console)
    return Progress(
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(bar_width=20),  # room for the counts on an 80-column terminal
        MofNCompleteColumn(),
        TextColumn(  # the counts give way first on a narrow terminal
            "{task.fields[stats]}",
            markup=False,
            table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis"),
        ),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        expand=True,  # the counts' column takes what is left, and only it is cut
    )
