"""A local Ray cluster for the tests: ``ray start --head --block`` with 2 CPUs on 127.0.0.1, in
its own process group, stopped by that group's id (never ``ray stop``, which stops every Ray
process of the machine).

The Ray tests need the ``ray`` extra (``pip install 'judgekit[ray]'``); they skip with a reason
where it is absent and fail instead under ``JUDGEKIT_REQUIRE_RAY=1`` (``.ci/run``'s engines
block). They take minutes, so a plain ``pytest`` skips them unless ``JUDGEKIT_RAY_TESTS=1``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


def require_ray() -> None:
    """Skip the calling test where ``ray`` is not installed (fail under
    ``JUDGEKIT_REQUIRE_RAY=1``), or where neither that nor ``JUDGEKIT_RAY_TESTS=1`` asks for
    these tests (minutes of cluster and 2,000 tasks: the README's suite stays as fast)."""
    required = os.environ.get("JUDGEKIT_REQUIRE_RAY") == "1"
    if not required and os.environ.get("JUDGEKIT_RAY_TESTS") != "1":
        pytest.skip("Ray tests run in .ci/run's engines block (or set JUDGEKIT_RAY_TESTS=1)")
    try:
        import ray  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError:
        if required:
            pytest.fail("ray required (JUDGEKIT_REQUIRE_RAY=1) but not installed")
        pytest.skip("ray not installed: pip install 'judgekit[ray]' (run by .ci/run)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RayCluster:
    """``ray start --head`` on 127.0.0.1 with ``cpus`` logical CPUs, its workers run by
    ``python`` (default: this interpreter); ``address`` once started."""

    def __init__(self, cpus: int = 2, python: str = sys.executable) -> None:
        self.cpus, self.python = cpus, python
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.temp = tempfile.mkdtemp(prefix="jkray-", dir="/tmp")  # short: Unix socket paths
        self.proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        """The environment of a process that uses this cluster (RAY_ADDRESS, judgekit)."""
        path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
        return {**os.environ, **ENV, "RAY_ADDRESS": self.address, "PYTHONPATH": path}

    def start(self, timeout: float = 120.0) -> RayCluster:
        cmd = [self.python, "-m", "ray.scripts.scripts", "start", "--head", "--block",
               f"--num-cpus={self.cpus}", "--node-ip-address=127.0.0.1", f"--port={self.port}",
               "--include-dashboard=false", f"--temp-dir={self.temp}",
               "--disable-usage-stats"]  # fmt: skip
        self.proc = subprocess.Popen(
            cmd, env=self.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray start exited with {self.proc.returncode}")
            probe = subprocess.run(
                [self.python, "-c", "import ray; ray.init(); print(ray.cluster_resources())"],
                env=self.env(), capture_output=True, text=True, timeout=timeout,
            )  # fmt: skip
            if probe.returncode == 0 and "CPU" in probe.stdout:
                return self
            time.sleep(1)
        raise RuntimeError(f"the Ray cluster did not start in {timeout:.0f}s")

    def descendants(self) -> dict[int, str]:
        """``pid -> command line`` of every process this cluster's ``ray start`` started."""
        if self.proc is None:
            return {}
        rows = subprocess.run(
            ["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True
        ).stdout.splitlines()
        parent, args = {}, {}
        for row in rows:
            pid, ppid, *rest = row.split(None, 2)
            parent[int(pid)], args[int(pid)] = int(ppid), rest[0] if rest else ""
        found, todo = {}, [self.proc.pid]
        while todo:
            top = todo.pop()
            for pid, ppid in parent.items():
                if ppid == top and pid not in found:
                    found[pid] = args[pid]
                    todo.append(pid)
        return found

    def workers(self) -> list[int]:
        """PIDs of this cluster's Ray worker processes judging a block of judgekit's tasks."""
        return [pid for pid, args in self.descendants().items() if "judge_batch" in args]

    def stop(self) -> None:
        if self.proc is None:
            return
        started = self.descendants()
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        for pid in [self.proc.pid, *started]:  # what ray start left behind: ours, by PID
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc = None
