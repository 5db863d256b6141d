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


def natural_key(text: object) -> tuple[str | int, ...]:
    """A sort key that compares the runs of digits in ``text`` as numbers, the rest as text
    (case-folded): ``"5" < "10"``, ``"item-2" < "item-10"``.

    The key alternates text and number (``"item-10b"``: ``("item-", 10, "b")``), so two keys
    hold text against text and numbers against numbers at every position."""
    parts: list[str | int] = _DIGITS.split(str(text).casefold())  # type: ignore[assignment]
    parts[1::2] = map(int, parts[1::2])  # type: ignore[arg-type]
    return tuple(parts)


def natural_sorted(texts: Iterable[str], keys: dict[str, tuple[str | int, ...]]) -> list[str]:
    """``texts`` in natural order (:func:`natural_key`; texts with equal keys, such as ``a1``
    and ``a01``, in text order). ``keys`` memoises each text's key across calls (one key per
    distinct text, however many lists it is sorted in)."""

    def key(text: str) -> tuple[tuple[str | int, ...], str]:
        found = keys.get(text)
        if found is None:
            found = keys[text] = natural_key(text)
        return found, text

    return sorted(texts, key=key)


def ordered(labels: Iterable[object]) -> list[str]:
    """``labels`` (as text, each once) in the order of the ordinal scale that holds them all,
    else in natural order (:func:`natural_key`)."""
    found = list(dict.fromkeys(str(x) for x in labels))
    for scale in SCALES:
        if found and set(found) <= set(scale):
            return [x for x in scale if x in found]
    return sorted(found, key=natural_key)
