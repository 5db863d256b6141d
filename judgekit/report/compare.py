"""The outputs of ``judgekit calibrate compare``: the console table, CSV, JSON and the figure.

* :func:`print_compare`: per facet value and level one table, a row per judge (the human
  ceiling last), a column per statistic: ``value [CI] #rank`` (and ``n=`` the items, cells or
  systems behind it where judges' coverage differs); the judges in cluster #1 of a
  statistic are the ones no other judge beats significantly. Then the facet tests and notes.
* :func:`write_compare`: ``compare.json`` (the ``--json`` document, plus counts and notes),
  ``compare_rows.csv`` and ``compare_pairs.csv`` (every field, the delta CIs and adjusted
  p-values included), ``compare_facets.csv`` (with ``--by``) and ``compare.png``: one panel
  per facet value and statistic, each judge's value with its CI, coloured by cluster, the
  human ceiling as a dashed line.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit.calibration.compare import CompareResult
from judgekit.calibration.compare.results import HUMAN_CEILING, is_ceiling
from judgekit.data.atomic import save_figure, write_frame
from judgekit.data.jsonfile import write_json
from judgekit.signature import Signature

FILES = ("compare.json", "compare_rows.csv", "compare_pairs.csv", "compare.png")


def _cell(row: Any) -> str:
    if row.value is None or (isinstance(row.value, float) and math.isnan(row.value)):
        return "-"
    ci = f" [{row.ci_low:.3f}, {row.ci_high:.3f}]" if row.ci_low is not None else ""
    rank = f" #{row.rank}" if row.rank is not None else ""
    return f"{row.value:.3f}{ci}{rank}"


def _blocks(result: CompareResult) -> dict[tuple[str, str], list[Any]]:
    blocks: dict[tuple[str, str], list[Any]] = {}
    for row in result.rows:
        blocks.setdefault((row.facet, row.level), []).append(row)
    return blocks


def _ceiling_line(rows: list[Any], console: Any) -> None:
    """What the ceiling rows are: each human against the majority of the other humans, and
    each judge on those same rows, n in items for both."""
    ceiling = next((r for r in rows if r.judge == HUMAN_CEILING), None)
    if ceiling is not None:
        console.print(
            f"human ceiling: {ceiling.note} (ties as the tie policy says); '<judge> "
            "on the ceiling's rows': the judge's label against the same references, same "
            "resamples; n = items for both"
        )


def print_compare(result: CompareResult, console: Any) -> None:
    """Print the tables of the module doc to a rich console."""
    from rich.table import Table

    for (facet, level), rows in _blocks(result).items():
        statistics = list(dict.fromkeys(r.statistic for r in rows))
        judges = list(dict.fromkeys(r.judge for r in rows if not is_ceiling(r.judge)))
        judges += list(dict.fromkeys(r.judge for r in rows if is_ceiling(r.judge)))
        count = result.counts.get(facet, {})
        what = ", ".join(f"{v} {k}" for k, v in count.items())
        view = Table(title=f"{facet} · {level} level ({what}): value [95% CI] #cluster")
        view.add_column("judge")
        for name in statistics:
            view.add_column(name, justify="right")
        cells = {(r.judge, r.statistic): r for r in rows}
        sizes: dict[str, set[int]] = {}  # per statistic: n beside where coverage differs
        for r in rows:
            if not is_ceiling(r.judge):
                sizes.setdefault(r.statistic, set()).add(r.n)

        def cell(judge: str, name: str, cells=cells, sizes=sizes) -> str:
            row = cells.get((judge, name))
            if row is None:
                return "-"
            shown = is_ceiling(judge) or len(sizes.get(name, ())) > 1  # ceiling rows: always
            return _cell(row) + (f" n={row.n}" if shown else "")

        for judge in judges:
            view.add_row(judge, *(cell(judge, s) for s in statistics))
        console.print(view)
        _ceiling_line(rows, console)
        for r in rows:
            if r.note.startswith("undefined"):
                console.print(f"- {r.judge} {r.statistic}: {r.note}")
    for test in result.facet_tests:
        values = ", ".join(f"{f} {v:.3f}" for f, v in test.values.items())
        q = (
            f"Q = {test.q:.2f}, df = {test.df}, p = {test.p_value:.3g}"
            if test.q is not None
            else "no test (a facet value has no bootstrap spread)"
        )
        console.print(
            f"facet difference, {test.judge} {test.level} {test.statistic}: {values}; {q}"
        )
    for note in result.notes:
        console.print(f"note: {note}")
    console.print("signature: " + Signature(**result.signature).format())


def plot_compare(result: CompareResult, path: Path) -> Path:
    """The figure of the module doc (matplotlib, Agg)."""
    from judgekit.report.figures import plt

    panels = list(dict.fromkeys((r.facet, r.level, r.statistic) for r in result.rows))
    facets = list(dict.fromkeys(p[0] for p in panels))
    stats = list(dict.fromkeys((p[1], p[2]) for p in panels))
    judges = list(dict.fromkeys(r.judge for r in result.rows if not is_ceiling(r.judge)))
    fig, axes = plt.subplots(
        len(facets),
        len(stats),
        squeeze=False,
        figsize=(2.8 * len(stats) + 1.5, 0.32 * len(judges) * len(facets) + 1.6),
    )
    colours = plt.get_cmap("tab10")
    for facet, level, name in panels:
        ax = axes[facets.index(facet)][stats.index((level, name))]
        rows = [r for r in result.rows if (r.facet, r.level, r.statistic) == (facet, level, name)]
        for k, judge in enumerate(judges):
            row = next((r for r in rows if r.judge == judge), None)
            if row is None or row.value is None or math.isnan(row.value):
                continue
            colour = colours(((row.rank or 1) - 1) % 10)
            err = None
            if row.ci_low is not None:
                err = [[max(row.value - row.ci_low, 0)], [max(row.ci_high - row.value, 0)]]
            ax.errorbar(row.value, k, xerr=err, fmt="o", color=colour, capsize=2)
            ax.annotate(
                f"#{row.rank}",
                (row.value, k),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=7,
                color=colour,
            )
        ceiling = next((r for r in rows if r.judge == HUMAN_CEILING), None)
        if ceiling is not None and ceiling.value is not None:
            ax.axvline(ceiling.value, linestyle="--", color="grey", linewidth=1)
        ax.set_yticks(range(len(judges)))
        ax.set_yticklabels(judges if stats.index((level, name)) == 0 else [], fontsize=7)
        ax.invert_yaxis()
        ax.set_title(f"{facet} · {name}", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    fig.suptitle(
        "Judges vs humans: value, 95% CI, cluster (#1 = best; dashed: human ceiling)", fontsize=9
    )
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=110)
    finally:
        plt.close(fig)
    return path


def write_compare(result: CompareResult, out: Path) -> list[Path]:
    """Write the files of the module doc into ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    payload = result.to_json() | {"counts": result.counts, "notes": result.notes}
    write_json(out / "compare.json", payload)
    write_frame(
        pd.DataFrame([asdict(r) for r in result.rows]), out / "compare_rows.csv", index=False
    )
    pairs = pd.DataFrame([asdict(p) for p in result.pairs])
    write_frame(pairs, out / "compare_pairs.csv", index=False)
    written = [out / f for f in FILES]
    if result.facet_tests:
        frame = pd.DataFrame([t.to_dict() for t in result.facet_tests])
        frame["values"] = [
            ";".join(f"{k}={v}" for k, v in t.values.items()) for t in result.facet_tests
        ]
        write_frame(frame, out / "compare_facets.csv", index=False)
        written.append(out / "compare_facets.csv")
    plot_compare(result, out / "compare.png")
    return written
