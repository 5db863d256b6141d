"""``judgekit batch export`` and ``batch import``: the online requests as batch JSONL, and the
answers of a real loopback Batch API (tests/batch_server.py) and of vLLM's run-batch output
format back as the same records, labels and reports an online run gives (bad result files:
test_batch_results.py)."""

from __future__ import annotations

import hashlib
import json

import pytest
from batch_runs import body_bytes, do_import, export, records, shard_paths
from batch_server import (
    CLASSIFY_ITEMS,
    KEY_ENV,
    BatchServer,
    classify_config,
    pairwise_config,
    stub_batch,
    vllm_run_batch,
)
from cli_inproc import Ran, run_main

import judgekit
from judgekit.batch.exporter import even_sizes


@pytest.fixture(scope="module")
def srv():
    with BatchServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")


@pytest.mark.parametrize("route", ["hosted_vllm/fault-model", "openai/gpt-4o-mini"])
def test_export_lines_carry_the_online_request(srv, tmp_path, route):
    """custom_id = task key; body = what the online run posted (aiohttp path and litellm
    path alike), structured output included; 5 even shards; the manifest hashes the bodies."""
    seen: list[dict] = []
    srv.answer_fn = lambda body: seen.append(body)
    try:
        cfg = classify_config(tmp_path, srv.base_url, route=route)
        online = judgekit.run(cfg, out=tmp_path / "online", no_cache=True)
    finally:
        srv.answer_fn = None
    assert len(seen) == 12
    executor = export(cfg, tmp_path / "batch", tmp_path / "exp", shards=5)
    assert [s.requests for s in executor.manifest.shards] == [2, 2, 3, 2, 3]
    lines = [ln for p in shard_paths(executor) for ln in p.read_bytes().splitlines(True)]
    by_messages = {json.dumps(b["messages"]): b for b in seen}
    keys = set()
    for line in lines:
        obj = json.loads(line)
        assert obj["method"] == "POST" and obj["url"] == "/v1/chat/completions"
        assert obj["body"] == by_messages[json.dumps(obj["body"]["messages"])]
        assert obj["body"]["response_format"]["json_schema"]["schema"]["properties"]["label"][
            "enum"
        ] == ["positive", "negative", "neutral"]
        digest = hashlib.sha256(body_bytes(line)).hexdigest()[:16]
        assert executor.manifest.tasks[obj["custom_id"]] == digest
        keys.add(obj["custom_id"])
    assert keys == set(records(tmp_path / "online")) and len(lines) == 12
    assert online.summary_data["items"]["judged"] == 12
    run_copy = tmp_path / "batch" / "batch" / "exports" / f"{executor.manifest.export_id}.json"
    assert json.loads(run_copy.read_text()) == json.loads(
        (tmp_path / "exp" / "manifest.json").read_text()
    )


def test_even_shards():
    assert even_sizes(12, 5) == [2, 2, 3, 2, 3]
    assert even_sizes(2, 4) == [0, 1, 0, 1] and sum(even_sizes(100_001, 8)) == 100_001


