"""One spelling per language wherever items' facets are read (judgekit.data.languages): the rule
on its own, then ``calibrate compare --by language`` and drift anchors, which read facets from
their own files but through the same rule (``gate``/``estimate``: tests/test_gate_facets.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit.calibration.compare import CompareOptions, compare
from judgekit.data.languages import check_item_languages, language_value
from judgekit.drift.anchors import anchor_frame, freeze_anchors, load_anchors
from judgekit.errors import InputError
from judgekit.metrics.perm_both import PermutationSettings

FAST = dict(n_resamples=50, permutations=PermutationSettings(n_permutations=200))


@pytest.mark.parametrize(
    ("given", "canonical"),
    [("de", "de"), ("DE", "de"), (" De ", "de"), ("pt_BR", "pt-br"), ("PT-BR", "pt-br"),
     ("en-de", "en-de"), ("zh_Hant_TW", "zh-hant-tw"), ("hin_deva", "hin_Deva"),
     ("HIN-DEVA", "hin_Deva"), ("fra_latn_Canada", "fra_Latn_Canada"), ("eng", "eng"),
     ("JAPANESE", "Japanese"), ("norwegian  bokmål", "Norwegian Bokmål"), ("d\x1be", "d\x1be"),
     ("  ", None), (None, None)],
)  # fmt: skip
def test_language_values_have_one_spelling(given, canonical):
    assert language_value(given) == canonical


@pytest.mark.parametrize("given", [7, 3.5, True, ["de"], {"code": "de"}, "5", "3.0"])
def test_a_language_that_is_not_text_with_a_letter_is_refused_where_it_is(given):
    with pytest.raises(InputError) as err:
        language_value(given, path="items.jsonl", line=4, field="lang")
    assert (err.value.path, err.value.line, err.value.field) == ("items.jsonl", 4, "lang")


def test_language_and_lang_must_agree_after_the_rule():
    check_item_languages("a", {"language": "de", "lang": "de"})
    check_item_languages("a", {"language": "de", "lang": None})
    with pytest.raises(InputError, match="item 'a': language is 'de' but lang is 'fr'"):
        check_item_languages("a", {"language": "de", "lang": "fr"}, path="x.csv", line=2)


def _labels(path: Path, spell) -> Path:
    rows = ["item,rater,label,language"]
    for i in range(40):
        lang = ("de", "fr")[i % 2]
        human = ("yes", "no")[(i // 2) % 2]
        judge = human if i % 5 else ("no" if human == "yes" else "yes")
        rows += [f"i{i},ann,{human},{spell(lang, i)}", f"i{i},judge,{judge},{spell(lang, i)}"]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_compare_by_language_folds_the_case_of_codes(tmp_path: Path):
    results = []
    for name, spell in (("mixed", lambda lang, i: lang.upper() if i % 4 < 2 else lang),
                        ("lower", lambda lang, i: lang)):  # fmt: skip
        path = _labels(tmp_path / f"{name}.csv", spell)
        options = CompareOptions(by="language", **FAST)
        results.append(compare(f"{path}::ann", [f"J={path}::judge"], options))
    mixed, lower = results
    assert set(mixed.counts) == {"de", "fr"} and mixed.counts == lower.counts
    values = [{(r.facet, r.statistic): r.value for r in x.rows} for x in results]
    assert values[0] == values[1] and ("de", "accuracy") in values[0]


def test_compare_refuses_a_row_whose_language_fields_disagree(tmp_path: Path):
    path = _labels(tmp_path / "labels.csv", lambda lang, i: lang)
    text = path.read_text().splitlines()
    text = [text[0] + ",lang"] + [r + ("," + ("hi" if n == 5 else r.rsplit(",", 1)[1]))
                                  for n, r in enumerate(text[1:], start=2)]  # fmt: skip
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        compare(f"{path}::ann", [f"J={path}::judge"], CompareOptions(by="language", **FAST))
    assert (err.value.line, err.value.field) == (5, "lang")
    assert "item 'i1': language is 'fr' but lang is 'hi'" in err.value.message


def test_drift_anchors_group_languages_by_one_spelling(tmp_path: Path):
    anchors = tmp_path / "anchors.csv"
    anchors.write_text("item,human,language\na,yes,DE\nb,no,de\nc,yes, fr \n", encoding="utf-8")
    freeze_anchors(anchors)
    frame, _ = load_anchors(anchors)
    data = anchor_frame(frame, frame.set_index("item")["human"], frame.set_index("item")["human"],
                        "label")  # fmt: skip
    assert list(data["group"]) == ["de", "de", "fr"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item": "a", "human": "yes", "language": "de"}\n'
                   '{"item": "b", "human": "no", "language": 49}\n', encoding="utf-8")  # fmt: skip
    with pytest.raises(InputError) as err:
        freeze_anchors(bad)
    assert (err.value.line, err.value.field) == (2, "language")


def test_compare_by_language_reads_a_runs_judged_items_as_the_gate_does(tmp_path: Path):
    """A classify run keeps its items' ``lang`` in items.jsonl, not in labels.csv: compare
    --by language finds it there (the one facet reader), spelt as the gate spells it."""
    import pandas as pd
    from test_gate_facets import classify_run

    items = [{"id": f"t{i:03d}", "text": f"Review {i}: fine.", "lang": ("DE", "fr")[i % 2]}
             for i in range(40)]  # fmt: skip
    run_dir = classify_run(tmp_path, items)
    human = tmp_path / "human.csv"
    pd.read_csv(run_dir / "labels.csv").assign(rater="ann").to_csv(human, index=False)
    result = compare(str(human), [f"J={run_dir}"], CompareOptions(by="language", **FAST))
    assert {f: c["items"] for f, c in result.counts.items()} == {"de": 20, "fr": 20}


def test_the_viewers_item_languages_follow_the_same_rule(tmp_path: Path):
    from judgekit.view.data import RunData
    from judgekit.view.which_facts import item_languages

    rows = [{"id": "a", "lang": "DE"}, {"id": "b", "language": "de"}, {"id": "c", "lang": "fr",
            "language": "FR"}, {"id": "d"}]  # fmt: skip
    run = RunData(tmp_path, "run", {}, [], side={"items.jsonl": rows})
    assert item_languages([run]) == {"a": "de", "b": "de", "c": "fr"}
    run.side["items.jsonl"].append({"id": "e", "lang": 3})
    with pytest.raises(InputError) as err:
        item_languages([run])
    assert err.value.path == str(tmp_path / "items.jsonl") and err.value.field == "lang"


def test_two_files_that_give_an_item_two_languages_are_refused_naming_both(tmp_path: Path):
    from judgekit.calibration.estimate.facets import item_facets

    judge = tmp_path / "judge.csv"
    judge.write_text("item,rater,label,language\na,j,yes,DE\nb,j,no,fr\n", encoding="utf-8")
    human = tmp_path / "human.csv"
    human.write_text("item,rater,label,language\na,h,yes,de\nb,h,no,hi\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        item_facets(judge, human, by="language")
    assert err.value.path == str(human) and err.value.field == "language"
    assert f"item 'b': language is 'hi' here but 'fr' in {judge}" in err.value.message
    human.write_text("item,rater,label,language\na,h,yes,de\nb,h,no,FR\n", encoding="utf-8")
    assert item_facets(judge, human, by="language")["language"].to_dict() == {"a": "de", "b": "fr"}
