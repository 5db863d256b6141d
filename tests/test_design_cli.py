"""``calibrate plan --design`` and ``calibrate estimate --selection`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_inproc import run_main
from test_estimate import write_long
from typer.testing import CliRunner

from judgekit.calibration.design.run import estimate_design
from judgekit.cli import app
from judgekit.cli import calibrate as _  # noqa: F401  (registers `calibrate`)
from judgekit.errors import InputError


def judgekit(*args: str):
    """The command in-process (CliRunner): subprocess start-up would cost seconds a call."""
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def plan_selection(judge: Path, design: str, budget: int, out: Path, *extra: str) -> pd.DataFrame:
    """``calibrate plan --target share:CS --design DESIGN --budget N`` written to ``out``; the
    selection it wrote."""
    plan = judgekit("calibrate", "plan", "--judge", str(judge), "--target", "share:CS", "--design",
                    design, "--budget", str(budget), "--selection-out", str(out),
                    *extra)  # fmt: skip
    assert plan.exit_code == 0, plan.output
    return pd.read_csv(out)


def true_labels(path: Path, items, truth: dict[str, bool]) -> Path:
    """One human's true CS/CA labels of ``items``, written to ``path``."""
    return write_long(path, [(i, "h1", "CS" if truth[i] else "CA") for i in items])


@pytest.fixture()
def population(tmp_path: Path) -> tuple[Path, dict[str, bool]]:
    """A judge with label probabilities (p: columns) over 400 items, and the true labels."""
    rng = np.random.default_rng(7)
    n = 400
    langs = np.where(np.arange(n) < 200, "de", "fr")
    sure = rng.random(n) < 0.7
    p_cs = np.where(rng.random(n) < 0.5, 0.0, 1.0)
    p_cs = np.where(sure, np.abs(p_cs - 0.05), np.abs(p_cs - 0.4))
    truth = rng.random(n) < p_cs
    rows = [(f"x{k}", "judge", "CS" if p_cs[k] > 0.5 else "CA", langs[k], p_cs[k], 1 - p_cs[k])
            for k in range(n)]  # fmt: skip
    judge = tmp_path / "judge.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label", "language", "p:CS", "p:CA"]).to_csv(
        judge, index=False
    )
    return judge, {f"x{k}": bool(truth[k]) for k in range(n)}


@pytest.mark.parametrize("design", ["active", "stratified", "uniform"])
def test_plan_design_then_estimate(population, tmp_path: Path, design: str) -> None:
    judge, truth = population
    sel = tmp_path / "selection.csv"
    extra = ["--by", "language"] if design == "stratified" else []
    plan = judgekit("calibrate", "plan", "--judge", str(judge), "--target", "share:CS", "--design",
                    design, "--budget", "80", "--selection-out", str(sel), *extra)  # fmt: skip
    assert plan.exit_code == 0, plan.output
    table = pd.read_csv(sel)
    assert list(table.columns) == ["item", "inclusion_probability", "stratum", "reason", "design",
                                   "round"]  # fmt: skip
    assert (table["design"] == design).all() and table["inclusion_probability"].between(0, 1).all()
    if design == "stratified":
        assert len(table) == 80 and set(table["stratum"]) == {"de", "fr"}
    human = write_long(tmp_path / "human.csv",
                       [(i, "h1", "CS" if truth[i] else "CA") for i in table["item"]])  # fmt: skip
    est = judgekit("calibrate", "estimate", "--judge", str(judge), "--human", str(human),
                   "--target", "share:CS", "--selection", str(sel), "--json", *extra)  # fmt: skip
    assert est.exit_code == 0, est.output
    payload = json.loads(est.output)
    assert payload["signature"]["design"] == design and payload["n"] == len(table)
    assert payload["low"] < payload["estimate"] < payload["high"]
    assert payload["uniform_half_width"] > 0
    # a label outside the selection has no probability: the weighted estimate is refused
    if design != "uniform":
        outside = next(i for i in truth if i not in set(table["item"]))
        write_long(
            human, [(i, "h1", "CS" if truth[i] else "CA") for i in [*table["item"], outside]]
        )
        with pytest.raises(InputError, match="lack their inclusion probability"):
            estimate_design(str(judge), str(human), str(sel), target="share:CS")


def test_plan_stratified_refuses_a_budget_below_the_stratum_minimum(population) -> None:
    from judgekit.calibration.design.run import plan_design

    judge = population[0]
    with pytest.raises(InputError, match=r"--budget.*below 5 labels in each of 2 strata"):
        plan_design(str(judge), "stratified", 8, target="share:CS", by="language")


