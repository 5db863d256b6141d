"""What a tune split is stratified by, and the per-facet report on the test split (issue 35).

The split is stratified by a facet (``language`` by default, or ``--by``) and the human label, so
each language and label keeps its share in tune, select and test. The facet of each item comes
from :func:`judgekit.calibration.estimate.facets.item_facets` (the candidates' runs, the label
file's extra columns). Per facet value, the chosen judge's test figure has a bootstrap
distribution, and Cochran's Q from ``calibrate compare``
(:func:`judgekit.calibration.compare.results.facet_tests`) asks whether the figure differs between
facet values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from judgekit.calibration.compare.results import facet_tests
from judgekit.calibration.estimate.facets import item_facets
from judgekit.calibration.tune.choose import statistic
from judgekit.errors import InputError

AUTO_BY = ("language", "lang")


def facet_values(
    paths: Sequence[Path | str | None], items: Sequence[str], by: str | None
) -> tuple[str | None, dict[str, str]]:
    """(facet used, item -> facet value) for ``items``, read from ``paths`` (runs, label tables).

    ``by=None`` takes the first of ``language`` and ``lang`` that every item has, else no facet
    (``(None, {})``: the split is stratified by label alone). Raises InputError when a named
    ``by`` is missing for some items (the first path and one missing item named).
    """
    frame = item_facets(*paths, by=by)
    for name in (by,) if by else AUTO_BY:
        if name in frame.columns:
            column = frame[name].dropna().astype(str)
            values = {i: column[i] for i in items if i in column.index}
            if len(values) == len(items):
                return name, values
            if by:
                missing = next(i for i in items if i not in values)
                raise InputError(Path(str(paths[0])), f"item {missing!r} has no {by}", field="--by")
        elif by:
            raise InputError(Path(str(paths[0])), f"no facet {by!r} for the items", field="--by")
    return None, {}


def strata(items: Sequence[str], gold: Mapping[str, object], facet: Mapping[str, str]) -> list[str]:
    """``"<facet value>|<label>"`` per item (``"|<label>"`` without a facet), for
    :func:`judgekit.calibration.tune.splits.split_items`."""
    return [f"{facet.get(i, '')}|{gold[i]}" for i in items]


def facet_report(
    outputs: Mapping[str, object],
    gold: Mapping[str, object],
    test_ids: Sequence[str],
    facet: Mapping[str, str],
    stat: str,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, object]:
    """The chosen judge's ``stat`` on the test items of each facet value, and Cochran's Q.

    Returns ``{"values": {value: {"n", "figure"}}, "q", "df", "p_value", "spread"}``; ``q`` and
    ``p_value`` are None with fewer than two facet values or a zero bootstrap spread (Cochran
    1954; the test of ``calibrate compare``). Figures in ``stat``'s units.
    """
    groups: dict[str, list[str]] = {}
    for item in test_ids:
        groups.setdefault(facet[item], []).append(item)
    rng = np.random.default_rng(seed)
    table, values = {}, {}
    for value, ids in sorted(groups.items()):
        judge, human = [outputs[i] for i in ids], [gold[i] for i in ids]
        fig = statistic(stat, judge, human) if len(ids) > 1 else float("nan")
        dist = np.empty(n_boot)
        for b in range(n_boot):
            idx = rng.integers(0, len(ids), len(ids))
            dist[b] = statistic(stat, [judge[k] for k in idx], [human[k] for k in idx])
        values[value] = {"n": len(ids), "figure": fig}
        table[value] = {("chosen", "item", stat): (fig, dist)}
    tests = facet_tests(table) if len(table) > 1 else []
    test = tests[0] if tests else None
    return {
        "values": values,
        "q": test.q if test else None,
        "df": test.df if test else None,
        "p_value": test.p_value if test else None,
        "spread": test.spread if test else None,
    }
