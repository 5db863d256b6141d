"""Answers as providers really send them (issue 20's eight cases), each against the fault
server on 127.0.0.1 answering that exact reply (``tests/reply_shapes.py``)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from cli_inproc import Ran
from cli_subprocess import run_cli
from conftest import fault_spec as spec
from conftest import judge_task
from conftest import run_tasks as run
from fault_process import FaultServerProcess
from fault_server import FaultServer
from reply_shapes import SHAPES, THINK

from judgekit.batch.answer import read_answer
from judgekit.llm.client import LLMClient
from judgekit.llm.errors import kind_of_status
from judgekit.pipelines.spilling_schemas import judge_schema
from judgekit.runlog import RunLog

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def server():
    with FaultServer() as srv:
        yield srv


def one(server: FaultServer, tmp_path: Path, shape: str, **kw):
    client = LLMClient(RunLog(tmp_path))
    server.reset()
    (rec,) = run(client, judge_task(shape, f"[[fault:{shape}]]", spec(server, **kw)))
    return rec, server.total_requests


def test_1_a_leading_think_block_is_removed_and_kept_as_reasoning(server, tmp_path) -> None:
    rec, sent = one(server, tmp_path, "think")
    assert rec.status == "ok" and len(rec.parsed["valid"]) == 5 and sent == 1
    assert rec.reasoning is not None and "{braces}" in rec.reasoning  # braces never parsed
    assert rec.raw is not None and "<think>" not in rec.raw


def test_1_an_unclosed_think_block_is_reasoning_unfinished(server, tmp_path) -> None:
    rec, sent = one(server, tmp_path, "think_unclosed")
    assert rec.status == "unscored" and rec.reason.startswith("reasoning_unfinished")
    assert rec.parsed is None and sent == 1 and THINK in rec.reasoning


def test_2_reasoning_and_answer_are_recorded_apart(server, tmp_path) -> None:
    for shape in ("reasoning_split", "reasoning_field"):
        rec, sent = one(server, tmp_path / shape, shape)
        assert rec.status == "ok" and rec.reasoning == THINK and sent == 1
        assert rec.note is None  # the answer came from the content
    rec, sent = one(server, tmp_path / "only", "reasoning_only")
    assert rec.status == "ok" and len(rec.parsed["valid"]) == 5 and sent == 1
    assert "reasoning" in rec.note and THINK in rec.reasoning  # said where it was read


@pytest.mark.parametrize(
    "shape,reason",
    [("content_filter", "content_filter"), ("safety", "content_filter"),
     ("refusal", "refusal"), ("refusal_finish", "refusal")],
)  # fmt: skip
def test_3_filters_and_refusals_are_named_and_never_re_asked(server, tmp_path, shape, reason):
    rec, sent = one(server, tmp_path, shape, max_reasks=2)
    assert rec.status == "unscored" and rec.reason.split(":")[0] == reason
    assert rec.reasks == 0 and sent == 1 and rec.parsed is None
    if shape == "refusal":
        assert rec.raw == "I can't help with that."  # the refusal's text is the record's raw


@pytest.mark.parametrize("shape", ["error_body", "no_choices"])
def test_4_an_error_inside_a_200_is_transient_never_unscored(server, tmp_path, shape) -> None:
    rec, sent = one(server, tmp_path, shape, max_retries=3)
    assert rec.status == "error" and rec.reason.startswith("transient")
    assert "provider_error" in rec.reason and sent == 3  # retried with back-off, bounded
    assert rec.parsed is None
    # once the provider is well, --retry-errors calls it again
    client = LLMClient(RunLog(tmp_path), retry_errors=True)
    server.reset()
    run(client, judge_task(shape, f"[[fault:{shape}]]", spec(server)))
    assert server.total_requests > 0


def test_4_a_200_error_then_an_answer_is_an_answer(server, tmp_path) -> None:
    rec, sent = one(server, tmp_path, "error_bodyx1")
    assert rec.status == "ok" and sent == 2


def test_5_reasoning_that_spent_max_tokens_is_truncated_not_re_asked(server, tmp_path) -> None:
    rec, sent = one(server, tmp_path, "reasoning_length", max_reasks=2)
    assert rec.status == "unscored" and rec.reason.startswith("truncated")
    assert "max_tokens" in rec.reason and rec.reasks == 0 and sent == 1
    assert rec.reasoning  # what the model spent its budget on is kept


@pytest.mark.parametrize("shape", ["ctx_vllm", "ctx_llamacpp"])
def test_7_context_overflow_is_one_record_per_item_and_never_stops(server, tmp_path, shape):
    client = LLMClient(RunLog(tmp_path))
    server.reset()
    tasks = [judge_task(f"{shape}{i}", f"[[fault:{shape}]]", spec(server)) for i in range(5)]
    tasks.append(judge_task("fine", "[[fault:ok]]", spec(server)))
    recs = run(client, *tasks)  # 5 long items in a row: no stop of the run
    by = {r.key: r for r in recs}
    assert by["fine"].status == "ok"
    for i in range(5):
        rec = by[f"{shape}{i}"]
        assert rec.status == "error" and rec.reason.startswith("context_length"), rec.reason
        assert rec.attempts == 1  # not retried
    assert Counter(r.reason.split(":")[0] for r in recs if r.reason)["context_length"] == 5


def test_7_context_overflow_classified_by_type_code_then_message() -> None:
    vllm = SHAPES["ctx_vllm"]("{}")[1]["message"]
    assert kind_of_status(400, vllm) == "context_length"
    assert kind_of_status(400, "bad thing (exceed_context_size_error 400)") == "context_length"
    assert kind_of_status(400, "temperature is not supported") == "bad_request"


def test_tool_arguments_as_an_object_are_read_as_a_string_is(server, tmp_path) -> None:
    rec, sent = one(server, tmp_path, "tool_object")
    assert rec.status == "ok" and len(rec.parsed["valid"]) == 5 and sent == 1


def test_batch_answers_go_through_the_same_reading(server) -> None:
    schema = judge_schema(5)
    answer = json.dumps({"valid": [True] * 5})
    think = SHAPES["think"](answer)[1]
    verdict = read_answer(think, schema, spec(server))
    assert verdict.status == "ok" and "{braces}" in verdict.reasoning
    filtered = read_answer(SHAPES["content_filter"](answer)[1], schema, spec(server))
    assert filtered.reason.startswith("content_filter")
    assert read_answer(SHAPES["error_body"](answer)[1], schema, spec(server)).reason.startswith(
        "provider_error"
    )


def test_every_shape_of_a_class_is_one_classification() -> None:
    from judgekit.llm.outcome import classify
    from judgekit.llm.reply import from_completion

    answer = json.dumps({"valid": [True] * 5})
    kinds = {name: classify(from_completion(shape(answer)[1])).kind for name, shape in
             SHAPES.items() if shape(answer)[0] == 200}  # fmt: skip
    assert kinds["content_filter"] == kinds["safety"] == "filtered"
    assert kinds["refusal"] == kinds["refusal_finish"] == "refusal"
    assert kinds["error_body"] == kinds["no_choices"] == "provider_error"
    assert kinds["reasoning_length"] == kinds["think_unclosed"] == "truncated"
    # Gemini's own capitals, as some gateways pass them on
    gemini = {"choices": [{"message": {"content": None}, "finish_reason": "SAFETY"}]}
    assert classify(from_completion(gemini)).kind == "filtered"


# -- the command line: case 6 (parameters) and case 8 (exit codes) ---------------------------
def judgekit(*args: str, env: dict[str, str] | None = None) -> Ran:
    return run_cli(*args, env=env, drop=lambda k: k.endswith("_API_KEY"))


def config(tmp: Path, base_url: str, n: int, directive: str = "") -> Path:
    items = tmp / "items.jsonl"
    with items.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"i{i}", "text": f"{directive} review {i}".strip()}) + "\n")
    path = tmp / "run.yaml"
    path.write_text(
        f"pipeline: classify\ncache: {{enabled: false}}\nout: {tmp / 'runs'}\n"
        f"judge: {{model: hosted_vllm/fault-model, api_base: '{base_url}', max_retries: 1, "
        f"outage_s: 0}}\n"
        f"classify: {{items: {items}, labels: [positive, negative, neutral], task: Sentiment.}}\n",
        encoding="utf-8",
    )
    return path


def test_6_the_one_line_swap_to_o3_mini_gets_past_preflight_and_runs(tmp_path) -> None:
    rules = {"temperature": 1, "top_p": 1, "max_tokens": None}  # o3-mini's rules
    with FaultServerProcess(param_rules=rules) as srv:
        cfg = config(tmp_path, srv.base_url, 3)
        env = {"OPENAI_API_KEY": "sk-test-o3"}
        swap = ["--set", "judge.model=openai/o3-mini"]
        dry = judgekit("run", str(cfg), *swap, "--dry-run", env=env)
        assert dry.returncode == 0, dry.stdout + dry.stderr
        notes = [line for line in (dry.stdout + dry.stderr).splitlines() if "not sent" in line]
        assert len(notes) == 1 and "temperature=0.0" in notes[0], dry.stdout + dry.stderr
        proc = judgekit("run", str(cfg), *swap, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert srv.stats()["counts"].get("bad_request", 0) == 0
    (found,) = (tmp_path / "runs").rglob("summary.json")
    summary = json.loads(found.read_text())
    (judge,) = [m for m in summary["signature"]["models"] if m["role"] == "judge"]
    assert "temperature" not in judge["params"] and judge["params"]["max_tokens"] == 512
    assert summary["usage"]["status"]["ok"] == 3


def test_6_temperature_null_means_the_provider_default(tmp_path) -> None:
    from judgekit.llm.params import sent_params
    from judgekit.llm.spec import ModelSpec

    spec_ = ModelSpec(model="hosted_vllm/m", api_base="http://x/v1", temperature=None)
    assert "temperature" not in sent_params(spec_)
    assert "temperature" not in sent_params(ModelSpec(model="openai/gpt-5-mini"))
    assert sent_params(ModelSpec(model="openai/gpt-4o-mini"))["temperature"] == 0.0


def test_8_nothing_scored_exits_1_and_names_the_endpoint_at_once(tmp_path) -> None:
    with FaultServerProcess() as srv:
        cfg = config(tmp_path, srv.base_url, 2, "[[fault:wrong_shape]]")
        proc = judgekit("run", str(cfg))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "nothing was scored" in out and "does not follow the JSON schema" in out


def test_8_nothing_scored_for_a_filter_exits_1_too(tmp_path) -> None:
    with FaultServerProcess() as srv:
        cfg = config(tmp_path, srv.base_url, 2, "[[fault:content_filter]]")
        proc = judgekit("run", str(cfg))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (found,) = (tmp_path / "runs").rglob("summary.json")
    summary = json.loads(found.read_text())
    assert "content_filter" in json.dumps(summary["usage"])  # counted per model


@pytest.mark.parametrize(
    "shape,status,reason",
    [("think", "ok", None), ("content_filter", "unscored", "content_filter"),
     ("reasoning_only", "ok", None), ("error_body", "error", "transient"),
     ("tool_object", "ok", None)],
)  # fmt: skip
def test_litellm_answers_are_read_by_the_same_code(server, tmp_path, shape, status, reason):
    rec, _ = one(server, tmp_path, shape, transport="litellm", max_retries=2)
    assert rec.status == status, rec.reason
    assert (rec.reason or "").split(":")[0] == (reason or "")


def test_a_refusal_keeps_its_whole_text_as_the_raw() -> None:
    """Issue 32.7(c): the record's raw was null and the reason cut at 300 characters."""
    from judgekit.llm.reply import from_completion
    from judgekit.llm.structured import InvalidAnswer, read_reply

    text = "I can't help with that. " * 30  # 720 characters
    body = {"choices": [{"message": {"content": None, "refusal": text}, "finish_reason": "stop"}]}
    with pytest.raises(InvalidAnswer) as caught:
        read_reply(from_completion(body), judge_schema(5))
    assert caught.value.raw == text and not caught.value.reask
    assert caught.value.reason == f"refusal: {text[:280]}..."


def test_a_reply_cut_by_max_tokens_names_the_reasoning_tokens_usage_reports() -> None:
    """Issue 32.7(d): where usage reports reasoning tokens, the truncated reason names them."""
    from judgekit.llm.outcome import classify
    from judgekit.llm.reply import from_completion

    usage = {"completion_tokens": 512, "completion_tokens_details": {"reasoning_tokens": 498}}
    cut = {"choices": [{"message": {"content": '{"valid": [tr'}, "finish_reason": "length"}],
           "usage": usage}  # fmt: skip
    assert classify(from_completion(cut)).reason == (
        "truncated: finish_reason=length (raise max_tokens, 498 of them reasoning)"
    )
    empty = {"choices": [{"message": {"content": ""}, "finish_reason": "length"}], "usage": usage}
    assert classify(from_completion(empty)).reason == (
        "truncated: the reasoning used the whole max_tokens budget (raise max_tokens, 498 of "
        "them reasoning)"
    )
    cut["usage"] = {"completion_tokens": 512}  # not reported: not guessed
    assert classify(from_completion(cut)).reason.endswith("(raise max_tokens)")
