"""``judgekit view`` layout in headless Chromium: a clicked row of a table wider than its pane
keeps the item column in view (the issue's case: a 1,281 px table in a 789 px pane)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import chrome
from test_view import css, open_report
from view_runs import classify_runs, cli

# Window widths: the (the items pane 789 px wide) and a narrower laptop one.
SIZES = ((1359, 900), (1100, 800))


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("view-layout")
    a, b, humans = classify_runs(base)
    out = base / "classify.html"
    cli("view", str(a), str(b), "--labels", str(humans), "-o", str(out), "--n-resamples", "0")
    return out


ITEM_SHOWN = """
var wrap = document.getElementById('table-wrap'), box = wrap.getBoundingClientRect();
var tr = document.querySelector('#items tbody tr.selected'), cell = tr.cells[0];
var r = cell.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
var hit = document.elementFromPoint(x, y);
return {wrap: wrap.clientWidth, table: wrap.scrollWidth, left: r.left, right: r.right,
        boxLeft: box.left, boxRight: box.right, inView: y > 0 && y < innerHeight,
        hit: hit === cell || cell.contains(hit), item: cell.textContent,
        detail: document.querySelector('#detail .detail-item').textContent};
"""


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_clicked_row_keeps_the_item_column_in_view(page: Path, size: tuple) -> None:
    with chrome() as driver:
        driver.set_window_size(*size)
        open_report(driver, page)
        css(driver, '#tabs [data-tab="items"]').click()
        # make the table wider than its pane as in the issue (1,281 px in 789 px)
        driver.execute_script("document.getElementById('items').style.minWidth = '1281px'")
        for k, how in ((3, "click"), (7, "click"), (8, "key")):
            # the reader has scrolled the table to its last columns before picking a row
            driver.execute_script("var w = document.getElementById('table-wrap');"
                                  "w.scrollLeft = w.scrollWidth")  # fmt: skip
            if how == "click":
                last = driver.find_elements("css selector", "#items tbody tr")[k]
                driver.execute_script("arguments[0].lastElementChild.click()", last)
            else:
                css(driver, "body").send_keys("j")
            got = driver.execute_script(ITEM_SHOWN)
            assert got["table"] >= 1281 > got["wrap"], got  # the table is wider than its pane
            assert got["boxLeft"] <= got["left"] and got["right"] <= got["boxRight"], got
            assert got["inView"] and got["hit"], got  # nothing covers the item text
            assert got["item"] == got["detail"]  # and it is the row the detail shows
