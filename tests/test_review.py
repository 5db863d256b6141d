"""`judgekit review` without a browser: campaigns and pages from items files (escaping, blind
pages, gold answers kept out) and the importer's checks (Label Studio's export format:
test_review_label_studio.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from cli_inproc import Ran, run_main
from review_runs import SEGMENTS, jsonl, mqm_page

from judgekit.errors import InputError
from judgekit.metrics.mqm import read_mqm_tsv
from judgekit.review.campaign import read_campaign
from judgekit.review.importer import read_files
from judgekit.review.make import build_campaign, make_page
from judgekit.review.outputs import write_outputs

JUDGED = {"id": "j", "source": "x", "translation": "y", "system": "s3", "doc": "d", "seg_id": "9"}


@pytest.fixture
def mqm_campaign(tmp_path: Path):
    return mqm_page(tmp_path)


def page_json(page: Path) -> dict:
    """The items block of a page, parsed."""
    html = page.read_text(encoding="utf-8")
    return json.loads(html.split('id="judgekit-data">', 1)[1].split("</script>", 1)[0])


def export(made, answers: dict[str, dict], rater: str = "alice") -> dict:
    return {
        "format": "judgekit-review/1", "campaign": made.campaign.id, "task": "mqm",
        "rater": rater, "show_judge": False,
        "items": [{"id": i.id, "hash": i.hash, "answer": answers.get(i.id), "done": i.id in answers,
                   "seconds": 3.5} for i in made.campaign.items],
    }  # fmt: skip


def test_page_escapes_item_text_and_guidelines_and_keeps_gold_out(mqm_campaign) -> None:
    page = mqm_campaign.page.read_text(encoding="utf-8")
    assert [i.id for i in mqm_campaign.campaign.items] == ["a", "b"]  # --items a, gold b added
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<strong>bold</strong>" in page  # markdown rendered, raw HTML shown as text
    data = page.split('id="judgekit-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and "\\u003cv" not in data
    parsed = json.loads(data)
    assert parsed["items"][0]["data"]["translation"] == SEGMENTS[0]["translation"]
    assert "expected" not in data and not any("judge" in i for i in parsed["items"])  # blind
    assert page.count("<script") == 2  # the data block and the classic script, nothing inline
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page)  # no network, no CDN
    stored = read_campaign(mqm_campaign.campaign_file)
    assert stored.gold == {"b": {"no_errors": True}} and stored.raters == ["alice"]


def test_import_writes_the_mqm_tsv_in_code_points_and_the_qc_report(mqm_campaign, tmp_path) -> None:
    a = SEGMENTS[0]["translation"]
    start = a.index("Chongqing")
    answers = {
        "a": {"no_errors": False, "errors": [{"side": "translation", "start": start,
              "end": start + 9, "text": "Chongqing", "type": "NE", "severity": "major"}]},
        "b": {"no_errors": True, "errors": []},
    }  # fmt: skip
    path = tmp_path / "alice.json"
    path.write_text(json.dumps(export(mqm_campaign, answers)), encoding="utf-8")
    campaign = read_campaign(mqm_campaign.campaign_file)
    summary = write_outputs(campaign, read_files([path], campaign), tmp_path / "out")
    rows = read_mqm_tsv(tmp_path / "out" / "human_mqm.tsv")
    assert [(r.target[r.start : r.end] if r.start is not None else None) for r in rows] == [
        "Chongqing",
        None,
    ]
    assert rows[1].severity == "no-error" and rows[1].category == "No-error"
    assert summary["qc"][0]["gold_accuracy"] == 1.0 and summary["qc"][0]["median_seconds"] == 3.5
    labels = pd.read_csv(tmp_path / "out" / "labels.csv")
    assert list(labels["label"]) == ["major", "no-error"]  # the worst severity, as the judge's


ERR = ("items", 0, "answer", "errors", 0)


def _set(path: tuple, **values):
    def change(data: dict) -> None:
        node = data
        for key in path:
            node = node[key]
        node.update(values)

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_set((), campaign="0" * 12), "file of campaign 000000000000"),
        (_set(("items", 0), hash="f" * 16), "item 'a': edited"),
        (_set(("items", 0), id="zz"), "item 'zz' is not in the campaign"),
        (_set(ERR, end=99), "item 'a': /errors/0/end: 99 is greater than the maximum of 38"),
        (_set(ERR, start=9), "/errors/0: offsets [9, 17) mark '😀 opened', not 'opened'"),
        (_set(ERR, type="OMI"), "/errors/0/type: 'OMI' is not one of ['NE',"),
        (_set(ERR[:3], no_errors=True), "/no_errors: False was expected ('no errors' is chosen"),
        (_set(ERR, type=["MIS"]), "item 'a': /errors/0/type: ['MIS'] is not one of"),
        (_set(ERR, type={"id": "MIS"}), "item 'a': /errors/0/type: {'id': 'MIS'} is not one of"),
        (_set((), items={"a": {}}), "'items' must be a list of objects"),
        (_set((), items=["a"]), "'items' must be a list of objects"),
        (_set(("items", 0), done="false"), "item 'a': 'done' must be true or false"),
        (_set((), rater=["alice"]), "no rater name"),
        (_set((), rater="ali\tce\n"), "rater name with a tab or line break"),
        (_set(("items", 0), seconds=float("nan")), "item 'a': 'seconds' must be a finite"),
        (_set(("items", 0), seconds=float("inf")), "item 'a': 'seconds' must be a finite"),
        (_set(("items", 0), seconds=10**400), "item 'a': 'seconds' must be a finite"),
        (_set(("items", 1), seconds=-5), "item 'b': 'seconds' must be a finite number"),
        (lambda data: data["items"].append(dict(data["items"][0])),
         "duplicate rating of item 'a' by rater 'alice'"),
    ],
)  # fmt: skip
def test_import_refuses_bad_files_naming_file_and_item(mqm_campaign, tmp_path, change, message):
    a = SEGMENTS[0]["translation"]
    start = a.index("opened")
    error = {"side": "translation", "start": start, "end": start + 6, "text": "opened",
             "type": "MIS", "severity": "minor"}  # fmt: skip
    data = export(mqm_campaign, {"a": {"no_errors": False, "errors": [error]}})
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_files([path], read_campaign(mqm_campaign.campaign_file))
    assert message in str(err.value) and str(path) in str(err.value)


def test_meanings_from_a_run_of_another_pipeline_is_one_located_error(tmp_path) -> None:
    run = tmp_path / "classify-run"
    run.mkdir()
    record = {"key": "k", "stage": "judge", "role": "judge", "route": "hosted_vllm/m",
              "model": "m", "prompt_id": "classify/default", "prompt_hash": "abc",
              "status": "ok", "parsed": {"label": "positive"}, "meta": {"item": "r1"}}  # fmt: skip
    jsonl(run / "records.jsonl", [record | {"status": "error"}, record])  # the last line wins
    with pytest.raises(InputError, match="not a spilling run") as err:
        build_campaign(run, "meanings")
    assert err.value.path == str(run / "records.jsonl") and err.value.line == 2
    jsonl(run / "records.jsonl", [{k: v for k, v in record.items() if k != "route"}])
    with pytest.raises(InputError, match="not a judgekit record") as err:  # the one reader's
        build_campaign(run, "meanings")
    assert (err.value.line, err.value.field) == (1, "route")


def test_guidelines_or_an_audit_summary_that_cannot_be_read_are_named(tmp_path) -> None:
    items = jsonl(tmp_path / "segments.jsonl", SEGMENTS)
    guide = tmp_path / "guide.md"
    guide.write_bytes(b"# R\xe8gles\n")  # Latin-1
    with pytest.raises(InputError, match="not UTF-8") as err:
        build_campaign(items, "mqm", guidelines=guide)
    assert err.value.path == str(guide)
    audit = tmp_path / "audit"
    audit.mkdir()
    (audit / "summary.json").write_text('{"signature": ', encoding="utf-8")  # cut short
    with pytest.raises(InputError, match="invalid JSON") as err:
        build_campaign(audit, "csca")
    assert err.value.path == str(audit / "summary.json")


def test_a_page_is_never_written_over_a_file_that_is_not_a_page(tmp_path) -> None:
    items = jsonl(tmp_path / "segments.jsonl", SEGMENTS)
    before = items.read_bytes()
    for out in (items, tmp_path / "campaign.json"):
        with pytest.raises(InputError, match="it would be overwritten"):
            make_page(build_campaign(items, "mqm"), "ana", out)
    assert items.read_bytes() == before and not (tmp_path / "campaign.json").exists()
    page = make_page(build_campaign(items, "mqm"), "ana", tmp_path / "ana.html").page
    make_page(build_campaign(items, "mqm"), "ana", page)  # a page made again: fine


def test_import_into_a_run_directory_keeps_the_judges_labels(mqm_campaign, tmp_path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "records.jsonl").write_text("", encoding="utf-8")
    (run / "labels.csv").write_text("item,rater,label\na,judge,error\n", encoding="utf-8")
    path = tmp_path / "alice.json"
    path.write_text(json.dumps(export(mqm_campaign, {})), encoding="utf-8")
    campaign = read_campaign(mqm_campaign.campaign_file)
    with pytest.raises(InputError, match="a run directory"):
        write_outputs(campaign, read_files([path], campaign), run)
    assert (run / "labels.csv").read_text(encoding="utf-8") == "item,rater,label\na,judge,error\n"


def test_postedit_sides_that_are_not_text_are_one_located_error(tmp_path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"id": "p1", "original_source": "a", "original_english": "b", '
                     '"source": "c", "english": NaN}\n', encoding="utf-8")  # fmt: skip
    with pytest.raises(InputError, match="text") as err:
        build_campaign(pairs, "postedit")
    assert (err.value.path, err.value.line, err.value.field) == (str(pairs), 1, "english")


def test_page_data_holds_no_nan_that_json_parse_refuses() -> None:
    from judgekit.review.page import script_json

    assert json.loads(script_json({"x": float("nan"), "y": [float("inf")]})) == {
        "x": None, "y": [None]}  # fmt: skip


@pytest.mark.parametrize(
    "text",
    ['{"format": "judgekit-review-campaign/1"}',
     '{"format": "judgekit-review-campaign/1", "task": "mqm", "items": [1]}',
     '{"format": "judgekit-review-campaign/1", "task": "mqm", "items": [{"id": "a"}]}',
     b'{"format": "judgekit-review-campaign/1", "guidelines": "\xe9"}'],
)  # fmt: skip
def test_a_malformed_campaign_file_is_one_located_error(tmp_path, text) -> None:
    path = tmp_path / "campaign.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError) as err:
        read_campaign(tmp_path)
    assert err.value.path == str(path)


def test_a_page_for_a_rater_name_with_a_line_break_is_refused(tmp_path) -> None:
    items = jsonl(tmp_path / "segments.jsonl", SEGMENTS)
    with pytest.raises(InputError, match="tab or line break"):
        make_page(build_campaign(items, "mqm"), "ana\nbel", tmp_path / "c" / "a.html")


def test_a_rater_file_that_is_not_utf8_is_named(mqm_campaign, tmp_path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(json.dumps(export(mqm_campaign, {}), ensure_ascii=False).encode() + b"\xff")
    with pytest.raises(InputError, match="not UTF-8") as err:
        read_files([path], read_campaign(mqm_campaign.campaign_file))
    assert str(path) in str(err.value)


def test_cli_import_error_is_one_line_exit_2_and_two_files_of_one_rater(mqm_campaign, tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(export(mqm_campaign, {})), encoding="utf-8")
    with pytest.raises(InputError, match="rater 'alice' is also in"):
        read_files([path, path], read_campaign(mqm_campaign.campaign_file))
    other = tmp_path / "other.json"
    other.write_text(json.dumps(export(mqm_campaign, {}) | {"campaign": "abc"}), encoding="utf-8")
    folder = str(mqm_campaign.campaign_file.parent)
    proc = run_main(
        "review", "import", str(other), "--campaign", folder, "--out", str(tmp_path / "o")
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: {other}: field 'campaign': file of campaign abc, not {mqm_campaign.campaign.id}"
    ]


def test_a_second_campaign_in_the_same_folder_is_refused_and_samples_are_seeded(tmp_path) -> None:
    items = jsonl(tmp_path / "segments.jsonl", SEGMENTS + [JUDGED])
    first = build_campaign(items, "mqm", sample=2, seed=1)
    again = build_campaign(items, "mqm", sample=2, seed=1)
    assert [i.id for i in first.items] == [i.id for i in again.items] and len(first.items) == 2
    make_page(first, "alice", tmp_path / "c" / "alice.html")
    make_page(again, "bob", tmp_path / "c" / "bob.html")  # same campaign: a second rater
    assert read_campaign(tmp_path / "c").raters == ["alice", "bob"]
    other = build_campaign(items, "mqm", items=["j"])
    with pytest.raises(InputError, match="holds campaign"):
        make_page(other, "carol", tmp_path / "c" / "carol.html")
    with pytest.raises(InputError, match="no item 'nope'"):
        build_campaign(items, "mqm", items=["nope"])


def test_show_judge_puts_the_judges_answers_in_the_page_and_the_export_says_so(tmp_path):
    rows = [{"id": "w|de|Kopf|s0", "lang": "de", "word": "head", "translation": "Kopf",
             "valid": [True, False, True, True, True],
             "meanings": [{"meaning": f"m{i}", "examples": []} for i in range(5)]}]  # fmt: skip
    source = jsonl(tmp_path / "m.jsonl", rows)
    blind = make_page(build_campaign(source, "meanings"), "a", tmp_path / "c" / "a.html")
    shown = make_page(build_campaign(source, "meanings"), "b", tmp_path / "c" / "b.html",
                      show_judge=True)  # fmt: skip
    data = {"a": page_json(blind.page), "b": page_json(shown.page)}
    assert "judge" not in data["a"]["items"][0] and data["a"]["show_judge"] is False
    assert data["b"]["items"][0]["judge"] == {"valid": [True, False, True, True, True]}
    assert data["b"]["show_judge"] is True and blind.campaign.id == shown.campaign.id


def test_cli_make_takes_items_from_a_file_and_refuses_sample_with_items(tmp_path) -> None:
    items = jsonl(tmp_path / "segments.jsonl", SEGMENTS)
    ids = tmp_path / "ids.txt"
    ids.write_text("c\na\n", encoding="utf-8")

    def make(*args: str) -> Ran:
        return run_main("review", "make", str(items), "--task", "mqm", "--rater", "r",
                        "-o", str(tmp_path / "c" / "r.html"), *args)  # fmt: skip

    done = make("--items", f"@{ids}")
    assert done.returncode == 0 and "mqm, 2 items, 0 gold, blind" in done.stdout
    assert [i.id for i in read_campaign(tmp_path / "c").items] == ["c", "a"]
    bad = make("--items", "a", "--sample", "1")
    assert bad.returncode == 2 and "give --sample or --items, not both" in bad.stderr
    postedit = tmp_path / "p.html"
    page = make_page(build_campaign(_pairs(tmp_path), "postedit"), "r", postedit)
    html = page.page.read_text(encoding="utf-8")
    assert "Copyright (c) 2009-2015, Kevin Decker" in html and "diffWordsWithSpace" in html


def test_an_item_list_file_is_one_id_a_line_with_or_without_a_bom(tmp_path) -> None:
    rows = [dict(SEGMENTS[0], id="q1,2"), dict(SEGMENTS[1], id="b")]  # an id with a comma
    items = jsonl(tmp_path / "segments.jsonl", rows)
    ids = tmp_path / "ids.txt"
    ids.write_bytes("\ufeffq1,2\r\n\r\nb\r\n".encode())  # as Windows Notepad saves it
    done = run_main("review", "make", str(items), "--task", "mqm", "--rater", "r",
                    "-o", str(tmp_path / "c" / "r.html"), "--items", f"@{ids}")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [i.id for i in read_campaign(tmp_path / "c").items] == ["q1,2", "b"]


def _pairs(tmp_path: Path) -> Path:
    from review_runs import PAIRS

    rows = [{"id": p["id"], "original_source": p["source"], "original_english": p["english"],
             "source": p["localised"][0], "english": p["localised"][1]} for p in PAIRS]  # fmt: skip
    return jsonl(tmp_path / "pairs.jsonl", rows)


def test_postedit_files_of_raters_whose_names_differ_only_in_non_latin_letters_both_stay(
    tmp_path,
) -> None:
    made = make_page(build_campaign(_pairs(tmp_path), "postedit"), "李", tmp_path / "c" / "a.html")
    campaign = read_campaign(made.campaign_file)
    paths = []
    for n, rater in enumerate(["李", "王", "a b", "a-b"]):
        items = [{"id": i.id, "hash": i.hash, "done": True, "seconds": 1.0,
                  "answer": {"source": f"{rater} {i.data['llm']['source']}",
                             "english": i.data["llm"]["english"], "confirmed": True}}
                 for i in campaign.items]  # fmt: skip
        data = {"format": "judgekit-review/1", "campaign": campaign.id, "task": "postedit",
                "rater": rater, "show_judge": False, "items": items}  # fmt: skip
        paths.append(tmp_path / f"r{n}.json")
        paths[-1].write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    write_outputs(campaign, read_files(paths, campaign), tmp_path / "out")
    folders = sorted((tmp_path / "out" / "postedit").iterdir())
    assert len(folders) == 4  # one folder per rater: none written over another's
    edited = {(f / "source.edited.txt").read_text(encoding="utf-8").split()[0] for f in folders}
    assert edited == {"李", "王", "a", "a-b"}
