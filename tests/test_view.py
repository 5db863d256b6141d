"""``judgekit view`` in headless Chromium (Debian's, via tests/browser.py): reports of real runs
of all five pipelines opened from file://, their numbers checked against summary.json and
judgekit's own statistics, filters, details, compare mode, judges vs humans, the XSS item shown
as text, keyboard and deep links. One browser for the module."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser import chrome, not_blank
from view_runs import (
    ERROR_ITEMS,
    XSS,
    classify_runs,
    cli,
    cultural_run,
    errors_run,
    localise_run,
    spilling_run,
)

RUNS = {"spilling": spilling_run, "errors": errors_run, "localise": localise_run,
        "cultural": cultural_run}  # fmt: skip


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("view")


@pytest.fixture(scope="module")
def driver():
    with chrome() as d:
        yield d


@pytest.fixture(scope="module")
def classify(base: Path) -> tuple[Path, Path, Path, Path]:
    a, b, humans = classify_runs(base)
    page = base / "compare.html"
    cli("view", str(a), str(b), "--labels", str(humans), "-o", str(page), "--n-resamples", "200")
    return a, b, humans, page


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text("utf-8").splitlines()]


def lookup(data: object, path: list) -> object:
    for part in path:
        data = data[part]  # type: ignore[index]
    return data


def fmt(value: float) -> str:  # the page's number format
    return str(int(value)) if float(value).is_integer() else f"{value:.4f}"


def open_report(driver, page: Path, fragment: str = "") -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")  # a new load, even where only the fragment changes
    driver.get(page.as_uri() + fragment)
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready") == "1"
    )


def css(driver, selector: str):
    return driver.find_element("css selector", selector)


def text_of(driver, selector: str) -> str:
    return driver.execute_script(f"return document.querySelector('{selector}').textContent")


def check_summary(driver, run: Path) -> None:
    """Every summary value shown is summary.json's (each cell names its path in the summary)."""
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    cells = driver.execute_script(
        "return Array.from(document.querySelectorAll('#tab-summary [data-path]'))"
        ".map(c => [c.dataset.path, c.dataset.value, c.textContent, c.dataset.ciPath || null])"
    )
    checked = set()
    for path, value, text, ci_path in cells:
        path = tuple(json.loads(path))
        shown, expected = json.loads(value), lookup(summary, path)
        assert shown == expected, path
        assert not text.startswith(("{", "[")), (path, text)  # no raw JSON in a cell
        ci = ""
        if ci_path is not None:  # a headline figure with its CI, both from summary.json
            low, high = (lookup(summary, p) for p in json.loads(ci_path))
            ci = f" [{fmt(low)}, {fmt(high)}]"
        if isinstance(expected, (int, float)) and not isinstance(expected, bool):
            assert text == fmt(expected) + ci, path
        checked.add(path)
    assert {("items", "planned"), ("items", "judged"), ("usage", "calls"),
            ("usage", "requests")} <= checked  # fmt: skip
    status = summary["usage"]["status"]
    for name in ("ok", "unscored", "error"):
        assert text_of(driver, f'#tab-summary [data-status="{name}"]') == f"{name} {status[name]}"


def check_items(driver, run: Path, shot: Path) -> None:
    """The count is every record; filtering by status changes it; a row opens its detail."""
    from selenium.webdriver.support.ui import Select

    recs = records(run)
    css(driver, '#tabs [data-tab="items"]').click()
    assert css(driver, "#count").get_attribute("data-count") == str(len(recs))
    unscored = [r for r in recs if r["status"] == "unscored"]
    assert 0 < len(unscored) < len(recs)
    pick = Select(css(driver, 'select[data-facet="status"]'))
    pick.select_by_visible_text(f"status: unscored ({len(unscored)})")
    assert css(driver, "#count").text == f"{len(unscored)} of {len(recs)} records"
    css(driver, "#items tbody tr").click()
    assert css(driver, "#detail").get_attribute("data-key") == unscored[0]["key"]
    assert text_of(driver, "#detail pre.raw") == unscored[0]["raw"]
    assert unscored[0]["reason"] in css(driver, "#detail").text
    pick.select_by_index(0)
    assert css(driver, "#count").get_attribute("data-count") == str(len(recs))
    driver.save_screenshot(str(shot))
    assert not_blank(shot)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_report_of_each_pipeline(name: str, base: Path, driver, tmp_path: Path) -> None:
    run = RUNS[name](base)
    page = tmp_path / "report.html"
    out = cli("view", str(run), "-o", str(page))
    assert f"wrote {page}" in out and "records" in out
    open_report(driver, page)
    check_summary(driver, run)
    check_items(driver, run, tmp_path / f"{name}.png")
    if name == "spilling":
        check_spilling_detail(driver, run, page)
    elif name == "errors":
        check_error_spans(driver, run, page)
    elif name == "localise":
        open_report(driver, page, "#item=deu_Latn_Germany|p1")
        assert "Goretzka" in css(driver, "#detail .side-by-side").text
        assert "Vidal" in css(driver, "#detail .side-by-side").text
    else:
        open_report(driver, page, "#item=" + json.loads((run / "annotations.jsonl").read_text(
            "utf-8").splitlines()[0])["key"])  # fmt: skip
        assert "item outcome" in css(driver, "#detail").text


