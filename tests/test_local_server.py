"""The embedded server's process settings and the server pool a grid or tune shares
(:mod:`judgekit.llm.local`), without starting a model (the end-to-end runs are in
test_tune_embedded.py and the pipelines' embedded tests)."""

from __future__ import annotations

import os

import pytest

from judgekit.errors import JudgekitError
from judgekit.llm.local import EmbeddedServer, held_server, server_threads, shared_servers


def test_server_threads_default_to_every_cpu_and_follow_the_variable(monkeypatch) -> None:
    monkeypatch.delenv("JUDGEKIT_LOCAL_THREADS", raising=False)
    assert server_threads() == max(1, os.cpu_count() or 1)
    monkeypatch.setenv("JUDGEKIT_LOCAL_THREADS", " 1 ")
    assert server_threads() == 1
    for bad in ("0", "-2", "two", "1.5"):
        monkeypatch.setenv("JUDGEKIT_LOCAL_THREADS", bad)
        with pytest.raises(JudgekitError, match="JUDGEKIT_LOCAL_THREADS"):
            server_threads()


def test_held_servers_are_one_per_model_window_and_logits_and_stop_with_the_block(
    monkeypatch,
) -> None:
    stopped: list[EmbeddedServer] = []
    monkeypatch.setattr(EmbeddedServer, "stop", lambda self: stopped.append(self))
    assert held_server("smollm2-135m", n_ctx=4096, logits_all=False) is None  # no block
    with shared_servers():
        first = held_server("smollm2-135m", n_ctx=4096, logits_all=False)
        assert isinstance(first, EmbeddedServer) and first.process is None  # not started
        with shared_servers():  # a nested block shares the outer one's servers
            assert held_server("smollm2-135m", n_ctx=4096, logits_all=False) is first
        assert stopped == []
        logits = held_server("smollm2-135m", n_ctx=4096, logits_all=True)
        wider = held_server("smollm2-135m", n_ctx=8192, logits_all=False)
        assert len({id(first), id(logits), id(wider)}) == 3
    assert sorted(map(id, stopped)) == sorted(map(id, (first, logits, wider)))
    assert held_server("smollm2-135m", n_ctx=4096, logits_all=False) is None


def test_a_held_server_starts_on_the_blocks_own_thread_for_every_run(monkeypatch) -> None:
    """Linux kills the server when the thread that started it ends (PR_SET_PDEATHSIG): a held
    server must start on the block's long-lived thread, not on a run's worker thread."""
    import asyncio
    import threading

    from judgekit.llm.local import start_server

    threads: list[threading.Thread] = []

    def fake_start(self: EmbeddedServer) -> str:
        threads.append(threading.current_thread())
        return "http://127.0.0.1:1/v1"

    monkeypatch.setattr(EmbeddedServer, "start", fake_start)
    monkeypatch.setattr(EmbeddedServer, "stop", lambda self: None)
    with shared_servers():
        server = held_server("smollm2-135m", n_ctx=4096, logits_all=False)
        for _ in range(2):  # two runs, two event loops, as two grid cells
            assert asyncio.run(start_server(server)) == "http://127.0.0.1:1/v1"
    own = EmbeddedServer("smollm2-135m")
    asyncio.run(start_server(own))
    assert threads[0] is threads[1] and threads[0].name.startswith("judgekit-embedded")
    assert not threads[0].is_alive()  # the block's thread ended with the block
    assert not threads[2].name.startswith("judgekit-embedded")


def test_port_variables_stay_out_of_the_server(monkeypatch, tmp_path) -> None:
    """$PORT / $HOST, which llama_cpp.server obeys over --port / --host, do not reach it: it
    would listen where judgekit never looks (and a run would wait for its start timeout)."""
    import subprocess

    from judgekit.llm import local

    launched: dict = {}

    class FakeProcess:
        def __init__(self, cmd, **kw) -> None:
            launched.update(cmd=cmd, env=kw["env"])

        def poll(self) -> int | None:
            return None

    monkeypatch.setenv("PORT", "1")
    monkeypatch.setenv("HOST", "0.0.0.0")
    monkeypatch.setattr(local, "check_installed", lambda name: tmp_path / "model.gguf")
    monkeypatch.setattr(subprocess, "Popen", FakeProcess)
    monkeypatch.setattr(EmbeddedServer, "_wait_ready", lambda self: None)
    monkeypatch.setattr(local.atexit, "register", lambda fn: None)
    server = EmbeddedServer("smollm2-135m")
    try:
        assert server.start() == f"http://127.0.0.1:{server.port}/v1"
    finally:
        server.process = None  # nothing to stop
        server.stop()
    assert launched["cmd"][launched["cmd"].index("--port") + 1] == str(server.port)
    assert "PORT" not in launched["env"] and "HOST" not in launched["env"]
    assert launched["env"]["PATH"] == os.environ["PATH"]  # the rest of the environment stays
