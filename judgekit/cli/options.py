"""The checks of numeric command-line options, one place for every command.

Integer counts (``--n-resamples``, ``--resamples``, ``--n-boot``, ``--permutations``) use
typer's ``min=`` (click's ``IntRange``). Floats need more than click's ``FloatRange``: NaN
compares false with every bound and passes it, so :func:`check_level` and
:func:`check_positive` are option callbacks that refuse NaN and infinities too. A bad value
stops the command before any work, exit 2, with click's one-line
``Invalid value for '--confidence': ...`` naming the option.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import typer


def _check(ok: Callable[[float], bool], expected: str) -> Callable[[float | None], float | None]:
    def callback(value: float | None) -> float | None:
        if value is not None and not (math.isfinite(value) and ok(value)):
            raise typer.BadParameter(f"{value!r} is not {expected}")
        return value

    return callback


def check_level() -> Callable[[float | None], float | None]:
    """Callback of a probability level (``--confidence``, ``--alpha``): finite, in (0, 1)."""
    return _check(lambda v: 0 < v < 1, "a level in (0, 1)")


def check_positive() -> Callable[[float | None], float | None]:
    """Callback of a positive finite float (``--width``)."""
    return _check(lambda v: v > 0, "a finite number > 0")
