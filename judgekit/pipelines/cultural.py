"""Cultural-sensitivity (CS/CA) audit of multiple-choice benchmark items (paper 001; the
Global-MMLU schema of Singh et al. 2024, Sec. 3).

Per item, each judge gives ``samples`` structured annotations (``rubrics/cultural_sensitivity
.yaml``: required knowledge, time-sensitive, CS/CA, subject category, evidence quoted from the
item, a short rationale). Aggregation, the same majority rule as for humans (paper 001: "majority
label, ties reported, never broken silently"):

1. per judge, the majority of its valid samples (self-consistency); a tie makes it abstain;
2. over judges (a jury), the majority of the judges' labels; a tie is ``<tie>``.

An item without any valid judgment is ``unjudged`` (its failed records keep the reason). The
items are split once into a calibration and a held-out half (fixed, seeded, stratified by the
human CS label and subject category), so that prompts are tuned on one and reported on the other.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from judgekit.config import RunConfig
from judgekit.data import resolve_path
from judgekit.data.items import BenchmarkItem, ItemFile, language_name, load_items
from judgekit.errors import InputError
from judgekit.labels.human_votes import HumanVotes, load_human_votes
from judgekit.labels.majority import TIE
from judgekit.llm.client import LLMClient, Task
from judgekit.llm.spec import ModelSpec
from judgekit.pipelines.base import require_models, task_fingerprint, workers
from judgekit.pipelines.cultural_schemas import (
    Rubric,
    annotate_prompt,
    bind_item,
    load_rubric,
    quote_found,
)
from judgekit.pipelines.few_shot import FewShot, quoted, with_examples
from judgekit.pipelines.options.cultural import CulturalOptions
from judgekit.runlog import Record, join_key

SPLITS = ("calibration", "heldout")
FIELDS = ("cs_label", "required_knowledge", "time_sensitive", "subject_category")


def _item_example(item: BenchmarkItem, label: str) -> str:
    return f"Item:\n{quoted(item.text())}\nCS/CA label: {label}"


# cultural.few_shot: each example's question and choices and its human CS/CA label
FEW_SHOT = FewShot(
    "cultural.few_shot",
    "Labelled examples (the CS/CA label human annotators gave each benchmark item):",
    _item_example,
)


@dataclass
class Judgment:
    """One (item, judge, sample) annotation; ``record`` is set once it has run."""

    item: BenchmarkItem
    judge: str
    sample: int
    record: Record | None = None

    @property
    def parsed(self) -> dict[str, Any] | None:
        ok = self.record is not None and self.record.status == "ok"
        return self.record.parsed if ok else None  # type: ignore[union-attr]


@dataclass
class ItemAnnotation:
    """The aggregated annotation of one item (see the module docstring for the rule).

    ``status``: ``annotated``, ``tie`` (jury tie on CS/CA) or ``unjudged``; ``cs_label`` is CS,
    CA, ``<tie>`` or None; ``cs_votes`` counts valid judgments per CS/CA label; ``agreement``
    in [0, 1] is the share of valid judgments that agree with ``cs_label`` (None with fewer
    than two valid judgments).
    """

    item: BenchmarkItem
    split: str
    status: str
    cs_label: str | None = None
    required_knowledge: str | None = None
    time_sensitive: str | None = None
    subject_category: str | None = None
    evidence: list[str] = field(default_factory=list)
    evidence_found: list[bool] = field(default_factory=list)
    rationale: str | None = None
    rule_consistent: bool | None = None
    n_judgments: int = 0
    n_valid: int = 0
    cs_votes: dict[str, int] = field(default_factory=dict)
    agreement: float | None = None
    by_judge: dict[str, str | None] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """One JSON-ready row of ``annotations.jsonl``."""
        it = self.item
        return {
            "key": it.key, "benchmark": it.benchmark, "id": it.id, "language": it.language,
            "subject": it.subject, "item_subject_category": it.subject_category,
            "split": self.split, "status": self.status, "cs_label": self.cs_label,
            "required_knowledge": self.required_knowledge, "time_sensitive": self.time_sensitive,
            "subject_category": self.subject_category, "evidence": self.evidence,
            "evidence_found": self.evidence_found, "rationale": self.rationale,
            "rule_consistent": self.rule_consistent, "n_judgments": self.n_judgments,
            "n_valid": self.n_valid, "cs_votes": self.cs_votes, "agreement": self.agreement,
            "by_judge": self.by_judge, "failures": self.failures,
        }  # fmt: skip


def majority(labels: list[str]) -> str | None:
    """Most frequent label, ``<tie>`` when the top count is shared, None for no label."""
    if not labels:
        return None
    (top, n), *rest = Counter(labels).most_common()
    return TIE if rest and rest[0][1] == n else top


def jury_label(per_judge: dict[str, list[str]]) -> str | None:
    """Two-level majority: each judge's samples, then the judges (a tied judge abstains)."""
    votes = [majority(v) for v in per_judge.values()]
    return majority([v for v in votes if v not in (None, TIE)])


