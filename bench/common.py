"""Shared pieces of the benchmarks: the loopback server, CPU pinning, the judge workload.

The server (``bench/latency_server.py``, a fixed-latency OpenAI-compatible server) runs in its
own process pinned to the last CPU; the measured client is pinned to CPU 0, so on a 2-core
machine each has one core. Every measurement of one benchmark runs against the same server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
IN_FLIGHT = 256
# A judge prompt of a few hundred tokens (about 1,300 characters).
PROMPT = (
    "You are a careful annotator. Classify the sentiment of the review below as positive, "
    "negative or neutral, and give a short rationale.\n\nReview:\n"
    + "The room was clean and the staff friendly, but breakfast was cold and late. "
    * 14
)


class Judgment(BaseModel):
    """The structured judgment every benchmark asks for."""

    label: str = Field(description="positive, negative or neutral")
    rationale: str = Field(max_length=300)


def messages(i: int) -> list[dict[str, Any]]:
    """The chat messages of task ``i`` (distinct per task, so no two share a cache key)."""
    return [{"role": "user", "content": f"[item {i}] {PROMPT}"}]


def pin(cpu: int = 0) -> None:
    """Pin this process to one CPU (no-op where affinity is not supported)."""
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[cpu % len(cpus)]})


class LatencyServer:
    """``bench/latency_server.py`` in a subprocess pinned to the last CPU (context manager)."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LatencyServer:
        port_file = Path(tempfile.mkdtemp(prefix="judgekit-bench-")) / "port"
        cmd = [sys.executable, str(BENCH / "latency_server.py"), "--port", "0",
               "--port-file", str(port_file), "--latency", str(self.latency)]  # fmt: skip
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if len(cpus) > 1 and _has("taskset"):
            cmd = ["taskset", "-c", str(cpus[-1]), *cmd]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if port_file.exists() and port_file.read_text().strip():
                self.port = int(port_file.read_text())
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(self.proc.stderr.read().decode() if self.proc.stderr else "")
            time.sleep(0.05)
        raise RuntimeError("latency server did not start")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)


def _has(program: str) -> bool:
    return any((Path(p) / program).exists() for p in os.environ.get("PATH", "").split(":"))


def run_child(module: str, *args: str, timeout: float = 900, python: str | None = None) -> str:
    """Run ``python bench/<module>.py <args>`` (``python``: another interpreter) and return
    its last stdout line (a number)."""
    cmd = [python or sys.executable, str(BENCH / f"{module}.py"), *args]
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    return out.stdout.strip().splitlines()[-1]
