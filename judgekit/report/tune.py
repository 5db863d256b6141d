"""Writers for a tune result (issue 35): console lines, JSON and CSV of a TestReport."""

from __future__ import annotations

import csv
import dataclasses
from collections import Counter
from pathlib import Path

from judgekit.calibration.tune.report import TestReport
from judgekit.data.atomic import open_output
from judgekit.data.jsonfile import write_json


def tune_dict(rep: TestReport) -> dict[str, object]:
    """A JSON-ready dict of ``rep`` (intervals as two-element lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(rep).items()}


def facet_lines(rep: TestReport) -> list[str]:
    """One line per facet value of ``rep.by`` (n, test figure) and the Cochran's Q line."""
    if not rep.facets:
        return []
    values = rep.facets["values"]
    lines = [f"  {rep.by} {v}: {d['figure']:.3f} (n={d['n']})" for v, d in values.items()]
    p = rep.facets["p_value"]
    test = "no test (one value or no spread)" if p is None else (
        f"Cochran's Q={rep.facets['q']:.2f}, df={rep.facets['df']}, p={p:.2g}")  # fmt: skip
    return [f"per {rep.by} on test: {test}", *lines]


def fold_lines(rep: TestReport) -> list[str]:
    """Nested mode: the candidates chosen without each fold, counted (most first), and where the
    candidate chosen on all items is the baseline itself, why the gain need not be zero."""
    if not rep.fold_choices:
        return []
    k = len(rep.fold_choices)
    counts = Counter(rep.fold_choices).most_common()
    lines = ["chosen without each fold: " + ", ".join(f"{c} ({n} of {k})" for c, n in counts)]
    if rep.chosen == rep.baseline and set(rep.fold_choices) != {rep.baseline}:
        lines.append(
            f"note: the gain compares these choices' held-out outputs with {rep.baseline}; "
            f"it need not be zero although {rep.chosen} is chosen on all items"
        )
    return lines


def tune_lines(rep: TestReport) -> list[str]:
    """Console lines: test-only figure and CI, paired gain with CI and p (nested mode: of the
    choosing procedure, then the choice per fold), optimism, the figure per facet value with
    Cochran's Q, the notes of human labels left out, looks (last)."""
    gain = "gain" if rep.mode == "split" else "gain of the procedure"
    return [
        f"chosen {rep.chosen} ({rep.statistic} on test, n={rep.n_test}): "
        f"{rep.test_figure:.3f} [{rep.test_ci[0]:.3f}, {rep.test_ci[1]:.3f}]"
        if rep.mode == "split"
        else f"chosen {rep.chosen} on all items; {rep.mode} ({rep.statistic} of each item judged "
        f"by the choice made without it, n={rep.n_test}): {rep.test_figure:.3f} "
        f"[{rep.test_ci[0]:.3f}, {rep.test_ci[1]:.3f}]",
        f"{gain} over {rep.baseline}: {rep.gain:+.3f} "
        f"[{rep.gain_ci[0]:+.3f}, {rep.gain_ci[1]:+.3f}], {rep.test_name} p={rep.p_value:.2g}",
        *fold_lines(rep),
        f"optimism (select - test): {rep.optimism:+.3f}",
        *facet_lines(rep),
        *(f"note: {note}" for note in rep.notes),
        f"looks at the sealed test split: {rep.looks}",
    ]


def write_tune_json(rep: TestReport, path: Path) -> None:
    """Write :func:`tune_dict` of ``rep`` to ``path`` (UTF-8, indented)."""
    write_json(path, tune_dict(rep))


def write_tune_csv(rep: TestReport, path: Path) -> None:
    """Write one header row and one value row of ``rep`` (intervals as _lo/_hi columns; the
    per-facet figures as ``facet_<value>`` columns and ``facet_p``)."""
    row: dict[str, object] = {}
    for key, value in tune_dict(rep).items():
        if key == "facets":
            for name, d in (value or {}).get("values", {}).items():
                row[f"facet_{name}"] = d["figure"]
            row["facet_p"] = (value or {}).get("p_value")
        elif key in ("notes", "fold_choices"):
            row[key] = "; ".join(value)
        elif isinstance(value, list):
            row[f"{key}_lo"], row[f"{key}_hi"] = value
        else:
            row[key] = value
    with open_output(path, newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
