"""Incremental proxy validity of a benchmark score (paper 001, "Gold vs. Translation").

Does a proxy score (e.g. a translated MMLU) predict the native benchmark score beyond general
model strength? Two nested OLS models on one complete-case frame of models,

    base:  native ~ log(params) + proficiency [+ controls]
    full:  native ~ log(params) + proficiency [+ controls] + proxy

compared by Delta R^2 and the nested F-test (statsmodels ``compare_f_test``), with a
model-level bootstrap CI of the proxy coefficient beta and of Delta R^2 (5,000 resamples in the
paper), and leave-one-family-out (LOFO) refits. Evidence labels, fixed up front as in the paper:

* ``robust``: nested F significant, bootstrap CI of beta excludes 0, and in every LOFO refit
  beta keeps the full-sample sign with p < alpha (the paper requires positive beta; a robust
  negative beta is reported with ``beta < 0``);
* ``marginal``: nested F significant but a robustness check fails;
* ``null``: nested F not significant and the CI of beta contains 0;
* ``inconclusive``: nested F not significant but the CI of beta excludes 0 (or could not be
  computed): the paper's "weak mixed evidence rather than a clean null".

In-sample Delta R^2 is never used as a null test: it is non-negative by construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm

from judgekit.errors import JudgekitError
from judgekit.metrics.bootstrap import bootstrap_ci

LABELS = ("robust", "marginal", "null", "inconclusive")
LOG_PARAMS = "log_params"


@dataclass(frozen=True)
class LofoRefit:
    """The full model refitted without one family: its models left, beta and beta's p."""

    family: str
    n_models: int
    beta: float
    p_value: float


@dataclass(frozen=True)
class ValidityResult:
    """Proxy validity of one proxy for one native score.

    R^2 values in [0, 1]; ``delta_r2`` = ``r2_full - r2_base`` >= 0. ``f_stat`` on
    (``df_num``, ``df_denom``) degrees of freedom with ``f_p_value``. ``beta`` is the proxy's
    OLS coefficient (native units per proxy unit) with its standard error and t-test p-value;
    ``beta_ci`` and ``delta_r2_ci`` are percentile bootstrap CIs over models. ``reasons``
    says which checks failed.
    """

    native: str
    proxy: str
    controls: tuple[str, ...]
    n_models: int
    n_dropped: int
    r2_base: float
    r2_full: float
    delta_r2: float
    delta_r2_ci: tuple[float, float] | None
    f_stat: float
    f_p_value: float
    df_num: int
    df_denom: int
    beta: float
    beta_se: float
    beta_p: float
    beta_ci: tuple[float, float] | None
    lofo: tuple[LofoRefit, ...]
    label: str
    reasons: tuple[str, ...]
    alpha: float
    confidence: float
    n_resamples: int
    seed: int

    def to_dict(self) -> dict:
        return asdict(self)