def test_classify_online_and_vllm_run_batch_give_the_same_labels(srv, tmp_path):
    """export -> vLLM run-batch output (one file a shard) -> import: the labels, records and
    report of the online run; importing again changes nothing; the cache holds the answers."""
    cfg = classify_config(tmp_path, srv.base_url, route="hosted_vllm/fault-model")
    judgekit.run(cfg, out=tmp_path / "online", no_cache=True)
    executor = export(cfg, tmp_path / "batch", tmp_path / "exp", shards=3)
    outputs = []
    for i, shard in enumerate(shard_paths(executor)):
        outputs.append(tmp_path / f"out-{i}.jsonl")
        assert vllm_run_batch(shard, outputs[-1], srv.base_url) == 4
    result, counts = do_import(cfg, tmp_path / "batch", outputs)
    assert counts.imported == {"ok": 12} and counts.missing == 0 and counts.unknown == 0
    labels = (tmp_path / "batch" / "labels.csv").read_text()
    assert labels == (tmp_path / "online" / "labels.csv").read_text()
    online, batch = records(tmp_path / "online"), records(tmp_path / "batch")
    assert {k: r.parsed for k, r in batch.items()} == {k: r.parsed for k, r in online.items()}
    assert all(
        r.batch == str(outputs[i // 4]) or r.batch in map(str, outputs)
        for i, r in enumerate(batch.values())
    )
    assert result.summary_data["usage"]["batch"] == {"records": 12, "cost_usd": 0.0}
    before = (tmp_path / "batch" / "records.jsonl").read_bytes()
    _, again = do_import(cfg, tmp_path / "batch", outputs)  # idempotent
    assert again.recorded == 12 and sum(again.imported.values()) == 0
    assert (tmp_path / "batch" / "records.jsonl").read_bytes() == before
    requests = srv.total_requests
    cached = judgekit.run(cfg, out=tmp_path / "from-cache")  # the import filled the cache
    assert srv.total_requests == requests and cached.requests == 0
    assert (tmp_path / "from-cache" / "labels.csv").read_text() == labels


def test_pairwise_online_and_stub_batch_give_the_same_verdicts(srv, tmp_path):
    """export -> the stub's Files and Batches API (openai client) -> import: the verdicts and
    pairwise.csv of the online run, cost at batch prices."""
    cfg = pairwise_config(tmp_path, srv.base_url)
    online = judgekit.run(cfg, out=tmp_path / "online", no_cache=True)
    executor = export(cfg, tmp_path / "batch", tmp_path / "exp", shards=2)
    files = [f for shard in shard_paths(executor) for f in stub_batch(srv, shard, tmp_path)]
    result, counts = do_import(cfg, tmp_path / "batch", files)
    assert counts.imported == {"ok": 12}
    for name in ("pairwise.csv", "verdicts.csv", "labels.csv"):
        assert (tmp_path / "batch" / name).read_text() == (tmp_path / "online" / name).read_text()
    online_records, batch_records = records(tmp_path / "online"), records(tmp_path / "batch")
    assert {k: r.parsed["verdict"] for k, r in batch_records.items()} == {
        k: r.parsed["verdict"] for k, r in online_records.items()
    }
    # gpt-4o-mini: $0.15 / $0.60 per million online, $0.075 / $0.30 in litellm's batch prices
    t_in = sum(r.tokens_in for r in batch_records.values())
    t_out = sum(r.tokens_out for r in batch_records.values())
    assert counts.cost_usd == pytest.approx(t_in * 0.075e-6 + t_out * 0.30e-6)
    assert counts.online_cost_usd == pytest.approx(t_in * 0.15e-6 + t_out * 0.60e-6)
    assert online.summary_data["usage"]["totals"]["cost_usd"] == pytest.approx(
        2 * result.summary_data["usage"]["totals"]["cost_usd"], rel=1e-3
    )
    assert result.summary_data["usage"]["batch"]["records"] == 12


def test_items_that_fail_fail_alike_online_and_in_a_batch(srv, tmp_path):
    """A refused request is an error record, an answer that never validates is unscored with
    its reason, in a batch as online (a batch has no re-ask: its unscored answer is the
    first)."""
    items = tmp_path / "items.jsonl"
    rows = [json.loads(line) for line in CLASSIFY_ITEMS.read_text().splitlines()[:4]]
    rows[1]["text"] = "[[fault:400]] " + rows[1]["text"]
    rows[2]["text"] = "[[fault:malformed]] " + rows[2]["text"]
    rows[3]["text"] = "[[fault:wrong_shape]] " + rows[3]["text"]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = classify_config(tmp_path, srv.base_url, items=items)
    judgekit.run(cfg, out=tmp_path / "online", no_cache=True)
    executor = export(cfg, tmp_path / "batch", tmp_path / "exp")
    files = stub_batch(srv, shard_paths(executor)[0], tmp_path)
    assert len(files) == 2  # an output and an error file
    result, counts = do_import(cfg, tmp_path / "batch", files)
    assert counts.imported == {"ok": 1, "error": 1, "unscored": 2}
    online, batch = records(tmp_path / "online"), records(tmp_path / "batch")
    assert {k: r.status for k, r in batch.items()} == {k: r.status for k, r in online.items()}
    reasons = {r.meta["item"]: r.reason for r in batch.values()}
    assert reasons["r02"].startswith("request: bad_request: ") and "HTTP 400" in reasons["r02"]
    assert reasons["r03"].startswith("malformed_json") and reasons["r04"].startswith("schema:")
    assert batch_raw(batch, "r03") == '{"valid": [true, fal' and result.summary_data is not None
    assert result.summary_data["items"]["excluded"] == {"judgment_error": 1, "judgment_unscored": 2}


def batch_raw(recs: dict, item: str) -> str | None:
    return next(r.raw for r in recs.values() if r.meta["item"] == item)


def test_retry_errors_redoes_a_batch_unscored_answer_online(srv, tmp_path):
    """A batch answer that does not validate is unscored (no re-ask in a batch); a later online
    run with --retry-errors asks again (with re-asks), without it the record stays."""
    cfg = classify_config(tmp_path, srv.base_url, route="hosted_vllm/fault-model")
    executor = export(cfg, tmp_path / "batch", tmp_path / "exp")
    out = tmp_path / "out.jsonl"
    vllm_run_batch(shard_paths(executor)[0], out, srv.base_url)
    lines = out.read_text().splitlines()
    first = json.loads(lines[0])
    first["response"]["body"]["choices"][0]["message"]["content"] = (
        '{"label": "great", "rationale": "x"}'
    )
    out.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    _, counts = do_import(cfg, tmp_path / "batch", [out])
    assert counts.imported == {"ok": 11, "unscored": 1}
    bad = records(tmp_path / "batch")[first["custom_id"]]
    assert bad.status == "unscored" and bad.reason.startswith("schema: label: ")
    assert bad.parsed is None and bad.raw.startswith('{"label": "great"')  # never a label
    stays = judgekit.run(cfg, out=tmp_path / "batch")
    assert (
        stays.requests == 0 and records(tmp_path / "batch")[first["custom_id"]].status == "unscored"
    )
    redone = judgekit.run(cfg, out=tmp_path / "batch", retry_errors=True, no_cache=True)
    assert redone.requests == 1
    again = records(tmp_path / "batch")[first["custom_id"]]
    assert again.status == "ok" and again.batch is None and again.parsed["label"] != "great"


def cli(*args: str) -> Ran:
    return run_main(*args)


def test_cli_export_then_import(srv, tmp_path):
    cfg = classify_config(tmp_path, srv.base_url, route="hosted_vllm/fault-model")
    run_dir = tmp_path / "run"
    proc = cli(
        "batch",
        "export",
        str(cfg),
        "--shards",
        "2",
        "-o",
        str(tmp_path / "exp"),
        "--out",
        str(run_dir),
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "exported 12 requests of 12 tasks (0 already recorded, 0 answered by the cache)"
        in proc.stdout
    )
    assert "fault-model: 2 shards in fault-model/ (6, 6 requests)" in proc.stdout
    outs = []
    for i in range(2):
        outs.append(tmp_path / f"out{i}.jsonl")
        vllm_run_batch(
            tmp_path / "exp" / "fault-model" / f"shard-{i}.jsonl", outs[-1], srv.base_url
        )
    proc = cli("batch", "import", str(cfg), *map(str, outs), "--out", str(run_dir))
    assert proc.returncode == 0, proc.stderr
    assert (
        "read 12 results from 2 files; imported 12 answers (ok 12, unscored 0, error 0)"
        in proc.stdout
    )
    assert "items 12: judged 12" in proc.stdout
    assert "12 of the records were answered by batches" in proc.stdout
    proc = cli("batch", "export", str(cfg), "-o", str(tmp_path / "exp"), "--out", str(run_dir))
    assert "nothing to export: of 12 tasks, 12 already recorded" in proc.stdout
