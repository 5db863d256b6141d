"""The order the viewer shows ids and labels in: ids that are numbers as numbers (``2`` before
``10``, ``r2`` before ``r10``), and labels of a known ordinal scale in the scale's order
(MQM severities: ``no errors``, ``minor``, ``major``, ``critical``), every other label as text.

The page sorts its tables the same way (``Intl.Collator`` with ``numeric: true``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# ordinal scales, lowest first; a label set inside one of them is shown in its order
SCALES: tuple[tuple[str, ...], ...] = (("no errors", "no-error", "minor", "major", "critical"),)
_DIGITS = re.compile(r"(\d+)")


def natural_key(text: object) -> tuple[tuple[int, int | str], ...]:
    """A sort key that compares the runs of digits in ``text`` as numbers, the rest as text
    (case-folded): ``"5" < "10"``, ``"item-2" < "item-10"``."""
    parts = _DIGITS.split(str(text))
    return tuple((1, int(p)) if k % 2 else (0, p.casefold()) for k, p in enumerate(parts))


def ordered(labels: Iterable[object]) -> list[str]:
    """``labels`` (as text, each once) in the order of the ordinal scale that holds them all,
    else in natural order (:func:`natural_key`)."""
    found = list(dict.fromkeys(str(x) for x in labels))
    for scale in SCALES:
        if found and set(found) <= set(scale):
            return [x for x in scale if x in found]
    return sorted(found, key=natural_key)
