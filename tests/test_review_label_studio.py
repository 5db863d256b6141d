"""`judgekit review` and Label Studio: its documented JSON export read back with UTF-16 offsets
converted to code points, a malformed export one error naming file and task, and the tasks of
each labelling task read back into the label table."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from review_runs import SEGMENTS, XSS, jsonl, mqm_page

from judgekit.errors import InputError
from judgekit.metrics.mqm import read_mqm_tsv
from judgekit.review.campaign import read_campaign
from judgekit.review.importer import read_files
from judgekit.review.labelstudio import export_labelstudio
from judgekit.review.make import build_campaign, make_page
from judgekit.review.outputs import write_outputs


@pytest.fixture
def mqm_campaign(tmp_path):
    return mqm_page(tmp_path)


def test_label_studio_export_round_trips_its_documented_json_with_utf16_offsets(tmp_path):
    items = jsonl(tmp_path / "segments.jsonl", SEGMENTS)
    made = make_page(build_campaign(items, "mqm"), "x", tmp_path / "c" / "x.html")
    tasks_path, config = export_labelstudio(made.campaign, tmp_path / "ls")
    tasks = json.loads(tasks_path.read_text(encoding="utf-8"))
    xml = config.read_text(encoding="utf-8")
    assert '<Labels name="errors_translation" toName="translation">' in xml
    assert '<Label value="OMI/minor"/>' in xml and tasks[2]["data"]["translation"].endswith(XSS)
    # Label Studio's JSON export: offsets in UTF-16 units (the emoji counts 2)
    b = SEGMENTS[1]["translation"]
    u16 = len(b[: b.index("दुनिया")].encode("utf-16-le")) // 2
    exported = [
        {**tasks[0], "id": 1, "annotations": [{"completed_by": 7, "was_cancelled": False,
         "lead_time": 4.0, "result": [{"from_name": "no_errors", "to_name": "translation",
         "type": "choices", "value": {"choices": ["no errors"]}}]}]},
        {**tasks[1], "id": 2, "annotations": [{"completed_by": {"id": 7, "email": "ann@x.org"},
         "lead_time": 9.5, "result": [{"from_name": "errors_translation", "to_name":
         "translation", "type": "labels", "value": {"start": u16, "end": u16 + 6,
         "text": "दुनिया", "labels": ["MIS/minor"]}}]}]},
    ]  # fmt: skip
    path = tmp_path / "ls-export.json"
    path.write_text(json.dumps(exported, ensure_ascii=False), encoding="utf-8")
    campaign = read_campaign(made.campaign_file)
    files = read_files([path], campaign)
    assert sorted(f.rater for f in files) == ["ann@x.org", "labelstudio-7"]
    write_outputs(campaign, files, tmp_path / "out")
    rows = read_mqm_tsv(tmp_path / "out" / "human_mqm.tsv")
    spans = {r.rater: (r.start, r.end) for r in rows}
    assert spans["ann@x.org"] == (b.index("दुनिया"), b.index("दुनिया") + 6) != (u16, u16 + 6)
    assert spans["labelstudio-7"] == (None, None)


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        (["x"], "task 1: 'annotations' must be a list of objects"),
        ({"completed_by": 1}, "task 1: 'annotations' must be a list of objects"),
        ([{"completed_by": 1, "result": ["x"]}], "task 1: an annotation's 'result' must be"),
        ([{"completed_by": 1, "result": [{"from_name": "errors_translation", "value": [1]}]}],
         "task 1: an annotation's 'result' must be"),
        ([{"completed_by": 1, "result": [{"from_name": "errors_translation", "value": {
            "start": 0, "end": 2, "text": "x", "labels": ["NE"]}}]}],
         "item 'a': span label 'NE' is not TYPE/severity"),
    ],
)  # fmt: skip
def test_a_malformed_label_studio_export_is_one_error_naming_file_and_task(
    mqm_campaign, tmp_path, annotations, message
) -> None:
    item = mqm_campaign.campaign.items[0]
    data = {"judgekit_id": item.id, "judgekit_hash": item.hash,
            "judgekit_campaign": mqm_campaign.campaign.id}  # fmt: skip
    path = tmp_path / "ls.json"
    path.write_text(json.dumps([{"data": data, "annotations": annotations}]), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_files([path], read_campaign(mqm_campaign.campaign_file))
    assert message in str(err.value) and str(path) in str(err.value)


def _choice(name: str, value: str) -> dict:
    return {"from_name": name, "to_name": "x", "type": "choices", "value": {"choices": [value]}}


def test_label_studio_tasks_of_the_labelling_tasks_read_back_into_the_label_table(tmp_path):
    from review_runs import CSCA_ITEMS, PAIRS

    meanings = [{"id": "w|de|Kopf|s0", "lang": "de", "word": "head", "translation": "Kopf",
                 "entry": "Kopf\n1. head", "valid": [True, False, True, True, True],
                 "meanings": [{"meaning": f"m{i} 😀", "examples": ["a", "b", "c"]}
                              for i in range(5)]}]  # fmt: skip
    pairs = [{"id": p["id"], "original_source": p["source"], "original_english": p["english"],
              "source": p["localised"][0], "english": p["localised"][1]}
             for p in PAIRS]  # fmt: skip
    answers = {
        "meanings": [_choice(f"valid{i}", v) for i, v in
                     enumerate(["valid", "invalid", "invalid", "valid", "valid"])],
        "csca": [_choice("required_knowledge", "regional"), _choice("time_sensitive", "no"),
                 _choice("cs_label", "CS"), _choice("subject_category", "Humanities")],
        "postedit": [{"from_name": s, "to_name": f"llm_{s}", "type": "textarea",
                      "value": {"text": [t]}} for s, t in (("source", PAIRS[0]["source"]),
                                                            ("english", PAIRS[0]["english"]))],
    }  # fmt: skip
    expected = {
        "meanings": [("w|de|Kopf|s0|m1", "false"), ("w|de|Kopf|s0|m2", "false")],
        "csca": [("csca|q1", "CS"), ("csca|q2", "CS"), ("csca|q3", "CS")],
        "postedit": [("1", "reverted"), ("2", "edited")],  # both answered with pair 1's original
    }
    files = {"meanings": jsonl(tmp_path / "m.jsonl", meanings),
             "csca": jsonl(tmp_path / "csca.jsonl", CSCA_ITEMS),
             "postedit": jsonl(tmp_path / "p.jsonl", pairs)}  # fmt: skip
    for task, source in files.items():
        made = make_page(build_campaign(source, task), "x", tmp_path / task / "x.html")
        tasks_path, config = export_labelstudio(made.campaign, tmp_path / task / "ls")
        assert config.read_text(encoding="utf-8").startswith("<View>")
        tasks = json.loads(tasks_path.read_text(encoding="utf-8"))
        exported = [{**t, "annotations": [{"completed_by": 3, "result": answers[task]}]}
                    for t in tasks]  # fmt: skip
        path = tmp_path / task / "export.json"
        path.write_text(json.dumps(exported, ensure_ascii=False), encoding="utf-8")
        campaign = read_campaign(made.campaign_file)
        write_outputs(campaign, read_files([path], campaign), tmp_path / task / "out")
        labels = pd.read_csv(tmp_path / task / "out" / "labels.csv", dtype=str)
        rows = list(zip(labels["item"], labels["label"], strict=True))
        assert [r for r in rows if r in expected[task]] == expected[task], task
        assert set(labels["rater"]) == {"labelstudio-3"}
