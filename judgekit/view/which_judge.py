"""The data of the "Which judge?" tab: per facet (overall first, then each facet value such as a
language), each judge's agreement with humans and its CI (:func:`which_judge`: on the items it
and the humans share, as ``calibrate compare``; ``judgekit view``'s label sources: on the items
every source labelled), the human ceiling on those items, the paired difference to the best
judge with its p-value and rank cluster, ``n`` beside every figure, CIs wider than a stated
share marked, plain statistic names with a one-line meaning, and every note about labels and
raters beside the facet it affects.

The figures are those of ``judgekit calibrate compare`` (:func:`judgekit.calibration.compare.
compare`: percentile bootstrap CIs, paired permutation tests, WMT-style rank clusters; Kocmi et
al. 2021, "To Ship or Not to Ship", section 4; Deutsch et al. 2023, "Ties Matter", for the
pairwise accuracy of score judges); the notes are the warnings and notes that call raises and
returns (the same source the command line prints), not a copy of their rules.
"""

from __future__ import annotations

import warnings
from typing import Any

from judgekit.calibration.compare import ALL, CompareOptions, CompareResult, compare
from judgekit.calibration.compare.results import HUMAN_CEILING, ON_CEILING, Pair, Row, is_ceiling
from judgekit.errors import JudgekitWarning
from judgekit.metrics.statistics import among
from judgekit.view.clusters import LabelComparison

WIDE_SHARE = 0.2  # a CI wider than this share of the statistic's 0..1 range is marked wide
MIN_N = 30  # a figure on fewer items is marked small (docs/view.md: why 30)
LEFT_OUT = "is left out of the humans"  # the rater note of labels.overlap.without_judge

STATISTICS: dict[str, tuple[str, str]] = {  # statistic -> (plain name, one-line meaning)
    s.key: (s.plain, s.meaning) for s in among("reference")
}  # the one list: judgekit.metrics.statistics


def _meaning(statistic: str) -> dict[str, str]:
    name, meaning = STATISTICS.get(statistic, (statistic, ""))
    return {"key": statistic, "name": name, "meaning": meaning}


def _figure(row: Row, wide_share: float, min_n: int = MIN_N) -> dict[str, Any]:
    width = None if row.ci_low is None or row.ci_high is None else row.ci_high - row.ci_low
    small = row.n < min_n
    return {
        "judge": row.judge.removesuffix(ON_CEILING),
        "value": row.value,
        "ci_low": row.ci_low,
        "ci_high": row.ci_high,
        "n": row.n,
        "rank": row.rank,
        "wide": width is not None and width > wide_share,
        "small": small,
        "collapsed": small and width is not None and width == 0,
        "note": row.note,
        "notes": [],
    }


def _notes_for(name: str, ceiling: bool, notes: list[str], judges: set[str]) -> list[str]:
    """The notes that change the row of ``name`` (``ceiling``: the human ceiling's row): a
    rater left out of the humans, or a note on the ceiling, changes the ceiling; a note naming
    a judge (``judge 'NAME'``, or ``NAME: ...``) changes that judge's rows; a pair's coverage
    stays in the summary; any other note (the humans' own labels) changes every row."""
    out = []
    for note in notes:
        if LEFT_OUT in note or note.startswith(f"{HUMAN_CEILING}:"):
            keep = ceiling
        elif "judge '" in note or any(note.startswith(f"{j}: ") for j in judges):
            keep = not ceiling and (f"judge '{name}'" in note or note.startswith(f"{name}: "))
        else:
            keep = not note.startswith("pair ")
        if keep:
            out.append(note)
    return out


def _versus_best(best: str, judge: str, pairs: list[Pair]) -> dict[str, Any] | None:
    for pair in pairs:
        if {pair.a, pair.b} == {best, judge}:
            sign = -1.0 if pair.a == best else 1.0  # delta = value(a) - value(b)
            bounds = [None if b is None else sign * b for b in (pair.ci_low, pair.ci_high)]
            low, high = bounds if sign > 0 or None in bounds else bounds[::-1]
            return {
                "best": best,
                "delta": sign * pair.delta,
                "ci_low": low,
                "ci_high": high,
                "p_value": pair.p_value,
                "p_adjusted": pair.p_adjusted,
            }
    return None


def _table(rows: list[Row], pairs: list[Pair], wide_share: float, notes: list[str]) -> dict:
    judges = sorted(
        (r for r in rows if not is_ceiling(r.judge)),
        key=lambda r: (r.rank is None, r.rank or 0, -r.value),
    )
    ceiling = [r for r in rows if r.judge == HUMAN_CEILING]
    names = {r.judge for r in judges}
    best = judges[0].judge if judges else None
    out = []
    for row in judges:
        figure = _figure(row, wide_share)
        figure["versus_best"] = (
            None if best is None or row.judge == best else _versus_best(best, row.judge, pairs)
        )
        figure["notes"] = _notes_for(row.judge, False, notes, names)
        out.append(figure)
    on_rows = []  # each judge on the ceiling's own rows, in the comparison's order
    for row in (r for r in rows if r.judge.endswith(ON_CEILING)):
        figure = _figure(row, wide_share)
        figure["notes"] = _notes_for(figure["judge"], False, notes, names)
        on_rows.append(figure)
    top = _figure(ceiling[0], wide_share) if ceiling else None
    if top is not None:
        top["notes"] = _notes_for(HUMAN_CEILING, True, notes, names)
    return {
        "statistic": _meaning(rows[0].statistic),
        "level": rows[0].level,
        "judges": out,
        "ceiling": top,
        "on_ceiling": on_rows,
    }


