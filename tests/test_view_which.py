"""The "Which judge?" tab of ``judgekit view`` in headless Chromium (Debian's, tests/browser.py):
its figures equal ``judgekit.view.which_judge`` (the library ``calibrate compare`` uses), the
ceiling on the same items, the difference to the best judge, the rater note beside the figures,
and a hostile run name shown as text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from browser import chrome
from view_runs import classify_runs, cli

HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def driver():
    """One headless Chromium for the file's tests: each opens its page afresh."""
    with chrome() as d:
        yield d


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    base = tmp_path_factory.mktemp("which")
    a, b, humans = classify_runs(base)
    hostile = base / HOSTILE
    shutil.copytree(b, hostile)
    with humans.open("a", encoding="utf-8") as f:  # the judge's rater among the humans
        f.write("r00,judge-a,positive\n")
    out = base / "which.html"
    cli("view", str(a), str(hostile), "--labels", str(humans), "-o", str(out),
        "--n-resamples", "200")  # fmt: skip
    return a, hostile, humans, out


def test_which_judge_tab_shows_the_library_figures_as_text(page, tmp_path: Path, driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.support.ui import WebDriverWait

    from judgekit.view.clusters import compare_with_humans
    from judgekit.view.compare import sources
    from judgekit.view.data import read_run
    from judgekit.view.which_judge import which_judge_sources

    a, hostile, humans, out = page
    found, _ = sources([read_run(a), read_run(hostile)])
    expected = which_judge_sources(compare_with_humans(found, humans, n_resamples=200))
    assert expected is not None and "facets" in expected
    driver.get(out.as_uri())
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready") == "1"
    )
    driver.find_element("css selector", '#tabs [data-tab="which"]').click()
    root = driver.find_element("css selector", "#tab-which")
    assert root.is_displayed()
    assert (
        "human rater 'judge-a' is left out of the humans"
        in root.find_element("css selector", ".which-notes").text
    )
    table = root.find_element("css selector", '.which-table[data-statistic="accuracy"]')
    rows = table.find_elements("css selector", "tbody tr:not(.row-notes)")
    acc = next(t for t in expected["facets"][0]["tables"] if t["statistic"]["key"] == "accuracy")
    names = [r.find_element("css selector", "td").text for r in rows]
    on = [f"{f['judge']} on the ceiling's rows" for f in acc["on_ceiling"]]
    assert names == [f["judge"] for f in acc["judges"]] + ["human ceiling", *on]
    assert len(on) == 2  # each judge on the ceiling's own rows, n in items as the ceiling's
    assert {f["n"] for f in acc["on_ceiling"]} == {acc["ceiling"]["n"]}
    for row, figure in zip(rows[3:], acc["on_ceiling"], strict=True):
        shown = row.find_elements("css selector", "td")[1].text.split(" ")[0]
        assert float(shown) == pytest.approx(figure["value"], abs=1e-4)
    # the rater left out sits under the ceiling's row (and in the summary), not the judges'
    notes = table.find_elements("css selector", "tr.row-notes")
    kinds = {(n.get_attribute("data-kind"), "left out of the humans" in n.text) for n in notes}
    assert ("ceiling", True) in kinds and ("judge", True) not in kinds
    # every figure here is on fewer than 30 items: marked; a [1, 1] CI says it collapsed
    figures = [*acc["judges"], acc["ceiling"], *acc["on_ceiling"]]
    assert all(f["small"] for f in figures) and any(f["collapsed"] for f in figures)
    for row, figure in zip(rows, figures, strict=True):
        cell = row.find_elements("css selector", "td")[1]
        mark = "interval collapsed: too few items" if figure["collapsed"] else "n < 30"
        why = "zero width" if figure["collapsed"] else "fewer than 30 items"
        assert mark in cell.text and why in cell.get_attribute("title")
    assert "each human against the majority of the other humans" in root.text
    assert any(HOSTILE in n for n in names)  # the hostile run name, as text
    best, other = acc["judges"]
    cells = rows[1].find_elements("css selector", "td")
    assert cells[2].text == str(other["n"])
    assert cells[4].text.startswith(f"{other['versus_best']['delta']:.4f} (p ")
    assert rows[0].find_elements("css selector", "td")[4].text == "best"
    assert "wide CI" in cells[1].text if other["wide"] else "wide CI" not in cells[1].text
    assert acc["ceiling"]["n"] == other["n"] == best["n"]  # the same items
    shot = tmp_path / "which.png"
    driver.save_screenshot(str(shot))
    assert driver.execute_script("return document.querySelectorAll('img[src=\"x\"]').length") == 0
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 (no alert fired)


def test_each_run_card_names_its_model_and_route(page, driver) -> None:
    """The signature line reads ``models`` as summary.json writes it: two judges' cards differ."""
    from selenium.webdriver.support.ui import WebDriverWait

    *_, out = page
    driver.get(out.as_uri())
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready") == "1"
    )
    lines = [p.text for p in driver.find_elements("css selector", "#tab-summary .signature")]
    assert len(lines) == 2
    assert "judge hosted_vllm/judge-a (judge-a)" in lines[0]
    assert "judge hosted_vllm/judge-b (judge-b)" in lines[1]
