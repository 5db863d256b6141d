"""The validation table on the real Global-MMLU-Lite votes (400 items, 3-8 annotators each),
with "judges" whose figures are known by hand, and the calibration/held-out split."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest
from conftest import shared_path

from judgekit.calibration.cultural import markdown_table, validate_subset
from judgekit.data.items import load_items
from judgekit.labels.human_votes import human_votes
from judgekit.labels.majority import TIE, majority_vote
from judgekit.pipelines.cultural import assign_splits, jury_label, majority

LITE = ("benchmark-items", "global-mmlu-lite-en", "global_mmlu_lite_en_test.jsonl")
CS_OF = {"none": "CA", "cultural": "CS", "regional": "CS", "dialect": "CS"}


@pytest.fixture(scope="module")
def lite() -> tuple[list, object]:
    items = load_items(shared_path(*LITE), language="en").items
    return items, human_votes(items, cs_of=CS_OF)


def annotations(items: list, cs: dict[str, str], knowledge: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"key": it.key, "id": it.id, "status": "annotated", "cs_label": cs[it.key],
          "required_knowledge": knowledge.get(it.key, "none"), "time_sensitive": "no",
          "by_judge": {"j": cs[it.key]}} for it in items]
    )  # fmt: skip


def values(rows: list[dict]) -> dict[tuple[str, str], float]:
    return {(r["section"], r["metric"]): r["value"] for r in rows}


def test_published_labels_scored_as_a_judge_give_the_known_figures(lite: tuple) -> None:
    items, votes = lite
    published = votes.published.to_dict()
    knowledge = majority_vote(votes.knowledge).to_dict()  # the human 4-way majority itself
    frame = annotations(items, published, {k: v for k, v in knowledge.items() if v != TIE})
    keys = [it.key for it in items]
    got = values(validate_subset("all", keys, frame, votes, n_resamples=0))
    assert got[("human majority", "CS/CA ties")] == 83  # exactly half the votes not "none"
    assert got[("human majority", "published CS")] == 200
    assert got[("CS/CA vs published label", "accuracy")] == 1.0
    # the published label agrees with every untied majority and breaks the 83 ties towards CS
    assert got[("CS/CA vs majority, ties excluded", "accuracy")] == 1.0
    assert got[("CS/CA vs majority, ties as errors", "accuracy")] == pytest.approx(317 / 400)
    k_ties = got[("human majority", "required-knowledge ties")]
    assert got[("required knowledge (4-way), ties excluded", "accuracy")] == 1.0
    assert got[("required knowledge (4-way), ties as errors", "accuracy")] == pytest.approx(
        (400 - k_ties) / 400
    )
    # human agreement on the CS/CA votes, as docs/calibration.md reports for this file
    assert got[("human agreement, CS/CA votes", "unanimous share")] == pytest.approx(167 / 400)
    assert got[("human agreement, CS/CA votes", "Fleiss' kappa")] == pytest.approx(0.327, abs=5e-4)
    assert got[("human agreement, CS/CA votes", "Gwet's AC1")] == pytest.approx(0.376, abs=5e-4)
    assert got[("human agreement, CS/CA votes", "prevalence CS (share of votes)")] == (
        pytest.approx(702 / 1758)
    )
    ceiling = "ceiling: vote vs majority of the other votes, ties excluded"
    assert got[(ceiling, "humans accuracy")] == pytest.approx(0.692, abs=5e-4)


def test_an_always_cs_judge_has_ca_recall_zero_and_only_ca_to_cs_errors(lite: tuple) -> None:
    items, votes = lite
    frame = annotations(items, {it.key: "CS" for it in items}, {})
    rows = validate_subset("all", [it.key for it in items], frame, votes, n_resamples=0)
    got = values(rows)
    section = "CS/CA vs published label"
    assert got[(section, "accuracy")] == 0.5 and got[(section, "recall CA")] == 0.0
    assert got[(section, "errors CA->CS")] == 200 and got[(section, "errors CS->CA")] == 0
    assert got[(section, "macro_f1")] == pytest.approx((2 / 3 + 0) / 2)  # F1(CS) = 2/3
    table = markdown_table(pd.DataFrame(rows).assign())
    assert "| CS/CA vs published label | errors CA->CS | 200 |" in table


def test_split_is_fixed_seeded_stratified_and_disjoint(lite: tuple) -> None:
    items, votes = lite
    strata = {it.id: f"{votes.published[it.key]}|{it.subject_category}" for it in items}
    split = assign_splits(strata, 0.5, seed=0)
    assert split == assign_splits(dict(reversed(list(strata.items()))), 0.5, seed=0)
    assert split != assign_splits(strata, 0.5, seed=1)
    for stratum, n in Counter(strata.values()).items():
        held = sum(split[i] == "heldout" for i, s in strata.items() if s == stratum)
        assert held == round(n * 0.5)  # each stratum halved (Python rounds half to even)
    held = [i for i, s in split.items() if s == "heldout"]
    assert len(held) + sum(s == "calibration" for s in split.values()) == 400
    cs_held = sum(votes.published[f"global_mmlu_lite_en_test|{i}"] == "CS" for i in held)
    assert cs_held == len(held) - cs_held  # 100 CS / 100 CA held out: stratified by label


def test_majorities_never_break_ties() -> None:
    assert majority(["CS", "CA", "CS"]) == "CS" and majority(["CS", "CA"]) == TIE
    assert majority([]) is None
    # two-level: a judge whose samples tie abstains; a tie among judges stays a tie
    assert jury_label({"a": ["CS", "CA"], "b": ["CA", "CA"], "c": ["CA"]}) == "CA"
    assert jury_label({"a": ["CS"], "b": ["CA"]}) == TIE
