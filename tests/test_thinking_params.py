"""Thinking models (issue 32, 7(a)): Claude with extended thinking through litellm gets
Anthropic's rules (temperature 1, no forced tool call), preflight prints the rule applied, and
a configuration Anthropic would refuse stops before the run (``judgekit.llm.params``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_subprocess import run_cli

from judgekit.errors import JudgekitError
from judgekit.llm.endpoint import make_endpoint
from judgekit.llm.params import params_note, sent_params
from judgekit.llm.preflight import preflight
from judgekit.llm.providers.litellm import litellm_kwargs
from judgekit.llm.spec import ModelSpec
from judgekit.llm.structured import output_format
from judgekit.pipelines.spilling_schemas import judge_schema

CLAUDE = "anthropic/claude-sonnet-4-20250514"
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}}


def claude(**kw) -> ModelSpec:
    return ModelSpec(model=CLAUDE, **{"max_tokens": 2048, "extra": THINKING, **kw})


def test_claude_thinking_is_sent_temperature_1_and_no_forced_tool_call(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    spec = claude()
    assert spec.strategy() == "prompt"  # before: "tools" (a forced tool call: refused)
    params = sent_params(spec)
    assert params["temperature"] == 1.0 and params["thinking"] == THINKING["thinking"]
    fmt = output_format(judge_schema(3), spec.strategy())
    kwargs = litellm_kwargs(make_endpoint(spec, None, None, {}), fmt)
    assert "tool_choice" not in kwargs and "tools" not in kwargs
    assert kwargs["temperature"] == 1.0 and fmt.hint is not None  # the schema in the prompt
    # reasoning_effort asks for thinking too (litellm maps it to Anthropic's thinking)
    effort = ModelSpec(model=CLAUDE, extra={"reasoning_effort": "low"})
    assert effort.strategy() == "prompt" and sent_params(effort)["temperature"] == 1.0


def test_without_thinking_nothing_changes() -> None:
    plain = ModelSpec(model=CLAUDE)
    assert plain.strategy() == "tools" and sent_params(plain)["temperature"] == 0.0
    off = ModelSpec(model=CLAUDE, extra={"thinking": {"type": "disabled"}})
    assert off.strategy() == "tools" and sent_params(off)["temperature"] == 0.0
    served = ModelSpec(model="hosted_vllm/claude-like", api_base="http://x/v1", extra=THINKING)
    assert sent_params(served)["temperature"] == 0.0  # a server takes every parameter


def test_top_p_outside_anthropics_range_is_not_sent_and_said() -> None:
    spec = claude(top_p=0.5)
    assert "top_p" not in sent_params(spec)
    assert "not sent top_p=0.5" in (params_note(spec, "judge") or "")
    assert sent_params(claude(top_p=0.97))["top_p"] == 0.97


def test_a_route_litellm_says_takes_no_tool_choice_gets_the_prompt_strategy() -> None:
    spec = ModelSpec(model="deepseek/deepseek-reasoner")
    assert spec.strategy() == "prompt"
    assert "auto -> prompt" in (params_note(spec, "judge") or "")


def test_preflight_stops_a_thinking_run_anthropic_would_refuse(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with pytest.raises(JudgekitError, match="structured_output: tools forces a tool call"):
        preflight({"judge": claude(structured_output="tools")})
    with pytest.raises(JudgekitError, match="max_tokens 512 must be above"):
        preflight({"judge": claude(max_tokens=512)})


def test_preflight_prints_the_rule_applied(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "i0", "text": "a review"}\n', encoding="utf-8")
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        f"pipeline: classify\ncache: {{enabled: false}}\nout: {tmp_path / 'runs'}\n"
        f"judge: {{model: {CLAUDE}, max_tokens: 2048, extra: {{thinking: {{type: enabled, "
        "budget_tokens: 1024}}}\n"
        f"classify: {{items: {items}, labels: [positive, negative], task: Sentiment.}}\n",
        encoding="utf-8",
    )
    proc = run_cli("run", str(cfg), "--dry-run", env={"ANTHROPIC_API_KEY": "sk-ant-test"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    (line,) = [x for x in out.splitlines() if "extended thinking" in x]
    assert "temperature=1.0 (not 0.0)" in line and "structured_output auto -> prompt" in line
