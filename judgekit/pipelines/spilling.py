"""Dictionary-grounded language-spilling benchmark (paper 002: Badanin et al., arXiv 2601.12549).

Stages per (generator model, language, word, sample), after an optional ``translate`` stage
(``translations: model``: the ``translator`` role translates the words with the paper's prompt,
appendix A.2, instead of reading ``dictionaries/translations.tsv``):

1. ``generate``: the paper's prompt, in the target language, asks for 5 distinct meanings of
   the translated word with exactly 3 usage examples each (appendix A.1).
2. ``judge``: the judge sees the word's dictionary entry in that language and the 5 meanings and
   returns 5 booleans (appendix A.3 prompt by default; variants in ``prompts/spilling/``).
3. ``backcheck`` (optional, §5): meanings rejected in the target language are translated to
   English and judged against the English WordNet entry of the source word.

Spilling rate = invalid meanings / judged meanings. A word with no translation or no dictionary
entry is never generated nor judged; responses without 5 distinct meanings and unparseable
judgments are excluded. Every exclusion is counted by reason in ``summary.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from judgekit.config import RunConfig
from judgekit.lexicon.store import DictEntry, load_dictionary, load_translations, load_words
from judgekit.llm.client import LLMClient, Task
from judgekit.llm.spec import ModelSpec
from judgekit.pipelines.base import require_models, run_items, task_fingerprint, workers
from judgekit.pipelines.options.spilling import SpillingOptions
from judgekit.pipelines.spilling_schemas import MeaningsAnswer, judge_schema, translation_schema
from judgekit.pipelines.spilling_translate import translate_words
from judgekit.prompts import load_prompt
from judgekit.runlog import Record, join_key

LANGUAGE_NAMES = {
    "ru": "Russian", "fr": "French", "zh": "Chinese", "ja": "Japanese", "it": "Italian",
    "de": "German", "pt": "Portuguese", "es": "Spanish", "hi": "Hindi", "en": "English",
}  # fmt: skip


@dataclass
class ItemResult:
    """Outcome of one (model, lang, word, sample): judged, or excluded with a reason."""

    model: str
    lang: str
    word: str
    translation: str
    sample: int
    excluded: str | None = None
    valid: list[bool] = field(default_factory=list)
    meanings: list[str] = field(default_factory=list)
    n_rejected_checked: int = 0
    n_accepted_en: int = 0
    backcheck_excluded: str | None = None

    def row(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "lang": self.lang,
            "word": self.word,
            "translation": self.translation,
            "sample": self.sample,
            "excluded": self.excluded,
            "n_judged": len(self.valid),
            "n_invalid": sum(not v for v in self.valid),
            "n_rejected": self.n_rejected_checked,
            "n_accepted_en": self.n_accepted_en,
            "backcheck_excluded": self.backcheck_excluded,
        }


def render_entry(entry: DictEntry) -> str:
    """The dictionary excerpt as the judge sees it: headword, source, numbered senses."""
    lines = [f"{entry.word} ({LANGUAGE_NAMES.get(entry.lang, entry.lang)}; {entry.source})"]
    lines += [f"{i}. {sense}" for i, sense in enumerate(entry.senses, 1)]
    return "\n".join(lines)


def _user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


class SpillingRun:
    """Builds and runs the tasks of one spilling run; ``results`` holds one ItemResult each."""

    def __init__(self, config: RunConfig, client: LLMClient | None) -> None:
        self.generators = require_models(config, "generator", "spilling")
        self.config = config
        self.options = config.options("spilling", SpillingOptions)
        self.client = client
        self.judge: ModelSpec = config.single_judge()
        self.translator: ModelSpec = config.translator or self.judge
        self.judge_prompt = load_prompt(f"spilling/judge.{self.options.judge_prompt}")
        self.backcheck_prompt = load_prompt("spilling/backcheck.translate")
        self.meaning_prompts = {
            lang: load_prompt(f"spilling/meanings.{lang}") for lang in self.options.languages
        }
        self.dictionaries = {lang: load_dictionary(lang) for lang in self.options.languages}
        self.english = load_dictionary("en")
        translations = load_translations()
        self.translations = {(t.word, t.lang): t.translation for t in translations}
        words = self.options.words or load_words()
        limit = config.limit
        self.words = words[:limit] if limit else words
        self.results: list[ItemResult] = []
        self.model_translations: dict[tuple[str, str], str] = {}

    def plan(self) -> list[ItemResult]:
        """Every (model, language, word, sample) of the run, excluded up front where the
        translation or the dictionary entry is missing."""
        items = []
        for spec in self.config.generators():
            for lang in self.options.languages:
                for word in self.words:
                    for sample in range(self.options.samples):
                        translation = self.translations.get((word, lang), "")
                        item = ItemResult(spec.label, lang, word, translation, sample)
                        if not translation:
                            item.excluded = "no_translation"
                        elif translation not in self.dictionaries[lang]:
                            item.excluded = "no_dictionary_entry"
                        items.append(item)
        return items

    async def run(self, on_item: Any = None) -> list[ItemResult]:
        """Run every planned item (concurrency is bounded per model by the llm layer)."""
        specs = {spec.label: spec for spec in self.config.generators()}
        if self.options.translations == "model":
            found, _failed = await translate_words(
                self.client, self.translator, self.words, self.options.languages
            )
            self.model_translations = found
            self.translations = dict(found)
        items = self.plan()

        async def one(item: ItemResult) -> None:
            if item.excluded is None:
                await self._run_item(specs[item.model], item)

        models = [*self.generators, self.judge, self.translator]
        self.results = await run_items(items, one, workers(models), on_item)
        return self.results

    # later stages depend on earlier answers: --dry-run counts the generations, and says so
    dry_run_note = (
        "Counted: the generations. Then at most 1 judge call per valid generation, and for the "
        "English back-check at most 2 calls per judged item (model translations: 1 per 10 words)."
    )

    def tasks(self) -> Iterator[Task]:
        """The generation task of every planned item that is not excluded up front (the
        first stage; the judge and back-check tasks depend on its answers)."""
        specs = {spec.label: spec for spec in self.config.generators()}
        for item in self.plan():
            if item.excluded is None:
                yield self._generation_task(specs[item.model], item)

    def _generation_task(self, spec: ModelSpec, item: ItemResult) -> Task:
        prompt = self.meaning_prompts[item.lang]
        return Task(
            key=f"generate|{_ident(item)}|{task_fingerprint(spec, prompt)}",
            stage="generate",
            role="generator",
            spec=spec,
            messages=_user(prompt.render(word=item.translation)),
            schema=MeaningsAnswer,
            prompt=prompt,
            sample_index=item.sample,
            meta=_meta(item),
        )

    async def _run_item(self, spec: ModelSpec, item: ItemResult) -> None:
        ident, meta, lang = _ident(item), _meta(item), item.lang
        gen = await self.client.run(self._generation_task(spec, item))
        if gen.status != "ok":
            item.excluded = _generation_exclusion(gen)
            return
        answer = MeaningsAnswer.model_validate(gen.parsed)
        item.meanings = [m.meaning for m in answer.meanings]
        entry = self.dictionaries[lang][item.translation]
        judged = await self._judge(
            entry, answer.as_query(), f"judge|{ident}", meta, item.model, stage="judge"
        )
        if isinstance(judged, str):  # judgment_unscored (unparseable) or judgment_error
            item.excluded = judged
            return
        item.valid = judged
        pairs = zip(answer.as_query().items(), judged, strict=True)
        rejected = {m: ex for (m, ex), ok in pairs if not ok}
        if self.options.backcheck and rejected:
            await self._backcheck(item, rejected, ident, meta)

    async def _judge(
        self,
        entry: DictEntry,
        query: dict[str, list[str]],
        key: str,
        meta: dict[str, Any],
        generator: str,
        *,
        stage: str,
    ) -> list[bool] | str:
        """The judge's booleans, or ``judgment_unscored`` / ``judgment_error`` when the judge
        never answered validly / never answered."""
        prompt, n = self.judge_prompt, len(query)
        text = prompt.render(
            dictionary=render_entry(entry),
            query=json.dumps(query, ensure_ascii=False, indent=1),
            n=n,
        )
        rec = await self.client.run(
            Task(
                key=f"{key}|{join_key(self.judge.label)}|{task_fingerprint(self.judge, prompt)}",
                stage=stage,
                role="judge",
                spec=self.judge,
                messages=_user(text),
                schema=judge_schema(n),
                prompt=prompt,
                meta={**meta, "generator": generator},
            )
        )
        return list(rec.parsed["valid"]) if rec.status == "ok" else f"judgment_{rec.status}"

    async def _backcheck(
        self, item: ItemResult, rejected: dict[str, list[str]], ident: str, meta: dict[str, Any]
    ) -> None:
        english = self.english.get(item.word)
        if english is None:
            item.backcheck_excluded = "no_english_entry"
            return
        n, prompt = len(rejected), self.backcheck_prompt
        rec = await self.client.run(
            Task(
                key=f"backcheck_translate|{ident}|{task_fingerprint(self.translator, prompt)}",
                stage="backcheck_translate",
                role="translator",
                spec=self.translator,
                messages=_user(
                    prompt.render(
                        n=n,
                        language=LANGUAGE_NAMES.get(item.lang, item.lang),
                        word=item.translation,
                        query=json.dumps(rejected, ensure_ascii=False, indent=1),
                    )
                ),
                schema=translation_schema(n),
                prompt=prompt,
                meta=meta,
            )
        )
        if rec.status != "ok":
            item.backcheck_excluded = f"translation_{rec.status}"
            return
        query = {t: [] for t in rec.parsed["translations"]}
        if len(query) != n:  # two meanings translated alike: keep order and count
            query = {f"{i + 1}. {t}": [] for i, t in enumerate(rec.parsed["translations"])}
        judged = await self._judge(
            english, query, f"backcheck_judge|{ident}", meta, item.model, stage="backcheck_judge"
        )
        if isinstance(judged, str):
            item.backcheck_excluded = judged
            return
        item.n_rejected_checked = n
        item.n_accepted_en = sum(judged)


def _ident(item: ItemResult) -> str:
    return join_key(item.model, item.lang, item.word, f"s{item.sample}")


def _meta(item: ItemResult) -> dict[str, Any]:
    return {"lang": item.lang, "word": item.word, "translation": item.translation,
            "sample": item.sample}  # fmt: skip


def _generation_exclusion(record: Record) -> str:
    """Why a generation is excluded: ``not_5_distinct_meanings`` (an answer of the wrong
    shape: paper 002, §3.3), ``generation_truncated``, ``generation_malformed_json``,
    ``generation_empty`` (answers that never validated) or ``generation_error`` (no answer)."""
    if record.status == "error":
        return "generation_error"
    kind = (record.reason or "").split(":", 1)[0]
    return "not_5_distinct_meanings" if kind == "schema" else f"generation_{kind or 'unscored'}"
