"""The outage policy in a real run: the server of a 2,000-task ``judgekit run`` is killed
(kill -9) mid-run, stays down for 20 s and restarts on the same port; the endpoint's tasks are
paused, not failed, and the run ends with 2,000 ``ok`` records and no ``error``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import wait_for_lines
from fault_server import FaultServerProcess

pytestmark = pytest.mark.timeout(240)
REPO = Path(__file__).resolve().parents[1]
RUN = "import sys; from judgekit.cli import app, cache, run; app(sys.argv[1:])"
N_ITEMS = 2000
DOWN_S = 20.0


def test_a_server_down_for_20_s_mid_run_costs_no_record(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    with items.open("w", encoding="utf-8") as fh:
        for i in range(N_ITEMS):
            fh.write(json.dumps({"id": f"it{i:04d}", "text": f"Item {i}: fine."}) + "\n")
    with FaultServerProcess(default_latency=0.01) as server:
        config = tmp_path / "run.yaml"
        config.write_text(
            f"""pipeline: classify
cache: {{enabled: false}}
judge:
  model: hosted_vllm/fault-model
  api_base: {server.base_url}
  timeout: 2.0
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
        wait_for_lines(proc, out / "records.jsonl", 300)
        server.kill()  # kill -9: requests in flight are dropped, new ones refused
        killed_at = time.monotonic()
        at_kill = (out / "records.jsonl").read_bytes().count(b"\n")
        time.sleep(DOWN_S)
        during = (out / "records.jsonl").read_bytes().count(b"\n")
        server.start()  # the same port
        output = proc.communicate(timeout=150)[0].decode("utf-8", "replace")
        resumed_in = time.monotonic() - killed_at - DOWN_S
    assert proc.returncode == 0, output[-3000:]
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == N_ITEMS and len({r["key"] for r in records}) == N_ITEMS
    assert {r["status"] for r in records} == {"ok"}  # no task became error
    assert at_kill < N_ITEMS and during - at_kill <= 32  # paused: at most those in flight ended
    assert "refuses connections: its tasks are paused" in output
    assert "is back after" in output
    print(f"outage: {at_kill} records at the kill, run finished {resumed_in:.1f} s after restart")


def test_a_paused_endpoint_resumes_or_fails_after_its_budget(tmp_path: Path) -> None:
    import threading

    from conftest import fault_spec, judge_task, run_tasks
    from fault_server import FaultServer

    from judgekit.llm.client import LLMClient
    from judgekit.runlog import RunLog

    first = FaultServer().start()
    port = first.port
    model = fault_spec(first, outage_s=1.5, max_retries=2, retry_max_wait=0.05)
    client = LLMClient(RunLog(tmp_path))
    tasks = [judge_task(f"t{i}", "[[fault:ok]]", model) for i in range(9)]
    assert {r.status for r in run_tasks(client, *tasks[:3])} == {"ok"}  # it has answered
    first.stop()
    second = FaultServer(port=port)
    threading.Timer(0.8, second.start).start()  # back within the budget: paused, then resumed
    started = time.monotonic()
    back = run_tasks(client, *tasks[3:6])
    assert {r.status for r in back} == {"ok"} and time.monotonic() - started >= 0.8
    time.sleep(0.1)
    second.stop()
    started = time.monotonic()
    down = run_tasks(client, *tasks[6:])  # down for longer than outage_s: error, after it
    waited = time.monotonic() - started
    assert {r.status for r in down} == {"error"} and 1.5 <= waited < 6, waited
    assert all(r.reason.startswith("transient: EndpointUnavailable") for r in down)
    (health,) = [ep.health for ep in client.models.get(model).backend.endpoints.values()]
    assert health.outages == 2 and any("is back after" in w for w in client.warnings)
    assert any("still refuses connections after 1.5 s" in w for w in client.warnings)