def check_spilling_detail(driver, run: Path, page: Path) -> None:
    """A judge record shows the dictionary entry next to the 5 meanings and the verdicts."""
    from judgekit.lexicon.store import load_dictionary
    from judgekit.pipelines.spilling import render_entry

    judge = next(r for r in records(run) if r["stage"] == "judge" and r["status"] == "ok")
    gen = next(r for r in records(run) if r["stage"] == "generate"
               and r["meta"]["word"] == judge["meta"]["word"]
               and r["meta"]["lang"] == judge["meta"]["lang"])  # fmt: skip
    open_report(driver, page, "#key=" + judge["key"])
    meta = judge["meta"]
    entry = render_entry(load_dictionary(meta["lang"])[meta["translation"]])
    assert text_of(driver, "#detail pre.dictionary") == entry
    shown = driver.execute_script(
        "return Array.from(document.querySelectorAll('#detail .meaning')).map(m => "
        "[m.classList.contains('valid'), m.querySelector('span:not(.verdict)').textContent])"
    )
    meanings = gen["parsed"]["meanings"]
    assert shown == [[v, f"{k + 1}. {m['meaning']}"] for k, (v, m) in
                     enumerate(zip(judge["parsed"]["valid"], meanings, strict=True))]  # fmt: skip


def check_error_spans(driver, run: Path, page: Path) -> None:
    """The translation shows the judge's spans, each marked with its type and severity."""
    open_report(driver, page, "#item=a")
    marks = driver.execute_script(
        "return Array.from(document.querySelectorAll('#detail .spans[data-side=translation] mark'))"
        ".map(m => [m.textContent, m.dataset.type, m.dataset.severity])"
    )
    assert marks == [["Wang Wei", "NE", "minor"], ["shop", "MIS", "critical"],
                     ["Chongqing", "NE", "major"]]  # fmt: skip
    shown = text_of(driver, "#detail .spans[data-side=translation]")
    assert shown.startswith("Wang Wei") and ERROR_ITEMS[0]["translation"][-12:-1] in shown


def test_compare_mode_on_two_runs(classify: tuple, driver) -> None:
    from judgekit.labels.table import load_labels
    from judgekit.metrics.agreement import cohen_kappa, percent_agreement

    a, b, _, page = classify
    la, lb = load_labels(a).frame, load_labels(b).frame
    frame = la.join(lb, how="inner").dropna()
    agree = percent_agreement(frame, ci=True, n_resamples=200, seed=0)
    kappa = cohen_kappa(frame)
    # by hand: judge-a says LABELS[i % 3], judge-b LABELS[(i // 2) % 3]; item 5 unscored by
    # both; they agree on items 0, 6 and 11 of the 11 left
    assert len(frame) == 11 and agree.value == pytest.approx(3 / 11)
    open_report(driver, page)
    assert len(driver.find_elements("css selector", "#tab-summary .card")) == 2
    css(driver, '#tabs [data-tab="compare"]').click()
    shown = css(driver, '#pair [data-path="agreement"]').text
    low, high = agree.ci
    assert shown == f"{fmt(agree.value)} [{fmt(low)}, {fmt(high)}]"
    assert css(driver, '#pair [data-path="kappa"]').text.startswith(fmt(kappa.value) + " [")
    assert css(driver, '#pair [data-path="n"]').text == "11"
    assert "8 disagreements" in css(driver, "#pair .paged").text
    css(driver, "#pair button.open").click()
    keys = [p.get_attribute("data-key") for p in
            driver.find_elements("css selector", "#pair-detail .pane")]  # fmt: skip
    assert len(keys) == 2 and keys[0].startswith("judge|judge-a|")
    assert keys[1].startswith("judge|judge-b|") and keys[0].split("|")[2] == keys[1].split("|")[2]


