"""Generic classification: one structured judgment (label + short rationale) per item and judge.

Items come from a JSONL file (one object a line with an id and a text field); the label set and
the task description come from the config's ``classify:`` section; the prompt is a template in
``prompts/classify/`` (``$task``, ``$labels``, ``$text``, ``$id``, ``$max_chars``). A judge list
in the config forms a jury: every judge labels every item. Each (item, judge, sample) is one
task; an answer outside the label set is invalid (re-asked, then ``unscored``), never mapped to
a label.

Output: ``records.jsonl`` (the llm layer), ``labels.csv`` (long format ``item,rater,label``, in
item order), ``items.jsonl`` (the judged items, ``{"id", "text", ...}`` a line with the input
line's other fields such as ``language``, so the run directory shows what was classified and the
items' facets without the input file) and ``summary.json`` (planned / judged /
excluded counts that add up, label counts per rater, usage, and ``labels_common``: label counts
and shares per rater on the items every rater labelled, with the raters that left items
unlabelled marked ``incomplete``; see :mod:`judgekit.metrics.common_items`).
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from judgekit.config import RunConfig
from judgekit.data import jsonl_objects, resolve_path
from judgekit.data.atomic import open_output
from judgekit.data.jsonfile import write_json
from judgekit.errors import InputError
from judgekit.llm.client import LLMClient, Task
from judgekit.metrics.common_items import coverage
from judgekit.pipelines.base import require_models, task_fingerprint, workers
from judgekit.pipelines.few_shot import TEXT_EXAMPLES, example_problem, few_shot_message
from judgekit.pipelines.options.classify import ClassifyOptions
from judgekit.prompts import load_prompt
from judgekit.run_usage import usage_summary
from judgekit.runlog import Record, join_key
from judgekit.signature import ModelSignature, Signature, file_hash, schema_hash

FEW_SHOT = TEXT_EXAMPLES  # classify.few_shot: each example's text and its label


@dataclass(frozen=True, slots=True)
class Item:
    """One item: ``id``, ``text``, its 1-based ``line`` in the items file and its ``fields``:
    the input line's other fields (``lang``/``language``, ``domain``...), kept in the run's
    ``items.jsonl`` so facets and the view read them from the judged items."""

    id: str
    text: str
    line: int
    fields: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


def load_items(path: Path, id_field: str = "id", text_field: str = "text") -> list[Item]:
    """Read a JSONL items file.

    Raises:
        InputError: the file is missing, a line is not a JSON object, lacks the id or text
            field, has an empty text, or repeats an id (names the file, line and field).
    """
    items: list[Item] = []
    first_line: dict[str, int] = {}
    for number, data in jsonl_objects(path):
        for name in (id_field, text_field):
            if data.get(name) is None:
                raise InputError(path, "missing field", line=number, field=name)
        text = data[text_field]
        if not isinstance(text, str) or not text.strip():
            raise InputError(path, "expected a non-empty string", line=number, field=text_field)
        item_id = str(data[id_field])
        if item_id in first_line:
            raise InputError(
                path,
                f"id {item_id!r} already on line {first_line[item_id]}",
                line=number,
                field=id_field,
            )
        first_line[item_id] = number
        extra = {k: v for k, v in data.items() if k not in (id_field, text_field, "id", "text")}
        items.append(Item(item_id, text, number, extra))
    return items


@lru_cache(maxsize=64)
def judgment_schema(labels: tuple[str, ...], max_chars: int) -> type[BaseModel]:
    """The answer model: ``label`` (one of ``labels``) and ``rationale`` (<= ``max_chars``)."""
    return create_model(
        "ClassifyJudgment",
        __config__=ConfigDict(extra="forbid"),
        label=(Literal[labels], Field(description="exactly one of the labels")),  # type: ignore[valid-type]
        rationale=(str, Field(min_length=1, max_length=max_chars)),
    )


def _resolve(path: Path, config: RunConfig) -> Path:
    # relative paths were looked up beside the config by config.options; data: is fetched here
    return resolve_path(path)


class ClassifyRun:
    """Builds and runs the tasks of one classification run (see the module doc).

    Raises:
        InputError: a bad ``classify:`` section or items file, or no judge.
        JudgekitError: a missing prompt.
    """

    def __init__(self, config: RunConfig, client: LLMClient | None) -> None:
        self.config = config
        self.client = client
        self.options = config.options("classify", ClassifyOptions)
        self.judges = require_models(config, "judge", "classify")
        self.prompt = load_prompt(f"classify/{self.options.prompt}")
        self.items_path = _resolve(self.options.items, config)
        items = load_items(self.items_path, self.options.id_field, self.options.text_field)
        self.items = items[: config.limit] if config.limit else items
        texts = {item.id: item.text for item in items}
        problem = example_problem(self.options.few_shot, texts, self.options.labels)
        if problem:
            raise config.located("classify.few_shot", problem)
        self.shots = few_shot_message(self.options.few_shot, texts)
        self.schema = judgment_schema(tuple(self.options.labels), self.options.rationale_max_chars)
        self.status: Counter[str] = Counter()
        opts = self.options
        self._keys = {
            j.label: task_fingerprint(
                j,
                self.prompt,
                opts.labels,
                opts.task,
                opts.rationale_max_chars,
                *([opts.few_shot] if opts.few_shot else []),
            )  # fmt: skip
            for j in self.judges
        }

    def plan(self) -> list[tuple[str, str, int]]:
        """Every (item id, judge name, sample) of the run, in order."""
        return [
            (item.id, judge.label, sample)
            for item in self.items
            for judge in self.judges
            for sample in range(self.options.samples)
        ]

    def tasks(self) -> Iterator[Task]:
        """The run's tasks, one per planned (item, judge, sample), built lazily."""
        opts = self.options
        labels = ", ".join(opts.labels)
        for index, item in enumerate(self.items):
            text = self.prompt.render(
                task=opts.task,
                labels=labels,
                text=item.text,
                id=item.id,
                max_chars=opts.rationale_max_chars,
            )
            messages = [*([self.shots] if self.shots else []), {"role": "user", "content": text}]
            for judge in self.judges:
                for sample in range(opts.samples):
                    yield Task(
                        key=join_key(
                            "judge", judge.label, item.id, f"s{sample}", self._keys[judge.label]
                        ),
                        stage="judge",
                        role="judge",
                        spec=judge,
                        messages=messages,
                        schema=self.schema,
                        prompt=self.prompt,
                        sample_index=sample,
                        meta={"item": item.id, "index": index, "sample": sample},
                    )

    async def run(self, on_item: Any = None) -> Counter[str]:
        """Run every task through the client's bounded worker pool (memory stays flat however
        many items there are); returns the count of records by status."""

        def done(task: Task, record: Record) -> None:
            self.status[record.status] += 1
            if on_item is not None:
                on_item(task)

        await self.client.run_many(self.tasks(), workers(self.judges), done)
        return self.status


