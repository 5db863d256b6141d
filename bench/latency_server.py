"""A minimal fixed-latency OpenAI-compatible server for benchmarks.

Run it as::

    python bench/latency_server.py --port 0 --port-file F --latency 0.02

It binds 127.0.0.1, writes the chosen port to ``F`` (atomically) and serves

* ``GET /v1/models`` and ``GET /health``;
* ``POST /v1/chat/completions`` (non-streaming): after ``--latency`` seconds it returns a proper
  ``chat.completion`` whose content is valid JSON for the schema the client asked for
  (``response_format`` ``json_schema`` / ``json_object`` + ``schema``, vLLM's ``guided_json``,
  llama.cpp's ``json_schema``, or a forced function tool), or an echo of the last user message
  when no schema was asked for. Answers are precomputed once per schema, and nothing is logged.

The answers come from ``bench/chat_answers.py``, shared with ``tests/fault_server.py``, which
also serves through :func:`start_runner` and :func:`run_cli_server` here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from chat_answers import (
    SchemaError,
    chat_completion,
    correct_content,
    error_body,
    models_body,
    output_spec,
    prompt_tokens,
)

__all__ = ["make_app", "run_cli_server", "start_runner", "write_port_file"]

DEFAULT_MODEL = "bench-model"

# The benchmark server
# --------------------------------------------------------------------------------------------


def make_app(latency: float = 0.0, model: str = DEFAULT_MODEL) -> web.Application:
    """The fixed-latency app: one cached answer per (schema, model), nothing logged."""
    cache: dict[str, str] = {}
    models = web.json_response(models_body(model))
    models_text = models.text
    dumps = json.dumps

    async def handle_models(request: web.Request) -> web.Response:
        return web.Response(text=models_text, content_type="application/json")

    async def handle_health(request: web.Request) -> web.Response:
        return web.Response(text='{"status":"ok"}', content_type="application/json")

    async def handle_chat(request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
            if not isinstance(body, dict):
                raise ValueError("request body must be a JSON object")
            spec = output_spec(body)
            if spec.mode == "text":
                content = correct_content(body, 0, spec)
            else:
                key = spec.cache_key()
                content = cache.get(key)
                if content is None:
                    content = cache[key] = correct_content(body, 0, spec)
        except (ValueError, SchemaError) as exc:
            return web.Response(
                status=400,
                text=dumps(error_body(str(exc), "invalid_request_error")),
                content_type="application/json",
            )
        if latency > 0:
            await asyncio.sleep(latency)
        reply = chat_completion(
            content,
            model=body.get("model") or model,
            spec=spec,
            prompt_tokens=prompt_tokens(body),
        )
        return web.Response(text=dumps(reply), content_type="application/json")

    app = web.Application(client_max_size=64 * 1024 * 1024)
    for prefix in ("/v1", ""):
        app.router.add_get(prefix + "/models", handle_models)
        app.router.add_post(prefix + "/chat/completions", handle_chat)
    app.router.add_get("/health", handle_health)
    return app


def write_port_file(path: str | os.PathLike[str], port: int) -> None:
    """Write ``port`` to ``path`` atomically (readers never see a partial file)."""
    path = Path(path)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(f"{port}\n")
    os.replace(tmp, path)


async def start_runner(
    app: web.Application, host: str = "127.0.0.1", port: int = 0, shutdown_timeout: float = 0.5
) -> tuple[web.AppRunner, int]:
    """Start serving ``app`` (no access log); return the runner and the bound port.

    ``runner.cleanup()`` stops it; handlers still running after ``shutdown_timeout`` seconds
    are cancelled.
    """
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port, backlog=1024)
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner, runner.addresses[0][1]


async def run_cli_server(
    app: web.Application,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    port_file: str | None = None,
    shutdown_timeout: float = 0.5,
    on_started: Callable[[int], Awaitable[None] | None] | None = None,
) -> None:
    """Serve ``app`` until SIGINT/SIGTERM; write the bound port to ``port_file``."""
    runner, bound = await start_runner(app, host, port, shutdown_timeout)
    if port_file:
        write_port_file(port_file, bound)
    if on_started is not None:
        result = on_started(bound)
        if result is not None:
            await result
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", help="write the bound port to this file")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    args = parser.parse_args(argv)
    loop_factory = None
    try:  # uvloop, where installed, roughly doubles the throughput; never required
        import uvloop  # type: ignore[import-not-found]

        loop_factory = uvloop.new_event_loop
    except ImportError:
        pass
    app = make_app(args.latency, args.model)
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(run_cli_server(app, host=args.host, port=args.port, port_file=args.port_file))


if __name__ == "__main__":
    main()
