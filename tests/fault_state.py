"""The fault server's request log, counters and phase (``tests/fault_server.py``).

A later phase, and holding answers
----------------------------------
``after=N, then=SPEC`` (``--after N --then SPEC``; ``POST /phase {"after": N, "then": SPEC}``
while serving) changes the server's behaviour from its ``N+1``-th chat request on: every
request then gets ``SPEC`` instead of its own directive, as a server does that starts refusing
mid-run (``then="401"``: a revoked key; ``then="404"``). ``then="hold"`` holds every such request
unanswered until the test releases them (``release()``, ``POST /release``): a run can then
never finish before the test has done what it meant to do while the run was going (send a
signal, kill it), however loaded the machine. Released requests are served by their own
directive; held ones are not counted as attempts (``held`` in ``/stats`` counts those waiting
now, ``held_total`` all); on shutdown they are answered 503 at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from bench_answers import message_hash
from fault_spec import Fault, parse_fault
from loopback_server import LoopbackServer

__all__ = ["FaultState", "RequestRecord"]


@dataclass
class RequestRecord:
    """One chat request as the server saw it (``kind`` is what it served)."""

    message_hash: str
    kind: str
    spec: str | None
    attempt: int
    model: str | None
    at: float


class FaultState(LoopbackServer):
    """What a fault server has seen (every chat request, per kind, path and message hash) and its
    phase (``after`` / ``then``, the held requests); the HTTP handlers are the subclass's."""

    def __init__(
        self,
        *,
        after: int | None = None,
        then: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        shutdown_timeout: float = 0.5,
    ) -> None:
        super().__init__(host=host, port=port, shutdown_timeout=shutdown_timeout)
        self.after, self.then = after, then
        self._lock = threading.Lock()
        self.probes = 0  # judgekit's preflight schema probes, counted apart
        self._attempts: Counter[tuple[str, str]] = Counter()
        self._counts: Counter[str] = Counter()
        self._paths: Counter[str] = Counter()
        self._records: list[RequestRecord] = []
        self._in_flight = 0
        self._chats = 0  # chat requests received, for the phase
        self._held = self._held_total = 0
        self._released: asyncio.Event | None = None
        self._closing: asyncio.Event | None = None

    # -- counters -----------------------------------------------------------------------------

    @property
    def total_requests(self) -> int:
        """Chat-completion requests received (``/v1/models``, ``/health``... not included)."""
        with self._lock:
            return len(self._records)

    @property
    def counts(self) -> Counter[str]:
        """Chat requests per kind served: ``ok``, ``latency``, ``429``, ``500``, ``hang``,
        ``malformed``, ``wrong_shape``, ``truncated``, ``bad_request``, ``error``..."""
        with self._lock:
            return Counter(self._counts)

    @property
    def message_hashes(self) -> list[str]:
        """The message hash of every chat request, in arrival order."""
        with self._lock:
            return [r.message_hash for r in self._records]

    @property
    def hash_counts(self) -> Counter[str]:
        with self._lock:
            return Counter(r.message_hash for r in self._records)

    @property
    def path_counts(self) -> Counter[str]:
        """Requests per path, every endpoint included."""
        with self._lock:
            return Counter(self._paths)

    @property
    def requests(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    @property
    def in_flight(self) -> int:
        """Chat requests being handled now (hung ones included)."""
        with self._lock:
            return self._in_flight

    def calls(self, messages: Any) -> int:
        """How many chat requests carried exactly these ``messages``."""
        target = message_hash(messages)
        with self._lock:
            return sum(1 for r in self._records if r.message_hash == target)

    @property
    def held(self) -> int:
        """Chat requests held now (``then="hold"``)."""
        with self._lock:
            return self._held

    def set_phase(self, after: int | None, then: str | None) -> None:
        """From the ``after+1``-th chat request on (counted from the start), serve ``then``
        (see the module doc); ``after=None`` ends the phase."""
        if then is not None and then != "hold":
            parse_fault(then)
        with self._lock:
            self.after, self.then = after, then

    def release(self) -> None:
        """End the phase and answer every held request (by its own directive)."""
        with self._lock:
            self.after = self.then = None
            loop, released = self._loop, self._released
            self._released = asyncio.Event()  # for a later hold
        if loop is not None and released is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(released.set)

    def stats(self) -> dict[str, Any]:
        """The ``GET /stats`` document."""
        with self._lock:
            records = list(self._records)
            return {
                "held": self._held,
                "probes": self.probes,
                "held_total": self._held_total,
                "total_requests": len(records),
                "counts": dict(self._counts),
                "message_hashes": [r.message_hash for r in records],
                "hash_counts": dict(Counter(r.message_hash for r in records)),
                "path_counts": dict(self._paths),
                "in_flight": self._in_flight,
                "requests": [asdict(r) for r in records],
            }

    def reset(self) -> None:
        """Forget all counters and ``xN`` attempt counts."""
        with self._lock:
            self._attempts.clear()
            self._counts.clear()
            self._paths.clear()
            self._records.clear()
            self._chats = 0
            self.probes = 0

    def _record(
        self, digest: str, fault: Fault | None, kind: str, model: Any, task: str | None = None
    ) -> str:
        """Count an attempt; return the kind to serve (``ok`` once ``xN`` is used up)."""
        with self._lock:
            attempt = 0
            if fault is not None:
                key = (fault.spec, task or digest)
                self._attempts[key] += 1
                attempt = self._attempts[key]
                if fault.times is not None and attempt > fault.times:
                    kind = "ok"
            self._counts[kind] += 1
            self._records.append(
                RequestRecord(
                    digest,
                    kind,
                    None if fault is None else fault.spec,
                    attempt,
                    model if isinstance(model, str) else None,
                    time.time(),
                )
            )
            return kind

    def _phase_now(self) -> tuple[str | None, asyncio.Event | None]:
        """The ``then`` of the phase if this chat request falls in it (counted), and the event
        that releases it if it is held."""
        with self._lock:
            self._chats += 1
            if self.after is None or self.then is None or self._chats <= self.after:
                return None, None
            if self.then == "hold":
                self._held += 1
                self._held_total += 1
            return self.then, self._released

    async def _hold(self, released: asyncio.Event | None) -> bool:
        """Wait until released; True if the server is shutting down instead."""
        closing = self._closing
        assert closing is not None and released is not None
        try:
            stop = asyncio.ensure_future(closing.wait())
            done = asyncio.ensure_future(released.wait())
            await asyncio.wait({stop, done}, return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            done.cancel()
            return closing.is_set()
        finally:
            with self._lock:
                self._held -= 1

    async def _sleep(self, seconds: float) -> bool:
        """Sleep ``seconds``; return True at once if the server is shutting down."""
        closing = self._closing
        assert closing is not None
        if seconds <= 0 or closing.is_set():
            return closing.is_set()
        try:
            await asyncio.wait_for(closing.wait(), seconds)
        except TimeoutError:
            return False
        return True
