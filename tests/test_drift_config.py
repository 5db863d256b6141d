"""`drift run` compares the judge's whole effective configuration (each parameter, such as the
classify task, and the task fingerprint: the hash of what reached the model), and refuses a
config whose items are not exactly the anchor items before any call is sent."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from judgekit.drift.anchors import freeze_anchors
from judgekit.drift.compare import compare_signatures
from judgekit.errors import InputError


def test_each_changed_parameter_is_listed():
    old = {"models": [{"name": "j"}], "parameters": {"task": "Sentiment.", "samples": 1}}
    new = {"models": [{"name": "j"}], "parameters": {"task": "Sentiment of a review.",
                                                     "samples": 1}}  # fmt: skip
    assert compare_signatures(old, new) == [
        "parameters.task: 'Sentiment.' -> 'Sentiment of a review.'"
    ]
    assert compare_signatures(old, old) == []


def items_file(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"a{i:02d}", "text": f"Review {i}: fine."}) + "\n"
                            for i in range(n)), encoding="utf-8")  # fmt: skip
    return path


def config(path: Path, items: Path, url: str, cache: Path, task: str) -> Path:
    path.write_text(f"""pipeline: classify
cache: {{dir: {cache}}}
judge: {{model: hosted_vllm/fault-model, api_base: {url}, timeout: 5, max_retries: 1}}
classify: {{items: {items}, labels: [positive, negative, neutral], task: {task}}}
""", encoding="utf-8")  # fmt: skip
    return path


def test_a_changed_task_is_listed_and_other_items_are_refused(tmp_path: Path):
    from fault_server import FaultServer

    from judgekit.drift.run import drift_run
    from judgekit.engine import run

    items = items_file(tmp_path / "items.jsonl", 20)
    with FaultServer(default_latency=0.0) as srv:
        one = config(tmp_path / "judge.yaml", items, srv.base_url, tmp_path / "c", "Sentiment.")
        base = run(one, out=tmp_path / "baseline").out_dir
        with (tmp_path / "anchors.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["item", "human"])
            writer.writerows([f"a{i:02d}", "positive"] for i in range(20))
        freeze_anchors(tmp_path / "anchors.csv")
        two = config(tmp_path / "judge2.yaml", items, srv.base_url, tmp_path / "c",
                     "Sentiment of a review.")  # fmt: skip
        doc = drift_run(tmp_path / "anchors.csv", two, base, tmp_path / "after", n_boot=50)
        changes = doc["signature_changes"]
        assert "parameters.task: 'Sentiment.' -> 'Sentiment of a review.'" in changes
        assert any(c.startswith("task_fingerprints: [") for c in changes)
        fewer = config(tmp_path / "judge3.yaml", items_file(tmp_path / "few.jsonl", 14),
                       srv.base_url, tmp_path / "c", "Sentiment.")  # fmt: skip
        sent = srv.total_requests
        with pytest.raises(InputError) as err:
            drift_run(tmp_path / "anchors.csv", fewer, base, tmp_path / "fewer", n_boot=50)
        assert srv.total_requests == sent and not (tmp_path / "fewer").exists()
    assert err.value.path == str(fewer) and err.value.field == "items"
    assert "6 anchor(s) not among its items (a14, a15, a16)" in err.value.message
