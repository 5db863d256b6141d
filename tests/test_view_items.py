"""``judgekit view`` shows what was judged and what the judge got wrong: headless Chromium on
reports of real classify, pairwise, errors and spilling runs (stub judges on 127.0.0.1 with
scripted answers, so every expected value is known by hand), against human labels.

1. the item itself (classified text, pairwise instruction and outputs, MQM segment) in the detail
   pane, in compare and in judge vs humans; 2. pairwise verdicts, order facet, outputs side by
   side with the winner, the resolved verdict, compare "open", ids in numeric order; 3. the human
   ceiling, the individual votes, the human majority in judge-vs-judge lists, the "vs humans"
   filter, confusion cells that list their items, every judge side by side, meanings numbered
   1-5 with the disputed one highlighted; 4. the headline first, readable names, severities in
   order, plurals; 5. a 10 MB answer cut behind "show all".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser import chrome
from fault_server import FaultServer
from test_view import css, fmt, open_report, records, text_of
from view_runs import (
    LABELS,
    PAIR_ITEMS,
    REVIEWS,
    XSS,
    classify_runs,
    cli,
    errors_run,
    pairwise_humans,
    pairwise_run,
    pairwise_verdict,
    spilling_run,
)

SWAP = {"1": "2", "2": "1"}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("view-items")


@pytest.fixture(scope="module")
def driver():
    with chrome() as d:
        yield d


@pytest.fixture(scope="module")
def classify(base: Path) -> tuple[Path, Path, Path, Path]:
    a, b, humans = classify_runs(base)
    page = base / "classify.html"
    cli("view", str(a), str(b), "--labels", str(humans), "-o", str(page), "--n-resamples", "200")
    return a, b, humans, page


@pytest.fixture(scope="module")
def pairwise(base: Path) -> tuple[Path, Path, Path, str]:
    run, humans = pairwise_run(base), pairwise_humans(base)
    page = base / "pairwise.html"  # no CI is read from this page: no resamples
    said = cli("view", str(run), "--labels", str(humans), "-o", str(page), "--n-resamples", "0")
    return run, humans, page, said


def rows_of(driver, selector: str) -> list[list[str]]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(tr =>"
        " Array.from(tr.children).map(td => td.textContent))",
        selector,
    )


def click(driver, element) -> None:
    """Click ``element`` after scrolling it to the middle (clear of the sticky header)."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def block(driver, path: list[str]):
    """The summary block of ``path`` (its data-block attribute is the path as JSON)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#tab-summary .block'))"
        ".find(b => b.dataset.block === arguments[0])",
        json.dumps(path, separators=(",", ":")),
    )


def item_text(i: int) -> str:
    return REVIEWS[i] if i < len(REVIEWS) else f"A review quoting {XSS} verbatim."


# -- 1. the item itself ------------------------------------------------------------------------
def test_the_classified_text_is_in_the_detail_pane_compare_and_judge_vs_humans(
    classify: tuple, driver
) -> None:
    a, b, _, page = classify
    assert json.loads((a / "summary.json").read_text("utf-8"))["files"]["items"] == "items.jsonl"
    open_report(driver, page, "#item=r03")
    assert text_of(driver, "#detail pre.item-text") == REVIEWS[3]
    open_report(driver, page, "#item=" + f"x{XSS}")  # hostile text shown as text
    assert text_of(driver, "#detail pre.item-text") == item_text(11)
    assert driver.execute_script("return document.querySelectorAll('img[src=\"x\"]').length") == 0
    css(driver, '#tabs [data-tab="compare"]').click()
    shown = rows_of(driver, "#pair .disagreements tbody tr")
    assert [r[1] for r in shown] == [item_text(int(r[0][1:])) for r in shown]  # item column
    css(driver, "#pair button.open").click()
    first = shown[0][0]
    assert [p.text for p in driver.find_elements("css selector", "#pair-detail pre.item-text")] == [
        item_text(int(first[1:]))
    ] * 2  # fmt: skip
    css(driver, '#tabs [data-tab="humans"]').click()
    card = driver.find_elements("css selector", "#tab-humans .card[data-source]")[1]
    card.find_element("css selector", "button.open").click()
    opened = card.find_element("css selector", ".pane .detail-item").text
    assert card.find_element("css selector", ".pane pre.item-text").text == item_text(
        int(opened[1:])
    )


def test_the_mqm_segment_is_in_the_detail_of_compare(base: Path, driver) -> None:
    one = errors_run(base, name="errors-one")
    two = errors_run(base, name="errors-two")
    page = base / "errors-two.html"
    cli("view", str(one), str(two), "-o", str(page), "--n-resamples", "0")
    open_report(driver, page)
    css(driver, '#tabs [data-tab="compare"]').click()
    assert "0 disagreements" in css(driver, "#pair .paged").text  # one judge twice: all agree
    css(driver, '#pair td[data-cell="critical|critical"]').click()  # the agreeing cell lists it
    assert "1 agreement on critical" in css(driver, "#pair .paged .what").text
    css(driver, "#pair button.open").click()
    spans = driver.find_elements("css selector", "#pair-detail .spans[data-side=translation]")
    assert [s.text.startswith("Wang Wei") for s in spans] == [True, True]
    sources = driver.find_elements("css selector", "#pair-detail .spans[data-side=source]")
    assert [s.text for s in sources] == ["王伟在成都开了一家店。"] * 2


# -- 2. pairwise -------------------------------------------------------------------------------
def expected_pairwise() -> dict[tuple[str, str], str]:
    """(item id, order) -> the verdict in the original outputs' identities, by hand."""
    items = [json.loads(line) for line in PAIR_ITEMS.read_text("utf-8").splitlines()]
    out = {}
    for k, it in enumerate(items):
        gold = str(it["label"])
        out[(it["id"], "original")] = pairwise_verdict(k, gold, False)
        out[(it["id"], "swapped")] = SWAP[pairwise_verdict(k, gold, True)]
    return out


