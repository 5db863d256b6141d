"""Cross-fitting: the same human labels choose the judge and correct its estimate, validly.

A judge chosen on human labels and then used with those same labels for prediction-powered
inference (PPI) breaks PPI's premise that the predictor is independent of the labelled sample.
Cross-prediction-powered inference (Zrnic & Candès 2024, "Cross-prediction-powered inference",
PNAS 121(15); built on Angelopoulos et al. 2023, "Prediction-powered inference", Science 382)
restores it: the labelled items are cut into K folds; for fold j the candidate is chosen (by the
tune's declared statistic) on the other K-1 folds only, its outputs on fold j's items are their
predictions, and its outputs on every unlabelled item form column j of the unlabelled
predictions; ``ppi_py.crossppi_mean_ci`` combines them (the unlabelled prediction is the mean of
the K columns).

Per facet (``--by language``, :func:`cross_fit_facets`): the same estimate on each facet value's
items alone, the folds made by the same rule (K folds of that value's labelled items, stratified
by the human label, the same seed), after the estimate over every item (facet ``all``), as
``calibrate estimate --by`` gives its rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from judgekit.calibration.estimate.inputs import Target, check_share_given
from judgekit.calibration.tune.choose import choose
from judgekit.calibration.tune.nested import fold_items
from judgekit.errors import InputError
from judgekit.labels.table import load_labels


@dataclass(frozen=True)
class CrossFit:
    """Cross-PPI and humans-only estimates of ``target`` (a share in 0..1 or a mean, in label
    units) with ``1 - alpha`` CIs; ``n`` labelled, ``N`` unlabelled items, the candidate chosen
    for each fold, the looks at the tuned judge's sealed test labels and the ``facet`` value
    the estimate is over (``all``: every item); ``note`` says where a share's estimate or bounds
    were clipped to [0, 1] (:func:`judgekit.calibration.estimate.clip_share`, the values before)."""

    target: str
    estimate: float
    ci: tuple[float, float]
    humans_only: float
    humans_ci: tuple[float, float]
    n: int
    N: int
    chosen_per_fold: tuple[str, ...]
    looks: int
    facet: str = "all"
    note: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def tune_candidates(tune_dir: Path) -> tuple[str, dict[str, pd.Series]]:
    """(declared statistic, candidate name -> item -> output) of a ``calibrate tune`` output, in
    ranking order. Raises InputError without ranking.json or a readable single-rater cell."""
    path = Path(tune_dir) / "ranking.json"
    if not path.is_file():
        raise InputError(path, "not a calibrate tune output: no ranking.json", field="--tuned")
    doc = json.loads(path.read_text(encoding="utf-8"))
    out = {}
    for name, _value in doc["select"]:
        table = load_labels(Path(tune_dir) / name)
        if table.n_raters != 1:
            raise InputError(table.source, f"expected one rater, got {table.raters}")
        out[name] = table.frame[table.raters[0]].dropna().astype(str)
    return str(doc["statistic"]), out


def _values(labels: list, goal: Target, whose: str) -> np.ndarray:
    """What each label stands for under ``goal`` (:meth:`Target.value`: 1.0 / 0.0 for a share
    or rate, the number for a mean); InputError naming ``whose`` labels otherwise."""
    return np.array([goal.value(label, whose) for label in labels], dtype=float)


def _scalar(value: object) -> float:
    return float(np.ravel(np.asarray(value, dtype=float))[0])


def cross_fit(
    candidates: dict[str, pd.Series],
    human: pd.Series,
    stat: str,
    target: str,
    *,
    folds: int = 5,
    seed: int = 0,
    alpha: float = 0.05,
    looks: int = 0,
    check_share: bool = True,
) -> CrossFit:
    """Cross-PPI estimate of ``target`` (``share:LABEL``, ``rate`` or ``mean``, as
    :class:`~judgekit.calibration.estimate.inputs.Target` reads it) over the items every
    candidate labelled, ``human`` (item -> majority label) giving the labelled ones.

    Folds are stratified by the human label (:func:`judgekit.calibration.tune.nested.
    fold_items`, seeded). Raises ValueError with fewer labelled items than ``folds`` or no
    unlabelled item; InputError for an unknown target, a label the target cannot read, or a
    ``share:LABEL`` no candidate or human gave (not checked with ``check_share`` False: a
    facet may lack a label the whole sample has).
    """
    from ppi_py import classical_mean_ci, crossppi_mean_ci, crossppi_mean_pointestimate

    common = sorted(set.intersection(*(set(s.index) for s in candidates.values())))
    labelled = [i for i in common if i in human.index]
    unlabelled = [i for i in common if i not in human.index]
    if not unlabelled:
        raise ValueError("no unlabelled item: nothing for the judge to add")
    goal = Target.parse(target)
    gold = {i: str(human[i]) for i in labelled}
    parts = fold_items(labelled, [gold[i] for i in labelled], folds, seed)
    outputs = {name: s.to_dict() for name, s in candidates.items()}
    yhat, chosen, columns = {}, [], []
    for part in parts:
        held = set(part)
        rest = [i for i in labelled if i not in held]
        name = choose(outputs, gold, rest, stat).chosen
        chosen.append(name)
        yhat.update({i: outputs[name][i] for i in part})
        columns.append(_values([outputs[name][i] for i in unlabelled], goal, f"judge {name}"))
    y = _values([gold[i] for i in labelled], goal, "human majority label")
    y_hat = _values([yhat[i] for i in labelled], goal, "judge")
    y_unl = np.column_stack(columns)
    if check_share:
        check_share_given(goal, pd.Series(y), pd.Series(y_hat), pd.Series(y_unl.ravel()))
    est = _scalar(crossppi_mean_pointestimate(y, y_hat, y_unl))
    low, high = (_scalar(v) for v in crossppi_mean_ci(y, y_hat, y_unl, alpha=alpha))
    h_low, h_high = (_scalar(v) for v in classical_mean_ci(y, alpha=alpha))
    fit = CrossFit(target, est, (float(low), float(high)), float(y.mean()),
                   (float(h_low), float(h_high)), len(y), len(unlabelled), tuple(chosen),
                   looks)  # fmt: skip
    return _clip(fit) if goal.kind in ("share", "rate") else fit


def _clip(fit: CrossFit) -> CrossFit:
    """``fit`` with its estimates and bounds clipped to [0, 1] (a share's range) by
    :func:`judgekit.calibration.estimate.clip_share`, the rule ``calibrate estimate`` and the
    design estimates use, the note saying what moved (cross-PPI and the humans-only CLT
    interval can both leave [0, 1] near 0 or 1 at small n)."""
    from judgekit.calibration.estimate import clip_share

    before = {"estimate": fit.estimate, "ci_low": fit.ci[0], "ci_high": fit.ci[1],
              "humans_only": fit.humans_only, "humans_ci_low": fit.humans_ci[0],
              "humans_ci_high": fit.humans_ci[1]}  # fmt: skip
    after, note = clip_share(before)  # type: ignore[arg-type]
    if note is None:
        return fit
    return replace(fit, estimate=after["estimate"], ci=(after["ci_low"], after["ci_high"]),
                   humans_only=after["humans_only"],
                   humans_ci=(after["humans_ci_low"], after["humans_ci_high"]),
                   note=note)  # type: ignore[arg-type]  # fmt: skip


def cross_fit_facets(
    candidates: dict[str, pd.Series],
    human: pd.Series,
    stat: str,
    target: str,
    groups: pd.Series,
    by: str,
    **options: object,
) -> list[CrossFit]:
    """:func:`cross_fit` over every item (facet ``all``), then over each value of ``groups``
    (item -> facet value, :func:`judgekit.calibration.estimate.facet_groups`; sorted) on that
    value's items alone, with the same folds rule, seed and ``options`` (``folds``, ``seed``,
    ``alpha``, ``looks``).

    Raises ValueError (what :func:`cross_fit` says, after ``<by> <value>:``) where a value has
    no unlabelled item or fewer labelled items than folds; InputError as :func:`cross_fit`.
    """
    fits = [cross_fit(candidates, human, stat, target, **options)]  # type: ignore[arg-type]
    for value in sorted(set(groups.astype(str))):
        members = set(groups.index[groups.astype(str) == value].astype(str))
        subset = {name: s[s.index.isin(members)] for name, s in candidates.items()}
        try:
            fit = cross_fit(subset, human[human.index.isin(members)], stat, target,
                            check_share=False, **options)  # type: ignore[arg-type]  # fmt: skip
        except ValueError as exc:
            raise ValueError(f"{by} {value}: {exc}") from None
        fits.append(replace(fit, facet=value))
    return fits


def cross_fit_tuned(
    tune_dir: Path,
    human_path: Path,
    target: str,
    *,
    folds: int = 5,
    seed: int = 0,
    alpha: float = 0.05,
    by: str | None = None,
    facet_paths: Sequence[str | Path | None] = (),
) -> list[CrossFit]:
    """:func:`cross_fit` with the candidates and statistic of the tune output ``tune_dir`` and
    the human majority of ``human_path`` (ties left out); with ``by``, :func:`cross_fit_facets`
    with the facets :func:`judgekit.calibration.estimate.facets.item_facets` reads from
    ``human_path`` and ``facet_paths`` (the judge's run, a ``--facets`` table), items without
    a value in facet ``<missing>``, as ``calibrate estimate --by``. Human labels that are the
    tuned judge's sealed test items are allowed here (cross-fitting is what makes their reuse
    valid) and count one look in ``tune_dir/looks.json``.

    Returns:
        One estimate (``by`` None), else the ``all`` estimate then one per facet value.

    Raises:
        InputError: not a tune output, unreadable labels, an unknown facet ``by``, or a target
            or a facet value :func:`cross_fit` refuses (the human labels' file named).
    """
    from judgekit.calibration.estimate import facet_groups
    from judgekit.calibration.estimate.facets import item_facets
    from judgekit.calibration.tune.guard import check_human_sample, count_look
    from judgekit.calibration.tune.splits import read_looks
    from judgekit.labels.majority import majority_vote

    stat, candidates = tune_candidates(tune_dir)
    human = majority_vote(load_labels(human_path))
    human = human[human != "<tie>"].astype(str)
    overlap = check_human_sample(tune_dir, human.index, True)
    options = {"folds": folds, "seed": seed, "alpha": alpha, "looks": read_looks(tune_dir)}
    try:
        if by is None:
            fits = [cross_fit(candidates, human, stat, target, **options)]  # type: ignore[arg-type]
        else:
            items = pd.Index(sorted(set().union(*(s.index for s in candidates.values()))))
            table = item_facets(*facet_paths, human_path, by=by)
            groups = facet_groups(items, table, by)
            fits = cross_fit_facets(candidates, human, stat, target, groups, by, **options)
    except ValueError as exc:
        raise InputError(Path(human_path), str(exc), field="--human") from None
    if overlap:
        looks = count_look(tune_dir, "calibrate estimate --cross-fit")
        fits = [replace(fit, looks=looks) for fit in fits]
    return fits
