"""Systems, models and judges compared on their common scored items, with the count shown and
groups that left items unscored marked incomplete (issue 12, case 4)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest
from fault_server import FaultServer

from judgekit.config import load_config
from judgekit.llm.client import LLMClient
from judgekit.metrics.common_items import coverage
from judgekit.metrics.spilling import model_comparison
from judgekit.pipelines.classify import ClassifyRun
from judgekit.pipelines.classify import write_report as classify_report
from judgekit.pipelines.error_typing import ErrorsRun
from judgekit.report.error_typing import write_report as errors_report
from judgekit.report.spilling import eligible
from judgekit.runlog import RunLog


def test_coverage_common_items_and_incomplete_groups() -> None:
    cov = coverage([("A", 1, True), ("A", 2, True), ("B", 1, True), ("B", 2, False),
                    ("C", 1, True), ("C", 2, True), ("C", 3, True)])  # fmt: skip
    assert cov.common == {1} and cov.n_common == 1
    assert cov.incomplete_groups() == ["B"]  # C's extra item is not common, C is complete
    assert cov.row("B") == {"n_items": 2, "n_scored": 1, "n_common": 1, "incomplete": True}
    assert coverage([]).n_common == 0


# -- errors pipeline: MQM per system ----------------------------------------------------------
SEGMENTS = [  # (system, seg_id, translation, answer)
    ("A", "1", "The cat sat.", {"no_errors": True, "errors": []}),
    ("A", "2", "A dog ran.", {"no_errors": False, "errors": [
        {"quote": "ran", "type": "MIS", "severity": "major"}]}),
    ("B", "1", "The cat sits.", {"no_errors": False, "errors": [
        {"quote": "sits", "type": "MIS", "severity": "minor"}]}),
    ("B", "2", "The dog walked.", {"no_errors": False, "errors": [  # quote not in the text
        {"quote": "runs", "type": "MIS", "severity": "major"}]}),
]  # fmt: skip


def _run_errors(tmp_path: Path) -> tuple[dict, Path]:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"{s}{n}", "system": s, "doc": "d", "seg_id": n,
                                         "source": f"src {n}", "translation": t}) + "\n"
                             for s, n, t, _ in SEGMENTS), encoding="utf-8")  # fmt: skip
    answers = {t: json.dumps(a) for _, _, t, a in SEGMENTS}

    def scripted(body: dict) -> str:
        return answers[body["messages"][0]["content"].rsplit("translation:\n", 1)[1].strip()]

    cfg_path = tmp_path / "errors.yaml"
    with FaultServer(answer_fn=scripted) as srv:
        cfg_path.write_text(
            f"pipeline: errors\nout: {tmp_path / 'run'}\n"
            f"judge: {{model: hosted_vllm/stub, api_base: '{srv.base_url}', max_reasks: 0,"
            " max_retries: 1, timeout: 5}\n"
            f"errors:\n  items: {items}\n  source_lang: German\n  target_lang: English\n",
            encoding="utf-8",
        )
        cfg = load_config(cfg_path)
        client = LLMClient(RunLog(cfg.out_dir()))
        runner = ErrorsRun(cfg, client)
        asyncio.run(runner.run())
        summary = errors_report(runner, list(client.seen.values()), cfg.out_dir())
        client.runlog.close()
    return summary, cfg.out_dir()


def test_errors_pipeline_ranks_systems_on_common_segments(tmp_path: Path) -> None:
    summary, out = _run_errors(tmp_path)
    rows = {r["system"]: r for r in summary["type_counts"]}
    # own scored segments: A (0 + 5) / 2 = 2.5, B 1 / 1 = 1.0 -> B would rank best
    assert rows["A"]["mean_mqm"] == 2.5 and rows["B"]["mean_mqm"] == 1.0
    # on the one segment both scored (d/1): A 0.0, B 1.0 -> A ranks best; B is incomplete
    assert rows["A"]["n_common"] == rows["B"]["n_common"] == 1
    assert rows["A"]["mean_mqm_common"] == 0.0 and rows["B"]["mean_mqm_common"] == 1.0
    assert (rows["A"]["rank"], rows["B"]["rank"]) == (1, 2)
    assert rows["B"]["incomplete"] and not rows["A"]["incomplete"] and rows["all"]["incomplete"]
    table = pd.read_csv(out / "type_counts.csv").set_index("system")
    assert table.loc["B", "mean_mqm_common"] == 1.0 and bool(table.loc["B", "incomplete"])


# -- spilling: rates per model ----------------------------------------------------------------
def test_spilling_models_compared_on_common_generations() -> None:
    rows = pd.DataFrame([
        dict(model="A", lang="de", word="w1", sample=0, excluded=None, n_judged=5, n_invalid=1),
        dict(model="A", lang="de", word="w2", sample=0, excluded=None, n_judged=5, n_invalid=5),
        dict(model="B", lang="de", word="w1", sample=0, excluded=None, n_judged=5, n_invalid=2),
        dict(model="B", lang="de", word="w2", sample=0, excluded="judgment_unscored",
             n_judged=0, n_invalid=0),
        dict(model="A", lang="de", word="w3", sample=0, excluded="no_translation",
             n_judged=0, n_invalid=0),
        dict(model="B", lang="de", word="w3", sample=0, excluded="no_translation",
             n_judged=0, n_invalid=0),
    ])  # fmt: skip
    table = model_comparison(eligible(rows)).set_index("model")
    # own items: A 6/10 = 0.6, B 2/5 = 0.4 (B "better"); common item w1: A 0.2, B 0.4
    assert table.loc["A", "spilling_rate_common"] == pytest.approx(0.2)
    assert table.loc["B", "spilling_rate_common"] == pytest.approx(0.4)
    assert table.loc["A", "rank"] == 1 and table.loc["B", "rank"] == 2
    assert table["n_common"].tolist() == [1, 1]
    # a word without a translation is nobody's failure: A stays complete
    assert not table.loc["A", "incomplete"] and table.loc["B", "incomplete"]


# -- classify: label shares per judge ---------------------------------------------------------
def test_classify_label_shares_on_items_every_judge_labelled(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{i}", "text": f"text {i}"}) + "\n"
                             for i in range(4)), encoding="utf-8")  # fmt: skip

    def scripted(body: dict) -> str:
        text = body["messages"][-1]["content"]
        item = int(text.split("text ")[-1].split()[0].strip(".\"'"))
        if body["model"] == "b" and item >= 2:
            return json.dumps({"label": "maybe", "rationale": "x"})  # outside the label set
        label = "good" if body["model"] == "a" or item == 0 else "bad"
        return json.dumps({"label": label, "rationale": "x"})

    with FaultServer(answer_fn=scripted) as srv:
        judge = f"api_base: '{srv.base_url}', max_reasks: 0, max_retries: 1, timeout: 5"
        cfg_path = tmp_path / "classify.yaml"
        cfg_path.write_text(
            f"pipeline: classify\nout: {tmp_path / 'run'}\n"
            f"judge:\n  - {{model: hosted_vllm/a, {judge}}}\n"
            f"  - {{model: hosted_vllm/b, {judge}}}\n"
            f"classify:\n  items: {items}\n  labels: [good, bad]\n",
            encoding="utf-8",
        )
        cfg = load_config(cfg_path)
        client = LLMClient(RunLog(cfg.out_dir()))
        runner = ClassifyRun(cfg, client)
        asyncio.run(runner.run())
        summary = classify_report(runner, client.records(), cfg.out_dir())
        client.runlog.close()
    # own items: a labelled 4 (all good), b labelled i0 good, i1 bad
    assert summary["labels"] == {"a": {"good": 4}, "b": {"bad": 1, "good": 1}}
    common = summary["labels_common"]
    assert common["n_common"] == 2 and common["incomplete"] == ["b"]
    assert common["counts"] == {"a": {"good": 2, "bad": 0}, "b": {"good": 1, "bad": 1}}
    assert common["shares"]["a"] == {"good": 1.0, "bad": 0.0}
    assert common["shares"]["b"] == {"good": 0.5, "bad": 0.5}
