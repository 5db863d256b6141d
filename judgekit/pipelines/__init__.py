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
    """

    runner: str
    report: str
    printer: str
    profile: str
    options: str

    def parts(self) -> dict[str, str]:
        """``part name -> module:attribute`` of every part."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


PIPELINES: dict[str, Pipeline] = {
    "classify": Pipeline(
        "judgekit.pipelines.classify:ClassifyRun",
        "judgekit.pipelines.classify:write_report",
        "judgekit.report.console:print_classify",
        "judgekit.report.classify_view:PROFILE",
        "judgekit.pipelines.options.classify:ClassifyOptions",
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