def test_judges_against_humans(classify: tuple, driver) -> None:
    import pandas as pd

    from judgekit.calibration.judge import judge_vs_humans
    from judgekit.labels.table import load_labels

    a, b, humans, page = classify
    table = load_labels(humans)
    open_report(driver, page)
    css(driver, '#tabs [data-tab="humans"]').click()
    cards = driver.find_elements("css selector", "#tab-humans .card[data-source]")
    assert len(cards) == 2
    for run, card, wrong in ((a, cards[0], 0), (b, cards[1], 8)):
        labels = load_labels(run)
        series = pd.Series(labels.column(labels.raters[0]))
        report = judge_vs_humans(series, table, n_resamples=200, seed=0)
        for metric in ("accuracy", "macro_f1", "kappa"):
            est = getattr(report, metric)
            cell = card.find_element("css selector", f'[data-path="{metric}"]').text
            assert cell == f"{fmt(est.value)} [{fmt(est.ci[0])}, {fmt(est.ci[1])}]", metric
        assert f"{wrong} disagreements" in card.text
    assert report.accuracy.value == pytest.approx(3 / 11)  # judge-b: items 0, 6, 11 right
    cards[1].find_element("css selector", "button.open").click()
    assert (
        cards[1]
        .find_element("css selector", ".pane")
        .get_attribute("data-key")
        .startswith("judge|judge-b|")
    )


def test_rank_clusters_in_compare_mode_with_labels(classify: tuple, driver) -> None:
    _, _, _, page = classify
    open_report(driver, page)
    css(driver, '#tabs [data-tab="compare"]').click()
    card = css(driver, "#tab-compare #clusters")
    assert "11 items labelled by the humans and every judge" in card.text
    rows = card.find_elements("css selector", "tbody tr")
    names = [r.find_element("css selector", "td").text for r in rows]
    assert names == ["classify-judge-a: judge-a", "classify-judge-b: judge-b"]
    cells = [r.find_element("css selector", '[data-statistic="accuracy"]') for r in rows]
    # judge-a agrees with the majority on all 11 items, judge-b on 3: the 8 items where they
    # differ make p = 1/256 in the paired permutation test, so judge-b is a cluster below
    assert cells[0].text.startswith("1 [") and cells[0].get_attribute("data-rank") == "1"
    assert cells[1].text.startswith("0.2727 [") and cells[1].get_attribute("data-rank") == "2"


def test_xss_item_is_shown_as_text(classify: tuple, driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    _, _, _, page = classify
    assert "<img src=x" not in page.read_text("utf-8")  # every < of the data escaped
    open_report(driver, page)
    css(driver, "body").send_keys("/")
    assert driver.execute_script("return document.activeElement.id") == "search"
    css(driver, "#search").send_keys("x</script")
    driver.implicitly_wait(0)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 10).until(lambda d: css(d, "#count").get_attribute("data-count") == "1")
    cell = css(driver, "#items tbody tr td")
    assert cell.text == f"x{XSS}"
    cell.click()
    assert text_of(driver, "#detail .detail-item") == f"x{XSS}"
    assert XSS in text_of(driver, "#detail pre.raw")
    assert driver.execute_script("return document.querySelectorAll('img[src=\"x\"]').length") == 0
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 (no alert fired)


def test_keyboard_and_deep_links(classify: tuple, driver) -> None:
    a, _, _, page = classify
    key = next(r["key"] for r in records(a) if r["meta"]["item"] == "r03")
    open_report(driver, page, "#item=r03")
    assert text_of(driver, "#detail .detail-item") == "r03"
    assert css(driver, "#detail").get_attribute("data-key") == key
    order = driver.execute_script(
        "return Array.from(document.querySelectorAll('#items tbody tr')).map(t => t.dataset.row)"
    )
    here = order.index(css(driver, "#detail").get_attribute("data-row"))
    css(driver, "body").send_keys("j")
    assert css(driver, "#detail").get_attribute("data-row") == order[here + 1]
    css(driver, "body").send_keys("k")
    assert css(driver, "#detail").get_attribute("data-row") == order[here]
    assert "item=r03" in driver.execute_script("return location.hash")
    open_report(driver, page, "#item=no-such-item")
    assert css(driver, "#detail").text == "No record of item no-such-item in classify-judge-a."
    css(driver, '#tabs [data-tab="items"]').click()
    css(driver, '#items th[data-col="item"]').click()  # sort by item
    first = css(driver, "#items tbody tr td").text
    assert first == min(r["meta"]["item"] for r in records(a))


