"""`judgekit review` pages never lose or mix a rater's work: headless Chromium (Debian's, via
tests/browser.py) on real campaigns made from real runs (a spilling run and an errors run
against the fault server) and a benchmark items file.

6. another rater's file is refused with both names (an explicit "import as" works);
7. two tabs of one page: the later save is held and both tabs are told, nothing overwritten;
8. Load JSON of a file that is not a review file: one message, no uncaught error;
9. MQM: Enter on a span without a severity keeps it, marks it and asks for the severity;
10. a reload leaves unopened items unstarted; each new item starts at its top with the first
    question focused and visible, every keyboard step keeps the focused question in view, and
    Enter on a focused button presses it;
11. CS/CA answers that contradict the rule are flagged before the rater moves on and counted
    per rater by the import's QC report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser import chrome
from review_runs import errors_run, jsonl, spilling_run
from review_runs import judgekit as run_judgekit
from test_review_browser import download, drag_select, open_page, press, text, wait

ENTER = "\ue007"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    downloads = tmp_path_factory.mktemp("downloads")
    with chrome(downloads) as driver:
        driver.execute_cdp_cmd(
            "Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
        yield driver, downloads


@pytest.fixture(scope="module")
def meanings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A meanings campaign folder of a real spilling run (4 items of 5 meanings)."""
    base = tmp_path_factory.mktemp("meanings")
    run = spilling_run(base / "spilling")
    folder = base / "campaign"
    for rater in ("alice", "bob", "carol", "dave", "erin"):
        run_judgekit("review", "make", str(run), "--task", "meanings", "--rater", rater,
                     "-o", str(folder / f"{rater}.html"))  # fmt: skip
    return folder


def storage(driver, page: Path) -> dict | None:
    """The page's saved draft in the browser's localStorage."""
    key = driver.execute_script("return JK.KEY")
    raw = driver.execute_script("return localStorage.getItem(arguments[0])", key)
    return None if raw is None else json.loads(raw)


