"""judgekit against a real vLLM server (CPU, SmolLM2-135M-Instruct, ``tests/vllm_server.py``).

One server for the module (it starts in about a minute). The tests assert statuses, schema
validity, probability sums and served names, never generated text: greedy bf16 output can
differ between runs and compile modes where two tokens nearly tie.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from vllm_server import MODEL, SERVED, VENV, VllmServer, require_vllm

import judgekit
from judgekit.batch.exporter import ExportBatch
from judgekit.batch.importer import ImportResults
from judgekit.errors import JudgekitError

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(900)]
LABELS = ["positive", "negative", "neutral"]
TEXTS = ["a lovely stay", "awful noise all night", "fine, nothing more", "great staff",
         "the room was dirty", "breakfast was ok", "I would come back", "never again",
         "average in every way", "superb view", "rude reception", "it was a hotel"]  # fmt: skip


@pytest.fixture(scope="module")
def server():
    require_vllm()
    vllm = VllmServer().start()
    yield vllm
    vllm.stop()


def classify_config(
    tmp_path: Path, base_url: str, *, model: str = SERVED, extra: str = "",
    texts: list[str] = TEXTS, max_tokens: int = 200, concurrency: int = 4,
) -> Path:  # fmt: skip
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"r{i}", "text": t}) + "\n"
                             for i, t in enumerate(texts)), encoding="utf-8")  # fmt: skip
    config = tmp_path / "run.yaml"
    config.write_text(
        f"pipeline: classify\ncache: {{enabled: false}}\n"
        f"judge:\n  model: hosted_vllm/{model}\n  api_base: {base_url}\n"
        f"  max_tokens: {max_tokens}\n  max_concurrency: {concurrency}\n{extra}"
        f"classify:\n  items: {items}\n  labels: {LABELS}\n  task: Sentiment of the review.\n",
        encoding="utf-8",
    )
    return config


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def test_classify_with_json_schema_and_label_probabilities(tmp_path, server) -> None:
    config = classify_config(tmp_path, server.base_url, extra="  logprobs: true\n")
    started = time.monotonic()
    judgekit.run(config, out=tmp_path / "out")
    seconds = time.monotonic() - started
    rows = records(tmp_path / "out")
    assert len(rows) == len(TEXTS)
    assert all(r["status"] in ("ok", "unscored") for r in rows), [r["reason"] for r in rows]
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) >= len(TEXTS) - 2  # guided decoding: the schema holds
    for row in ok:
        answer = json.loads(row["raw"])  # the answer as sent: valid JSON of the schema
        assert answer["label"] in LABELS and row["parsed"]["label"] == answer["label"]
        assert row["served_by"] and row["tokens_out"] > 0
        assert set(row["label_probs"]) == set(LABELS)
        assert abs(sum(row["label_probs"].values()) - 1) < 1e-6
    for row in rows:
        if row["status"] == "unscored":
            assert row["reason"] and row["raw"] is not None
    print(f"vLLM CPU classify: {len(rows) / seconds:.2f} records/s (loaded shared machine)")


def test_preflight_names_the_served_model(tmp_path, server) -> None:
    config = classify_config(tmp_path, server.base_url, model="not-served")
    with pytest.raises(JudgekitError, match=f"it serves '{SERVED}'"):
        judgekit.run(config, out=tmp_path / "out")
    assert not (tmp_path / "out" / "records.jsonl").exists()


def test_spilling_one_word_two_languages(tmp_path, server) -> None:
    config = tmp_path / "spilling.yaml"
    model = f"  model: hosted_vllm/{SERVED}\n  api_base: {server.base_url}\n  max_tokens: 200\n"
    config.write_text(
        f"pipeline: spilling\nlimit: 1\ncache: {{enabled: false}}\ngenerator:\n{model}"
        f"judge:\n{model}spilling:\n  languages: [fr, de]\n  judge_prompt: default\n",
        encoding="utf-8",
    )
    result = judgekit.run(config, out=tmp_path / "out")
    rows = records(tmp_path / "out")
    assert rows and all(r["status"] in ("ok", "unscored") for r in rows)
    assert all(r["reason"] for r in rows if r["status"] == "unscored")
    assert {r["role"] for r in rows} >= {"generator"}
    assert result.summary_data is not None and result.summary_data["usage"]["calls"] == len(rows)


def test_batch_export_vllm_run_batch_import_gives_the_online_labels(tmp_path, server) -> None:
    config = classify_config(tmp_path, server.base_url)
    judgekit.run(config, out=tmp_path / "online")
    export = tmp_path / "export"
    judgekit.run(config, out=tmp_path / "batch", executor=ExportBatch(export))
    shards = sorted(p for p in export.rglob("*.jsonl"))
    assert shards
    results = []
    for shard in shards:
        result = tmp_path / f"{shard.stem}.results.jsonl"
        cmd = [str(VENV / "bin" / "python"), "-m", "vllm.entrypoints.openai.run_batch",
               "-i", str(shard), "-o", str(result), "--model", str(MODEL),
               "--served-model-name", SERVED, "-O0", "--max-model-len", "2048",
               "--kv-cache-memory-bytes", str(512 * 1024 * 1024)]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        results.append(result)
    judgekit.run(config, out=tmp_path / "batch", executor=ImportResults(results))
    online = {r["key"]: (r["status"], r["parsed"]) for r in records(tmp_path / "online")}
    batch = {r["key"]: (r["status"], r["parsed"]) for r in records(tmp_path / "batch")}
    assert batch.keys() == online.keys()
    same = sum(batch[k] == online[k] for k in online)
    assert same >= len(online) - 1, (batch, online)  # a near tie may flip one greedy answer


def test_ray_over_the_vllm_server_gives_the_online_records(tmp_path, server, monkeypatch) -> None:
    from ray_cluster import RayCluster, require_ray

    require_ray()
    from judgekit.batch.ray_run import RayRun

    cluster = RayCluster(cpus=2).start()
    try:
        for key, value in cluster.env().items():
            monkeypatch.setenv(key, value)
        config = classify_config(tmp_path, server.base_url)
        judgekit.run(config, out=tmp_path / "online")
        started = time.monotonic()
        judgekit.run(config, out=tmp_path / "ray", executor=RayRun(2, batch_size=4))
        seconds = time.monotonic() - started
    finally:
        import ray

        ray.shutdown()
        cluster.stop()
    online = {r["key"]: (r["status"], r["parsed"]) for r in records(tmp_path / "online")}
    rows = records(tmp_path / "ray")
    assert len(rows) == len(online) == len({r["key"] for r in rows})
    ray_out = {r["key"]: (r["status"], r["parsed"]) for r in rows}
    assert ray_out.keys() == online.keys()
    assert sum(ray_out[k] == online[k] for k in online) >= len(online) - 1
    print(f"Ray over vLLM CPU: {len(rows) / seconds:.2f} records/s (loaded shared machine)")
