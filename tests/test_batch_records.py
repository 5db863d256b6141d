"""A batch answer is an online answer that came late: a batch body imported gives the record
the online call of the same body gives (``ModelState.record``), label probabilities included,
against a real loopback Batch API (tests/batch_server.py) that answers as its online endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batch_server import BatchServer, stub_batch
from test_logprobs_runs import LABELS, answer, expected, logprobs_of, write_run

import judgekit
from judgekit.batch.exporter import ExportBatch
from judgekit.batch.importer import ImportResults

# the fields an answer decides; the call's own (latency, attempts, served_by, batch, cost) differ
SAME = ("key", "status", "raw", "parsed", "reason", "normalised", "reasoning", "label_probs",
        "label_probs_bound", "tokens_in", "tokens_out", "sample_index", "meta")  # fmt: skip


def rows(out: Path) -> dict[str, dict]:
    lines = (out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["key"]: r for r in map(json.loads, lines)}


def test_a_batch_body_imported_gives_the_online_record(tmp_path: Path) -> None:
    """vLLM-style log-probabilities (byte-fragment tokens): the imported records equal the
    online ones in every answer field, ``label_probs`` included (issue 32 point 6b)."""

    def fn(body: dict, content: str) -> dict:
        return logprobs_of(body, content, fragments=True)

    with BatchServer(answer_fn=answer, logprobs_fn=fn) as srv:
        judge = f"  model: hosted_vllm/fault-model\n  api_base: {srv.base_url}\n  logprobs: true"
        cfg = write_run(tmp_path, judge)
        judgekit.run(cfg, out=tmp_path / "online", preflight=False)
        executor = ExportBatch(tmp_path / "exp", 1)
        judgekit.run(cfg, out=tmp_path / "batch", executor=executor, preflight=False)
        shard = Path(executor.manifest.directory) / executor.manifest.shards[0].file
        bodies = [json.loads(line)["body"] for line in shard.read_text().splitlines()]
        assert all(b["logprobs"] is True and b["top_logprobs"] == 10 for b in bodies)
        files = stub_batch(srv, shard, tmp_path)
        importer = ImportResults(files, ())
        result = judgekit.run(cfg, out=tmp_path / "batch", executor=importer, preflight=False)
    assert importer.counts.imported == {"ok": 4}
    online, batch = rows(tmp_path / "online"), rows(tmp_path / "batch")
    assert set(online) == set(batch) and len(batch) == 4
    for key, rec in batch.items():
        assert {f: rec[f] for f in SAME} == {f: online[key][f] for f in SAME}
        assert rec["label_probs"] == pytest.approx(expected(LABELS), abs=1e-9)
        assert rec["batch"] is not None and rec["served_by"] == "hosted_vllm/fault-model@batch"
    assert result.summary_data["usage"]["label_probs"] == {"ok": 4, "with": 4, "without": 0}