def severe(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_another_raters_file_is_refused_naming_both_unless_imported_as(
    browser, meanings: Path
) -> None:
    driver, downloads = browser
    open_page(driver, meanings / "bob.html")
    press(driver, "1", "1", "2", "1", "1", ENTER)  # bob: item 1
    assert text(driver, "progress").startswith("1 / 4 done")
    bobs = download(driver, downloads)
    open_page(driver, meanings / "alice.html")
    driver.find_element("id", "load").send_keys(str(bobs))
    said = wait(lambda: "not loaded" in text(driver, "status") and text(driver, "status"))
    assert f"{bobs.name}: the answers of rater bob, not of alice" in said
    assert text(driver, "progress").startswith("0 / 4 done")  # alice's answers untouched
    driver.find_element("id", "import-as").click()  # explicit: take bob's answers as alice's
    wait(lambda: "imported as alice" in text(driver, "status"))
    assert text(driver, "progress").startswith("1 / 4 done")
    exported = json.loads(download(driver, downloads).read_text("utf-8"))
    assert exported["rater"] == "alice" and exported["imported_from"] == ["bob"]
    first = exported["items"][0]
    assert first["done"] and first["answer"]["valid"] == [True, True, False, True, True]


def test_two_tabs_of_one_page_never_overwrite_each_other(browser, meanings: Path) -> None:
    driver, _ = browser
    page = meanings / "carol.html"
    open_page(driver, page)
    tab_a = driver.current_window_handle
    driver.switch_to.new_window("tab")
    open_page(driver, page)
    tab_b = driver.current_window_handle
    driver.switch_to.window(tab_a)
    press(driver, "1")  # A: meaning 1 valid, saved
    assert storage(driver, page)["items"]
    saved = storage(driver, page)
    driver.switch_to.window(tab_b)
    press(driver, "2")  # B (opened before A saved): meaning 1 invalid; held, not saved
    assert driver.find_element("id", "conflict").is_displayed()
    assert "another tab saved this draft" in text(driver, "status")
    assert storage(driver, page) == saved  # A's work is still the draft
    driver.find_element("id", "take-other").click()  # B takes A's work
    picked = driver.find_element("css selector", '[data-question="m0"] .picked')
    assert picked.get_attribute("data-value") == "true" and not driver.find_elements(
        "id", "conflict"
    )
    press(driver, "2")  # B: meaning 2 invalid, saved over A's revision
    driver.switch_to.window(tab_a)
    first = next(iter(saved["items"]))
    press(driver, "1")  # A's next change (meaning 2 valid) is held: B saved since
    assert driver.find_element("id", "conflict").is_displayed()
    assert storage(driver, page)["items"][first]["answer"]["valid"][:2] == [True, False]  # B's
    driver.find_element("id", "keep-mine").click()  # A keeps its own, knowingly
    kept = storage(driver, page)
    assert kept["items"][first]["answer"]["valid"][:2] == [True, True]
    assert kept["rev"] > saved["rev"] + 1 and not driver.find_elements("id", "conflict")
    driver.switch_to.window(tab_b)
    driver.close()
    driver.switch_to.window(tab_a)


@pytest.mark.parametrize("content", ["null", '{"format": "judgekit-review/1", "items": 5}', "[]",
                                     '"x"', '{"items": [null]}', "{}"])  # fmt: skip
def test_loading_a_file_that_is_not_a_review_file_says_so(
    browser, meanings: Path, tmp_path: Path, content: str
) -> None:
    driver, _ = browser
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    open_page(driver, meanings / "dave.html")
    severe(driver)  # clear the log
    driver.find_element("id", "load").send_keys(str(bad))
    wait(lambda: "bad.json" in text(driver, "status"))
    assert text(driver, "status") == "bad.json: not a review file"
    assert not severe(driver)  # no uncaught TypeError


def test_mqm_enter_on_a_span_without_severity_keeps_it_and_asks(browser, tmp_path: Path) -> None:
    driver, _ = browser
    run = errors_run(tmp_path)
    page = tmp_path / "campaign" / "fay.html"
    run_judgekit("review", "make", str(run), "--task", "mqm", "--rater", "fay", "-o", str(page))
    open_page(driver, page)
    drag_select(driver, "translation", "Chongqing")
    press(driver, "1", ENTER)  # a type (NE), no severity, Enter
    assert "needs a severity" in text(driver, "status")
    assert "Chongqing" in text(driver, "pending")  # the span is kept
    marked = driver.find_element("css selector", ".segment.translation mark.sev-pending")
    assert marked.text == "Chongqing"  # and shown in the text
    assert text(driver, "progress").startswith("0 / 3 done")  # the segment is not confirmed
    driver.find_element("id", "confirm").click()  # the button does the same
    assert "needs a severity" in text(driver, "status") and text(driver, "pending")
    press(driver, "M", ENTER)  # the severity, then Enter adds the error
    tags = [e.text for e in driver.find_elements("css selector", "ol.errors .tag")]
    assert len(tags) == 1 and tags[0].startswith("NE · major · translation [28, 37)")
    press(driver, ENTER)  # now Enter confirms
    assert text(driver, "progress").startswith("1 / 3 done")
    exported = driver.execute_script("return JK.exportObject()")
    (err,) = exported["items"][0]["answer"]["errors"]
    assert (err["text"], err["type"], err["severity"]) == ("Chongqing", "NE", "major")


def in_view(driver, selector: str) -> bool:
    """The element is wholly in the viewport, below the sticky header."""
    return driver.execute_script(
        "var r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "var top = document.querySelector('header').getBoundingClientRect().bottom;"
        "return r.top >= top - 1 && r.bottom <= window.innerHeight + 1;",
        selector,
    )


def test_navigation_starts_each_item_at_its_top_and_keeps_the_focus_in_view(
    browser, meanings: Path
) -> None:
    driver, downloads = browser
    driver.set_window_size(1280, 760)  # a laptop screen: not every question fits
    try:
        open_page(driver, meanings / "erin.html")
        driver.execute_script("document.querySelector('details.guidelines').open = false")
        for step in range(5):  # each keyboard step keeps the focused question in view
            press(driver, "1")
            assert in_view(driver, ".question.focus"), step
        press(driver, ENTER)  # item 2
        assert text(driver, "card").startswith("item 2 of 4")
        assert in_view(driver, ".wordline") and in_view(driver, ".question.focus")
        assert driver.find_element("css selector", ".question.focus").get_attribute(
            "data-question") == "m0"  # fmt: skip
        driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")
        press(driver, "j")  # next from the bottom of the page: item 3 at its top
        assert in_view(driver, ".wordline") and in_view(driver, ".question.focus")
        driver.refresh()  # after a reload only the item answered is not new
        wait(lambda: "Loaded saved draft" in text(driver, "status"))
        dots = driver.execute_script(
            "return Array.from(document.querySelectorAll('#strip .dot')).map(d => d.className)"
        )
        assert [d.replace(" here", "") for d in dots] == ["dot done", "dot", "dot", "dot"]
        driver.execute_script("document.getElementById('download').focus()")
        before = set(downloads.glob("*.json"))
        press(driver, ENTER)  # Enter on the focused button presses it
        wait(lambda: [p for p in set(downloads.glob("*.json")) - before if p.stat().st_size])
        assert text(driver, "card").startswith("item 3 of 4")  # and does not move on
    finally:
        driver.set_window_size(1280, 900)


CSCA_QUESTIONS = ["What is 2 + 2?", "Who was the first US president?", "What is H2O?",
                  "Name the capital of Morocco.", "What is pi to two decimals?",
                  "Which holiday comes with turkey in the US?", "What is a lorry?",
                  "How many legs has a spider?", "What is the boiling point of water?",
                  "Which planet is closest to the Sun?"]  # fmt: skip


def test_csca_answers_against_the_rule_are_flagged_and_counted(browser, tmp_path: Path) -> None:
    driver, downloads = browser
    items = jsonl(tmp_path / "bench.jsonl", [
        {"id": f"q{k}", "question": q, "choices": ["A1", "B1", "C1", "D1"], "answer": "A",
         "subject": "misc", "language": "en"} for k, q in enumerate(CSCA_QUESTIONS)])  # fmt: skip
    page = tmp_path / "campaign" / "gus.html"
    run_judgekit("review", "make", str(items), "--task", "csca", "--rater", "gus", "-o", str(page))
    open_page(driver, page)
    # keys in the rubric's order: required knowledge 1 none / 3 regional, time-sensitive 2 no,
    # CS/CA 1 CS / 2 CA, subject 1 STEM. 7 of 10 contradict the rule (none+CS or regional+CA)
    answers = [("1", "1"), ("3", "2"), ("1", "2"), ("1", "1"), ("3", "2"), ("3", "1"),
               ("1", "1"), ("3", "2"), ("1", "1"), ("1", "2")]  # fmt: skip
    against = [k for k, (rk, cs) in enumerate(answers) if (rk == "1") == (cs == "1")]
    assert len(against) == 7
    for k, (rk, cs) in enumerate(answers):
        press(driver, rk, "2", cs, "1", ENTER)
        if k in against:  # flagged on the item, and held once before moving on
            flag = text(driver, "rule-flag")
            assert flag.startswith("Contradicts the rule") and "CS if answering needs" in flag
            assert text(driver, "card").startswith(f"item {k + 1} of 10")
            assert "move on again to keep it" in text(driver, "status")
            press(driver, ENTER)
        else:
            assert not driver.find_elements("id", "rule-flag")
        if k < 9:
            assert text(driver, "card").startswith(f"item {k + 2} of 10")
    assert text(driver, "progress").startswith("10 / 10 done")
    exported = download(driver, downloads)
    out = tmp_path / "imported"
    said = run_judgekit(
        "review", "import", str(exported), "--campaign", str(page.parent), "--out", str(out)
    )
    qc = json.loads((out / "qc.json").read_text("utf-8"))
    assert [(r["rater"], r["rule_contradictions"]) for r in qc] == [("gus", 7)]
    assert "10 label rows" in said
    header, row = (out / "qc.csv").read_text("utf-8").splitlines()
    assert dict(zip(header.split(","), row.split(","), strict=True))["rule_contradictions"] == "7"
