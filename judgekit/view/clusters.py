"""Rank clusters of the judges against the human labels, for ``judgekit view``'s compare mode.

With ``--labels``, the sources (:func:`judgekit.view.compare.sources`) are compared as
``judgekit calibrate compare`` compares label judges (:func:`judgekit.calibration.compare.labels.
label_facet`: accuracy, macro-F1, Cohen's kappa and Gwet's AC1 against the human majority on
the items every source labelled, bootstrap CIs, paired permutation tests, clusters at alpha
0.05 without multiplicity correction); the page shows one row per source and statistic with
its cluster (#1 = no other source is significantly better). Fewer than two sources: none.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.jsonfile import json_safe
from judgekit.errors import JudgekitError, JudgekitWarning
from judgekit.view.humans import judges_left_out


@dataclass
class LabelComparison:
    """The view's label sources compared with the human labels once (``label_facet`` run one
    time for the rank-clusters card and the "Which judge?" tab).

    Attributes:
        sources: the sources with labels; names: their judge names, in order (a name shared by
            two sources gets `` #id``). rows, pairs: :func:`build_family`'s output per
            statistic (judges by name, alpha 0.05, no correction); ceiling: the human ceiling
            rows. statistics: in family order. notes: raters left out of the humans, label
            warnings and the comparison's notes. n_items, n_ties: its items and human ties.
        error: why nothing could be compared (then the rest is empty).
    """

    sources: list[dict[str, Any]]
    names: list[str]
    rows: list[Any] = field(default_factory=list)
    pairs: list[Any] = field(default_factory=list)
    ceiling: list[Any] = field(default_factory=list)
    statistics: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    n_items: int = 0
    n_ties: int = 0
    error: str | None = None
    languages: dict[str, dict[str, Any]] = field(default_factory=dict)


def compare_with_humans(
    found: list[dict[str, Any]], labels_path: str | Path, *, tie_policy: str = "exclude",
    n_resamples: int = 1000, seed: int = 0, languages: dict[str, str] | None = None,
) -> LabelComparison | None:  # fmt: skip
    """The sources with labels (:func:`judgekit.view.compare.sources`) against the human
    ``labels_path`` (long ``item,rater,label``) as ``calibrate compare`` compares label judges
    (module doc); a human rater that is also a source is left out of the humans, with a note.
    ``languages`` (item -> language): the same comparison per language as well. None without a
    labelled source.

    Raises:
        InputError: the labels file is missing or malformed (file, line, field).
    """
    from judgekit.calibration.compare.inputs import check_overlap
    from judgekit.calibration.compare.labels import label_facet
    from judgekit.calibration.compare.results import build_family
    from judgekit.labels.table import load_labels

    sources = [s for s in found if s["labels"]]
    if not sources:
        return None
    humans = load_labels(labels_path, format="long", numeric=False)
    names = [str(s["name"]) for s in sources]
    if len(set(names)) < len(names):  # two sources of one name: told apart by their id
        names = [f"{n} #{s['id']}" for n, s in zip(names, sources, strict=True)]
    judges = {n: pd.Series(s["labels"], dtype=object) for n, s in zip(names, sources, strict=True)}
    humans, left_out = judges_left_out(humans, sources)
    out = LabelComparison(sources, names, notes=left_out)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", JudgekitWarning)
        try:  # the label check `calibrate compare` runs first (case folded, with a note)
            judges = {n: check_overlap(n, labels, humans) for n, labels in judges.items()}
            facet = label_facet(judges, humans, facet="all", tie_policy=tie_policy,  # type: ignore[arg-type]
                                n_resamples=n_resamples, seed=seed, common=True)  # fmt: skip
        except JudgekitError as exc:
            out.error = str(exc)
            return out
    for family in facet.families:
        rows, pairs = build_family(family, "all", alpha=0.05, correction="none", confidence=0.95)
        out.rows += rows
        out.pairs += pairs
    out.ceiling, out.statistics = list(facet.ceiling), [f.statistic for f in facet.families]
    out.notes += [str(w.message) for w in caught if issubclass(w.category, JudgekitWarning)]
    out.notes = list(dict.fromkeys(out.notes + list(facet.notes)))
    out.n_items, out.n_ties = facet.n_items, facet.n_ties
    for lang in sorted(set((languages or {}).values())):
        keep = {i for i, v in (languages or {}).items() if v == lang}
        rows = humans.frame.index.astype(str).isin(keep)
        part = type(humans)(humans.frame[rows], humans.source, humans.order)
        judged = {n: s[s.index.astype(str).isin(keep)] for n, s in judges.items()}
        out.languages[lang] = _one_language(judged, part, lang, tie_policy, n_resamples, seed)
    return out


def _one_language(judges: dict[str, pd.Series], humans: Any, lang: str, tie_policy: str,
                  n_resamples: int, seed: int) -> dict[str, Any]:  # fmt: skip
    """The comparison on one language's items: ``{"rows", "pairs", "items", "ties", "notes"}``
    (rows and pairs with ``facet`` = ``lang``), or ``{"notes": [why not]}``."""
    from judgekit.calibration.compare.labels import label_facet
    from judgekit.calibration.compare.results import build_family

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JudgekitWarning)  # said once, on the whole set
        try:
            facet = label_facet(judges, humans, facet=lang, tie_policy=tie_policy,  # type: ignore[arg-type]
                                n_resamples=n_resamples, seed=seed, common=True)  # fmt: skip
        except JudgekitError as exc:
            return {"rows": [], "pairs": [], "notes": [f"{lang}: {exc}"]}
    rows: list[Any] = list(facet.ceiling)
    pairs: list[Any] = []
    for family in facet.families:
        got, paired = build_family(family, lang, alpha=0.05, correction="none", confidence=0.95)
        rows += got
        pairs += paired
    return {"rows": rows, "pairs": pairs, "items": facet.n_items, "ties": facet.n_ties,
            "notes": [f"{lang}: {n}" for n in facet.notes]}  # fmt: skip


def clusters_vs_humans(comparison: LabelComparison | None) -> dict[str, Any] | None:
    """``{"n_items", "statistics", "rows": [{source, name, statistic, value, ci, rank}],
    "pairs": [{a, b, statistic, delta, p_value}], "notes"}`` of ``comparison``
    (:func:`compare_with_humans`), or ``{"note"}`` when the sources share no human-labelled
    item; None with fewer than two sources."""
    if comparison is None or len(comparison.sources) < 2:
        return None
    if comparison.error is not None:
        return {"note": f"no rank clusters: {comparison.error}"}
    ids = {n: int(s["id"]) for n, s in zip(comparison.names, comparison.sources, strict=True)}
    names = {n: s["name"] for n, s in zip(comparison.names, comparison.sources, strict=True)}
    rows = [{"source": ids[r.judge], "name": names[r.judge], "statistic": r.statistic,
             "value": r.value, "ci": None if r.ci_low is None else [r.ci_low, r.ci_high],
             "rank": r.rank} for r in comparison.rows]  # fmt: skip
    pairs = [{"a": ids[p.a], "b": ids[p.b], "statistic": p.statistic, "delta": p.delta,
              "p_value": p.p_value} for p in comparison.pairs]  # fmt: skip
    return json_safe({"n_items": comparison.n_items, "statistics": comparison.statistics,
                      "rows": rows, "pairs": pairs, "notes": comparison.notes})  # fmt: skip
