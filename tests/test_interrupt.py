"""SIGTERM's way of stopping a run (``judgekit.interrupt``): the run's main task is cancelled,
as Ctrl-C does, with no SIGINT involved (a background job has SIGINT ignored)."""

from __future__ import annotations

import asyncio
import signal

import pytest

from judgekit.interrupt import request_stop, run_stoppable


def test_a_stop_request_cancels_the_run_and_raises_keyboard_interrupt() -> None:
    unwound: list[str] = []

    async def run() -> None:
        asyncio.get_running_loop().call_later(0.01, request_stop)  # as the SIGTERM handler does
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            unwound.append("cancelled")  # the run's own clean-up runs
            raise
        finally:
            unwound.append("finally")

    with pytest.raises(KeyboardInterrupt):
        run_stoppable(run())
    assert unwound == ["cancelled", "finally"]


def test_a_stop_request_outside_a_run_or_a_second_one_raises_at_once() -> None:
    with pytest.raises(KeyboardInterrupt):
        request_stop()
    seen: list[str] = []

    async def run() -> None:
        request_stop()
        try:
            request_stop()  # a second request while the first unwinds
        except KeyboardInterrupt:
            seen.append("at once")
        await asyncio.sleep(3600)

    with pytest.raises(KeyboardInterrupt):
        run_stoppable(run())
    assert seen == ["at once"]


def test_sigterm_with_sigint_ignored_still_stops_the_run() -> None:
    """The background job's case, in this process: SIGINT ignored, SIGTERM handled directly."""
    old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
    old_term = signal.signal(signal.SIGTERM, lambda *_: request_stop())
    try:

        async def run() -> str:
            asyncio.get_running_loop().call_later(0.01, signal.raise_signal, signal.SIGTERM)
            await asyncio.sleep(3600)
            return "ran to the end"

        with pytest.raises(KeyboardInterrupt):
            run_stoppable(run())
        assert run_stoppable(asyncio.sleep(0, "done")) == "done"  # and the next run is fine
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
