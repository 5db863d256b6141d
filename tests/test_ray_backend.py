"""``judgekit run --backend ray`` on a local Ray cluster (2 CPUs, 127.0.0.1) against stub servers
on 127.0.0.1: the records of an online run, each task once, through a killed worker and a killed
driver.

The stub is the fault-injecting server (``tests/fault_server.py``) with the 2,000 items of
``test_faults_e2e`` (20% carry a transient or permanent fault) and vLLM-style log-probabilities
(``test_logprobs_runs``), so retries, re-ask counts and label probabilities are compared with an
online run against a fresh server of the same kind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from fault_process import FaultServerProcess
from fault_server import FaultServer
from ray_cluster import RayCluster, require_ray
from test_faults_e2e import ENV, LABELS, write_config, write_items
from test_logprobs_runs import answer, logprobs_of

import judgekit
from judgekit.batch.ray_run import RayRun

pytestmark = [pytest.mark.ray, pytest.mark.timeout(600)]
REPO = Path(__file__).resolve().parents[1]
RUN = "import sys; from judgekit.cli import app, cache, run; app(sys.argv[1:])"


@pytest.fixture(scope="module")
def cluster():
    require_ray()
    ray_cluster = RayCluster(cpus=2).start()
    yield ray_cluster
    import ray

    ray.shutdown()
    ray_cluster.stop()


def test_bad_options_are_refused_before_ray_starts() -> None:
    from judgekit.errors import InputError

    with pytest.raises(InputError, match="--replicas"):
        RayRun(0)
    with pytest.raises(InputError, match="--ray-engine.*http or vllm"):
        RayRun(2, engine="sglang")


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def outcome(out: Path) -> dict[str, tuple]:
    """What an engine must not change: status, answer, label probabilities and reason kind."""
    return {
        r["key"]: (
            r["status"],
            json.dumps(r["parsed"], sort_keys=True),
            json.dumps(r["label_probs"], sort_keys=True),
            r["reasks"],
            (r["reason"] or "").split(":")[0],
        )
        for r in records(out)
    }


def logprobs(body: dict, content: str) -> dict:
    return logprobs_of(body, content, fragments=True)


def stub_run(base: Path, name: str, port: int, n: int) -> Path:
    items = base / f"{name}-items.jsonl"
    write_items(items, n, hang="hang=0.3")
    config = write_config(base / f"{name}.yaml", port, items, base / f"{name}-cache", timeout=30)
    text = config.read_text().replace("  max_reasks: 1\n", "  max_reasks: 1\n  logprobs: true\n")
    config.write_text(text)
    return config


def test_2000_tasks_with_faults_give_the_online_records(tmp_path, cluster, monkeypatch) -> None:
    for key, value in {**ENV, **cluster.env()}.items():
        monkeypatch.setenv(key, value)
    outs = {}
    seconds = {}
    for engine in ("online", "ray"):
        with FaultServer(answer_fn=answer, logprobs_fn=logprobs, hang_seconds=5) as server:
            config = stub_run(tmp_path, engine, server.port, 2000)
            executor = RayRun(2, batch_size=100) if engine == "ray" else None
            started = time.monotonic()
            judgekit.run(config, out=tmp_path / engine, no_cache=True, executor=executor)
            seconds[engine] = time.monotonic() - started
            outs[engine] = tmp_path / engine
    online, ray_out = outcome(outs["online"]), outcome(outs["ray"])
    assert len(records(outs["ray"])) == 2000 == len(ray_out)  # each key once
    assert ray_out == online
    status = Counter(v[0] for v in ray_out.values())
    assert status["ok"] > 1500 and status["error"] > 0
    for row in records(outs["ray"]):
        if row["status"] == "ok":
            assert set(row["label_probs"]) == set(LABELS)
            assert abs(sum(row["label_probs"].values()) - 1) < 1e-6
    summaries = [json.loads((outs[e] / "summary.json").read_text()) for e in ("online", "ray")]
    assert summaries[0]["usage"]["status"] == summaries[1]["usage"]["status"]
    print(f"ray/online seconds: {seconds['ray']:.1f}/{seconds['online']:.1f}")


def start_run(config: Path, out: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-c", RUN, "run", str(config), "--out", str(out), "--no-cache",
           "--backend", "ray", "--replicas", "2"]  # fmt: skip
    return subprocess.Popen(cmd, cwd=REPO, env={**env, **ENV}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip


def keys_once(out: Path, n: int) -> list[str]:
    keys = [json.loads(line)["key"] for line in (out / "records.jsonl").read_bytes().split(b"\n")
            if line.strip()]  # fmt: skip
    assert len(keys) == len(set(keys)), "a task recorded twice"
    return keys


@pytest.mark.parametrize("victim", ["worker", "driver"])
def test_a_killed_process_loses_and_duplicates_nothing(tmp_path, cluster, victim) -> None:
    n = 300
    with FaultServerProcess(retry_after=0.05, hang_seconds=5) as server:
        config = write_config(tmp_path / "run.yaml", server.port, tmp_path / "items.jsonl",
                              tmp_path / "cache", timeout=30)  # fmt: skip
        write_items(tmp_path / "items.jsonl", n, stateful=False)
        reference = tmp_path / "reference"
        ref = start_run(config, reference, cluster.env())
        assert ref.wait(300) == 0, ref.stdout.read().decode()[-3000:]  # type: ignore[union-attr]
        server.restart()
        server.set_phase(120, "hold")  # answers from the 121st request on wait for release
        out = tmp_path / victim
        proc = start_run(config, out, cluster.env())
        server.wait_held(1, timeout=240)
        if victim == "worker":
            workers = cluster.workers()
            assert workers, "no Ray worker judging a batch"
            os.kill(workers[0], signal.SIGKILL)
            server.release()
        else:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
            server.release()
            partial = keys_once(out, n) if (out / "records.jsonl").exists() else []
            assert len(partial) < n
            proc = start_run(config, out, cluster.env())
        text = proc.communicate(timeout=400)[0].decode("utf-8", "replace")
        assert proc.returncode == 0, text[-3000:]
    assert sorted(keys_once(out, n)) == sorted(keys_once(reference, n))
    assert len(keys_once(out, n)) == n
    assert outcome(out) == outcome(reference)
