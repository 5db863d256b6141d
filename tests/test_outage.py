"""The outage policy in a real run: the server of a 2,000-task ``judgekit run`` is killed
(kill -9) mid-run, stays down until the run has paused its tasks and for at least 6 s (ten times
a task's retry budget, past four failed probes), and restarts on the same port; the endpoint's
tasks are paused, not failed, and the run ends with 2,000 ``ok`` records and no ``error``.

The kill always lands mid-run: the server holds its answers from its 400th request on, and is
killed once it holds one (the run cannot finish before, however loaded the machine). The
restart waits for the run's own word that its tasks are paused (an event, not a guess at how
long a loaded machine takes to notice)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fault_process import FaultServerProcess

pytestmark = pytest.mark.timeout(240)
REPO = Path(__file__).resolve().parents[1]
RUN = "import sys; from judgekit.cli import app, cache, run; app(sys.argv[1:])"
N_ITEMS = 2000
DOWN_S = 6.0  # at least; retries: 3 x at most 0.2 s; probes after 0.25, 0.5, 1 and 2 s
PAUSED = "refuses connections: its tasks are paused"


def _read_lines(stream, lines: list[str], paused: threading.Event) -> None:
    """Every line of the run's output into ``lines``; ``paused`` set once it says so."""
    for raw in stream:
        lines.append(raw.decode("utf-8", "replace"))
        if PAUSED in lines[-1]:
            paused.set()


def test_a_server_down_mid_run_until_its_tasks_are_paused_costs_no_record(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    with items.open("w", encoding="utf-8") as fh:
        for i in range(N_ITEMS):
            fh.write(json.dumps({"id": f"it{i:04d}", "text": f"Item {i}: fine."}) + "\n")
    with FaultServerProcess(default_latency=0.01) as server:
        server.set_phase(399, "hold")  # the restarted server holds nothing
        config = tmp_path / "run.yaml"
        config.write_text(
            f"""pipeline: classify
cache: {{enabled: false}}
judge:
  model: hosted_vllm/fault-model
  api_base: {server.base_url}
  timeout: 30
  max_concurrency: 32
  max_retries: 3
  retry_max_wait: 0.2
classify:
  items: {items}
  labels: [positive, negative, neutral]
  task: Classify the sentiment of the review.
""",  # outage_s is left at its default (600 s)
            encoding="utf-8",
        )
        out = tmp_path / "out"
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
        proc = subprocess.Popen(
            [sys.executable, "-c", RUN, "run", str(config), "--out", str(out)],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        lines: list[str] = []
        paused = threading.Event()
        reader = threading.Thread(target=_read_lines, args=(proc.stdout, lines, paused))
        reader.start()
        server.wait_held(1)
        server.kill()  # kill -9: requests in flight are dropped, new ones refused
        killed_at = time.monotonic()
        at_kill = (out / "records.jsonl").read_bytes().count(b"\n")
        assert paused.wait(150), "".join(lines)[-3000:]  # the run has paused its tasks
        time.sleep(max(0.0, killed_at + DOWN_S - time.monotonic()))
        down_s = time.monotonic() - killed_at
        during = (out / "records.jsonl").read_bytes().count(b"\n")
        server.start()  # the same port
        proc.wait(timeout=150)
        reader.join(timeout=30)
        output = "".join(lines)
        resumed_in = time.monotonic() - killed_at - down_s
    assert proc.returncode == 0, output[-3000:]
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == N_ITEMS and len({r["key"] for r in records}) == N_ITEMS
    assert {r["status"] for r in records} == {"ok"}  # no task became error
    assert at_kill < N_ITEMS and during - at_kill <= 32  # paused: at most those in flight ended
    assert PAUSED in output
    assert "is back after" in output
    print(f"outage: {at_kill} records at the kill, down {down_s:.1f} s, "
          f"run finished {resumed_in:.1f} s after restart")  # fmt: skip


def test_a_paused_endpoint_resumes_or_fails_after_its_budget(tmp_path: Path) -> None:
    import threading

    from conftest import fault_spec, judge_task, run_tasks
    from fault_server import FaultServer
    from ports import hold_port

    from judgekit.llm.client import LLMClient
    from judgekit.runlog import RunLog

    # the port is held from before the first server to after the second (ports.hold_port):
    # between the two, no other process (the other pytest worker's servers) can be given it
    held = hold_port()
    port = held.getsockname()[1]
    first = FaultServer(port=port).start()
    second = FaultServer(port=port)

    def on_warning(message: str) -> None:  # the server comes back once its tasks are paused
        if "refuses connections: its tasks are paused" in message:
            threading.Thread(target=second.start).start()

    # back within the budget (30 s, which the restart never nears): paused, then resumed
    patient = fault_spec(first, outage_s=30, max_retries=2, retry_max_wait=0.05)
    client = LLMClient(RunLog(tmp_path / "a"), on_warning=on_warning)
    tasks = [judge_task(f"t{i}", "[[fault:ok]]", patient) for i in range(6)]
    assert {r.status for r in run_tasks(client, *tasks[:3])} == {"ok"}  # it has answered
    first.stop()
    back = run_tasks(client, *tasks[3:])
    assert {r.status for r in back} == {"ok"}
    (health,) = [ep.health for ep in client.models.get(patient).backend.endpoints.values()]
    assert health.outages == 1 and any("is back after" in w for w in client.warnings)
    # down for longer than the budget (1.5 s): error, after it
    brief = fault_spec(second, outage_s=1.5, max_retries=2, retry_max_wait=0.05)
    other = LLMClient(RunLog(tmp_path / "b"))
    tasks = [judge_task(f"u{i}", "[[fault:ok]]", brief) for i in range(4)]
    assert {r.status for r in run_tasks(other, *tasks[:1])} == {"ok"}
    second.stop()
    started = time.monotonic()
    down = run_tasks(other, *tasks[1:])
    waited = time.monotonic() - started
    held.close()
    # at least the budget; the upper bound only catches a wait that ignores it (600 s default)
    assert {r.status for r in down} == {"error"} and 1.5 <= waited < 60, waited
    assert all(r.reason.startswith("transient: EndpointUnavailable") for r in down)
    assert any("still refuses connections after 1.5 s" in w for w in other.warnings)