def test_pairwise_items_show_verdicts_order_outputs_and_the_resolved_pair(
    pairwise: tuple, driver
) -> None:
    from selenium.webdriver.support.ui import Select

    run, _, page, said = pairwise
    assert "1 run, 40 records" in said and "1 runs" not in said
    expected = expected_pairwise()
    open_report(driver, page)
    css(driver, '#tabs [data-tab="items"]').click()
    shown = {(r[0], r[3]): r[6] for r in rows_of(driver, "#items tbody tr")}  # item, order, label
    assert shown == {k: f"output {v}" for k, v in expected.items()}  # 40 verdicts, none "-"
    order = Select(css(driver, 'select[data-facet="meta.order"]'))
    assert [o.text for o in order.options] == ["order: all", "order: original (20)",
                                               "order: swapped (20)"]  # fmt: skip
    # item 17 (id 85), swapped: the judge said "2" as shown, which is output 1; the pair resolves
    items = [json.loads(line) for line in PAIR_ITEMS.read_text("utf-8").splitlines()]
    rec = next(r for r in records(run) if r["meta"]["item"] == "85"
               and r["meta"]["order"] == "swapped")  # fmt: skip
    open_report(driver, page, "#key=" + rec["key"])
    outputs = driver.find_elements("css selector", "#detail .outputs .output")
    assert [o.find_element("css selector", "pre").text for o in outputs] == [
        items[17]["output_1"], items[17]["output_2"]]  # fmt: skip
    winner = [
        o.get_attribute("data-output") for o in outputs if "winner" in o.get_attribute("class")
    ]
    assert winner == [expected[("85", "swapped")]]
    assert "shown as Output (b)" in outputs[0].text  # swapped: output 1 was shown second
    assert text_of(driver, "#detail pre.instruction") == items[17]["input"]
    verdict = next(
        r for r in (run / "verdicts.csv").read_text("utf-8").splitlines() if r.startswith("85,")
    )
    resolved, status = verdict.split(",")[-2:]
    assert css(driver, "#detail .resolved").text == f"resolved: output {resolved} ({status})"
    # compare: every disagreement of the two orders opens both records
    css(driver, '#tabs [data-tab="compare"]').click()
    assert "5 disagreements" in css(driver, "#pair .paged .what").text  # items 0, 20, 40, 60, 80
    for k in range(5):
        click(driver, driver.find_elements("css selector", "#pair button.open")[k])
        keys = [p.get_attribute("data-key") for p in
                driver.find_elements("css selector", "#pair-detail .pane")]  # fmt: skip
        assert len(keys) == 2 and all(keys), "no record of this unit"
        assert keys[0].split("|")[3:5] != keys[1].split("|")[3:5]  # #original vs #swapped
    # ids that are numbers sort as numbers
    css(driver, '#tabs [data-tab="items"]').click()
    css(driver, '#items th[data-col="item"]').click()
    ids = [r[0] for r in rows_of(driver, "#items tbody tr")]
    assert ids == sorted(ids, key=int) and ids[:6] == ["0", "0", "5", "5", "10", "10"]


