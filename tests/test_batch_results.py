"""``judgekit batch import`` of bad result files: a truncated file or a bad line is one located
error recording nothing, the request file given for the output, wrong ids, another config's or
stale answers and answers no manifest lists are counted and ignored, every result line shape,
a missing file, and a pipeline whose calls depend on each other refused at export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batch_runs import do_import, export, records, shard_paths
from batch_server import (
    CLASSIFY_ITEMS,
    KEY_ENV,
    BatchServer,
    classify_config,
    vllm_run_batch,
)
from cli_inproc import Ran, run_main

import judgekit
from judgekit.batch.exporter import ExportBatch
from judgekit.batch.results import ResultIndex, parse_result
from judgekit.errors import InputError, JudgekitError

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def srv():
    with BatchServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")


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
