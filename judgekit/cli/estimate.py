"""``judgekit calibrate estimate`` and ``judgekit calibrate plan``: benchmark figures corrected by a
few human labels (prediction-powered inference), and how many labels a CI width needs.

* ``calibrate estimate --judge RUN_OR_LABELS --human LABELS``: humans only, judge only, PPI and
  PPI++ side by side, per facet with ``--by`` (``judgekit.calibration.estimate``);
* ``calibrate plan --judge RUN --width W [--pilot LABELS | --kappa K]``: labels needed and a
  seeded random sample of items to label, one item id per line
  (``judgekit.calibration.estimate.plan``).
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from judgekit.cli.options import check_level, check_positive
from judgekit.cli.output import plain_console
from judgekit.data.atomic import write_text
from judgekit.data.jsonfile import json_safe, print_json
from judgekit.errors import InputError

console = plain_console()

TARGET_HELP = (
    "Quantity: share:LABEL, rate (spilling: share of false), mean (MQM). Default: the run's."
)
BY_HELP = "Facet to break the figure down by (system, lang, model, language, a --facets column)."
FACETS_HELP = "Extra item facets: a CSV/TSV/JSONL table with an item (or id, key) column."
RATER_HELP = "The judge's rater(s) in --judge (repeat; default all, averaged)."
TUNED_HELP = "The calibrate tune output the judge came from: its sealed test labels are refused."
INTERVAL_HELP = (
    "CI: auto (mean: bootstrap-t below 100 labels, else CLT; share/rate: t below 50), clt, t, "
    "bootstrap-t."
)


def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _print_estimates(result, alpha: float, tie_policy: str) -> None:
    """The estimates table and the notes under it (ties, zero widths, fallbacks, clipping)."""
    sig = result.signature
    view = Table(
        title=f"{sig['target']} ({1 - alpha:g} CIs; judge: {', '.join(sig['judge_raters'])})"
    )
    for column in (
        "facet",
        "method",
        "estimate",
        "CI",
        "n labelled",
        "n unlabelled",
        "effective n",
        "interval",
    ):
        view.add_column(column, justify="left" if column in ("facet", "method") else "right")
    for e in result.estimates:
        ci = "biased, no CI" if e.method == "judge_only" else (
            f"[{_num(e.ci_low)}, {_num(e.ci_high)}]" if e.ci_low is not None else "-")  # fmt: skip
        view.add_row(e.facet, e.method, _num(e.estimate), ci, str(e.n_labelled),
                     str(e.n_unlabelled), _num(e.effective_n, 1),
                     (e.interval or "-") + ("*" if e.note else ""))  # fmt: skip
    console.print(view)
    if result.n_ties:
        console.print(
            f"{result.n_ties} human-labelled items left out: their votes tie ({tie_policy})"
        )
    for facet, methods in result.zero_width.items():
        console.print(
            f"zero-width CI in {facet} ({', '.join(methods)}): the values it rests on are all "
            "equal, a certainty so few labels cannot give; label more items"
        )
    for facet, notes in result.fallbacks.items():
        for note in notes:
            console.print(f"* {facet}, {note}")


def _check_tuned(tuned: Path | None, human: Path, allow: bool) -> int:
    """Refuse a tuned judge's sealed test labels unless allowed; how many the sample holds."""
    from judgekit.calibration.tune.guard import check_human_sample
    from judgekit.labels.table import load_labels

    return 0 if tuned is None else check_human_sample(tuned, load_labels(human).items, allow)


def _count_look(tuned: Path | None, overlap: int) -> None:
    """Once the figures exist: count the look at ``overlap`` sealed test labels and say the
    total (on stderr, so --json output stays one document)."""
    if tuned is None or not overlap:
        return
    from judgekit.calibration.tune.guard import count_look

    looks = count_look(tuned, "calibrate estimate")
    typer.echo(f"warning: {overlap} sealed test labels of the tuned judge used; looks at the "
               f"sealed test split: {looks} ({tuned / 'looks.json'})", err=True)  # fmt: skip