def assign_splits(
    strata: dict[str, str], fraction: float, seed: int
) -> dict[str, Literal["calibration", "heldout"]]:
    """Stratified, seeded split of item ids: in each stratum (ids sorted, then permuted by one
    generator seeded with ``seed``, strata in sorted order) the first ``round(n * fraction)``
    ids are held out. The same ids, strata, fraction and seed always give the same split."""
    groups: dict[str, list[str]] = defaultdict(list)
    for item_id, stratum in strata.items():
        groups[stratum].append(item_id)
    rng = np.random.default_rng(seed)
    out: dict[str, Literal["calibration", "heldout"]] = {}
    for stratum in sorted(groups):
        ids = sorted(groups[stratum])
        order = rng.permutation(len(ids))
        n_heldout = int(round(len(ids) * fraction))
        for rank, k in enumerate(order):
            out[ids[k]] = "heldout" if rank < n_heldout else "calibration"
    return out


class CulturalRun:
    """Builds and runs the annotation tasks of one audit; ``annotations`` holds the result.

    Raises:
        InputError: no judge or no item file, ``samples > 1`` with a judge at temperature 0,
            or an item file that cannot be read.
    """

    def __init__(self, config: RunConfig, client: LLMClient | None) -> None:
        self.config = config
        self.options = config.options("cultural", CulturalOptions)
        self.client = client
        self.judges: list[ModelSpec] = require_models(config, "judge", "cultural")
        if self.options.samples > 1 and any(j.temperature == 0 for j in self.judges):
            raise InputError(
                config._path,
                "samples > 1 gives the same answer k times at temperature 0; set the judge's "
                "temperature (e.g. 0.7)",
                field="cultural.samples",
            )
        if not self.options.items:
            raise InputError(
                config._path, "no item files (judgekit audit ITEMS...)", field="cultural.items"
            )
        self.rubric: Rubric = load_rubric(self.options.rubric)
        self.prompt = annotate_prompt(self.options.prompt, self.rubric)
        self.files: list[ItemFile] = [
            load_items(resolve_path(p), language=self.options.language) for p in self.options.items
        ]
        keys = [it.key for f in self.files for it in f.items]
        if len(set(keys)) != len(keys):
            names = [f.benchmark for f in self.files]
            raise InputError(None, f"two item files share a benchmark name: {names}")
        self.items = [it for f in self.files for it in f.items]
        self.humans = self._humans()
        self.splits = self._splits()
        self.shots = self._shots()
        self.selected: list[BenchmarkItem] = []
        for f in self.files:  # ``limit`` applies per file, so counterparts stay aligned
            chosen = [
                it
                for it in f.items
                if self.options.split == "all" or self.splits[it.id] == self.options.split
            ]
            self.selected += chosen[: config.limit] if config.limit else chosen
        self.judgments: list[Judgment] = []
        self.annotations: list[ItemAnnotation] = []
        self._specs = {j.label: j for j in self.judges}
        strict = f"strict={self.options.strict}"
        shots = [self.options.few_shot] if self.options.few_shot else []
        self._fingerprints = {
            j.label: task_fingerprint(j, self.prompt, strict, *shots) for j in self.judges
        }

    def _shots(self) -> dict[str, Any]:
        """The few-shot examples' system message (``{}`` without); an InputError located at
        ``cultural.few_shot`` for an example that is no item or a label not CS/CA."""
        by_key = {it.key: it for it in self.items}
        labels = [v.id for v in self.rubric.cs_labels.values]
        problem = FEW_SHOT.problem(self.options.few_shot, by_key, labels)
        if problem:
            raise self.config.located("cultural.few_shot", problem)
        return FEW_SHOT.message(self.options.few_shot, by_key)

    def _humans(self) -> HumanVotes | None:
        cs_of = {v.id: v.cs for v in self.rubric.required_knowledge}
        return load_human_votes(self.items, self.options.human, cs_of)

    def _splits(self) -> dict[str, Literal["calibration", "heldout"]]:
        strata: dict[str, str] = {}
        human_cs = self.humans.reference_cs() if self.humans is not None else {}
        for it in self.items:
            if it.id not in strata:
                strata[it.id] = f"{human_cs.get(it.key, '-')}|{it.subject_category or '-'}"
        return assign_splits(strata, self.options.heldout_fraction, self.options.split_seed)

    def plan(self) -> list[Judgment]:
        """Every (item, judge, sample) of the run, in item order."""
        return [
            Judgment(item, judge.label, sample)
            for item in self.selected
            for judge in self.judges
            for sample in range(self.options.samples)
        ]

    def render(self, item: BenchmarkItem) -> str:
        """The judge prompt for one item."""
        return self.prompt.render(
            language=language_name(item.language),
            subject=(item.subject or "unknown").replace("_", " "),
            question=item.question,
            choices=item.choices_text(),
            answer=item.answer or "not given",
        )

    def task(self, job: Judgment) -> Task:
        """The structured call of one judgment (a different seed per sample)."""
        spec = self._specs[job.judge]
        if job.sample and spec.seed is not None:
            spec = spec.model_copy(update={"seed": spec.seed + job.sample})
        item = job.item
        return Task(
            key=join_key(
                "annotate", item.key, job.judge, f"s{job.sample}", self._fingerprints[job.judge]
            ),
            stage="annotate",
            role="judge",
            spec=spec,
            messages=with_examples([{"role": "user", "content": self.render(item)}], self.shots),
            schema=bind_item(self.rubric, item.text(), strict=self.options.strict),
            prompt=self.prompt,
            sample_index=job.sample,
            meta={"item": item.key, "id": item.id, "language": item.language},
        )

    def tasks(self) -> list[Task]:
        """Every call of the run, known in advance (``judgekit run --dry-run``)."""
        return [self.task(job) for job in self.plan()]

    async def run(self, on_item: Any = None) -> list[ItemAnnotation]:
        """Run every judgment (concurrency bounded per model by the llm layer), then aggregate."""

        jobs = self.plan()
        by_key: dict[str, list[Judgment]] = defaultdict(list)

        def tasks() -> Iterator[Task]:
            for job in jobs:
                task = self.task(job)
                by_key[task.key].append(job)
                yield task

        def done(task: Task, record: Record) -> None:
            job = by_key[task.key].pop(0)
            job.record = record
            if on_item is not None:
                on_item(job)

        await self.client.run_many(tasks(), workers(self.judges), done)
        self.judgments = jobs
        self.annotations = self.aggregate(self.judgments)
        return self.annotations

    def aggregate(self, judgments: list[Judgment]) -> list[ItemAnnotation]:
        """One :class:`ItemAnnotation` per selected item from its judgments."""
        by_item: dict[str, list[Judgment]] = defaultdict(list)
        for job in judgments:
            by_item[job.item.key].append(job)
        return [self._aggregate_item(it, by_item.get(it.key, [])) for it in self.selected]

    def _aggregate_item(self, item: BenchmarkItem, jobs: list[Judgment]) -> ItemAnnotation:
        valid = [j for j in jobs if j.parsed is not None]
        failures = Counter(
            (j.record.reason or j.record.status).split(":", 1)[0]
            for j in jobs
            if j.record is not None and j.parsed is None
        )
        out = ItemAnnotation(item, self.splits[item.id], "unjudged", n_judgments=len(jobs))
        out.n_valid, out.failures = len(valid), dict(failures)
        if not valid:
            return out
        final: dict[str, str | None] = {}
        for name in FIELDS:
            per_judge: dict[str, list[str]] = defaultdict(list)
            for j in valid:
                per_judge[j.judge].append(str(j.parsed[name]))  # type: ignore[index]
            final[name] = jury_label(per_judge) or TIE
            if name == "cs_label":
                out.by_judge = {judge: majority(v) for judge, v in per_judge.items()}
        out.cs_label = final["cs_label"]
        out.status = "tie" if out.cs_label == TIE else "annotated"
        out.required_knowledge = final["required_knowledge"]
        out.time_sensitive = final["time_sensitive"]
        out.subject_category = final["subject_category"]
        cs = [str(j.parsed["cs_label"]) for j in valid]  # type: ignore[index]
        out.cs_votes = dict(Counter(cs))
        if out.status == "annotated" and len(cs) > 1:  # self-consistency needs two judgments
            out.agreement = cs.count(out.cs_label) / len(cs)
        chosen = next((j for j in valid if j.parsed["cs_label"] == out.cs_label), valid[0])  # type: ignore[index]
        parsed = chosen.parsed or {}
        text = item.text()
        out.evidence = list(parsed.get("evidence", []))
        out.evidence_found = [quote_found(q, text) for q in out.evidence]
        out.rationale = parsed.get("rationale")
        if out.required_knowledge in self.rubric.knowledge_ids():
            out.rule_consistent = self.rubric.cs_of(out.required_knowledge) == out.cs_label
        return out