def test_two_spilling_judges_compare_meaning_by_meaning(base: Path) -> None:
    from judgekit.view.compare import compare_sources, sources
    from judgekit.view.data import read_run

    x, y = [True, True, True, False, False], [True, False, True, False, True]
    runs = [read_run(spilling_run(base, "judge-x", x)), read_run(spilling_run(base, "judge-y", y))]
    found, links = sources(runs)
    assert [(s["run"], s["rater"], s["origin"]) for s in found] == [
        (0, "judge-x", "labels.csv"), (1, "judge-y", "labels.csv")
    ]  # fmt: skip
    (pair,) = compare_sources(found, links, n_resamples=0)
    # 6 items, German "line" unscored by both: 5 judged items x 5 meanings
    assert pair["n"] == 25 and pair["only_a"] == pair["only_b"] == 0
    differ = {d[0] for d in pair["disagreements"]}
    for unit, label_a, label_b, row_a, row_b in pair["disagreements"]:
        for run, row, label in ((runs[0], row_a, label_a), (runs[1], row_b, label_b)):
            record = run.records[row]
            meaning = int(unit.rsplit("|m", 1)[1])
            assert record["stage"] == "judge" and unit.startswith(record["meta"]["generator"])
            assert str(record["parsed"]["valid"][meaning]).lower() == label
    assert len(differ) == 5 * 2  # meanings 2 and 5 of every judged item
    assert {unit.rsplit("|", 1)[1] for unit in differ} == {"m1", "m4"}
    assert pair["agreement"]["value"] == pytest.approx(15 / 25)


def test_malformed_spans_of_a_segment_leave_the_detail_pane_whole(base: Path, driver) -> None:
    run = base / "errors-malformed"
    run.mkdir()
    rec = {"key": "k", "stage": "judge", "role": "judge", "route": "hosted_vllm/m", "model": "m",
           "prompt_id": "p", "prompt_hash": "h", "status": "ok", "meta": {"id": "a"}}  # fmt: skip
    (run / "records.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    (run / "summary.json").write_text('{"signature": {"pipeline": "errors"}}', encoding="utf-8")
    segments = [  # spans as no judgekit run writes them: a text, bad offsets, not objects
        {"id": "a", "source": "src", "translation": "one two", "errors": "NE major"},
        {"id": "b", "source": "src", "translation": "one two",
         "errors": [None, 3, {"start": "0", "end": 3}, {"start": 5, "end": 2},
                    {"start": 0, "end": 99},
                    {"start": 0, "end": 3, "type": "NE", "severity": "major"}]},
    ]  # fmt: skip
    (run / "segments.jsonl").write_text(
        "".join(json.dumps(s) + "\n" for s in segments), encoding="utf-8"
    )
    page = base / "errors-malformed.html"
    cli("view", str(run), "-o", str(page))
    open_report(driver, page, "#item=a")
    assert text_of(driver, "#detail .spans[data-side=translation]") == "one two"
    rec["meta"] = {"id": "b"}
    (run / "records.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    cli("view", str(run), "-o", str(page))
    open_report(driver, page, "#item=b")
    assert text_of(driver, "#detail .spans[data-side=translation]") == "oneNE \u00b7 major two"
    marks = driver.execute_script("return Array.from(document.querySelectorAll("
                                  "'#detail .spans[data-side=translation] mark'))"
                                  ".map(m => m.textContent)")  # fmt: skip
    assert marks == ["one"]  # only the one well-formed span


def test_a_spilling_record_of_the_wrong_shape_leaves_the_detail_pane_whole(
    base: Path, driver
) -> None:
    run = base / "spilling-malformed"
    run.mkdir()
    meta = {"generator": "g", "lang": "de", "word": "head", "sample": 0, "translation": "Kopf"}
    common = {"route": "r", "prompt_id": "p", "prompt_hash": "h", "status": "ok", "meta": meta}
    rows = [common | {"key": "g1", "stage": "generate", "role": "generator", "model": "g",
                      "parsed": {"meanings": [None, {"meaning": "top", "examples": 5}, 3]}},
            common | {"key": "j1", "stage": "judge", "role": "judge", "model": "m",
                      "parsed": {"valid": "yes"}}]  # fmt: skip
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    (run / "summary.json").write_text('{"signature": {"pipeline": "spilling"}}', encoding="utf-8")
    page = base / "spilling-malformed.html"
    cli("view", str(run), "-o", str(page))
    open_report(driver, page, "#item=g|de|head|s0&key=j1")
    shown = driver.execute_script(
        "return Array.from(document.querySelectorAll('#detail .meaning')).map(m => m.textContent)"
    )
    assert shown == ["2. top"]  # the one meaning that is an object; no verdicts from "yes"
    assert "raw" in text_of(driver, "#detail")  # the pane went on past the meanings


@pytest.mark.parametrize("fragment", ["#item=r03&run=-1", "#item=%E0%A4%A&run=1.5"])
def test_a_deep_link_with_a_bad_run_or_encoding_still_says_what_it_found(
    classify: tuple, driver, fragment: str
) -> None:
    *_, page = classify
    open_report(driver, page, fragment)
    detail = text_of(driver, "#detail")
    assert "r03" in detail or "No record of item" in detail, detail
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
