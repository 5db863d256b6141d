"""Pairwise preference: a judge picks the better of two outputs, in both orders.

Items (``pairwise.items``) hold an instruction and two outputs, optionally a gold label, in
LLMBar's format read as is (``input``, ``output_1``, ``output_2``, ``label``; see
:mod:`judgekit.data.pairwise`). Each (item, judge, order) is one task: the judge sees the
instruction and the outputs in the original order and, as a second task, swapped, and answers a
validated verdict (``"1"``, ``"2"``, or ``"tie"`` where ``pairwise.ties`` allows it) and a short
rationale; the verdict comes first in the schema, so the rationale cannot act as a chain of
thought. A judge list forms a jury: every judge judges every item in both orders. An answer
outside the verdict set is invalid (re-asked, then ``unscored``), never mapped to a verdict.

Prompts are templates in ``prompts/pairwise/`` with a ``[system]`` and a ``[user]`` part, named
as in LLMBar's repository: ``vanilla`` (``comparison/Vanilla.txt``, the paper's Vanilla* =
Vanilla+Rules, the prompt of LLMBar's published "Vanilla" verdicts), ``vanilla-norules``
(``comparison/Vanilla_NoRules.txt``, the paper's plain Vanilla) and ``checklist`` (judgekit's
rule list applied in order); see ``prompts/pairwise/SOURCES.md``. Placeholders: ``$input``,
``$output_a``, ``$output_b`` (the outputs in the order shown), ``$verdicts``, ``$tie_rule``,
``$max_chars``.

The report (``judgekit.report.pairwise``) resolves the two verdicts of each (item, judge) and
scores them with :mod:`judgekit.metrics.pairwise`, next to published verdicts where configured.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from judgekit.config import RunConfig
from judgekit.data import resolve_path
from judgekit.data.pairwise import (
    PairItem,
    identical_outputs,
    load_pairs,
    load_published_verdicts,
)
from judgekit.errors import JudgekitError, JudgekitWarning
from judgekit.llm.client import LLMClient, Task
from judgekit.pipelines.base import require_models, task_fingerprint, workers
from judgekit.pipelines.few_shot import FewShot, quoted, with_examples
from judgekit.pipelines.options.pairwise import PairwiseOptions
from judgekit.prompts import Prompt, load_prompt
from judgekit.runlog import Record, join_key
from judgekit.signature import ModelSignature, Signature, file_hash, schema_hash

ORDERS = ("original", "swapped")
_ROLE_LINE = re.compile(r"^\[(system|user)\]\n", re.MULTILINE)
_BETTER = {"1": "Output (a)", "2": "Output (b)", "tie": "neither"}


def _pair_example(item: PairItem, label: str) -> str:
    return (f"Instruction:\n{quoted(item.instruction)}\nOutput (a):\n{quoted(item.output_1)}\n"
            f"Output (b):\n{quoted(item.output_2)}\nBetter output: {_BETTER[label]} "
            f'(verdict "{label}")')  # fmt: skip


# pairwise.few_shot: LLMBar-style examples, the instruction, both outputs and the preferred one
FEW_SHOT = FewShot(
    "pairwise.few_shot",
    "Labelled examples (the output a human annotator preferred for each instruction):",
    _pair_example,
)


@lru_cache(maxsize=16)
def verdict_schema(ties: bool, max_chars: int) -> type[BaseModel]:
    """The answer model: ``verdict`` (``"1"``, ``"2"`` [, ``"tie"``]: the better output as
    shown) then ``rationale`` (1 to ``max_chars`` characters)."""
    verdicts = ("1", "2", "tie") if ties else ("1", "2")
    return create_model(
        "PairwiseVerdict",
        __config__=ConfigDict(extra="forbid"),
        verdict=(Literal[verdicts], Field(description="the better output")),  # type: ignore[valid-type]
        rationale=(str, Field(min_length=1, max_length=max_chars)),
    )


def split_roles(prompt: Prompt) -> list[tuple[str, Prompt]]:
    """The ``[system]`` / ``[user]`` parts of a template, in order, each a Prompt of its own;
    a template without role lines is one user part.

    Raises:
        JudgekitError: text before the first role line, or no user part.
    """
    marks = list(_ROLE_LINE.finditer(prompt.text))
    if not marks:
        return [("user", prompt)]
    if prompt.text[: marks[0].start()].strip():
        raise JudgekitError(f"prompt {prompt.path}: text before the first [system]/[user] line")
    parts = []
    for mark, nxt in zip(marks, [*marks[1:], None], strict=True):
        body = prompt.text[mark.end() : nxt.start() if nxt else None].strip("\n")
        parts.append((mark.group(1), Prompt(prompt.id, body, prompt.path)))
    if parts[-1][0] != "user":
        raise JudgekitError(f"prompt {prompt.path}: the last part must be [user]")
    return parts


def _resolve(path: Path, config: RunConfig) -> Path:
    # relative paths were looked up beside the config by config.options; data: is fetched here
    return resolve_path(path)


def identical_report(items: list[PairItem], path: Path) -> dict[str, list[str]]:
    """The items of ``items`` whose two outputs are the same text: ``{"items": ids, "gold_winner":
    ids of those whose gold names a winner}``. They are not judged (a verdict on them measures
    position bias only) and are counted as excluded; a :class:`~judgekit.errors.JudgekitWarning`
    names them at load, and a gold winner on one as suspicious."""
    same = identical_outputs(items)
    found = {"items": [i.id for i in same],
             "gold_winner": [i.id for i in same if i.gold in ("1", "2")]}  # fmt: skip
    if same:
        ids = ", ".join(found["items"][:10]) + (", ..." if len(same) > 10 else "")
        gold = found["gold_winner"]
        said = (f"; a gold winner on {len(gold)} of them is suspicious ({', '.join(gold[:10])})"
                if gold else "")  # fmt: skip
        warnings.warn(f"{path}: {len(same)} items have identical outputs ({ids}): not judged, "
                      f"counted as excluded{said}", JudgekitWarning, stacklevel=2)  # fmt: skip
    return found


class PairwiseRun:
    """Builds and runs the tasks of one pairwise run (see the module doc).

    Raises:
        InputError: a bad ``pairwise:`` section, items file or published verdicts table.
        JudgekitError: no judge, judges sharing a name, or a missing or malformed prompt.
    """

    def __init__(self, config: RunConfig, client: LLMClient | None) -> None:
        self.config = config
        self.client = client  # set by the engine once inputs are checked
        self.options = opts = config.options("pairwise", PairwiseOptions)
        self.judges = require_models(config, "judge", "pairwise")
        self.prompt = load_prompt(f"pairwise/{opts.prompt}")
        self.parts = split_roles(self.prompt)
        self.items_path = _resolve(opts.items, config)
        self.published_path = _resolve(opts.published, config) if opts.published else None
        # read before any call, so a bad published table stops the run at the door
        self.published = load_published_verdicts(self.published_path) if opts.published else None
        items = load_pairs(
            self.items_path,
            id_field=opts.id_field,
            input_field=opts.input_field,
            output_fields=opts.output_fields,
            label_field=opts.label_field,
            subset_field=opts.subset_field,
            subset=opts.subset,
        )
        self.items: list[PairItem] = items[: config.limit] if config.limit else items
        self.shots = self._shots(items)
        self.identical = identical_report(self.items, self.items_path)
        skip = set(self.identical["items"])
        self.judged_items = [i for i in self.items if i.id not in skip]
        self.schema = verdict_schema(opts.ties, opts.rationale_max_chars)
        self.status: Counter[str] = Counter()
        shots = [opts.few_shot] if opts.few_shot else []
        self._keys = {
            j.label: task_fingerprint(
                j, self.prompt.hash, opts.ties, opts.rationale_max_chars, *shots
            )
            for j in self.judges
        }

    def _shots(self, items: list[PairItem]) -> dict[str, Any]:
        """The few-shot examples' system message (``{}`` without), ``items`` being every item
        of the file; an InputError located at ``pairwise.few_shot`` for an example that is no
        item or a label that is no verdict."""
        by_id = {item.id: item for item in items}
        labels = ["1", "2", "tie"] if self.options.ties else ["1", "2"]
        problem = FEW_SHOT.problem(self.options.few_shot, by_id, labels)
        if problem:
            raise self.config.located("pairwise.few_shot", problem)
        return FEW_SHOT.message(self.options.few_shot, by_id)

    def plan(self) -> list[tuple[str, str, str]]:
        """Every (item id, judge name, order) of the run, in order."""
        return [
            (item.id, judge.label, order)
            for item in self.judged_items
            for judge in self.judges
            for order in ORDERS
        ]

    def messages(self, item: PairItem, order: str) -> list[dict[str, str]]:
        """The chat messages of one item in one order (``original`` or ``swapped``)."""
        first, second = (
            (item.output_1, item.output_2)
            if order == "original"
            else (item.output_2, item.output_1)
        )
        ties = self.options.ties
        values = {
            "input": item.instruction,
            "output_a": first,
            "output_b": second,
            "verdicts": '"1" if Output (a) is better, "2" if Output (b) is better'
            + (', "tie" if neither is better' if ties else ""),
            "tie_rule": 'If neither output is better, answer "tie".'
            if ties
            else "Do NOT say both / neither are good.",
            "max_chars": self.options.rationale_max_chars,
        }
        parts = [{"role": role, "content": part.render(**values)} for role, part in self.parts]
        return with_examples(parts, self.shots)

    def tasks(self) -> Iterator[Task]:
        """The run's tasks, one per planned (item, judge, order), built lazily; none for an item
        whose two outputs are the same text (:func:`identical_report`)."""
        for index, item in enumerate(self.items):
            if item.id in self.identical["items"]:
                continue
            for order in ORDERS:
                messages = self.messages(item, order)
                for judge in self.judges:
                    key = join_key("judge", judge.label, item.id, order, self._keys[judge.label])
                    yield Task(
                        key=key,
                        stage="judge",
                        role="judge",
                        spec=judge,
                        messages=messages,
                        schema=self.schema,
                        prompt=self.prompt,
                        meta={"item": item.id, "index": index, "order": order},
                    )

    async def run(self, on_item: Any = None) -> Counter[str]:
        """Run every task through the client's bounded worker pool; returns the count of
        records by status."""

        def done(task: Task, record: Record) -> None:
            self.status[record.status] += 1
            if on_item is not None:
                on_item(task)

        await self.client.run_many(self.tasks(), workers(self.judges), done)
        return self.status

    def signature(self) -> Signature:
        """Everything that changes the verdicts and their scores: judges, prompt, answer schema,
        options, data files, seed (the options also at the top, as before)."""
        opts = self.options
        data = {str(opts.items): file_hash(self.items_path)}
        if self.published_path is not None:
            data[str(opts.published)] = file_hash(self.published_path)
        options = {
            "ties": opts.ties,
            "inconsistent": opts.inconsistent,
            "rationale_max_chars": opts.rationale_max_chars,
            "published_prompting": opts.published_prompting,
            "n_items": len(self.items),
            "n_resamples": opts.n_resamples,
        }
        shots = {"few_shot": opts.few_shot} if opts.few_shot else {}
        return Signature(
            pipeline="pairwise",
            models=[ModelSignature.of(j, "judge") for j in self.judges],
            prompts={self.prompt.id: self.prompt.hash},
            schema_hash=schema_hash(self.schema),
            parameters={**options, **shots},
            data=data,
            seed=self.config.seed,
            **options,
        )