def test_a_hand_edited_or_foreign_selection_is_refused_on_its_line(population, tmp_path) -> None:
    """A probability far below the others (weights leaving 1 effective label) and an item the
    judge never judged: one located error each, not a narrow interval or a silent skip."""
    judge, truth = population
    sel = tmp_path / "selection.csv"
    table = plan_selection(judge, "active", 40, sel)
    human = true_labels(tmp_path / "human.csv", table["item"], truth)
    edited = table.copy()
    edited.loc[3, "inclusion_probability"] = 1e-9
    edited.to_csv(sel, index=False)
    with pytest.raises(InputError, match="effective labels") as err:
        estimate_design(str(judge), str(human), str(sel), target="share:CS")
    assert err.value.line == 5 and err.value.field == "inclusion_probability"
    foreign = pd.concat([table, table.iloc[[0]].assign(item="zz999")], ignore_index=True)
    foreign.to_csv(sel, index=False)
    with pytest.raises(InputError, match="'zz999' is not an item of the judge's run") as err:
        estimate_design(str(judge), str(human), str(sel), target="share:CS")
    assert err.value.line == len(table) + 2


def test_an_active_plan_on_a_score_judge_needs_a_pilot(tmp_path) -> None:
    from judgekit.calibration.design.run import plan_design

    rng = np.random.default_rng(2)
    scores = [(f"s{k}", "judge", float(-rng.integers(0, 25))) for k in range(100)]
    judge = write_long(tmp_path / "judge.csv", scores)
    with pytest.raises(InputError, match="needs --pilot") as err:
        plan_design(str(judge), "active", 30, target="mean")
    assert err.value.field == "--pilot"


def test_a_share_planned_on_a_score_judge_is_refused_saying_why(tmp_path) -> None:
    """share:CS of a judge whose labels are MQM-like numbers: no label is CS, so every design
    would draw for a share of exactly 0 (the active one with every uncertainty 0): exit 2."""
    from judgekit.calibration.design.run import plan_design

    rng = np.random.default_rng(2)
    judge = write_long(
        tmp_path / "judge.csv",
        [(f"s{k}", "judge", float(-rng.integers(0, 25))) for k in range(100)],
    )
    for design in ("active", "uniform", "stratified"):
        with pytest.raises(InputError, match="no judge or human label is 'CS'") as err:
            plan_design(str(judge), design, 30, target="share:CS")
        assert err.value.field == "--target" and "--target mean" in err.value.message
    out = tmp_path / "selection.csv"
    done = run_main("calibrate", "plan", "--judge", str(judge), "--target", "share:CS", "--design",
                    "active", "--budget", "30", "--selection-out", str(out))  # fmt: skip
    assert done.returncode == 2 and not out.exists() and "Traceback" not in done.stderr
    assert "a score judge's figure is --target mean" in done.stderr


def test_an_active_plan_that_falls_back_says_uniform_and_why_everywhere(population, tmp_path):
    """A pilot too small to fit (5 labels): the plan draws uniformly, and the console, the
    JSON and the selection file all say uniform was used instead of active, and why."""
    judge, truth = population
    pilot = true_labels(tmp_path / "pilot.csv", [f"x{k}" for k in range(0, 400, 80)], truth)
    out = tmp_path / "selection.csv"
    args = (
        "calibrate",
        "plan",
        "--judge",
        str(judge),
        "--target",
        "share:CS",
        "--design",
        "active",
        "--budget",
        "40",
        "--pilot",
        str(pilot),
        "--selection-out",
        str(out),
    )
    shown = judgekit(*args)
    assert shown.exit_code == 0, shown.output
    assert "active requested, uniform used design:" in shown.output
    assert "why: active requested, uniform used: pilot 5: pilot of 5 labels: too small to fit" in (
        " ".join(shown.output.split())
    )
    doc = json.loads(judgekit(*args, "--json").output)
    assert (doc["requested"], doc["design"]) == ("active", "uniform")
    assert doc["why"].endswith("pilot of 5 labels: too small to fit")
    assert doc["drawn"] == doc["rows"] and doc["selection"] == str(out)
    table = pd.read_csv(out)
    assert len(table) == doc["drawn"] and set(table["design"]) == {"uniform"}
    assert table["reason"].str.contains("active requested, uniform used: pilot 5").all()


def test_a_small_selection_is_clipped_refused_or_said_never_a_traceback(population, tmp_path):
    """A share's interval stays in [0, 1] with a note; selected items without a label and a
    single label are refused (InputError: exit 2) instead of dropped or a traceback."""
    judge, truth = population
    sel = tmp_path / "selection.csv"
    human = tmp_path / "human.csv"
    for seed_budget in range(3, 9):  # a small uniform sample whose t interval leaves [0, 1]
        table = plan_selection(judge, "uniform", seed_budget, sel)
        true_labels(human, table["item"], truth)
        est = estimate_design(str(judge), str(human), str(sel), target="share:CS")
        assert 0 <= est.low <= est.estimate <= est.high <= 1
        if est.note:
            assert est.note.startswith("clipped to [0, 1], a share's range (was ")
            break
    else:
        pytest.fail("no small sample needed clipping")
    table = plan_selection(judge, "active", 40, sel)
    true_labels(human, table["item"][:25], truth)
    with pytest.raises(InputError, match=r"items the selection drew lack a label") as err:
        estimate_design(str(judge), str(human), str(sel), target="share:CS")
    assert err.value.field == "item"
    true_labels(human, plan_selection(judge, "uniform", 1, sel)["item"], truth)
    with pytest.raises(InputError, match="at least 2 labels"):
        estimate_design(str(judge), str(human), str(sel), target="share:CS")