def _cross_fit(tuned: Path, human: Path, target: str | None, alpha: float, seed: int,
               as_json: bool, by: str | None, facet_paths: list) -> None:  # fmt: skip
    """Print the cross-PPI estimate of a tuned judge, per facet with ``by``
    (judgekit.calibration.tune.crossfit)."""
    from judgekit.calibration.tune.crossfit import cross_fit_tuned

    if target is None:
        raise InputError(None, "--cross-fit needs --target share:LABEL or mean", field="--target")
    fits = cross_fit_tuned(tuned, human, target, seed=seed, alpha=alpha, by=by,
                           facet_paths=facet_paths)  # fmt: skip
    if as_json:
        doc = (
            fits[0].to_dict()
            if by is None
            else {"by": by, "estimates": [f.to_dict() for f in fits]}
        )
        print_json(doc, indent=2)
        return
    level = f"{1 - alpha:g}"
    for fit in fits:
        facet = "" if by is None else f"{by} {fit.facet}: "
        console.print(
            f"{facet}{fit.target}: cross-PPI {fit.estimate:.4f} [{fit.ci[0]:.4f}, {fit.ci[1]:.4f}] "
            f"({level} CI; n={fit.n} labelled, N={fit.N} unlabelled, {len(fit.chosen_per_fold)} "
            f"folds, chosen per fold: {', '.join(fit.chosen_per_fold)})",
            markup=False,
        )
        console.print(
            f"{facet}{fit.target}: humans only {fit.humans_only:.4f} "
            f"[{fit.humans_ci[0]:.4f}, {fit.humans_ci[1]:.4f}]",
            markup=False,
        )
        if fit.note:
            console.print(f"{facet}{fit.target}: note: {fit.note}", markup=False)
    console.print(f"looks at the sealed test split: {fits[0].looks}", markup=False)


