"""One label vocabulary: labels, ids and text read the same way by every reader and command, and
no judge-vs-human figure over label sets that do not meet. One test per case of the issue (each
failed before the vocabulary), with the figures computed by hand in the comments."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
from fault_server import FaultServer
from label_helpers import accuracy_of, judgekit, write_long

from judgekit.errors import JudgekitWarning
from judgekit.labels.table import load_labels

REPO = Path(__file__).resolve().parents[1]
NFD = "Jose\u0301"  # José typed on macOS: e + U+0301
NFC = unicodedata.normalize("NFC", NFD)  # José on Windows: U+00E9


# -- case 1: a spreadsheet's TRUE/FALSE against a judge's true/false ---------------------------
def test_case1_excel_true_false_humans_score_the_judge_1(tmp_path: Path) -> None:
    judge = write_long(tmp_path / "judge.csv", [(i, "judge", v) for i, v in
                       (("a", "true"), ("b", "false"), ("c", "true"), ("d", "false"))])  # fmt: skip
    rows = [(i, h, v) for h in ("h1", "h2") for i, v in
            (("a", "TRUE"), ("b", "FALSE"), ("c", "TRUE"), ("d", "FALSE"))]  # fmt: skip
    human = write_long(tmp_path / "human.csv", rows)
    out = tmp_path / "out"
    proc = judgekit("calibrate", "judge", "--judge", str(judge), "--human", str(human),
                    "--n-resamples", "0", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert accuracy_of(out) == 1.0  # 4 of 4: TRUE is true (was 0.000: TRUE != true)
    assert "warning" not in proc.stderr  # the booleans are one vocabulary, nothing to say
    table = load_labels(human)
    assert table.categories == ["false", "true"]
    jsonl = tmp_path / "h.jsonl"  # JSON booleans and the text read alike
    jsonl.write_text('{"item": "a", "rater": "h", "label": true}\n'
                     '{"item": "b", "rater": "h", "label": "False"}\n', "utf-8")  # fmt: skip
    assert load_labels(jsonl).column("h").tolist() == ["true", "false"]


# -- case 2: Neutral vs neutral in view --labels -----------------------------------------------
@pytest.fixture(scope="module")
def classify(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from view_runs import classify_runs

    a, _, _ = classify_runs(tmp_path_factory.mktemp("classify"))
    return a, tmp_path_factory.mktemp("humans")


def _against(run: Path, labels: Path) -> dict:
    from judgekit.view.compare import against_humans, sources
    from judgekit.view.data import read_run

    found, links = sources([read_run(run)])
    return against_humans(found, links, labels, n_resamples=0)


def test_case2_view_labels_fold_neutral_to_the_judges_neutral_with_a_warning(classify) -> None:
    run, tmp = classify
    judged = load_labels(run)  # judge-a: LABELS[i % 3] on 11 of 12 items (item 5 unscored)
    rows = [(i, "h1", str(v).capitalize()) for i, v in judged.column(judged.raters[0]).items()]
    humans = write_long(tmp / "humans.csv", rows)
    with pytest.warns(JudgekitWarning, match="differ only in case") as caught:
        got = _against(run, humans)["judges"][0]
    assert any("'Neutral'" in str(w.message) and "'neutral'" in str(w.message) for w in caught)
    assert got["accuracy"]["value"] == 1.0 and got["n_items"] == 11  # was 0.0, 3 x 2 classes
    assert got["labels"]["folded"] == {"Negative": "negative", "Neutral": "neutral",
                                       "Positive": "positive"}  # fmt: skip
    assert got["disagreements"] == []


# -- case 3: MQM segment labels of review import against the errors judge --------------------
def test_case3_mqm_review_labels_meet_the_errors_judge_in_view_and_calibrate(tmp_path) -> None:
    from view_runs import ERROR_ITEMS, errors_run

    from judgekit.review.campaign import read_campaign
    from judgekit.review.importer import read_files
    from judgekit.review.make import build_campaign, make_page
    from judgekit.review.outputs import write_outputs

    run = errors_run(tmp_path)  # a: major, minor, critical spans; b: clean; c: unscored
    made = make_page(build_campaign(run, "mqm"), "ana", tmp_path / "c" / "ana.html")
    text = ERROR_ITEMS[0]["translation"]
    start = text.index("shop")
    answers = {
        "a": {"no_errors": False, "errors": [{"side": "translation", "start": start,
              "end": start + 4, "text": "shop", "type": "MIS", "severity": "critical"}]},
        "b": {"no_errors": True, "errors": []},
    }  # fmt: skip
    export = {"format": "judgekit-review/1", "campaign": made.campaign.id, "task": "mqm",
              "rater": "ana", "show_judge": False,
              "items": [{"id": i.id, "hash": i.hash, "answer": answers.get(i.id),
                         "done": i.id in answers} for i in made.campaign.items]}  # fmt: skip
    (tmp_path / "ana.json").write_text(json.dumps(export), encoding="utf-8")
    campaign = read_campaign(made.campaign_file)
    out = tmp_path / "human"
    write_outputs(campaign, read_files([tmp_path / "ana.json"], campaign), out)
    labels = pd.read_csv(out / "labels.csv")
    assert list(labels["label"]) == ["critical", "no-error"]  # was error / no-error
    got = _against(run, out / "labels.csv")["judges"][0]
    # a: worst severity critical = critical; b: no-error = no-error (was accuracy 0: "no-error"
    # vs "no errors", "error" vs "critical")
    assert got["accuracy"]["value"] == 1.0 and got["n_items"] == 2
    assert got["labels"]["common"] == ["critical", "no-error"]
    proc = judgekit("calibrate", "errors", str(run), str(out / "human_mqm.tsv"),
                    "--n-resamples", "0")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    headline = json.loads((run / "calibration.json").read_text("utf-8"))["headline"]
    assert (headline["segments"], headline["scored"]) == (2, 2)


# -- case 4: ids and rater names in NFC in one file and NFD in the other ----------------------
def test_case4_nfd_ids_and_names_meet_their_nfc_twins(tmp_path: Path) -> None:
    items = [f"{NFD}-{k}" for k in range(3)]
    judge = write_long(tmp_path / "judge.csv", [(i, "judge", "CS") for i in items])
    twins = [(unicodedata.normalize("NFC", i), "h1", "CS") for i in items]
    human = write_long(tmp_path / "human.csv", twins + [(twins[0][0], "h2", "CS")])
    out = tmp_path / "out"
    proc = judgekit("calibrate", "judge", "--judge", str(judge), "--human", str(human),
                    "--n-resamples", "0", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr  # was: "no item has both a judge label and ..."
    assert accuracy_of(out) == 1.0
    # one rater written both ways is one rater (was two: José and José)
    mixed = write_long(tmp_path / "raters.csv", [("a", NFC, "x"), ("b", NFD, "y"), ("a", "Ana",
                       "x"), ("b", "Ana", "y")])  # fmt: skip
    assert load_labels(mixed).raters == [NFC, "Ana"]
    proc = judgekit("calibrate", "agreement", str(mixed), "--n-resamples", "0",
                    "--out", str(tmp_path / "agr"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    agreement = json.loads((tmp_path / "agr" / "agreement.json").read_text("utf-8"))
    assert agreement["raters"] == [NFC, "Ana"] and agreement["n_items"] == 2


# -- case 5: systems tied on their common segments share a rank -------------------------------
def test_case5_tied_systems_share_a_rank_and_the_table_says_so() -> None:
    from rich.console import Console

    from judgekit.pipelines.localisation_schemas import load_rubric
    from judgekit.report.console import print_errors
    from judgekit.report.error_typing import type_counts

    def seg(system: str, seg_id: str, mqm: float) -> dict:
        return {"system": system, "doc": "d", "seg_id": seg_id, "source": seg_id,
                "status": "scored", "errors": [], "mqm": mqm}  # fmt: skip

    # zz and aa: MQM 1 + 5 over the same two segments, mean 3.0 each; mm: mean 0.5
    segments = [seg("zz", "1", 1.0), seg("zz", "2", 5.0), seg("aa", "1", 5.0),
                seg("aa", "2", 1.0), seg("mm", "1", 0.0), seg("mm", "2", 1.0)]  # fmt: skip
    table = type_counts(segments, load_rubric()).set_index("system")
    assert table.loc["mm", "rank"] == 1
    assert table.loc["aa", "rank"] == table.loc["zz", "rank"] == 2  # was aa 2, zz 3 (by name)
    assert bool(table.loc["aa", "tied"]) and not bool(table.loc["mm", "tied"])
    console = Console(record=True, width=300)
    rows = table.reset_index().astype(object).where(table.reset_index().notna(), None)
    print_errors({"type_counts": rows.to_dict(orient="records")}, console)
    text = console.export_text()
    assert "=2" in text and "tied (=): aa, zz have equal MQM" in text


# -- case 6: YAML dates and yes/no never reach a provider or a signature unconverted ---------
def test_case6_an_azure_api_version_date_stays_text_and_dry_run_works(tmp_path: Path) -> None:
    from judgekit.config import load_config

    config = tmp_path / "azure.yaml"
    config.write_text(
        "pipeline: classify\njudge:\n  model: azure/gpt-4o\n"
        "  extra: {api_version: 2024-05-01, stream_mode: no}\n"
        "spilling:\n  backcheck: no\n"
        f"classify:\n  items: {REPO / 'prompts' / 'classify' / 'examples.jsonl'}\n"
        "  labels: [positive, negative]\n  task: Sentiment.\n",
        encoding="utf-8",
    )
    loaded = load_config(config, ["judge.extra.when=2024-06-01"])
    assert loaded.judge.extra == {"api_version": "2024-05-01", "stream_mode": "no",
                                  "when": "2024-06-01"}  # fmt: skip
    assert loaded.spilling.backcheck is False  # a boolean field still reads "no"
    env = {"AZURE_API_KEY": "x", "AZURE_API_BASE": "http://127.0.0.1:9",
           "AZURE_API_VERSION": "2024-05-01"}  # fmt: skip
    proc = judgekit("run", str(config), "--dry-run", "--out", str(tmp_path / "run"), env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]  # was a 68-line "date" traceback
    assert "Traceback" not in proc.stderr


# -- case 7: a segment holding U+2028 -----------------------------------------------------------
LS = "\u2028"
SEGMENTS = [
    {"id": "p", "source": "Er kam.", "translation": f"He came.{LS}Then he left.", "system": "s1",
     "doc": "d", "seg_id": "1"},
    {"id": "q", "source": "Gut.", "translation": "Good.", "system": "s1", "doc": "d",
     "seg_id": "2"},
]  # fmt: skip


def _errors_run_with_a_line_separator(tmp: Path) -> Path:
    items = tmp / "segments.jsonl"
    items.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in SEGMENTS), "utf-8")

    def answer(body: dict) -> str:
        text = body["messages"][0]["content"].rsplit("translation:\n", 1)[1]
        if "Then he left" in text:
            return json.dumps({"no_errors": False, "errors": [
                {"quote": "left", "type": "MIS", "severity": "minor"}]})  # fmt: skip
        return json.dumps({"no_errors": True, "errors": []})

    config = tmp / "errors.yaml"
    with FaultServer(answer_fn=answer) as srv:
        config.write_text(
            f"pipeline: errors\nout: {tmp / 'errors'}\n"
            f"judge: {{model: hosted_vllm/stub, api_base: '{srv.base_url}', max_reasks: 0}}\n"
            f"errors:\n  items: {items}\n  source_lang: German\n  target_lang: English\n",
            encoding="utf-8",
        )
        proc = judgekit("run", str(config), "--no-cache")
        assert proc.returncode == 0, proc.stderr
    return tmp / "errors"


def test_case7_u2028_in_a_segment_is_text_not_a_line_break(tmp_path: Path) -> None:
    from judgekit.calibration.error_typing import calibrate_errors
    from judgekit.calibration.estimate.inputs import Target, load_judge
    from judgekit.calibration.grid import read_records

    run = _errors_run_with_a_line_separator(tmp_path)
    assert LS in (run / "segments.jsonl").read_text("utf-8")  # JSON writes it unescaped
    head = "system\tdoc\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
    tsv = tmp_path / "human.tsv"
    tsv.write_text(head + f"s1\td\t1\tr1\tEr kam.\tHe came.{LS}Then he <v>left</v>.\t"
                   "Accuracy/Mistranslation\tMinor\n", "utf-8")  # fmt: skip
    cal = calibrate_errors(run, tsv, n_resamples=0)  # was a JSONDecodeError traceback
    assert cal["headline"]["segments"] == 1 and cal["headline"]["span_f1"] == 1.0
    judged, _, _ = load_judge(run, Target.parse("mean"))  # calibrate estimate's reader
    assert judged.to_dict() == {"p": 1.0, "q": 0.0}  # one minor error: MQM 1
    assert len(read_records(run)) == 2  # the grid's reader of records.jsonl
    proc = judgekit("review", "make", "--task", "mqm", str(run), "--rater", "ana",
                    "-o", str(tmp_path / "page" / "ana.html"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr


# -- case 8: stored item paths, the campaign of a --limit run, an errors run in calibrate judge
CSCA = [
    {"id": f"q{k}", "question": f"Question {k}: which river flows through {city}?",
     "choices": ["A river", "Another", "None", "All"], "answer": "A", "subject": "geography",
     "language": "en"}
    for k, city in enumerate(["Paris", "Cairo", "Lima"])
]  # fmt: skip


def test_case8_a_limited_audit_run_opens_from_anywhere_and_makes_its_own_campaign(tmp_path):
    (tmp_path / "csca.jsonl").write_text("".join(json.dumps(i) + "\n" for i in CSCA), "utf-8")

    def answer(body: dict) -> str:
        return json.dumps({"evidence": ["river"], "rationale": "scripted", "time_sensitive": "no",
                           "required_knowledge": "regional", "cs_label": "CS",
                           "subject_category": "Social Sciences"})  # fmt: skip

    with FaultServer(answer_fn=answer) as srv:
        proc = judgekit("audit", "csca.jsonl", "--config", str(REPO / "configs" / "audit.yaml"),
                        "--out", "audit", "--no-cache", "--limit", "1",
                        "--set", "judge.model=hosted_vllm/stub",
                        "--set", f"judge.api_base={srv.base_url}",
                        "--set", "cultural.n_resamples=0", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    run = tmp_path / "audit"
    stored = json.loads((run / "summary.json").read_text("utf-8"))["signature"]["items"][0]
    assert Path(stored["path"]).is_absolute()
    page = tmp_path / "page" / "ana.html"
    proc = judgekit("review", "make", "--task", "csca", str(run), "--rater", "ana", "-o",
                    str(page), cwd=REPO)  # another directory than the run's  # fmt: skip
    assert proc.returncode == 0, proc.stderr  # was: csca.jsonl: no such file
    campaign = json.loads((page.parent / "campaign.json").read_text("utf-8"))
    assert [i["id"] for i in campaign["items"]] == ["csca|q0"]  # the run's 1 item, not all 3


def test_case8_calibrate_judge_on_an_errors_run_points_to_calibrate_errors(tmp_path) -> None:
    run = tmp_path / "errors"
    run.mkdir()
    (run / "segments.jsonl").write_text('{"id": "a", "system": "s", "status": "scored"}\n')
    human = write_long(tmp_path / "h.csv", [("a", "h1", "no-error")])
    proc = judgekit("calibrate", "judge", "--judge", str(run), "--human", str(human))
    assert proc.returncode == 2
    assert "judgekit calibrate errors" in proc.stderr and "Traceback" not in proc.stderr


def test_view_labels_disjoint_everywhere_is_an_error_and_a_partial_overlap_a_warning(
    classify,
) -> None:
    from judgekit.labels.overlap import LabelSetError

    run, tmp = classify
    items = load_labels(run).items
    wrong = write_long(tmp / "wrong.csv", [(i, "h1", "CS") for i in items])
    with pytest.raises(LabelSetError, match="share no label"):
        _against(run, wrong)
    partial = write_long(tmp / "partial.csv", [(i, "h1", "positive") for i in items[:3]]
                         + [(items[3], "h1", "mixed")])  # fmt: skip
    with pytest.warns(JudgekitWarning, match="one side only") as caught:
        got = _against(run, partial)["judges"][0]
    assert "'mixed'" in str(caught[0].message)
    assert got["labels"]["human_only"] == ["mixed"] and got["n_items"] == 4
