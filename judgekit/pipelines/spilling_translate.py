"""Optional first stage of the spilling pipeline: translate the English words with a model,
using the paper's translation prompt (paper 002, appendix A.2; §3.1: nouns where possible, no
katakana for Japanese). Each batch of words is one structured call; the answer must hold a
non-empty translation for every (word, language) asked, and no Japanese translation written
only in katakana.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from judgekit.llm.client import LLMClient, Task
from judgekit.llm.spec import ModelSpec
from judgekit.pipelines.spilling_schemas import NonEmpty
from judgekit.prompts import load_prompt
from judgekit.runlog import join_key

BATCH = 10
_KATAKANA = re.compile(r"^[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f\s]+$")


def _no_katakana(value: str) -> str:
    if _KATAKANA.match(value):
        raise ValueError(f"'{value}' is written in katakana; the paper asks for a native word")
    return value


@cache
def translation_table_schema(words: tuple[str, ...], langs: tuple[str, ...]) -> type[BaseModel]:
    """``{"translations": {word: {lang: str}}}`` for exactly these words and languages."""
    validators: dict[str, Any] = {}
    if "ja" in langs:
        validators["_ja"] = field_validator("ja")(classmethod(lambda cls, v: _no_katakana(v)))
    per_word = create_model(
        "WordTranslation",
        __validators__=validators,
        **{lang: (NonEmpty, ...) for lang in langs},
    )
    table = create_model(
        "Translations",
        __config__=ConfigDict(populate_by_name=True),
        **{f"w{i}": (per_word, Field(alias=word)) for i, word in enumerate(words)},
    )
    return create_model("TranslationTable", translations=(table, ...))


async def translate_words(
    client: LLMClient, translator: ModelSpec, words: list[str], langs: list[str]
) -> tuple[dict[tuple[str, str], str], list[str]]:
    """Translate ``words`` into ``langs`` in batches of 10.

    Returns:
        ``{(word, lang): translation}`` for every batch answered validly, and the words of the
        batches that stayed ``unscored``/``error`` (those words get no translation and are
        excluded from the run as ``no_translation``).
    """
    prompt = load_prompt("spilling/translate.words")
    found: dict[tuple[str, str], str] = {}
    failed: list[str] = []
    for start in range(0, len(words), BATCH):
        batch = tuple(words[start : start + BATCH])
        schema = translation_table_schema(batch, tuple(langs))
        record = await client.run(
            Task(
                key=join_key(
                    "translate", translator.label, prompt.hash, json.dumps([batch, langs])
                ),
                stage="translate",
                role="translator",
                spec=translator,
                messages=[{"role": "user", "content": prompt.render(words=json.dumps(batch))}],
                schema=schema,
                prompt=prompt,
                meta={"words": list(batch)},
            )
        )
        if record.status != "ok":
            failed.extend(batch)
            continue
        # re-validate: the record may hold field names or aliases (the words) as keys
        table = schema.model_validate(record.parsed).model_dump(by_alias=True)["translations"]
        for word in batch:
            for lang in langs:
                found[(word, lang)] = table[word][lang]
    return found, failed
