"""`judgekit review` pages in a real headless Chromium (Debian's, via tests/browser.py), opened
from file://: each task labelled or edited with the keyboard and the mouse, the autosave found
again after a reload, Download JSON imported, and the imported labels run through the commands
that read them (`calibrate judge`, `calibrate agreement`, the errors calibration, `contrast
postedit`) against the run that made the campaign.

Screenshots go to $JUDGEKIT_SHOTS when set (else the test's temporary folder).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest
from browser import chrome, not_blank
from review_runs import (
    CSCA_JUDGE,
    SEGMENTS,
    XSS,
    csca_run,
    errors_run,
    jsonl,
    localise_run,
    spilling_run,
)
from review_runs import judgekit as run_judgekit
from sklearn.metrics import cohen_kappa_score

from judgekit.metrics.mqm import read_mqm_tsv


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    downloads = tmp_path_factory.mktemp("downloads")
    with chrome(downloads) as driver:
        driver.execute_cdp_cmd(
            "Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
        yield driver, downloads


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("JUDGEKIT_SHOTS") or tmp_path_factory.mktemp("shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_page(driver, path: Path) -> None:
    driver.get(path.as_uri())
    wait(lambda: driver.find_element("id", "card").text)


def wait(check, timeout: float = 10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting for the page")


def press(driver, *keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    for key in keys:
        ActionChains(driver).send_keys(key).perform()


def text(driver, element_id: str) -> str:
    return driver.find_element("id", element_id).text


def download(driver, folder: Path) -> Path:
    before = set(folder.glob("*.json"))
    driver.find_element("id", "download").click()
    new = wait(lambda: [p for p in set(folder.glob("*.json")) - before if p.stat().st_size])
    time.sleep(0.2)
    return new[0]


def shot(driver, shots: Path, name: str) -> Path:
    path = shots / f"review-{name}.png"
    driver.execute_script("document.getElementById('card').scrollIntoView()")
    driver.save_screenshot(str(path))
    assert not_blank(path)
    return path


def test_meanings_two_raters_into_calibrate_judge_and_agreement(browser, shots, tmp_path) -> None:
    driver, downloads = browser
    run = spilling_run(tmp_path / "spilling")
    judge = pd.read_csv(run / "labels.csv")
    truth = {
        i: v == "true"
        for i, v in zip(judge["item"], judge["label"].astype(str).str.lower(), strict=True)
    }
    items = sorted({i.rsplit("|", 1)[0] for i in truth})
    assert len(items) == 4 and len(truth) == 20
    expected = {"valid": [truth[f"{items[0]}|m{k}"] for k in range(5)]}
    gold = jsonl(tmp_path / "gold.jsonl", [{"item": items[0], "expected": expected}])
    campaign = tmp_path / "campaign"
    flips = {"alice": {(0, 0), (1, 2)}, "bob": {(3, 0), (3, 1), (1, 2)}}  # both flip item 1 m2
    files = []
    for rater, flipped in flips.items():
        run_judgekit("review", "make", str(run), "--task", "meanings", "--rater", rater,
                     "--gold", str(gold), "-o", str(campaign / f"{rater}.html"))  # fmt: skip
        open_page(driver, campaign / f"{rater}.html")
        assert text(driver, "progress").startswith("0 / 4 done")
        for n, item in enumerate(items):
            for k in range(5):
                valid = truth[f"{item}|m{k}"] != ((n, k) in flipped)
                if (n, k) == (2, 3):  # one answer with the mouse
                    q = driver.find_element("css selector", '[data-question="m3"]')
                    q.find_element("css selector", f'[data-value="{str(valid).lower()}"]').click()
                else:
                    press(driver, "1" if valid else "2")
            if n == 0 and rater == "alice":
                shot(driver, shots, "meanings")
            press(driver, "\ue007")  # Enter: next item
        assert text(driver, "progress").startswith("4 / 4 done")
        driver.refresh()
        wait(lambda: "Loaded saved draft" in text(driver, "status"))
        assert text(driver, "progress").startswith("4 / 4 done")
        files.append(download(driver, downloads))
    out = tmp_path / "imported"
    printed = run_judgekit(
        "review", "import", *map(str, files), "--campaign", str(campaign), "--out", str(out)
    )
    assert "40 label rows" in printed
    labels = pd.read_csv(out / "labels.csv")
    assert len(labels) == 40 and set(labels["rater"]) == {"alice", "bob"}
    qc = pd.read_csv(out / "qc.csv").set_index("rater")
    assert qc.loc["alice", "done"] == 4 and qc.loc["alice", "gold_accuracy"] == pytest.approx(0.8)
    assert qc.loc["bob", "gold_accuracy"] == 1.0 and qc.loc["bob", "median_seconds"] > 0
    run_judgekit("calibrate", "judge", "--judge", str(run), "--human", str(out / "labels.csv"),
                 "--n-resamples", "0", "--out", str(tmp_path / "cal"))  # fmt: skip
    cal = json.loads((tmp_path / "cal" / "judge_calibration.json").read_text())["judge_vs_humans"]
    # 20 meanings; alice and bob disagree on 3 (ties, excluded); of the 17 left, both flipped
    # item 1 m2 against the judge: accuracy 16 / 17
    assert cal["n_items"] == 17 and cal["n_ties"] == 3
    assert cal["accuracy"]["value"] == pytest.approx(16 / 17)
    run_judgekit("calibrate", "agreement", str(out / "labels.csv"), "--n-resamples", "0",
                 "--out", str(tmp_path / "agree"))  # fmt: skip
    agreement = json.loads((tmp_path / "agree" / "agreement.json").read_text())
    stats = {s["statistic"]: s["value"] for s in agreement["statistics"]}
    wide = labels.pivot(index="item", columns="rater", values="label")
    assert stats["percent agreement"] == pytest.approx(17 / 20)
    assert stats["Cohen's kappa"] == pytest.approx(cohen_kappa_score(wide["alice"], wide["bob"]))


def test_csca_labels_flow_into_calibrate_judge_and_xss_renders_as_text(
    browser, shots, tmp_path
) -> None:
    driver, downloads = browser
    run, _ = csca_run(tmp_path)
    page = tmp_path / "campaign" / "carol.html"
    run_judgekit("review", "make", str(run), "--task", "csca", "--rater", "carol", "-o", str(page))
    open_page(driver, page)
    # q1: regional, no, CS, Humanities; q2 (XSS): none, no, CS (against the judge), STEM;
    # q3 (Arabic): regional, no, CS, Social Sciences. Keys follow the rubric's order.
    answers = [("3", "2", "1", "2"), ("1", "2", "1", "1"), ("3", "2", "1", "3")]
    for n, keys in enumerate(answers):
        if n == 1:
            card = driver.find_element("id", "card")
            assert XSS in card.text and not card.find_elements("css selector", "img")
            assert driver.execute_script("return window.__xss === undefined")
        if n == 2:
            rtl = driver.find_element("css selector", ".question-text")
            assert driver.execute_script("return arguments[0].matches(':dir(rtl)')", rtl)
            shot(driver, shots, "csca")
        press(driver, *keys, "\ue007")
        if n == 1:  # none + CS contradicts the rule: flagged, held once, kept on a second Enter
            assert "Contradicts the rule" in text(driver, "rule-flag")
            assert text(driver, "card").startswith("item 2 of 3")
            press(driver, "\ue007")
    assert text(driver, "progress").startswith("3 / 3 done")
    exported = download(driver, downloads)
    driver.find_element("id", "reset").click()  # discard the draft, then Load JSON brings it back
    driver.switch_to.alert.accept()
    assert text(driver, "progress").startswith("0 / 3 done")
    driver.find_element("id", "load").send_keys(str(exported))
    wait(lambda: "loaded 3 items" in text(driver, "status"))
    assert text(driver, "progress").startswith("3 / 3 done")
    out = tmp_path / "imported"
    run_judgekit(
        "review", "import", str(exported), "--campaign", str(page.parent), "--out", str(out)
    )
    labels = pd.read_csv(out / "labels.csv").set_index("item")
    assert (
        labels.loc["csca|q2", "label"] == "CS"
        and labels.loc["csca|q3", "subject_category"] == "Social Sciences"
    )
    assert set(pd.read_csv(out / "labels.required_knowledge.csv")["label"]) == {"regional", "none"}
    qc = pd.read_csv(out / "qc.csv").iloc[0]
    assert qc["done"] == 3 and qc["median_seconds"] > 0 and not qc["show_judge"]
    assert qc["rule_contradictions"] == 1  # q2: required knowledge none, yet CS
    run_judgekit("calibrate", "judge", "--judge", str(run), "--human", str(out / "labels.csv"),
                 "--n-resamples", "0", "--out", str(tmp_path / "cal"))  # fmt: skip
    cal = json.loads((tmp_path / "cal" / "judge_calibration.json").read_text())["judge_vs_humans"]
    assert CSCA_JUDGE["q2"] == "CA"  # the judge said CA where carol said CS
    assert cal["n_items"] == 3 and cal["accuracy"]["value"] == pytest.approx(2 / 3)
    assert cal["errors"] == [{"human": "CS", "judge": "CA", "count": 1}]


RECT = """
const [side, needle] = arguments;
const box = document.querySelector('.segment.' + side);
const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
let node, seen = 0, range = document.createRange(), start = box.textContent.indexOf(needle);
while ((node = walker.nextNode())) {
  const n = node.textContent.length;
  if (start >= seen && start <= seen + n) range.setStart(node, start - seen);
  const end = start + needle.length;
  if (end >= seen && end <= seen + n) { range.setEnd(node, end - seen); break; }
  seen += n;
}
const r = range.getBoundingClientRect(), b = box.getBoundingClientRect();
return [r.left - b.left - b.width / 2, r.right - b.left - b.width / 2,
        r.top + r.height / 2 - b.top - b.height / 2];
