"""A real OpenAI-compatible HTTP server that injects faults, for tests of real judgekit runs.

Endpoints: ``GET /v1/models``, ``POST /v1/chat/completions`` (non-streaming; also served without
the ``/v1`` prefix), ``GET /health``, ``GET /stats`` and ``POST /reset``.

Choosing the fault
------------------
Each chat request's behaviour comes from a *directive*: the first token ``[[fault:SPEC]]`` in the
last user message, or else the server's ``default_fault`` (``"ok"`` unless set). ``SPEC`` is::

    ok | latency=S | 429 | 500 | <any status 400-599> | hang | malformed | wrong_shape | truncated

optionally followed by ``xN``: fault only for the first ``N`` attempts of this task, then
answer correctly (``[[fault:500x2]]``, ``[[fault:latency=0.2x1]]``). Attempts are counted on the
server per (directive, hash of the first user message), so a re-ask counts as an attempt; the
directive is looked for in the last user message that has one, so re-asks meet it too. A ``=S``
value means: seconds of latency for ``ok`` / ``latency``, the ``Retry-After`` seconds for a
status code (429 always sends one, ``retry_after`` by default), and the hang length for ``hang``.

* ``429``: ``Retry-After`` header and an OpenAI-style error body; other codes: an error body.
* ``hang``: waits ``hang_seconds`` (default 30, longer than any client timeout) without blocking
  other requests, then answers 504; on server shutdown it is released at once (503).
* ``malformed``: HTTP 200 whose content is not JSON (``{"valid": [true, fal``).
* ``wrong_shape``: HTTP 200 with valid JSON of the wrong shape (``{"answer": "yes"}``).
* ``truncated``: HTTP 200, ``finish_reason: "length"``, the correct answer cut in half.
* ``ok`` / ``latency=S``: a correct answer after ``default_latency`` / ``S`` seconds.
* a reply mode of ``tests/reply_shapes.py`` (``think``, ``reasoning_only``, ``content_filter``,
  ``error_body``, ``reasoning_length``, ``ctx_vllm``, ``tool_object``...): that exact reply,
  built around the correct answer.

``param_rules`` (``--param-rules JSON``: name -> the one value allowed) makes the server
answer OpenAI's 400 to a request with another value, as o3-mini does to ``temperature: 0``.

``default_latency`` is applied before every answer except ``hang`` and ``latency=S``.

judgekit's preflight schema probe (a chat request with the header ``X-Judgekit-Probe``) gets a
correct answer for its schema whatever the directives, phase and ``param_rules`` (with
``answer_probes=True``, ``answer_fn``'s answer: a server made to ignore the schema ignores it
for the probe too), and is counted apart (``probes`` in ``/stats``): the counts of a test's own
tasks, and of its ``answer_fn``'s calls, are the same with or without it.

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

Model names
-----------
By default the server answers whatever ``model`` a request names, as llama.cpp does, and its
``GET /v1/models`` says so as llama.cpp does (one entry, ``owned_by: "llamacpp"``). With
``served_models=[...]`` it behaves as vLLM does: ``/v1/models`` lists those names
(``owned_by: "vllm"``) and a chat request for any other name gets vLLM's 404 ("The model `x`
does not exist.").

A correct answer is valid JSON for the schema the client asked for (``response_format``
``json_schema`` or ``json_object`` + ``schema``, ``guided_json``, or a forced tool call), produced
deterministically from a hash of the messages (see ``bench/latency_server.py``, which holds the
shared generator), or an echo of the last user message when no schema was asked for.
``answer_fn(request_json) -> str | None`` may override the content of correct answers;
``logprobs_fn(request_json, content)`` gives the ``logprobs`` of a choice whose request asked
for them (``logprobs: true``; without it the server gives none, as some providers do).

Usage
-----
In-process (a background thread with its own event loop)::

    with FaultServer(default_latency=0.02) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="x")
        ...
        assert srv.total_requests == 3 and srv.counts["500"] == 1

As a separate process (for kill -9 / restart tests)::

    python tests/fault_server.py --port 0 --port-file F [--default-latency S] [--default-fault K]

or from Python, ``with FaultServerProcess(default_latency=0.02) as proc: proc.base_url``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from aiohttp import web


def _load_shared() -> Any:
    """Import ``bench/latency_server.py`` (home of the shared answer logic) by its path."""
    name = "latency_server"
    module = sys.modules.get(name)
    if module is not None and hasattr(module, "schema_instance"):
        return module
    path = Path(__file__).resolve().parents[1] / "bench" / "latency_server.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


_shared = _load_shared()
sys.path.insert(0, str(Path(__file__).resolve().parent))
from reply_shapes import SHAPES, reject_params  # noqa: E402

SchemaError = _shared.SchemaError
OutputSpec = _shared.OutputSpec
schema_instance = _shared.schema_instance
output_spec = _shared.output_spec
message_hash = _shared.message_hash
PROBE_HEADER = "X-Judgekit-Probe"  # judgekit.llm.schema_probe.PROBE_HEADER
last_user_text = _shared.last_user_text
correct_content = _shared.correct_content

__all__ = [
    "MALFORMED_CONTENT",
    "WRONG_SHAPE_CONTENT",
    "Fault",
    "FaultServer",
    "FaultServerProcess",
    "expected_answer",
    "find_directive",
    "message_hash",
    "parse_fault",
    "schema_instance",
    "wait_for_port_file",
]

DEFAULT_MODEL = "fault-model"
MALFORMED_CONTENT = '{"valid": [true, fal'
WRONG_SHAPE_CONTENT = '{"answer": "yes"}'

_NAMED_KINDS = ("ok", "latency", "hang", "malformed", "wrong_shape", "truncated", *SHAPES)
_SPEC = re.compile(r"([a-z_]+|\d{3})(?:=(\d*\.?\d+))?(?:x(\d+))?", re.IGNORECASE)
_DIRECTIVE = re.compile(r"\[\[fault:([^\]]*)\]\]", re.IGNORECASE)

_ERROR_TYPES = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "permission_denied"),
    404: ("not_found_error", "model_not_found"),
    408: ("timeout_error", "timeout"),
    409: ("conflict_error", "conflict"),
    422: ("invalid_request_error", "unprocessable_entity"),
    429: ("requests", "rate_limit_exceeded"),
}


@dataclass(frozen=True)
class Fault:
    """A parsed directive: ``kind`` (``"ok"``, ``"latency"``, ``"429"``, ``"hang"``...), its
    ``value`` (seconds, see the module doc), ``times`` (``xN``; ``None`` = every attempt) and
    ``spec``, its canonical text (attempts are counted per ``spec`` and message hash)."""

    kind: str
    value: float | None = None
    times: int | None = None
    spec: str = "ok"


def parse_fault(text: str) -> Fault:
    """Parse ``"500x2"``, ``"latency=0.2"``, ``"[[fault:hang]]"``...; ``ValueError`` if bad."""
    text = text.strip()
    directive = _DIRECTIVE.fullmatch(text)
    if directive:
        text = directive.group(1).strip()
    match = _SPEC.fullmatch(text)
    if not match:
        raise ValueError(f"bad fault directive {text!r}")
    kind, value, times = match.group(1).lower(), match.group(2), match.group(3)
    if kind.isdigit():
        if not 400 <= int(kind) <= 599:
            raise ValueError(f"fault status must be 400-599, got {kind}")
    elif kind not in _NAMED_KINDS:
        raise ValueError(f"unknown fault kind {kind!r} (known: {', '.join(_NAMED_KINDS)}, 4xx/5xx)")
    if kind == "latency" and value is None:
        raise ValueError("latency needs a value: latency=SECONDS")
    spec = kind + (f"={value}" if value is not None else "") + (f"x{times}" if times else "")
    return Fault(kind, None if value is None else float(value), int(times) if times else None, spec)


def find_directive(messages: Any) -> Fault | None:
    """The first ``[[fault:...]]`` directive in the last user message that has one, if any.

    Earlier user messages count too, so a client's re-ask (the original messages plus its
    answer and a correction) still meets the same fault.
    """
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            match = _DIRECTIVE.search(last_user_text([message]))
            if match:
                return parse_fault(match.group(1))
    return None


def task_hash(messages: Any) -> str:
    """Hash of the first user message: one task's identity across its re-asks, so ``xN`` counts
    attempts of a task, re-asks included."""
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and message.get("role") == "user":
            return message_hash([message])
    return message_hash(messages)


def expected_answer(request: dict) -> str:
    """The content a :class:`FaultServer` (without ``answer_fn``) gives as a correct answer."""
    messages = request.get("messages")
    return correct_content(request, int(message_hash(messages), 16))


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@dataclass
class RequestRecord:
    """One chat request as the server saw it (``kind`` is what it served)."""

    message_hash: str
    kind: str
    spec: str | None
    attempt: int
    model: str | None
    at: float


class FaultServer:
    """An OpenAI-compatible fault-injecting server (see the module doc).

    Use as a context manager (or ``start()`` / ``stop()``); it runs in a daemon thread with its
    own event loop, bound to ``host`` on ``port`` (0 = a free port). ``default_fault``,
    ``default_latency``, ``retry_after``, ``hang_seconds`` and ``answer_fn`` are plain
    attributes, read per request, so a test may change them while the server runs.
    """

    def __init__(
        self,
        *,
        default_fault: str = "ok",
        default_latency: float = 0.0,
        retry_after: float = 1.0,
        hang_seconds: float = 30.0,
        answer_fn: Callable[[dict], str | None] | None = None,
        model: str = DEFAULT_MODEL,
        host: str = "127.0.0.1",
        port: int = 0,
        shutdown_timeout: float = 0.5,
        served_models: list[str] | None = None,
        after: int | None = None,
        then: str | None = None,
        param_rules: dict[str, Any] | None = None,
        logprobs_fn: Callable[[dict, str], Any] | None = None,
        answer_probes: bool = False,
    ) -> None:
        self.param_rules = param_rules or {}
        self.answer_probes = answer_probes
        parse_fault(default_fault)  # fail early on a typo
        self.logprobs_fn = logprobs_fn
        self.served_models = served_models
        self.after, self.then = after, then
        if then is not None and then != "hold":
            parse_fault(then)
        self.default_fault = default_fault
        self.default_latency = default_latency
        self.retry_after = retry_after
        self.hang_seconds = hang_seconds
        self.answer_fn = answer_fn
        self.model = model
        self.system_fingerprint: str | None = None  # sent with every answer where set
        self.host = host
        self.port = port
        self.shutdown_timeout = shutdown_timeout
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
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._started = threading.Event()
        self._start_error: BaseException | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``, for ``openai.OpenAI(base_url=...)`` and litellm's api_base."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (no ``/v1``)."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> FaultServer:
        if self._thread is not None:
            raise RuntimeError("FaultServer already started")
        self._started.clear()
        self._start_error = None
        self._thread = threading.Thread(target=self._thread_main, name="fault-server", daemon=True)
        self._thread.start()
        if not self._started.wait(timeout):
            raise RuntimeError("FaultServer did not start in time")
        if self._start_error is not None:
            self._thread.join(timeout)
            self._thread = None
            raise self._start_error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving; hung and sleeping requests are released at once."""
        thread, loop, stop = self._thread, self._loop, self._stop_event
        if thread is None:
            return
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(stop.set)
        thread.join(timeout)
        if thread.is_alive():
            raise RuntimeError("FaultServer thread did not stop in time")
        self._thread = None

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported to start()
            if not self._started.is_set():
                self._start_error = exc
                self._started.set()
            else:
                traceback.print_exc()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        runner, self.port = await _shared.start_runner(
            self.make_app(), self.host, self.port, self.shutdown_timeout
        )
        self._started.set()
        try:
            await self._stop_event.wait()
        finally:
            await runner.cleanup()

    def serve_cli(self, port_file: str | None = None) -> None:
        """Serve in this process until SIGINT/SIGTERM (the ``python tests/fault_server.py`` way)."""
        app = self.make_app()

        def started(port: int) -> None:
            self.port = port

        asyncio.run(
            _shared.run_cli_server(
                app,
                host=self.host,
                port=self.port,
                port_file=port_file,
                shutdown_timeout=self.shutdown_timeout,
                on_started=started,
            )
        )

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

    # -- HTTP ---------------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024, middlewares=[self._count_paths])
        for prefix in ("/v1", ""):
            app.router.add_get(prefix + "/models", self._models)
            app.router.add_post(prefix + "/chat/completions", self._chat)
        app.router.add_get("/health", self._health)
        app.router.add_get("/stats", self._stats)
        app.router.add_post("/reset", self._reset)
        app.router.add_post("/phase", self._phase)
        app.router.add_post("/release", self._release)
        app.on_startup.append(self._on_startup)
        app.on_shutdown.append(self._on_shutdown)
        return app

    async def _on_startup(self, app: web.Application) -> None:
        self._closing = asyncio.Event()
        self._released = asyncio.Event()
        self._loop = asyncio.get_running_loop()

    async def _on_shutdown(self, app: web.Application) -> None:
        if self._closing is not None:
            self._closing.set()

    @web.middleware
    async def _count_paths(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.headers.get(PROBE_HEADER):
            return await handler(request)
        with self._lock:
            self._paths[request.path] += 1
        return await handler(request)

    def _probe_answer(self, body: dict) -> web.Response:
        """judgekit's preflight probe: a correct answer, counted apart (module doc)."""
        with self._lock:
            self.probes += 1
        model = body.get("model")
        if self.served_models is not None and model not in self.served_models:
            return self._error_response(404, f"The model `{model}` does not exist.")
        spec = output_spec(body)
        seed = int(message_hash(body.get("messages")), 16)
        content = None
        if self.answer_probes and self.answer_fn is not None:
            content = self.answer_fn(body)
        if content is None:
            content = correct_content(body, seed, spec)
        reply = _shared.chat_completion(
            content, model=model if isinstance(model, str) and model else self.model, spec=spec,
            finish_reason="stop", prompt_tokens=_shared.prompt_tokens(body), completion_tokens=None,
        )  # fmt: skip
        return web.json_response(reply)

    async def _models(self, request: web.Request) -> web.Response:
        if self.served_models is None:  # any name is answered, as llama.cpp does
            body = _shared.models_body(self.model)
            body["data"][0]["owned_by"] = "llamacpp"
        else:  # only these names, as vLLM does
            body = {
                "object": "list",
                "data": [
                    {"id": name, "object": "model", "created": 0, "owned_by": "vllm"}
                    for name in self.served_models
                ],
            }
        return web.json_response(body)

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response({"status": "ok"})

    async def _phase(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.set_phase(body.get("after"), body.get("then"))
        return web.json_response({"status": "ok"})

    async def _release(self, request: web.Request) -> web.Response:
        self.release()
        return web.json_response({"status": "ok"})

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

    @staticmethod
    def _error_response(
        status: int, message: str, *, retry_after: float | None = None, kind: str | None = None
    ) -> web.Response:
        if kind is None:
            kind, code = _ERROR_TYPES.get(status, ("server_error", "server_error"))
        else:
            code = kind
        headers = {} if retry_after is None else {"Retry-After": _seconds(retry_after)}
        return web.json_response(
            _shared.error_body(message, kind, code), status=status, headers=headers
        )

    async def _chat(self, request: web.Request) -> web.Response:
        with self._lock:
            self._in_flight += 1
        try:
            return await self._chat_inner(request)
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _chat_inner(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
            if not isinstance(body, dict):
                raise ValueError("the request body must be a JSON object")
        except ValueError as exc:
            self._record("-", None, "bad_request", None)
            return self._error_response(400, f"invalid JSON body: {exc}")
        if request.headers.get(PROBE_HEADER):
            return self._probe_answer(body)
        messages = body.get("messages")
        digest = message_hash(messages)
        model = body.get("model")
        if self.served_models is not None and model not in self.served_models:
            self._record(digest, None, "unknown_model", model)
            return web.json_response(
                {"object": "error", "message": f"The model `{model}` does not exist.",
                 "type": "NotFoundError", "param": None, "code": 404},
                status=404,
            )  # fmt: skip
        rejected = reject_params(body, self.param_rules)
        if rejected is not None:
            self._record(digest, None, "bad_request", model)
            return web.json_response(rejected[1], status=rejected[0])
        phase, released = self._phase_now()
        if phase == "hold" and await self._hold(released):
            return self._error_response(503, "server shutting down", kind="server_error")
        try:
            if phase is not None and phase != "hold":
                fault = parse_fault(phase)
            else:
                fault = find_directive(messages) or parse_fault(self.default_fault)
        except ValueError as exc:
            self._record(digest, None, "bad_request", model)
            return self._error_response(400, str(exc))
        if body.get("stream"):
            self._record(digest, fault, "bad_request", model)
            return self._error_response(400, "the fault server does not stream; send stream=false")
        kind = self._record(digest, fault, fault.kind, model, task_hash(messages))
        value = fault.value if kind != "ok" or fault.kind == "ok" else None

        if kind == "hang":
            hang = self.hang_seconds if value is None else value
            if await self._sleep(hang):
                return self._error_response(503, "server shutting down", kind="server_error")
            return self._error_response(504, "injected hang ended", kind="server_error")
        latency = value if kind in ("ok", "latency") and value is not None else self.default_latency
        if await self._sleep(latency):
            return self._error_response(503, "server shutting down", kind="server_error")
        if kind.isdigit():
            status = int(kind)
            retry_after = (
                value if value is not None else (self.retry_after if status == 429 else None)
            )
            return self._error_response(status, f"injected fault {status}", retry_after=retry_after)

        spec = output_spec(body)
        finish_reason = "stop"
        completion_tokens = None
        if kind == "malformed":
            content = MALFORMED_CONTENT
        elif kind == "wrong_shape":
            content = WRONG_SHAPE_CONTENT
        else:
            try:
                content = self._correct(body, digest, spec)
            except SchemaError as exc:
                return self._error_response(400, f"cannot answer this schema: {exc}")
            except Exception as exc:  # an answer_fn bug, shown to the test
                traceback.print_exc()
                return self._error_response(500, f"answer_fn failed: {exc!r}")
            if kind in SHAPES:
                status, shaped = SHAPES[kind](content)
                return web.json_response(shaped, status=status)
            if kind == "truncated":
                content = content[: len(content) // 2]
                finish_reason = "length"
                limit = body.get("max_completion_tokens") or body.get("max_tokens")
                completion_tokens = limit if isinstance(limit, int) else None
        reply = _shared.chat_completion(
            content,
            model=model if isinstance(model, str) and model else self.model,
            spec=spec,
            finish_reason=finish_reason,
            prompt_tokens=_shared.prompt_tokens(body),
            completion_tokens=completion_tokens,
        )
        if self.logprobs_fn is not None and body.get("logprobs"):
            reply["choices"][0]["logprobs"] = self.logprobs_fn(body, content)
        if self.system_fingerprint is not None:
            reply["system_fingerprint"] = self.system_fingerprint
        return web.json_response(reply)

    def _correct(self, body: dict, digest: str, spec: Any) -> str:
        if self.answer_fn is not None:
            content = self.answer_fn(body)
            if content is not None:
                return content
        return correct_content(body, int(digest, 16), spec)


# --------------------------------------------------------------------------------------------
# Separate-process mode
# --------------------------------------------------------------------------------------------


def wait_for_port_file(
    path: str | os.PathLike[str],
    timeout: float = 15.0,
    proc: subprocess.Popen | None = None,
) -> int:
    """Wait until ``path`` holds a port (written by ``--port-file``); return it."""
    deadline = time.monotonic() + timeout
    path = Path(path)
    while True:
        with contextlib.suppress(OSError, ValueError):
            return int(path.read_text().strip())
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode} before it started")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no port in {path} after {timeout} s")
        time.sleep(0.02)


def _get_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


def _post_json(url: str, body: Any, timeout: float = 5.0) -> Any:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


class FaultServerProcess:
    """``python tests/fault_server.py`` in a subprocess, as a context manager.

    ``kill()`` sends SIGKILL, ``terminate()`` SIGTERM; ``restart()`` starts a fresh process on
    the same port (counters start from zero). ``stats()`` reads ``GET /stats``.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        default_fault: str | None = None,
        default_latency: float | None = None,
        retry_after: float | None = None,
        hang_seconds: float | None = None,
        model: str | None = None,
        host: str = "127.0.0.1",
        startup_timeout: float = 15.0,
        served_models: list[str] | None = None,
        after: int | None = None,
        then: str | None = None,
        param_rules: dict[str, Any] | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.startup_timeout = startup_timeout
        self._options = {
            "--after": after,
            "--then": then,
            "--default-fault": default_fault,
            "--default-latency": default_latency,
            "--retry-after": retry_after,
            "--hang-seconds": hang_seconds,
            "--model": model,
            "--served-models": ",".join(served_models) if served_models is not None else None,
            "--param-rules": json.dumps(param_rules) if param_rules else None,
        }
        self.proc: subprocess.Popen | None = None
        self._dir: str | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def command(self, port_file: str) -> list[str]:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--host", self.host]
        cmd += ["--port", str(self.port), "--port-file", port_file]
        for flag, value in self._options.items():
            if value is not None:
                cmd += [flag, str(value)]
        return cmd

    def start(self) -> FaultServerProcess:
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError("already running")
        self._dir = self._dir or tempfile.mkdtemp(prefix="fault-server-")
        port_file = os.path.join(self._dir, "port")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(port_file)
        log_path = os.path.join(self._dir, "server.log")
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.command(port_file), stdout=log, stderr=subprocess.STDOUT
            )
        try:
            self.port = wait_for_port_file(port_file, self.startup_timeout, self.proc)
        except (RuntimeError, TimeoutError) as exc:
            self.kill()
            raise RuntimeError(f"{exc}\n{Path(log_path).read_text()}") from exc
        return self

    def _signal(self, sig: int, timeout: float) -> int | None:
        proc = self.proc
        if proc is None:
            return None
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout)
        return proc.returncode

    def kill(self, timeout: float = 10.0) -> int | None:
        """SIGKILL the server (like ``kill -9``) and reap it."""
        return self._signal(signal.SIGKILL, timeout)

    def terminate(self, timeout: float = 10.0) -> int | None:
        """SIGTERM: a clean shutdown (falls back to SIGKILL after ``timeout``)."""
        return self._signal(signal.SIGTERM, timeout)

    def restart(self) -> FaultServerProcess:
        """Kill the server if it runs, then start a new one on the same port."""
        self.kill()
        return self.start()

    def stats(self) -> dict[str, Any]:
        return _get_json(self.url + "/stats")

    def set_phase(self, after: int | None, then: str | None) -> None:
        """As :meth:`FaultServer.set_phase`, in the running server process."""
        _post_json(self.url + "/phase", {"after": after, "then": then})

    def release(self) -> None:
        """As :meth:`FaultServer.release`: every held request is answered."""
        _post_json(self.url + "/release", {})

    def wait_held(self, count: int = 1, timeout: float = 60.0) -> int:
        """Wait until the server holds at least ``count`` requests; returns how many."""
        deadline = time.monotonic() + timeout
        while (held := self.stats()["held"]) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the server holds {held} requests after {timeout} s")
            time.sleep(0.02)
        return held

    def __enter__(self) -> FaultServerProcess:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.terminate()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="OpenAI-compatible fault-injecting server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", help="write the bound port to this file")
    parser.add_argument("--default-fault", default="ok", help='e.g. "ok", "500x1", "hang"')
    parser.add_argument("--default-latency", type=float, default=0.0)
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument("--hang-seconds", type=float, default=30.0)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--served-models", help="comma-separated: answer only these (as vLLM)")
    parser.add_argument("--after", type=int, help="chat requests served before --then applies")
    parser.add_argument("--then", help='from request --after + 1 on: "hold", "401", "404"...')
    parser.add_argument("--param-rules", help='JSON, e.g. {"temperature": 1} (as o3-mini)')
    args = parser.parse_args(argv)
    server = FaultServer(
        default_fault=args.default_fault,
        default_latency=args.default_latency,
        retry_after=args.retry_after,
        hang_seconds=args.hang_seconds,
        model=args.model,
        host=args.host,
        port=args.port,
        served_models=args.served_models.split(",") if args.served_models else None,
        after=args.after,
        then=args.then,
        param_rules=json.loads(args.param_rules) if args.param_rules else None,
    )
    server.serve_cli(args.port_file)


if __name__ == "__main__":
    main()
