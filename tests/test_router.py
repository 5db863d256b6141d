"""Several endpoints per spec through litellm's Router: replicas share the load, a stopped one
is cooled down, and a vLLM primary with an API fallback survives the primary stopping mid-run
(a real ``judgekit run`` against two local servers)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from cli_inproc import run_main
from fault_process import FaultServerProcess
from fault_server import FaultServer

from judgekit.config import load_config
from judgekit.llm.client import LLMClient, Task
from judgekit.llm.spec import Deployment, ModelSpec
from judgekit.pipelines.spilling_schemas import judge_schema
from judgekit.prompts import Prompt
from judgekit.runlog import RunLog

pytestmark = pytest.mark.timeout(120)
PROMPT = Prompt(id="test/judge", text="judge $x", path=Path("test"))


def tasks(model: ModelSpec, n: int, prefix: str = "t") -> list[Task]:
    return [Task(f"{prefix}{i}", "judge", "judge", model,
                 [{"role": "user", "content": f"[[fault:latency=0.01]] item {prefix}{i}"}],
                 judge_schema(5), PROMPT) for i in range(n)]  # fmt: skip


def test_replicas_share_the_load_and_a_stopped_one_is_cooled_down(tmp_path) -> None:
    with FaultServer() as a, FaultServer() as b:
        model = ModelSpec(
            model="hosted_vllm/fault-model", max_concurrency=16, timeout=15, max_retries=4,
            retry_max_wait=0.05, cooldown_time=60, allowed_fails=2,
            deployments=[Deployment(api_base=a.base_url), Deployment(api_base=b.base_url)],
        )  # fmt: skip
        b.set_phase(50, "hold")  # b answers 50, then holds: it goes away mid-run, never late

        def stop_b_once_it_holds() -> None:
            while b.held < 1:
                time.sleep(0.01)
            b.stop()

        stopper = threading.Thread(target=stop_b_once_it_holds)
        stopper.start()
        done: Counter[str] = Counter()
        client = LLMClient(RunLog(tmp_path), on_record=lambda r: done.update([r.status]))
        asyncio.run(client.run_many(tasks(model, 400), workers=64))
        stopper.join(10)
        records = list(client.records())
        b_after = b.total_requests
    assert done == {"ok": 400}, [r.reason for r in records if r.status != "ok"][:3]
    served = Counter(r.served_by.split("@")[1] for r in records)  # the host of each answer
    host_a, host_b = a.base_url.split("/")[2], b.base_url.split("/")[2]
    assert served[host_a] > served[host_b] > 0  # both served; a took over once b stopped
    assert b_after < 250  # b was cooled down, not hammered
    assert len({r.key for r in records}) == 400


def test_full_litellm_router_mode(tmp_path) -> None:
    with FaultServer() as a, FaultServer() as b:
        model = ModelSpec(
            model="hosted_vllm/fault-model", transport="litellm", timeout=5,
            deployments=[Deployment(api_base=a.base_url), Deployment(api_base=b.base_url)],
        )  # fmt: skip
        client = LLMClient(RunLog(tmp_path))
        asyncio.run(client.run_many(tasks(model, 12), workers=6))
        records = list(client.records())
        assert {r.status for r in records} == {"ok"} and len(records) == 12
        assert a.total_requests + b.total_requests == 12


def test_vllm_primary_with_api_fallback_survives_the_primary_stopping(tmp_path) -> None:
    items = tmp_path / "items.jsonl"
    with items.open("w") as fh:
        for i in range(400):
            fh.write(json.dumps({"id": f"i{i}", "text": f"[[fault:latency=0.02]] text {i}"}) + "\n")
    key = "sk-fallback-PLANTED-0123456789"
    with FaultServerProcess() as primary, FaultServerProcess(model="api-model") as api:
        primary.set_phase(150, "hold")
        config = tmp_path / "fleet.yaml"
        config.write_text(f"""pipeline: classify
cache: {{dir: {tmp_path / "cache"}}}
judge:
  name: fleet-judge
  model: hosted_vllm/fault-model
  api_base: {primary.base_url}
  max_concurrency: 16
  timeout: 15  # a slow answer on a loaded machine (2 fails) must not cool it down early
  max_retries: 4
  retry_max_wait: 0.1
  allowed_fails: 2
  cooldown_time: 120
  fallbacks:
    - model: openai/api-model
      api_base: {api.base_url}
      api_key_env: FALLBACK_KEY
      max_concurrency: 16
classify:
  items: {items}
  labels: [positive, negative, neutral]
""")
        assert load_config(config).judge.fallbacks[0].model == "openai/api-model"
        out = tmp_path / "out"
        failed: list[BaseException] = []

        def kill_the_primary() -> None:  # beside the run, which goes in this process
            try:  # it answered 150, then holds: the run cannot end before the kill
                primary.wait_held(1)
            except BaseException as exc:  # said below; the kill still ends the run
                failed.append(exc)
            primary.kill()  # the vLLM server dies mid-run

        killer = threading.Thread(target=kill_the_primary)
        killer.start()
        proc = run_main("run", str(config), "--out", str(out),
                        env={"FALLBACK_KEY": key, "COLUMNS": "200"})  # fmt: skip
        killer.join(30)
        assert not failed and not killer.is_alive(), failed
        log, output = out / "records.jsonl", proc.stdout + proc.stderr
        assert proc.returncode == 0, output[-3000:]
        api_requests = api.stats()["total_requests"]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == 400 and {r["status"] for r in records} == {"ok"}
    served = Counter(r["served_by"].split("@")[0] for r in records)
    assert served["hosted_vllm/fault-model"] >= 120 and served["openai/api-model"] > 0
    assert api_requests >= served["openai/api-model"]
    assert {r["model"] for r in records} == {"fleet-judge"}  # the record names the role's model
    summary = json.loads((out / "summary.json").read_text())
    assert summary["items"]["judged"] == 400
    assert sum(summary["usage"]["served_by"].values()) == 400
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
    assert key not in output
