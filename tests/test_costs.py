"""Costs: a route without a known price costs ``null`` (never $0), counted apart in summaries and
on the console; self-hosted routes and configured prices of 0 stay $0 (issue 12, case 6)."""

from __future__ import annotations

import json

import pytest
from cli_inproc import run_main
from conftest import fault_spec as spec
from conftest import judge_task as task
from conftest import run_tasks as run

from judgekit.llm.client import LLMClient
from judgekit.llm.usage import Prices, cost_text, prices_for
from judgekit.run_usage import usage_summary
from judgekit.runlog import RunLog

UNPRICED = "openai/my-brand-new-judge-2099"


def test_prices_known_unknown_and_self_hosted() -> None:
    from judgekit.llm.spec import ModelSpec

    unknown = prices_for(ModelSpec(model=UNPRICED, api_base="http://127.0.0.1:9/v1"))
    assert not unknown.known and unknown.cost(1000, 200) is None
    known = prices_for(ModelSpec(model="openai/gpt-4o-mini"))  # litellm's bundled table
    assert known.known and known.cost(1000, 200) == pytest.approx(
        1000 * known.input + 200 * known.output
    )
    assert known.cost(1000, 200) > 0
    zero = ModelSpec(model=UNPRICED, price_input_per_mtok=0, price_output_per_mtok=0)
    assert prices_for(zero).cost(1000, 200) == 0.0  # a configured price of 0 is a price
    vllm = ModelSpec(model="hosted_vllm/Qwen/Qwen3-8B", api_base="http://127.0.0.1:9/v1")
    assert prices_for(vllm).cost(1000, 200) == 0.0
    assert prices_for(ModelSpec(model="local/smollm2-135m")).cost(1000, 200) == 0.0
    assert Prices(known=False).cost(0, 0) is None
    assert cost_text(0.5, 0) == "$0.5000"
    assert cost_text(0.0, 3) == "$0.0000 (cost unknown for 3 calls)"


def test_unpriced_route_records_null_cost_and_the_summary_counts_it(server, tmp_path) -> None:
    unpriced = spec(server, model=UNPRICED, name="new", transport="aiohttp")
    free = spec(server, name="vllm")
    client = LLMClient(RunLog(tmp_path))
    recs = run(client, *(task(f"u{i}", "[[fault:ok]]", unpriced) for i in range(3)),
               task("f", "[[fault:ok]]", free))  # fmt: skip
    assert all(r.status == "ok" and r.tokens_in > 0 for r in recs)
    assert [r.cost for r in recs[:3]] == [None, None, None] and recs[3].cost == 0.0
    on_disk = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert sorted(r["cost"] is None for r in on_disk) == [False, True, True, True]  # JSON null
    summary = usage_summary(client.records())
    assert summary["totals"]["cost_unknown"] == 3 and summary["totals"]["cost_usd"] == 0.0
    assert summary["by_model"]["judge|new"]["cost_unknown"] == 3
    assert summary["by_model"]["judge|vllm"]["cost_unknown"] == 0
    assert client.usage.cost_text() == "$0.0000 (cost unknown for 3 calls)"  # live progress


def test_run_console_says_cost_unknown(server, tmp_path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{i}", "text": "fine"}) + "\n" for i in range(2)))
    config = tmp_path / "run.yaml"
    config.write_text(
        f"pipeline: classify\njudge:\n  model: {UNPRICED}\n  api_base: {server.base_url}\n"
        "  api_key_env: JUDGEKIT_TEST_COST_KEY\n  transport: aiohttp\n  timeout: 2.0\n"
        f"classify:\n  items: {items}\n  labels: [good, bad]\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    env = {"JUDGEKIT_TEST_COST_KEY": "sk-test", "COLUMNS": "200"}
    proc = run_main("run", str(config), "--out", str(out), "--no-cache", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cost $0.0000 (cost unknown for 2 calls)" in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["usage"]["totals"]["cost_unknown"] == 2
