"""Preflight and refusals no retry can fix, through ``judgekit run`` (in the test process; a real
process where the run's output is read while it waits) against real servers on 127.0.0.1: a
missing key, a wrong served model name, an unreachable server and a server that answers 401 are
each one line and exit 2, before (or soon after) the first call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_inproc import Ran
from cli_subprocess import REPO, RUN, run_cli
from fault_process import FaultServerProcess
from fault_server import FaultServer
from ports import hold_port

from judgekit.errors import JudgekitError
from judgekit.llm.errors import EndpointError, kind_of_status
from judgekit.llm.preflight import preflight, routes_of
from judgekit.llm.spec import Deployment, ModelSpec

pytestmark = pytest.mark.timeout(120)
KEY_ENV = "JUDGEKIT_PREFLIGHT_KEY"


def write_items(path: Path, n: int, directive: str = "") -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"i{i}", "text": f"{directive} review {i}".strip()}) + "\n")
    return path


def classify_config(tmp: Path, judge: str, items: Path, cache: bool = False) -> Path:
    path = tmp / "run.yaml"
    path.write_text(
        f"pipeline: classify\ncache: {{enabled: {str(cache).lower()}, dir: {tmp / 'cache'}}}\n"
        f"judge: {judge}\n"
        f"classify: {{items: {items}, labels: [positive, negative, neutral], task: Sentiment.}}\n",
        encoding="utf-8",
    )
    return path


def judgekit(*args: str, env: dict[str, str] | None = None) -> Ran:
    return run_cli(*args, env=env, drop=lambda k: k == KEY_ENV)


def error_lines(proc: Ran) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("error: ")]


def test_an_unset_key_variable_exits_2_before_any_request(tmp_path: Path) -> None:
    with FaultServer() as srv:
        judge = (
            f"{{model: hosted_vllm/fault-model, api_base: {srv.base_url}, api_key_env: {KEY_ENV}}}"
        )
        config = classify_config(tmp_path, judge, write_items(tmp_path / "items.jsonl", 12))
        out = tmp_path / "out"
        for extra in ((), ("--dry-run",)):
            proc = judgekit("run", str(config), "--out", str(out), *extra)
            assert proc.returncode == 2, proc.stdout + proc.stderr
            (line,) = error_lines(proc)
            assert f"judge (hosted_vllm/fault-model): environment variable {KEY_ENV}" in line
            assert "Traceback" not in proc.stderr
        assert srv.total_requests == 0 and sum(srv.path_counts.values()) == 0  # nothing sent
        assert not out.exists()  # no run directory left behind


def test_an_unset_key_is_reported_alike_when_every_task_is_cached(tmp_path: Path) -> None:
    with FaultServer() as srv:
        judge = (
            f"{{model: hosted_vllm/fault-model, api_base: {srv.base_url}, api_key_env: {KEY_ENV}}}"
        )
        items = write_items(tmp_path / "items.jsonl", 6)
        config = classify_config(tmp_path, judge, items, cache=True)
        first = judgekit(
            "run", str(config), "--out", str(tmp_path / "a"), env={KEY_ENV: "sk-x-1234567"}
        )
        assert first.returncode == 0, first.stdout + first.stderr
        assert srv.total_requests == 6
        cold = judgekit("run", str(config), "--out", str(tmp_path / "b"), "--no-cache")
        warm = judgekit("run", str(config), "--out", str(tmp_path / "c"))  # all 6 in the cache
        assert cold.returncode == warm.returncode == 2
        assert error_lines(cold) == error_lines(warm) and len(error_lines(warm)) == 1
        assert srv.total_requests == 6


def test_a_model_name_the_server_does_not_serve_lists_the_served_names(tmp_path: Path) -> None:
    with FaultServer(served_models=["Qwen/Qwen3-8B", "qwen-small"]) as srv:
        judge = f"{{model: hosted_vllm/Qwen/Qwen3-8b, api_base: {srv.base_url}}}"
        config = classify_config(tmp_path, judge, write_items(tmp_path / "items.jsonl", 12))
        proc = judgekit("run", str(config), "--out", str(tmp_path / "out"))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        (line,) = error_lines(proc)
        assert f"the server at {srv.base_url} does not serve 'Qwen/Qwen3-8b'" in line
        assert "it serves 'Qwen/Qwen3-8B', 'qwen-small'" in line
        assert srv.total_requests == 0 and srv.path_counts["/v1/models"] == 1
        # without the preflight, vLLM's 404 is not retried and the run stops after 3 tasks
        proc = judgekit("run", str(config), "--out", str(tmp_path / "out"), "--no-preflight")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        (line,) = error_lines(proc)
        assert "model not found (HTTP 404, 3 tasks in a row" in line
        assert "does not exist" in line
        records = (tmp_path / "out" / "records.jsonl").read_text().splitlines()
        assert 3 <= len(records) <= srv.total_requests <= 6  # stopped early: not 12
        assert set(srv.hash_counts.values()) == {1}  # one request per task: no retry
        assert all(json.loads(r)["reason"].startswith("request: unknown_model") for r in records)


def test_an_unreachable_server_is_one_line_naming_role_and_url(tmp_path: Path) -> None:
    with hold_port() as held:  # refused throughout, and no other process is given the port
        url = f"http://127.0.0.1:{held.getsockname()[1]}/v1"
        judge = f"{{model: hosted_vllm/fault-model, api_base: '{url}', outage_s: 0}}"
        config = classify_config(tmp_path, judge, write_items(tmp_path / "items.jsonl", 3))
        proc = judgekit("run", str(config), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = error_lines(proc)
    assert f"judge (hosted_vllm/fault-model): no server at {url} (connection failed" in line
    assert "judge.api_base" in line


def test_preflight_waits_for_a_server_that_is_still_starting(tmp_path: Path) -> None:
    # the port is held from here until the server listens on it: another process (the other
    # pytest worker's servers) could be given a port only looked up, in the seconds between
    held = hold_port()
    port = held.getsockname()[1]
    judge = (
        f"{{model: hosted_vllm/fault-model, api_base: 'http://127.0.0.1:{port}/v1', outage_s: 30}}"
    )
    config = classify_config(tmp_path, judge, write_items(tmp_path / "items.jsonl", 3))
    server = FaultServerProcess(port=port)  # a vLLM server loading its model, in short:
    full = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}  # up once waited for
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, "run", str(config), "--out", str(tmp_path / "out")],
        cwd=REPO, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:  # the run says it waits; only then does the server start
            lines.append(line)
            if "waiting up to 30 s" in line:
                server.start()
                break
        output = "".join(lines) + proc.communicate(timeout=100)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
        server.__exit__(None, None, None)
        held.close()
    assert proc.returncode == 0, output
    assert f"judge: no server at http://127.0.0.1:{port}/v1 yet" in output
    assert "waiting up to 30 s" in output


def test_a_401_is_not_retried_and_the_run_stops_early(tmp_path: Path) -> None:
    with FaultServer() as srv:
        judge = f"{{model: hosted_vllm/fault-model, api_base: {srv.base_url}}}"  # 256 in flight
        items = write_items(tmp_path / "items.jsonl", 60, "[[fault:401]]")
        config = classify_config(tmp_path, judge, items)
        proc = judgekit("run", str(config), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = error_lines(proc)
    assert line.startswith("error: endpoint hosted_vllm/fault-model@127.0.0.1:")
    assert "authentication refused (HTTP 401, 3 tasks in a row" in line and "--retry-errors" in line
    records = [json.loads(r) for r in (tmp_path / "out" / "records.jsonl").read_text().splitlines()]
    assert 3 <= len(records) <= srv.total_requests <= 6  # stopped early, not after 60 tasks
    assert set(srv.hash_counts.values()) == {1}  # one request per task: no retry
    assert all(r["reason"].startswith("request: auth: EndpointError: HTTP 401") for r in records)
    assert all(r["attempts"] == 1 for r in records)


def test_a_spilling_judge_without_its_key_fails_before_the_generation_stage(tmp_path) -> None:
    with FaultServer() as srv:
        proc = judgekit(
            "run", "configs/spilling.yaml", "--out", str(tmp_path / "out"), "--no-cache",
            "--set", "generator.model=hosted_vllm/stub",
            "--set", f"generator.api_base={srv.base_url}",
            "--set", "judge.model=openai/gpt-4o-mini", "--set", f"judge.api_key_env={KEY_ENV}",
            "--set", "spilling.words=[head, line]", "--set", "spilling.languages=[de, fr]",
        )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = error_lines(proc)
    assert f"judge (openai/gpt-4o-mini): environment variable {KEY_ENV} is not set" in line
    assert srv.total_requests == 0  # no generation was sent


def test_preflight_checks_every_route_concurrently_in_well_under_a_second() -> None:
    with FaultServer() as a, FaultServer(served_models=["m"]) as b:
        fleet = ModelSpec(
            model="hosted_vllm/m",
            deployments=[Deployment(api_base=b.base_url), Deployment(api_base=b.base_url)],
            fallbacks=[ModelSpec(model="openai_compatible/x", api_base=a.base_url)],
        )
        roles = {"generator": [ModelSpec(model="hosted_vllm/g", api_base=a.base_url)],
                 "judge": fleet, "translator": None}  # fmt: skip
        assert [r.role for r in routes_of(roles)] == [
            "generator.0", "judge.deployments.0", "judge.deployments.1", "judge.fallbacks.0"
        ]  # fmt: skip
        started = time.monotonic()
        result = preflight(roles)
        # milliseconds here; the bound, loose for a loaded machine, catches a wait or back-off
        assert time.monotonic() - started < 5.0 and result.seconds < 5.0
        assert sorted(result.servers) == sorted([a.base_url, b.base_url])
        assert a.path_counts["/v1/models"] == 1 and b.path_counts["/v1/models"] == 1  # once each
        assert a.total_requests == b.total_requests == 0
        wrong = {"judge": ModelSpec(model="hosted_vllm/n", api_base=b.base_url)}
        with pytest.raises(JudgekitError, match=r"judge \(hosted_vllm/n\).*it serves 'm'"):
            preflight(wrong)


def test_refusals_are_classified_and_only_transient_failures_retried() -> None:
    assert kind_of_status(401) == kind_of_status(403) == "auth"
    assert kind_of_status(404) == "unknown_model" and kind_of_status(400) == "bad_request"
    overflow = "This model's maximum context length is 4096 tokens; you requested 5000"
    assert kind_of_status(400, overflow) == "context_length"
    assert kind_of_status(429) == "rate_limit" and kind_of_status(503) == "server"
    assert kind_of_status(None) == "connection"
    for status, transient in ((401, False), (404, False), (400, False), (429, True), (500, True)):
        assert EndpointError("x", status_code=status).transient is transient
    # litellm reports a missing key as a 500: it is a refusal, not worth a retry
    import litellm

    from judgekit.llm.providers.litellm import endpoint_error

    missing = litellm.InternalServerError(
        "OpenAIException - Missing credentials. Please pass an `api_key`", "openai", "gpt-4o-mini"
    )
    error = endpoint_error(missing)
    assert isinstance(error, EndpointError) and error.kind == "auth" and not error.transient
    refused = endpoint_error(litellm.AuthenticationError("bad key", "openai", "gpt-4o-mini"))
    assert refused.kind == "auth" and refused.status_code == 401  # type: ignore[attr-defined]
    flood = endpoint_error(litellm.RateLimitError("slow down", "openai", "gpt-4o-mini"))
    assert flood.kind == "rate_limit" and flood.transient  # type: ignore[attr-defined]


def test_a_name_and_its_default_tag_are_one_model_and_preflight_says_which() -> None:
    """Issue 32.8: Ollama serves ``llama3`` as ``llama3:latest`` (and the reverse); preflight
    refused it. It accepts either spelling and says which name the server lists."""
    said: list[str] = []
    with FaultServer(served_models=["llama3:latest", "qwen2.5"]) as srv:
        roles = {"judge": ModelSpec(model="hosted_vllm/llama3", api_base=srv.base_url),
                 "generator": ModelSpec(model="hosted_vllm/qwen2.5:latest",
                                        api_base=srv.base_url)}  # fmt: skip
        result = preflight(roles, on_wait=said.append)
        assert len(result.routes) == 2
        with pytest.raises(JudgekitError, match="does not serve 'llama3:8b'"):
            preflight({"judge": ModelSpec(model="hosted_vllm/llama3:8b", api_base=srv.base_url)})
    assert sorted(said) == [
        f"generator (hosted_vllm/qwen2.5:latest): the server at {srv.base_url} serves "
        "'qwen2.5:latest' as 'qwen2.5' (the default tag: one model); sending 'qwen2.5:latest'",
        f"judge (hosted_vllm/llama3): the server at {srv.base_url} serves 'llama3' as "
        "'llama3:latest' (the default tag: one model); sending 'llama3'",
    ]
