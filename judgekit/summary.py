"""The typed form of a run's ``summary.json``: :class:`RunSummary` and one sub-model a pipeline.

Every summary has ``signature`` (what made the numbers; :class:`judgekit.signature.Signature`),
``items`` (planned / judged / excluded by reason, which add up), ``usage`` (records by status
and stage, tokens, cost; :func:`judgekit.run_usage.usage_summary`) and ``files``. The pipelines
add their own parts (label counts, spilling rates, CS shares...), typed in the sub-models below;
keys not declared are kept (``extra="allow"``), so a newer summary still loads.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgekit.signature import Signature


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ItemCounts(_Open):
    """``planned`` items; ``judged`` ones; ``excluded`` counts by reason (``judgment_error``,
    ``no_translation``...). Where every planned item has a record, judged + excluded = planned."""

    planned: int = Field(ge=0)
    judged: int = Field(ge=0)
    excluded: dict[str, int] = Field(default_factory=dict)


class Usage(_Open):
    """Records of the run (``calls``: one per task) and HTTP ``requests`` (retries and re-asks
    included), by ``status`` and ``by_stage``; tokens, cost (USD) and latency (s) ``by_model``
    (``role|model``); ``totals`` of tokens and cost."""

    calls: int = Field(ge=0)
    requests: int = Field(0, ge=0)
    status: dict[str, int]
    by_stage: dict[str, dict[str, int]] = Field(default_factory=dict)
    by_model: dict[str, dict[str, float]] = Field(default_factory=dict)
    served_by: dict[str, int] = Field(default_factory=dict)
    reasons: dict[str, int] = Field(default_factory=dict)
    reasons_by_model: dict[str, dict[str, int]] = Field(default_factory=dict)
    totals: dict[str, float] = Field(default_factory=dict)


class RunSummary(_Open):
    """What every pipeline's ``summary.json`` holds (see the module doc)."""

    signature: Signature
    items: ItemCounts
    usage: Usage
    files: dict[str, Any] | list[str] = Field(default_factory=dict)


class ClassifySummary(RunSummary):
    """``labels``: per rater (judge name, ``#sK`` per sample when ``samples > 1``), the count
    of each label."""

    labels: dict[str, dict[str, int]] = Field(default_factory=dict)
    labels_common: dict[str, Any] = Field(default_factory=dict)


class SpillingSummary(RunSummary):
    """``spilling_rate``: invalid / judged meanings over the run (None when nothing was
    judged; paper 002, §4), ``spilling_rate_ci`` its 95% bootstrap CI over the judged items
    (None for fewer than 2, or a run made before it was written); ``rates``: tables by
    language, model, (model, language); ``backcheck``: the English back-check (§5);
    ``coverage``: dictionary coverage per language."""

    spilling_rate: float | None = Field(None, ge=0, le=1)
    spilling_rate_ci: list[float] | None = None
    rates: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    backcheck: dict[str, Any] = Field(default_factory=dict)
    coverage: list[dict[str, Any]] = Field(default_factory=list)


class CulturalSummary(RunSummary):
    """``shares``: CS shares with bootstrap CIs by ``all``, ``benchmark``, ``language`` and
    ``split`` (paper 001); ``validation``: rows of the table against human votes, if any."""

    shares: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    validation: list[dict[str, Any]] | None = None


class LocaliseSummary(RunSummary):
    """``by_locale``: per (generator, locale) pairs planned, localised, unchanged, excluded."""

    by_locale: list[dict[str, Any]] = Field(default_factory=list)


class ErrorsSummary(RunSummary):
    """``status``: segments by outcome (``scored``, ``unscored``, ``error``); ``type_counts``:
    segments with at least one error of each type, per system, with mean MQM; ``calibration``:
    the headline agreement with human MQM, where given."""

    status: dict[str, int] = Field(default_factory=dict)
    type_counts: list[dict[str, Any]] = Field(default_factory=list)
    calibration: Any = None


class PairwiseSummary(RunSummary):
    """``resolution``: the policy for verdicts that differ across the two orders and how many
    did; ``judges``: one row per (source, judge, subset): accuracy against gold with its 95%
    bootstrap CI, positional agreement, first-position win rate, tie rate, resolved accuracy
    (LLMBar, Zeng et al. 2024, §3); ``published``: the published verdicts matched, if any."""

    resolution: dict[str, Any] = Field(default_factory=dict)
    judges: list[dict[str, Any]] = Field(default_factory=list)
    published: dict[str, Any] | None = None


SUMMARIES: dict[str, type[RunSummary]] = {
    "classify": ClassifySummary,
    "spilling": SpillingSummary,
    "cultural": CulturalSummary,
    "localise": LocaliseSummary,
    "errors": ErrorsSummary,
    "pairwise": PairwiseSummary,
}


def parse_summary(data: dict[str, Any]) -> RunSummary:
    """``summary.json`` (a dict) as the typed summary of its pipeline (``signature.pipeline``;
    :class:`RunSummary` for a pipeline without its own model).

    Raises:
        pydantic.ValidationError: a required part is missing or ill-typed.
    """
    pipeline = (data.get("signature") or {}).get("pipeline")
    return SUMMARIES.get(str(pipeline), RunSummary).model_validate(data)