def _numeric(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    out = {}
    for col in columns:
        try:
            out[col] = pd.to_numeric(frame[col], errors="raise").astype(float)
        except (TypeError, ValueError) as exc:
            raise JudgekitError(f"column {col!r} must be numeric: {exc}") from None
    return pd.DataFrame(out, index=frame.index)


def design(
    frame: pd.DataFrame,
    *,
    native: str,
    proxy: str,
    params: str,
    proficiency: str,
    family: str,
    controls: Sequence[str] = (),
) -> tuple[pd.DataFrame, int]:
    """The complete-case frame the nested models are fitted on, and the rows dropped.

    Returns:
        DataFrame with columns ``native``, ``log_params`` (natural log of ``params``; the
        unit of the parameter count only shifts the intercept), ``proficiency``, the
        controls (as ``control:<name>``), ``proxy`` and ``family`` (as text), one row per
        model with every value present; and the number of rows dropped for a missing value.

    Raises:
        JudgekitError: a column is absent or non-numeric, a parameter count is <= 0, or a
            name is used twice among native, proxy, proficiency and controls.
    """
    numeric = [native, params, proficiency, *controls, proxy]
    if len(set(numeric)) != len(numeric):
        raise JudgekitError(f"a column is used twice among {numeric}")
    absent = [c for c in [*numeric, family] if c not in frame.columns]
    if absent:
        raise JudgekitError(f"columns not found: {absent}; have {list(frame.columns)}")
    values = _numeric(frame, numeric)
    values[family] = frame[family]
    complete = values.dropna()
    if (complete[params] <= 0).any():
        raise JudgekitError(f"column {params!r}: parameter counts must be > 0 (log is taken)")
    out = pd.DataFrame(
        {
            "native": complete[native],
            LOG_PARAMS: np.log(complete[params]),
            "proficiency": complete[proficiency],
        }
    )
    for col in controls:
        out[f"control:{col}"] = complete[col]
    out["proxy"] = complete[proxy]
    out["family"] = complete[family].astype(str)
    return out.reset_index(drop=True), int(len(values) - len(complete))


def _regressors(frame: pd.DataFrame, controls: Sequence[str], with_proxy: bool) -> pd.DataFrame:
    cols = [LOG_PARAMS, "proficiency", *(f"control:{c}" for c in controls)]
    cols += ["proxy"] if with_proxy else []
    return sm.add_constant(frame[cols], has_constant="add")


def _r2_beta(y: np.ndarray, x_base: np.ndarray, x_full: np.ndarray) -> tuple[float, float]:
    """(Delta R^2, beta of the last column) by least squares; NaN when rank-deficient."""
    sst = float(((y - y.mean()) ** 2).sum())
    if sst == 0:
        return float("nan"), float("nan")
    r2 = []
    beta = float("nan")
    for x in (x_base, x_full):
        coef, _, rank, _ = np.linalg.lstsq(x, y, rcond=None)
        if rank < x.shape[1]:
            return float("nan"), float("nan")
        r2.append(1 - float(((y - x @ coef) ** 2).sum()) / sst)
        beta = float(coef[-1])
    return r2[1] - r2[0], beta


def evidence_label(
    f_p_value: float,
    beta_ci: tuple[float, float] | None,
    lofo_ok: bool,
    *,
    alpha: float = 0.05,
) -> str:
    """The paper-001 evidence label from the three checks (see the module docstring).

    Args:
        f_p_value: p-value of the full-sample nested F-test.
        beta_ci: bootstrap CI of the proxy coefficient, or None if not computed.
        lofo_ok: every leave-one-family-out refit kept beta's sign with p < alpha.
        alpha: significance level.

    Returns:
        ``robust``, ``marginal``, ``null`` or ``inconclusive``.
    """
    ci_excludes = beta_ci is not None and (beta_ci[0] > 0 or beta_ci[1] < 0)
    if f_p_value < alpha:
        return "robust" if ci_excludes and lofo_ok else "marginal"
    if beta_ci is not None and not ci_excludes:
        return "null"
    return "inconclusive"


def _bootstrap_cis(
    y: pd.Series, x_base: pd.DataFrame, x_full: pd.DataFrame, **boot: Any
) -> list[tuple[float, float] | None]:
    """Model-level bootstrap CIs of Delta R^2 and of beta (None with no resamples)."""
    yv, xb, xf = y.to_numpy(), x_base.to_numpy(), x_full.to_numpy()
    if boot["n_resamples"] <= 0:
        return [None, None]
    return [
        bootstrap_ci(len(yv), lambda idx, w=which: _r2_beta(yv[idx], xb[idx], xf[idx])[w], **boot)
        for which in (0, 1)
    ]


def _lofo(data: pd.DataFrame, controls: tuple[str, ...]) -> list[LofoRefit]:
    """The full model refitted without each family in turn (NaN where too few models stay)."""
    lofo = []
    for fam in sorted(data["family"].unique()):
        sub = data[data["family"] != fam]
        xs = _regressors(sub, controls, with_proxy=True)
        if len(sub) <= xs.shape[1]:
            lofo.append(LofoRefit(fam, len(sub), float("nan"), float("nan")))
            continue
        fit = sm.OLS(sub["native"], xs).fit()
        lofo.append(
            LofoRefit(fam, len(sub), float(fit.params["proxy"]), float(fit.pvalues["proxy"]))
        )
    return lofo


def _reasons(
    f_p: float,
    beta: float,
    beta_ci: tuple[float, float] | None,
    lofo: list[LofoRefit],
    alpha: float,
) -> tuple[list[str], bool]:
    """Why the evidence is not robust (each failed check in words), and whether every
    leave-one-family-out refit kept the sign of beta at p < alpha."""
    reasons = []
    if not f_p < alpha:
        reasons.append(f"nested F-test not significant (p = {f_p:.3g} >= {alpha})")
    ci_excludes = beta_ci is not None and (beta_ci[0] > 0 or beta_ci[1] < 0)
    if beta_ci is None:
        reasons.append("bootstrap CI of beta not computed")
    elif not ci_excludes:
        reasons.append(f"bootstrap CI of beta [{beta_ci[0]:.3g}, {beta_ci[1]:.3g}] contains 0")
    if len(lofo) < 2:
        reasons.append("leave-one-family-out needs at least 2 families")
    failed = [r for r in lofo if not (np.sign(r.beta) == np.sign(beta) and r.p_value < alpha)]
    if failed:
        detail = "; ".join(f"{r.family} (beta = {r.beta:.3g}, p = {r.p_value:.3g})" for r in failed)
        reasons.append(
            f"{len(failed)} of {len(lofo)} leave-one-family-out refits lose the sign of beta "
            f"or p < {alpha}: without {detail}"
        )
    return reasons, len(lofo) >= 2 and not failed


def proxy_validity(
    frame: pd.DataFrame,
    proxy: str,
    *,
    native: str = "native",
    params: str = "params",
    proficiency: str = "proficiency",
    family: str = "family",
    controls: Sequence[str] = (),
    n_resamples: int = 5000,
    confidence: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
) -> ValidityResult:
    """Nested-OLS incremental validity of ``proxy`` for ``native`` (paper 001), returned as a
    :class:`ValidityResult` with its evidence label (see the module docstring).

    Args:
        frame: one row per model; columns named by the other arguments. Rows with a missing
            value in a used column are dropped (complete cases) and counted.
        proxy: the proxy score column (e.g. translated-benchmark accuracy).
        native: the native benchmark score column (the outcome).
        params: total parameter count (> 0, any unit); its natural log enters the models.
        proficiency: language-proficiency control (e.g. Belebele accuracy).
        family: model family, for leave-one-family-out refits.
        controls: extra control columns (e.g. English MMLU), in both models.
        n_resamples: model-level bootstrap resamples (paper: 5,000); resamples whose design
            is rank-deficient are dropped.
        confidence: two-sided CI level.
        alpha: significance level of the F-test and of the LOFO betas.
        seed: bootstrap seed.

    Raises:
        JudgekitError: bad columns (see :func:`design`) or too few models to fit the full
            model with at least one residual degree of freedom.
    """
    controls = tuple(controls)
    data, dropped = design(frame, native=native, proxy=proxy, params=params,
                           proficiency=proficiency, family=family, controls=controls)  # fmt: skip
    x_base, x_full = (_regressors(data, controls, with_proxy=p) for p in (False, True))
    if len(data) <= x_full.shape[1]:
        raise JudgekitError(
            f"{len(data)} complete models cannot fit {x_full.shape[1]} coefficients; "
            "need more models or fewer controls"
        )
    y = data["native"]
    base, full = (sm.OLS(y, x).fit() for x in (x_base, x_full))
    f_stat, f_p, df_num = full.compare_f_test(base)
    beta = float(full.params["proxy"])

    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    delta_ci, beta_ci = _bootstrap_cis(y, x_base, x_full, **boot)
    lofo = _lofo(data, controls)
    reasons, lofo_ok = _reasons(f_p, beta, beta_ci, lofo, alpha)
    return ValidityResult(
        native=native,
        proxy=proxy,
        controls=controls,
        n_models=len(data),
        n_dropped=dropped,
        r2_base=float(base.rsquared),
        r2_full=float(full.rsquared),
        delta_r2=float(full.rsquared - base.rsquared),
        delta_r2_ci=delta_ci,
        f_stat=float(f_stat),
        f_p_value=float(f_p),
        df_num=int(df_num),
        df_denom=int(full.df_resid),
        beta=beta,
        beta_se=float(full.bse["proxy"]),
        beta_p=float(full.pvalues["proxy"]),
        beta_ci=beta_ci,
        lofo=tuple(lofo),
        label=evidence_label(f_p, beta_ci, lofo_ok, alpha=alpha),
        reasons=tuple(reasons),
        alpha=alpha,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
