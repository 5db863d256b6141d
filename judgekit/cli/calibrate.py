"""``judgekit calibrate``: agreement among raters, and a judge against human labels.

* ``calibrate agreement LABELS``: percent agreement, unanimous share, Cohen's kappa (two
  raters), Fleiss' kappa, Gwet's AC1, Krippendorff's alpha and prevalence, with bootstrap CIs.
* ``calibrate judge --judge RUN_OR_LABELS --human LABELS``: the judge against the human
  majority, the human ceiling (each human against the others) and the Alternative Annotator
  Test.
* ``calibrate grid GRID.yaml``: every judge x every prompt on a labelled set
  (``judgekit.calibration.grid``).
* ``calibrate compare --human H --judge A=... --judge B=...``: judges against humans and each
  other, with paired tests and rank clusters (``judgekit/cli/compare.py``).
* ``calibrate validity``, ``estimate``, ``plan``, ``errors``: defined in
  ``judgekit/cli/validity.py``, ``judgekit/cli/estimate.py`` and
  ``judgekit/cli/errors_calibration.py``, registered here.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import typer
from rich.table import Table

from judgekit.cli.compare import compare_command
from judgekit.cli.errors_calibration import errors_command
from judgekit.cli.estimate import estimate_command, plan_command
from judgekit.cli.options import check_level
from judgekit.cli.output import plain_console
from judgekit.cli.root import app
from judgekit.cli.validity import validity_command
from judgekit.data.atomic import write_frame
from judgekit.data.jsonfile import print_json
from judgekit.data.vocabulary import canonical_id
from judgekit.errors import InputError
from judgekit.labels.files import parse_categories, resolve_labels_path
from judgekit.labels.majority import TIE_POLICIES
from judgekit.labels.table import LabelTable, load_labels
from judgekit.metrics.agreement_all import MANY_CATEGORIES, agreement_statistics
from judgekit.metrics.krippendorff_alpha import LEVELS
from judgekit.metrics.statistics import among
from judgekit.signature import Signature

calibrate_app = typer.Typer(
    help="Calibrate judges: agreement among raters, a judge against human labels.",
    no_args_is_help=True,
)
app.add_typer(calibrate_app, name="calibrate")
console = plain_console()

FORMAT_HELP = "Label layout: long (item,rater,label), wide (item + one column per rater), auto."


def _fmt(value: float | None, ci: tuple[float, float] | list[float] | None = None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _signature(command: str, inputs: dict[str, Path], **params: Any) -> dict[str, Any]:
    """:meth:`Signature.for_files` of the label files as read; the parameters also at the top
    level, as before."""
    files = {name: resolve_labels_path(path) for name, path in inputs.items()}
    top = {k: v for k, v in params.items() if k != "seed"}
    seed = params.get("seed")
    signature = Signature.for_files(command, files, parameters=params, seed=seed, **top)
    return signature.as_dict()


def _write(out: Path, stem: str, payload: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    from judgekit.data.jsonfile import write_json

    write_json(out / f"{stem}.json", payload)
    write_frame(pd.DataFrame(rows), out / f"{stem}.csv", index=False)


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InputError(None, f"unknown {name} '{value}' (use {', '.join(choices)})", field=name)


def _load(path: Path, fmt: str) -> LabelTable:
    _check_choice("--format", fmt, ("auto", "long", "wide"))
    return load_labels(path, format=fmt)  # type: ignore[arg-type]


ORDER_HELP = (
    "The category set, comma-separated, in the scale's order (default: the labels present); "
    "the order is read by "
    + ", ".join(s.name for s in among("raters") if s.needs_order)
    + " in their weighted or ordinal forms."
)


@calibrate_app.command("agreement")
def agreement_command(
    labels: Path = typer.Argument(..., help="Labels file (CSV, TSV, JSONL) or run directory."),
    format: str = typer.Option("auto", "--format", help=FORMAT_HELP),
    level: str = typer.Option("nominal", help="Krippendorff's alpha level: " + "|".join(LEVELS)),
    n_resamples: int = typer.Option(
        1000, min=0, help="Bootstrap resamples over items (0 = no CI)."
    ),
    seed: int = typer.Option(0, help="Bootstrap seed."),
    confidence: float = typer.Option(0.95, callback=check_level(), help="CI level."),
    out: Path | None = typer.Option(None, help="Write agreement.csv and agreement.json here."),
    categories: str | None = typer.Option(None, help=ORDER_HELP),
) -> None:
    """Agreement among all raters of LABELS, with bootstrap CIs and category prevalence."""
    _check_choice("--level", level, LEVELS)
    table = _load(labels, format)
    cats = parse_categories(categories, table.categories, table.source)
    results, prev, note = agreement_statistics(table, level, n_resamples, seed, confidence, cats)
    shown = list(prev.per_category.values()) if len(prev.counts) <= MANY_CATEGORIES else []
    view = Table(title=f"Agreement: {table.n_items} items x {table.n_raters} raters")
    for column in ("statistic", "value [CI]", "items", "raters", "level"):
        view.add_column(column, justify="left" if column == "statistic" else "right")
    rows = []
    for r in results + shown:
        value = _fmt(r.value, r.ci) if r.note is None else "undefined"
        view.add_row(r.statistic, value, str(r.n_items), str(r.n_raters), r.level)
        rows.append(
            {
                "statistic": r.statistic,
                "value": r.value,
                "ci_low": r.ci[0] if r.ci else None,
                "ci_high": r.ci[1] if r.ci else None,
                "n_items": r.n_items,
                "n_raters": r.n_raters,
                "level": r.level,
                "confidence": r.confidence,
                "n_resamples": r.n_resamples,
                "seed": r.seed,
                "note": r.note,
            }
        )
    console.print(view)
    for r in results:
        if r.note is not None:
            console.print(f"{r.statistic}: undefined ({r.note})", highlight=False)
    if shown:
        counts = ", ".join(f"{c}: {n}" for c, n in prev.counts.items())
        console.print(f"ratings per category ({prev.n_ratings} in all): {counts}")
    if note:
        console.print(f"note: {note}")
    if out is not None:
        payload = {
            "signature": _signature(
                "calibrate agreement",
                {"labels": labels},
                format=format,
                level=level,
                n_resamples=n_resamples,
                seed=seed,
                confidence=confidence,
                categories=cats,
            ),
            "n_items": table.n_items,
            "raters": [str(r) for r in table.raters],
            "statistics": [r.to_dict() for r in results],
            "prevalence": prev.to_dict(),
            "note": note,
        }
        _write(out, "agreement", payload, rows)
        console.print(f"wrote {out / 'agreement.csv'} and {out / 'agreement.json'}")


def _pick_judge(table: LabelTable, rater: str | None, path: Path) -> str:
    names = [str(r) for r in table.raters]
    if rater is None:
        if len(names) != 1:
            raise InputError(
                path, f"several raters ({', '.join(names)}): pick one with --judge-rater"
            )
        return table.raters[0]
    for r in table.raters:
        if str(r) == canonical_id(rater):  # rater names are NFC text, as the tables hold them
            return r
    raise InputError(path, f"no rater '{rater}' (raters: {', '.join(names)})", field="rater")


def _thresholds(text: str) -> tuple[float, ...]:
    """``--thresholds 0.5,0.7,0.9`` as floats in [0, 1]."""
    try:
        cuts = tuple(float(t) for t in text.split(","))
    except ValueError:
        raise InputError(None, f"{text!r}: give numbers in [0, 1], comma-separated",
                         field="--thresholds") from None  # fmt: skip
    if any(not 0 <= t <= 1 for t in cuts):
        raise InputError(None, f"{text!r}: thresholds lie in [0, 1]", field="--thresholds")
    return cuts


@calibrate_app.command("judge")
def judge_command(
    judge: Path = typer.Option(..., help="The judge's run directory or labels file."),
    human: Path = typer.Option(..., help="Human labels file (or run directory)."),
    judge_rater: str | None = typer.Option(None, help="The judge's rater name in --judge."),
    format: str = typer.Option("auto", "--format", help=FORMAT_HELP),
    tie_policy: str = typer.Option("exclude", help="Human ties: exclude|error|own_class."),
    epsilon: float = typer.Option(0.2, help="Alt-test margin (0.2 experts, 0.1 crowd)."),
    q: float = typer.Option(
        0.05, callback=check_level(), help="Alt-test FDR level (Benjamini-Yekutieli)."
    ),
    min_items: int = typer.Option(30, help="Alt-test: fewest items per annotator."),
    n_resamples: int = typer.Option(
        1000, min=0, help="Bootstrap resamples over items (0 = no CI)."
    ),
    seed: int = typer.Option(0, help="Bootstrap seed."),
    confidence: float = typer.Option(0.95, callback=check_level(), help="CI level."),
    out: Path | None = typer.Option(None, help="Write judge_calibration.{csv,json} etc. here."),
    n_bins: int = typer.Option(10, help="Confidence: equal-width bins of top-label confidence."),
    thresholds: str = typer.Option("0.5,0.7,0.9", help="Selective judging thresholds."),
) -> None:
    """Judge vs human majority, human ceiling and Alternative Annotator Test; with label
    probabilities (a run's records with label_probs, or p:LABEL columns), ECE, Brier score,
    the reliability diagram and selective judging."""
    from judgekit.calibration.confidence_inputs import load_label_probs
    from judgekit.calibration.judge_report import calibrate_judge
    from judgekit.labels.overlap import without_judge
    from judgekit.report.calibration import print_judge_calibration
    from judgekit.report.judge import write_judge_calibration

    _check_choice("--tie-policy", tie_policy, TIE_POLICIES)
    judge_table = _load(judge, format)
    rater = _pick_judge(judge_table, judge_rater, judge)
    humans = _load(human, format)
    humans, _ = without_judge(humans, rater, judge_name=f"the judge ({judge_table.source})")
    if humans.n_raters == 0:
        raise InputError(human, "no human raters")
    cuts = _thresholds(thresholds)
    probs, _ = load_label_probs(judge, str(rater))
    result = calibrate_judge(
        judge_table.column(rater), humans, tie_policy=tie_policy, epsilon=epsilon, q=q,
        min_items=min_items, n_resamples=n_resamples, seed=seed, confidence=confidence,
        judge_name=f"the judge ({judge_table.source})", probs=probs, n_bins=n_bins,
        thresholds=cuts,
    )  # fmt: skip
    print_judge_calibration(result, console)
    if out is not None:
        signature = _signature(
            "calibrate judge", {"judge": judge, "human": human}, judge_rater=str(rater),
            format=format, tie_policy=tie_policy, epsilon=epsilon, q=q, min_items=min_items,
            n_resamples=n_resamples, seed=seed, confidence=confidence, n_bins=n_bins,
            thresholds=list(cuts),
        )  # fmt: skip
        write_judge_calibration(result, signature, out)
        extra = ", reliability.csv/.png" if result.confidence is not None else ""
        console.print(
            f"wrote judge_calibration.csv/.json, confusion_matrix.csv, per_class.csv{extra} "
            f"to {out}"
        )


@contextmanager
def _say_interrupted(directory: Path) -> Iterator[None]:
    """On Ctrl-C or SIGTERM, say what ``judgekit run`` says (the records kept, per cell, and
    how to resume), then let the interrupt end the command (exit 130, or 143)."""
    from judgekit.calibration.grid import kept_records

    try:
        yield
    except KeyboardInterrupt:
        kept = kept_records(directory)
        cells = ", ".join(f"{name} {n}" for name, n in kept.items())
        console.print(
            f"interrupted: {sum(kept.values())} records kept in {directory}"
            + (f" ({cells})" if cells else "")
            + "; run the same command again to resume",
            markup=False,
        )
        raise


@calibrate_app.command("grid")
def grid_command(
    grid: Path = typer.Argument(
        ..., help="Grid file (YAML): base config, judges, prompts, labels."
    ),
    set_: list[str] = typer.Option(
        [], "--set", help="Override a run-config field in every cell: --set spilling.samples=2"
    ),
    labels: Path | None = typer.Option(None, help="Human labels (replaces the grid's labels)."),
    out: Path | None = typer.Option(None, help="Output directory (default: the grid's out)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the cache."),
) -> None:
    """Run every judge with every prompt on a labelled set; agreement with humans per cell.

    Each cell is a resumable run in OUT/<judge>__<prompt>/; writes grid.csv, grid.json,
    heatmap.png, pairwise agreement among cells and Kendall's W of the model rankings.
    """
    from judgekit.calibration.grid import run_grid
    from judgekit.calibration.grid.config import load_grid, out_dir
    from judgekit.report.grid import print_grid, write_grid

    def cell_done(name: str, stats: dict[str, int], run: Any) -> None:
        console.print(
            f"cell {name}: {stats['new']} records added, {stats['shared']} shared; "
            f"{run.requests} requests; {run.elapsed_s:.0f}s"
        )

    spec = load_grid(grid, set_, labels)
    directory = out_dir(spec, out)
    with _say_interrupted(directory):
        result = run_grid(spec, out=out, no_cache=no_cache, on_cell=cell_done)
    write_grid(result, directory, result.stats)
    print_grid(result, directory, console)


@calibrate_app.command("tune")
def tune_command(
    tune: Path = typer.Argument(..., help="Tune file (YAML): a grid file plus a tune: block."),
    set_: list[str] = typer.Option([], "--set", help="Override a run-config field in every cell."),
    labels: Path | None = typer.Option(None, help="Human labels (replaces the file's labels)."),
    out: Path | None = typer.Option(None, help="Output directory (default: the file's out)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the cache."),
    as_json: bool = typer.Option(False, "--json", help="Print the test report as JSON."),
    by: str | None = typer.Option(
        None, help="Stratify the split by this facet and the label (default: language)."
    ),
) -> None:
    """Choose a judge on the select split, report it on the sealed test split; writes best.yaml.

    Candidates (judge x prompt) run as resumable runs in OUT/<judge>__<prompt>/; writes
    tune.json, tune.csv, tune.png, splits.json, ranking.json, best.yaml;
    counts a look in looks.json.
    """
    from judgekit.calibration.grid.config import out_dir
    from judgekit.calibration.tune.run import run_tune
    from judgekit.calibration.tune.spec import load_tune
    from judgekit.report.tune import tune_dict, tune_lines, write_tune_csv, write_tune_json
    from judgekit.report.tune_figure import tune_figure

    spec = load_tune(tune, set_, labels)
    if by is not None:
        spec.tune.by = by
    with _say_interrupted(out_dir(spec, out)):
        result = run_tune(spec, out=out, no_cache=no_cache)
    write_tune_json(result.report, result.directory / "tune.json")
    write_tune_csv(result.report, result.directory / "tune.csv")
    tune_figure(result.ranking, result.report, result.directory / "tune.png")
    if as_json:
        print_json(tune_dict(result.report), indent=2)
        return
    for line in tune_lines(result.report):
        console.print(line, markup=False)
    console.print(
        f"wrote best.yaml, tune.json, tune.csv, tune.png to {result.directory}", markup=False
    )


# `calibrate validity`, `estimate`, `plan` and `errors` live in their own modules, registered here
calibrate_app.command("validity")(validity_command)
calibrate_app.command("errors")(errors_command)
calibrate_app.command("estimate")(estimate_command)
calibrate_app.command("plan")(plan_command)
calibrate_app.command("compare")(compare_command)
