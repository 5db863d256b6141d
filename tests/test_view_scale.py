"""``judgekit view`` at scale: a large report holds its data gzip + base64 (inflated by the
browser's own DecompressionStream), and that page is the same page: the same data once
inflated, hostile text still shown as text. In headless Chromium (Debian's, tests/browser.py).
The 100,000-record figures are bench/view.py's (speed is measured there, not here)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from browser import chrome
from view_runs import XSS, classify_runs

from judgekit.view import build_report, page

BENCH = Path(__file__).resolve().parents[1] / "bench"


def embedded(html: str, element: str = "judgekit-data") -> str:
    return html.split(f'id="{element}"', 1)[1].split(">", 1)[1].split("</script>", 1)[0]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("scale")
    a, b, humans = classify_runs(base)
    plain = build_report([a, b], base / "plain.html", labels=humans, n_resamples=50).path
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(page, "COMPRESS_OVER", 0)  # as a report over 8 MB of data is written
        packed = build_report([a, b], base / "packed.html", labels=humans, n_resamples=50).path
    return plain, packed


def test_a_compressed_report_is_the_same_page_and_shows_hostile_text_as_text(pages) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.support.ui import WebDriverWait

    plain, packed = pages
    html = packed.read_text("utf-8")
    assert 'class="judgekit-bulk" data-encoding="gzip+base64"' in html and "onerror" not in html
    assert set(
        embedded(html).strip()
        + "".join(
            p.split(">", 1)[1].split("</script>", 1)[0]
            for p in html.split('class="judgekit-bulk"')[1:]
        )
    ) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
    expected = json.loads(embedded(plain.read_text("utf-8")))
    assert 'class="judgekit-bulk"' not in plain.read_text("utf-8")
    with chrome() as driver:
        driver.get(packed.as_uri())
        WebDriverWait(driver, 30).until(
            lambda d: d.execute_script("return document.documentElement.dataset.ready") == "1"
        )
        inflated = json.loads(driver.execute_async_script(  # the page's own loader, again
            "var done = arguments[0]; loadData(function () {"
            "  JK.bulk.then(function () { done(JSON.stringify(DATA)); }); });"
        ))  # fmt: skip
        assert inflated.pop("bulk") is False  # the head said the bulk was on its way
        assert {k: v for k, v in inflated.items() if k != "built"} == {
            k: v for k, v in expected.items() if k != "built"
        }
        driver.refresh()
        WebDriverWait(driver, 30).until(
            lambda d: d.execute_script("return document.documentElement.dataset.loaded") == "1"
        )
        assert driver.find_element("css selector", "#pair-select").is_enabled()
        driver.execute_script("showTab('items'); JK.state.search = 'x</script'; applyFilters();")
        cell = driver.find_element("css selector", "#items tbody tr td")
        assert cell.text == f"x{XSS}"
        cell.click()
        detail = driver.find_element("css selector", "#detail .detail-item").text
        assert detail == f"x{XSS}"
        planted = "return document.querySelectorAll('img[src=\"x\"]').length"
        assert driver.execute_script(planted) == 0
        with pytest.raises(NoAlertPresentException):
            driver.switch_to.alert.text  # noqa: B018 (no alert fired)
        driver.get("about:blank")  # a deep link waits for the keys in the bulk, then opens
        driver.get(packed.as_uri() + "#item=r03")
        WebDriverWait(driver, 30).until(
            lambda d: d.execute_script("return document.documentElement.dataset.loaded") == "1"
        )
        assert driver.find_element("css selector", "#detail .detail-item").text == "r03"


def test_the_bench_builds_and_opens_a_small_synthetic_run(tmp_path: Path) -> None:
    """bench/view.py end to end at 400 records: its run is read, its page opens, every
    interaction it times runs (the figures at 100,000 records are the bench's to print)."""
    sys.path.insert(0, str(BENCH))
    try:
        import view as bench
    finally:
        sys.path.remove(str(BENCH))
    bench.synthetic_run(tmp_path / "run", 400)
    info = build_report([tmp_path / "run"], tmp_path / "report.html", n_resamples=0)
    assert info.records == 400 and info.pairs == 1
    wall, ready_ms, blank, timings = bench.open_page(info.path)
    assert wall > 0 and ready_ms > 0 and blank > 0 and set(bench.TIMED) <= set(timings)
