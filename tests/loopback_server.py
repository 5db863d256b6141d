"""An aiohttp app served on 127.0.0.1 from a daemon thread with its own event loop (the base of
the tests' loopback servers, ``tests/fault_server.py``), or in this process until SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import traceback
from typing import Self

from aiohttp import web
from bench_answers import serving

__all__ = ["LoopbackServer"]


class LoopbackServer:
    """Serves :meth:`make_app` on ``host``:``port`` (0 = a free port), as a context manager or
    with ``start()`` / ``stop()``; handlers still running ``shutdown_timeout`` seconds after
    ``stop()`` are cancelled."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, shutdown_timeout: float = 0.5):
        self.host = host
        self.port = port
        self.shutdown_timeout = shutdown_timeout
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._started = threading.Event()
        self._start_error: BaseException | None = None

    def make_app(self) -> web.Application:
        """The app to serve (subclasses)."""
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``, for ``openai.OpenAI(base_url=...)`` and litellm's api_base."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` (no ``/v1``)."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> Self:
        if self._thread is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
        self._started.clear()
        self._start_error = None
        self._thread = threading.Thread(target=self._thread_main, name="fault-server", daemon=True)
        self._thread.start()
        if not self._started.wait(timeout):
            raise RuntimeError(f"{type(self).__name__} did not start in time")
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
            raise RuntimeError(f"{type(self).__name__} thread did not stop in time")
        self._thread = None

    def __enter__(self) -> Self:
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
        runner, self.port = await serving.start_runner(
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
            serving.run_cli_server(
                app,
                host=self.host,
                port=self.port,
                port_file=port_file,
                shutdown_timeout=self.shutdown_timeout,
                on_started=started,
            )
        )
