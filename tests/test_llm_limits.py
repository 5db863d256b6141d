"""Per-endpoint admission: in-flight limit, adaptive back-off on 429, Retry-After, rpm/tpm."""

from __future__ import annotations

import asyncio
import time

from aiolimiter import AsyncLimiter

from judgekit.llm.limits import EndpointLimiter


def test_in_flight_limit_is_held_and_handed_over_in_order() -> None:
    async def go() -> list[int]:
        limiter = EndpointLimiter(2, adaptive=False)
        order: list[int] = []

        async def one(i: int) -> None:
            await limiter.acquire()
            assert limiter.in_flight <= 2
            order.append(i)
            await asyncio.sleep(0.01)
            limiter.release(ok=True)

        await asyncio.gather(*(one(i) for i in range(6)))
        return order

    assert asyncio.run(go()) == list(range(6))


def test_429_halves_once_per_window_then_recovers() -> None:
    async def go() -> EndpointLimiter:
        limiter = EndpointLimiter(16)  # floor: a quarter of the ceiling
        for _ in range(8):
            await limiter.acquire()
        limiter.release(rate_limited=True)  # 7 still in flight: they were sent at limit 16
        assert limiter.limit == 8
        for _ in range(3):
            limiter.release(rate_limited=True)  # same window: no further halving
        assert limiter.limit == 8 and limiter.rate_limited == 4
        for _ in range(4):
            limiter.release(ok=True)
        await limiter.acquire()
        limiter.release(rate_limited=True)  # a new window
        assert limiter.limit == 4 == limiter.floor  # never below the floor
        await limiter.acquire()
        limiter.release(rate_limited=True)
        assert limiter.limit == 4 and limiter.min_limit == 4
        for _ in range(4 + 5 + 6):  # additive increase: +1 per `limit` successes
            await limiter.acquire()
            limiter.release(ok=True)
        return limiter

    limiter = asyncio.run(go())
    assert limiter.limit == 7 and limiter.in_flight == 0


def test_retry_after_pauses_new_calls() -> None:
    async def go() -> float:
        limiter = EndpointLimiter(4)
        await limiter.acquire()
        limiter.release(rate_limited=True, retry_after=0.2)
        start = time.monotonic()
        await limiter.acquire()
        return time.monotonic() - start

    assert asyncio.run(go()) >= 0.19


def test_fixed_limit_when_not_adaptive() -> None:
    limiter = EndpointLimiter(8, adaptive=False)
    limiter.on_rate_limited()
    assert limiter.limit == 8


def test_rpm_and_tpm_buckets_are_awaited() -> None:
    async def go() -> float:
        limiter = EndpointLimiter(10, rpm=60, tpm=1000)
        assert limiter.has_tpm
        limiter._rpm = AsyncLimiter(2, 0.2)  # 2 requests per 0.2 s: the same bucket, faster
        start = time.monotonic()
        for _ in range(5):
            await limiter.acquire(tokens=10)
            limiter.release(ok=True)
        return time.monotonic() - start

    assert asyncio.run(go()) >= 0.25


def test_cancelled_waiter_does_not_leak_a_slot() -> None:
    async def go() -> int:
        limiter = EndpointLimiter(1, adaptive=False)
        await limiter.acquire()
        waiter = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        limiter.release(ok=True)
        await asyncio.wait_for(limiter.acquire(), 1)
        return limiter.in_flight

    assert asyncio.run(go()) == 1
