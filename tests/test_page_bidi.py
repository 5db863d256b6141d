"""Bidirectional controls in model and user text (a right-to-left override, U+202E, reverses
what follows it on screen): the report and the review pages show such text as stored, mark its
element (a sign, an outline, a title naming the controls) and isolate it, in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser import chrome
from fault_server import FaultServer
from review_runs import jsonl
from test_review_browser import open_page, wait
from test_view import open_report
from view_runs import cli

RLO = "\u202e"
TEXT = f"Invoice {RLO}fdp.exe attached."
PLAIN = "A plain review."


@pytest.fixture(scope="module")
def driver():
    with chrome() as d:
        yield d


def marks(driver) -> list[dict]:
    """Every marked element: its text, title and whether CSS isolates it."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('.bidi')).map(e => ({text: e.textContent, "
        "title: e.title, bidi: getComputedStyle(e).unicodeBidi, "
        "sign: getComputedStyle(e, '::before').content}))"
    )


def test_the_report_marks_an_override_in_item_and_answer_text(tmp_path: Path, driver) -> None:
    items = jsonl(
        tmp_path / "items.jsonl", [{"id": "i1", "text": TEXT}, {"id": "i2", "text": PLAIN}]
    )

    def answer(body: dict) -> str:
        said = body["messages"][0]["content"]
        return json.dumps(
            {"label": "positive", "rationale": f"so {RLO}cba" if TEXT in said else "ok"}
        )

    config = tmp_path / "classify.yaml"
    with FaultServer(answer_fn=answer) as srv:
        config.write_text(
            f"pipeline: classify\njudge: {{model: hosted_vllm/j, api_base: '{srv.base_url}', "
            f"max_retries: 1, timeout: 5}}\nclassify:\n  items: {items}\n"
            "  labels: [positive, negative]\n  task: Sentiment.\n",
            encoding="utf-8",
        )
        cli("run", str(config), "--out", str(tmp_path / "run"), "--no-cache")
    page = tmp_path / "run.html"
    cli("view", str(tmp_path / "run"), "-o", str(page))
    open_report(driver, page, "#item=i1")
    wait(lambda: driver.find_elements("css selector", "#detail pre.item-text.bidi"))
    shown = marks(driver)
    item = [m for m in shown if m["text"] == TEXT]
    assert item, shown  # the stored text, unchanged
    assert "RLO (U+202E)" in item[0]["title"] and item[0]["bidi"] == "isolate"
    assert "\u21c4" in item[0]["sign"]
    assert any(f"so {RLO}cba" in m["text"] for m in shown)  # the judge's answer too
    assert not [m for m in shown if RLO not in m["text"]]  # nothing else is marked
    open_report(driver, page, "#item=i2")
    wait(lambda: PLAIN in driver.find_element("css selector", "#detail pre.item-text").text)
    assert not driver.find_elements("css selector", "#detail pre.item-text.bidi")  # unmarked again


def test_a_review_page_marks_an_override_in_the_segment(tmp_path: Path, driver) -> None:
    rows = [{"id": "a", "source": "Er kam.", "translation": f"He {RLO}emac.", "system": "s1"},
            {"id": "b", "source": "Gut.", "translation": "Good.", "system": "s1"}]  # fmt: skip
    items = jsonl(tmp_path / "segments.jsonl", rows)
    page = tmp_path / "campaign" / "alice.html"
    cli("review", "make", str(items), "--task", "mqm", "--rater", "alice", "--out", str(page))
    open_page(driver, page)
    shown = wait(lambda: marks(driver))
    assert [m["text"] for m in shown] == [f"He {RLO}emac."], shown
    assert "RLO (U+202E)" in shown[0]["title"] and shown[0]["bidi"] == "isolate"