def _facet_order(facets: list[str]) -> list[str]:
    return sorted(dict.fromkeys(facets), key=lambda f: (f != ALL, f))


def tab_data(
    result: CompareResult,
    label_notes: list[str] | tuple[str, ...] = (),
    wide_share: float = WIDE_SHARE,
) -> dict[str, Any]:
    """The tab's document from a comparison: ``{"kind", "wide_share", "min_n", "notes",
    "facets": [{"facet", "items", "ties", "notes", "tables": [{"statistic": {"key", "name",
    "meaning"}, "level", "judges": [figure + "versus_best"], "ceiling": figure,
    "on_ceiling": [figure]}]}]}``; a figure is ``{"judge", "value", "ci_low", "ci_high", "n",
    "rank", "wide", "small", "collapsed", "note", "notes"}``; values in the statistic's own units
    (0..1 for agreement, -1..1 for kappa, AC1 and correlations). ``judges``: each judge against
    the human majority (items with a majority, under the tie policy). ``ceiling``: each human
    against the majority of the other humans, pooled (human, item) rows, ``n`` in items;
    ``on_ceiling``: each judge's label on those same rows against the same references, same
    resamples, ``n`` in items (like for like with the ceiling). ``versus_best`` is None for the
    best judge (rank 1, highest value) and holds ``delta`` (this judge minus the best, <= 0),
    its paired CI where computed and the one-sided permutation ``p_value``. ``wide``: CI wider
    than ``wide_share``; ``small``: ``n`` < :data:`MIN_N`; ``collapsed``: small with a CI of
    zero width. ``notes`` of a figure: the label and rater notes that change it (a rater left
    out: the ceiling; a judge's labels: its rows; the humans' labels: every row); the
    top-level ``notes`` (``label_notes``, the warnings the comparison raised, and its notes
    without a facet) and each facet's ``notes`` stay as the summary.

    Raises:
        ValueError: ``wide_share`` not in (0, 2].
    """
    if not 0 < wide_share <= 2:
        raise ValueError(f"wide_share must be in (0, 2], got {wide_share}")
    other = [n for n in result.notes if not any(n.startswith(f"{f}: ") for f in
             {r.facet for r in result.rows})]  # fmt: skip
    facets = []
    for facet in _facet_order([r.facet for r in result.rows]):
        groups: dict[tuple[str, str], list[Row]] = {}
        for row in result.rows:
            if row.facet == facet:
                groups.setdefault((row.level, row.statistic), []).append(row)
        pairs = [p for p in result.pairs if p.facet == facet]
        prefix = f"{facet}: "
        own = [n[len(prefix) :] for n in result.notes if n.startswith(prefix)]
        beside = [*label_notes, *other, *own]  # each beside the rows it changes (_notes_for)
        tables = [
            _table(rows, [p for p in pairs if (p.level, p.statistic) == key], wide_share, beside)
            for key, rows in groups.items()
        ]
        counts = result.counts.get(facet, {})
        facets.append(
            {
                "facet": "overall" if facet == ALL else facet,
                "items": counts.get("items"),
                "ties": counts.get("ties"),
                "notes": own,
                "tables": tables,
            }
        )
    return {
        "kind": result.kind,
        "wide_share": wide_share,
        "min_n": MIN_N,
        "notes": [*label_notes, *other],
        "facets": facets,
    }


def which_judge(
    human: str,
    judges: list[str],
    options: CompareOptions | None = None,
    wide_share: float = WIDE_SHARE,
) -> dict[str, Any]:
    """Compare ``judges`` against ``human`` (``[NAME=]PATH`` specs, as ``calibrate compare``
    takes them) and return :func:`tab_data` of the result, with every label and rater warning
    the comparison raised (folded spellings, labels on one side only, raters left out) as notes.

    Raises:
        InputError, JudgekitError: as :func:`judgekit.calibration.compare.compare`.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", JudgekitWarning)
        result = compare(human, judges, options)
    notes = list(
        dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, JudgekitWarning))
    )
    for w in caught:  # other warnings keep their way to the user
        if not issubclass(w.category, JudgekitWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return tab_data(result, notes, wide_share)


def which_judge_sources(
    comparison: LabelComparison | None, wide_share: float = WIDE_SHARE
) -> dict[str, Any] | None:
    """:func:`tab_data` of ``judgekit view``'s label sources compared with the human labels
    (:func:`judgekit.view.clusters.compare_with_humans`: as ``calibrate compare`` compares label
    judges, alpha 0.05, no multiplicity correction, judges named by their source name; its
    notes, label warnings included, are the tab's notes). None without a labelled source;
    ``{"note"}`` when nothing can be compared."""
    if comparison is None:
        return None
    if comparison.error is not None:
        return {"note": f"no comparison: {comparison.error}"}
    counts = {ALL: {"items": comparison.n_items, "ties": comparison.n_ties}}
    rows, pairs = comparison.rows + comparison.ceiling, list(comparison.pairs)
    notes = list(comparison.notes)
    for lang, part in comparison.languages.items():  # then one facet per item language
        rows, pairs, notes = rows + part["rows"], pairs + part["pairs"], notes + part["notes"]
        if part["rows"]:
            counts[lang] = {"items": part["items"], "ties": part["ties"]}
    result = CompareResult("labels", rows, pairs, [], counts, [], {})
    return tab_data(result, notes, wide_share)
