"""Comparing systems, models or judges on the items every one of them had scored.

A mean over each group's own scored items compares different item sets: with system A scored on
2 segments (mean MQM 2.50) and system B on 1 of its 2 (MQM 0.00, the other unscored), B ranks
best only because its hard segment dropped out. judgekit's one rule, wherever it aggregates
judged items across groups (the errors pipeline's MQM per system, spilling rates per model,
classify label shares per judge, the errors calibration's system-level MQM):

* the comparison (a ranking, a value shown side by side) uses the **common items**: those
  scored for every group, and their count is shown;
* a group with a planned item left unscored is **incomplete** and marked so;
* each group's value over all its own scored items may be kept next to it, never ranked on.

:func:`coverage` computes the common items and each group's counts; :meth:`Coverage.row`
gives the columns every table adds (``n_items``, ``n_scored``, ``n_common``, ``incomplete``);
:func:`tied_ranks` ranks the groups on their common-item values, ties sharing a rank.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Coverage:
    """Which items each group had scored, and the items all groups had scored.

    Attributes:
        groups: the groups in first-seen order.
        common: keys of the items scored for every group (empty with no group).
        planned: items per group (scored or not).
        scored: scored items per group.
    """

    groups: tuple[Hashable, ...]
    common: frozenset[Hashable]
    planned: dict[Hashable, int]
    scored: dict[Hashable, int]

    @property
    def n_common(self) -> int:
        """Number of common items (scored for every group)."""
        return len(self.common)

    def incomplete(self, group: Hashable) -> bool:
        """True when ``group`` has a planned item that was not scored."""
        return self.scored[group] < self.planned[group]

    def incomplete_groups(self) -> list[Hashable]:
        """The incomplete groups, in order."""
        return [g for g in self.groups if self.incomplete(g)]

    def row(self, group: Hashable) -> dict[str, Any]:
        """``{"n_items", "n_scored", "n_common", "incomplete"}`` of ``group``."""
        return {
            "n_items": self.planned[group],
            "n_scored": self.scored[group],
            "n_common": self.n_common,
            "incomplete": self.incomplete(group),
        }


def coverage(rows: Iterable[tuple[Hashable, Hashable, bool]]) -> Coverage:
    """Coverage of ``(group, item key, scored)`` rows (one per planned item of a group).

    An item planned for some groups only is common only if every group scored it (so it is
    never common when a group lacks it). Repeated rows of one (group, item) count once per row
    in ``planned``/``scored``; the item is scored for the group if any of its rows is.
    """
    groups: dict[Hashable, set[Hashable]] = {}
    planned: dict[Hashable, int] = {}
    scored: dict[Hashable, int] = {}
    for group, item, ok in rows:
        done = groups.setdefault(group, set())
        planned[group] = planned.get(group, 0) + 1
        scored[group] = scored.get(group, 0) + int(bool(ok))
        if ok:
            done.add(item)
    sets = list(groups.values())
    common = frozenset(set.intersection(*sets)) if sets else frozenset()
    return Coverage(tuple(groups), common, planned, scored)


def common_mean(
    values: Sequence[T], key: Callable[[T], Hashable], value: Callable[[T], float], cov: Coverage
) -> float | None:
    """Mean of ``value`` over the ``values`` whose ``key`` is a common item; None if none is."""
    picked = [value(v) for v in values if key(v) in cov.common]
    return sum(picked) / len(picked) if picked else None


def segment_key(segment: Mapping[str, Any]) -> tuple[str, str]:
    """The item an MT segment is across systems: ``(doc, seg_id)``, else ``("", source)``."""
    if segment["doc"] or segment["seg_id"]:
        return (segment["doc"], segment["seg_id"])
    return ("", segment["source"])


def system_coverage(segments: Iterable[Mapping[str, Any]]) -> Coverage:
    """Coverage of judged segments (``system``, ``doc``, ``seg_id``, ``source``, ``status``;
    ``scored`` counts as scored) by system."""
    return coverage((s["system"], segment_key(s), s["status"] == "scored") for s in segments)


def tied_ranks(
    values: Mapping[Hashable, float | None], *, lower_is_better: bool = True, digits: int = 9
) -> dict[Hashable, tuple[int, bool]]:
    """Competition ranks ("1, 1, 3") of the groups with a value: groups whose values are equal
    (to ``digits`` decimals, so sums of the same weights in another order still tie) share the
    best rank of their tie, and the next group skips the places they took; a tie is never broken
    by name. Groups whose value is None are left out.

    Returns:
        group -> (rank, tied): rank 1 = best; ``tied`` when another group shares the rank.
    """
    scored = {g: round(float(v), digits) for g, v in values.items() if v is not None}
    order = sorted(scored.values(), reverse=not lower_is_better)
    first = {}
    for position, value in enumerate(order, 1):
        first.setdefault(value, position)
    counts = {v: order.count(v) for v in first}
    return {g: (first[v], counts[v] > 1) for g, v in scored.items()}
