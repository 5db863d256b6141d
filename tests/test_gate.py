"""``judgekit gate``: verdicts from intervals, p-values with known answers, Holm, requires,
difference rules, outputs (JUnit XML, Markdown, JSON), exit codes and bad input; and the gate on
WMT23 MQM (GEMBA-MQM as the judge, 50 expert labels per language) against ``calibrate
estimate``'s own figures."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from cli_inproc import Ran, run_main
from conftest import shared_path
from scipy.stats import norm

from judgekit.errors import InputError
from judgekit.gate import run_gate
from judgekit.testing import assert_gate

REPO = Path(__file__).resolve().parents[1]


def write_labels(path: Path, values: dict[str, object], rater: str, facets: dict | None = None):
    rows = [{"item": k, "rater": rater, "label": v, **({"language": facets[k]} if facets else {})}
            for k, v in values.items()]  # fmt: skip
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def write_gate(folder: Path, rules: list[dict], **settings) -> Path:
    path = folder / "gate.yaml"
    path.write_text(yaml.safe_dump({**settings, "rules": rules}, sort_keys=False))
    return path


def shares(folder: Path, spec: dict[str, tuple[float, int, int]], seed: int = 0, flip=0.1):
    """Judge (N items) and human (n items) yes/no files per language: lang -> (p, N, n); the
    judge copies the human label, flipped with probability ``flip``."""
    rng = np.random.default_rng(seed)
    judge, human, lang = {}, {}, {}
    for code, (p, big_n, n) in spec.items():
        for i in range(big_n):
            truth = rng.random() < p
            item = f"{code}{i}"
            judge[item] = "yes" if truth != (rng.random() < flip) else "no"
            lang[item] = code
            if i < n:
                human[item] = "yes" if truth else "no"
    j = write_labels(folder / "judge.csv", judge, "judge", lang)
    h = write_labels(folder / "human.csv", human, "ann", lang)
    return j, h, human


def test_classical_p_values_are_the_z_test_and_holm_is_statsmodels(tmp_path: Path):
    j, h, human = shares(tmp_path, {"de": (0.8, 300, 300), "fr": (0.62, 300, 300),
                                    "zh": (0.45, 300, 300)})  # fmt: skip
    gate = write_gate(tmp_path, [{"name": "rate", "judge": "judge.csv", "human": "human.csv",
                                  "target": "share:yes", "by": "language", "method": "classical",
                                  "at_least": 0.6}], interval="clt")  # fmt: skip
    result = run_gate(gate)
    ps = []
    for check in result.checks:
        y = np.array([human[i] == "yes" for i in human if i.startswith(check.facet)], float)
        se = y.std() / np.sqrt(len(y))  # ppi_py's classical_mean_ci: population SD
        assert check.estimate == pytest.approx(y.mean())
        assert check.p_pass == pytest.approx(norm.sf((y.mean() - 0.6) / se), rel=1e-6)
        assert check.p_fail == pytest.approx(norm.cdf((y.mean() - 0.6) / se), rel=1e-6)
        ps.append(check.p_value)
    order = np.argsort(ps)  # Holm by hand: sorted p times (m - k + 1), running maximum
    manual = np.minimum(1, np.maximum.accumulate(np.array(ps)[order] * (3 - np.arange(3))))
    adjusted = np.empty(3)
    adjusted[order] = manual
    assert [c.p_adjusted for c in result.checks] == pytest.approx(adjusted)
    verdicts = {c.facet: c.verdict for c in result.checks}
    assert verdicts["de"] == "pass" and verdicts["zh"] == "fail"
    assert result.verdict == "fail" and result.exit_code == 1
    assert result.checks[0].family == "gate (3 checks)"


def test_three_verdicts_and_labels_that_would_decide(tmp_path: Path):
    from judgekit.calibration.estimate.plan import pilot_moments, plan_size

    _, _, human = shares(tmp_path, {"de": (0.9, 400, 80), "es": (0.75, 2000, 20),
                                    "fr": (0.6, 400, 40), "zh": (0.1, 400, 80)})  # fmt: skip
    gate = write_gate(tmp_path, [{"name": "rate", "judge": "judge.csv", "human": "human.csv",
                                  "target": "share:yes", "by": "language",
                                  "at_least": 0.6}])  # fmt: skip
    result = run_gate(gate)
    by = {c.facet: c for c in result.checks}
    assert by["de"].verdict == "pass" and by["de"].ci_low > 0.6
    assert by["zh"].verdict == "fail" and by["zh"].ci_high < 0.6
    assert result.verdict == "fail"  # a failed check fails the gate before any inconclusive
    judge = pd.read_csv(tmp_path / "judge.csv").set_index("item")["label"].eq("yes")
    for code in ("es", "fr"):
        check = by[code]
        assert check.verdict == "inconclusive" and check.ci_low < 0.6 < check.ci_high
        items = [i for i in human if i.startswith(code)]
        y = np.array([human[i] == "yes" for i in items], float)
        sigma, rho = pilot_moments(y, judge[items].to_numpy(float))
        gap = abs(check.estimate - 0.6)
        _, n_ppi, reachable = plan_size(check.n_items, sigma, rho, gap, 2 * check.holm_alpha,
                                        kind="share", interval="auto")  # fmt: skip
        assert check.decidable is reachable
        if reachable:  # calibrate plan's size at the check's Holm level, less the labels held
            assert check.more_labels == n_ppi - len(items) > 0
        else:  # humans alone would need more than every item: (z sigma / gap)^2 > N
            z = norm.ppf(1 - check.holm_alpha)
            assert (z * sigma / gap) ** 2 > check.n_items and check.more_labels is None
    assert by["es"].decidable and not by["fr"].decidable


def test_a_bootstrap_t_check_decides_exactly_where_its_interval_clears_the_bound(tmp_path: Path):
    rng = np.random.default_rng(3)
    truth = -np.where(rng.random(300) < 0.3, rng.choice([1, 5, 10, 25], 300), 0).astype(float)
    judge = truth + rng.normal(0, 3, 300)
    write_labels(tmp_path / "j.csv", {f"s{i}": v for i, v in enumerate(judge)}, "gemba")
    write_labels(tmp_path / "h.csv", {f"s{i}": truth[i] for i in range(60)}, "expert")
    for bound in (-8.0, -5.0, -3.5, -2.5, -1.5, -0.5):
        gate = write_gate(tmp_path, [{"name": "mqm", "judge": "j.csv", "human": "h.csv",
                                      "target": "mean", "at_least": bound}])  # fmt: skip
        check = run_gate(gate).checks[0]
        assert check.interval == "bootstrap-t"  # a mean below 100 labels
        outside = not check.ci_low <= bound <= check.ci_high
        assert (check.verdict != "inconclusive") == outside, (bound, check)
        if outside:
            assert check.verdict == ("pass" if check.ci_low > bound else "fail")


def test_difference_rule_non_inferiority_and_no_regression(tmp_path: Path):
    rng = np.random.default_rng(5)
    base = -np.abs(rng.normal(2, 2, 400))
    cand = base - np.where(rng.random(400) < 0.4, 5.0, 0.0)  # a 2-point regression
    noise = rng.normal(0, 1, (2, 400))
    items = [f"s{i}" for i in range(400)]
    write_labels(tmp_path / "jb.csv", dict(zip(items, base + noise[0], strict=True)), "j")
    write_labels(tmp_path / "jc.csv", dict(zip(items, cand + noise[1], strict=True)), "j")
    write_labels(tmp_path / "hb.csv", dict(zip(items[:80], base[:80], strict=True)), "h")
    write_labels(tmp_path / "hc.csv", dict(zip(items[:80], cand[:80], strict=True)), "h")
    common = {"kind": "difference", "judge": "jc.csv", "human": "hc.csv", "target": "mean",
              "baseline_judge": "jb.csv", "baseline_human": "hb.csv"}  # fmt: skip
    gate = write_gate(tmp_path, [
        {"name": "wide-margin", **common, "margin": 5.0},
        {"name": "tight-margin", **common, "margin": 0.5},
        {"name": "no-regression", **common, "mode": "no-regression"},
    ], family="rule")  # fmt: skip
    by = {c.rule: c for c in run_gate(gate).checks}
    assert by["wide-margin"].estimate == pytest.approx(-2.0, abs=0.8)
    assert by["wide-margin"].verdict == "pass" and by["wide-margin"].ci_low > -5
    assert by["tight-margin"].verdict == "fail" and by["tight-margin"].ci_high < -0.5
    assert by["no-regression"].verdict == "fail"
    assert by["wide-margin"].family == "rule wide-margin (1 check)"
    # no regression at all: no-regression passes (it has no inconclusive verdict); the humans
    # label the candidate's outputs themselves (one labelling for both runs is refused)
    write_labels(tmp_path / "jc.csv", dict(zip(items, base + noise[1], strict=True)), "j")
    rated = base[:80] + rng.normal(0, 0.3, 80)
    write_labels(tmp_path / "hc.csv", dict(zip(items[:80], rated, strict=True)), "h")
    assert {c.rule: c.verdict for c in run_gate(gate).checks}["no-regression"] == "pass"


def test_a_judge_not_calibrated_enough_cannot_pass(tmp_path: Path):
    shares(tmp_path, {"de": (0.9, 300, 150)}, flip=0.45)  # a near-random judge
    gate = write_gate(tmp_path, [
        {"name": "rate", "judge": "judge.csv", "human": "human.csv", "target": "share:yes",
         "at_least": 0.5, "requires": ["calibrated"]},
        {"name": "calibrated", "kind": "agreement", "judge": "judge.csv", "human": "human.csv",
         "metric": "kappa", "at_least": 0.6},
    ])  # fmt: skip
    result = run_gate(gate)
    rate, calibrated = result.checks
    assert calibrated.verdict == "fail" and calibrated.ci_high < 0.6
    assert rate.ci_low > 0.5  # the estimate alone clears the bound (PPI++ holds anyway) ...
    assert rate.verdict == "inconclusive"  # ... but the gate does not let it pass
    assert "calibrated[all] is fail" in rate.note
    assert result.verdict == "fail"
    with pytest.raises(AssertionError, match="calibrated"):
        assert_gate(gate)


def test_agreement_p_values_follow_the_percentile_bootstrap(tmp_path: Path):
    shares(tmp_path, {"de": (0.5, 200, 200)}, flip=0.1)
    for bound, verdict in ((0.5, "pass"), (0.95, "fail")):
        gate = write_gate(tmp_path, [{"name": "acc", "kind": "agreement", "judge": "judge.csv",
                                      "human": "human.csv", "metric": "accuracy",
                                      "at_least": bound}])  # fmt: skip
        check = run_gate(gate).checks[0]
        assert 0.85 < check.estimate < 0.95 and check.verdict == verdict
        assert check.ci_low < check.estimate < check.ci_high
    assert assert_gate(write_gate(tmp_path, [{"name": "acc", "kind": "agreement",
                                              "judge": "judge.csv", "human": "human.csv",
                                              "metric": "accuracy",
                                              "at_least": 0.5}])).verdict == "pass"  # fmt: skip


def cli(*args: str) -> Ran:
    """``judgekit gate ARGS`` in this process (tests/cli_inproc.py): no new interpreter."""
    return run_main("gate", *args, env={"COLUMNS": "200"})


def test_cli_outputs_and_exit_codes(tmp_path: Path):
    shares(tmp_path, {"de": (0.9, 400, 80), "fr": (0.75, 2000, 20)})
    gate = write_gate(tmp_path, [{"name": "rate", "judge": "judge.csv", "human": "human.csv",
                                  "target": "share:yes", "by": "language",
                                  "at_least": 0.6}])  # fmt: skip
    done = cli(
        str(gate),
        "--junit",
        str(tmp_path / "out/junit.xml"),
        "--summary",
        str(tmp_path / "out/summary.md"),
        "--json-out",
        str(tmp_path / "out/gate.json"),
    )
    assert done.returncode == 3, done.stderr  # de passes, fr straddles: inconclusive
    assert "verdict: INCONCLUSIVE (exit 3)" in done.stdout
    suite = ET.parse(tmp_path / "out/junit.xml").getroot()
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"de", "fr"} and suite.get("skipped") == "1"
    assert cases["fr"].find("skipped") is not None and cases["de"].find("failure") is None
    assert "more human labels would decide it" in cases["fr"].find("skipped").get("message")
    summary = (tmp_path / "out/summary.md").read_text()
    assert "## judgekit gate: **INCONCLUSIVE**" in summary and summary.count("| rate |") == 2
    doc = json.loads((tmp_path / "out/gate.json").read_text())
    assert doc["verdict"] == "inconclusive" and doc["exit_code"] == 3
    assert doc["signature"]["pipeline"] == "gate" and len(doc["checks"]) == 2
    assert cli(str(gate), "--inconclusive", "pass").returncode == 0
    failed = cli(str(gate), "--inconclusive", "fail", "--json", "--junit",
                 str(tmp_path / "j2.xml"))  # fmt: skip
    assert failed.returncode == 1 and json.loads(failed.stdout)["exit_code"] == 1
    assert ET.parse(tmp_path / "j2.xml").getroot().get("failures") == "1"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "rules:\n  - name: a\n    judge: j.csv\n    human: h.csv\n    at_leest: 1\n",
            "gate.yaml:2: field 'at_leest'",
        ),
        (
            "rules:\n  - name: a\n    judge: j.csv\n    human: h.csv\n    at_most: 1\n"
            "  - name: b\n    kind: agreement\n    judge: j.csv\n    human: h.csv\n"
            "    at_least: high\n",
            "gate.yaml:6: field 'at_least'",
        ),
        (
            "alpha: 2\nrules:\n  - {name: a, judge: j.csv, human: h.csv, at_least: 1}\n",
            "field 'alpha'",
        ),
        ("rules: [\n", "gate.yaml:2"),
        (
            "rules:\n  - {name: a, judge: j.csv, human: h.csv, at_most: 1}\n"
            "  - {name: b, judge: j.csv, human: h.csv, at_least: .nan}\n",
            "gate.yaml:3: field 'rules[1].at_least'",
        ),
        (
            "alpha: 1.0e+400\nrules:\n  - {name: a, judge: j.csv, human: h.csv, at_most: 1}\n",
            "gate.yaml:1: field 'alpha'",
        ),
    ],
)
def test_bad_gate_files_exit_2_naming_file_line_and_field(tmp_path: Path, text: str, where: str):
    (tmp_path / "gate.yaml").write_text(text)
    with pytest.raises(InputError):
        run_gate(tmp_path / "gate.yaml")
    done = cli(str(tmp_path / "gate.yaml"))
    assert done.returncode == 2
    assert where in done.stderr and "Traceback" not in done.stderr


def test_bad_label_file_exits_2(tmp_path: Path):
    shares(tmp_path, {"de": (0.9, 50, 20)})
    (tmp_path / "human.csv").write_text("item,rater,label\nde1,ann,yes\nde1,ann,no\n")
    gate = write_gate(tmp_path, [{"name": "r", "judge": "judge.csv", "human": "human.csv",
                                  "target": "share:yes", "at_least": 0.5}])  # fmt: skip
    done = cli(str(gate))
    assert done.returncode == 2 and "human.csv:3" in done.stderr


def gemba_tables(folder: Path, system: str, n: int, seed: int) -> dict[str, float]:
    """Long tables of GEMBA-MQM (every segment) and expert MQM (n random segments per
    language) for one WMT23 system in en-de and zh-en; returns the full-human mean per pair."""
    from judgekit.metrics.mteval import align_seg_scores, read_seg_scores

    src = shared_path("judge-vs-human", "wmt23-gemba-mqm-vs-human-mqm")
    rng = np.random.default_rng(seed)
    judge, human, facets, truth = {}, {}, {}, {}
    for lp in ("en-de", "zh-en"):
        joined = align_seg_scores(read_seg_scores(src / f"{lp}.GEMBA-MQM-src.seg.score.tsv"),
                                  read_seg_scores(src / f"{lp}.mqm.seg.score.tsv"))  # fmt: skip
        rows = joined[(joined["system"] == system)].dropna(subset=["judge", "human"])
        truth[lp] = float(rows["human"].mean())
        picked = set(rng.choice(len(rows), size=n, replace=False))
        for k, (pos, j, h) in enumerate(zip(rows["position"], rows["judge"], rows["human"],
                                            strict=True)):  # fmt: skip
            item = f"{lp}|{pos}"
            judge[item], facets[item] = j, lp
            if k in picked:
                human[item] = h
    write_labels(folder / "gemba.csv", judge, "GEMBA-MQM", facets)
    write_labels(folder / "experts.csv", human, "expert", facets)
    return truth


def test_wmt23_mqm_gate_per_language_agrees_with_calibrate_estimate(tmp_path: Path):
    from judgekit.calibration.estimate.run import run_estimate

    truth = gemba_tables(tmp_path, "GPT4-5shot", 50, seed=0)
    rules = [{"name": "floor", "judge": "gemba.csv", "human": "experts.csv", "target": "mean",
              "by": "language", "at_least": -8.0},
             {"name": "ceiling", "judge": "gemba.csv", "human": "experts.csv",
              "target": "mean", "by": "language", "at_least": -0.5}]  # fmt: skip
    result = run_gate(write_gate(tmp_path, rules))
    assert len(result.checks) == 4 and result.checks[0].family == "gate (4 checks)"
    estimate = run_estimate(str(tmp_path / "gemba.csv"), str(tmp_path / "experts.csv"),
                            target="mean", by="language", alpha=0.10, lam="shrunk")  # fmt: skip
    rows = {e.facet: e for e in estimate.estimates if e.method == "ppi++"}
    for check in result.checks:
        row = rows[check.facet]  # the gate's (1 - 2 alpha) interval is calibrate estimate's at 0.10
        assert (check.estimate, check.ci_low, check.ci_high) == pytest.approx(
            (row.estimate, row.ci_low, row.ci_high)
        )
        assert check.n_labelled == 50 and check.interval == "bootstrap-t"
        assert -8.0 < truth[check.facet] < -0.5  # the truth is on each rule's deciding side
    verdicts = {(c.rule, c.facet): c.verdict for c in result.checks}
    assert verdicts[("floor", "en-de")] == verdicts[("floor", "zh-en")] == "pass"
    assert verdicts[("ceiling", "en-de")] == verdicts[("ceiling", "zh-en")] == "fail"


def test_github_actions_example_parses_and_calls_the_gate():
    workflow = yaml.safe_load((REPO / "docs" / "examples" / "gate-workflow.yml").read_text())
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    runs = " ".join(s.get("run", "") for s in steps)
    assert "judgekit gate" in runs and "--junit" in runs and "--summary" in runs
    gate_step = next(s for s in steps if "judgekit gate" in s.get("run", ""))
    assert "GITHUB_STEP_SUMMARY" in runs
    assert gate_step.get("id")
    from typer.testing import CliRunner

    from judgekit.cli import app
    from judgekit.cli.root import load_command

    load_command("gate")
    shown = CliRunner().invoke(app, ["gate", "--help"]).output
    for option in ("--junit", "--summary", "--inconclusive", "--json"):
        assert option in shown
