"""``judgekit view --labels`` on a real classify run with ``judge.logprobs: true`` (stub judge on
127.0.0.1 whose log-probabilities give known label probabilities), in headless Chromium: the
Confidence card with ECE and Brier computed by hand, the reliability diagram drawn as SVG from
the bins, the bin and selective-judging tables, label probabilities in the detail pane, a
hostile label name shown as text, and no card for a run without label probabilities."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import chrome
from test_view import css, fmt, open_report
from view_runs import CONFIDENT, HOSTILE, classify_runs, cli, confidence_run


@pytest.fixture(scope="module")
def driver():
    with chrome() as d:
        yield d


@pytest.fixture(scope="module")
def confident(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, str]:
    base = tmp_path_factory.mktemp("view-confidence")
    run, humans = confidence_run(base)
    page = base / "confidence.html"
    said = cli("view", str(run), "--labels", str(humans), "-o", str(page), "--n-resamples", "200")
    return run, humans, page, said


def by_hand() -> tuple[float, float]:
    """ECE over 10 equal-width bins and the multiclass Brier score of CONFIDENT, by hand.

    Top-label confidences: 0.85 (right), 0.85 (wrong) in (0.8, 0.9]; 0.75 (wrong) in
    (0.7, 0.8]; 0.65 (right) in (0.6, 0.7]; 0.55 (right) in (0.5, 0.6]. ECE = sum over bins of
    n_b / n * |acc_b - conf_b|; Brier with two labels = mean of 2 * (1 - p(human label))^2.
    """
    ece = (2 * abs(0.5 - 0.85) + abs(0.0 - 0.75) + abs(1.0 - 0.65) + abs(1.0 - 0.55)) / 5
    brier = 2 * ((1 - 0.85) ** 2 + 0.85**2 + (1 - 0.65) ** 2 + (1 - 0.55) ** 2 + 0.75**2) / 5
    return ece, brier


def open_card(driver, page: Path):
    open_report(driver, page)
    css(driver, '#tabs [data-tab="humans"]').click()
    return css(driver, '#tab-humans .card.confidence[data-confidence="0"]')


def test_confidence_card_shows_ece_brier_bins_and_selective_judging(confident, driver) -> None:
    import pandas as pd

    from judgekit.calibration.confidence import confidence_report

    _, _, page, said = confident
    assert "1 judge against the humans (1 with label probabilities: ECE, Brier)" in said
    ece, brier = by_hand()
    assert (ece, brier) == (pytest.approx(0.45), pytest.approx(0.653))
    card = open_card(driver, page)
    # the judge's own card comes right before it
    assert (
        driver.execute_script("return arguments[0].previousElementSibling.dataset.source", card)
        == "0"
    )
    probs = pd.DataFrame(
        {
            k: {v[0]: v[1], next(x for x in (HOSTILE, "good") if x != v[0]): 1 - v[1]}
            for k, v in CONFIDENT.items()
        }
    ).T
    report = confidence_report(
        probs, pd.Series({k: v[2] for k, v in CONFIDENT.items()}), n_resamples=200, seed=0
    )
    for path, value, est in (
        ("confidence.ece", ece, report.ece),
        ("confidence.brier", brier, report.brier),
    ):
        assert est.value == pytest.approx(value)
        shown = css(card, f'[data-path="{path}"]').text
        assert shown == f"{fmt(value)} [{fmt(est.ci[0])}, {fmt(est.ci[1])}]", path
    assert css(card, '[data-path="confidence.n_items"]').text == "5"
    assert css(card, '[data-path="confidence.accuracy"]').text == "0.6000"  # 3 of 5 right
    # the diagram: a bar per filled bin at its accuracy, a point per filled bin
    bars = card.find_elements("css selector", "svg.reliability rect.bar")
    got = {
        b.get_attribute("data-bin"): (b.get_attribute("data-n"), b.get_attribute("data-accuracy"))
        for b in bars
    }
    assert got == {"5": ("1", "1"), "6": ("1", "1"), "7": ("1", "0"), "8": ("2", "0.5")}
    assert len(card.find_elements("css selector", "svg.reliability circle.point")) == 4
    assert css(card, "svg.reliability line.diagonal")
    rows = [
        [td.text for td in tr.find_elements("css selector", "td")]
        for tr in card.find_elements("css selector", "table.bins tbody tr")
    ]
    assert len(rows) == 10 and rows[0] == ["[0, 0.1]", "0", "\u2013", "\u2013"]
    assert rows[8] == ["(0.8, 0.9]", "2", "0.8500", "0.5000"]
    selective = [
        [td.text for td in tr.find_elements("css selector", "td")]
        for tr in card.find_elements("css selector", "table.selective tbody tr")
    ]
    assert selective == [
        ["0.5000", "5", "1", "0.6000"],
        ["0.7000", "3", "0.6000", "0.3333"],
        ["0.9000", "0", "0", "\u2013"],
    ]


def test_a_hostile_label_name_is_text_in_the_card_and_the_detail_pane(confident, driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    page = confident[2]
    assert "<img src=x" not in page.read_text("utf-8")  # every < of the data escaped
    card = open_card(driver, page)
    assert HOSTILE in card.text
    open_report(driver, page, "#item=c2")
    assert (
        css(driver, '#detail [data-path="label_probs"]').text
        == f"{HOSTILE} 0.6500 \u00b7 good 0.3500"
    )
    assert driver.execute_script("return document.querySelectorAll('img[src=\"x\"]').length") == 0
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 (no alert fired)


def test_no_card_and_no_probabilities_without_label_probs(tmp_path: Path, driver) -> None:
    a, _, humans = classify_runs(tmp_path)
    page = tmp_path / "plain.html"
    cli("view", str(a), "--labels", str(humans), "-o", str(page), "--n-resamples", "0")
    open_report(driver, page, "#item=r03")
    assert driver.execute_script("return DATA.confidence") == []
    assert not driver.find_elements("css selector", '#detail [data-path="label_probs"]')
    css(driver, '#tabs [data-tab="humans"]').click()
    assert driver.find_elements("css selector", "#tab-humans .card[data-source]")
    assert not driver.find_elements("css selector", "#tab-humans .card.confidence")


def test_probabilities_without_a_human_majority_say_why(confident, tmp_path: Path, driver) -> None:
    run = confident[0]
    humans = tmp_path / "other-items.csv"  # the same labels, other items
    humans.write_text("item,rater,label\nz0,h1,good\nz0,h2,good\nz1,h1,good\n", encoding="utf-8")
    page = tmp_path / "no-overlap.html"
    cli("view", str(run), "--labels", str(humans), "-o", str(page), "--n-resamples", "0")
    card = open_card(driver, page)
    assert card.find_element("css selector", "p.warn").text == (
        "no confidence figures: no item has both judge probabilities and a human majority label"
    )
    assert not card.find_elements("css selector", "svg")


def test_which_judge_tab_gives_ece_and_cost_per_judge_with_n(confident, driver) -> None:
    import json

    run, _, page, _ = confident
    ece, _ = by_hand()
    totals = json.loads((run / "summary.json").read_text("utf-8"))["usage"]["totals"]
    open_report(driver, page)
    css(driver, '#tabs [data-tab="which"]').click()
    row = css(driver, '#tab-which .which-facts tbody tr[data-source="0"]')
    cells = [td.text for td in row.find_elements("css selector", "td")]
    assert cells[0] == "judge-p"
    assert cells[1].startswith(fmt(ece) + " [") and cells[2] == "5"  # ECE by hand, on 5 items
    assert "wide CI" in cells[1]  # 5 items: the CI is wider than the stated share
    title = css(driver, "#tab-which .which-facts td.wide").get_attribute("title")
    assert title.startswith("CI wider than 0.2")
    if totals.get("cost_unknown"):
        assert "unknown price" in cells[3] and cells[4] == "–"
    else:  # the run's known cost over its 5 items
        assert cells[3] == f"${totals['cost_usd'] / 5 * 1000:.4f}" and cells[4] == "5"
