"""The Task: one structured LLM call a pipeline asks for (a leaf type: it imports no other
module of the llm layer, so ``client``, ``call`` and ``models`` all use it without importing
each other)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from judgekit.llm.spec import ModelSpec
from judgekit.prompts import Prompt


@dataclass
class Task:
    """One structured LLM call a pipeline asks for.

    Attributes:
        key: stable id of the task in the run (resume skips keys already recorded).
        stage: pipeline stage (``generate``, ``judge``...).
        role: config role whose model answers (``generator``, ``judge``...).
        spec: the model.
        messages: chat messages (OpenAI format).
        schema: pydantic model the answer must validate against.
        prompt: the template the messages were rendered from (id and hash are recorded).
        sample_index: repeat number for deliberate resampling (part of the cache key).
        meta: data the pipeline needs back with the record (word, language...).
    """

    key: str
    stage: str
    role: str
    spec: ModelSpec
    messages: list[dict[str, Any]]
    schema: type[BaseModel]
    prompt: Prompt
    sample_index: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
