"""Agreement statistics from one encoding of the rating table, and the one list of statistics
read by ``calibrate agreement`` and the viewer (issue 33 step 4; issue 32 item 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import judgekit.metrics.label_codes as label_codes
from judgekit.cli import app
from judgekit.errors import JudgekitError
from judgekit.labels.table import LabelTable
from judgekit.metrics.agreement import (
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    percent_agreement,
    prevalence,
    unanimous_share,
)
from judgekit.metrics.agreement_all import FUNCTIONS, agreement_statistics
from judgekit.metrics.label_codes import encode
from judgekit.metrics.statistics import STATISTICS, among
from judgekit.view.which_judge import STATISTICS as VIEW_STATISTICS

ORDER = ["low", "medium", "high"]


def _table(n_raters: int = 3, seed: int = 4) -> LabelTable:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, 40)
    values = {f"r{k}": [ORDER[min(2, max(0, t + rng.integers(-1, 2)))] for t in truth]
              for k in range(n_raters)}  # fmt: skip
    frame = pd.DataFrame(values, index=[f"i{k}" for k in range(40)], dtype=object)
    frame.iloc[3, 1] = None  # a missing rating
    return LabelTable(frame)


def test_every_coefficient_gives_the_same_figure_from_one_encoding() -> None:
    """Each coefficient on the labels (encoding them itself, as before) equals the same
    coefficient on a table encoded once, CIs included; weighted and ordinal forms too."""
    table = _table()
    coded, _ = encode(table, ORDER)
    kw = {"n_resamples": 60, "seed": 2}
    pairs = [
        (percent_agreement, {}),
        (unanimous_share, {}),
        (fleiss_kappa, {}),
        (gwet_ac1, {}),
        (gwet_ac1, {"weights": "quadratic"}),
        (krippendorff_alpha, {"level": "ordinal"}),
    ]
    for fn, extra in pairs:
        direct = fn(table, categories=ORDER, **kw, **extra)
        once = fn(coded, **kw, **extra)
        assert once.value == pytest.approx(direct.value), fn.__name__
        assert once.ci == pytest.approx(direct.ci), fn.__name__
    two = LabelTable(table.frame[["r0", "r2"]])
    for weights in (None, "linear"):
        direct = cohen_kappa(two, categories=ORDER, weights=weights)
        assert cohen_kappa(coded, raters=("r0", "r2"), weights=weights).value == pytest.approx(
            direct.value
        )
    assert prevalence(coded).counts == prevalence(table, categories=ORDER).counts


def test_an_encoded_table_keeps_the_order_rule_and_the_category_set() -> None:
    """Encoded without a declared order, text labels are still refused by an ordinal
    statistic (one line naming the labels seen); declared later, the codes follow the new
    order; a label outside a declared set is refused as before."""
    coded, _ = encode(_table())
    with pytest.raises(JudgekitError, match="no order declared"):
        krippendorff_alpha(coded, level="ordinal")
    ordinal = krippendorff_alpha(coded, level="ordinal", categories=ORDER)
    assert ordinal.value == pytest.approx(
        krippendorff_alpha(_table(), level="ordinal", categories=ORDER).value
    )
    with pytest.raises(JudgekitError, match="not among the categories"):
        fleiss_kappa(coded, categories=["low", "high"])
    with pytest.raises(JudgekitError, match="exactly two raters"):
        cohen_kappa(coded)


def test_calibrate_agreement_encodes_the_table_once(monkeypatch) -> None:
    """The statistics of ``calibrate agreement`` read the labels once: the label table is
    turned into codes one time for all of them (it was once per coefficient)."""
    calls = []
    original = label_codes.as_label_table

    def counted(data):
        calls.append(type(data).__name__)
        return original(data)

    monkeypatch.setattr(label_codes, "as_label_table", counted)
    results, prev, _ = agreement_statistics(_table(2), "ordinal", 0, 0, 0.95, ORDER)
    assert calls == ["LabelTable"]
    names = [r.statistic for r in results]
    assert names == ["percent agreement", "unanimous share", "Cohen's kappa", "Fleiss' kappa",
                     "Gwet's AC1", "Krippendorff's alpha"]  # fmt: skip
    assert prev.counts == prevalence(_table(2), categories=ORDER).counts


def test_one_list_of_statistics_read_by_the_cli_and_the_view() -> None:
    """Every rater statistic has its function and is computed in list order; the view's
    plain names and meanings and the CLI's order help come from the same list."""
    raters = among("raters")
    assert [s.key for s in raters] == list(FUNCTIONS)
    assert len({s.key for s in STATISTICS}) == len(STATISTICS)
    for s in among("reference"):
        assert VIEW_STATISTICS[s.key] == (s.plain, s.meaning)
    ordered = [s.name for s in raters if s.needs_order]
    assert ordered == ["Cohen's kappa", "Gwet's AC1", "Krippendorff's alpha"]
    help_text = CliRunner().invoke(app, ["calibrate", "agreement", "--help"]).output
    flat = " ".join(help_text.replace("│", " ").split())
    assert all(name in flat for name in ordered)
