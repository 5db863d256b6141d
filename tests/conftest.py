"""Shared test fixtures: the path to ../shared/data (skipping cleanly where it is absent), a data
home laid out from it (``JUDGEKIT_DATA``, for ``data:NAME/path``), and the fault-injection server
with the judge tasks the llm-layer tests send it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from fault_server import FaultServer

from judgekit.llm.client import LLMClient, Task
from judgekit.llm.spec import ModelSpec
from judgekit.pipelines.spilling_schemas import judge_schema
from judgekit.prompts import Prompt
from judgekit.runlog import Record

REPO = Path(__file__).resolve().parents[1]

SHARED_DATA = REPO.parent / "shared" / "data"


def pytest_configure(config: pytest.Config) -> None:
    """Keep the response cache of every test run out of the user's ``~/.cache/judgekit``: one
    fresh folder per test process unless ``JUDGEKIT_CACHE_DIR`` is set already. Keep the file
    order of :func:`pytest_collection_modifyitems` under pytest-xdist: its ``--loadscope-reorder``
    (on by default since 3.6) would hand files out by test count instead, so a long file of
    one test started last while the other worker sat idle. Embedded llama.cpp servers compute
    on one thread unless ``JUDGEKIT_LOCAL_THREADS`` is set: two pytest workers on two cores
    leave no core free, and two threads of one server beside the other worker's test wait on
    each other at every token (:func:`judgekit.llm.local.server_threads`)."""
    os.environ.setdefault("JUDGEKIT_LOCAL_THREADS", "1")
    if "JUDGEKIT_CACHE_DIR" not in os.environ:
        os.environ["JUDGEKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="judgekit-test-cache-")
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist is installed
        config.option.loadscopereorder = False


def file_cost(item: pytest.Item) -> float:
    """Declared seconds of ``item``'s file on a quiet 2-core machine: its ``cost(seconds)``
    marker (module level: ``pytestmark = pytest.mark.cost(150)``); a file with an
    ``embedded`` test and no declaration counts as 60 s, any other as 0."""
    marker = item.get_closest_marker("cost")
    if marker is not None:
        return float(marker.args[0])
    return 60.0 if item.get_closest_marker("embedded") else 0.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files run longest first by :func:`file_cost`, each file's tests in their order:
    pytest-xdist's ``--dist loadfile`` hands files out in this order (every worker collects
    the same order: the sort is stable and reads only markers), so no long file starts last
    while the other worker sits idle (longest-processing-time-first scheduling)."""
    cost: dict[Path, float] = {}
    for item in items:
        cost[item.path] = max(cost.get(item.path, 0.0), file_cost(item))
    items.sort(key=lambda item: -cost[item.path])  # stable: the order is kept otherwise


def shared_path(*parts: str) -> Path:
    """Return ``../shared/data/<parts>``, or skip the calling test with a reason if absent.

    Under ``JUDGEKIT_REQUIRE_DATA=1`` (set by ``.ci/run``) a missing path fails the test instead,
    so the paper-reproduction tests can never pass by skipping."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        if os.environ.get("JUDGEKIT_REQUIRE_DATA") == "1":
            pytest.fail(f"shared data required (JUDGEKIT_REQUIRE_DATA=1) but absent: {path}")
        pytest.skip(f"shared data not present: {path}")
    return path


@pytest.fixture(scope="session")
def shared_data_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data home laid out once per session from ../shared/data (``tests/shared_layout.py``:
    official files stamped official, subsets stamped as local copies)."""
    from shared_layout import lay_out

    shared_path()  # skips (or fails under JUDGEKIT_REQUIRE_DATA=1) where the folder is absent
    home = tmp_path_factory.mktemp("judgekit-data")
    lay_out(home, SHARED_DATA)
    return home


@pytest.fixture
def judgekit_data(shared_data_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``JUDGEKIT_DATA`` pointing at :func:`shared_data_home` for one test (subprocesses
    inherit it): ``data:NAME/path`` reads the real data without a network."""
    monkeypatch.setenv("JUDGEKIT_DATA", str(shared_data_home))
    return shared_data_home


PROMPT = Prompt(id="test/judge", text="judge $x", path=Path("test"))


@pytest.fixture(scope="module")
def server():
    """A fault-injection server for the module (Retry-After 0.05 s, hangs of 10 s)."""
    with FaultServer(retry_after=0.05, hang_seconds=10) as srv:
        yield srv


def fault_spec(srv: FaultServer, **kw: Any) -> ModelSpec:
    """A judge on ``srv`` with short timeouts and back-off (``kw`` overrides any field)."""
    base = dict(model="hosted_vllm/fault-model", api_base=srv.base_url, timeout=1.0,
                max_retries=3, retry_max_wait=0.1, max_reasks=1)  # fmt: skip
    return ModelSpec(**{**base, **kw})


def judge_task(key: str, directive: str, model: ModelSpec, **kw: Any) -> Task:
    """A 5-boolean judge task whose message carries a fault directive (``[[fault:500]]``)."""
    messages = [{"role": "user", "content": f"{directive} item {key}"}]
    return Task(key, "judge", "judge", model, messages, judge_schema(5), PROMPT, **kw)


def run_tasks(client: LLMClient, *tasks: Task) -> list[Record]:
    """Run ``tasks`` concurrently with ``client`` in a new event loop."""

    async def go():
        return await asyncio.gather(*(client.run(t) for t in tasks))

    return asyncio.run(go())


def wait_for_lines(proc: subprocess.Popen[bytes], path: Path, lines: int) -> None:
    """Wait until the run ``proc`` has written ``lines`` lines to ``path`` (a records.jsonl),
    or has ended, or 60 s have passed.

    The run may finish before the caller acts on it (a loaded machine): to interrupt a run
    mid-way, hold its server's answers instead (``FaultServer(after=N, then="hold")``,
    ``wait_held``), as the kill -9, SIGTERM and outage tests do."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return
        time.sleep(0.01)
