"""Pipeline registry: name -> runner class and report function, imported lazily
(lm-evaluation-harness style), so a new pipeline is an entry here, not a switch statement.

A runner is built as ``Runner(config, client)``, exposes ``plan()`` (the items it will run) and
``async run(on_item)``; the report function writes tables, figures and ``summary.json``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from judgekit.errors import JudgekitError

PIPELINES: dict[str, tuple[str, str]] = {
    "classify": (
        "judgekit.pipelines.classify:ClassifyRun",
        "judgekit.pipelines.classify:write_report",
    ),
    "spilling": (
        "judgekit.pipelines.spilling:SpillingRun",
        "judgekit.report.spilling:write_report",
    ),
    "cultural": (
        "judgekit.pipelines.cultural:CulturalRun",
        "judgekit.report.cultural:write_report",
    ),
    "localise": (
        "judgekit.pipelines.localise:LocaliseRun",
        "judgekit.pipelines.localise:write_pairs",
    ),
    "pairwise": (
        "judgekit.pipelines.pairwise:PairwiseRun",
        "judgekit.report.pairwise:write_report",
    ),
    "errors": (
        "judgekit.pipelines.error_typing:ErrorsRun",
        "judgekit.report.error_typing:write_report",
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
    runner, report = PIPELINES[name]
    return _load(runner), _load(report)