def estimate_command(
    judge: Path = typer.Option(..., help="The judge's run directory or labels file."),
    human: Path = typer.Option(..., help="Human labels (item,rater,label; run dir; MQM TSV)."),
    target: str | None = typer.Option(None, help=TARGET_HELP),
    by: str | None = typer.Option(None, help=BY_HELP),
    facets: Path | None = typer.Option(None, help=FACETS_HELP),
    judge_rater: list[str] = typer.Option([], help=RATER_HELP),
    tie_policy: str = typer.Option("exclude", help="Human ties: exclude|error|own_class."),
    alpha: float = typer.Option(0.05, callback=check_level(), help="Error level: (1 - alpha) CIs."),
    rank: str | None = typer.Option(None, help="Rank the --by values: higher|lower is better."),
    stratified: bool = typer.Option(
        False, help="The human sample was drawn per --by value (calibrate plan --by)."
    ),
    interval: str = typer.Option("auto", help=INTERVAL_HELP),
    resamples: int = typer.Option(2000, min=1, help="Bootstrap-t resamples B (x K with --rank)."),
    seed: int = typer.Option(0, help="Seed of the bootstrap-t resamples."),
    lam: str = typer.Option(
        "tuned", help="PPI++'s lam: tuned (ppi_py's) or shrunk (the gate's, docs/gate.md)."
    ),
    hard_labels: bool = typer.Option(
        False, help="Use the judge's labels, not its label probabilities, as the predictor."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    out: Path | None = typer.Option(
        None,
        help="Write estimate.json, .csv and .md here (a run directory: judgekit view shows it).",
    ),
    selection: Path | None = typer.Option(None, help="selection.csv of calibrate plan --design."),
    tuned: Path | None = typer.Option(None, help=TUNED_HELP),
    allow_test_labels: bool = typer.Option(
        False, help="Use a tuned judge's sealed test labels anyway (counted as a look)."
    ),
    cross_fit: bool = typer.Option(
        False, "--cross-fit", help="With --tuned: cross-PPI, the labels choose and correct."
    ),
) -> None:
    """The target's mean with CIs: humans only, judge only, PPI and PPI++ (ppi_py)."""
    from judgekit.calibration.estimate.run import run_estimate

    if cross_fit and tuned is None:
        raise InputError(None, "--cross-fit needs --tuned (a tune output)", field="--tuned")
    if tuned is not None and cross_fit:
        return _cross_fit(tuned, human, target, alpha, seed, as_json, by, [judge, facets])
    overlap = _check_tuned(tuned, human, allow_test_labels)
    if selection is not None:
        from judgekit.cli.design import design_estimate

        design_estimate(judge, human, selection, as_json, target=target,
                        raters=judge_rater or None, alpha=alpha, by=by,
                        facets=str(facets) if facets else None)  # fmt: skip
        return _count_look(tuned, overlap)

    result = run_estimate(
        str(judge), str(human), target=target, by=by, facets=str(facets) if facets else None,
        judge_raters=judge_rater or None, tie_policy=tie_policy, alpha=alpha, rank=rank,
        stratified=stratified, interval=interval, resamples=resamples, seed=seed,
        hard_labels=hard_labels, lam=lam,
    )  # fmt: skip
    _count_look(tuned, overlap)
    payload = json_safe(result.to_dict())
    written = []
    if out is not None:
        from judgekit.report.estimate import write_estimate

        written = write_estimate(payload, out)
    if as_json:
        print_json(payload)
        return
    _print_estimates(result, alpha, tie_policy)
    _print_predictor(result.predictor or {})
    if result.ranking:
        _print_ranking(result.ranking, result.interval or {}, rank)
    sig = result.signature
    human_sha = sig["inputs"]["human"]["sha256"][:12]
    console.print(f"human labels: {sig['inputs']['human']['path']} (sha256 {human_sha}...)")
    if written:
        console.print(f"wrote {', '.join(str(p) for p in written)}")


def _print_predictor(predictor: dict) -> None:
    """One line per facet: the probability predictor's PPI++ width against the hard labels'."""
    for facet, ratio in (predictor.get("width_ratio") or {}).items():
        hard = predictor["hard"][facet]
        console.print(
            f"{facet}: predictor p(label) from the judge's label probabilities; with its hard "
            f"labels PPI++ is {_num(hard['estimate'])} [{_num(hard['ci_low'])}, "
            f"{_num(hard['ci_high'])}], width ratio {_num(ratio, 3)} (--hard-labels to use them)"
        )
    if predictor.get("items_without_probabilities"):
        console.print(
            f"note: {predictor['items_without_probabilities']} judged items have no label "
            "probabilities: their predictor is the hard label"
        )


def _print_ranking(ranking: list[dict], spec: dict, rank: str | None) -> None:
    """The ranking table: rank, facet, estimate, simultaneous CI, rank interval."""
    extra = f", B = {spec['rank_resamples']}" if any(
        r["interval"] == "bootstrap-t" for r in ranking) else ""  # fmt: skip
    ranks = Table(title=f"Ranking by PPI++ ({rank} is better; simultaneous CIs, Bonferroni{extra})")
    for column in ("rank", "facet", "estimate", "CI", "rank interval"):
        ranks.add_column(column, justify="left" if column == "facet" else "right")
    for r in ranking:
        ranks.add_row(("=" if r.get("tied") else "") + str(r["rank"]), r["facet"],
                      _num(r["estimate"]),
                      f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}]",
                      f"{r['rank_low']}-{r['rank_high']}")  # fmt: skip
    console.print(ranks)


