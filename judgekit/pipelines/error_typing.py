"""Error-typing judge for (localised) translations (Cultivar, arXiv 2608.09766, §5; DESIGN 3.3).

Per segment, the judge sees the source, the translation, optionally a reference and the locale,
and answers ``{"no_errors": bool, "errors": [{"quote", "occurrence"?, "type", "severity"}]}``:

* ``type`` is an id of the typology in ``rubrics/localisation_errors.yaml`` (locale-specific NE,
  PY, IC, NU; general MIS, OMI, ADD, UNT, TOK); ``severity`` is minor, major or critical.
* ``quote`` is copied from the translation (from the source for types with ``quote_from:
  source``, i.e. omissions). judgekit locates it to get character offsets ``[start, end)`` with
  ``text[start:end] == quote`` (surrounding whitespace of the quote is dropped first). A quote
  that is absent, or that occurs several times without an ``occurrence`` (1-based) saying which,
  makes the answer invalid (checked during validation, with the segment's texts in a context
  variable): the llm layer re-asks (bounded), then the whole segment is ``unscored`` with the
  reason. No error is ever dropped silently. Answers from the cache or a resumed run are
  located again here.
* ``no_errors`` must be true exactly when ``errors`` is empty: "no error" is only ever the
  judge's explicit statement, never inferred from an unparseable answer.

The prompt ``prompts/localisation/errors.<variant>.txt`` has ``$typology`` (or
``$typology_brief``) and ``$severities`` filled from the rubric when it is loaded, so editing the
rubric changes the prompt's text and hash (and the cache keys). Per segment judgekit derives a
0/1 flag per type (an error type counts once per segment, as in the paper's Table 5) and an MQM
score (``judgekit.metrics.mqm`` weights: minor 1, major 5, critical 25; >= 0, lower is better)
from the types' MQM categories.

Items: JSONL/TSV rows of :class:`SegmentItem`, or a sample of a Google MQM TSV drawn with a
seed by :func:`items_from_mqm` (config ``mqm_sample:``; the run writes them to ``items.jsonl``;
``judgekit mqm items TSV OUT`` writes the file alone).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgekit.config import RunConfig
from judgekit.data import resolve_path
from judgekit.errors import InputError
from judgekit.llm.client import LLMClient, Task
from judgekit.metrics.mqm import MQMError, MQMWeights, read_mqm_tsv
from judgekit.pipelines.base import run_items, task_fingerprint, workers
from judgekit.pipelines.localisation_schemas import (
    SEGMENT_TEXTS,
    QuoteError,
    Rubric,
    SegmentItem,
    annotation_schema,
    checking,
    load_rubric,
    locate,
    read_records,
)
from judgekit.pipelines.options.errors import ErrorsOptions
from judgekit.prompts import Prompt, fill_placeholders, load_prompt
from judgekit.runlog import join_key

RUBRIC_PLACEHOLDERS = ("typology", "typology_brief", "severities")


def render_typology(rubric: Rubric) -> dict[str, str]:
    """The rubric as prompt text, by placeholder: ``typology`` (one block per type with its
    definition and example), ``typology_brief`` (one line per type: id, name, definition) and
    ``severities`` (one line per severity)."""
    full, brief = [], []
    for t in rubric.types:
        where = " Quote the missing words from the SOURCE." if t.quote_from == "source" else ""
        ex = t.example
        head = f"- {t.id} ({t.name}; {t.group}): {t.definition.strip()}{where}"
        brief.append(head)
        full.append(
            f'{head}\n  Example: source "{ex.source}", translation "{ex.translation}" -> '
            f'quote "{ex.quote}", type {t.id}.'
        )
    sev = [f"- {s.id}: {s.definition.strip()}" for s in rubric.severities]
    return {"typology": "\n".join(full), "typology_brief": "\n".join(brief),
            "severities": "\n".join(sev)}  # fmt: skip


def judge_prompt(variant: str, rubric: Rubric) -> Prompt:
    """``prompts/localisation/errors.<variant>.txt`` with the rubric's placeholders
    (:data:`RUBRIC_PLACEHOLDERS`) filled in, so its hash covers the rubric too. A literal ``$``
    in the rubric is escaped for the second, per-segment rendering.

    Raises:
        JudgekitError: no such prompt variant.
    """
    template = load_prompt(f"localisation/errors.{variant}")
    return fill_placeholders(template, render_typology(rubric))


def load_items(options: ErrorsOptions) -> list[SegmentItem]:
    """The items of a run, from ``items`` or ``mqm_sample``.

    Raises:
        InputError: unreadable or invalid file, or a sample that cannot be drawn.
    """
    if options.items is not None:
        return read_records(options.items, SegmentItem)
    sample = options.mqm_sample
    assert sample is not None
    return items_from_mqm(resolve_path(sample.tsv), **sample.model_dump(exclude={"tsv"}))


@dataclass
class LocatedError:
    """A judged error with its offsets into ``side`` (``translation`` or ``source``)."""

    type: str
    severity: str
    quote: str
    side: str
    start: int
    end: int
    mqm_category: str


@dataclass
class SegmentResult:
    """One judged segment: ``status`` scored | unscored | error (with ``reason``)."""

    id: str
    system: str
    doc: str
    seg_id: str
    locale: str | None
    status: str = "pending"
    reason: str | None = None
    errors: list[LocatedError] = field(default_factory=list)
    mqm: float | None = None

    def flags(self, type_ids: list[str]) -> dict[str, int]:
        """1 if the segment has at least one error of the type (paper Table 5 counting)."""
        present = {e.type for e in self.errors}
        return {t: int(t in present) for t in type_ids}


def segment_score(errors: list[LocatedError], weights: MQMWeights | None = None) -> float:
    """MQM of one judged segment: the sum of its errors' weights (>= 0, lower is better)."""
    weights = weights or MQMWeights()
    rows = [MQMError("", "", "", "judge", "", "", e.mqm_category, e.severity, None, None, None,
                     None) for e in errors]  # fmt: skip
    return float(sum(weights.weight(r) or 0.0 for r in rows))


