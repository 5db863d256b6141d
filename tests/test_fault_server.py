"""Tests of the fault-injecting OpenAI-compatible server (tests/fault_server.py): its directives,
the schema instances it answers with, status codes, malformed and truncated answers, latency,
per-request counts and stats (its lifecycle and timing: test_fault_server_lifecycle.py)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import openai
import pytest
from bench_answers import message_hash, schema_instance
from fault_client import (
    SCHEMA,
    Verdict,
    ask,
    client_for,
    close_clients,
    json_schema_format,
    messages_for,
)
from fault_server import FaultServer
from fault_spec import (
    MALFORMED_CONTENT,
    WRONG_SHAPE_CONTENT,
    Fault,
    expected_answer,
    find_directive,
    parse_fault,
)
from pydantic import BaseModel, ValidationError

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _close_clients():
    yield
    close_clients()


class Node(BaseModel):
    name: str
    children: list[Node] = []


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
