"""The CS/CA rubric as data: the prompt is rendered from it, the answer schema is built from it,
and the strict checks (CS rule, evidence quoted from the item) reject what breaks them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from judgekit.errors import InputError
from judgekit.pipelines.cultural_schemas import (
    annotate_prompt,
    annotation_schema,
    bind_item,
    load_rubric,
    normalise,
    quote_found,
)

RUBRIC = Path(__file__).resolve().parents[1] / "rubrics" / "cultural_sensitivity.yaml"
ITEM = "Which amendment to the US Constitution protects free speech?\nA. First\nB. Second"


def answer(**changes: object) -> dict:
    base = {
        "evidence": ["US Constitution"],
        "rationale": "US law.",
        "required_knowledge": "regional",
        "time_sensitive": "no",
        "cs_label": "CS",
        "subject_category": "Humanities",
    }
    return {**base, **changes}


def test_the_rubric_holds_the_global_mmlu_schema() -> None:
    rubric = load_rubric()
    assert rubric.knowledge_ids() == ["none", "cultural", "regional", "dialect"]
    assert rubric.time_ids() == ["yes", "no"]
    assert rubric.category_ids() == [
        "STEM", "Humanities", "Social Sciences", "Business", "Medical", "Other",
    ]  # fmt: skip
    assert [rubric.cs_of(k) for k in rubric.knowledge_ids()] == ["CA", "CS", "CS", "CS"]


@pytest.mark.parametrize("variant", ["default", "brief"])
def test_every_prompt_variant_carries_every_value_and_the_cs_rule(variant: str) -> None:
    rubric = load_rubric()
    prompt = annotate_prompt(variant, rubric)
    for value in rubric.required_knowledge:
        assert value.definition in prompt.text
    assert rubric.cs_labels.rule in prompt.text
    assert all(c in prompt.text for c in rubric.category_ids())
    assert prompt.placeholders() == {"language", "subject", "question", "choices", "answer"}
    text = prompt.render(language="Japanese", subject="law", question="Q?", choices="A. x",
                         answer="A")  # fmt: skip
    assert "Japanese" in text and "$" not in text


def test_editing_the_rubric_changes_the_prompt_text_and_hash(tmp_path: Path) -> None:
    data = yaml.safe_load(RUBRIC.read_text(encoding="utf-8"))
    data["required_knowledge"][2]["definition"] = "Needs knowledge of one country's laws."
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(data), encoding="utf-8")
    before, after = (
        annotate_prompt("default", load_rubric()),
        annotate_prompt("default", load_rubric(str(edited))),
    )
    assert "Needs knowledge of one country's laws." in after.text
    assert "Needs knowledge of one country's laws." not in before.text
    assert before.hash != after.hash


def test_a_rubric_example_must_quote_its_own_question(tmp_path: Path) -> None:
    data = yaml.safe_load(RUBRIC.read_text(encoding="utf-8"))
    data["required_knowledge"][2]["example"]["evidence"] = ["not in the question"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(InputError, match="required_knowledge.2.example"):
        load_rubric(str(bad))


def test_the_schema_enumerates_the_rubric_values_for_constrained_decoding() -> None:
    schema = annotation_schema(load_rubric()).model_json_schema()
    props = schema["properties"]
    assert props["required_knowledge"]["enum"] == ["none", "cultural", "regional", "dialect"]
    assert props["cs_label"]["enum"] == ["CS", "CA"]
    assert props["evidence"]["maxItems"] == 3 and props["rationale"]["maxLength"] == 200
    assert schema["required"][:2] == ["evidence", "rationale"]  # evidence before the labels


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"cs_label": "CA"}, "cs_label must be CS when required_knowledge is 'regional'"),
        ({"required_knowledge": "none"}, "cs_label must be CA when required_knowledge is 'none'"),
        ({"evidence": ["Bill of Rights"]}, "evidence 'Bill of Rights' is not in the item"),
        ({"evidence": []}, "a CS item needs at least one evidence quote"),
        ({"required_knowledge": "ancestral"}, "required_knowledge"),
    ],
)
def test_strict_answers_that_break_the_rubric_are_invalid(changes: dict, reason: str) -> None:
    schema = bind_item(load_rubric(), ITEM, strict=True)
    with pytest.raises(ValidationError, match=reason):
        schema.model_validate(answer(**changes))


def test_valid_and_lenient_answers_are_accepted() -> None:
    rubric = load_rubric()
    strict = bind_item(rubric, ITEM, strict=True)
    assert strict.model_validate(answer(evidence=["us  constitution"])).cs_label == "CS"
    ca = answer(evidence=[], required_knowledge="none", cs_label="CA")
    assert strict.model_validate(ca).cs_label == "CA"
    lenient = bind_item(rubric, ITEM, strict=False)  # kept, and counted by the report
    assert lenient.model_validate(answer(cs_label="CA", evidence=["elsewhere"])).cs_label == "CA"
    assert strict.__name__ == "CulturalAnnotation"
    assert strict.model_json_schema() == lenient.model_json_schema()  # same cache key


def test_quotes_are_found_across_case_space_and_typographic_quotes() -> None:
    assert normalise("You’ll  SEE") == "you'll see"
    assert quote_found("you'll see", "When traveling you’ll\nsee the North Star")
    assert not quote_found("", "anything") and not quote_found("South Star", "North Star")
