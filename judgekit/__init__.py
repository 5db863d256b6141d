"""judgekit: LLM judges for multilingual and translation benchmarks, calibrated against humans.

The Python entry points, imported on first use (``import judgekit`` stays cheap):

* :func:`judgekit.run` (``judgekit.engine.run``): run a config's pipeline, resumable.
* :func:`judgekit.load_run` (``judgekit.results.load_run``): a finished run directory.
* :class:`judgekit.RunResult`, :class:`judgekit.RunSummary`, :class:`judgekit.Signature`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from judgekit.engine import run
    from judgekit.results import RunResult, load_run
    from judgekit.signature import Signature
    from judgekit.summary import RunSummary

_LAZY = {
    "run": "judgekit.engine",
    "load_run": "judgekit.results",
    "RunResult": "judgekit.results",
    "RunSummary": "judgekit.summary",
    "Signature": "judgekit.signature",
}

__all__ = ["RunResult", "RunSummary", "Signature", "__version__", "load_run", "run"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'judgekit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
