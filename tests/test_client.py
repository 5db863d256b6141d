"""The llm layer against a real fault-injecting OpenAI-compatible server on 127.0.0.1.

Each fault ends as its own status and reason; retries and re-asks are bounded; a cached or
recorded task makes zero calls; no secret reaches a record or the cache.
"""

from __future__ import annotations

import os
from pathlib import Path

from conftest import fault_spec as spec
from conftest import judge_task
from conftest import run_tasks as run
from fault_server import FaultServer

from judgekit.llm.cache import ResponseCache
from judgekit.llm.client import LLMClient, Task
from judgekit.runlog import RunLog


def task(srv: FaultServer, key: str, directive: str, **kw) -> Task:
    return judge_task(key, directive, kw.pop("spec", None) or spec(srv), **kw)


def test_each_fault_ends_as_a_reasoned_record(server: FaultServer, tmp_path: Path) -> None:
    client = LLMClient(RunLog(tmp_path))
    recs = run(
        client,
        task(server, "ok", "[[fault:ok]]"),
        task(server, "r429", "[[fault:429x2]]"),
        task(server, "r500", "[[fault:500x1]]"),
        task(server, "dead", "[[fault:500]]"),
        task(server, "malformed", "[[fault:malformed]]"),
        task(server, "shape", "[[fault:wrong_shape]]"),
        task(server, "cut", "[[fault:truncated]]"),
        task(server, "fixed", "[[fault:malformedx1]]"),
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
    t = task(server, "grow", "[[fault:wrong_shape]]", spec=spec(server, max_reasks=3))
    server.reset()
    (rec,) = run(client, t)
    assert rec.status == "unscored" and rec.reasks == 3 and rec.attempts == 4
    sizes = [len(r["messages"]) for r in server.stats()["requests"] if "messages" in r]
    if sizes:  # the server keeps request bodies: original + one answer + one correction
        assert max(sizes) <= 3


def test_hang_past_timeout_is_an_error_not_a_judgment(server: FaultServer, tmp_path) -> None:
    client = LLMClient(RunLog(tmp_path))
    t = task(server, "hang", "[[fault:hang]]", spec=spec(server, timeout=0.3, max_retries=2))
    (rec,) = run(client, t)
    assert rec.status == "error" and "Timeout" in rec.reason and rec.parsed is None


def test_cache_and_resume_make_zero_calls(server: FaultServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    first = LLMClient(RunLog(tmp_path / "a"), cache)
    server.system_fingerprint = "fp_a1"
    try:
        (a,) = run(first, task(server, "c1", "[[fault:ok]]"))
    finally:
        server.system_fingerprint = None
    server.reset()
    # resume: the same run directory returns the record without a call
    resumed = LLMClient(RunLog(tmp_path / "a"), cache)
    (b,) = run(resumed, task(server, "c1", "[[fault:ok]]"))
    # cache: a new run directory gets the cached answer without a call
    cached = LLMClient(RunLog(tmp_path / "b"), cache)
    (c,) = run(cached, task(server, "c1", "[[fault:ok]]"))
    assert server.total_requests == 0
    assert a.parsed == b.parsed == c.parsed and c.cache_hit and not b.cache_hit
    # who served the answer stays with it, in the run log and in the cache
    assert a.system_fingerprint == b.system_fingerprint == c.system_fingerprint == "fp_a1"
    assert a.served_model == c.served_model == server.model
    # a deliberate repeat (another sample index) is not collapsed
    (d,) = run(cached, task(server, "c1-s1", "[[fault:ok]]", sample_index=1))
    assert server.total_requests == 1 and not d.cache_hit
    cache.close()


def test_api_key_never_reaches_records_or_cache(server: FaultServer, tmp_path: Path) -> None:
    secret = "sk-planted-SECRET-0123456789"
    os.environ["JUDGEKIT_TEST_API_KEY"] = secret
    try:
        cache = ResponseCache(tmp_path / "cache")
        client = LLMClient(RunLog(tmp_path / "run"), cache)
        keyed = spec(server, api_key_env="JUDGEKIT_TEST_API_KEY")
        run(client, task(server, "k1", "[[fault:ok]]", spec=keyed),
            task(server, "k2", "[[fault:500]]", spec=keyed))  # fmt: skip
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