def signature(run: ClassifyRun) -> Signature:
    """Everything that changes the labels: judges, prompt, answer schema, label set, task,
    items file, version (``labels`` and ``task`` also at the top, as before)."""
    opts = run.options
    return Signature(
        pipeline="classify",
        models=[ModelSignature.of(j, "judge") for j in run.judges],
        prompts={run.prompt.id: run.prompt.hash},
        schema_hash=schema_hash(run.schema),
        parameters={
            "labels": opts.labels,
            "task": opts.task,
            "samples": opts.samples,
            "rationale_max_chars": opts.rationale_max_chars,
            "n_items": len(run.items),
            "limit": run.config.limit,
            **({"few_shot": opts.few_shot} if opts.few_shot else {}),
        },  # fmt: skip
        data={str(opts.items): file_hash(run.items_path)},
        seed=run.config.seed,
        labels=opts.labels,
        task=opts.task,
    )


def common_shares(run: ClassifyRun, rows: list[tuple[int, str, str, str]]) -> dict[str, Any]:
    """Label counts and shares (in [0, 1]) per rater on the items every rater labelled.

    Args:
        rows: ``(index, item id, rater, label)`` of the judged (``ok``) records.
    """
    multi = run.options.samples > 1
    raters = [j.label + (f"#s{s}" if multi else "") for j in run.judges
              for s in range(run.options.samples)]  # fmt: skip
    labelled = {(item, rater): label for _, item, rater, label in rows}
    cov = coverage((r, i.id, (i.id, r) in labelled) for r in raters for i in run.items)
    counts = {r: Counter(labelled[i, r] for i in cov.common) for r in raters}
    return {
        "n_common": cov.n_common,
        "incomplete": [str(r) for r in cov.incomplete_groups()],
        "counts": {r: {lab: c[lab] for lab in run.options.labels} for r, c in counts.items()},
        "shares": {
            r: {lab: c[lab] / cov.n_common if cov.n_common else None for lab in run.options.labels}
            for r, c in counts.items()
        },
    }


def write_report(run: ClassifyRun, records: Iterable[Record], out_dir: Path) -> dict[str, Any]:
    """Write ``labels.csv``, ``items.jsonl`` and ``summary.json`` from the run's records (read
    once, streamed); return the summary. ``judged + sum(excluded) == planned`` when every task
    has a record."""
    rows: list[tuple[int, str, str, str]] = []
    per_rater: dict[str, Counter[str]] = defaultdict(Counter)
    excluded: Counter[str] = Counter()
    multi = run.options.samples > 1

    def scan() -> Iterator[Record]:
        for record in records:
            if record.status == "ok":
                rater = record.model + (f"#s{record.sample_index}" if multi else "")
                label = record.parsed["label"]
                rows.append((record.meta["index"], record.meta["item"], rater, label))
                per_rater[rater][label] += 1
            else:
                excluded[f"judgment_{record.status}"] += 1
            yield record

    usage = usage_summary(scan())
    rows.sort()
    with open_output(out_dir / "labels.csv", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item", "rater", "label"])
        writer.writerows(row[1:] for row in rows)
    with open_output(out_dir / "items.jsonl") as handle:
        handle.writelines(
            json.dumps({"id": i.id, "text": i.text, **i.fields}, ensure_ascii=False) + "\n"
            for i in run.items
        )
    summary = {
        "signature": signature(run).as_dict(),
        "items": {
            "planned": len(run.items) * len(run.judges) * run.options.samples,
            "judged": len(rows),
            "excluded": dict(sorted(excluded.items())),
        },
        "labels": {rater: dict(sorted(c.items())) for rater, c in sorted(per_rater.items())},
        "labels_common": common_shares(run, rows),
        "usage": usage,
        "files": {"records": "records.jsonl", "labels": "labels.csv", "items": "items.jsonl"},
    }
    write_json(out_dir / "summary.json", summary)
    return summary
