"""The range each gate figure can take, and the refusal of a bound outside it: a share at least
1.5 could never pass, a kappa at most -1.2 never fail, so the rule could not be decided honestly
(exit 2 instead of a verdict)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from judgekit.errors import InputError

if TYPE_CHECKING:
    from judgekit.gate.spec import Rule

# The range a figure can take: a bound outside it could never be met (or never missed).
RANGES = {"share": (0.0, 1.0), "rate": (0.0, 1.0), "accuracy": (0.0, 1.0),
          "macro_f1": (0.0, 1.0), "kappa": (-1.0, 1.0)}  # fmt: skip


def check_bound(rule: Rule, figure: str | None, path: str | Path | None) -> Rule:
    """``rule`` if its bound lies in the range of its figure (``figure``: a target such as
    ``share:LABEL`` or ``rate``, an agreement metric; ``mean`` and None are not bounded); a
    difference's margin is at most the range's width.

    Raises:
        InputError: an impossible bound (gate file, rule line, field ``at_least``/``at_most``
            or ``margin``).
    """
    kind = (figure or "").split(":", 1)[0]
    if kind not in RANGES:
        return rule
    low, high = RANGES[kind]
    if rule.kind == "difference":
        if abs(rule.bound) > high - low:
            raise InputError(path, f"rule '{rule.name}': a margin of {abs(rule.bound):g} is "
                             f"beyond what a difference of {kind}s can be ({high - low:g})",
                             line=rule.line, field="margin")  # fmt: skip
        return rule
    if not low <= rule.bound <= high:
        raise InputError(path, f"rule '{rule.name}': a {kind} is in [{low:g}, {high:g}], so the "
                         f"bound {rule.bound:g} can never be decided honestly",
                         line=rule.line, field=rule.direction)  # fmt: skip
    return rule
