"""``judgekit run --batch`` against a real loopback Files and Batches API (tests/batch_server.py):
the labels of an online run, resumed after a kill without sending anything twice, expiry
recorded as errors and sent again with --retry-errors. Batches are held by the server until
the test releases them, so nothing here races the clock."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from batch_server import KEY_ENV, BatchServer, classify_config, pairwise_config
from fault_server import FaultServer

import judgekit
from judgekit.batch import provider
from judgekit.batch.submit import STATE, SubmitBatch
from judgekit.errors import JudgekitError
from judgekit.runlog import RunLog

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def srv():
    with BatchServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")


def statuses(out: Path) -> dict[str, tuple[str, object]]:
    log = RunLog(out)
    try:
        return {r.key: (r.status, r.parsed) for r in log.iter_records()}
    finally:
        log.close()


def batch_run(cfg: Path, out: Path, **kw):
    executor = SubmitBatch(
        poll_s=0.01, **{k: v for k, v in kw.items() if k in ("retry_errors", "sleep")}
    )
    seen: list[str] = []
    result = judgekit.run(
        cfg,
        out=out,
        executor=executor,
        retry_errors=kw.get("retry_errors", False),
        on_progress=lambda p: seen.append(p.batch),
    )
    return result, executor, seen


@pytest.mark.parametrize("make", [classify_config, pairwise_config], ids=["classify", "pairwise"])
def test_run_batch_gives_the_online_labels(srv, tmp_path, make):
    cfg = make(tmp_path, srv.base_url)
    online = judgekit.run(cfg, out=tmp_path / "online", no_cache=True)
    result, executor, progress = batch_run(cfg, tmp_path / "batch")
    assert (srv.uploads, srv.creations, executor.submitted) == (1, 1, 1)
    assert result.requests == 0 and result.summary_data is not None
    assert statuses(tmp_path / "batch") == statuses(tmp_path / "online")
    assert (tmp_path / "batch" / "labels.csv").read_text() == (
        tmp_path / "online" / "labels.csv"
    ).read_text()
    n = online.summary_data["usage"]["calls"]
    assert executor.counts.imported == {"ok": n}
    assert any("(1 in_progress)" in line and "left in the window" in line for line in progress)
    assert any("(1 imported)" in line and f"{n}/{n} answered" in line for line in progress)
    usage = result.summary_data["usage"]
    assert usage["batch"]["records"] == n
    # at litellm's batch prices for gpt-4o-mini: $0.075 / $0.30 per million tokens
    expected = usage["totals"]["tokens_in"] * 0.075e-6 + usage["totals"]["tokens_out"] * 0.30e-6
    assert usage["totals"]["cost_usd"] == pytest.approx(expected, abs=1e-6)
    jobs = json.loads((tmp_path / "batch" / STATE).read_text())["jobs"]
    assert [(j["status"], j["imported"], j["requests"]) for j in jobs] == [("completed", True, n)]
    again, executor, _ = batch_run(cfg, tmp_path / "batch")  # all recorded: nothing sent
    assert executor.submitted == 0 and srv.creations == 1 and again.summary_data is not None


def wait_for(predicate, what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_killed_batch_run_resumes_without_resubmitting(tmp_path):
    with BatchServer(hold=True) as srv:
        cfg = classify_config(tmp_path, srv.base_url)
        out = tmp_path / "batch"
        command = [
            sys.executable,
            "-m",
            "judgekit",
            "run",
            str(cfg),
            "--batch",
            "--batch-poll",
            "0.05",
            "--out",
            str(out),
        ]
        env = {**__import__("os").environ, KEY_ENV: "sk-test"}
        proc = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:

            def polled() -> bool:
                state = out / STATE
                return (
                    srv.retrievals >= 3
                    and state.exists()
                    and '"batch_id": "batch' in state.read_text()
                )

            wait_for(polled, "the batch to be submitted and polled")
        finally:
            proc.kill()
            proc.wait(30)
        assert (srv.uploads, srv.creations) == (1, 1)
        assert statuses(out) == {}  # nothing answered yet
        srv.release()
        done = subprocess.run(
            command, cwd=REPO, env=env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stderr
        assert (srv.uploads, srv.creations) == (1, 1)  # the same batch, picked up
        assert "batch: 0 submitted by this run; imported 12 answers (ok 12" in done.stdout
        online = judgekit.run(cfg, out=tmp_path / "online", no_cache=True)
        assert online.summary_data["items"]["judged"] == 12
        assert statuses(out) == statuses(tmp_path / "online")


def test_resume_adopts_a_batch_whose_id_was_not_written(srv, tmp_path, monkeypatch):
    """Killed between creating the batch and writing its id: the rerun finds the batch by
    its input file and follows it; nothing is uploaded or created again."""
    real = provider.BatchAPI.create

    def create_then_die(self, file_id, metadata):
        real(self, file_id, metadata)
        raise KeyboardInterrupt

    monkeypatch.setattr(provider.BatchAPI, "create", create_then_die)
    cfg = classify_config(tmp_path, srv.base_url)
    with pytest.raises(KeyboardInterrupt):
        batch_run(cfg, tmp_path / "batch")
    job = json.loads((tmp_path / "batch" / STATE).read_text())["jobs"][0]
    assert job["file_id"] is not None and job["batch_id"] is None
    monkeypatch.setattr(provider.BatchAPI, "create", real)
    result, executor, _ = batch_run(cfg, tmp_path / "batch")
    assert (srv.uploads, srv.creations, executor.submitted) == (1, 1, 0)
    assert executor.counts.imported == {"ok": 12} and result.summary_data is not None


def test_expired_batch_records_errors_then_retry_errors_sends_them_again(tmp_path):
    with BatchServer(hold=True) as srv:
        cfg = classify_config(tmp_path, srv.base_url)

        def expire_once(_seconds: float) -> None:  # between two polls: the window ends
            (batch_id,) = srv.batches
            if srv.batches[batch_id]["status"] == "in_progress":
                srv.expire(batch_id, answered=5)

        result, executor, _ = batch_run(cfg, tmp_path / "batch", sleep=expire_once)
        assert executor.counts.imported == {"ok": 5, "error": 7}
        found = statuses(tmp_path / "batch")
        errors = [k for k, (status, _) in found.items() if status == "error"]
        assert len(errors) == 7 and result.summary_data["items"]["excluded"] == {
            "judgment_error": 7
        }
        log = RunLog(tmp_path / "batch")
        reason = log.get(errors[0]).reason
        log.close()
        assert reason.startswith("transient: EndpointError: batch: batch_expired: ")
        srv.release()
        redone, executor, _ = batch_run(cfg, tmp_path / "batch", retry_errors=True)
        assert srv.creations == 2 and executor.counts.imported == {"ok": 7}
        second = srv.batches[list(srv.batches)[1]]
        assert second["request_counts"]["total"] == 7
        online = judgekit.run(cfg, out=tmp_path / "online", no_cache=True)
        assert online.summary_data["items"]["judged"] == 12
        assert statuses(tmp_path / "batch") == statuses(tmp_path / "online")


def test_routes_without_a_batch_api_are_refused_before_anything_is_sent(tmp_path):
    with FaultServer() as plain:  # a chat server without /v1/files (as vLLM's)
        cfg = classify_config(tmp_path, plain.base_url, route="hosted_vllm/fault-model")
        with pytest.raises(JudgekitError, match="a vLLM server has no Batch API"):
            batch_run(cfg, tmp_path / "vllm")
        assert plain.total_requests == 0
    cfg = classify_config(
        tmp_path, "http://127.0.0.1:9/v1", route="anthropic/claude-3-5-haiku", name="anthropic"
    )
    with pytest.raises(JudgekitError, match="judgekit batch export"):
        judgekit.run(
            cfg, out=tmp_path / "anthropic", preflight=False, executor=SubmitBatch(poll_s=0.01)
        )
