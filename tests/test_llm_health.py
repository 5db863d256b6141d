"""What the llm layer tells about an endpoint while a run goes on, against real servers on
127.0.0.1: one that ignores the JSON schema is named once, loudly, and a run that scored
nothing exits non-zero; requests are counted when sent, not while they wait for the one slot;
a run on OpenAI-compatible servers alone never imports litellm or instructor."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_inproc import run_main
from conftest import fault_spec, judge_task
from fault_server import FaultServer

from judgekit.llm.client import LLMClient
from judgekit.runlog import RunLog

pytestmark = pytest.mark.timeout(120)
REPO = Path(__file__).resolve().parents[1]
PROSE = "Sure! Having read the review carefully, I would say the sentiment is positive."


def classify_config(tmp: Path, url: str, n: int) -> Path:
    items = tmp / "items.jsonl"
    items.write_text(
        "".join(json.dumps({"id": f"i{i}", "text": f"review {i}"}) + "\n" for i in range(n)),
        encoding="utf-8",
    )
    path = tmp / "run.yaml"
    path.write_text(
        f"pipeline: classify\ncache: {{enabled: false}}\n"
        f"judge: {{model: hosted_vllm/fault-model, api_base: {url}, max_concurrency: 4}}\n"
        f"classify: {{items: {items}, labels: [positive, negative, neutral], task: Sentiment.}}\n",
        encoding="utf-8",
    )
    return path


def test_an_endpoint_that_ignores_the_schema_is_named_once_and_the_run_fails(tmp_path) -> None:
    # --no-preflight: the mid-run warning (preflight's probe finds this server before the run:
    # tests/test_schema_probe.py)
    with FaultServer(answer_fn=lambda body: PROSE) as srv:  # HTTP 200, prose, every time
        config = classify_config(tmp_path, srv.base_url, 12)
        out = ["--out", str(tmp_path / "out"), "--no-preflight"]
        proc = run_main("run", str(config), *out, env={"COLUMNS": "200"})
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    warning = f"endpoint hosted_vllm/fault-model@127.0.0.1:{srv.port} does not follow the JSON"
    assert output.count(warning) == 1, output  # once, however many answers failed
    assert "set structured_output: prompt or tools" in output
    assert "nothing was scored" in output
    records = [
        json.loads(x) for x in (tmp_path / "out" / "records.jsonl").read_text().split("\n")[:-1]
    ]
    assert len(records) == 12 and {r["status"] for r in records} == {"unscored"}
    assert all(r["raw"] == PROSE and r["reason"].startswith("malformed_json") for r in records)


def test_a_request_is_counted_when_sent_not_while_it_waits_for_the_slot(tmp_path) -> None:
    with FaultServer(after=0, then="hold") as srv:  # the first answer waits for the test
        model = fault_spec(srv, max_concurrency=1, timeout=30)  # one slot, as the embedded model
        client = LLMClient(RunLog(tmp_path))
        tasks = [judge_task(f"t{i}", "[[fault:ok]]", model) for i in range(4)]

        async def go() -> list[int]:
            running = asyncio.gather(*(client.run(t) for t in tasks))
            while srv.held < 1:  # the first request is on the server, unanswered
                await asyncio.sleep(0.01)
            seen = [client.calls_made]
            await asyncio.sleep(0.2)  # the other three wait for the slot meanwhile
            seen.append(client.calls_made)
            srv.release()
            await running
            return seen

        seen = asyncio.run(go())
    assert seen == [1, 1]  # sent: 1; never the 3 waiting for the slot
    assert client.calls_made == 4 and srv.total_requests == 4


def test_a_run_on_openai_compatible_servers_imports_no_litellm(tmp_path) -> None:
    # a fresh interpreter: the test process has imported litellm already
    with FaultServer() as srv:
        config = classify_config(tmp_path, srv.base_url, 5)
        code = (
            "import sys, json; from judgekit.cli import app, cache, run\n"
            f"app(['run', {str(config)!r}, '--out', {str(tmp_path / 'out')!r}],"
            " standalone_mode=False)\n"
            "print(json.dumps([m for m in ('litellm', 'instructor') if m in sys.modules]))"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=100
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert srv.total_requests == 5
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_refusals_after_an_answer_concern_their_tasks_only(tmp_path) -> None:
    from conftest import run_tasks

    with FaultServer() as srv:
        model = fault_spec(srv, max_concurrency=1)
        client = LLMClient(RunLog(tmp_path))
        (first,) = run_tasks(client, judge_task("ok", "[[fault:ok]]", model))
        bad = [judge_task(f"b{i}", "[[fault:400]]", model) for i in range(5)]
        records = run_tasks(client, *bad)  # the endpoint works: no stop, one request each
    assert first.status == "ok"
    assert [r.status for r in records] == ["error"] * 5 and srv.total_requests == 6
    assert all(
        r.reason.startswith("request: bad_request: EndpointError: HTTP 400") for r in records
    )
