"""``judgekit view --labels``: the notes the command line prints about labels and raters are on
the page beside the figures they affect (headless Chromium).

The issue's case: human labels spelt "Neutral" and "Positive" where the judges say "neutral" and
"positive", in a human file that also holds a column named like judge-a's rater. The page folds
the spellings and says so (a 3x3 confusion matrix, not 5x5 with accuracy 0), leaves judge-a's
column out of the humans and says so, and gives one human tie count everywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser import chrome
from test_view import css, open_report
from view_runs import LABELS, REVIEWS, XSS, classify_runs, cli

SPELT = {"positive": "Positive", "neutral": "Neutral", "negative": "negative"}


def human(shift: int) -> str:
    return SPELT[LABELS[shift]]


@pytest.fixture(scope="module")
def driver():
    """One headless Chromium for the file's tests: each opens its page afresh."""
    with chrome() as d:
        yield d


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    base = tmp_path_factory.mktemp("view-notes")
    a, b, _ = classify_runs(base)
    ids = [f"r{i:02d}" for i in range(len(REVIEWS))] + [f"x{XSS}"]
    rows = ["item,rater,label"]
    for i, item in enumerate(ids):  # h1 as judge-a, h2 as judge-b, and judge-a's own column
        quoted = f'"{item}"' if XSS in item else item
        rows += [f"{quoted},h1,{human(i % 3)}", f"{quoted},h2,{human((i // 2) % 3)}",
                 f"{quoted},judge-a,{human(i % 3)}"]  # fmt: skip
    humans = base / "humans-spelt.csv"
    humans.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = base / "notes.html"
    cli("view", str(a), str(b), "--labels", str(humans), "-o", str(out), "--n-resamples", "0")
    return out, humans, a, b


def test_label_and_rater_notes_are_beside_the_figures_with_one_tie_count(
    page: tuple, driver
) -> None:
    from judgekit.labels.overlap import check_label_sets, without_judge
    from judgekit.labels.table import load_labels

    out, humans_path, _, _ = page
    # what the library (and so the command line) says about this file
    named = "judge 'classify-judge-a: judge-a'"
    humans, left = without_judge(
        load_labels(humans_path, format="long"), "judge-a", judge_name=named, warn=False
    )
    judge_a = [LABELS[i % 3] for i in range(12) if i != 5]
    overlap = check_label_sets(judge_a, humans.values.ravel(), warn=False)
    assert overlap.folded == {"Neutral": "neutral", "Positive": "positive"}
    ties = sum(LABELS[i % 3] != LABELS[(i // 2) % 3] for i in range(12))  # h1 vs h2, by hand
    assert ties == 8
    open_report(driver, out)
    css(driver, '#tabs [data-tab="humans"]').click()
    top = css(driver, "#tab-humans .card").text
    assert left in top  # the rater left out, named at the humans' figures
    raters = driver.execute_script(
        "return Array.from(document.querySelectorAll('#tab-humans .card:first-child td'))"
        ".map(td => td.textContent)"
    )
    assert "h1, h2" in raters
    for source in ("0", "1"):
        card = css(driver, f'#tab-humans .card[data-source="{source}"]')
        notes = [li.text for li in card.find_elements("css selector", ".label-notes li")]
        assert any("differ only in case" in n and "'Neutral'" in n for n in notes), notes
        heads = [th.text for th in card.find_elements("css selector", "table.confusion th")]
        assert set(heads[1:]) <= set(LABELS)  # one label per spelling (no 'Neutral' row)
        assert len(card.find_elements("css selector", "table.confusion td.cell")) == 4  # 2x2
        ties_cell = card.find_element("css selector", 'td[data-path="n_ties"]')
        assert ties_cell.text == str(ties)
    card_a = css(driver, '#tab-humans .card[data-source="0"]')
    accuracy = card_a.find_element("css selector", 'td[data-path="accuracy"]').text
    assert accuracy.startswith("1")  # judge-a = h1 wherever h1 and h2 agree, not 0
    first_ties = css(driver, '#tab-humans .card td[data-path="n_ties"]').text
    assert first_ties == str(ties)
    side = driver.execute_script(
        "return Array.from(document.querySelectorAll('#judges tbody tr'))"
        ".map(tr => tr.lastElementChild.textContent)"
    )
    assert all("differ only in case" in s for s in side)  # in the side-by-side table too
    css(driver, '#tabs [data-tab="which"]').click()
    heads = [h.text for h in driver.find_elements("css selector", "#tab-which h3")]
    counts = {int(m) for h in heads for m in re.findall(r"(\d+) human ties", h)}
    assert counts == {ties}, heads
    which = css(driver, "#tab-which").text
    assert left in which  # the rater note, word for word
    assert "'Neutral'" in which  # the folding note on the Which judge? tab as well


def test_which_judge_gives_one_table_set_per_language(page: tuple, tmp_path: Path, driver) -> None:
    import json
    import shutil

    from judgekit.view.clusters import compare_with_humans
    from judgekit.view.compare import sources
    from judgekit.view.data import read_run
    from judgekit.view.which_facts import item_languages
    from judgekit.view.which_judge import which_judge_sources

    _, humans, a, b = page
    runs = []
    for run in (a, b):  # the same runs, their items now carrying a language
        copy = tmp_path / run.name
        shutil.copytree(run, copy)
        rows = [json.loads(line) for line in (copy / "items.jsonl").read_text("utf-8").splitlines()]
        for i, row in enumerate(rows):
            row["lang"] = "deu_Latn" if i % 2 == 0 else "hin_Deva"
        (copy / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
        runs.append(copy)
    out = tmp_path / "languages.html"
    cli("view", *map(str, runs), "--labels", str(humans), "-o", str(out), "--n-resamples", "0")
    data = [read_run(r) for r in runs]
    found, _ = sources(data)
    expected = which_judge_sources(compare_with_humans(
        found, humans, n_resamples=0, languages=item_languages(data)))  # fmt: skip
    assert [f["facet"] for f in expected["facets"]] == ["overall", "deu_Latn", "hin_Deva"]
    per_lang = [f["items"] for f in expected["facets"]]
    assert per_lang[0] == per_lang[1] + per_lang[2] > 0  # the languages split the items
    open_report(driver, out)
    css(driver, '#tabs [data-tab="which"]').click()
    shown = driver.execute_script(
        "return Array.from(document.querySelectorAll('#tab-which .which-facet'))"
        ".map(s => [s.dataset.facet, s.querySelector('h3').textContent,"
        " s.querySelectorAll('.which-table').length])"
    )
    assert [s[0] for s in shown] == ["overall", "deu_Latn", "hin_Deva"]
    for (_, head, tables), n in zip(shown, per_lang, strict=True):
        assert head.split(" (")[1].startswith(f"{n} items") and tables >= 1
