"""Pipeline registry: name -> runner class, report function and console printer, imported
lazily (lm-evaluation-harness style), so a new pipeline is an entry here, not a switch statement.

The contract (``judgekit.pipelines.base``): a runner is built as ``Runner(config, client)``,
exposes ``plan()`` (the items it will run) and ``async run(on_item)``; the report function
``write(run, records, out_dir) -> summary`` writes tables, figures and ``summary.json``; the
printer ``print(summary, console, run)`` (optional third entry) prints the console summary.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from judgekit.errors import JudgekitError

PIPELINES: dict[str, tuple[str, ...]] = {
    "classify": (
        "judgekit.pipelines.classify:ClassifyRun",
        "judgekit.pipelines.classify:write_report",
        "judgekit.report.console:print_classify",
    ),
    "spilling": (
        "judgekit.pipelines.spilling:SpillingRun",
        "judgekit.report.spilling:write_report",
        "judgekit.report.console:print_spilling",
    ),
    "cultural": (
        "judgekit.pipelines.cultural:CulturalRun",
        "judgekit.report.cultural:write_report",
        "judgekit.report.cultural:print_summary",
    ),
    "localise": (
        "judgekit.pipelines.localise:LocaliseRun",
        "judgekit.pipelines.localise:write_pairs",
        "judgekit.report.console:print_localise",
    ),
    "pairwise": (
        "judgekit.pipelines.pairwise:PairwiseRun",
        "judgekit.report.pairwise:write_report",
        "judgekit.report.pairwise:print_summary",
    ),
    "errors": (
        "judgekit.pipelines.error_typing:ErrorsRun",
        "judgekit.report.error_typing:write_report",
        "judgekit.report.console:print_errors",
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
    runner, report = PIPELINES[name][:2]
    return _load(runner), _load(report)


def get_printer(name: str) -> Callable[..., None] | None:
    """The console printer ``print(summary, console, run)`` of a registered pipeline, or None
    where it has none (the engine's own summary line is printed either way)."""
    entry = PIPELINES.get(name, ())
    return _load(entry[2]) if len(entry) > 2 else None
