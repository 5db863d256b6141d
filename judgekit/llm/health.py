"""What judgekit learns about one endpoint while a run goes on, and the outage policy.

Three rules, each per endpoint (one server URL, or one API route):

* **Stop on refusals, early or late.** Until an endpoint has answered once (or failed in a way
  that is no refusal: 429, 5xx, a timeout), at most ``STOP_AFTER`` requests are in flight on it
  (:meth:`EndpointHealth.enter`); the same non-transient refusal
  (``auth``, ``unknown_model``, ``bad_request``; see ``errors.py``) on its first ``STOP_AFTER``
  tasks sets :attr:`EndpointHealth.verdict`, one line, and the client stops the run rather than
  sending every other task to the same refusal (a few requests, not hundreds). An endpoint
  that has answered and then refuses (a key revoked mid-run: 401; a vLLM restarted with
  another served name: 404) is stopped the same way once ``STOP_AFTER_ANSWERED`` tasks in a
  row get the same refusal with no answer between (more than ``STOP_AFTER``: an endpoint known
  to work may refuse a few tasks for their own sake, a content filter's 400). The verdict
  names the endpoint (route and host), the status and the provider's message; no request is
  sent on the endpoint after it, and the tasks not sent stay unrecorded, so a rerun once the
  endpoint is fixed does them (``--retry-errors`` calls the refused ones again too).
* **Say when an endpoint ignores the schema.** When its first ``SCHEMA_AFTER`` answers all fail
  validation the same way (``malformed_json``, or ``schema`` off the JSON schema's shape)
  although the request asked for a schema (``json_schema``, ``json_object``),
  :meth:`EndpointHealth.on_answer` returns a warning, once: such servers (some proxies, older
  llama.cpp builds) ignore ``response_format`` (preflight's probe finds most of them before the
  run: ``schema_probe.py``). An answer valid under the JSON schema sent that fails only a check
  beyond it (``InvalidAnswer.off_schema`` False: five meanings not distinct, a text of spaces
  the answer model strips) followed the schema: the caller counts it as a conforming answer,
  and no warning names the server.
* **Outage policy.** An endpoint that has answered and then refuses or drops connections (a
  server restarting) is paused: no task spends its attempts on it. One probe
  (``GET /models``) runs with exponential back-off (0.25 s doubling to 5 s) until the server
  answers or ``outage_s`` seconds pass; then every waiting task resumes. Past the budget the
  tasks go back to their ordinary retries, and fail as ``error`` if it is still down.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from judgekit.errors import JudgekitError
from judgekit.llm.errors import ENDPOINT_KINDS, EndpointError, describe

STOP_AFTER = 3
STOP_AFTER_ANSWERED = 10  # the same refusal this many tasks in a row, after answers: stop
SCHEMA_AFTER = 5
_PROBE_FIRST_S = 0.25
_PROBE_MAX_S = 5.0
_SCHEMA_STRATEGIES = ("json_schema", "json_object")
_HINTS = {
    "auth": "check the key (api_key_env or api_key_file)",
    "unknown_model": "check the model name against the names the server serves",
    "bad_request": "check the model's parameters (extra, max_tokens, structured_output)",
}


class EndpointHealth:
    """The three rules of the module doc for one endpoint.

    Args:
        endpoint: the endpoint's id (``route@host``), for messages.
        outage_s: seconds an outage may last before tasks fail (0 = no pause).
        probe: coroutine function returning True once the server answers again (None: the
            endpoint has no server to probe, so it is never paused).
    """

    def __init__(
        self,
        endpoint: str,
        *,
        outage_s: float = 0.0,
        probe: Callable[[], Awaitable[bool]] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.outage_s = outage_s
        self.probe = probe
        self.notify: Callable[[str], None] | None = None  # told when an outage starts and ends
        self.answered = False
        self.answers = 0  # answers received (valid or not)
        self.verdict: str | None = None
        self.outages = 0  # outages seen (for tests and the summary)
        self.outage_seconds = 0.0  # time paused in all
        self._streak: tuple[tuple[str, int | None], int] | None = None
        self._answers: list[str | None] = []
        self._warned = False
        self._strategy: str | None = None
        self._last_failure: str | None = None
        self._up: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._exhausted = False
        self._prober: asyncio.Task[None] | None = None
        self._trying = 0  # requests in flight before the first answer
        self._open = False  # no more limit: it answered, or failed other than by refusing
        self._gate: asyncio.Condition | None = None

    # -- refusals and answers --------------------------------------------------------------
    def on_success(self) -> None:
        """The endpoint answered (valid or not): it works, whatever the answer says."""
        self.answered = self._open = True
        self.answers += 1
        self._streak = None
        self._exhausted = False

    def on_error(self, exc: EndpointError) -> str | None:
        """Count a failed attempt; returns :attr:`verdict` once the stop rule holds."""
        if exc.kind not in ENDPOINT_KINDS:
            self._open = self._open or exc.kind != "connection"  # a server that works, slowly
            return self.verdict
        key = (exc.kind, exc.status_code)
        count = self._streak[1] + 1 if self._streak and self._streak[0] == key else 1
        self._streak = (key, count)
        if count >= (STOP_AFTER_ANSWERED if self.answered else STOP_AFTER) and not self.verdict:
            status = f"HTTP {exc.status_code}, " if exc.status_code else ""
            since = f"after {self.answers} answers" if self.answered else "no answer yet"
            self.verdict = (
                f"endpoint {self.endpoint}: {describe(exc.kind)} ({status}{count} tasks in a row, "
                f"{since}): {exc}; {_HINTS[exc.kind]}. The run stops here; once fixed, run the "
                "same command again for the tasks not sent (add --retry-errors to call the "
                "refused ones again)"
            )
        return self.verdict

    def on_answer(self, strategy: str, failure: str | None) -> str | None:
        """Count one answer (``failure``: its validation reason, None if it validated);
        returns the warning of the module doc the one time it applies."""
        if self._warned or len(self._answers) >= SCHEMA_AFTER:
            return None
        self._answers.append(None if failure is None else failure.split(":", 1)[0])
        self._strategy, self._last_failure = strategy, failure
        if len(self._answers) < SCHEMA_AFTER or strategy not in _SCHEMA_STRATEGIES:
            return None
        kinds = set(self._answers)
        if len(kinds) != 1 or not kinds & {"malformed_json", "schema"}:
            return None
        self._warned = True
        return (
            f"endpoint {self.endpoint} does not follow the JSON schema (its first "
            f"{SCHEMA_AFTER} answers all failed validation: {failure}); "
            "set structured_output: prompt or tools"
        )

    def schema_warning(self) -> str | None:
        """At the end of a run with fewer than ``SCHEMA_AFTER`` answers on this endpoint: the
        warning of the module doc if every answer failed validation the same way (a small run
        names a non-conforming endpoint too), once; None otherwise."""
        if self._warned or not self._answers or self._strategy not in _SCHEMA_STRATEGIES:
            return None
        kinds = set(self._answers)
        if len(kinds) != 1 or not kinds & {"malformed_json", "schema"}:
            return None
        self._warned = True
        count = len(self._answers)
        return (
            f"endpoint {self.endpoint} does not follow the JSON schema (its {count} answers "
            f"all failed validation: {self._last_failure}); set structured_output: prompt or tools"
        )

    def check(self) -> None:
        """Raise the stop rule's verdict, if there is one (called before each request).

        Raises:
            JudgekitError: :attr:`verdict` (refused alike, early or late: nothing more is sent).
        """
        if self.verdict is not None:
            raise JudgekitError(self.verdict)

    # -- before the first answer ------------------------------------------------------------
    async def enter(self) -> bool:
        """Wait for one of the ``STOP_AFTER`` places of an endpoint that has not answered yet;
        True if one was taken (give it back with :meth:`leave`), False once the limit is off.

        Raises:
            JudgekitError: the stop rule's :attr:`verdict` (no request is sent after it).
        """
        self.check()
        if self._open:
            return False
        self._event()
        gate = self._gate
        assert gate is not None
        async with gate:
            await gate.wait_for(
                lambda: self._open or self.verdict is not None or self._trying < STOP_AFTER
            )
            if self.verdict is not None:
                raise JudgekitError(self.verdict)
            if self._open:
                return False
            self._trying += 1
            return True

    async def leave(self) -> None:
        """Give back the place :meth:`enter` took (everyone waiting may go once answered)."""
        gate = self._gate
        self._trying = max(0, self._trying - 1)
        if gate is not None:
            async with gate:
                gate.notify_all()

    # -- outages ---------------------------------------------------------------------------
    def _event(self) -> asyncio.Event:
        loop = asyncio.get_running_loop()
        if self._up is None or self._loop is not loop:  # a new event loop: a fresh state
            self._up, self._loop, self._prober = asyncio.Event(), loop, None
            self._gate, self._trying = asyncio.Condition(), 0
            self._up.set()
        return self._up

    def begin_outage(self) -> bool:
        """A connection failed: True if the endpoint is (now) paused and the caller should
        wait in :meth:`wait_ready` and try again; False if the policy does not apply (never
        answered, no probe, no budget, or the budget of this outage is spent)."""
        if self.probe is None or self.outage_s <= 0 or not self.answered or self._exhausted:
            return False
        up = self._event()
        if up.is_set():
            up.clear()
            self.outages += 1
            self._prober = asyncio.get_running_loop().create_task(self._probe_until_up(up))
        return True

    def _tell(self, message: str) -> None:
        if self.notify is not None:
            self.notify(message)

    async def wait_ready(self) -> float:
        """Wait while the endpoint is paused; returns the seconds waited."""
        if self._up is None or self._up.is_set():  # the path of every call: no outage
            return 0.0
        up = self._event()  # (a pause left by an earlier event loop does not hold this one)
        if up.is_set():
            return 0.0
        started = time.monotonic()
        await up.wait()
        return time.monotonic() - started

    async def _probe_until_up(self, up: asyncio.Event) -> None:
        started = time.monotonic()
        delay = _PROBE_FIRST_S
        told = False  # a connection dropped once (a stale keep-alive) is not worth a line
        assert self.probe is not None
        try:
            while (left := self.outage_s - (time.monotonic() - started)) > 0:
                await asyncio.sleep(min(delay, left))
                if await self.probe():
                    if told:
                        waited = time.monotonic() - started
                        self._tell(f"endpoint {self.endpoint} is back after {waited:.1f} s")
                    return
                if not told:
                    told = True
                    self._tell(
                        f"endpoint {self.endpoint} refuses connections: its tasks are paused "
                        f"while it is probed, for up to {self.outage_s:g} s (outage_s)"
                    )
                delay = min(delay * 2, _PROBE_MAX_S)
            self._exhausted = True  # tasks go back to their retries, and fail if still down
            self._tell(
                f"endpoint {self.endpoint} still refuses connections after {self.outage_s:g} s "
                "(outage_s): its tasks fail as error"
            )
        finally:
            self.outage_seconds += time.monotonic() - started
            up.set()
