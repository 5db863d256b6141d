"""The CS/CA audit end to end through `judgekit audit`, against a real OpenAI-compatible server
on 127.0.0.1 (tests/fault_server.py) whose answers are scripted per item, judge and sample."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from conftest import shared_path
from fault_server import FaultServer
from typer.testing import CliRunner

import judgekit
from judgekit.cli import _register, app
from judgekit.errors import InputError
from judgekit.summary import CulturalSummary

_register()
LITE = ("benchmark-items", "global-mmlu-lite-en", "global_mmlu_lite_en_test.jsonl")
DEV = ("benchmark-items", "mmlu-dev-en-ja")
CONFIG = Path(__file__).resolve().parents[1] / "configs" / "audit.yaml"


def audit(*args: str) -> str:
    result = CliRunner().invoke(app, ["audit", *args])
    if result.exception is not None:
        raise result.exception
    assert result.exit_code == 0, result.output
    return result.output


def stub(url: str, out: Path, *more: str) -> list[str]:
    return [
        "--config", str(CONFIG), "--out", str(out), "--no-cache",
        "--set", "judge.model=hosted_vllm/stub", "--set", f"judge.api_base={url}",
        "--set", "cultural.n_resamples=20", *more,
    ]  # fmt: skip


def annotation(cs: str, question: str) -> str:
    """A strict-valid answer: CS quotes the question's first two words as evidence."""
    evidence = [" ".join(question.split()[:2])] if cs == "CS" else []
    return json.dumps(
        {"evidence": evidence, "rationale": "scripted", "time_sensitive": "no",
         "required_knowledge": "regional" if cs == "CS" else "none", "cs_label": cs,
         "subject_category": "STEM"}
    )  # fmt: skip


def item_of(body: dict, items: list[dict]) -> dict:
    text = body["messages"][0]["content"]
    return next(it for it in items if it["question"].strip() in text)


@pytest.fixture
def lite8(tmp_path: Path) -> tuple[Path, list[dict]]:
    """The first 4 CS and the first 4 CA items of Global-MMLU-Lite, with their human votes."""
    rows = [json.loads(line) for line in shared_path(*LITE).read_text().splitlines()]
    chosen = [r for r in rows if r["cs_label"] == "CS"][:4] + [
        r for r in rows if r["cs_label"] == "CA"
    ][:4]
    path = tmp_path / "lite8.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
    return path, chosen


