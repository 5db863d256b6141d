"""Rank clusters of the judges against the human labels, for ``judgekit view``'s compare mode.

With ``--labels``, the sources (:func:`judgekit.view.compare.sources`) are compared as
``judgekit calibrate compare`` compares label judges (:func:`judgekit.calibration.compare.labels.
label_facet`: accuracy, macro-F1, Cohen's kappa and Gwet's AC1 against the human majority on
the items every source labelled, bootstrap CIs, paired permutation tests, clusters at alpha
0.05 without multiplicity correction); the page shows one row per source and statistic with
its cluster (#1 = no other source is significantly better). Fewer than two sources: none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.data.jsonfile import json_safe
from judgekit.errors import JudgekitError


def clusters_vs_humans(
    found: list[dict[str, Any]],
    labels_path: str | Path,
    *,
    tie_policy: str = "exclude",
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any] | None:
    """``{"n_items", "statistics", "rows": [{source, name, statistic, value, ci, rank}],
    "pairs": [{a, b, statistic, delta, p_value}]}``, or ``{"note"}`` when the sources share
    no human-labelled item; None with fewer than two sources.

    Raises:
        InputError: the labels file is missing or malformed (file, line, field).
    """
    from judgekit.calibration.compare.labels import label_facet
    from judgekit.calibration.compare.results import build_family
    from judgekit.labels.table import load_labels

    sources = [s for s in found if s["labels"]]
    if len(sources) < 2:
        return None
    humans = load_labels(labels_path, format="long", numeric=False)
    raters = {s["rater"] for s in sources}
    humans = humans.drop([r for r in humans.raters if r in raters])
    judges = {str(s["id"]): pd.Series(s["labels"], dtype=object) for s in sources}
    try:
        facet = label_facet(judges, humans, facet="all", tie_policy=tie_policy,  # type: ignore[arg-type]
                            n_resamples=n_resamples, seed=seed)  # fmt: skip
    except JudgekitError as exc:
        return {"note": f"no rank clusters: {exc}"}
    names = {str(s["id"]): s["name"] for s in sources}
    rows, pairs = [], []
    for family in facet.families:
        found_rows, found_pairs = build_family(family, "all", alpha=0.05, correction="none",
                                               confidence=0.95)  # fmt: skip
        rows += [{"source": int(r.judge), "name": names[r.judge], "statistic": r.statistic,
                  "value": r.value, "ci": None if r.ci_low is None else [r.ci_low, r.ci_high],
                  "rank": r.rank} for r in found_rows]  # fmt: skip
        pairs += [{"a": int(p.a), "b": int(p.b), "statistic": p.statistic, "delta": p.delta,
                   "p_value": p.p_value} for p in found_pairs]  # fmt: skip
    statistics = [f.statistic for f in facet.families]
    return json_safe({"n_items": facet.n_items, "statistics": statistics, "rows": rows,
                      "pairs": pairs, "notes": facet.notes})  # fmt: skip
