"""The fault server's lifecycle and timing: a hung request times out without blocking others
or shutdown, the subprocess mode killed and restarted, a later phase that refuses or holds from
the Nth request, and the benchmark server (bench/latency_server.py) it shares answers with."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest
from fault_client import Verdict, ask, client_for, close_clients
from fault_process import FaultServerProcess, wait_for_port_file
from fault_server import FaultServer

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _close_clients():
    yield
    close_clients()


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
        # a client of its own: 0.5 s (quick's) is less than a loaded machine may take to
        # answer; 10 s is still well short of the hangs' 30 s, and in_flight below says both
        # were still held when it was answered
        ask(client_for(server.base_url, timeout=10), "not hung")
        assert server.in_flight == 2  # answered while both hangs were still held
        assert server.counts == {"hang": 2, "ok": 1}
    finally:
        started = time.perf_counter()
        server.stop()
        stopped_in = time.perf_counter() - started
    thread.join(5)
    assert stopped_in < 10  # released at once, not after the hang's 30 s
    assert not thread.is_alive() and isinstance(outcome[0], openai.APIError)


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
        deadline = time.monotonic() + 10
        # the hang recorded, not only the request's arrival (in_flight counts it before its
        # body is read): else SIGTERM could meet no hung request and the test prove nothing
        while proc.stats()["counts"].get("hang", 0) < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.stats()["in_flight"] == 1
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
