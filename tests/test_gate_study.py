"""PPI++'s ``lam`` rules (judgekit.calibration.estimate.moments) and the vectorised gate study
(judgekit.gate.study): each draw's p-values and verdict equal the gate's own, one by one; the
shrunk ``lam`` falls back toward the classical estimate when the judge is uninformative and
keeps the tuned one when it is strong; on WMT23 MQM (GEMBA-MQM, 50 expert labels per language)
the shrunk rule holds the false-fail rate and does not lose the power the tuned rule loses."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import shared_path

from judgekit.calibration.estimate import IntervalRule, estimate_mean
from judgekit.calibration.estimate.coverage import coverage_study
from judgekit.calibration.estimate.moments import Sums, lam_for, slope_z2, tuned_lam
from judgekit.gate.figures import Loaded, facet_check
from judgekit.gate.spec import GateSpec, Rule
from judgekit.gate.study import check_pvalues, gate_verdicts
from judgekit.gate.verdicts import holm, overall
from judgekit.metrics.mteval import align_seg_scores, read_seg_scores


def skewed(seed: int, size: int, slope: float) -> tuple[np.ndarray, np.ndarray]:
    """Human and judge values shaped like segment MQM (0 or negative, heavy tailed)."""
    rng = np.random.default_rng(seed)
    human = -np.abs(rng.standard_t(3, size=size)) * 3
    judge = slope * human - np.abs(rng.standard_t(3, size=size)) * 2
    return human, judge


def test_slope_z2_is_statsmodels_hc0_and_the_shrunk_lam_sits_between_0_and_tuned():
    import statsmodels.api as sm

    human, judge = skewed(3, 400, 0.5)
    y, h, u = human[:50], judge[:50], judge[50:]
    fit = sm.OLS(y, sm.add_constant(h)).fit(cov_type="HC0")  # White (1980)
    sums = Sums.of(y, h, u)
    assert float(slope_z2(sums)) == pytest.approx(fit.tvalues[1] ** 2, rel=1e-8)
    z2 = fit.tvalues[1] ** 2
    assert float(lam_for(sums, "shrunk")) == pytest.approx(float(tuned_lam(sums)) * z2 / (z2 + 1))
    rows = {e.method: e for e in estimate_mean(y, h, u, rule=IntervalRule("clt", lam="shrunk"))}
    tuned = {e.method: e for e in estimate_mean(y, h, u, rule=IntervalRule("clt", lam="tuned"))}
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    assert tuned["ppi++"].estimate == pytest.approx(ppi_mean_pointestimate(y, h, u)[0])
    assert tuned["ppi++"].ci_low == pytest.approx(ppi_mean_ci(y, h, u, alpha=0.05)[0][0])
    lam = float(lam_for(sums, "shrunk"))
    assert rows["ppi++"].estimate == pytest.approx(ppi_mean_pointestimate(y, h, u, lam=lam)[0])


def test_shrunk_lam_falls_back_to_classical_for_an_uninformative_judge():
    """An independent judge: the shrunk lam is about 2/3 of the tuned one on average, and
    PPI++'s interval is on average the classical one (within 1%); a strong judge keeps nearly
    the tuned lam."""
    human, _ = skewed(5, 600, 0.0)
    judge = skewed(6, 600, 0.0)[0]  # independent of the humans
    order = np.argsort(np.random.default_rng(0).random((200, 600)), axis=1)
    lams = {rule: [float(lam_for(Sums.of(human[o[:50]], judge[o[:50]], judge[o[50:]]), rule))
                   for o in order] for rule in ("tuned", "shrunk")}  # fmt: skip
    assert np.mean(lams["shrunk"]) < 0.7 * np.mean(lams["tuned"])  # 0.065 vs 0.102
    study = coverage_study(human, judge, 50, draws=200, intervals=("clt", "bootstrap-t"),
                           methods=("classical", "ppi++"), resamples=400,
                           lam_rule="shrunk")  # fmt: skip
    for interval in ("clt", "bootstrap-t"):
        ratio = study[f"ppi++/{interval}"].mean_width / study[f"classical/{interval}"].mean_width
        assert ratio <= 1.01
    strong_h, strong_j = skewed(7, 600, 1.0)
    sums = Sums.of(strong_h[:50], strong_j[:50], strong_j[50:])
    assert float(lam_for(sums, "shrunk")) >= 0.9 * float(tuned_lam(sums)) > 0.3


@pytest.mark.parametrize(
    "method,lam,direction",
    [
        ("ppi++", "shrunk", "at_least"),
        ("ppi++", "tuned", "at_most"),
        ("classical", "shrunk", "at_least"),
    ],
)
def test_vectorised_checks_and_verdicts_equal_the_gate_draw_by_draw(method, lam, direction):
    spec = GateSpec(rules=(), resamples=300, lam=lam)
    pops = {"de": skewed(1, 150, 0.6), "zh": skewed(2, 200, 0.3)}
    rule = Rule("r", "estimate", "", "", 0.0, direction, target="mean", method=method)
    draws, n = 5, 30
    picks = {}  # labelled, then unlabelled items, each in the data's order (as the gate has them)
    for lp, (h, _) in pops.items():
        o = np.argsort(np.random.default_rng(9).random((draws, len(h))), axis=1)
        picks[lp] = np.concatenate([np.sort(o[:, :n], axis=1), np.sort(o[:, n:], axis=1)], axis=1)
    bounds = {"de": -2.9, "zh": -2.2}
    ps = {}
    for lp, (human, judge) in pops.items():
        o = picks[lp]
        ps[lp] = check_pvalues(human[o[:, :n]], judge[o[:, :n]], judge[o[:, n:]], bounds[lp],
                               method=method, direction=direction, resamples=300,
                               lam_rule=lam)  # fmt: skip
    found = gate_verdicts(np.array([ps[lp][0] for lp in pops]),
                          np.array([ps[lp][1] for lp in pops]))  # fmt: skip
    for d in range(draws):
        checks = []
        for lp, (human, judge) in pops.items():
            part = pd.DataFrame({"judge": judge, "human": np.nan})
            part.iloc[picks[lp][d, :n], 1] = human[picks[lp][d, :n]]
            loaded = Loaded(part, None, "mean", "mean", None)
            check, _ = facet_check(Rule(**{**rule.__dict__, "bound": bounds[lp]}), loaded, lp,
                                   part, spec)  # fmt: skip
            assert check.interval == "bootstrap-t"
            assert (check.p_pass, check.p_fail) == pytest.approx((ps[lp][0][d], ps[lp][1][d]),
                                                                 rel=1e-9)  # fmt: skip
            checks.append(check)
        assert overall(holm(checks, spec.alpha, "gate")) == found[d]


def test_gate_verdicts_no_regression_has_no_inconclusive():
    p_pass = np.array([[0.9, 0.5], [0.9, 0.2]])
    p_fail = np.array([[0.01, 0.5], [0.1, 0.8]])
    assert list(gate_verdicts(p_pass, p_fail, 0.05, "no-regression")) == ["fail", "pass"]
    assert list(gate_verdicts(p_pass, p_fail, 0.05)) == ["fail", "inconclusive"]


def test_gemba_mqm_gate_keeps_false_fails_and_the_shrunk_lam_keeps_the_power():
    """WMT23 en-de and zh-en (GPT4-5shot), 50 expert labels per language, 300 draws, B = 500:
    bound at the truth (false fails) and at the truth + 1 MQM point (power)."""
    folder = shared_path("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
    parts = {}
    for lp in ("en-de", "zh-en"):
        joined = align_seg_scores(read_seg_scores(folder / f"{lp}.GEMBA-MQM-src.seg.score.tsv"),
                                  read_seg_scores(folder / f"{lp}.mqm.seg.score.tsv"))  # fmt: skip
        own = joined[joined["system"] == "GPT4-5shot"].dropna(subset=["human", "judge"])
        human, judge = own["human"].to_numpy(float), own["judge"].to_numpy(float)
        o = np.argsort(np.random.default_rng(4).random((300, len(human))), axis=1)
        parts[lp] = (human[o[:, :50]], judge[o[:, :50]], judge[o[:, 50:]], human.mean())
    rates = {}
    for lam in ("shrunk", "tuned"):
        for shift in (0.0, 1.0):
            ps = [check_pvalues(*v[:3], v[3] + shift, resamples=500, lam_rule=lam)
                  for v in parts.values()]  # fmt: skip
            verdict = gate_verdicts(np.array([p for p, _ in ps]), np.array([f for _, f in ps]))
            rates[lam, shift] = float(np.mean(verdict == "fail"))
    assert rates["shrunk", 0.0] <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 300)
    assert rates["shrunk", 1.0] >= rates["tuned", 1.0]
    assert rates["shrunk", 1.0] >= 0.75


def test_gate_file_lam_setting(tmp_path):
    from judgekit.errors import InputError
    from judgekit.gate.spec import load_gate

    rule = {"name": "r", "kind": "estimate", "judge": "j.csv", "human": "h.csv", "at_least": 0}
    path = tmp_path / "gate.yaml"
    path.write_text(yaml.safe_dump({"rules": [rule]}))
    assert load_gate(path).lam == "shrunk"
    path.write_text(yaml.safe_dump({"lam": "tuned", "rules": [rule]}))
    assert load_gate(path).lam == "tuned"
    path.write_text(yaml.safe_dump({"lam": "oracle", "rules": [rule]}))
    with pytest.raises(InputError) as err:
        load_gate(path)
    assert err.value.field == "lam"


def test_calibrate_estimate_lam_option(tmp_path):
    """``calibrate estimate --lam shrunk`` gives the gate's PPI++ figure; tuned stays ppi_py's."""
    from judgekit.calibration.estimate.run import run_estimate
    from judgekit.errors import InputError

    human, judge = skewed(11, 120, 0.5)
    rows = [{"item": f"i{k}", "rater": "j", "label": v} for k, v in enumerate(judge)]
    pd.DataFrame(rows).to_csv(tmp_path / "judge.csv", index=False)
    rows = [{"item": f"i{k}", "rater": "h", "label": v} for k, v in enumerate(human[:40])]
    pd.DataFrame(rows).to_csv(tmp_path / "human.csv", index=False)
    args = (str(tmp_path / "judge.csv"), str(tmp_path / "human.csv"))
    for lam in ("shrunk", "tuned"):
        result = run_estimate(*args, target="mean", interval="clt", lam=lam)
        ppi = next(e for e in result.estimates if e.method == "ppi++")
        rule = IntervalRule("clt", lam=lam)
        direct = {e.method: e for e in estimate_mean(human[:40], judge[:40], judge[40:], rule=rule)}
        assert (ppi.estimate, ppi.ci_low) == pytest.approx((direct["ppi++"].estimate,
                                                            direct["ppi++"].ci_low))  # fmt: skip
        assert result.signature["parameters"]["lam"] == lam
    with pytest.raises(InputError) as err:
        run_estimate(*args, target="mean", lam="oracle")
    assert err.value.field == "--lam"