"""


def drag_select(driver, side: str, needle: str) -> None:
    """Select ``needle`` in the segment with a real mouse drag across its on-screen box."""
    from selenium.webdriver.common.action_chains import ActionChains

    box = driver.find_element("css selector", f".segment.{side}")
    x0, x1, y = driver.execute_script(RECT, side, needle)
    chain = ActionChains(driver).move_to_element_with_offset(box, round(x0) + 1, round(y))
    chain.click_and_hold().move_to_element_with_offset(box, round(x1) - 1, round(y))
    chain.release().perform()
    assert needle in text(driver, "pending")


def test_mqm_spans_in_code_points_flow_into_the_errors_calibration(
    browser, shots, tmp_path
) -> None:
    driver, downloads = browser
    run = errors_run(tmp_path)
    page = tmp_path / "campaign" / "dana.html"
    run_judgekit("review", "make", str(run), "--task", "mqm", "--rater", "dana", "-o", str(page))
    open_page(driver, page)
    # spans are selected by dragging the mouse; a: NE major on "Chongqing" (after an emoji:
    # UTF-16 and code points differ), type and severity by keyboard
    drag_select(driver, "translation", "Chongqing")
    press(driver, "1", "M", "\ue007", "\ue007")
    # b: MIS minor on Hindi "दुनिया" by mouse clicks, and the omission of "welcome" in the source
    press(driver, "j")
    drag_select(driver, "translation", "दुनिया")
    driver.find_element("css selector", '#pending [data-type="MIS"]').click()
    driver.find_element("css selector", '#pending [data-severity="minor"]').click()
    driver.find_element("id", "add-error").click()
    drag_select(driver, "source", "welcome")
    press(driver, "m", "\ue007")
    shot(driver, shots, "mqm")
    press(driver, "\ue007")
    # c: explicitly no errors; the XSS text shows as text
    press(driver, "j")
    assert XSS in text(driver, "card")
    press(driver, "0", "\ue007")
    assert text(driver, "progress").startswith("3 / 3 done")
    driver.refresh()
    wait(lambda: "Loaded saved draft" in text(driver, "status"))
    assert text(driver, "progress").startswith("3 / 3 done")
    exported = download(driver, downloads)
    answers = {r["id"]: r["answer"] for r in json.loads(exported.read_text())["items"]}
    a, b = SEGMENTS[0]["translation"], SEGMENTS[1]["translation"]
    (err,) = answers["a"]["errors"]
    assert (err["start"], err["end"]) == (a.index("Chongqing"), a.index("Chongqing") + 9)
    assert err["start"] == 28 != len(a[:28].encode("utf-16-le")) // 2  # code points, not UTF-16
    mis = answers["b"]["errors"][0]
    assert b[mis["start"] : mis["end"]] == "दुनिया" == mis["text"]
    out = tmp_path / "imported"
    run_judgekit(
        "review", "import", str(exported), "--campaign", str(page.parent), "--out", str(out)
    )
    rows = read_mqm_tsv(out / "human_mqm.tsv")
    assert [(r.seg_id, r.category, r.severity) for r in rows] == [
        ("1", "Accuracy/Mistranslation", "Major"), ("2", "Accuracy/Mistranslation", "Minor"),
        ("2", "Accuracy/Omission", "Minor"), ("1", "No-error", "no-error"),
    ]  # fmt: skip
    assert rows[2].source_start == SEGMENTS[1]["source"].index("welcome")
    from judgekit.calibration.error_typing import calibrate_errors

    cal = calibrate_errors(run, out / "human_mqm.tsv", n_resamples=0)
    # the human marked the judge's target spans exactly: span P = R = F1 = 1, types agree
    assert cal["coverage"] == {"scored": 3}
    assert cal["headline"]["span_precision"] == 1.0 and cal["headline"]["span_recall"] == 1.0
    assert cal["headline"]["category_agreement"] == 1.0


def test_postedit_live_diff_confirm_and_contrast_postedit(browser, shots, tmp_path) -> None:
    driver, downloads = browser
    run = localise_run(tmp_path)
    page = tmp_path / "campaign" / "erin.html"
    run_judgekit(
        "review", "make", str(run), "--task", "postedit", "--rater", "erin", "-o", str(page)
    )
    open_page(driver, page)
    count = lambda side: driver.find_element("css selector", f'.count[data-side="{side}"]').text  # noqa: E731
    assert count("source") == "source diff: 4"  # Dilokrit Pattavee -> Werner Mölders
    box = driver.find_element("css selector", 'textarea[data-side="english"]')
    box.click()
    box.send_keys("\ue010", " Jr")  # End, then type: highlights and counts follow each key
    assert count("english") == "english diff: 5"
    assert [
        e.text for e in driver.find_elements("css selector", '.current[data-side="english"] ins')
    ][-1].strip() == "Jr"
    box.send_keys(".")
    assert "Jr." in driver.find_element("css selector", '.current[data-side="english"]').text
    shot(driver, shots, "postedit")
    box.send_keys("\ue007")  # Enter in the box: confirm the final version, which freezes it
    assert driver.find_element("css selector", 'textarea[data-side="english"]').get_attribute(
        "readonly"
    )
    driver.refresh()  # the autosave keeps the typed text and the confirmation
    wait(lambda: "Loaded saved draft" in text(driver, "status"))
    kept = driver.find_element("css selector", 'textarea[data-side="english"]')
    assert kept.get_attribute("value") == "Werner Mölders is a pilot. Jr." and kept.get_attribute(
        "readonly"
    )
    press(driver, "j", "r")  # pair 2: revert to the original (key), accept (mouse), revert (mouse)
    assert count("source") == "source diff: 0"
    driver.find_element("id", "accept").click()
    assert count("source") == "source diff: 2"  # लंदन -> दिल्ली
    driver.find_element("id", "revert").click()
    assert count("source") == "source diff: 0"
    press(driver, "\ue007")
    assert "2 / 2 reviewed · 2 revised pairs" in text(driver, "progress")
    exported = download(driver, downloads)
    out = tmp_path / "imported"
    run_judgekit(
        "review", "import", str(exported), "--campaign", str(page.parent), "--out", str(out)
    )
    assert list(pd.read_csv(out / "labels.csv")["label"]) == ["edited", "reverted"]
    folder = out / "postedit" / "erin"
    args = [
        arg
        for side in ("source", "english")
        for name in ("original", "llm", "edited")
        for arg in (f"--{name}", str(folder / f"{side}.{name}.txt"))
    ]
    run_judgekit("contrast", "postedit", *args, "--side", "source", "--side", "english",
                 "--out", str(tmp_path / "pe"))  # fmt: skip
    stats = json.loads((tmp_path / "pe" / "postedit.json").read_text())
    assert stats["segments"] == {"kept": 0, "reverted": 1, "edited": 1}
    assert stats["edited_by_sides"] == {"english": 1}  # pair 1: only its English side edited