def test_audit_annotates_validates_splits_and_resumes(tmp_path: Path, lite8: tuple) -> None:
    path, items = lite8
    # the judge is right on 3 of 4 CS and 3 of 4 CA items: one error in each direction
    wrong = {items[0]["id"], items[4]["id"]}
    judged = {
        it["id"]: ("CA" if it["cs_label"] == "CS" else "CS") if it["id"] in wrong
        else it["cs_label"] for it in items
    }  # fmt: skip

    def answer_fn(body: dict) -> str:
        it = item_of(body, items)
        return annotation(judged[it["id"]], it["question"])

    out = tmp_path / "run"
    with FaultServer(answer_fn=answer_fn) as server:
        args = stub(server.base_url, out, "--set", "cultural.strict=true")
        first = subprocess.run(  # its own process: a run holds its directory's lock till exit
            [sys.executable, "-m", "judgekit", "audit", str(path), *args],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert first.returncode == 0, first.stdout + first.stderr
        assert "CS share" in first.stdout and server.total_requests == 8
        audit("run", str(path), *args)
        assert server.total_requests == 8  # resumed: no call sent again
    summary = json.loads((out / "summary.json").read_text())
    assert summary["items"] == {
        "planned": 8, "judged": 8, "excluded": {}, "ties": 0, "failed_judgments": {}
    }  # fmt: skip
    assert summary["signature"]["prompt"]["id"] == "cultural/annotate.brief"
    annotations = pd.read_json(out / "annotations.jsonl", lines=True, dtype=False)
    assert dict(zip(annotations["id"], annotations["cs_label"], strict=True)) == judged
    assert annotations["rule_consistent"].all() and annotations["evidence_found"].map(all).all()
    shares = pd.read_csv(out / "shares.csv")
    overall = shares[shares["by"] == "all"].iloc[0]
    assert overall["n_cs"] == 4 and overall["cs_share"] == 0.5
    assert len(pd.read_csv(out / "flagged.csv")) == 4
    table = pd.read_csv(out / "validation.csv")
    published = table[(table["subset"] == "all") & (table["section"] == "CS/CA vs published label")]
    got = dict(zip(published["metric"], published["value"], strict=True))
    assert got["accuracy"] == 0.75 and got["macro_f1"] == 0.75  # 6/8; F1 = 0.75 per class
    assert got["recall CA"] == 0.75 and got["errors CA->CS"] == 1 and got["errors CS->CA"] == 1
    # 4-way: the judge says regional for CS and none for CA; by hand against the human majority
    ties, right, untied = 0, 0, 0
    for it in items:
        (top, n), *rest = Counter(it["required_knowledge"]).most_common()
        if rest and rest[0][1] == n:
            ties += 1
            continue
        untied += 1
        right += top == ("regional" if judged[it["id"]] == "CS" else "none")
    four = table[(table["subset"] == "all") & (table["metric"] == "accuracy")]
    four = dict(zip(four["section"], four["value"], strict=True))
    assert four["required knowledge (4-way), ties excluded"] == pytest.approx(right / untied)
    assert four["required knowledge (4-way), ties as errors"] == pytest.approx(right / 8)
    again = tmp_path / "again"
    audit("validate", str(out), "--out", str(again))
    pd.testing.assert_frame_equal(pd.read_csv(again / "validation.csv"), table)
    audit("split", str(path), str(out))
    cs = [json.loads(line) for line in (out / "lite8.CS.jsonl").read_text().splitlines()]
    ca = (out / "lite8.CA.jsonl").read_text().splitlines()
    assert len(cs) == 4 and len(ca) == 4
    assert (
        cs[0]["audit_cs_label"] == "CS"
        and cs[0]["required_knowledge"] == items[1]["required_knowledge"]
    )  # the item's own fields are kept next to the audit's columns


def test_jury_with_self_consistency_takes_two_level_majorities(
    tmp_path: Path, lite8: tuple
) -> None:
    path, items = lite8
    # (judge, seed) -> label for items 0, 1, 2; a judge whose two samples tie abstains
    script = {
        ("stub-a", 0): "CS CS CA", ("stub-a", 1): "CS CA CA",
        ("stub-b", 0): "CS CS CA", ("stub-b", 1): "CS CS CS",
        ("stub-c", 0): "CA CA CA", ("stub-c", 1): "CA CA CA",
    }  # fmt: skip

    def answer_fn(body: dict) -> str:
        it = item_of(body, items)
        label = script[(body["model"], body["seed"])].split()[items.index(it)]
        return annotation(label, it["question"])

    out = tmp_path / "jury"
    jury = (
        "["
        + ", ".join(
            f"{{model: hosted_vllm/{name}, name: {name}, temperature: 0.7}}"
            for name in ("stub-a", "stub-b", "stub-c")
        )
        + "]"
    )
    with FaultServer(answer_fn=answer_fn) as server:
        args = [*stub(server.base_url, out), "--set", f"judge={jury}",
                "--set", "cultural.samples=2", "--limit", "3"]  # fmt: skip
        for i in range(3):
            args += ["--set", f"judge.{i}.api_base={server.base_url}"]
        audit("run", str(path), *args)
        assert server.total_requests == 3 * 3 * 2
    rows = pd.read_json(out / "annotations.jsonl", lines=True, dtype=False).set_index("id")
    first, second, third = (rows.loc[it["id"]] for it in items[:3])
    assert first["cs_label"] == "CS" and first["cs_votes"] == {"CS": 4, "CA": 2}
    assert first["agreement"] == pytest.approx(4 / 6)
    assert second["status"] == "tie" and second["cs_label"] == "<tie>"
    assert second["by_judge"] == {"stub-a": "<tie>", "stub-b": "CS", "stub-c": "CA"}
    assert third["cs_label"] == "CA" and third["by_judge"]["stub-b"] == "<tie>"
    assert third["cs_votes"] == {"CA": 5, "CS": 1}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["items"]["ties"] == 1 and summary["items"]["judged"] == 3
    seeds = {json.loads(line)["params"]["seed"] for line in (out / "records.jsonl").open()}
    assert seeds == {0, 1}  # one seed per sample
    labels = pd.read_csv(out / "labels.csv")
    assert len(labels) == 9 and set(labels["rater"]) == {"stub-a", "stub-b", "stub-c"}


def test_translated_counterparts_report_label_stability(tmp_path: Path) -> None:
    files = []
    for name in ("mmlu_dev_en.jsonl", "global_mmlu_dev_ja.jsonl"):
        rows = shared_path(*DEV, name).read_text(encoding="utf-8").splitlines()[:4]
        files.append(tmp_path / name)
        files[-1].write_text("\n".join(rows) + "\n", encoding="utf-8")
    items = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    flip = items[4 + 2]["question"]  # the third Japanese item is judged CS, its English twin CA

    def answer_fn(body: dict) -> str:
        it = item_of(body, items)
        return annotation("CS" if it["question"] == flip else "CA", it["question"])

    out = tmp_path / "pairs"
    with FaultServer(answer_fn=answer_fn) as server:
        audit(*map(str, files), *stub(server.base_url, out))
    summary = json.loads((out / "summary.json").read_text())
    (pair,) = summary["counterparts"]
    assert pair["languages"] == "en-ja" and pair["pairs"] == 4 and pair["same_label"] == 3
    assert pair["stable_share"] == 0.75 and pair["flips"] == {"en CA -> ja CS": 1}
    langs = {r["group"]: r["n_cs"] for r in summary["shares"]["language"]}
    assert langs == {"en": 0, "ja": 1}
    assert "validation" not in summary  # the dev split carries no human votes


def test_samples_at_temperature_zero_are_refused(tmp_path: Path, lite8: tuple) -> None:
    path, _ = lite8
    with pytest.raises(InputError, match="temperature"):
        audit(str(path), *stub("http://127.0.0.1:9/v1", tmp_path / "x"),
              "--set", "cultural.samples=3")  # fmt: skip


@pytest.mark.embedded
@pytest.mark.skipif(
    not os.environ.get("JUDGEKIT_EMBEDDED"),
    reason="slow (starts the embedded model): JUDGEKIT_EMBEDDED=1 pytest -m embedded",
)
def test_embedded_model_annotates_one_item(tmp_path: Path, lite8: tuple) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs the `local` extra")
    path, _ = lite8
    out = tmp_path / "embedded"
    audit(str(path), "--config", str(CONFIG), "--out", str(out), "--no-cache", "--limit", "1")
    (record,) = [json.loads(line) for line in (out / "records.jsonl").open()]
    assert record["route"] == "local/smollm2-135m" and record["tokens_out"] > 0
    assert record["prompt_id"] == "cultural/annotate.brief"
    (row,) = pd.read_json(out / "annotations.jsonl", lines=True, dtype=False).to_dict("records")
    if record["status"] == "ok":  # constrained decoding: the answer parses
        assert row["status"] == "annotated" and row["cs_label"] in ("CS", "CA")
    else:
        assert row["status"] == "unjudged" and record["reason"]


def test_audit_retries_errors_only_when_asked(tmp_path: Path) -> None:
    """Regression: ``audit`` passed typer's Option object as ``retry_errors``, which is truthy,
    so every audit called the tasks recorded as ``error`` again."""
    from fault_server import FaultServer

    items = tmp_path / "items.jsonl"
    rows = [{"id": "q1", "question": "[[fault:500]] Which river flows through Paris?",
             "choices": ["Seine", "Thames"], "answer": "A"},
            {"id": "q2", "question": "What is 2 + 2?", "choices": ["4", "5"],
             "answer": "A"}]  # fmt: skip
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "audit"
    with FaultServer(retry_after=0.05) as srv:
        fast = ["--set", "judge.max_retries=1", "--set", "judge.retry_max_wait=0.05"]
        first = audit(str(items), *stub(srv.base_url, out, *fast))
        assert "1 tasks got no answer" in first
        sent = srv.stats()["total_requests"]
        audit(str(items), *stub(srv.base_url, out, *fast))  # resumes: the error is final
        assert srv.stats()["total_requests"] == sent
        audit(str(items), *stub(srv.base_url, out, *fast), "--retry-errors")
        assert srv.stats()["total_requests"] > sent
    loaded = judgekit.load_run(out)
    assert isinstance(loaded.summary, CulturalSummary) and loaded.summary.items.planned == 2
    assert set(loaded.records["status"]) == {"ok", "error"}
