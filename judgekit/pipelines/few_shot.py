"""Few-shot examples for a judge: labelled items shown before the item to judge.

The examples are items of the run's own items file named by id, each with its human label (the
form ``calibrate tune`` writes into ``best.yaml`` from the tune split only; Brown et al. 2020,
"Language Models are Few-Shot Learners", sec. 2, for in-context examples). They go into one
system message ahead of the judge prompt, so every prompt template works unchanged, and into the
task fingerprint and the signature, so a different set of examples is a different run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

HEADER = "Labelled examples (the label a human annotator gave each text):"


def example_problem(
    examples: Mapping[str, str], texts: Mapping[str, str], labels: Sequence[str]
) -> str | None:
    """What is wrong with ``examples`` (an id not in ``texts``, a label outside ``labels``), or
    None; the pipeline raises it as an InputError located at its ``few_shot`` key."""
    for item, label in examples.items():
        if item not in texts:
            return f"few-shot example {item!r} is not an item"
        if label not in labels:
            return f"few-shot example {item!r}: label {label!r} not in {list(labels)}"
    return None


def few_shot_message(examples: Mapping[str, str], texts: Mapping[str, str]) -> dict[str, Any]:
    """One system message listing each example's text and label in the order given; ``{}`` when
    there are no examples (callers skip it). Item texts are quoted between triple quotes."""
    if not examples:
        return {}
    blocks = [f'Text:\n"""\n{texts[i]}\n"""\nLabel: {label}' for i, label in examples.items()]
    return {"role": "system", "content": "\n\n".join([HEADER, *blocks])}
