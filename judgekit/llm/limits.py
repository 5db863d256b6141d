"""Per-endpoint admission: an adaptive in-flight limit, rpm/tpm buckets and Retry-After pauses.

Every endpoint (one server URL, or one API route) has one :class:`EndpointLimiter`. A call holds
one in-flight slot per attempt (never while it sleeps in back-off). On HTTP 429 the in-flight
limit halves (not below ``floor``) and new calls wait out the server's ``Retry-After``; each
run of ``limit`` successes then raises it by one, back up to its ceiling (additive increase,
multiplicative decrease, as TCP does). As in TCP, the 429s of calls that were already in flight
when the limit shrank count as the same event: one halving (and one pause) per window. rpm and
tpm use aiolimiter's leaky buckets. No thread per call: everything is awaited on the event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

from aiolimiter import AsyncLimiter


class EndpointLimiter:
    """Admission control for one endpoint.

    Args:
        ceiling: most calls in flight (>= 1); the limit starts there.
        adaptive: shrink on 429 and recover on success (False = a fixed limit).
        rpm: requests per minute (None = unlimited).
        tpm: tokens per minute, counted on the estimate given to :meth:`acquire`.
        floor: the adaptive limit never goes below this (default a quarter of the ceiling:
            harder limits are met by the Retry-After pauses and the rpm/tpm buckets).
    """

    def __init__(
        self,
        ceiling: int,
        *,
        adaptive: bool = True,
        rpm: int | None = None,
        tpm: int | None = None,
        floor: int | None = None,
    ) -> None:
        if ceiling < 1:
            raise ValueError("ceiling must be >= 1")
        self.ceiling = ceiling
        self.floor = max(1, min(ceiling // 4 if floor is None else floor, ceiling))
        self.adaptive = adaptive
        self.limit = ceiling
        self.in_flight = 0
        self.rate_limited = 0  # 429s seen
        self.min_limit = ceiling  # lowest limit reached (for tests and the summary)
        self._successes = 0
        self._completed = 0  # calls released so far
        self._window_end = 0  # 429s before this many completions belong to the last event
        self._paused_until = 0.0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._rpm = AsyncLimiter(rpm, 60) if rpm else None
        self._tpm = AsyncLimiter(tpm, 60) if tpm else None
        self._tpm_max = float(tpm or 0)

    @property
    def has_tpm(self) -> bool:
        """Whether a tokens-per-minute bucket applies (callers then estimate tokens)."""
        return self._tpm is not None

    async def acquire(self, tokens: int = 0) -> None:
        """Wait for a slot (and for the rpm/tpm buckets and any Retry-After pause)."""
        pause = self._paused_until - time.monotonic()
        if pause > 0:
            await asyncio.sleep(pause)
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
        else:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter  # _wake hands the slot over: in_flight already counts it
            except BaseException:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif waiter.done() and not waiter.cancelled():
                    self.release()  # a slot was handed over as we were cancelled
                raise
        try:
            pause = self._paused_until - time.monotonic()
            if pause > 0:  # a 429 arrived while we waited
                await asyncio.sleep(pause)
            if self._rpm is not None:
                await self._rpm.acquire()
            if self._tpm is not None and tokens > 0:
                await self._tpm.acquire(min(float(tokens), self._tpm_max))
        except BaseException:
            self.release()
            raise

    def release(
        self,
        *,
        ok: bool | None = None,
        rate_limited: bool = False,
        retry_after: float | None = None,
    ) -> None:
        """Give the slot back; ``ok`` counts towards recovery, ``rate_limited`` shrinks the
        limit and pauses new calls for ``retry_after`` seconds (if given)."""
        self.in_flight = max(0, self.in_flight - 1)
        self._completed += 1
        if rate_limited:
            self.on_rate_limited(retry_after)
        elif ok and self.adaptive and self.limit < self.ceiling:
            self._successes += 1
            if self._successes >= self.limit:
                self._successes = 0
                self.limit += 1
        self._wake()

    def on_rate_limited(self, retry_after: float | None = None) -> None:
        """A 429: halve the in-flight limit (adaptive) and pause for ``retry_after`` seconds,
        once per window (calls in flight at the last halving do not halve it again)."""
        self.rate_limited += 1
        if self._completed < self._window_end:
            return
        self._window_end = self._completed + self.in_flight + 1
        if self.adaptive:
            self.limit = max(self.floor, self.limit // 2)
            self.min_limit = min(self.min_limit, self.limit)
            self._successes = 0
        if retry_after:
            self._paused_until = max(self._paused_until, time.monotonic() + retry_after)

    def _wake(self) -> None:
        while self.in_flight < self.limit and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)
