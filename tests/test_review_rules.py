"""The review pages' rater rules in headless Chromium (Debian's, via tests/browser.py): nothing a
rater did is dropped without a word (docs/review.md, "What the page never drops").

1. a pending MQM span (no severity yet, or complete but not added) blocks j, next and the
   progress strip with a prompt: add it, discard it, or stay;
2. Load JSON checks every row as `review import` does (the same JSON Schema, one definition:
   judgekit/review/schema.py) and lists each row it skipped with the reason;
3. the page's verdict on an answer equals the importer's, answer by answer;
4. a failed autosave keeps warning until a save works, and the page asks before unload while
   work is unsaved (a failed save, a pending span);
5. MQM spans are marked and edited by keyboard alone;
6. hostile item text stays text in the prompt and the skipped-rows list.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from browser import chrome, not_blank
from review_runs import SEGMENTS, XSS, jsonl
from selenium.webdriver.common.action_chains import ActionChains
from test_review_browser import drag_select, open_page, press, text, wait

from judgekit.errors import InputError
from judgekit.review.campaign import read_campaign
from judgekit.review.importer import read_files
from judgekit.review.make import build_campaign, make_page

ENTER, SHIFT, RIGHT, SPACE, ESC, TAB = "\ue007", "\ue008", "\ue014", " ", "\ue00c", "\ue004"


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory):
    with chrome(tmp_path_factory.mktemp("downloads")) as drv:
        yield drv


@pytest.fixture(scope="module")
def mqm(tmp_path_factory: pytest.TempPathFactory):
    """An MQM campaign of the three review segments (one with an XSS payload), its folder."""
    base = tmp_path_factory.mktemp("mqm")
    items = jsonl(base / "segments.jsonl", SEGMENTS)
    campaign = build_campaign(items, "mqm")
    for rater in ("ann", "ben", "cat", "dan", "eve"):
        made = make_page(campaign, rater, base / "c" / f"{rater}.html")
    return made.page.parent


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: $JUDGEKIT_SHOTS (docs/review.md's come from here) or a temp dir."""
    folder = Path(os.environ.get("JUDGEKIT_SHOTS") or tmp_path_factory.mktemp("shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def snap(driver, shots: Path, name: str) -> None:
    """The page as the rater sees it now (toolbar, prompts and the item), as review-NAME.png."""
    driver.execute_script(
        "document.querySelector('details.guidelines').open = false; window.scrollTo(0, 0)"
    )
    path = shots / f"review-{name}.png"
    driver.save_screenshot(str(path))
    assert not_blank(path)


def fresh(driver, page: Path) -> None:
    open_page(driver, page)
    driver.execute_script("localStorage.clear()")
    driver.refresh()
    wait(lambda: driver.find_element("id", "card").text)


def errors(driver) -> list[dict]:
    return driver.execute_script("return JK.exportObject().items[0].answer.errors")


def test_pending_span_blocks_every_way_out_with_add_or_discard(driver, mqm: Path, shots) -> None:
    fresh(driver, mqm / "ann.html")
    drag_select(driver, "translation", "Chongqing")  # a span, no type, no severity
    press(driver, "j")
    prompt = text(driver, "pending-prompt")
    assert "Chongqing" in prompt and "needs a type" in prompt
    assert text(driver, "card").startswith("item 1 of 3")  # held
    press(driver, "a")  # add: it lacks a type and a severity, so it stays and asks
    assert "needs a type" in text(driver, "status") and text(driver, "card").startswith("item 1")
    driver.find_element("id", "next").click()  # the button: the same prompt
    press(driver, ESC)  # stay
    assert not driver.find_elements("id", "pending-prompt")
    assert "Chongqing" in text(driver, "pending")
    press(driver, "1", "M")  # complete now, not added
    driver.find_elements("css selector", "#strip .dot")[2].click()  # the strip: asks again
    assert "add it and go on" in text(driver, "prompt-add")
    snap(driver, shots, "pending-prompt")
    driver.find_element("id", "prompt-add").click()  # added, then on to item 3
    assert text(driver, "card").startswith("item 3 of 3")
    assert [(e["text"], e["type"], e["severity"]) for e in errors(driver)] == [
        ("Chongqing", "NE", "major")
    ]
    press(driver, "w")  # item 3: a keyboard span over the hostile text, then k
    ActionChains(driver).key_down(SHIFT).send_keys(*[RIGHT] * 4).key_up(SHIFT).perform()
    press(driver, SPACE, "k")
    prompt = text(driver, "pending-prompt")
    assert "is not added yet" in prompt and "\u201cHe came. <img\u201d" in prompt
    assert not driver.find_elements("css selector", "#pending-prompt img, #card img")
    press(driver, "d")  # discard it and go on
    assert text(driver, "card").startswith("item 2 of 3")
    third = driver.execute_script("return JK.exportObject().items[2].answer.errors")
    assert third == [] and driver.execute_script("return window.__xss === undefined")


def test_load_json_skips_and_lists_what_review_import_refuses(
    driver, mqm: Path, tmp_path: Path, shots
) -> None:
    fresh(driver, mqm / "ben.html")
    exported = driver.execute_script("return JK.exportObject()")
    rows = exported["items"]
    a_text = SEGMENTS[0]["translation"]
    start = len(a_text[: a_text.index("Chongqing")])
    good = {"side": "translation", "start": start, "end": start + 9, "text": "Chongqing",
            "type": "NE", "severity": "major"}  # fmt: skip
    rows[0].update(done=True, answer={"no_errors": False, "errors": [good]})
    rows[1].update(done=True, answer={"no_errors": "yes", "errors": []}, hash="f" * 16)
    rows[2].update(done=True, answer={"no_errors": False, "errors": []})
    rows.append({"id": XSS, "hash": "0" * 16, "done": True, "answer": {}})
    path = tmp_path / "ben.json"
    path.write_text(json.dumps(exported), encoding="utf-8")
    driver.find_element("id", "load").send_keys(str(path))
    wait(lambda: "loaded 1 items" in text(driver, "status"))
    assert "skipped 3" in text(driver, "status")
    report = driver.find_element("id", "load-report")
    lines = [li.text for li in report.find_elements("css selector", "li")]
    assert lines[0].startswith("b: changed item (hash ffffffffffffffff")
    assert lines[1].startswith("c: /no_errors: ") and "'no errors' is chosen exactly" in lines[1]
    assert lines[2] == f"{XSS}: not in this campaign"  # hostile id shown as text
    assert not report.find_elements("css selector", "img")
    snap(driver, shots, "load-report")
    assert text(driver, "progress").startswith("1 / 3 done")
    with pytest.raises(InputError, match="item 'b': edited"):  # the importer refuses the file
        read_files([path], read_campaign(mqm / "campaign.json"))


def err(side: str, start: int, end: int, quote: str, kind: str, severity: str, **extra) -> dict:
    """An answer with one MQM error."""
    one = {"side": side, "start": start, "end": end, "text": quote, "type": kind,
           "severity": severity, **extra}  # fmt: skip
    return {"no_errors": False, "errors": [one]}


ANSWERS = [  # (item, answer, valid): the page and `review import` must agree on each
    (0, {"no_errors": True, "errors": []}, True),
    (0, {"no_errors": "yes", "errors": []}, False),
    (0, {"no_errors": False, "errors": []}, False),
    (0, err("translation", 28, 37, "Chongqing", "NE", "major"), True),
    (0, err("translation", 29, 37, "Chongqing", "NE", "major"), False),  # quote elsewhere
    (0, err("translation", 28, 99, "Chongqing", "NE", "major"), False),  # past the end
    (0, err("translation", 5, 5, "", "NE", "major"), False),  # empty span
    (0, err("translation", 28, 37, "Chongqing", "OMI", "minor"), False),  # omission: source
    (0, err("source", 0, 2, "王伟", "OMI", "fatal"), False),  # no such severity
    (0, err("source", 0, 2, "王伟", "OMI", "minor"), True),
    (1, err("source", 6, 7, "😀", "OMI", "minor"), True),  # code points, not UTF-16
    (1, err("source", 6, 7, "😀", "OMI", "minor", extra=1), True),
    (1, err("source", 6, 7.5, "😀", "OMI", "minor"), False),
    (0, {"errors": []}, False),
    (0, None, False),
    (0, [1, 2], False),
]


def test_page_and_import_agree_on_every_answer(driver, mqm: Path) -> None:
    fresh(driver, mqm / "cat.html")
    campaign = read_campaign(mqm / "campaign.json")
    from judgekit.review.schema import answer_problem

    page = driver.execute_script(
        "return arguments[0].map(function (p) {"
        " return JKCheck.problem(JK.DATA, JK.DATA.items[p[0]], p[1]); })",
        [[i, a] for i, a, _ in ANSWERS],
    )
    python = [answer_problem(campaign, campaign.items[i], a) for i, a, _ in ANSWERS]
    assert [p is None for p in page] == [p is None for p in python]
    assert [p is None for p in page] == [valid for _, _, valid in ANSWERS]
    drafts = [({"no_errors": False, "errors": []}, True), ({"errors": []}, False),
              ({"no_errors": False, "errors": [{"side": "x"}]}, False)]  # fmt: skip
    page = driver.execute_script(
        "return arguments[0].map(a => JKCheck.problem(JK.DATA, JK.DATA.items[0], a, true))",
        [a for a, _ in drafts],
    )
    python = [answer_problem(campaign, campaign.items[0], a, "draft") for a, _ in drafts]
    assert [p is None for p in page] == [p is None for p in python] == [v for _, v in drafts]
    for got, want in zip(page, python, strict=True):  # the same place in the answer
        assert (got or "").split(":", 1)[0] == (want or "").split(":", 1)[0]


def test_failed_autosave_keeps_warning_and_unload_asks(driver, mqm: Path, shots) -> None:
    fresh(driver, mqm / "dan.html")
    unload = (
        "var e = new Event('beforeunload', {cancelable: true});"
        "dispatchEvent(e); return e.defaultPrevented"
    )
    assert driver.execute_script(unload) is False  # nothing at risk: leaves freely
    driver.execute_script(
        "window.__setItem = Storage.prototype.setItem;"
        "Storage.prototype.setItem = function () {"
        " throw new DOMException('full', 'QuotaExceededError'); }"
    )
    press(driver, "0")  # no errors: the save fails
    banner = driver.find_element("id", "save-failed")
    assert "Autosave failed (QuotaExceededError" in banner.text and banner.is_displayed()
    press(driver, ENTER)  # confirmed: still failing, still warned (not a one-off status)
    assert driver.find_element("id", "save-failed").is_displayed()
    snap(driver, shots, "save-failed")
    press(driver, "j")
    assert "Autosave failed" in text(driver, "save-failed")
    assert driver.execute_script(unload) is True  # the browser asks before unload
    driver.execute_script("Storage.prototype.setItem = window.__setItem")
    press(driver, "j")  # the next save works: the warning goes, unload is free again
    assert not driver.find_elements("id", "save-failed")
    assert driver.execute_script(unload) is False
    drag_select(driver, "translation", "came")  # a pending span is unsaved work too
    assert driver.execute_script(unload) is True
    assert "came" in driver.execute_script("return JK.atRisk()")


def test_mqm_spans_marked_and_edited_by_keyboard(driver, mqm: Path, shots) -> None:
    fresh(driver, mqm / "eve.html")
    # "Wang Wei 😀 opened a shop in Chongqing.": w puts the cursor on "Wang"; 3 words right
    # is "opened"; Shift+Right twice extends to "a shop"
    press(driver, "w")
    cursor = driver.find_element("css selector", ".segment.translation mark.sev-cursor")
    assert cursor.text == "Wang"
    press(driver, RIGHT, RIGHT, RIGHT)
    ActionChains(driver).key_down(SHIFT).send_keys(RIGHT, RIGHT).key_up(SHIFT).perform()
    assert driver.find_element("css selector", "mark.sev-cursor").text == "opened a shop"
    snap(driver, shots, "keyboard-span")
    press(driver, SPACE, "5", "m", ENTER)  # mark it, type 5 of the translation's, minor, add
    (err,) = errors(driver)
    assert (err["text"], err["severity"], err["start"], err["end"]) == (
        "opened a shop",
        "minor",
        11,
        24,
    )
    assert err["type"] == driver.execute_script(
        "return JK.DATA.options.types.filter(t => t.quote_from !== 'source')[4].id"
    )
    press(driver, "w", TAB)  # the source side (omissions): cursor on its first word
    assert driver.find_element("css selector", ".segment.source mark.sev-cursor").text
    press(driver, ESC, "e")  # leave the cursor; focus the marked error
    assert "opened a shop" in driver.find_element("css selector", "ol.errors li.focus").text
    press(driver, SPACE)  # edit it: back to pending, type and severity kept
    ActionChains(driver).key_down(SHIFT).send_keys("\ue012").key_up(SHIFT).perform()  # end -1
    press(driver, "M", ENTER)
    (err,) = errors(driver)
    assert (err["text"], err["severity"], err["end"]) == ("opened a", "major", 19)
    press(driver, "e", SPACE, ESC)  # edit, then Escape: put back unchanged
    assert [e["text"] for e in errors(driver)] == ["opened a"]
    press(driver, "e", "x")  # remove it
    assert errors(driver) == []


def test_load_json_refuses_the_malformed_meanings_answer_the_import_refuses(
    driver, tmp_path: Path
) -> None:
    meanings = [{"meaning": m, "examples": [f"{m} {XSS}"]} for m in ("head", "chief")]
    rows = [{"id": f"w{k}", "lang": "de", "word": "head", "translation": "Kopf",
             "meanings": meanings} for k in range(4)]  # fmt: skip
    made = make_page(build_campaign(jsonl(tmp_path / "m.jsonl", rows), "meanings"), "fay",
                     tmp_path / "c" / "fay.html")  # fmt: skip
    fresh(driver, made.page)
    exported = driver.execute_script("return JK.exportObject()")
    exported["items"][0].update(done=True, answer={"valid": "yes"})  # the example
    exported["items"][1].update(done=True, answer={"valid": [True, False]})
    exported["items"][2].update(done=False, answer={"valid": [True, "x"]})  # unfinished, bad
    exported["items"][3].update(done=False, answer={"valid": [None, False]})  # unfinished, fine
    path = tmp_path / "fay.json"
    path.write_text(json.dumps(exported), encoding="utf-8")
    driver.find_element("id", "load").send_keys(str(path))
    wait(lambda: "loaded 2 items" in text(driver, "status"))
    lines = [li.text for li in driver.find_elements("css selector", "#load-report li")]
    assert lines[0].startswith("w0: /valid: ") and "array" in lines[0]
    assert lines[1].startswith("w2: unfinished answer, /valid/1: ")
    assert text(driver, "progress").startswith("1 / 4 done")  # w0 is not taken as done
    dots = driver.execute_script(
        "return Array.from(document.querySelectorAll('#strip .dot')).map(d => d.className)"
    )
    assert [d.replace(" here", "") for d in dots] == ["dot", "dot done", "dot", "dot started"]
    with pytest.raises(InputError, match=r"item 'w0': /valid: 'yes' is not of type 'array'"):
        read_files([path], read_campaign(made.page.parent / "campaign.json"))