def plan_command(
    judge: Path = typer.Option(..., help="The judge's run directory or labels file."),
    width: float | None = typer.Option(
        None, callback=check_positive(), help="Target CI half-width, in the target's unit."
    ),
    pilot: Path | None = typer.Option(None, help="Pilot human labels on some judged items."),
    kappa: float | None = typer.Option(
        None, help="Without a pilot: the judge's kappa vs humans (taken as their correlation)."
    ),
    target: str | None = typer.Option(None, help=TARGET_HELP),
    by: str | None = typer.Option(None, help="Stratify: plan and draw per value of this facet."),
    facets: Path | None = typer.Option(None, help=FACETS_HELP),
    judge_rater: list[str] = typer.Option([], help=RATER_HELP),
    tie_policy: str = typer.Option("exclude", help="Pilot ties: exclude|error|own_class."),
    alpha: float = typer.Option(0.05, callback=check_level(), help="Error level: (1 - alpha) CIs."),
    seed: int = typer.Option(0, help="Seed of the random sample."),
    method: str = typer.Option("ppi++", help="Sample size for: ppi++ or classical."),
    interval: str = typer.Option("auto", help="The CI the estimate will use: " + INTERVAL_HELP),
    resamples: int = typer.Option(2000, min=1, help="Bootstrap-t resamples B of the estimate."),
    items_out: Path | None = typer.Option(None, help="Write the items to label, one id a line."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
    design: str | None = typer.Option(None, help="Label design: uniform|stratified|active."),
    budget: int | None = typer.Option(None, help="With --design: labels to draw (expected)."),
    uncertainty: str = typer.Option("auto", help="Active: auto|top|entropy|disagreement|column:C"),
    floor: float = typer.Option(0.2, help="Active: the uniform design's share (min probability)."),
    previous: Path | None = typer.Option(None, help="Sequential: an earlier round's selection."),
    selection_out: Path | None = typer.Option(None, help="With --design: selection.csv path."),
) -> None:
    """Human labels needed for a CI of half-width WIDTH, and which items to label (seeded)."""
    from judgekit.calibration.estimate.plan import run_plan

    if design is not None:
        from judgekit.cli.design import design_plan

        return design_plan(judge, design, budget, selection_out, as_json, target=target,
                           raters=judge_rater or None, kind=uncertainty, floor=floor, by=by,
                           facets=str(facets) if facets else None,
                           pilot=str(pilot) if pilot else None,
                           exclude=str(previous) if previous else None, seed=seed,
                           width=width, kappa=kappa)  # fmt: skip
    if width is None:
        raise InputError(None, "give --width W (or --design with --budget)", field="--width")

    if (pilot is None) == (kappa is None):
        raise InputError(None, "give exactly one of --pilot LABELS and --kappa K", field="--pilot")
    if items_out is not None and items_out.exists():  # an input file, or a file of an input run
        inputs = [p.resolve() for p in (judge, pilot, facets) if p is not None]
        if items_out.resolve() in inputs or items_out.resolve().parent in inputs:
            raise InputError(items_out, "an input of this plan (it would be overwritten): give "
                             "another --items-out", field="--items-out")  # fmt: skip
    result = run_plan(
        str(judge), width, pilot=str(pilot) if pilot else None, kappa=kappa, target=target,
        by=by, facets=str(facets) if facets else None, judge_raters=judge_rater or None,
        tie_policy=tie_policy, alpha=alpha, seed=seed, method=method, interval=interval,
        resamples=resamples,
    )  # fmt: skip
    if items_out is not None:
        items_out.parent.mkdir(parents=True, exist_ok=True)
        write_text(items_out, "".join(f"{i}\n" for i in result.items))
    if as_json:
        print_json(result.to_dict())
        return
    _print_plan(result, alpha, width, by, seed, method)
    if items_out is not None:
        console.print(f"wrote {items_out} (one item id per line)")


def _print_plan(result, alpha: float, width: float, by: str | None, seed: int, method: str) -> None:
    view = Table(
        title=f"Labels for a {1 - alpha:g} CI, half-width {width:g} ({result.signature['target']})"
    )
    columns = ("facet", "items", "sigma", "rho", "from", "classical n", "PPI++ n", "interval",
               "reachable")  # fmt: skip
    for column in columns:
        view.add_column(column, justify="left" if column == "facet" else "right")
    for p in result.plans:
        source = f"pilot ({p.n_pilot})" if p.source == "pilot" else "kappa"
        view.add_row(p.facet, str(p.n_items), _num(p.sigma), _num(p.rho, 3), source,
                     str(p.n_classical), str(p.n_ppi), p.interval,
                     "yes" if p.reachable else "no")  # fmt: skip
    console.print(view)
    sample = "stratified over " + by if by else "simple random"
    console.print(f"sample: {len(result.items)} items ({sample}, seed {seed}, sized for {method})")
    for p in result.plans:
        if p.sigma == 0:
            console.print(
                f"sigma 0 in {p.facet}: every {'pilot' if p.source == 'pilot' else 'judge'} "
                "value is equal, so its size rests on no spread; a larger pilot plans it"
            )
    if not all(p.reachable for p in result.plans):
        console.print("not reachable: even labelling every item gives a wider interval")
