"""Signatures: everything that made a run's (or a calibration's) numbers, in sacrebleu's spirit.

One :class:`Signature` records the judgekit version, the pipeline, the models with their route
and revision, the prompts (id and hash), the answer schema's hash, the parameters, the hashes of
the data files and the seed. It is stored as the ``signature`` of every ``summary.json`` and
calibration result, and printed as one line (:meth:`Signature.format`), e.g.::

    judgekit:0.1.0|pipeline:classify|judge:gpt=openai/gpt-4o-mini@2024-07-18|
    prompt:classify/default@3f2a9c1e|schema:0b1c2d3e|data:items.jsonl@9a8b7c6d|seed:0

(one line; wrapped here). Two runs with the same line asked the same models the same questions.
A pipeline may add keys of its own (``extra``), e.g. its label set or rubric; they are kept in
the JSON, not in the line.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgekit import __version__
from judgekit.data.digest import file_sha256


class ModelSignature(BaseModel):
    """One model as a run used it: ``role`` (``judge``, ``generator``, ``translator``),
    ``name`` (its label), ``route`` (litellm model string), ``revision`` (None where unknown)
    and the generation ``params`` that change its answers (temperature, max_tokens, seed...);
    ``scoring`` is how its labels were scored where log-probabilities were asked for, as the
    run's records carry it (``label_probs@top10`` when every ``ok`` record has
    ``label_probs``, ``hard`` when none has, ``label_probs@top10:3/4+hard:1/4`` for a mix;
    ``judgekit.llm.logprob_watch.note_scoring``; None: not asked for)."""

    role: str
    name: str
    route: str
    revision: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    scoring: str | None = None

    @classmethod
    def of(cls, spec: Any, role: str) -> ModelSignature:
        """From a :class:`~judgekit.llm.spec.ModelSpec` in ``role``; ``params`` are those sent
        (``judgekit.llm.params.sent_params``: a route's unsupported ones left out)."""
        from judgekit.llm.params import sent_params

        asked = spec.logprobs or getattr(spec, "_no_logprobs", False)
        return cls(
            role=role, name=spec.label, route=spec.model, revision=spec.revision,
            params=sent_params(spec), scoring=spec.scoring() if asked else None,
        )  # fmt: skip


class Signature(BaseModel):
    """What made the numbers (see the module doc).

    Attributes:
        judgekit: judgekit's version.
        pipeline: pipeline or calibration (``classify``, ``calibrate-judge``...).
        models: the models, each with role, route and revision.
        prompts: prompt id -> SHA-256 prefix of its template.
        schema_hash: SHA-256 prefix of the answer schemas' JSON Schema (None: no model call).
        parameters: the options that change the numbers (label set, bootstrap resamples...).
        data: data file -> SHA-256 (None for a file that is not there).
        seed: the run's or the resampling's seed.
    """

    model_config = ConfigDict(extra="allow")

    judgekit: str = __version__
    pipeline: str
    models: list[ModelSignature] = Field(default_factory=list)
    prompts: dict[str, str] = Field(default_factory=dict)
    schema_hash: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, str | None] = Field(default_factory=dict)
    seed: int | None = None

    def format(self) -> str:
        """The one-line form: ``judgekit:V|pipeline:P|ROLE:NAME=ROUTE[@REV]|prompt:ID@HASH|
        schema:HASH|data:FILE@HASH|seed:N`` (hashes cut to 8 hex digits)."""
        parts = [f"judgekit:{self.judgekit}", f"pipeline:{self.pipeline}"]
        for m in self.models:
            parts.append(f"{m.role}:{m.name}={m.route}" + (f"@{m.revision}" if m.revision else ""))
            if m.scoring is not None:
                parts.append(f"scoring:{m.scoring}")
        parts += [f"prompt:{pid}@{str(h)[:8]}" for pid, h in self.prompts.items()]
        if self.schema_hash:
            parts.append(f"schema:{self.schema_hash[:8]}")
        parts += [f"data:{Path(f).name}@{(h or 'missing')[:8]}" for f, h in self.data.items()]
        if self.seed is not None:
            parts.append(f"seed:{self.seed}")
        return "|".join(parts)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready dict (for ``summary.json``); a model's ``scoring`` only where set."""
        data = self.model_dump(mode="json")
        for model in data["models"]:
            if model.get("scoring") is None:
                model.pop("scoring", None)
        return data


def schema_hash(*schemas: type[BaseModel]) -> str:
    """16 hex digits of SHA-256 over the JSON Schemas of ``schemas`` (in order)."""
    blob = json.dumps([s.model_json_schema() for s in schemas], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def file_hash(path: Path | str) -> str | None:
    """SHA-256 (64 hex digits) of a file's bytes, streamed; None when it is not a file."""
    target = Path(path)
    return file_sha256(target) if target.is_file() else None
