"""Proxy validity (paper 001): nested OLS vs statsmodels, evidence labels, CSV errors, CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
import typer
from statsmodels.stats.anova import anova_lm
from typer.testing import CliRunner

from judgekit.cli.validity import validity_command
from judgekit.data.scores import read_scores_csv
from judgekit.errors import InputError, JudgekitError
from judgekit.metrics.validity import evidence_label, proxy_validity


def synthetic(seed: int = 3) -> pd.DataFrame:
    """30 models in 6 families. ``proxy`` carries the latent skill that drives ``native``
    beyond size and proficiency; ``noise`` is unrelated; ``fragile`` tracks the latent skill
    in family F0 only."""
    rng = np.random.default_rng(seed)
    n = 30
    family = np.repeat([f"F{i}" for i in range(6)], 5)
    log_params = rng.uniform(np.log(0.5), np.log(70), n)
    proficiency = 0.5 + 0.05 * log_params + rng.normal(0, 0.08, n)
    latent = rng.normal(0, 0.1, n)
    native = 0.02 * log_params + 0.4 * proficiency + latent + rng.normal(0, 0.02, n)
    return pd.DataFrame(
        {
            "model": [f"m{i:02d}" for i in range(n)],
            "family": family,
            "params": np.exp(log_params),
            "proficiency": proficiency,
            "native": native,
            "proxy": latent + 0.3 * proficiency + rng.normal(0, 0.02, n),
            "noise": rng.normal(0.5, 0.1, n),
            "fragile": np.where(family == "F0", 3 * latent, rng.normal(0, 0.1, n)),
            "english": proficiency + rng.normal(0, 0.05, n),
        }
    )


def test_ols_numbers_match_direct_statsmodels_fit():
    frame = synthetic()
    res = proxy_validity(frame, "proxy", n_resamples=200, seed=0)
    base = smf.ols("native ~ np.log(params) + proficiency", frame).fit()
    full = smf.ols("native ~ np.log(params) + proficiency + proxy", frame).fit()
    assert res.r2_base == pytest.approx(base.rsquared, abs=1e-12)
    assert res.r2_full == pytest.approx(full.rsquared, abs=1e-12)
    assert res.delta_r2 == pytest.approx(full.rsquared - base.rsquared, abs=1e-12)
    assert res.beta == pytest.approx(full.params["proxy"], abs=1e-12)
    assert res.beta_se == pytest.approx(full.bse["proxy"], abs=1e-12)
    anova = anova_lm(base, full)
    assert res.f_stat == pytest.approx(anova["F"].iloc[1], rel=1e-9)
    assert res.f_p_value == pytest.approx(anova["Pr(>F)"].iloc[1], rel=1e-9)
    assert (res.df_num, res.df_denom, res.n_models) == (1, 26, 30)


def test_robust_when_the_proxy_matters():
    res = proxy_validity(synthetic(), "proxy", n_resamples=5000, seed=0)
    assert res.label == "robust"
    assert res.reasons == ()
    assert res.f_p_value < 1e-10
    assert 0 < res.beta_ci[0] < res.beta < res.beta_ci[1]
    assert res.delta_r2_ci[0] > 0
    assert len(res.lofo) == 6
    assert all(r.n_models == 25 and r.p_value < 0.05 for r in res.lofo)


def test_null_when_the_proxy_is_noise():
    res = proxy_validity(synthetic(), "noise", n_resamples=5000, seed=0)
    assert res.label == "null"
    assert res.f_p_value > 0.05
    assert res.beta_ci[0] < 0 < res.beta_ci[1]


def test_marginal_when_one_family_carries_the_effect():
    res = proxy_validity(synthetic(), "fragile", n_resamples=1000, seed=0)
    assert res.f_p_value < 0.05
    assert res.label == "marginal"
    assert res.reasons[0].startswith("bootstrap CI of beta [")
    assert res.reasons[1] == (
        "1 of 6 leave-one-family-out refits lose the sign of beta or p < 0.05: "
        "without F0 (beta = -0.193, p = 0.451)"
    )


def test_extra_control_enters_both_models():
    frame = synthetic()
    res = proxy_validity(frame, "proxy", controls=["english"], n_resamples=0)
    full = smf.ols("native ~ np.log(params) + proficiency + english + proxy", frame).fit()
    base = smf.ols("native ~ np.log(params) + proficiency + english", frame).fit()
    assert res.beta == pytest.approx(full.params["proxy"], abs=1e-12)
    assert res.r2_base == pytest.approx(base.rsquared, abs=1e-12)
    assert res.df_denom == 25
    assert res.beta_ci is None
    assert res.label == "marginal"  # F significant, but without a bootstrap CI not robust


def test_bootstrap_is_seeded():
    frame = synthetic()
    a = proxy_validity(frame, "proxy", n_resamples=300, seed=5)
    b = proxy_validity(frame, "proxy", n_resamples=300, seed=5)
    assert (a.beta_ci, a.delta_r2_ci) == (b.beta_ci, b.delta_r2_ci)


def test_complete_cases_and_errors():
    frame = synthetic()
    frame.loc[0, "proxy"] = np.nan
    res = proxy_validity(frame, "proxy", n_resamples=0)
    assert (res.n_models, res.n_dropped) == (29, 1)
    with pytest.raises(JudgekitError, match="columns not found"):
        proxy_validity(frame, "missing_column", n_resamples=0)
    with pytest.raises(JudgekitError, match="cannot fit"):
        proxy_validity(synthetic().head(4), "proxy", n_resamples=0)


@pytest.mark.parametrize(
    ("f_p", "ci", "lofo_ok", "label"),
    [
        (0.01, (0.1, 0.5), True, "robust"),
        (0.01, (-0.1, 0.5), True, "marginal"),
        (0.01, (0.1, 0.5), False, "marginal"),
        (0.30, (-0.1, 0.5), False, "null"),
        (0.30, (0.06, 0.48), False, "inconclusive"),  # paper 001: SwedishFacts + English control
        (0.30, None, True, "inconclusive"),
    ],
)
def test_evidence_label_rule(f_p, ci, lofo_ok, label):
    assert evidence_label(f_p, ci, lofo_ok) == label


CSV_HEADER = "model,family,params,proficiency,native,proxy\n"


def test_csv_errors_name_file_line_and_column(tmp_path):
    path = tmp_path / "scores.csv"
    cases = [
        (CSV_HEADER + "a,F,7,0.5,0.4,x\n", "scores.csv:2: field 'proxy': 'x' is not a number"),
        (CSV_HEADER + "a,F,7,0.5,0.4,0.1\nb,F,7,,0.4,0.2\n", ":3: field 'proficiency': missing"),
        (CSV_HEADER + "a,F,0,0.5,0.4,0.1\n", ":2: field 'params': '0' is not a finite number > 0"),
        (CSV_HEADER + "a,F,7,0.5,0.4,0.1\na,G,8,0.5,0.4,0.1\n", ":3: field 'model'"),
        ("model,family,params\na,F,7\n", ":1: field 'proficiency': column not found"),
    ]
    numeric = ["params", "proficiency", "native", "proxy"]
    for text, message in cases:
        path.write_text(text)
        with pytest.raises(InputError) as info:
            read_scores_csv(path, numeric=numeric)
        assert message in str(info.value)


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("validity")(validity_command)

    @app.callback()
    def main() -> None:
        """Test app standing in for `judgekit calibrate`."""

    return app


def test_cli_writes_table_csv_and_json(tmp_path):
    frame = synthetic()
    scores = tmp_path / "scores.csv"
    frame.to_csv(scores, index=False)
    out = tmp_path / "out"
    args = ["validity", str(scores), "--proxy", "proxy", "--proxy", "noise"]
    args += ["--n-resamples", "300", "--seed", "2", "--out", str(out)]
    result = CliRunner().invoke(_app(), args)
    assert result.exit_code == 0, result.output
    assert "robust" in result.output and "null" in result.output
    table = pd.read_csv(out / "scores.validity.csv", keep_default_na=False)  # "null" label
    assert list(table["proxy"]) == ["proxy", "noise"]
    assert list(table["label"]) == ["robust", "null"]
    direct = proxy_validity(frame, "proxy", n_resamples=300, seed=2)
    assert table.loc[0, "beta"] == pytest.approx(direct.beta, rel=1e-9)
    assert table.loc[0, "beta_ci_low"] == pytest.approx(direct.beta_ci[0], rel=1e-9)
    assert table.loc[0, "lofo_passed"] == 6
    saved = json.loads((out / "scores.validity.json").read_text())
    assert saved["signature"]["n_resamples"] == 300
    assert len(saved["signature"]["scores_sha256"]) == 64
    assert saved["results"][1]["validity"]["label"] == "null"
    assert saved["results"][0]["ranking"]["k"] == 5


def test_cli_bad_file_raises_input_error(tmp_path):
    scores = tmp_path / "scores.csv"
    scores.write_text(CSV_HEADER + "a,F,7,0.5,0.4,oops\n")
    result = CliRunner().invoke(_app(), ["validity", str(scores), "--n-resamples", "10"])
    assert isinstance(result.exception, InputError)
    assert ":2: field 'proxy'" in str(result.exception)
