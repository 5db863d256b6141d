"""The fault-injecting server as a separate process, for kill -9 / restart tests::

    python tests/fault_server.py --port 0 --port-file F [--default-latency S] [--default-fault K]

or from Python, ``with FaultServerProcess(default_latency=0.02) as proc: proc.base_url``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from ports import hold_port

__all__ = ["FaultServerProcess", "wait_for_port_file"]

SERVER = Path(__file__).resolve().with_name("fault_server.py")


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

    The port is held (:func:`ports.hold_port`) from the first ``start()`` to ``__exit__``: while
    the server is down (killed, not started again yet) connections are refused and no other
    process, such as the other pytest worker's servers, can be given the port.
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
        self._held: socket.socket | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def command(self, port_file: str) -> list[str]:
        cmd = [sys.executable, str(SERVER), "--host", self.host]
        cmd += ["--port", str(self.port), "--port-file", port_file]
        for flag, value in self._options.items():
            if value is not None:
                cmd += [flag, str(value)]
        return cmd

    def start(self) -> FaultServerProcess:
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError("already running")
        if self._held is None:
            self._held = hold_port(self.host, self.port)
            self.port = self._held.getsockname()[1]
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
            bound = wait_for_port_file(port_file, self.startup_timeout, self.proc)
        except (RuntimeError, TimeoutError) as exc:
            self.kill()
            self._release_port()
            raise RuntimeError(f"{exc}\n{Path(log_path).read_text()}") from exc
        assert bound == self.port, (bound, self.port)
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

    def _release_port(self) -> None:
        if self._held is not None:
            self._held.close()
            self._held = None

    def __exit__(self, *exc_info: object) -> None:
        self.terminate()
        self._release_port()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
