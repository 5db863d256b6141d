"""Stopping a run on SIGTERM the way Ctrl-C stops it, in the foreground and in the background.

A shell script that starts ``judgekit run ... &`` (as batch schedulers and CI do) starts the job
with SIGINT ignored, so a SIGTERM turned into a SIGINT would be ignored too, and the run would
go on sending every request. The command line's SIGTERM handler calls :func:`request_stop`
instead, which needs no SIGINT: inside a run (an event loop started by :func:`run_stoppable`)
it cancels the run's main task, as asyncio does on Ctrl-C, so the calls in flight are
cancelled, the records written so far stay and the run raises ``KeyboardInterrupt`` once its
tasks have unwound; outside a run (reading inputs, writing the report) it raises
``KeyboardInterrupt`` at once. A second request while the first unwinds also raises at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class _Run:
    loop: asyncio.AbstractEventLoop
    task: asyncio.Task[Any]
    stopping: bool = False


_RUNS: list[_Run] = []  # the runs of this process now going, innermost last


def run_stoppable(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, stopped by :func:`request_stop` as Ctrl-C stops it.

    Raises:
        KeyboardInterrupt: the run was stopped by :func:`request_stop` (or by Ctrl-C).
    """
    run: list[_Run] = []

    async def main() -> T:
        current = asyncio.current_task()
        assert current is not None
        run.append(_Run(asyncio.get_running_loop(), current))
        _RUNS.append(run[0])
        try:
            return await coro
        finally:
            _RUNS.remove(run[0])

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if run and run[0].stopping:
            raise KeyboardInterrupt from None
        raise


def request_stop() -> None:
    """Stop the run going on (see the module doc); safe to call from a signal handler.

    Raises:
        KeyboardInterrupt: no run is going on, or one was asked to stop already.
    """
    if not _RUNS or _RUNS[-1].stopping:
        raise KeyboardInterrupt
    run = _RUNS[-1]
    run.stopping = True
    run.loop.call_soon_threadsafe(run.task.cancel)
