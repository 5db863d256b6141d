"""Few-shot examples for a judge: labelled items shown before the item to judge.

The examples are items of the run's own items named by id, each with its human label (the form
``calibrate tune`` writes into ``best.yaml`` from the tune split only; Brown et al. 2020,
"Language Models are Few-Shot Learners", sec. 2, for in-context examples). They go into one
system message ahead of the judge prompt's user part, so every prompt template works unchanged,
and into the task fingerprint and the signature, so a different set of examples is a different
run.

A pipeline whose human label is one label per item declares the capability once, as a
:class:`FewShot` (its option key, the header and how one example renders) named in its registry
entry (:data:`judgekit.pipelines.PIPELINES`, ``few_shot``); ``calibrate tune`` reads the key from
there (:func:`judgekit.pipelines.get_few_shot`), never from the pipeline's name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

HEADER = "Labelled examples (the label a human annotator gave each text):"


def quoted(text: str) -> str:
    """``text`` between triple quotes on their own lines (how every example shows a text)."""
    return f'"""\n{text}\n"""'


@dataclass(frozen=True)
class FewShot:
    """A pipeline's few-shot capability.

    Attributes:
        key: the option that holds the examples in a run config (``classify.few_shot``), an
            item id -> human label mapping.
        header: the first line of the examples' system message.
        render: one example as text, from the pipeline's item and the example's label.
    """

    key: str
    header: str
    render: Callable[[Any, str], str]

    def problem(
        self, examples: Mapping[str, str], items: Collection[str], labels: Sequence[str]
    ) -> str | None:
        """What is wrong with ``examples`` (an id not in ``items``, a label outside ``labels``),
        or None; the pipeline raises it as an InputError located at :attr:`key`."""
        for item, label in examples.items():
            if item not in items:
                return f"few-shot example {item!r} is not an item"
            if label not in labels:
                return f"few-shot example {item!r}: label {label!r} not in {list(labels)}"
        return None

    def message(self, examples: Mapping[str, str], items: Mapping[str, Any]) -> dict[str, Any]:
        """One system message: :attr:`header`, then each example rendered, in the order given;
        ``{}`` when there are no examples (callers then add nothing)."""
        if not examples:
            return {}
        blocks = [self.render(items[i], label) for i, label in examples.items()]
        return {"role": "system", "content": "\n\n".join([self.header, *blocks])}


def with_examples(messages: list[dict[str, Any]], shots: dict[str, Any]) -> list[dict[str, Any]]:
    """``messages`` with the examples' system message ``shots`` just before the first user
    message, merged into a system message already there (chat templates that take one system
    message only keep working); ``messages`` unchanged when ``shots`` is ``{}``."""
    if not shots:
        return messages
    at = next((k for k, m in enumerate(messages) if m["role"] == "user"), len(messages))
    if at and messages[at - 1]["role"] == "system":
        joined = {
            "role": "system",
            "content": f"{messages[at - 1]['content']}\n\n{shots['content']}",
        }
        return [*messages[: at - 1], joined, *messages[at:]]
    return [*messages[:at], shots, *messages[at:]]


def _text_example(text: str, label: str) -> str:
    return f"Text:\n{quoted(text)}\nLabel: {label}"


TEXT_EXAMPLES = FewShot("classify.few_shot", HEADER, _text_example)


def example_problem(
    examples: Mapping[str, str], texts: Mapping[str, str], labels: Sequence[str]
) -> str | None:
    """:meth:`FewShot.problem` of the classify pipeline's examples (item id -> text)."""
    return TEXT_EXAMPLES.problem(examples, texts, labels)


def few_shot_message(examples: Mapping[str, str], texts: Mapping[str, str]) -> dict[str, Any]:
    """:meth:`FewShot.message` of the classify pipeline's examples: each example's text
    between triple quotes and its label, in the order given; ``{}`` without examples."""
    return TEXT_EXAMPLES.message(examples, texts)