class ErrorsRun:
    """Builds and runs one error-typing call per segment; ``results`` holds the outcomes."""

    def __init__(self, config: RunConfig, client: LLMClient | None) -> None:
        self.config = config
        self.client = client
        self.options = config.options("errors", ErrorsOptions)
        self.judge = config.single_judge()
        self.rubric = load_rubric(self.options.rubric)
        self.prompt = judge_prompt(self.options.prompt, self.rubric)
        items = load_items(self.options)
        self.items: list[SegmentItem] = items[: config.limit] if config.limit else items
        self.results: list[SegmentResult] = []

    def plan(self) -> list[SegmentItem]:
        """The segments of the run (``limit`` first ones)."""
        return list(self.items)

    async def run(self, on_item: Any = None) -> list[SegmentResult]:
        """Judge every segment (concurrency bounded per model by the llm layer)."""

        results: dict[int, SegmentResult] = {}  # by position in self.items

        async def one(index: int) -> None:
            results[index] = await self._judge(self.items[index])

        def done(index: int) -> None:
            if on_item is not None:
                on_item(results[index])

        await run_items(range(len(self.items)), one, workers([self.judge]), done)
        self.results = [results[i] for i in range(len(self.items))]
        return self.results

    def _render(self, item: SegmentItem) -> str:
        opts = self.options
        ref = ""
        if opts.use_reference and item.reference:
            ref = f"\nReference translation:\n{item.reference}\n"
        note = ""
        if item.locale:
            note = (f" The source is localised to the locale {item.locale}: check named "
                    "entities, names, idioms and numbers for it.")  # fmt: skip
        return self.prompt.render(
            source_lang=item.source_lang or opts.source_lang,
            target_lang=item.target_lang or opts.target_lang,
            locale_note=note,
            source=item.source,
            translation=item.translation,
            reference_block=ref,
        )

    def tasks(self) -> Iterator[Task]:
        """The judge task of every planned segment (one call each; ``--dry-run`` counts them)."""
        for item in self.plan():
            yield self._task(item)

    def _task(self, item: SegmentItem) -> Task:
        spec = self.judge
        digest = task_fingerprint(spec, self.prompt, self.options.use_reference)
        return Task(
            key=join_key("errors", item.id, spec.label, digest),
            stage="errors",
            role="judge",
            spec=spec,
            messages=[{"role": "user", "content": self._render(item)}],
            schema=annotation_schema(self.rubric),
            prompt=self.prompt,
            meta={"id": item.id, "system": item.system},
        )

    async def _judge(self, item: SegmentItem) -> SegmentResult:
        result = SegmentResult(item.id, item.system, item.doc, item.seg_id, item.locale)
        task = self._task(item)
        texts = {"source": item.source, "translation": item.translation}
        with checking(SEGMENT_TEXTS, texts):  # quotes are located during validation
            rec = await self.client.run(task)
        if rec.status != "ok":
            result.status = "unscored" if rec.status == "unscored" else "error"
            result.reason = f"judge_{rec.status}: {rec.reason}"
            return result
        try:  # again: a cached or resumed answer was validated without these texts maybe
            for err in rec.parsed["errors"]:
                etype = self.rubric.get_type(err["type"])
                side = etype.quote_from
                start, end = locate(texts[side], err["quote"], err.get("occurrence"), side)
                located = LocatedError(
                    err["type"], err["severity"], err["quote"], side, start, end, etype.mqm_category
                )
                result.errors.append(located)
        except (QuoteError, KeyError) as exc:
            result.status, result.reason, result.errors = "unscored", f"quote: {exc}", []
            return result
        result.status = "scored"
        result.mqm = segment_score(result.errors)
        return result


def items_from_mqm(
    tsv: str | Path,
    *,
    systems: list[str],
    n_segments: int,
    seed: int = 0,
    min_chars: int = 20,
    max_chars: int = 200,
    source_lang: str | None = None,
    target_lang: str | None = None,
) -> list[SegmentItem]:
    """Sample judge items from a Google MQM TSV: ``n_segments`` source segments (doc, seg_id)
    drawn at random (``seed``) among those rated for every system in ``systems`` whose
    translations are all ``min_chars``..``max_chars`` characters long, each with the outputs of
    every system (``len(systems) * n_segments`` items, id ``system|doc|seg_id``, in that order).

    Raises:
        InputError: a system is not in the file, or fewer segments qualify than asked for.
    """
    rows = read_mqm_tsv(tsv)
    texts: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}
    for r in rows:
        texts.setdefault((r.doc, r.seg_id), {})[r.system] = (r.source, r.target)
    known = {r.system for r in rows}
    for s in systems:
        if s not in known:
            raise InputError(tsv, f"system '{s}' not in the file (has: {sorted(known)})")
    keys = [
        k for k, by in texts.items()
        if all(s in by and min_chars <= len(by[s][1]) <= max_chars for s in systems)
    ]  # fmt: skip
    if len(keys) < n_segments:
        raise InputError(tsv, f"only {len(keys)} segments qualify, {n_segments} asked for")
    picked = random.Random(seed).sample(keys, n_segments)
    return [
        SegmentItem(id=f"{s}|{doc}|{seg}", source=texts[(doc, seg)][s][0],
                    translation=texts[(doc, seg)][s][1], system=s, doc=doc, seg_id=seg,
                    source_lang=source_lang, target_lang=target_lang)
        for s in systems for doc, seg in picked
    ]  # fmt: skip
