"""Tests of the fault-injecting OpenAI-compatible server (tests/fault_server.py) and of the
benchmark server it shares its answer logic with (bench/latency_server.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

import openai
import pytest
from bench_answers import message_hash, schema_instance
from fault_process import FaultServerProcess, wait_for_port_file
from fault_server import FaultServer
from fault_spec import (
    MALFORMED_CONTENT,
    WRONG_SHAPE_CONTENT,
    Fault,
    expected_answer,
    find_directive,
    parse_fault,
)
from pydantic import BaseModel, Field, ValidationError

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[1]


class Severity(StrEnum):
    minor = "minor"
    major = "major"
    critical = "critical"


class Check(BaseModel):
    flags: list[bool] = Field(min_length=5, max_length=5)
    note: str | None = None


class Verdict(BaseModel):
    label: Literal["good", "bad"]
    score: int = Field(ge=1, le=5)
    confidence: float = Field(ge=0, le=1)
    severity: Severity
    checks: list[Check] = Field(min_length=1, max_length=3)
    grid: list[Annotated[list[bool], Field(min_length=5, max_length=5)]]
    comment: str = Field(max_length=40)


class Node(BaseModel):
    name: str
    children: list[Node] = []


SCHEMA = Verdict.model_json_schema()


def json_schema_format(schema: dict = SCHEMA) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "Verdict", "schema": schema}}


_clients: list[openai.OpenAI] = []


def client_for(base_url: str, timeout: float = 5.0, max_retries: int = 0) -> openai.OpenAI:
    """A sync openai client, closed after the test (see ``close_clients``)."""
    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=max_retries, timeout=timeout)
    _clients.append(client)
    return client


@pytest.fixture(autouse=True)
def close_clients():
    yield
    while _clients:
        _clients.pop().close()


def messages_for(text: str) -> list[dict]:
    return [{"role": "system", "content": "You are a judge."}, {"role": "user", "content": text}]


def ask(client: openai.OpenAI, text: str, *, schema: bool = True, **kwargs):
    if schema:
        kwargs.setdefault("response_format", json_schema_format())
    return client.chat.completions.create(model="judge", messages=messages_for(text), **kwargs)


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def srv():
    with FaultServer() as server:
        yield server


@pytest.fixture
def server(srv):
    srv.reset()
    return srv


@pytest.fixture
def client(server):
    return client_for(server.base_url)


# -- directives and the schema generator ------------------------------------------------------


def test_parse_fault():
    assert parse_fault("500") == Fault("500", None, None, "500")
    assert parse_fault("[[fault:500x2]]") == Fault("500", None, 2, "500x2")
    assert parse_fault("latency=0.2") == Fault("latency", 0.2, None, "latency=0.2")
    assert parse_fault("latency=0.2x3") == Fault("latency", 0.2, 3, "latency=0.2x3")
    assert parse_fault("429=2") == Fault("429", 2.0, None, "429=2")
    assert parse_fault("okx2").kind == "ok"
    for kind in ("ok", "hang", "malformed", "wrong_shape", "truncated", "503"):
        assert parse_fault(kind).kind == kind
    for bad in ("bogus", "latency", "200", "500x", "[[fault:]]"):
        with pytest.raises(ValueError):
            parse_fault(bad)
    parts = [{"type": "text", "text": "first"}, {"type": "text", "text": " [[fault:hang]] x"}]
    msgs = [{"role": "user", "content": "[[fault:500]]"}, {"role": "user", "content": parts}]
    assert find_directive(msgs).kind == "hang"  # the last user message with one counts
    reask = [*msgs, {"role": "assistant", "content": "x"}, {"role": "user", "content": "again"}]
    assert find_directive(reask).kind == "hang"  # a re-ask meets the same fault
    assert find_directive(messages_for("no directive")) is None


def test_schema_instance_is_valid_and_deterministic():
    jsonschema = pytest.importorskip("jsonschema")
    values = [schema_instance(SCHEMA, seed) for seed in range(40)]
    for value in values:
        Verdict.model_validate(value)
        jsonschema.validate(value, SCHEMA)
        assert all(len(row) == 5 for row in value["grid"])
        assert all(len(check["flags"]) == 5 for check in value["checks"])
    assert values == [schema_instance(SCHEMA, seed) for seed in range(40)]
    assert len({json.dumps(v, sort_keys=True) for v in values}) > 30

    node = schema_instance(Node.model_json_schema(), 1)  # recursive $ref terminates
    Node.model_validate(node)

    misc = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "id": {"type": "string", "format": "uuid"},
            "mail": {"type": "string", "format": "email"},
            "long": {"type": "string", "minLength": 30, "maxLength": 31},
            "open": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "step": {"type": "number", "minimum": 0, "maximum": 1, "multipleOf": 0.25},
            "even": {"type": "integer", "minimum": 1, "maximum": 9, "multipleOf": 2},
            "either": {"type": ["integer", "null"]},
            "fixed": {"const": "v1"},
            "pair": {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": False,
            },
            "distinct": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": 50},
                "minItems": 4,
                "maxItems": 4,
                "uniqueItems": True,
            },
            "merged": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "integer"}}},
                    {"properties": {"b": {"type": "boolean"}}, "required": ["b"]},
                ]
            },
            "maybe": {"anyOf": [{"$ref": "#/$defs/Leaf"}, {"type": "null"}]},
            "free": {"type": "object", "additionalProperties": True, "minProperties": 2},
        },
        "required": ["when", "maybe"],
        "$defs": {"Leaf": {"type": "object", "properties": {"x": {"enum": [1, 2, 3]}}}},
    }
    for seed in range(20):
        value = schema_instance(misc, seed)
        jsonschema.validate(value, misc, format_checker=jsonschema.FormatChecker())
        assert value["maybe"] is not None and "b" in value["merged"]


# -- the in-process server --------------------------------------------------------------------


def test_models_health_and_zero_calls(server, client):
    assert [m.id for m in client.models.list().data] == ["fault-model"]
    assert get_json(server.url + "/health") == {"status": "ok"}
    stats = get_json(server.url + "/stats")
    assert stats["total_requests"] == 0 and stats["counts"] == {}
    assert server.total_requests == 0 and server.message_hashes == []
    assert server.path_counts["/v1/models"] == 1


def test_ok_answer_matches_the_requested_schema(server, client):
    response = ask(client, "Judge this translation.")
    assert response.object == "chat.completion" and response.id and response.created
    assert response.model == "judge"
    choice = response.choices[0]
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    verdict = Verdict.model_validate_json(choice.message.content)
    assert len(verdict.grid) >= 1 and all(len(row) == 5 for row in verdict.grid)
    usage = response.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens > 0

    # llama.cpp style: json_object with a schema
    alt = ask(client, "Again.", response_format={"type": "json_object", "schema": SCHEMA})
    Verdict.model_validate_json(alt.choices[0].message.content)

    # a forced function tool (instructor's TOOLS mode)
    tools = [{"type": "function", "function": {"name": "Verdict", "parameters": SCHEMA}}]
    choice = {"type": "function", "function": {"name": "Verdict"}}
    tooled = ask(client, "Tool.", schema=False, tools=tools, tool_choice=choice).choices[0]
    assert tooled.finish_reason == "tool_calls"
    Verdict.model_validate_json(tooled.message.tool_calls[0].function.arguments)
    assert server.counts == {"ok": 3}


def test_plain_text_echo(client):
    response = ask(client, "Hello there", schema=False)
    assert response.choices[0].message.content == "echo: Hello there"


def test_429_and_other_status_codes(server, client):
    with pytest.raises(openai.RateLimitError) as info:
        ask(client, "[[fault:429]] rate limited")
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "1"
    assert info.value.body["code"] == "rate_limit_exceeded"

    with pytest.raises(openai.RateLimitError) as info:
        ask(client, "[[fault:429=0.5]] custom retry-after")
    assert info.value.response.headers["retry-after"] == "0.5"

    server.retry_after = 3
    try:
        with pytest.raises(openai.RateLimitError) as info:
            ask(client, "[[fault:429]] server-wide retry-after")
        assert info.value.response.headers["retry-after"] == "3"
    finally:
        server.retry_after = 1.0

    with pytest.raises(openai.InternalServerError) as info:
        ask(client, "[[fault:500]] boom")
    assert info.value.status_code == 500 and info.value.body["type"] == "server_error"
    with pytest.raises(openai.InternalServerError) as info:
        ask(client, "[[fault:503]] unavailable")
    assert info.value.status_code == 503
    with pytest.raises(openai.BadRequestError):
        ask(client, "[[fault:nonsense]] a typo in a directive is loud")
    assert server.counts == {"429": 3, "500": 1, "503": 1, "bad_request": 1}


def test_malformed_wrong_shape_truncated(client):
    bad = ask(client, "[[fault:malformed]] x").choices[0]
    assert bad.finish_reason == "stop" and bad.message.content == MALFORMED_CONTENT
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad.message.content)

    wrong = ask(client, "[[fault:wrong_shape]] x").choices[0].message.content
    assert json.loads(wrong) == json.loads(WRONG_SHAPE_CONTENT)
    with pytest.raises(ValidationError):
        Verdict.model_validate_json(wrong)

    request = {"response_format": json_schema_format(), "messages": messages_for("[[fault:ok]]")}
    full = expected_answer(request)
    cut = ask(client, "[[fault:ok]]", max_tokens=7)  # same messages, so the same answer
    assert cut.choices[0].message.content == full
    truncated = ask(client, "[[fault:truncated]]", max_tokens=7)
    choice = truncated.choices[0]
    assert choice.finish_reason == "length" and truncated.usage.completion_tokens == 7
    content = choice.message.content
    request["messages"] = messages_for("[[fault:truncated]]")
    assert expected_answer(request).startswith(content) and len(content) > 0
    with pytest.raises(json.JSONDecodeError):
        json.loads(content)


def test_latency_directive_and_default_latency(client):
    started = time.perf_counter()
    Verdict.model_validate_json(ask(client, "[[fault:latency=0.3]]").choices[0].message.content)
    assert time.perf_counter() - started >= 0.3

    with FaultServer(default_latency=0.2) as slow:
        started = time.perf_counter()
        ask(client_for(slow.base_url), "slow")
        assert time.perf_counter() - started >= 0.2
        assert slow.counts == {"ok": 1}


def test_hang_times_out_without_blocking_others_or_shutdown():
    server = FaultServer().start()  # hang_seconds defaults to 30
    try:
        quick = client_for(server.base_url, timeout=0.5)
        started = time.perf_counter()
        with pytest.raises(openai.APITimeoutError):
            ask(quick, "[[fault:hang]]")
        assert time.perf_counter() - started < 10  # the client's 0.5 s, not the hang's 30 s

        # a request hung with a patient client, while others are served at once
        outcome: list[BaseException] = []

        def patient() -> None:
            try:
                ask(client_for(server.base_url, timeout=20), "[[fault:hang]] patient")
            except BaseException as exc:
                outcome.append(exc)

        thread = threading.Thread(target=patient)
        thread.start()
        deadline = time.monotonic() + 5
        # in_flight counts a request on arrival, before its body is read and its hang
        # recorded: wait for the record, or "not hung" may be served before it
        while server.counts["hang"] < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.in_flight == 2  # the first hang is still sleeping on the server too
        ask(quick, "not hung")
        assert server.in_flight == 2  # answered while both hangs were still held
        assert server.counts == {"hang": 2, "ok": 1}
    finally:
        started = time.perf_counter()
        server.stop()
        stopped_in = time.perf_counter() - started
    thread.join(5)
    assert stopped_in < 10  # released at once, not after the hang's 30 s
    assert not thread.is_alive() and isinstance(outcome[0], openai.APIError)


def test_xn_recovery_counted_per_request(server, client):
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            ask(client, "[[fault:500x2]] task A")
    with pytest.raises(openai.InternalServerError):
        ask(client, "[[fault:500x2]] task B")  # another request has its own count
    for _ in range(2):
        Verdict.model_validate_json(
            ask(client, "[[fault:500x2]] task A").choices[0].message.content
        )
    assert server.counts == {"500": 3, "ok": 2}
    assert [r.attempt for r in server.requests] == [1, 2, 1, 3, 4]

    # the openai client's own retries honour Retry-After and end in a success
    server.retry_after = 0.05
    try:
        retrying = client_for(server.base_url, max_retries=2)
        started = time.perf_counter()
        response = ask(retrying, "[[fault:429x2]] retried")
        assert time.perf_counter() - started >= 0.1
        Verdict.model_validate_json(response.choices[0].message.content)
    finally:
        server.retry_after = 1.0
    assert server.calls(messages_for("[[fault:429x2]] retried")) == 3
    assert server.counts == {"500": 3, "ok": 3, "429": 2}


def test_default_fault_mode():
    with FaultServer(default_fault="500x1") as flaky:
        client = client_for(flaky.base_url)
        with pytest.raises(openai.InternalServerError):
            ask(client, "task")
        Verdict.model_validate_json(ask(client, "task").choices[0].message.content)
        ask(client, "[[fault:ok]] a directive overrides the default")
        flaky.default_fault = "wrong_shape"  # may change while running
        assert ask(client, "other").choices[0].message.content == WRONG_SHAPE_CONTENT
        assert flaky.counts == {"500": 1, "ok": 2, "wrong_shape": 1}
    with pytest.raises(ValueError):
        FaultServer(default_fault="typo")


def test_answers_are_deterministic(server, client):
    first = ask(client, "Judge item 1.").choices[0].message.content
    assert ask(client, "Judge item 1.").choices[0].message.content == first
    assert ask(client, "Judge item 2.").choices[0].message.content != first
    request = {"response_format": json_schema_format(), "messages": messages_for("Judge item 1.")}
    assert expected_answer(request) == first
    with FaultServer() as other:  # a restarted server answers the same
        assert ask(client_for(other.base_url), "Judge item 1.").choices[0].message.content == first


def test_answer_fn_overrides_correct_answers():
    def answer(request: dict) -> str | None:
        text = request["messages"][-1]["content"]
        return '{"special": true}' if "special" in text else None

    with FaultServer(answer_fn=answer) as custom:
        client = client_for(custom.base_url)
        assert ask(client, "special one").choices[0].message.content == '{"special": true}'
        Verdict.model_validate_json(ask(client, "ordinary").choices[0].message.content)
        truncated = ask(client, "[[fault:truncated]] special").choices[0].message.content
        assert truncated == '{"special": true}'[:8]


def test_stats_and_reset(server, client):
    ask(client, "one")
    ask(client, "one")
    with pytest.raises(openai.InternalServerError):
        ask(client, "[[fault:500]] two")
    one, two = message_hash(messages_for("one")), message_hash(messages_for("[[fault:500]] two"))
    stats = get_json(server.url + "/stats")
    assert stats["total_requests"] == server.total_requests == 3
    assert stats["counts"] == {"ok": 2, "500": 1} == dict(server.counts)
    assert stats["message_hashes"] == server.message_hashes == [one, one, two]
    assert stats["hash_counts"] == {one: 2, two: 1}
    assert server.calls(messages_for("one")) == 2 and server.calls(messages_for("zero")) == 0
    urllib.request.urlopen(urllib.request.Request(server.url + "/reset", method="POST")).close()
    assert server.total_requests == 0 and server.counts == {}


# -- separate processes -----------------------------------------------------------------------


def test_subprocess_mode_kill_and_restart():
    with FaultServerProcess(default_latency=0.01) as proc:
        client = client_for(proc.base_url)
        first = ask(client, "persisted task").choices[0].message.content
        with pytest.raises(openai.InternalServerError):
            ask(client, "[[fault:500]]")
        stats = proc.stats()
        assert stats["total_requests"] == 2 and stats["counts"] == {"ok": 1, "500": 1}
        port = proc.port

        assert proc.kill() == -9
        with pytest.raises(openai.APIConnectionError):
            ask(client, "persisted task")
        proc.restart()
        assert proc.port == port
        assert ask(client, "persisted task").choices[0].message.content == first
        assert proc.stats()["total_requests"] == 1

        # SIGTERM is a clean, quick exit even with a request hung on the server
        outcome: list[BaseException] = []

        def patient() -> None:
            try:
                ask(client_for(proc.base_url, timeout=20), "[[fault:hang]]")
            except BaseException as exc:
                outcome.append(exc)

        hung = threading.Thread(target=patient)
        hung.start()
        deadline = time.monotonic() + 5
        while proc.stats()["in_flight"] < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        started = time.perf_counter()
        assert proc.terminate() == 0
        assert time.perf_counter() - started < 10  # not the hang's 30 s
        hung.join(5)
        assert not hung.is_alive() and isinstance(outcome[0], openai.APIError)


def test_a_later_phase_refuses_or_holds_from_the_nth_request():
    with FaultServer(after=2, then="401") as server:
        client = client_for(server.base_url)
        ask(client, "one")
        ask(client, "two")  # the first 2 requests: served by their own directive
        for text in ("three", "[[fault:ok]] four"):  # then 401, whatever the directive
            with pytest.raises(openai.AuthenticationError):
                ask(client, text)
        assert server.counts == {"ok": 2, "401": 2}
        server.set_phase(server.total_requests, "hold")
        answered: list[str] = []

        def patient() -> None:
            reply = ask(client_for(server.base_url, timeout=30), "held")
            answered.append(reply.choices[0].message.content)

        waiting = threading.Thread(target=patient)
        waiting.start()
        deadline = time.monotonic() + 10
        while server.held < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.held == 1 and answered == [] and server.stats()["held"] == 1
        server.release()  # answered by its own directive; the phase is over
        waiting.join(10)
        assert len(answered) == 1 and server.held == 0 and server.stats()["held_total"] == 1
        ask(client, "after the release")
        assert server.counts == {"ok": 4, "401": 2}  # a held request counts once, answered


def test_bench_latency_server(tmp_path):
    port_file = tmp_path / "port"
    cmd = [sys.executable, str(REPO / "bench" / "latency_server.py"), "--port", "0"]
    cmd += ["--port-file", str(port_file), "--latency", "0.02"]
    proc = subprocess.Popen(cmd)
    try:
        port = wait_for_port_file(port_file, proc=proc)
        client = client_for(f"http://127.0.0.1:{port}/v1")
        assert [m.id for m in client.models.list().data] == ["bench-model"]
        started = time.perf_counter()
        answers = {ask(client, f"item {i}").choices[0].message.content for i in range(3)}
        assert time.perf_counter() - started >= 0.06
        assert len(answers) == 1  # one precomputed answer per schema
        Verdict.model_validate_json(answers.pop())
        assert ask(client, "hi", schema=False).choices[0].message.content == "echo: hi"
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/chat/completions", data=b"{")
        assert info.value.code == 400
        info.value.close()
    finally:
        proc.terminate()
        assert proc.wait(5) == 0
