"""Each judge on its own coverage: the rule ``calibrate compare`` applies to score judges
(cells of a systems x segments table) and label judges (items) alike.

As MT-Metrics-Eval computes a metrics table (Freitag et al. 2023, WMT23 metrics task, sec. 3:
each metric on the segments it scored): each judge's statistics and bootstrap CIs are those of
that judge alone, on the units it and the humans share; each pair's paired test (and, where the
family has one, the paired bootstrap CI of the difference) on the units both judges and the
humans share, run when the ranking asks for it; the units of every judge and of every pair
tested are said in notes. Adding a judge with partial coverage then changes no other judge's
figures. ``--common`` instead puts every judge on the units all of them share (a like-for-like
table); the callers decide which rule applies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from judgekit.calibration.compare.results import Family

Cover = TypeVar("Cover")


@dataclass
class Coverage(Generic[Cover]):
    """The units each judge shares with the humans.

    Attributes:
        own: judge -> its units (a boolean systems x segments mask, a list of items...), every
            judge with at least one unit.
        both: the units two covers share.
        size: how many units a cover holds.
        unit, verb: the words of the notes ("cells", "scored"; "items", "labelled").
        common: how many units every judge shares (what ``--common`` would use).
    """

    own: dict[str, Cover]
    both: Callable[[Cover, Cover], Cover]
    size: Callable[[Cover], int]
    unit: str
    verb: str
    common: int

    def note(self) -> str:
        """The line said when coverage differs."""
        units = ", ".join(f"{j} {self.size(c)}" for j, c in self.own.items())
        return (
            f"coverage differs: each judge on the {self.unit} it and the humans {self.verb} "
            f"({units}); each pair tested on the {self.unit} both {self.verb} (--common: all "
            f"on the {self.common} {self.unit} every judge {self.verb})"
        )


def own_coverage_families(
    coverage: Coverage[Cover],
    run: Callable[[list[str], Cover, bool], list[Family]],
    notes: list[str],
) -> list[Family]:
    """The families of every judge on its own coverage (module doc).

    Args:
        coverage: the judges' units (at least one judge).
        run: ``run(judges, cover, pair)`` -> the families of ``judges`` on ``cover``, one per
            (level, statistic), in the same order for every call; ``pair`` is True for a pair's
            run (the caller may skip what a test does not need, such as CIs).

        notes: where the coverage line goes, then one line per pair when its test runs (the
            caller reads them after ranking).

    Returns:
        The families: values, CIs, notes and ``n_by_judge`` from each judge's own run; tests
        and delta CIs from the pair's run, made once per pair on first use.
    """
    singles = {}
    for name, cover in coverage.own.items():
        singles[name] = {(f.level, f.statistic): f for f in run([name], cover, False)}
    notes.append(coverage.note())
    pairs: dict[tuple[str, str], dict[tuple[str, str], Family]] = {}

    def pair_family(a: str, b: str, key: tuple[str, str]) -> Family:
        ident = (a, b) if a < b else (b, a)  # one run per pair, whichever ranks first
        if ident not in pairs:
            both = coverage.both(coverage.own[ident[0]], coverage.own[ident[1]])
            pairs[ident] = {(f.level, f.statistic): f for f in run(list(ident), both, True)}
            notes.append(f"pair {ident[0]} / {ident[1]}: tested on the {coverage.size(both)} "
                         f"{coverage.unit} both {coverage.verb}")  # fmt: skip
        return pairs[ident][key]

    families = []
    for key, first in next(iter(singles.values())).items():
        parts = {j: singles[j][key] for j in coverage.own}

        def test(a: str, b: str, key: tuple[str, str] = key):
            return pair_family(a, b, key).test(a, b)

        def delta(a: str, b: str, key: tuple[str, str] = key):
            found = pair_family(a, b, key)
            return found.delta_dist(a, b) if found.delta_dist is not None else None

        n = {j: f.n for j, f in parts.items()}
        families.append(Family(
            key[0], key[1], {j: f.values[j] for j, f in parts.items()},
            {j: f.dists.get(j) for j, f in parts.items()}, test, max(n.values()),
            delta_dist=delta if first.delta_dist is not None else None,
            notes={j: f.notes.get(j, "") for j, f in parts.items()}, n_by_judge=n,
        ))  # fmt: skip
    return families
