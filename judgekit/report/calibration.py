"""Console views of a judge's calibration against humans (``judgekit calibrate judge``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from rich.table import Table

if TYPE_CHECKING:
    from judgekit.calibration.judge_report import JudgeCalibration


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt(value: float | None, ci: tuple[float, float] | list[float] | None = None) -> str:
    """``0.812 [0.700, 0.900]``; ``-`` for a missing or NaN value."""
    if _missing(value):
        return "-"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def summary_table(rows: list[dict[str, Any]]) -> Table:
    """One row per comparison: n, accuracy, macro-F1 and Cohen's kappa with their CIs."""
    view = Table(title="Judge against humans")
    for column in ("comparison", "n", "accuracy", "macro-F1", "Cohen's kappa"):
        view.add_column(column, justify="left" if column == "comparison" else "right")
    for scope in dict.fromkeys(r["comparison"] for r in rows):
        cells = {r["metric"]: r for r in rows if r["comparison"] == scope}
        if "accuracy" not in cells:  # the confidence rows (ECE, Brier): printed on their own
            continue
        view.add_row(
            scope,
            str(cells["accuracy"]["n"]),
            *(fmt(cells[m]["value"], cells[m]["ci"]) for m in ("accuracy", "macro_f1", "kappa")),
        )
    return view


def _per_class(report: Any) -> Table:
    table = Table(title="Per class")
    for column in ("label", "support", "recall [CI]", "precision [CI]"):
        table.add_column(column, justify="left" if column == "label" else "right")
    for r in report.per_class.to_dict(orient="records"):
        rec = (r["recall_low"], r["recall_high"]) if r["recall_low"] is not None else None
        prec = (r["precision_low"], r["precision_high"]) if r["precision_low"] is not None else None
        table.add_row(
            str(r["label"]), str(r["support"]), fmt(r["recall"], rec), fmt(r["precision"], prec)
        )
    return table


def print_judge_calibration(result: JudgeCalibration, console: Any) -> None:
    """The summary table, the confusion matrix, the per-class table, the errors and the
    alt-test verdict (or why a view is missing)."""
    report = result.report
    console.print(summary_table(result.rows))
    for r in result.rows:
        if r["metric"] == "kappa" and r["n"] and _missing(r["value"]):
            console.print(
                f"Cohen's kappa of {r['comparison']}: undefined (-): both sides give one and the "
                "same label only, so chance agreement is 1"
            )
    console.print(
        f"{report.n_items} items scored; {report.n_ties} human ties ({result.tie_policy}); "
        f"{report.n_unjudged} items without a judge label; ceiling rows: n = (human, item) pairs"
    )
    confusion = Table(title="Confusion matrix (rows: human majority, columns: judge)")
    confusion.add_column("human \\ judge")
    for column in report.confusion.columns:
        confusion.add_column(str(column), justify="right")
    for label, counts in report.confusion.iterrows():
        confusion.add_row(str(label), *(str(int(c)) for c in counts))
    console.print(confusion)
    console.print(_per_class(report))
    errors = ", ".join(f"{e['human']}->{e['judge']}: {e['count']}" for e in report.errors)
    console.print(f"errors (human->judge): {errors or 'none'}")
    if result.ceiling_note:
        console.print(f"human ceiling not computed: {result.ceiling_note}")
    print_confidence(result, console)
    alt = result.alt
    if alt is None:
        console.print(f"Alternative Annotator Test not run: {result.alt_note}")
        return
    verdict = "passes" if alt.passed else "does not pass"
    console.print(
        f"Alternative Annotator Test (epsilon={result.epsilon}, q={result.q}): winning rate "
        f"{alt.winning_rate:.2f} over {len(alt.per_annotator)} annotators, advantage "
        f"probability {alt.advantage_probability:.3f}: the judge {verdict}"
    )
    if alt.skipped:
        console.print(f"alt-test skipped: {alt.skipped}")


def print_confidence(result: JudgeCalibration, console: Any) -> None:
    """The judge's confidence: ECE and Brier, the reliability bins, selective accuracy."""
    conf = result.confidence
    if conf is None:
        console.print(f"confidence not scored: {result.confidence_note}")
        return
    console.print(
        f"confidence: ECE {fmt(conf.ece.value, conf.ece.ci)} ({conf.n_bins} equal-width bins of "
        f"top-label confidence), Brier {fmt(conf.brier.value, conf.brier.ci)} (mean over items "
        f"of sum over labels of (p - onehot)^2), {conf.n_items} items, {conf.n_ties} human ties "
        f"and {conf.n_outside} majorities outside the label set left out"
    )
    bins = Table(title="Accuracy per confidence bin")
    for column in ("bin", "n", "mean confidence", "accuracy"):
        bins.add_column(column, justify="right")
    for b in conf.bins:
        if b["n"]:
            bins.add_row(f"{b['low']:.1f}-{b['high']:.1f}", str(b["n"]),
                         fmt(b["mean_confidence"]), fmt(b["accuracy"]))  # fmt: skip
    console.print(bins)
    sel = Table(title="Selective judging (items with confidence >= threshold)")
    for column in ("threshold", "n", "share", "accuracy"):
        sel.add_column(column, justify="right")
    for s in conf.selective:
        sel.add_row(f"{s['threshold']:.2f}", str(s["n"]), fmt(s["share"]), fmt(s["accuracy"]))
    console.print(sel)
    if conf.n_argmax_differs:
        console.print(f"{conf.n_argmax_differs} items: the most probable label is not the "
                      "judge's label (ECE scores the most probable)")  # fmt: skip
