"""A real OpenAI-compatible HTTP server that injects faults, for tests of real judgekit runs.

Endpoints: ``GET /v1/models``, ``POST /v1/chat/completions`` (non-streaming; also served without
the ``/v1`` prefix), ``GET /health``, ``GET /stats`` and ``POST /reset``.

The directives that choose each request's fault are in ``tests/fault_spec.py``; the request
log, counters and the later phase (``after`` / ``then``, holding answers) in
``tests/fault_state.py``; the separate-process wrapper in ``tests/fault_process.py``.

``param_rules`` (``--param-rules JSON``: name -> the one value allowed) makes the server
answer OpenAI's 400 to a request with another value, as o3-mini does to ``temperature: 0``.

``default_latency`` is applied before every answer except ``hang`` and ``latency=S``.

judgekit's preflight schema probe (a chat request with the header ``X-Judgekit-Probe``) gets a
correct answer for its schema whatever the directives, phase and ``param_rules`` (with
``answer_probes=True``, ``answer_fn``'s answer: a server made to ignore the schema ignores it
for the probe too), and is counted apart (``probes`` in ``/stats``): the counts of a test's own
tasks, and of its ``answer_fn``'s calls, are the same with or without it.

Model names
-----------
By default the server answers whatever ``model`` a request names, as llama.cpp does, and its
``GET /v1/models`` says so as llama.cpp does (one entry, ``owned_by: "llamacpp"``). With
``served_models=[...]`` it behaves as vLLM does: ``/v1/models`` lists those names
(``owned_by: "vllm"``) and a chat request for any other name gets vLLM's 404 ("The model `x`
does not exist.").

A correct answer is valid JSON for the schema the client asked for (``response_format``
``json_schema`` or ``json_object`` + ``schema``, ``guided_json``, or a forced tool call), produced
deterministically from a hash of the messages (see ``bench/chat_answers.py``, the answer logic
shared with ``bench/latency_server.py``), or an echo of the last user message when no schema
was asked for.
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

As a separate process (for kill -9 / restart tests), ``python tests/fault_server.py --port 0
--port-file F ...`` or :class:`fault_process.FaultServerProcess`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import traceback
from collections.abc import Callable
from typing import Any

from aiohttp import web
from bench_answers import SchemaError, answers, correct_content, message_hash, output_spec
from fault_spec import (
    DEFAULT_MODEL,
    MALFORMED_CONTENT,
    PROBE_HEADER,
    WRONG_SHAPE_CONTENT,
    Fault,
    error_response,
    find_directive,
    parse_fault,
    task_hash,
)
from fault_state import FaultState
from reply_shapes import SHAPES, reject_params

__all__ = ["FaultServer"]


class FaultServer(FaultState):
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
        parse_fault(default_fault)  # fail early on a typo
        if then is not None and then != "hold":
            parse_fault(then)
        super().__init__(
            after=after, then=then, host=host, port=port, shutdown_timeout=shutdown_timeout
        )
        self.param_rules = param_rules or {}
        self.answer_probes = answer_probes
        self.logprobs_fn = logprobs_fn
        self.served_models = served_models
        self.default_fault = default_fault
        self.default_latency = default_latency
        self.retry_after = retry_after
        self.hang_seconds = hang_seconds
        self.answer_fn = answer_fn
        self.model = model
        self.system_fingerprint: str | None = None  # sent with every answer where set

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
        reply = answers.chat_completion(
            content, model=model if isinstance(model, str) and model else self.model, spec=spec,
            finish_reason="stop", prompt_tokens=answers.prompt_tokens(body), completion_tokens=None,
        )  # fmt: skip
        return web.json_response(reply)

    async def _models(self, request: web.Request) -> web.Response:
        if self.served_models is None:  # any name is answered, as llama.cpp does
            body = answers.models_body(self.model)
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

    _error_response = staticmethod(error_response)

    async def _chat(self, request: web.Request) -> web.Response:
        with self._lock:
            self._in_flight += 1
        try:
            return await self._chat_inner(request)
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _chat_inner(self, request: web.Request) -> web.Response:
        body = await self._read_body(request)
        if isinstance(body, web.Response):
            return body
        if request.headers.get(PROBE_HEADER):
            return self._probe_answer(body)
        messages = body.get("messages")
        digest = message_hash(messages)
        model = body.get("model")
        refused = self._refusal(body, digest, model)
        if refused is not None:
            return refused
        phase, released = self._phase_now()
        if phase == "hold" and await self._hold(released):
            return self._error_response(503, "server shutting down", kind="server_error")
        try:
            fault = self._fault_for(phase, messages)
        except ValueError as exc:
            self._record(digest, None, "bad_request", model)
            return self._error_response(400, str(exc))
        if body.get("stream"):
            self._record(digest, fault, "bad_request", model)
            return self._error_response(400, "the fault server does not stream; send stream=false")
        kind = self._record(digest, fault, fault.kind, model, task_hash(messages))
        value = fault.value if kind != "ok" or fault.kind == "ok" else None
        failed = await self._wait_or_fail(kind, value)
        if failed is not None:
            return failed
        return self._answer(body, digest, kind, model)

    async def _read_body(self, request: web.Request) -> dict | web.Response:
        """The request's JSON object, or the 400 for a body that is not one (counted)."""
        try:
            body = json.loads(await request.read())
            if not isinstance(body, dict):
                raise ValueError("the request body must be a JSON object")
        except ValueError as exc:
            self._record("-", None, "bad_request", None)
            return self._error_response(400, f"invalid JSON body: {exc}")
        return body

    def _refusal(self, body: dict, digest: str, model: Any) -> web.Response | None:
        """vLLM's 404 for a model not in ``served_models``, or a ``param_rules`` 400 (counted)."""
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
        return None

    def _fault_for(self, phase: str | None, messages: Any) -> Fault:
        """The phase's fault, else the request's directive, else ``default_fault``."""
        if phase is not None and phase != "hold":
            return parse_fault(phase)
        return find_directive(messages) or parse_fault(self.default_fault)

    async def _wait_or_fail(self, kind: str, value: float | None) -> web.Response | None:
        """Hang or sleep the latency, then the injected status's error; ``None`` to answer."""
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
        return None

    def _answer(self, body: dict, digest: str, kind: str, model: Any) -> web.Response:
        """The HTTP 200 of ``kind``: correct, malformed, wrong shape, truncated or a reply mode."""
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
        reply = answers.chat_completion(
            content,
            model=model if isinstance(model, str) and model else self.model,
            spec=spec,
            finish_reason=finish_reason,
            prompt_tokens=answers.prompt_tokens(body),
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
