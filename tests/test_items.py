"""Benchmark item loaders (judgekit.data.items) on the real Global-MMLU-Lite and MMLU dev files, and
on small hand-made files for every accepted spelling and every error."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import shared_path

from judgekit.data.items import load_items
from judgekit.data.tables import write_table
from judgekit.errors import InputError
from judgekit.labels.human_votes import human_votes, load_human_votes

LITE = ("benchmark-items", "global-mmlu-lite-en")
DEV = ("benchmark-items", "mmlu-dev-en-ja")
CS_OF = {"none": "CA", "cultural": "CS", "regional": "CS", "dialect": "CS"}


def test_global_mmlu_lite_has_400_items_200_cs_and_the_manifest_vote_totals() -> None:
    items = load_items(shared_path(*LITE, "global_mmlu_lite_en_test.jsonl"), language="en")
    assert len(items.items) == 400 and len({it.id for it in items.items}) == 400
    first = items.items[0]
    assert first.id == "astronomy/test/58" and first.answer == "C" and len(first.choices) == 4
    assert first.benchmark == "global_mmlu_lite_en_test" and first.language == "en"
    votes = human_votes(items.items)
    assert votes is not None and votes.published.value_counts().to_dict() == {"CS": 200, "CA": 200}
    knowledge = Counter(v for v in votes.knowledge.values.ravel() if v is not None)
    assert knowledge == {"none": 1056, "regional": 443, "cultural": 235, "dialect": 24}
    time = Counter(v for v in votes.time_sensitive.values.ravel() if v is not None)
    assert time == {"no": 1651, "yes": 107}
    per_item = Counter(votes.knowledge.ratings_per_item().tolist())
    assert per_item == {3: 15, 4: 277, 5: 67, 6: 23, 7: 12, 8: 6}  # MANIFEST "Checks run"


def test_published_label_is_cs_when_at_least_half_the_votes_need_knowledge() -> None:
    # Global-MMLU's rule as the MANIFEST observes it: ties (exactly half) are labelled CS
    items = load_items(shared_path(*LITE, "global_mmlu_lite_en_test.jsonl"), language="en")
    votes = human_votes(items.items, cs_of=CS_OF)
    cs = votes.cs.frame
    share = (cs == "CS").sum(axis=1) / cs.notna().sum(axis=1)
    rule = share.map(lambda s: "CS" if s >= 0.5 else "CA")
    assert (rule == votes.published.reindex(rule.index)).all()
    assert int((share == 0.5).sum()) == 83  # the ties the published label breaks towards CS


def test_source_file_with_python_literal_lists_gives_the_same_items_and_votes() -> None:
    derived = load_items(shared_path(*LITE, "global_mmlu_lite_en_test.jsonl"), language="en")
    source = load_items(shared_path(*LITE, "global_mmlu_lite_en_test.source.jsonl"), language="en")
    pairs = zip(derived.items, source.items, strict=True)
    assert all((a.id, a.choices, a.answer) == (b.id, b.choices, b.answer) for a, b in pairs)
    a, b = human_votes(derived.items), human_votes(source.items)
    assert a.knowledge.frame.fillna("-").equals(b.knowledge.frame.fillna("-"))
    assert (a.published == b.published).all()


def test_mmlu_dev_english_and_japanese_align_by_id() -> None:
    en = load_items(shared_path(*DEV, "mmlu_dev_en.jsonl"), language="en")
    ja = load_items(shared_path(*DEV, "global_mmlu_dev_ja.jsonl"))  # has a language field
    assert len(en.items) == len(ja.items) == 285
    assert [i.id for i in en.items] == [i.id for i in ja.items]
    assert {i.language for i in ja.items} == {"ja"} and {i.language for i in en.items} == {"en"}
    assert [i.answer for i in en.items] == [i.answer for i in ja.items]
    assert human_votes(en.items) is None  # the dev split is unannotated
    assert ja.items[0].extra["is_edited"] is True  # extra fields are kept


def test_csv_with_option_columns_and_index_answers_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "quiz.csv"
    path.write_text(
        "qid,question,option_a,option_b,option_c,answer,language,source\n"
        'q1,"Capital of Norway?",Oslo,Bergen,Tromsø,0,nb,atlas\n'
        "q2,2+2?,3,4,5,B,nb,arith\n",
        encoding="utf-8",
    )
    items = load_items(path)
    assert [(i.id, i.answer, i.choices) for i in items.items] == [
        ("q1", "A", ("Oslo", "Bergen", "Tromsø")),
        ("q2", "B", ("3", "4", "5")),
    ]
    assert items.items[0].extra == {"qid": "q1", "source": "atlas"}
    assert items.items[0].text() == "Capital of Norway?\nA. Oslo\nB. Bergen\nC. Tromsø"
    copy = tmp_path / "copy.csv"
    write_table(copy, items.rows, items.columns, items.format)
    assert load_items(copy).rows == items.rows  # same cells, same column order
    assert copy.read_text(encoding="utf-8").splitlines()[0] == ",".join(items.columns)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"id": "a", "choices": ["x", "y"], "language": "en"}], ":1: field 'question'"),
        ([{"id": "a", "question": "q", "language": "en"}], ":1: no choices"),
        (
            [{"id": "a", "question": "q", "choices": ["x", "y"], "answer": "E", "language": "en"}],
            ":1: field 'answer'",
        ),
        (
            [{"id": "a", "question": "q", "choices": ["x", "y"], "language": "en"}] * 2,
            ":2: duplicate id 'a' (first on line 1)",
        ),
        ([{"id": "a", "question": "q", "choices": ["x", "y"]}], ":1: no language"),
    ],
)
def test_bad_items_are_reported_with_file_line_and_field(
    tmp_path: Path, lines: list[dict], message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_items(path)
    assert message in str(err.value) and str(path) in str(err.value)


def test_human_labels_from_a_long_label_file_match_items_by_id(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    rows = [{"id": f"q{i}", "question": f"Q{i}?", "choices": ["a", "b"]} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    items = load_items(path, language="da").items
    labels = tmp_path / "humans.csv"
    labels.write_text(
        "item,rater,label\nq0,ann1,regional\nq0,ann2,none\nq0,ann3,regional\nq1,ann1,none\n"
    )
    votes = load_human_votes(items, labels, CS_OF)
    assert votes.items == ["items|q0", "items|q1"]
    assert votes.cs.frame.loc["items|q0"].tolist() == ["CS", "CA", "CS"]
    assert votes.reference_cs() == {"items|q0": "CS", "items|q1": "CA"}
    labels.write_text("item,rater,label\nq0,ann1,maybe\n")
    with pytest.raises(InputError, match="labels must be"):
        load_human_votes(items, labels, CS_OF)
    labels.write_text("item,rater,label\nzz,ann1,CS\n")
    with pytest.raises(InputError, match="no item in common"):
        load_human_votes(items, labels, CS_OF)


def test_a_csv_saved_with_a_byte_order_mark_keeps_its_id_column(tmp_path: Path) -> None:
    """Regression: read as ``utf-8``, the header's first name was ``\\ufeffid``, so every item
    silently took its line number as id."""
    path = tmp_path / "items.csv"
    text = 'id,question,choices,answer\nq7,Capital of Peru?,"[""Lima"", ""Quito""]",A\n'
    path.write_bytes("\ufeff".encode() + text.encode("utf-8"))
    items = load_items(path, language="en")
    assert [it.id for it in items.items] == ["q7"]
    assert items.columns[0] == "id"


def test_an_item_file_with_a_repeated_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "items.tsv"
    path.write_text("id\tquestion\tid\n1\tq\t2\n", encoding="utf-8")
    with pytest.raises(InputError, match="duplicate column 'id'") as caught:
        load_items(path, language="en")
    assert caught.value.line == 1 and caught.value.field == "id"
