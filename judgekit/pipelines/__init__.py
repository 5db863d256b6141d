"""Pipeline registry: one entry per pipeline, naming its five parts, imported lazily
(lm-evaluation-harness style), so a new pipeline is its own files and one entry here, not a
switch statement.

The contract (``judgekit.pipelines.base``): a runner is built as ``Runner(config, client)``,
exposes ``plan()`` (the items it will run), ``tasks()`` (its calls known in advance) and
``async run(on_item)``; the report function ``write(run, records, out_dir) -> summary`` writes
tables, figures and ``summary.json``; the printer ``print(summary, console, run)`` prints the
console summary; the viewer profile (:class:`judgekit.view.profile.Profile`) tells
``judgekit view`` what a record of the pipeline judges, its label, units and facets; the options
model (a pydantic model in :mod:`judgekit.pipelines.options`) types the pipeline's section of a
run config and is checked when the config loads.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from pydantic import BaseModel

from judgekit.errors import JudgekitError


@dataclass(frozen=True)
class Pipeline:
    """One pipeline's parts, each as ``module:attribute`` (imported when asked for).

    Attributes:
        runner: the runner class (:class:`judgekit.pipelines.base.Runner`).
        report: the report writer ``write(run, records, out_dir) -> summary``.
        printer: the console printer ``print(summary, console, run)``.
        profile: the viewer profile (:class:`judgekit.view.profile.Profile`).
        options: the options model of the pipeline's config section (``<name>:``).
        few_shot: the pipeline's few-shot capability (:class:`judgekit.pipelines.few_shot.
            FewShot`: its option key and how one labelled example renders), or None for a
            pipeline that takes no examples.
    """

    runner: str
    report: str
    printer: str
    profile: str
    options: str
    few_shot: str | None = None

    def parts(self) -> dict[str, str]:
        """``part name -> module:attribute`` of every part the pipeline has."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}


PIPELINES: dict[str, Pipeline] = {
    "classify": Pipeline(
        "judgekit.pipelines.classify:ClassifyRun",
        "judgekit.pipelines.classify:write_report",
        "judgekit.report.console:print_classify",
        "judgekit.report.classify_view:PROFILE",
        "judgekit.pipelines.options.classify:ClassifyOptions",
        "judgekit.pipelines.classify:FEW_SHOT",
    ),
    "spilling": Pipeline(
        "judgekit.pipelines.spilling:SpillingRun",
        "judgekit.report.spilling:write_report",
        "judgekit.report.console:print_spilling",
        "judgekit.report.spilling_view:PROFILE",
        "judgekit.pipelines.options.spilling:SpillingOptions",
    ),
    "cultural": Pipeline(
        "judgekit.pipelines.cultural:CulturalRun",
        "judgekit.report.cultural:write_report",
        "judgekit.report.cultural:print_summary",
        "judgekit.report.cultural_view:PROFILE",
        "judgekit.pipelines.options.cultural:CulturalOptions",
        "judgekit.pipelines.cultural:FEW_SHOT",
    ),
    "localise": Pipeline(
        "judgekit.pipelines.localise:LocaliseRun",
        "judgekit.pipelines.localise:write_pairs",
        "judgekit.report.console:print_localise",
        "judgekit.report.localise_view:PROFILE",
        "judgekit.pipelines.options.localise:LocaliseOptions",
    ),
    "pairwise": Pipeline(
        "judgekit.pipelines.pairwise:PairwiseRun",
        "judgekit.report.pairwise:write_report",
        "judgekit.report.pairwise:print_summary",
        "judgekit.report.pairwise_view:PROFILE",
        "judgekit.pipelines.options.pairwise:PairwiseOptions",
        "judgekit.pipelines.pairwise:FEW_SHOT",
    ),
    "errors": Pipeline(
        "judgekit.pipelines.error_typing:ErrorsRun",
        "judgekit.report.error_typing:write_report",
        "judgekit.report.console:print_errors",
        "judgekit.report.error_typing_view:PROFILE",
        "judgekit.pipelines.options.errors:ErrorsOptions",
    ),
}


def _load(path: str) -> Any:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def get_pipeline(name: str) -> tuple[type, Callable[..., dict[str, Any]]]:
    """(runner class, report function) of a registered pipeline.

    Raises:
        JudgekitError: no pipeline of that name.
    """
    if name not in PIPELINES:
        raise JudgekitError(f"unknown pipeline '{name}' (known: {', '.join(sorted(PIPELINES))})")
    entry = PIPELINES[name]
    return _load(entry.runner), _load(entry.report)


def get_printer(name: str) -> Callable[..., None] | None:
    """The console printer ``print(summary, console, run)`` of a registered pipeline, or None
    for an unknown name (the engine's own summary line is printed either way)."""
    entry = PIPELINES.get(name)
    return None if entry is None else _load(entry.printer)


def get_options(name: str) -> type[BaseModel] | None:
    """The options model of a registered pipeline's config section, or None for an unknown
    name."""
    entry = PIPELINES.get(name)
    return None if entry is None else _load(entry.options)


def get_profile(name: str) -> Any | None:
    """The viewer profile of a registered pipeline, or None for an unknown name (a run of a
    pipeline this version does not know: the viewer then keys rows by record)."""
    entry = PIPELINES.get(name)
    return None if entry is None else _load(entry.profile)


def get_few_shot(name: str) -> Any | None:
    """The few-shot capability (:class:`judgekit.pipelines.few_shot.FewShot`) of a registered
    pipeline, or None where the pipeline (or an unknown name) takes no examples."""
    entry = PIPELINES.get(name)
    return None if entry is None or entry.few_shot is None else _load(entry.few_shot)


def few_shot_pipelines() -> list[str]:
    """The names of the pipelines that take few-shot examples, sorted."""
    return sorted(name for name, entry in PIPELINES.items() if entry.few_shot is not None)
