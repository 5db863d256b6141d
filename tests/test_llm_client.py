"""The llm client against a real fault-injecting OpenAI-compatible server on 127.0.0.1.

Each fault ends as its own status and reason; retries and re-asks are bounded (by attempts and
by total time); adaptive back-off; a cached or recorded task makes zero calls; no secret reaches
a record or the cache; usage and cost; strategies over the fast transport; streamed records;
keys from files."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
from conftest import fault_spec as spec
from conftest import judge_task as task
from conftest import run_tasks as run
from fault_server import FaultServer

from judgekit.errors import JudgekitError
from judgekit.llm.cache import ResponseCache
from judgekit.llm.client import LLMClient, Task
from judgekit.llm.secrets import redact, resolve_key
from judgekit.run_usage import usage_summary
from judgekit.runlog import RunLog


def test_429_shrinks_in_flight_honours_retry_after_and_recovers(server, tmp_path) -> None:
    model = spec(server, max_concurrency=32)
    client = LLMClient(RunLog(tmp_path))
    started = time.monotonic()
    recs = run(client, *(task(f"r{i}", "[[fault:429x1]]", model) for i in range(64)))
    assert all(r.status == "ok" and r.attempts == 2 for r in recs)
    assert all(r.latency_s >= 0.05 for r in recs)  # each waited at least its Retry-After
    (stats,) = client.endpoint_stats().values()
    assert stats["rate_limited"] == 64 and stats["min_limit"] < stats["ceiling"] == 32
    recs = run(client, *(task(f"ok{i}", "[[fault:ok]]", model) for i in range(200)))
    assert client.endpoint_stats()[recs[0].served_by]["limit"] > stats["min_limit"]  # recovery
    assert time.monotonic() - started < 10


def test_retries_end_by_attempts_and_by_total_time(server, tmp_path) -> None:
    client = LLMClient(RunLog(tmp_path))
    slow = spec(server, timeout=0.2, max_retries=10, max_total_time=0.8, retry_max_wait=0.05)
    started = time.monotonic()
    (hung, refused, bad) = run(
        client,
        task("hang", "[[fault:hang]]", slow),
        task("down", "[[fault:ok]]", spec(server, api_base="http://127.0.0.1:9/v1")),
        task("bad", "[[fault:400]]", spec(server)),
    )
    # 0.8 s of budget; the bound (loose, for a loaded machine) catches unbounded retries only
    assert time.monotonic() - started < 10
    assert hung.status == "error" and "Timeout" in hung.reason and hung.attempts < 10
    assert refused.status == "error" and refused.reason.startswith("transient: EndpointUnavail")
    assert refused.attempts == 3  # bounded by max_retries
    assert bad.status == "error" and bad.reason.startswith("request:") and bad.attempts == 1
    assert hung.parsed is refused.parsed is bad.parsed is None


@pytest.mark.parametrize("strategy", ["json_schema", "json_object", "tools", "prompt"])
def test_each_strategy_validates_over_the_fast_transport(server, tmp_path, strategy) -> None:
    def plain(request: dict) -> str | None:  # with the schema in the prompt only
        prompt = request["messages"][-1]["content"]
        assert "JSON schema" in prompt and "response_format" not in request
        return '{"valid": [true, false, true, true, false]}'

    server.answer_fn = plain if strategy == "prompt" else None
    try:
        client = LLMClient(RunLog(tmp_path))
        (rec,) = run(client, task("s", "[[fault:ok]]", spec(server, structured_output=strategy)))
    finally:
        server.answer_fn = None
    assert rec.status == "ok" and len(rec.parsed["valid"]) == 5


def test_usage_and_cost_per_call_with_a_configured_price(server, tmp_path) -> None:
    priced = spec(server, name="judge-a", price_input_per_mtok=2.0, price_output_per_mtok=10.0)
    free = spec(server, name="judge-b")
    client = LLMClient(RunLog(tmp_path))
    recs = run(client, *(task(f"p{i}", "[[fault:ok]]", priced) for i in range(3)),
               task("f", "[[fault:ok]]", free))  # fmt: skip
    a = recs[0]
    assert a.tokens_in > 0 and a.tokens_out > 0 and a.latency_s > 0
    assert a.cost == pytest.approx((2.0 * a.tokens_in + 10.0 * a.tokens_out) / 1e6)
    assert recs[-1].cost == 0.0  # a local server without a price costs nothing
    summary = usage_summary(client.records())
    assert summary["calls"] == 4 and summary["status"]["ok"] == 4
    assert summary["by_model"]["judge|judge-a"]["cost_usd"] == pytest.approx(
        sum(r.cost for r in recs[:3])
    )
    assert summary["totals"]["tokens_in"] == sum(r.tokens_in for r in recs)
    assert client.usage.total("calls") == 4  # live totals for the progress bar


def test_records_are_streamed_not_held(server, tmp_path) -> None:
    log = RunLog(tmp_path)
    client = LLMClient(log)
    run(client, *(task(f"m{i}", "[[fault:ok]]", spec(server)) for i in range(50)))
    assert len(client.seen) == 50 and "m7" in client.seen
    assert client.seen["m7"].key == "m7"  # read back from records.jsonl on demand
    assert all(isinstance(v, int) for v in log._index.values())  # positions, not records
    assert sorted(r.key for r in client.records()) == sorted(f"m{i}" for i in range(50))
    log.close()
    assert client.seen["m8"].key == "m8"  # still readable once the log is closed
    again = LLMClient(RunLog(tmp_path))
    (rec,) = run(again, task("m7", "[[fault:ok]]", spec(server)))
    assert again.calls_made == 0 and rec.parsed == client.seen["m7"].parsed
    assert len(again.seen) == 1  # this run used one record


def test_api_key_from_a_file_or_the_environment(server, tmp_path) -> None:
    key_file = tmp_path / "key.txt"
    key_file.write_text("sk-from-file-0123456789\n")
    assert resolve_key(None, key_file) == "sk-from-file-0123456789"
    assert redact("auth failed for sk-from-file-0123456789") == "auth failed for ***"
    client = LLMClient(RunLog(tmp_path / "run"))
    (rec,) = run(client, task("k", "[[fault:ok]]", spec(server, api_key_file=key_file)))
    assert rec.status == "ok"
    os.environ.pop("JUDGEKIT_UNSET_KEY", None)
    with pytest.raises(JudgekitError, match="JUDGEKIT_UNSET_KEY"):
        run(client, task("k2", "[[fault:ok]]", spec(server, api_key_env="JUDGEKIT_UNSET_KEY")))
    with pytest.raises(JudgekitError, match="missing or empty"):
        resolve_key(None, tmp_path / "absent.txt")
    for path in tmp_path.rglob("*"):
        if path.is_file() and path != key_file:
            assert b"sk-from-file" not in path.read_bytes(), path


def test_a_warm_run_starts_no_backend(server, tmp_path) -> None:
    from judgekit.llm.cache import ResponseCache

    cache = ResponseCache(tmp_path / "cache")
    tasks = [task(f"w{i}", "[[fault:ok]]", spec(server)) for i in range(20)]
    first = LLMClient(RunLog(tmp_path / "a"), cache)
    asyncio.run(first.run_many(tasks, workers=8))
    cache.flush()
    warm = LLMClient(RunLog(tmp_path / "b"), cache)
    assert warm.prefetch(tasks) == 20
    asyncio.run(warm.run_many(tasks, workers=8))
    assert warm.calls_made == 0 and all(s.backend is None for s in warm.models.states())
    assert all(r.cache_hit for r in warm.records())
    # answered from the cache in bulk: every task reaches on_done once, with the first answer
    done: dict[str, object] = {}
    bulk = LLMClient(RunLog(tmp_path / "c"), cache)
    asyncio.run(bulk.run_many(tasks, 8, lambda t, r: done.setdefault(t.key, r)))
    first_parsed = {r.key: r.parsed for r in first.records()}
    assert bulk.calls_made == 0 and sorted(done) == sorted(first_parsed)
    assert all(r.cache_hit and r.parsed == first_parsed[k] for k, r in done.items())
    assert len(bulk.records()) == 20
    cache.close()


def test_latency_leaves_out_the_wait_for_a_free_slot(server, tmp_path) -> None:
    one_at_a_time = spec(server, max_concurrency=1, adaptive_concurrency=False)
    tasks = [task(f"q{i}", "[[fault:latency=0.5]]", one_at_a_time) for i in range(3)]
    start = time.monotonic()
    records = run(LLMClient(RunLog(tmp_path / "q")), *tasks)
    assert time.monotonic() - start >= 1.45  # served one after the other
    latencies = sorted(r.latency_s for r in records)
    assert all(r.status == "ok" for r in records) and latencies[0] >= 0.45, latencies
    # with the waits counted they would be 0.5, 1.0 and 1.5 s (a spread of 1 s or more, load
    # or not); without, each is its own 0.5 s, give or take the machine's noise
    assert latencies[-1] - latencies[0] < 0.9, latencies


def test_two_tasks_with_one_key_make_one_call_and_one_record(server, tmp_path) -> None:
    model = spec(server)
    twins = [task("same", "[[fault:latency=0.2]]", model) for _ in range(2)]
    client = LLMClient(RunLog(tmp_path / "twins"))
    first, second = run(client, *twins)
    assert client.calls_made == 1 and first is second and first.status == "ok"
    assert len((tmp_path / "twins" / "records.jsonl").read_text().splitlines()) == 1


def test_a_duplicate_outlives_the_cancelled_first_caller(tmp_path) -> None:
    with FaultServer(hang_seconds=1) as srv:
        model = spec(srv, timeout=3.0, max_retries=1)
        client = LLMClient(RunLog(tmp_path / "c"))

        async def go():
            first = asyncio.ensure_future(
                asyncio.wait_for(client.run(task("h", "[[fault:hang]]", model)), 0.2)
            )
            while "h" not in client._running:  # the first caller's call is under way
                await asyncio.sleep(0)
            second = asyncio.ensure_future(client.run(task("h", "[[fault:hang]]", model)))
            return await asyncio.gather(first, second, return_exceptions=True)

        first, second = asyncio.run(go())
    assert isinstance(first, TimeoutError)
    assert second.key == "h" and second.status in ("ok", "error") and not client._running


def test_retry_errors_calls_a_failed_key_once_per_run(server, tmp_path) -> None:
    model = spec(server, max_retries=1)
    failing = [task("e", "[[fault:500]]", model) for _ in range(4)]
    client = LLMClient(RunLog(tmp_path / "r"), retry_errors=True)
    asyncio.run(client.run_many(failing, workers=1))
    assert client.calls_made == 1
    assert len((tmp_path / "r" / "records.jsonl").read_text().splitlines()) == 1


def test_cache_entries_that_are_not_valid_answers_are_called_again(server, tmp_path) -> None:
    from judgekit.llm.cache import ResponseCache, task_key

    model = spec(server)
    cache = ResponseCache(tmp_path / "cache")
    tasks = [task(f"g{i}", "[[fault:ok]]", model) for i in range(7)]
    client = LLMClient(RunLog(tmp_path / "a"), cache)
    prefix = client.models.get(model).format(tasks[0].schema)[1]
    five = [True, False, True, True, False]
    entries = [{"raw": "x"}, "a string", {"raw": "x", "parsed": "garbage"},
               {"raw": "x", "parsed": {"valid": [1, 2]}}, None,
               {"raw": None, "parsed": {"valid": five}},
               {"raw": "[true,false,true,true,false]", "parsed": five}]  # fmt: skip
    for t, value in zip(tasks, entries, strict=True):
        cache._cache.set(task_key(prefix, t.messages, 0), value)
    done: dict[str, list] = {}
    run_these = [*tasks, task("g0", "[[fault:ok]]", model)]  # g0 twice: one call, one count
    asyncio.run(client.run_many(run_these, 4, lambda t, r: done.setdefault(t.key, []).append(r)))
    assert client.calls_made == 6 and client.cache_rejected == 5  # None is a plain miss
    assert len(done["g0"]) == 2 and all(r.status == "ok" for rs in done.values() for r in rs)
    assert [k for k, rs in done.items() if rs[0].cache_hit] == ["g6"]
    # every parsed answer as a fresh one is stored: the bare list of g6 comes back as its model
    assert all(list(r[0].parsed) == ["valid"] and len(r[0].parsed["valid"]) == 5
               for r in done.values())  # fmt: skip
    assert done["g6"][0].parsed == {"valid": five}
    cache.flush()
    again = LLMClient(RunLog(tmp_path / "b"), cache)  # the entries were rewritten
    asyncio.run(again.run_many(tasks, 4))
    assert again.calls_made == 0 and again.cache_rejected == 0
    assert {r.key: r.parsed for r in again.records()} == {k: rs[0].parsed for k, rs in done.items()}


def test_a_repeated_key_waits_for_the_retry_of_its_error(server, tmp_path) -> None:
    model = spec(server, max_retries=1)
    asyncio.run(LLMClient(RunLog(tmp_path)).run_many([task("e", "[[fault:500]]", model)], 1))
    assert RunLog(tmp_path).get("e").status == "error"
    client = LLMClient(RunLog(tmp_path), retry_errors=True)
    again = [task("e", "[[fault:latency=0.3]]", model) for _ in range(2)]  # now it answers
    done = []
    asyncio.run(client.run_many(again, 2, lambda t, r: done.append(r.status), batch=1))
    assert done == ["ok", "ok"] and client.calls_made == 1


def test_specs_on_one_embedded_server_share_its_one_slot(monkeypatch) -> None:
    from judgekit.llm.backends import Sender
    from judgekit.llm.models import ModelRegistry
    from judgekit.llm.spec import ModelSpec
    from judgekit.llm.transport import AiohttpTransport

    registry = ModelRegistry(Sender(AiohttpTransport()))

    async def started(spec: ModelSpec) -> str:  # as if the embedded server were up
        return "http://127.0.0.1:9/v1"

    monkeypatch.setattr(registry, "_start_local", started)
    generator = ModelSpec(model="local/smollm2-135m", name="generator", max_tokens=512)
    judge = ModelSpec(model="local/smollm2-135m", name="judge", max_tokens=64)
    vllm = ModelSpec(model="hosted_vllm/m", api_base="http://127.0.0.1:9/v1")
    fallback = ModelSpec(model="local/smollm2-135m", name="fallback")
    fleet = ModelSpec(model="hosted_vllm/m", api_base="http://127.0.0.1:9/v1", fallbacks=[fallback])

    async def build():
        specs = (generator, judge, vllm, fleet)
        return [await registry.backend(registry.get(s)) for s in specs]

    gen, jud, other, routed = asyncio.run(build())
    assert gen.endpoint.limiter is jud.endpoint.limiter and gen.endpoint.limiter.limit == 1
    assert other.endpoint.limiter is not gen.endpoint.limiter
    limiters = {ep.spec.model: ep.limiter for ep in routed.endpoints.values()}
    assert limiters["local/smollm2-135m"] is gen.endpoint.limiter  # a fallback shares it too
    assert limiters["hosted_vllm/m"] is not gen.endpoint.limiter


def test_dry_run_counts_only_usable_cache_entries(tmp_path) -> None:
    from judgekit.llm.cache import ResponseCache, task_key
    from judgekit.llm.estimate import dry_run
    from judgekit.llm.spec import ModelSpec

    model = ModelSpec(model="hosted_vllm/m", api_base="http://127.0.0.1:9/v1")
    tasks = [task(f"d{i}", "[[fault:ok]]", model) for i in range(3)]
    cache = ResponseCache(tmp_path / "cache")
    client = LLMClient(RunLog(tmp_path / "run"), cache)
    prefix = client.models.get(model).format(tasks[0].schema)[1]
    entries = [{"raw": "[]", "parsed": {"valid": [True] * 5}}, {"raw": "x", "parsed": "junk"}]
    for t, value in zip(tasks, entries, strict=False):
        cache._cache.set(task_key(prefix, t.messages, 0), value)
    estimate = dry_run(tasks, client.runlog, cache)
    assert (estimate.cached, estimate.calls) == (1, 2)
    assert client.prefetch(tasks) == 1 and client.cache_rejected == 1


def test_an_answer_with_a_lone_surrogate_is_recorded_not_a_crash(server, tmp_path) -> None:
    # "\ud800" is valid JSON but no UTF-8 text can hold it: the record could not be written
    server.answer_fn = lambda request: '{"valid": [true, false, true, true, false]}\ud800'
    try:
        client = LLMClient(RunLog(tmp_path))
        (rec,) = run(client, task("s", "[[fault:ok]]", spec(server, max_reasks=0)))
    finally:
        server.answer_fn = None
    assert rec.raw is not None and "\ud800" not in rec.raw and "\ufffd" in rec.raw
    assert rec.status in ("ok", "unscored")  # recorded, whatever the parser made of it
    client.runlog.close()
    (line,) = (tmp_path / "records.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["raw"] == rec.raw  # written, and readable from records.jsonl


def fault_task(srv: FaultServer, key: str, directive: str, **kw) -> Task:
    """A judge task on ``srv`` (its default spec unless ``spec=`` is given)."""
    return task(key, directive, kw.pop("spec", None) or spec(srv), **kw)


def test_each_fault_ends_as_a_reasoned_record(server: FaultServer, tmp_path: Path) -> None:
    client = LLMClient(RunLog(tmp_path))
    recs = run(
        client,
        fault_task(server, "ok", "[[fault:ok]]"),
        fault_task(server, "r429", "[[fault:429x2]]"),
        fault_task(server, "r500", "[[fault:500x1]]"),
        fault_task(server, "dead", "[[fault:500]]"),
        fault_task(server, "malformed", "[[fault:malformed]]"),
        fault_task(server, "shape", "[[fault:wrong_shape]]"),
        fault_task(server, "cut", "[[fault:truncated]]"),
        fault_task(server, "fixed", "[[fault:malformedx1]]"),
    )
    by = {r.key: r for r in recs}
    assert by["ok"].status == "ok" and len(by["ok"].parsed["valid"]) == 5
    assert by["r429"].status == "ok" and by["r429"].attempts == 3
    assert by["r500"].status == "ok" and by["r500"].attempts == 2
    assert by["dead"].status == "error" and by["dead"].reason.startswith("transient")
    assert by["dead"].attempts == 3  # bounded by max_retries
    assert by["malformed"].status == "unscored"
    assert by["malformed"].reason.startswith("malformed_json")
    assert by["malformed"].raw == '{"valid": [true, fal'  # the raw answer is kept
    assert by["malformed"].parsed is None  # never mapped to a default label
    assert by["shape"].status == "unscored" and by["shape"].reason.startswith("schema")
    assert by["cut"].status == "unscored" and by["cut"].reason.startswith("truncated")
    assert by["fixed"].status == "ok" and by["fixed"].reasks == 1
    lines = (tmp_path / "records.jsonl").read_text().splitlines()
    assert len(lines) == 8  # one record per task, failures included


def test_reask_is_bounded_and_does_not_grow_the_context(server: FaultServer, tmp_path) -> None:
    client = LLMClient(RunLog(tmp_path))
    t = fault_task(server, "grow", "[[fault:wrong_shape]]", spec=spec(server, max_reasks=3))
    server.reset()
    (rec,) = run(client, t)
    assert rec.status == "unscored" and rec.reasks == 3 and rec.attempts == 4
    sizes = [len(r["messages"]) for r in server.stats()["requests"] if "messages" in r]
    if sizes:  # the server keeps request bodies: original + one answer + one correction
        assert max(sizes) <= 3


def test_hang_past_timeout_is_an_error_not_a_judgment(server: FaultServer, tmp_path) -> None:
    client = LLMClient(RunLog(tmp_path))
    t = fault_task(server, "hang", "[[fault:hang]]", spec=spec(server, timeout=0.3, max_retries=2))
    (rec,) = run(client, t)
    assert rec.status == "error" and "Timeout" in rec.reason and rec.parsed is None


def test_cache_and_resume_make_zero_calls(server: FaultServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    first = LLMClient(RunLog(tmp_path / "a"), cache)
    server.system_fingerprint = "fp_a1"
    try:
        (a,) = run(first, fault_task(server, "c1", "[[fault:ok]]"))
    finally:
        server.system_fingerprint = None
    server.reset()
    # resume: the same run directory returns the record without a call
    resumed = LLMClient(RunLog(tmp_path / "a"), cache)
    (b,) = run(resumed, fault_task(server, "c1", "[[fault:ok]]"))
    # cache: a new run directory gets the cached answer without a call
    cached = LLMClient(RunLog(tmp_path / "b"), cache)
    (c,) = run(cached, fault_task(server, "c1", "[[fault:ok]]"))
    assert server.total_requests == 0
    assert a.parsed == b.parsed == c.parsed and c.cache_hit and not b.cache_hit
    # who served the answer stays with it, in the run log and in the cache
    assert a.system_fingerprint == b.system_fingerprint == c.system_fingerprint == "fp_a1"
    assert a.served_model == c.served_model == server.model
    # a deliberate repeat (another sample index) is not collapsed
    (d,) = run(cached, fault_task(server, "c1-s1", "[[fault:ok]]", sample_index=1))
    assert server.total_requests == 1 and not d.cache_hit
    cache.close()


def test_api_key_never_reaches_records_or_cache(server: FaultServer, tmp_path: Path) -> None:
    secret = "sk-planted-SECRET-0123456789"
    os.environ["JUDGEKIT_TEST_API_KEY"] = secret
    try:
        cache = ResponseCache(tmp_path / "cache")
        client = LLMClient(RunLog(tmp_path / "run"), cache)
        keyed = spec(server, api_key_env="JUDGEKIT_TEST_API_KEY")
        run(client, fault_task(server, "k1", "[[fault:ok]]", spec=keyed),
            fault_task(server, "k2", "[[fault:500]]", spec=keyed))  # fmt: skip
        client.runlog.close()
        cache.close()
    finally:
        del os.environ["JUDGEKIT_TEST_API_KEY"]
    records = (tmp_path / "run" / "records.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(records) == 2  # both tasks were recorded: the check below reads real files
    written = [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.stat().st_size]
    assert written, "the cache wrote nothing"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
