"""Helpers for users' own test suites (pytest or any runner that treats AssertionError as a
failure): :func:`assert_gate` decides a gate and fails the test with the gate's Markdown table
unless it passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["assert_gate"]


def assert_gate(gate: str | Path | Any, *, allow_inconclusive: bool = False,
                alpha: float | None = None) -> Any:  # fmt: skip
    """Run a gate (:func:`judgekit.gate.run_gate`) and assert that it passes.

    Args:
        gate: a ``GATE.yaml`` path or a :class:`judgekit.gate.GateSpec`.
        allow_inconclusive: an inconclusive gate passes too (a failed check never does).
        alpha: overrides the gate's alpha, in (0, 0.5).

    Returns:
        The :class:`judgekit.gate.GateResult`, for further assertions.

    Raises:
        AssertionError: the gate failed (or was inconclusive without ``allow_inconclusive``);
            the message is the gate's Markdown summary (every check, its interval, bound,
            p-value, verdict and the labels that would decide it).
        InputError: a bad gate or input file (as ``judgekit gate`` exits 2).
    """
    from judgekit.gate import run_gate
    from judgekit.report.gate import markdown

    result = run_gate(gate, alpha=alpha)
    if result.verdict == "pass" or (allow_inconclusive and result.verdict == "inconclusive"):
        return result
    raise AssertionError(f"gate {result.verdict}\n{markdown(result)}")
