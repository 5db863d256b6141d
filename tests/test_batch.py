"""``judgekit batch export`` and ``batch import``: the online requests as batch JSONL, and the
answers of a real loopback Batch API (tests/batch_server.py) and of vLLM's run-batch output
format back as the same records, labels and reports an online run gives."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
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
from judgekit.batch.exporter import ExportBatch, even_sizes
from judgekit.batch.importer import ImportResults
from judgekit.batch.results import ResultIndex, parse_result
from judgekit.errors import InputError, JudgekitError
from judgekit.runlog import RunLog

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def srv():
    with BatchServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")


def export(cfg: Path, out: Path, directory: Path, shards: int = 1, **kw) -> ExportBatch:
    executor = ExportBatch(directory, shards)
    result = judgekit.run(cfg, out=out, executor=executor, preflight=False, **kw)
    assert result.summary_data is None  # an export writes no report
    return executor


def do_import(cfg: Path, out: Path, files, manifests=(), **kw):
    executor = ImportResults(files, manifests)
    result = judgekit.run(cfg, out=out, executor=executor, preflight=False, **kw)
    return result, executor.counts


def shard_paths(executor: ExportBatch) -> list[Path]:
    root = Path(executor.manifest.directory)
    return [root / s.file for s in executor.manifest.shards]


def records(out: Path) -> dict:
    log = RunLog(out)
    try:
        return {r.key: r for r in log.iter_records()}
    finally:
        log.close()


def body_bytes(line: bytes) -> bytes:
    """The body of a request line, as the bytes written (independently of judgekit's code)."""
    head = line.index(b',"body":') + len(b',"body":')
    return line[head : line.rindex(b"}")]


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


# -- bad result files ---------------------------------------------------------------------------


@pytest.fixture
def exported(srv, tmp_path):
    """A classify export on the stub and the vLLM run-batch output of its one shard."""
    cfg = classify_config(tmp_path, srv.base_url, route="hosted_vllm/fault-model")
    executor = export(cfg, tmp_path / "batch", tmp_path / "exp")
    out = tmp_path / "out.jsonl"
    vllm_run_batch(shard_paths(executor)[0], out, srv.base_url)
    return cfg, executor, out


def cli(*args: str) -> Ran:
    return run_main(*args)


def test_truncated_results_file_is_one_located_error_and_records_nothing(exported, tmp_path):
    cfg, _, out = exported
    data = out.read_bytes()
    out.write_bytes(data[: len(data) - 40])  # the last line cut short
    with pytest.raises(InputError) as err:
        do_import(cfg, tmp_path / "batch", [out])
    assert (err.value.path, err.value.line) == (str(out), 12)
    assert records(tmp_path / "batch") == {}
    # the command (a run directory of its own: this process holds the lock of "batch")
    manifest = str(tmp_path / "exp" / "manifest.json")
    proc = cli(
        "batch",
        "import",
        str(cfg),
        str(out),
        "--manifest",
        manifest,
        "--out",
        str(tmp_path / "cli"),
    )
    assert proc.returncode == 2, proc.stderr
    assert f"error: {out}:12: the last line is cut short" in proc.stderr
    assert "truncated" in proc.stderr and "Traceback" not in proc.stderr
    assert records(tmp_path / "cli") == {}


def test_a_bad_line_in_the_middle_is_located(exported, tmp_path):
    cfg, _, out = exported
    lines = out.read_text().splitlines()
    lines[4] = lines[4][:30]
    out.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        do_import(cfg, tmp_path / "batch", [out])
    assert err.value.line == 5 and "invalid JSON" in err.value.message
    lines[4] = json.dumps({"id": "x", "response": None, "error": "x"})
    out.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        do_import(cfg, tmp_path / "batch", [out])
    assert (err.value.line, err.value.field) == (5, "custom_id")
    assert records(tmp_path / "batch") == {}


def test_the_request_file_given_instead_of_the_output(exported, tmp_path):
    cfg, executor, _ = exported
    with pytest.raises(InputError, match="a batch request line, not a result"):
        do_import(cfg, tmp_path / "batch", shard_paths(executor))


def test_wrong_ids_are_counted_and_ignored(exported, tmp_path):
    cfg, _, out = exported
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for obj in lines[:3]:
        obj["custom_id"] = "judge|fault-model|nope|s0|00000000"
    lines.append(dict(lines[5]))  # a repeated line
    out.write_text("".join(json.dumps(o) + "\n" for o in lines))
    result, counts = do_import(cfg, tmp_path / "batch", [out])
    assert counts.imported == {"ok": 9} and counts.duplicates == 3 and counts.unknown == 1
    assert counts.unknown_keys == ["judge|fault-model|nope|s0|00000000"]
    assert counts.missing == 3 and result.summary_data is None  # no report while 3 are missing
    assert len(records(tmp_path / "batch")) == 9
    manifest = str(tmp_path / "exp" / "manifest.json")
    proc = cli(
        "batch",
        "import",
        str(cfg),
        str(out),
        "--manifest",
        manifest,
        "--out",
        str(tmp_path / "cli"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "imported 9 answers (ok 9, unscored 0, error 0)" in proc.stdout
    assert "1 for tasks this run does not have" in proc.stdout and "3 repeated" in proc.stdout
    assert "3 tasks of the run have no record yet" in proc.stdout


def test_another_configs_answers_are_all_ignored(srv, tmp_path, exported):
    """Answers exported from a config with other labels (other task keys) never become
    records of this one."""
    cfg, _, out = exported
    other = classify_config(
        tmp_path, srv.base_url, route="hosted_vllm/fault-model", labels="[good, bad]", name="other"
    )
    result, counts = do_import(other, tmp_path / "other", [out])
    assert counts.unknown == 12 and sum(counts.imported.values()) == 0 and counts.missing == 12
    assert records(tmp_path / "other") == {} and result.summary_data is None


def test_stale_answers_are_ignored(srv, tmp_path):
    """An item's text edited after the export keeps its key, not its request: its answer is
    stale and is never recorded; the others are."""
    items = tmp_path / "items.jsonl"
    items.write_text(CLASSIFY_ITEMS.read_text())
    cfg = classify_config(tmp_path, srv.base_url, route="hosted_vllm/fault-model", items=items)
    executor = export(cfg, tmp_path / "batch", tmp_path / "exp")
    out = tmp_path / "out.jsonl"
    vllm_run_batch(shard_paths(executor)[0], out, srv.base_url)
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    rows[0]["text"] = "The room was dirty."
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, counts = do_import(cfg, tmp_path / "batch", [out])
    assert counts.stale == 1 and counts.imported == {"ok": 11} and counts.missing == 1
    again = export(cfg, tmp_path / "batch", tmp_path / "exp2")  # only the edited one is due
    assert again.pending.requests == 1 and again.pending.recorded == 11


def test_answers_no_manifest_lists_are_ignored_unless_given(srv, tmp_path, exported):
    cfg, executor, out = exported
    for path in (tmp_path / "batch" / "batch" / "exports").glob("*.json"):
        path.unlink()
    _, counts = do_import(cfg, tmp_path / "batch", [out])
    assert counts.unlisted == 12 and records(tmp_path / "batch") == {}
    _, counts = do_import(cfg, tmp_path / "batch", [out], [tmp_path / "exp" / "manifest.json"])
    assert counts.imported == {"ok": 12}


def test_result_line_shapes():
    """The shapes of OpenAI's output and error files and of vLLM's run-batch output."""
    body = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]}
    ok = parse_result(
        {
            "id": "batch_req_1",
            "custom_id": "k",
            "response": {"status_code": 200, "request_id": "req_1", "body": body},
            "error": None,
        },
        "f",
        1,
    )
    assert (ok.key, ok.body, ok.status, ok.error) == ("k", body, 200, None)
    refused = parse_result(
        {
            "id": "b",
            "custom_id": "k",
            "response": {
                "status_code": 500,
                "request_id": "r",
                "body": {"error": {"message": "boom", "type": "server_error", "code": None}},
            },
            "error": None,
        },
        "f",
        2,
    )
    assert (refused.body, refused.status, refused.error) == (None, 500, "HTTP 500: boom")
    expired = parse_result(
        {
            "id": "b",
            "custom_id": "k",
            "response": None,
            "error": {"code": "batch_expired", "message": "not executed in time"},
        },
        "f",
        3,
    )
    assert (expired.status, expired.error) == (None, "batch_expired: not executed in time")
    vllm = parse_result(
        {
            "id": "vllm-1",
            "custom_id": "k",
            "response": {"status_code": 400, "request_id": "vllm-batch-1", "body": None},
            "error": "max_tokens too large",
        },
        "f",
        4,
    )
    assert (vllm.status, vllm.error) == (400, "HTTP 400: max_tokens too large")


def test_missing_results_file(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        ResultIndex.read([tmp_path / "nope.jsonl"])


def test_a_pipeline_with_dependent_calls_cannot_be_exported(tmp_path):
    with pytest.raises(JudgekitError, match="spilling pipeline builds its later calls"):
        judgekit.run(
            REPO / "configs" / "spilling.yaml",
            out=tmp_path / "run",
            preflight=False,
            executor=ExportBatch(tmp_path / "exp"),
            limit=1,
        )


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
