"""A batch answer is an online answer that came late: a batch body imported gives the record
the online call of the same body gives (``ModelState.record``), label probabilities included,
against a real loopback Batch API (tests/batch_server.py) that answers as its online endpoint."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from batch_server import CLASSIFY_ITEMS, KEY_ENV, BatchServer, classify_config, stub_batch
from rich.console import Console
from test_logprobs_runs import LABELS, answer, expected, logprobs_of, write_run

import judgekit
from judgekit.batch.exporter import ExportBatch
from judgekit.batch.importer import ImportResults
from judgekit.cli.batch_report import print_batch

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


# -- answers that are not the judge's (issue 39 point 5) -------------------------------------


def test_other_models_and_errors_inside_a_200_are_errors(tmp_path: Path, monkeypatch) -> None:
    """An answer of a dated snapshot of the judge is the judge's; another model's is recorded
    ``error``, named once per model and counted, unless ``same_judge`` names it; an error
    inside an HTTP 200 is ``error``; ``--retry-errors`` then asks the judge online."""
    monkeypatch.setenv(KEY_ENV, "sk-test")
    with BatchServer() as srv:
        cfg = classify_config(tmp_path, srv.base_url, items=CLASSIFY_ITEMS)
        executor = ExportBatch(tmp_path / "exp", 1)
        judgekit.run(cfg, out=tmp_path / "a", executor=executor, preflight=False)
        shard = Path(executor.manifest.directory) / executor.manifest.shards[0].file
        (output,) = stub_batch(srv, shard, tmp_path)
        lines = [json.loads(line) for line in output.read_text().splitlines()]
        models = ["gpt-4o-mini-2024-07-18", "gpt-4o", "gpt-4o", "gpt-4o-mini-0718x"]
        for line, model in zip(lines, models, strict=False):
            line["response"]["body"]["model"] = model
        lines[4]["response"]["body"] = {"error": {"message": "overloaded", "type": "server_error"}}
        output.write_text("".join(json.dumps(line) + "\n" for line in lines))
        keys = [line["custom_id"] for line in lines]

        plain = ImportResults([output])
        judgekit.run(cfg, out=tmp_path / "a", executor=plain, preflight=False)
        recs = rows(tmp_path / "a")
        assert [recs[k]["status"] for k in keys[:6]] == ["ok", *["error"] * 4, "ok"]
        assert recs[keys[1]]["reason"].startswith("other_model: answered by 'gpt-4o', not ")
        assert (
            recs[keys[1]]["raw"] == lines[1]["response"]["body"]["choices"][0]["message"]["content"]
            and recs[keys[1]]["parsed"] is None
        )
        assert "overloaded" in recs[keys[4]]["reason"] and recs[keys[4]]["raw"] is None
        assert plain.counts.imported == {"ok": 8, "error": 4}
        assert plain.counts.other_models == {
            ("gpt-4o", "gpt-4o-mini"): 2, ("gpt-4o-mini-0718x", "gpt-4o-mini"): 1
        }  # fmt: skip
        console = Console(record=True, width=300)
        print_batch(console, plain, SimpleNamespace(summary_data={}, out_dir=tmp_path / "a"))
        said = [ln for ln in console.export_text().splitlines() if "not the judge" in ln]
        assert len(said) == 2 and said[0].startswith("2 answers by gpt-4o, not the judge ")

        manifest = tmp_path / "exp" / "manifest.json"
        same = ImportResults([output], [manifest], same_judge=["gpt-4o"])
        judgekit.run(cfg, out=tmp_path / "b", executor=same, preflight=False, no_cache=True)
        assert same.counts.imported == {"ok": 10, "error": 2}
        assert same.counts.other_models == {("gpt-4o-mini-0718x", "gpt-4o-mini"): 1}
        taken = rows(tmp_path / "b")
        assert taken[keys[1]]["status"] == "ok" and taken[keys[3]]["status"] == "error"

        before = srv.total_requests
        judgekit.run(cfg, out=tmp_path / "a", retry_errors=True, no_cache=True, preflight=False)
        assert srv.total_requests == before + 4
    again = rows(tmp_path / "a")
    assert all(again[k]["status"] == "ok" and again[k]["batch"] is None for k in keys[1:5])