# -- 3. what the judge got wrong -----------------------------------------------------------------
def test_judge_vs_humans_shows_the_ceiling_votes_and_every_judge_side_by_side(
    classify: tuple, driver, tmp_path: Path
) -> None:
    a, b, humans, page = classify
    ceilings = []
    for run in (a, b):  # what `judgekit calibrate judge` prints and writes
        out = tmp_path / run.name
        cli("calibrate", "judge", "--judge", str(run), "--human", str(humans),
            "--n-resamples", "200", "--out", str(out))  # fmt: skip
        ceiling = json.loads((out / "judge_calibration.json").read_text())["human_ceiling"]
        ceilings.append(ceiling)
    open_report(driver, page)
    css(driver, '#tabs [data-tab="humans"]').click()
    table = rows_of(driver, "#judges tbody tr")
    assert [r[0] for r in table] == ["classify-judge-a: judge-a", "classify-judge-b: judge-b"]

    def ci(est: dict) -> str:
        return f"{fmt(est['value'])} [{fmt(est['ci'][0])}, {fmt(est['ci'][1])}]"

    for row, ceiling in zip(table, ceilings, strict=True):
        assert row[5] == ci(ceiling["humans"]["accuracy"])  # the ceiling, next to the judge
        assert row[6] == ci(ceiling["judge"]["accuracy"])
    assert [r[7] for r in table] == ["0", "8"]
    card = driver.find_elements("css selector", "#tab-humans .card[data-source]")[1]
    listed = rows_of(driver, '#tab-humans .card[data-source="1"] .disagreements tbody tr')
    ids = [int(r[0][1:]) for r in listed]
    assert ids == [i for i in range(12) if i != 5 and LABELS[i % 3] != LABELS[(i // 2) % 3]]
    for i, row in zip(ids, listed, strict=True):  # majority, judge, and every individual vote
        human, judge = LABELS[i % 3], LABELS[(i // 2) % 3]
        assert row[2:5] == [human, judge, f"h1 {human} · h2 {judge} · h3 {human}"]
    # a click on a confusion cell lists its items; on the diagonal, the agreeing ones
    card.find_element("css selector", 'td[data-cell="neutral|negative"]').click()
    cell = [
        int(r[0][1:])
        for r in rows_of(driver, '#tab-humans .card[data-source="1"] .disagreements tbody tr')
    ]
    assert cell == [
        i for i in ids if LABELS[i % 3] == "neutral" and LABELS[(i // 2) % 3] == "negative"
    ]
    assert cell == [2, 8]
    card.find_element("css selector", 'td[data-cell="positive|positive"]').click()
    same = [
        r[0] for r in rows_of(driver, '#tab-humans .card[data-source="1"] .disagreements tbody tr')
    ]
    assert same == ["r00", "r06"] and "2 agreements on positive" in card.text
    card.find_element("css selector", "button.all").click()
    assert "8 disagreements" in card.find_element("css selector", ".what").text
    # the votes are in the detail pane too
    card.find_element("css selector", "button.open").click()
    votes = card.find_elements("css selector", ".pane .votes .vote")
    assert [v.text for v in votes] == ["h1 negative", "h2 positive", "h3 negative"]  # r01


def test_judge_vs_judge_lists_the_human_majority_and_items_filter_on_humans(
    classify: tuple, driver
) -> None:
    from selenium.webdriver.support.ui import Select

    a, b, _, page = classify
    open_report(driver, page)
    css(driver, '#tabs [data-tab="compare"]').click()
    listed = rows_of(driver, "#pair .disagreements tbody tr")
    assert [r[4] for r in listed] == [LABELS[int(r[0][1:]) % 3] for r in listed]  # majority
    css(driver, '#tabs [data-tab="items"]').click()
    Select(css(driver, "#run-select")).select_by_visible_text("classify-judge-b")
    pick = Select(css(driver, 'select[data-facet="vs_humans"]'))
    assert [o.text for o in pick.options] == ["vs humans: all", "vs humans: (none) (1)",
                                              "vs humans: agrees (3)",
                                              "vs humans: disagrees (8)"]  # fmt: skip
    pick.select_by_visible_text("vs humans: disagrees (8)")
    assert css(driver, "#count").text == "8 of 12 records"
    wrong = sorted(r[0] for r in rows_of(driver, "#items tbody tr"))
    assert wrong == sorted(r[0] for r in listed)  # judge-a agrees with the majority everywhere


def test_spilling_meanings_are_numbered_as_on_the_page_and_the_disputed_one_marked(
    base: Path, driver
) -> None:
    x, y = [True, True, True, False, False], [True, False, True, False, True]
    one, two = spilling_run(base, "judge-x", x), spilling_run(base, "judge-y", y)
    rows = ["item,rater,label"]
    for line in (one / "labels.csv").read_text("utf-8").splitlines()[1:]:
        unit, _, label = line.split(",")
        flipped = "false" if label == "true" else "true"
        rows += [f"{unit},h1,{label}", f"{unit},h2,{label}",
                 f"{unit},h3,{flipped if unit.endswith('|m1') else label}"]  # fmt: skip
    humans = base / "spilling-humans.csv"
    humans.write_text("\n".join(rows) + "\n", encoding="utf-8")
    page = base / "spilling-two.html"
    cli("view", str(one), str(two), "--labels", str(humans), "-o", str(page), "--n-resamples", "0")
    open_report(driver, page)
    css(driver, '#tabs [data-tab="compare"]').click()
    listed = rows_of(driver, "#pair .disagreements tbody tr")
    assert len(listed) == 10 and {r[0].rsplit(" · ", 1)[1] for r in listed} == {
        "meaning 2", "meaning 5"}  # m1 and m4 in labels.csv, 1-5 on the page  # fmt: skip
    assert listed[0][1] == "head → Kopf (de)"  # what the item is, in a few words
    css(driver, "#pair button.open").click()
    disputed = [m.get_attribute("data-meaning") for m in
                driver.find_elements("css selector", "#pair-detail .meaning.disputed")]  # fmt: skip
    assert disputed == [listed[0][0][-1]] * 2
    votes = driver.find_elements("css selector", '#pair-detail .pane')[0].find_elements(
        "css selector", ".meaning")[1].find_elements("css selector", ".vote")  # fmt: skip
    assert [v.text for v in votes] == ["h1 true", "h2 true", "h3 false"]  # meaning 2, by hand


# -- 4. the summary ------------------------------------------------------------------------------
def test_the_summary_leads_with_the_headline_in_readable_words(
    base: Path, pairwise: tuple, driver
) -> None:
    run = spilling_run(base, "judge-h")
    page = base / "spilling-h.html"
    cli("view", str(run), "-o", str(page))
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    open_report(driver, page)
    blocks = driver.execute_script(
        "return Array.from(document.querySelectorAll('#tab-summary .block'))"
        ".map(b => b.dataset.block)"
    )
    assert blocks[0] == '["headline"]' and blocks.index('["usage"]') > 0
    assert blocks.index('["signature"]') > blocks.index('["usage"]')
    first = css(driver, "#tab-summary .block.headline td")
    low, high = summary["spilling_rate_ci"]
    assert first.text == f"{fmt(summary['spilling_rate'])} [{fmt(low)}, {fmt(high)}]"
    assert low < summary["spilling_rate"] < high
    headers = [
        t.text for t in block(driver, ["rates", "by_lang"]).find_elements("css selector", "th")
    ]
    assert headers == ["lang", "items", "judged", "invalid", "spilling rate", "mean item rate",
                       "SD of item rates"]  # fmt: skip
    by_lang = block(driver, ["items", "by_model_lang"]).text
    assert "judgment unscored 1" in by_lang and "{" not in by_lang  # no raw JSON in cells
    # pairwise: the judge's accuracy and positional agreement lead
    _, _, ppage, _ = pairwise
    open_report(driver, ppage)
    names = [
        t.text for t in driver.find_elements("css selector", "#tab-summary .block.headline th")
    ]
    assert names[:2] == ["accuracy vs gold [95% CI], stub-model (Natural)",
                         "positional agreement, stub-model (Natural)"]  # fmt: skip
    assert "accuracy vs the human majority [95% CI], stub-model" in names


def test_severities_are_in_severity_order(base: Path, driver) -> None:
    from selenium.webdriver.support.ui import Select

    rows = [{"id": k, "source": f"源{k}。", "translation": t, "system": "s1"}
            for k, t in (("w", "A shop."), ("x", "A big shop."), ("y", "A red shop."),
                         ("z", "A shop here."))]  # fmt: skip

    def one(quote: str, kind: str, severity: str) -> dict:
        return {
            "no_errors": False,
            "errors": [{"quote": quote, "type": kind, "severity": severity}],
        }

    answers = {
        "A shop.": {"no_errors": True, "errors": []},
        "A big shop.": one("big", "MIS", "critical"),
        "A red shop.": one("red", "MIS", "minor"),
        "A shop here.": one("here", "ADD", "major"),
    }
    run = errors_run(base, rows, answers, name="errors-severities")
    page = base / "severities.html"
    said = cli("view", str(run), "-o", str(page))
    assert "1 run, 4 records" in said
    open_report(driver, page)
    css(driver, '#tabs [data-tab="items"]').click()
    options = [o.text for o in Select(css(driver, 'select[data-facet="label"]')).options]
    assert options == ["label: all", "label: no-error (1)", "label: minor (1)", "label: major (1)",
                       "label: critical (1)"]  # fmt: skip
    css(driver, '#items th[data-col="label"]').click()
    assert [r[0] for r in rows_of(driver, "#items tbody tr")] == ["w", "y", "z", "x"]


# -- 5. long answers -----------------------------------------------------------------------------
def test_a_10_mb_answer_is_cut_in_the_detail_pane_behind_show_all(base: Path, driver) -> None:
    huge = "spam " * (2 * 1024 * 1024)  # 10 MiB of rationale: outside the schema, unscored
    items = base / "long.jsonl"
    items.write_text('{"id": "long", "text": "A long one."}\n{"id": "short", "text": "Ok."}\n')

    def answer(body: dict) -> str:
        text = body["messages"][0]["content"]
        why = huge if "A long one." in text else "short"
        return json.dumps({"label": "positive", "rationale": why})

    out = base / "classify-long"
    with FaultServer(answer_fn=answer) as srv:
        config = base / "long.yaml"
        config.write_text(
            f"pipeline: classify\njudge: {{model: hosted_vllm/j, api_base: '{srv.base_url}', "
            "max_reasks: 0, max_retries: 1, timeout: 60}\n"
            f"classify:\n  items: {items}\n  labels: {LABELS}\n  task: Sentiment.\n",
            encoding="utf-8",
        )
        cli("run", str(config), "--out", str(out), "--no-cache")
    raw = next(r["raw"] for r in records(out) if r["meta"]["item"] == "long")
    assert len(raw) > 10_000_000
    page = base / "long.html"
    cli("view", str(out), "-o", str(page))
    open_report(driver, page, "#item=long")
    shown = driver.execute_script("return document.querySelector('#detail pre.raw').textContent")
    assert shown == raw[:20000]
    assert (
        driver.execute_script("return document.querySelector('main').textContent.length") < 50_000
    )
    button = css(driver, "#detail .show-all")
    assert button.text == f"show all ({len(raw):,} characters)"
    button.click()
    whole = "var v = document.querySelector('#detail textarea.raw').value;"
    whole += "return [v.length, v.slice(-40)]"
    assert driver.execute_script(whole) == [len(raw), raw[-40:]]
